import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import { CopyButton, ErrorBanner, Loading, Notice } from '../../components/ui';

/**
 * The banner for an error of a form: shown unless the error names one of the form's own fields,
 * whose message already stands next to that field.
 */
export function FormError(props: { error: unknown; fields: readonly string[] }) {
  const { error } = props;
  if (!error) return null;
  const field = error instanceof ApiError ? error.field : undefined;
  if (field && props.fields.some((f) => field === f || field.startsWith(`${f}/`))) return null;
  return <ErrorBanner error={error} />;
}

/** A form's submit state: `run` clears the last error, marks it busy and keeps the error it throws. */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (work: () => Promise<void>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

/**
 * Actions on the rows of a list (delete, revoke, rotate): each asks first, clears the last notice
 * and error, and keeps the notice it answers or the error it throws.
 */
export function useRowActions() {
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (question: string, action: () => Promise<string | void>): Promise<void> => {
    if (!confirm(question)) return;
    setError(undefined);
    setNotice(undefined);
    try {
      const done = await action();
      if (done) setNotice(done);
    } catch (failure) {
      setError(failure);
    }
  };
  return { notice, setNotice, error, run };
}

/**
 * The state lines above a list: the last row action's error or notice, a failed load (with retry),
 * loading, and what an empty list says.
 */
export function ListState(props: {
  list: { data: readonly unknown[] | undefined; error: unknown; reload: () => Promise<void> };
  rows?: { error: unknown; notice: string | undefined };
  loading: string;
  empty: ComponentChildren;
}) {
  const { list, rows } = props;
  return (
    <>
      {rows && <ErrorBanner error={rows.error} />}
      {rows?.notice && <Notice kind="success">{rows.notice}</Notice>}
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {!list.data && !list.error && <Loading label={props.loading} />}
      {list.data && list.data.length === 0 && props.empty}
    </>
  );
}

export interface Secret {
  label: string;
  value: string;
}

/**
 * Credentials the server shows this once (client secrets, access and agent tokens): each with a copy
 * button, a warning, and a button that dismisses them for good. Focus moves to the panel so
 * keyboard and screen-reader users land on it.
 */
export function SecretPanel(props: {
  title: string;
  secrets: readonly Secret[];
  onDismiss: () => void;
  /** Replaces the shown-once warning, for a secret that can be read again. */
  warning?: ComponentChildren;
  children?: ComponentChildren;
}) {
  const ref = useRef<HTMLElement>(null);
  const headingId = useId();
  useEffect(() => ref.current?.focus(), []);
  return (
    <section
      class="secret-panel"
      aria-labelledby={headingId}
      tabIndex={-1}
      ref={ref}
      data-testid="secret-panel"
    >
      <h3 id={headingId}>{props.title}</h3>
      <p class="secret-warning">
        {props.warning ?? (
          <>
            <strong>Copy {props.secrets.length === 1 ? 'it' : 'these'} now.</strong> Vigil keeps only{' '}
            {props.secrets.length === 1 ? 'its hash' : 'their hashes'} and will not show{' '}
            {props.secrets.length === 1 ? 'it' : 'them'} again.
          </>
        )}
      </p>
      <dl class="secret-list">
        {props.secrets.map((secret) => (
          <div key={secret.label}>
            <dt>{secret.label}</dt>
            <dd>
              <code class="secret" data-secret={secret.label}>
                {secret.value}
              </code>
              <CopyButton text={secret.value} label={`Copy ${secret.label.toLowerCase()}`} />
            </dd>
          </div>
        ))}
      </dl>
      {props.children}
      <button type="button" class="secondary" onClick={props.onDismiss}>
        {props.warning ? 'Hide' : `I have copied ${props.secrets.length === 1 ? 'it' : 'them'}; hide`}
      </button>
    </section>
  );
}

/** A value to copy (a URL), shown in full with a copy button. */
export function CopyValue(props: { label: string; value: string }) {
  return (
    <div class="copy-value">
      <span class="copy-label">{props.label}</span>
      <div class="copy-row">
        <code>{props.value}</code>
        <CopyButton text={props.value} label={`Copy ${props.label.replace(/^\w/, (c) => c.toLowerCase())}`} />
      </div>
    </div>
  );
}
