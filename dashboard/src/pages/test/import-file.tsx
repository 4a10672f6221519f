/**
 * Imports from other tools (Postman, OpenAPI/Swagger, curl, HAR) and from captured messages: the
 * API's dry run shows what would be created, and only "Create" creates it (`POST …/imports`).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../../api/client';
import { Loading } from '../../components/ui';
import { Dialog, NothingCreated } from './manage';

interface ImportedStep {
  step_type: string;
  method?: string;
  url?: string;
  note?: string;
  assertions: number;
  variables: number;
}

export interface ImportAnswer {
  dry_run: boolean;
  format: string;
  tests: { id?: string; name: string; step_count: number; steps: ImportedStep[] }[];
  notes: string[];
}

const FORMAT_NAMES: Record<string, string> = {
  postman: 'Postman collection',
  openapi: 'OpenAPI / Swagger document',
  curl: 'curl command',
  har: 'HAR file',
  runscope: 'test export',
  messages: 'captured messages',
};

/** Whether a file reads as one of the other tools' formats rather than a Vigil test export. */
export function isOtherFormat(text: string): boolean {
  const head = text
    .replace(/^\uFEFF/, '')
    .trimStart()
    .slice(0, 4_000);
  if (/^curl(\.exe)?[\s^]/i.test(head)) return true;
  if (/^(openapi|swagger)\s*:/m.test(head)) return true;
  return /"(_postman_id|openapi|swagger)"\s*:|"log"\s*:\s*\{[\s\S]*"entries"|getpostman\.com/.test(head);
}

/**
 * The preview of an import and its "Create" button. `body` is the import request without
 * `dry_run`; with `chainOption`, a "Chain values" box sets `chain` and the preview follows it.
 */
export function ImportPreviewDialog(props: {
  bucket: string;
  title: string;
  body: Record<string, unknown>;
  chainOption?: boolean;
  onClose: () => void;
  onCreated: (answer: ImportAnswer) => void;
}) {
  const [chain, setChain] = useState(true);
  const [preview, setPreview] = useState<ImportAnswer | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  // Postman: an exported environment file whose values become the tests' initial variables.
  const [environment, setEnvironment] = useState<{ name: string; value: unknown } | undefined>(undefined);
  const url = `/buckets/${props.bucket}/imports`;
  const body = {
    ...props.body,
    ...(props.chainOption && { chain }),
    ...(environment && { environment: environment.value }),
  };
  const chooseEnvironment = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    try {
      setEnvironment({ name: file.name, value: JSON.parse(await file.text()) as unknown });
    } catch (caught) {
      setError(new Error(`${file.name} is not JSON (${messageOf(caught)})`));
    }
  };

  useEffect(() => {
    let current = true;
    setPreview(undefined);
    setError(undefined);
    api
      .post<ImportAnswer>(url, { ...body, dry_run: true })
      .then((answer) => current && setPreview(answer))
      .catch((caught: unknown) => current && setError(caught));
    return () => {
      current = false;
    };
  }, [url, chain, environment]);

  const create = async () => {
    setBusy(true);
    setError(undefined);
    try {
      props.onCreated(await api.post<ImportAnswer>(url, body));
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  const count = preview?.tests.length ?? 0;
  return (
    <Dialog
      title={props.title}
      onClose={props.onClose}
      actions={
        <>
          {preview && (
            <button type="button" disabled={busy || error !== undefined} onClick={() => void create()}>
              {busy ? 'Creating…' : `Create ${count} test${count === 1 ? '' : 's'}`}
            </button>
          )}
          <button type="button" class="secondary" disabled={busy} onClick={props.onClose}>
            {error === undefined ? 'Cancel' : 'Close'}
          </button>
        </>
      }
    >
      {props.chainOption && (
        <label class="checkbox">
          <input
            type="checkbox"
            checked={chain}
            disabled={busy}
            onChange={(event) => setChain(event.currentTarget.checked)}
          />{' '}
          Chain values: a value an answer produced that a later request sends becomes a variable
        </label>
      )}
      {!preview && error === undefined && <Loading label="Reading the file…" />}
      {preview && (
        <div class="import-file-preview" data-testid="import-file-preview">
          <p>
            From a {FORMAT_NAMES[preview.format] ?? preview.format}: {count} test{count === 1 ? '' : 's'},
            nothing is created until you choose Create.
          </p>
          {preview.tests.map((test) => (
            <details key={test.name} open={count <= 3}>
              <summary>
                <strong>{test.name}</strong>{' '}
                <span class="muted">
                  ({test.step_count} step{test.step_count === 1 ? '' : 's'})
                </span>
              </summary>
              <ol>
                {test.steps.map((step, i) => (
                  <li key={i}>
                    <code>
                      {step.method ?? step.step_type} {step.url ?? ''}
                    </code>{' '}
                    <span class="muted">
                      {step.assertions} assertion{step.assertions === 1 ? '' : 's'}
                      {step.variables > 0 && `, ${step.variables} variable${step.variables === 1 ? '' : 's'}`}
                    </span>
                    {step.note && <div class="muted">{step.note}</div>}
                  </li>
                ))}
              </ol>
            </details>
          ))}
          {preview.format === 'postman' && (
            <p>
              <label>
                Postman environment (optional)
                {environment && <span class="muted"> — {environment.name}</span>}{' '}
                <input
                  type="file"
                  accept=".json,application/json"
                  disabled={busy}
                  onChange={(event) => void chooseEnvironment(event.currentTarget)}
                />
              </label>
            </p>
          )}
          {preview.notes.length > 0 && (
            <>
              <h3>Notes</h3>
              <ul data-testid="import-notes">
                {preview.notes.map((note) => (
                  <li key={note}>{note}</li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      {error !== undefined && <NothingCreated error={error} />}
    </Dialog>
  );
}
