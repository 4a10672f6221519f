/** The form of a request step: method, URL and query, headers, body, auth, checks and scripts. */
import { useId, useState } from 'preact/hooks';
import { fieldError } from '../../../api/client';
import type { AuthType, SignatureType, StepAuth } from '../../../api/resources';
import { CodeEditor } from '../../../components/code-editor';
import type { Language } from '../../../components/codemirror';
import { Checkbox, SelectField, TextField } from '../../../components/ui';
import { type DraftRequest, queryRows, type Row, withQuery } from './draft';
import { AssertionsTable, RowsTable, VariablesTable } from './tables';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

function contentTypeLanguage(headers: Row[]): Language {
  const type = headers.find((h) => h.name.toLowerCase() === 'content-type')?.value.toLowerCase() ?? '';
  if (type.includes('json')) return 'json';
  if (type.includes('xml')) return 'xml';
  return 'text';
}

function jsonProblem(body: string): string | undefined {
  if (!body.trim()) return undefined;
  try {
    JSON.parse(body);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const AUTH_OPTIONS: { value: AuthType | ''; label: string }[] = [
  { value: '', label: 'None' },
  { value: 'basic', label: 'Basic' },
  { value: 'oauth_1', label: 'OAuth 1.0' },
  { value: 'client_certificate', label: "Client certificate (the environment's)" },
];

function AuthFields(props: { auth: StepAuth; onAuth: (auth: StepAuth) => void; error: unknown }) {
  const { auth, onAuth, error } = props;
  const set = (patch: Partial<StepAuth>) => onAuth({ ...auth, ...patch });
  const type = (auth.auth_type ?? '') as AuthType | '';
  return (
    <fieldset class="subsection">
      <legend>Authentication</legend>
      <SelectField
        label="Method"
        value={type}
        options={AUTH_OPTIONS}
        error={error}
        field="/auth/auth_type"
        onValue={(next) => {
          if (next === '') onAuth({});
          else if (next === 'basic') onAuth({ auth_type: 'basic', username: '', password: '' });
          else if (next === 'oauth_1')
            onAuth({
              auth_type: 'oauth_1',
              access_token: '',
              consumer_key: '',
              consumer_secret: '',
              token_secret: '',
              signature_type: 'auth_header',
            });
          else onAuth({ auth_type: next });
        }}
      />
      {type === 'basic' && (
        <div class="row">
          <TextField
            label="Username"
            value={auth.username ?? ''}
            onValue={(username) => set({ username })}
            error={error}
            field="/auth/username"
            autoComplete="off"
          />
          <TextField
            label="Password"
            type="password"
            value={auth.password ?? ''}
            onValue={(password) => set({ password })}
            error={error}
            field="/auth/password"
            autoComplete="new-password"
          />
        </div>
      )}
      {type === 'oauth_1' && (
        <>
          <div class="row">
            <TextField
              label="Consumer key"
              value={auth.consumer_key ?? ''}
              onValue={(consumer_key) => set({ consumer_key })}
              error={error}
              field="/auth/consumer_key"
              autoComplete="off"
            />
            <TextField
              label="Consumer secret"
              type="password"
              value={auth.consumer_secret ?? ''}
              onValue={(consumer_secret) => set({ consumer_secret })}
              error={error}
              field="/auth/consumer_secret"
              autoComplete="new-password"
            />
          </div>
          <div class="row">
            <TextField
              label="Access token"
              value={auth.access_token ?? ''}
              onValue={(access_token) => set({ access_token })}
              error={error}
              field="/auth/access_token"
              autoComplete="off"
            />
            <TextField
              label="Token secret"
              type="password"
              value={auth.token_secret ?? ''}
              onValue={(token_secret) => set({ token_secret })}
              error={error}
              field="/auth/token_secret"
              autoComplete="new-password"
            />
          </div>
          <SelectField<SignatureType>
            label="Signature goes in"
            value={auth.signature_type ?? 'auth_header'}
            options={[
              { value: 'auth_header', label: 'Authorization header' },
              { value: 'body', label: 'Body' },
              { value: 'query', label: 'Query string' },
            ]}
            onValue={(signature_type) => set({ signature_type })}
            error={error}
            field="/auth/signature_type"
          />
        </>
      )}
    </fieldset>
  );
}

function Scripts(props: {
  kind: 'before_scripts' | 'scripts';
  title: string;
  scripts: string[];
  onScripts: (scripts: string[]) => void;
  error: unknown;
}) {
  const { scripts, onScripts } = props;
  const noun = props.kind === 'before_scripts' ? 'Pre-request script' : 'Post-response script';
  return (
    <fieldset class="subsection">
      <legend>{props.title}</legend>
      {scripts.map((script, index) => (
        <div key={index} class="script">
          <div class="script-head">
            <span>
              {noun} {index + 1}
            </span>
            <button
              type="button"
              class="secondary small"
              onClick={() => onScripts(scripts.filter((_, i) => i !== index))}
            >
              Remove
              <span class="visually-hidden">
                {' '}
                {noun.toLowerCase()} {index + 1}
              </span>
            </button>
          </div>
          <CodeEditor
            label={`${noun} ${index + 1} (JavaScript)`}
            language="javascript"
            value={script}
            minLines={4}
            onValue={(value) => onScripts(scripts.map((s, i) => (i === index ? value : s)))}
          />
          <ScriptError error={props.error} field={`/${props.kind}/${index}`} />
        </div>
      ))}
      <button type="button" class="secondary small" onClick={() => onScripts([...scripts, ''])}>
        Add {noun.toLowerCase()}
      </button>
    </fieldset>
  );
}

function ScriptError(props: { error: unknown; field: string }) {
  const message = fieldError(props.error, props.field);
  return message ? <p class="field-error">{message}</p> : null;
}

export function RequestForm(props: {
  step: DraftRequest;
  onStep: (step: DraftRequest) => void;
  error: unknown;
}) {
  const { step, onStep, error } = props;
  const set = (patch: Partial<DraftRequest>) => onStep({ ...step, ...patch });
  const [bodyMode, setBodyMode] = useState<'raw' | 'form'>(step.form.length > 0 ? 'form' : 'raw');
  const [language, setLanguage] = useState<Language | 'auto'>('auto');
  const effective = language === 'auto' ? contentTypeLanguage(step.headers) : language;
  const problem = effective === 'json' ? jsonProblem(step.body) : undefined;
  const bodyId = useId();
  const methods = METHODS.includes(step.method) ? METHODS : [...METHODS, step.method];

  return (
    <div class="request-form">
      <div class="row request-line">
        <div class="method-field">
          <SelectField
            label="Method"
            value={step.method}
            options={methods}
            onValue={(method) => set({ method })}
            error={error}
            field="/method"
          />
        </div>
        <TextField
          label="URL"
          value={step.url}
          onValue={(url) => set({ url })}
          error={error}
          field="/url"
          class="mono"
          placeholder="https://api.example.com/items?page={{page}}"
          spellcheck={false}
        />
      </div>
      <RowsTable
        caption="Query parameters"
        nameLabel="Parameter"
        valueLabel="Value"
        rows={queryRows(step.url)}
        onRows={(rows) => set({ url: withQuery(step.url, rows) })}
      />
      <RowsTable
        caption="Headers"
        nameLabel="Header"
        valueLabel="Value"
        rows={step.headers}
        onRows={(headers) => set({ headers })}
        error={error}
        field="/headers"
      />
      <fieldset class="subsection">
        <legend>Body</legend>
        <div class="segmented" role="radiogroup" aria-label="Body kind">
          {(['raw', 'form'] as const).map((mode) => (
            <label key={mode}>
              <input
                type="radio"
                name={`${bodyId}-mode`}
                checked={bodyMode === mode}
                onChange={() => setBodyMode(mode)}
              />{' '}
              {mode === 'raw' ? 'Raw body' : 'Form fields'}
            </label>
          ))}
        </div>
        {bodyMode === 'raw' ? (
          <>
            <div class="body-language">
              <SelectField<Language | 'auto'>
                label="Body language"
                value={language}
                options={[
                  { value: 'auto', label: `From Content-Type (${contentTypeLanguage(step.headers)})` },
                  { value: 'json', label: 'JSON' },
                  { value: 'xml', label: 'XML' },
                  { value: 'text', label: 'Text' },
                ]}
                onValue={setLanguage}
              />
            </div>
            <CodeEditor
              label="Request body"
              language={effective}
              value={step.body}
              minLines={5}
              onValue={(body) => set({ body })}
            />
            <p class={problem ? 'warning-text' : 'visually-hidden'} aria-live="polite">
              {problem ? `Not valid JSON: ${problem}. Templates are filled in before sending.` : ''}
            </p>
            <ScriptError error={error} field="/body" />
            {step.form.length > 0 && (
              <p class="muted">This step also has form fields; they are sent instead of the raw body.</p>
            )}
          </>
        ) : (
          <RowsTable
            caption="Form fields"
            nameLabel="Field"
            valueLabel="Value"
            rows={step.form}
            onRows={(form) => set({ form })}
            error={error}
            field="/form"
          />
        )}
      </fieldset>
      <AuthFields auth={step.auth} onAuth={(auth) => set({ auth })} error={error} />
      <AssertionsTable
        assertions={step.assertions}
        onChange={(assertions) => set({ assertions })}
        error={error}
      />
      <VariablesTable variables={step.variables} onChange={(variables) => set({ variables })} error={error} />
      <Scripts
        kind="before_scripts"
        title="Pre-request scripts"
        scripts={step.before_scripts}
        onScripts={(before_scripts) => set({ before_scripts })}
        error={error}
      />
      <Scripts
        kind="scripts"
        title="Post-response scripts"
        scripts={step.scripts}
        onScripts={(scripts) => set({ scripts })}
        error={error}
      />
      <TextField
        label="Note"
        value={step.note}
        onValue={(note) => set({ note })}
        error={error}
        field="/note"
      />
      <Checkbox label="Skip this step" checked={step.skipped} onValue={(skipped) => set({ skipped })} />
    </div>
  );
}
