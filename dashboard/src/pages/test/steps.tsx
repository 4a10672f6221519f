/**
 * The test editor (the Steps tab): name, description and the whole step tree edited as one local
 * draft, saved with one PUT of the test (`steps` replaces the list; ids of kept steps survive, new
 * steps get theirs from the server). API errors show next to the field they name.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api/client';
import type { StepType, Test } from '../../api/resources';
import { guardLeaving } from '../../components/leave-guard';
import { ErrorBanner, TextArea, TextField } from '../../components/ui';
import { useSession } from '../../session';
import { testPath, useTest } from './context';
import {
  cloneStep,
  type Draft,
  type DraftStep,
  draftOf,
  findDraftStep,
  insertStep,
  keysOf,
  listOf,
  moveStep,
  newStep,
  placeOf,
  removeStep,
  replaceStep,
  sameDraft,
  saveBody,
  STEP_LABELS,
  stepOfField,
} from './steps/draft';
import { EditorContext, type EditorValue } from './steps/editor-context';
import { AddStepMenu, StepList } from './steps/step-list';
import './steps/steps.css';

const LEAVE_WARNING = 'This test has unsaved changes. Leave and lose them?';

/** A save error, placed on a step (field relative to the step) when it names one. */
interface SaveError {
  error: unknown;
  step?: { key: string; error: ApiError };
}

function placeError(error: unknown, steps: DraftStep[]): SaveError {
  if (!(error instanceof ApiError) || !error.field) return { error };
  const target = stepOfField(steps, error.field);
  if (!target) return { error };
  // "/steps/2/url must …" reads "Must …" next to the URL field.
  const message = error.message.startsWith(error.field)
    ? error.message
        .slice(error.field.length)
        .trim()
        .replace(/^./, (c) => c.toUpperCase())
    : error.message;
  return {
    error,
    step: { key: target.key, error: new ApiError(error.status, error.code, message, target.rest) },
  };
}

/** Where a step sits, said in words: "step 3" or "step 2.1". */
function positionOf(steps: DraftStep[], key: string): string {
  const place = placeOf(steps, key);
  if (!place) return '';
  if (place.parent === null) return `step ${place.index + 1}`;
  const outer = steps.findIndex((s) => s.key === place.parent);
  return `step ${outer + 1}.${place.index + 1}`;
}

