/**
 * Managing whole tests from the dashboard: export, duplicate, delete with undo, import. Everything
 * goes through the export document (`GET …/tests/<id>/export`), which POST …/tests takes back.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError, api, download, messageOf } from '../../api/client';
import type { Test } from '../../api/resources';
import { saveFile } from '../../components/save-file';
import { ErrorBanner } from '../../components/ui';
import { testPath } from './context';

/** The parts of an export the dashboard reads; the rest travels back to the API untouched. */
export interface ExportedTest {
  name: string;
  description?: string | null;
  steps?: unknown[];
  environments?: { name?: unknown }[];
  shared_environments?: { name?: unknown }[];
  schedules?: unknown[];
  [key: string]: unknown;
}

export async function fetchExport(
  bucket: string,
  testId: string,
): Promise<{ text: string; fileName: string; test: ExportedTest }> {
  const file = await download(`${testPath(bucket, testId)}/export`);
  return { ...file, test: JSON.parse(file.text) as ExportedTest };
}

/** The formats of `…/export?format=`: Vigil's own document, a Postman collection, a cURL script. */
export const EXPORT_FORMATS = [
  { format: 'vigil', label: 'Vigil test (JSON)', type: 'application/json' },
  { format: 'postman', label: 'Postman collection', type: 'application/json' },
  { format: 'curl', label: 'cURL script', type: 'text/x-shellscript' },
] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number]['format'];

export async function exportToFile(
  bucket: string,
  testId: string,
  format: ExportFormat = 'vigil',
): Promise<void> {
  const { text, fileName } = await download(`${testPath(bucket, testId)}/export?format=${format}`);
  const type = EXPORT_FORMATS.find((f) => f.format === format)!.type;
  saveFile(new Blob([text], { type }), fileName);
}

/** A new test from an export (import, duplicate, undo of a delete). */
export const createFrom = (bucket: string, body: ExportedTest) =>
  api.post<Test>(`/buckets/${bucket}/tests`, body);

/**
 * "Copy of <name>" with the same steps, environments and default environment. Schedules are not
 * copied: a copy does not start monitoring by itself.
 */
export async function duplicateTest(bucket: string, testId: string): Promise<Test> {
  const { test } = await fetchExport(bucket, testId);
  return createFrom(bucket, { ...test, name: `Copy of ${test.name}`.slice(0, 255), schedules: [] });
}

// The last deleted test, kept in memory so "Undo" can bring it back while the dashboard stays open.
interface Deleted {
  bucket: string;
  name: string;
  exported: ExportedTest;
}
let deleted: Deleted | null = null;
const listeners = new Set<() => void>();
function setDeleted(next: Deleted | null) {
  deleted = next;
  for (const listener of listeners) listener();
}