export function StepsTab(_props: Record<string, unknown>) {
  const { bucket, test, setTest, create } = useTest();
  const { buckets } = useSession();
  const teamId = buckets.find((b) => b.key === bucket)?.team.id;
  // A new test starts with one request step, as a test created through the API does.
  const [first] = useState<Draft>(() =>
    create ? { ...draftOf(test), steps: [newStep('request')] } : draftOf(test),
  );
  const [baseline, setBaseline] = useState<{ test: Test; draft: Draft }>(() => ({ test, draft: first }));
  const [draft, setDraft] = useState<Draft>(first);
  const [expanded, setExpandedKeys] = useState<Set<string>>(
    () => new Set(first.steps.length <= 3 ? keysOf(first.steps) : []),
  );
  const [saveError, setSaveError] = useState<SaveError | undefined>(undefined);
  const [saving, setSaving] = useState(false);
  const [announcement, setAnnouncement] = useState('');
  const focusNext = useRef<{ key: string; control: string } | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const dirty = useMemo(() => !sameDraft(draft, baseline.draft), [draft, baseline]);
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;

  // The test changed outside the editor (a reload, another tab's write): a clean draft follows it.
  useEffect(() => {
    if (test === baseline.test) return;
    const next = draftOf(test);
    setBaseline({ test, draft: next });
    if (!dirtyRef.current) setDraft(next);
  }, [test]);

  // Leaving with unsaved changes asks first: unload, links, Back and Forward, Run now.
  // In the render that shows "Unsaved changes", not after the next paint: a Back or a Run now
  // right after that line appears must already be guarded.
  useLayoutEffect(() => (dirty ? guardLeaving(LEAVE_WARNING) : undefined), [dirty]);

  // A new test starts at its name.
  useEffect(() => {
    if (create) root.current?.querySelector<HTMLInputElement>('.test-details input')?.focus();
  }, []);

  // After a move or an insertion, focus follows the step (a moved node loses focus).
  useEffect(() => {
    const target = focusNext.current;
    if (!target) return;
    focusNext.current = null;
    const card = root.current?.querySelector<HTMLElement>(`[data-key="${CSS.escape(target.key)}"]`);
    const control =
      card?.querySelector<HTMLButtonElement>(
        `:scope > .step-head [data-focus="${target.control}"]:not(:disabled)`,
      ) ?? card?.querySelector<HTMLButtonElement>(':scope > .step-head [data-focus="toggle"]');
    control?.focus();
  });

  const announce = (message: string) => {
    // Cleared first so the same sentence twice is read twice.
    setAnnouncement('');
    setTimeout(() => setAnnouncement(message), 30);
  };

  const setExpanded = (key: string, open: boolean) =>
    setExpandedKeys((keys) => {
      const next = new Set(keys);
      if (open) next.add(key);
      else next.delete(key);
      return next;
    });

  const setSteps = (change: (steps: DraftStep[]) => DraftStep[]) =>
    setDraft((current) => ({ ...current, steps: change(current.steps) }));

  const editor: EditorValue = {
    bucket,
    testId: test.id,
    teamId,
    steps: draft.steps,
    expanded,
    setExpanded,
    errorOf: (key) => (saveError?.step?.key === key ? saveError.step.error : undefined),
    update: (key, change) =>
      setSteps((steps) => {
        const step = findDraftStep(steps, key);
        return step ? replaceStep(steps, key, change(step)) : steps;
      }),
    add: (type: StepType, parent) => {
      const step = newStep(type);
      const steps = insertStep(draft.steps, step, parent, Number.MAX_SAFE_INTEGER);
      setSteps(() => steps);
      setExpanded(step.key, true);
      if (parent) setExpanded(parent, true);
      focusNext.current = { key: step.key, control: 'toggle' };
      announce(`${STEP_LABELS[type]} step added as ${positionOf(steps, step.key)}.`);
    },
    remove: (key) => {
      const step = findDraftStep(draft.steps, key);
      if (!step) return;
      const where = positionOf(draft.steps, key);
      const place = placeOf(draft.steps, key)!;
      const siblings = listOf(draft.steps, place.parent);
      // Focus goes to the next step, else the previous one, else the list's "Add" control.
      const neighbour = siblings[place.index + 1] ?? siblings[place.index - 1];
      setSteps((steps) => removeStep(steps, key));
      announce(`${STEP_LABELS[step.step_type]} ${where} deleted. Discard brings it back.`);
      if (neighbour) focusNext.current = { key: neighbour.key, control: 'toggle' };
      else root.current?.querySelector<HTMLElement>('.add-step > summary')?.focus();
    },
    duplicate: (key) => {
      const step = findDraftStep(draft.steps, key);
      const place = placeOf(draft.steps, key);
      if (!step || !place) return;
      const copy = cloneStep(step);
      const steps = insertStep(draft.steps, copy, place.parent, place.index + 1);
      setSteps(() => steps);
      setExpanded(copy.key, true);
      focusNext.current = { key: copy.key, control: 'toggle' };
      announce(`${STEP_LABELS[step.step_type]} step duplicated as ${positionOf(steps, copy.key)}.`);
    },
    move: (key, parent, index, control) => {
      const step = findDraftStep(draft.steps, key);
      if (!step) return;
      const steps = moveStep(draft.steps, key, parent, index);
      if (steps === draft.steps) return;
      setSteps(() => steps);
      if (control) focusNext.current = { key, control };
      announce(`${STEP_LABELS[step.step_type]} step moved to ${positionOf(steps, key)}.`);
    },
  };

  const save = async () => {
    setSaving(true);
    setSaveError(undefined);
    const sent = draft;
    try {
      const saved = create
        ? await api.post<Test>(`/buckets/${bucket}/tests`, saveBody(sent))
        : await api.put<Test>(testPath(bucket, test.id), saveBody(sent));
      const next = draftOf(saved);
      // New steps got their ids from the server: keep them open under their new keys.
      const before = keysOf(sent.steps);
      const after = keysOf(next.steps);
      setExpandedKeys(
        (keys) => new Set(before.flatMap((key, i) => (keys.has(key) && after[i] ? [after[i]] : []))),
      );
      setBaseline({ test: saved, draft: next });
      setDraft(next);
      setTest(saved);
      announce(create ? 'Test created.' : 'Changes saved.');
      create?.(saved);
    } catch (error) {
      const placed = placeError(error, sent.steps);
      setSaveError(placed);
      if (placed.step) {
        setExpanded(placed.step.key, true);
        const place = placeOf(sent.steps, placed.step.key);
        if (place?.parent) setExpanded(place.parent, true);
        announce(`Not saved: ${positionOf(sent.steps, placed.step.key)} has an error.`);
        setTimeout(() => {
          const card = root.current?.querySelector(`[data-key="${CSS.escape(placed.step!.key)}"]`);
          const invalid = card?.querySelector<HTMLElement>('[aria-invalid="true"]');
          (invalid ?? card?.querySelector<HTMLElement>('[data-focus="toggle"]'))?.focus();
        }, 50);
      }
    } finally {
      setSaving(false);
    }
  };

  const discard = () => {
    setDraft(baseline.draft);
    setSaveError(undefined);
    announce('Changes discarded.');
  };

  const bannerError =
    saveError && !saveError.step && !fieldOfTest(saveError.error) ? saveError.error : undefined;

  return (
    <EditorContext.Provider value={editor}>
      <div class="steps-editor" ref={root} inert={saving}>
        <form
          class="test-details"
          onSubmit={(event) => {
            event.preventDefault();
            if (dirty && !saving) void save();
          }}
        >
          <h2 class="visually-hidden">Test details</h2>
          <TextField
            label="Test name"
            value={draft.name}
            onValue={(name) => setDraft((d) => ({ ...d, name }))}
            error={saveError?.error}
            field="/name"
            required
            maxLength={255}
          />
          <TextArea
            label="Description"
            value={draft.description}
            rows={2}
            onValue={(description) => setDraft((d) => ({ ...d, description }))}
            error={saveError?.error}
            field="/description"
          />
        </form>

        <div class="save-bar" role="region" aria-label="Save changes">
          <span class={`dirty-state${dirty ? ' dirty' : ''}`} data-testid="dirty-state">
            {dirty ? 'Unsaved changes' : 'All changes saved'}
          </span>
          <button type="button" disabled={!dirty || saving} onClick={() => void save()}>
            {saving ? 'Saving…' : 'Save'}
          </button>
          <button type="button" class="secondary" disabled={!dirty || saving} onClick={discard}>
            Discard
          </button>
        </div>
        {saveError?.step && (
          <p class="banner error" role="alert">
            Not saved: {positionOf(draft.steps, saveError.step.key) || 'a step'} has an error —{' '}
            {saveError.step.error.message}
          </p>
        )}
        <ErrorBanner error={bannerError} />

        <div class="steps-toolbar">
          <h2>Steps</h2>
          <div class="actions">
            <button
              type="button"
              class="secondary small"
              onClick={() => setExpandedKeys(new Set(keysOf(draft.steps)))}
            >
              Expand all
            </button>
            <button type="button" class="secondary small" onClick={() => setExpandedKeys(new Set())}>
              Collapse all
            </button>
          </div>
        </div>
        <p class="muted small-text">
          Drag a step by its handle, or use its arrow buttons. Steps inside a condition run only when the
          condition holds.
        </p>
        {draft.steps.length === 0 && <p class="empty">This test has no steps yet. Add one below.</p>}
        <StepList steps={draft.steps} parent={null} prefix="" />
        <AddStepMenu parent={null} label="Add a step" />
        <p class="visually-hidden" aria-live="polite" data-testid="announcer">
          {announcement}
        </p>
      </div>
    </EditorContext.Provider>
  );
}

/** Errors about the test's own fields show next to them, not in a banner. */
function fieldOfTest(error: unknown): boolean {
  return error instanceof ApiError && (error.field === '/name' || error.field === '/description');
}