/** The deleted test "Undo" can bring back in `bucket`, or null. */
export function useDeleted(bucket: string): Deleted | null {
  const [, rerender] = useState(0);
  useEffect(() => {
    const listener = () => rerender((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return deleted && deleted.bucket === bucket ? deleted : null;
}

/** Takes the test's export, then deletes it; the export is what "Undo" creates again. */
export async function deleteTest(bucket: string, test: { id: string; name: string }): Promise<void> {
  const { test: exported } = await fetchExport(bucket, test.id);
  await api.delete(testPath(bucket, test.id));
  setDeleted({ bucket, name: test.name, exported });
}

/** Creates the last deleted test again (new id); its first revision says it was restored. */
export async function undoDelete(): Promise<Test | undefined> {
  const current = deleted;
  if (!current) return undefined;
  const restored = await api.post<Test>(`/buckets/${current.bucket}/tests`, current.exported, {
    restored_from: typeof current.exported.id === 'string' ? current.exported.id : undefined,
  });
  if (deleted === current) setDeleted(null);
  return restored;
}

export const dismissDeleted = () => setDeleted(null);

/** A modal `<dialog>` labelled by its title; Escape or Cancel closes it. */
export function Dialog(props: {
  title: string;
  children: ComponentChildren;
  onClose: () => void;
  actions: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    // Focus goes back where it was when the dialog closes, if that control is still there.
    const opener = document.activeElement;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      // Closed before it leaves the page: while it is modal, the rest of the page takes no focus.
      if (dialog?.open) dialog.close();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
      <div class="actions dialog-actions">{props.actions}</div>
    </dialog>
  );
}

/** Asks before deleting a test, naming it; deletes and calls `onDeleted`. */
export function DeleteDialog(props: {
  bucket: string;
  test: { id: string; name: string };
  onClose: () => void;
  onDeleted: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await deleteTest(props.bucket, props.test);
      props.onDeleted();
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <Dialog
      title={`Delete the test “${props.test.name}”?`}
      onClose={props.onClose}
      actions={
        <>
          <button type="button" class="danger" disabled={busy} onClick={() => void confirm()}>
            {busy ? 'Deleting…' : 'Delete'}
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={props.onClose}>
            Cancel
          </button>
        </>
      }
    >
      <p>
        Its steps, environments, schedules and results are deleted. Right after, you can undo: the test comes
        back with its steps, environments and schedules, but not its results.
      </p>
      <ErrorBanner error={error} />
    </Dialog>
  );
}

/** "Deleted …, Undo": shown on the tests list after a delete, until undone, dismissed or another delete. */
export function DeletedNotice(props: { bucket: string; onRestored: (test: Test) => void }) {
  const current = useDeleted(props.bucket);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  if (!current) return null;
  const undo = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const restored = await undoDelete();
      if (restored) props.onRestored(restored);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <div class="banner info" role="status" data-testid="deleted-notice">
        <span>Deleted the test “{current.name}”.</span>
        <span class="actions">
          <button type="button" class="small" disabled={busy} onClick={() => void undo()}>
            {busy ? 'Restoring…' : 'Undo'}
          </button>
          <button type="button" class="secondary small" disabled={busy} onClick={dismissDeleted}>
            Dismiss
          </button>
        </span>
      </div>
      <ErrorBanner error={error} />
    </>
  );
}

/** What an import file holds, or why it is no Vigil test export. */
export type ParsedImport = { ok: true; test: ExportedTest } | { ok: false; problem: string };

/**
 * Reads an import file: a test as `GET …/export` downloads it, or the same inside the API's
 * `{data: …}` envelope (as `vigil run` takes it). Checks only what the preview needs; the API
 * checks the rest and names the field it refuses.
 */
export function parseImport(text: string): ParsedImport {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `The file is not JSON (${(error as Error).message}).` };
  }
  if (Array.isArray(document))
    return { ok: false, problem: 'The file holds a list of tests; import one exported test at a time.' };
  if (typeof document !== 'object' || document === null)
    return { ok: false, problem: 'The file is not a Vigil test export: it holds no JSON object.' };
  const unwrapped =
    'data' in document && !('steps' in document) ? (document as { data: unknown }).data : document;
  if (typeof unwrapped !== 'object' || unwrapped === null || Array.isArray(unwrapped))
    return { ok: false, problem: 'The file is not a Vigil test export: its data is not a test.' };
  const test = unwrapped as Record<string, unknown>;
  if (typeof test.name !== 'string' || test.name.trim() === '')
    return { ok: false, problem: 'The file is not a Vigil test export: it has no test name.' };
  for (const list of ['steps', 'environments', 'shared_environments', 'schedules'] as const) {
    if (test[list] !== undefined && test[list] !== null && !Array.isArray(test[list]))
      return { ok: false, problem: `The file is not a Vigil test export: its ${list} is not a list.` };
  }
  return { ok: true, test: test as ExportedTest };
}

/** The preview of an import: what will be created; "Create" creates it. */
/** Why an import created nothing: the API's message, and the field it names. */
export function NothingCreated(props: { error: unknown }) {
  const { error } = props;
  return (
    <div role="alert" class="banner error">
      <span>
        Nothing was created: {messageOf(error)}
        {error instanceof ApiError && error.field && <span class="muted"> ({error.field})</span>}
      </span>
    </div>
  );
}

export function ImportDialog(props: {
  bucket: string;
  fileName: string;
  parsed: ParsedImport;
  onClose: () => void;
  onCreated: (test: Test) => void;
}) {
  const { parsed } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const create = async () => {
    if (!parsed.ok) return;
    setBusy(true);
    setError(undefined);
    try {
      props.onCreated(await createFrom(props.bucket, parsed.test));
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  const names = (list: { name?: unknown }[] | undefined) =>
    (list ?? []).map((env) => String(env.name ?? '')).join(', ');
  return (
    <Dialog
      title={`Import ${props.fileName}`}
      onClose={props.onClose}
      actions={
        <>
          {parsed.ok && (
            <button type="button" disabled={busy || error !== undefined} onClick={() => void create()}>
              {busy ? 'Creating…' : 'Create test'}
            </button>
          )}
          <button type="button" class="secondary" disabled={busy} onClick={props.onClose}>
            {parsed.ok && error === undefined ? 'Cancel' : 'Close'}
          </button>
        </>
      }
    >
      {parsed.ok ? (
        <dl class="import-preview" data-testid="import-preview">
          <dt>Name</dt>
          <dd>{parsed.test.name}</dd>
          <dt>Steps</dt>
          <dd>{parsed.test.steps?.length ?? 0}</dd>
          <dt>Environments</dt>
          <dd>{names(parsed.test.environments) || 'none (a “Test Settings” environment is made)'}</dd>
          {(parsed.test.shared_environments?.length ?? 0) > 0 && (
            <>
              <dt>Shared environments</dt>
              <dd>{names(parsed.test.shared_environments)} (matched in this bucket, else created)</dd>
            </>
          )}
          <dt>Schedules</dt>
          <dd>{parsed.test.schedules?.length ?? 0}</dd>
        </dl>
      ) : (
        <p class="banner error" role="alert">
          {parsed.problem} Nothing was created.
        </p>
      )}
      {error !== undefined && <NothingCreated error={error} />}
    </Dialog>
  );
}
