/**
 * The step list: one card per step, reordered by drag (SortableJS, nested lists so steps move into
 * and out of conditions) or by the move buttons of each card. Preact stays the source of truth: when
 * a drag ends, the DOM move is undone and the move is applied to the draft instead.
 */
import { useEffect, useId, useRef } from 'preact/hooks';
import Sortable from 'sortablejs';
import type { StepType } from '../../../api/resources';
import { STEP_TYPES } from '../../../../../src/domain/vocabulary';
import { type DraftStep, STEP_LABELS, summaryOf } from './draft';
import { type EditorValue, useEditor } from './editor-context';
import { RequestForm } from './request-form';
import { ConditionFields, PartnerForm, PauseForm, SubtestForm } from './other-forms';

export function StepList(props: { steps: DraftStep[]; parent: string | null; prefix: string }) {
  const list = useRef<HTMLOListElement>(null);
  const editor = useEditor();
  const latest = useRef<EditorValue>(editor);
  latest.current = editor;

  useEffect(() => {
    const sortable = Sortable.create(list.current!, {
      group: {
        name: 'steps',
        pull: true,
        // A condition cannot go inside a condition.
        put: props.parent === null ? true : (_to, _from, dragged) => dragged.dataset.type !== 'condition',
      },
      handle: '.drag-handle',
      draggable: '.step-card',
      animation: 120,
      forceFallback: true,
      fallbackOnBody: true,
      swapThreshold: 0.65,
      emptyInsertThreshold: 24,
      onEnd: (event) => {
        const { item, from, to, oldIndex, newDraggableIndex } = event;
        if (oldIndex === undefined || newDraggableIndex === undefined) return;
        // Undo Sortable's DOM move; the draft decides where the step goes and Preact renders it there.
        item.remove();
        from.insertBefore(item, from.children[oldIndex] ?? null);
        const parent = to.dataset.parent === 'root' ? null : (to.dataset.parent ?? null);
        const key = item.dataset.key;
        if (!key) return;
        if (from === to && event.oldDraggableIndex === newDraggableIndex) return;
        latest.current.move(key, parent, newDraggableIndex);
      },
    });
    return () => sortable.destroy();
  }, [props.parent]);

  return (
    <ol
      ref={list}
      class={`step-list${props.parent ? ' nested' : ''}`}
      data-parent={props.parent ?? 'root'}
      aria-label={props.parent ? `Steps of condition ${props.prefix.replace(/\.$/, '')}` : 'Steps'}
    >
      {props.steps.map((step, index) => (
        <StepCard
          key={step.key}
          step={step}
          index={index}
          count={props.steps.length}
          parent={props.parent}
          label={`${props.prefix}${index + 1}`}
          previous={props.steps[index - 1]}
        />
      ))}
    </ol>
  );
}

function StepCard(props: {
  step: DraftStep;
  index: number;
  count: number;
  parent: string | null;
  label: string;
  previous: DraftStep | undefined;
}) {
  const { step, index, parent, label } = props;
  const editor = useEditor();
  const bodyId = useId();
  const open = editor.expanded.has(step.key);
  const error = editor.errorOf(step.key);
  const type = STEP_LABELS[step.step_type];
  const onStep = (next: DraftStep) => editor.update(step.key, () => next);
  const conditionAbove =
    parent === null && step.step_type !== 'condition' && props.previous?.step_type === 'condition'
      ? props.previous
      : undefined;
  const skipped = step.step_type === 'request' && step.skipped;
  const name = `step ${label}`;

  return (
    <li
      class={`step-card${skipped ? ' skipped' : ''}${error ? ' has-error' : ''}`}
      data-key={step.key}
      data-type={step.step_type}
    >
      <div class="step-head">
        <span class="drag-handle" aria-hidden="true" title="Drag to reorder">
          ⠿
        </span>
        <button
          type="button"
          class="step-toggle"
          aria-expanded={open}
          aria-controls={bodyId}
          data-focus="toggle"
          onClick={() => editor.setExpanded(step.key, !open)}
        >
          <span class="step-number">{label}</span>
          <span class={`step-type type-${step.step_type}`}>{type}</span>
          <span class="step-summary mono">{summaryOf(step)}</span>
          {skipped && <span class="badge">skipped</span>}
          {error !== undefined && <span class="badge result-fail">error</span>}
        </button>
        <div class="step-tools" role="group" aria-label={`Actions of ${name}`}>
          <button
            type="button"
            class="secondary small icon"
            data-focus="up"
            aria-label={`Move ${name} up`}
            title="Move up"
            disabled={index === 0}
            onClick={() => editor.move(step.key, parent, index - 1, 'up')}
          >
            ↑
          </button>
          <button
            type="button"
            class="secondary small icon"
            data-focus="down"
            aria-label={`Move ${name} down`}
            title="Move down"
            disabled={index === props.count - 1}
            onClick={() => editor.move(step.key, parent, index + 1, 'down')}
          >
            ↓
          </button>
          {conditionAbove && conditionAbove.step_type === 'condition' && (
            <button
              type="button"
              class="secondary small"
              data-focus="into"
              aria-label={`Move ${name} into condition above`}
              onClick={() => {
                editor.setExpanded(conditionAbove.key, true);
                editor.move(step.key, conditionAbove.key, conditionAbove.steps.length, 'out');
              }}
            >
              Into condition above
            </button>
          )}
          {parent !== null && (
            <button
              type="button"
              class="secondary small"
              data-focus="out"
              aria-label={`Move ${name} out of condition`}
              onClick={() => {
                const at = editor.steps.findIndex((s) => s.key === parent);
                editor.move(step.key, null, at + 1, 'toggle');
              }}
            >
              Out of condition
            </button>
          )}
          <button
            type="button"
            class="secondary small"
            aria-label={`Duplicate ${name}`}
            onClick={() => editor.duplicate(step.key)}
          >
            Duplicate
          </button>
          <button
            type="button"
            class="danger small"
            aria-label={`Delete ${name}`}
            onClick={() => editor.remove(step.key)}
          >
            Delete
          </button>
        </div>
      </div>
      <div id={bodyId} class="step-body" hidden={!open}>
        {open && <StepForm step={step} onStep={onStep} error={error} />}
        {open && error !== undefined && !placed(step, error) && (
          <p class="field-error" role="alert">
            {(error as Error).message}
          </p>
        )}
      </div>
      {step.step_type === 'condition' && (
        <div class="condition-children" hidden={!open}>
          <StepList steps={step.steps} parent={step.key} prefix={`${label}.`} />
          <AddStepMenu parent={step.key} label={`Add a step inside condition ${label}`} />
        </div>
      )}
    </li>
  );
}

/** Whether the form of the step shows the error next to a field of its own. */
function placed(step: DraftStep, error: unknown): boolean {
  const field = (error as { field?: string }).field ?? '';
  const common = /^\/(assertions|variables)(\/|$)/;
  switch (step.step_type) {
    case 'request':
      return (
        common.test(field) ||
        /^\/(method|url|body|form|headers|auth|scripts|before_scripts|note)(\/|$)/.test(field)
      );
    case 'pause':
      return /^\/duration$/.test(field);
    case 'condition':
      return /^\/(left_value|right_value|comparison)$/.test(field);
    case 'subtest':
      return common.test(field) || /^\/(test_uuid|environment_uuid|params)(\/|$)/.test(field);
    case 'partner-inspector':
      return common.test(field) || /^\/(integration_id|suite_id|test_id|start_url)$/.test(field);
  }
}

function StepForm(props: { step: DraftStep; onStep: (step: DraftStep) => void; error: unknown }) {
  const { step, onStep, error } = props;
  switch (step.step_type) {
    case 'request':
      return <RequestForm step={step} onStep={onStep} error={error} />;
    case 'pause':
      return <PauseForm step={step} onStep={onStep} error={error} />;
    case 'condition':
      return <ConditionFields step={step} onStep={onStep} error={error} />;
    case 'subtest':
      return <SubtestForm step={step} onStep={onStep} error={error} />;
    case 'partner-inspector':
      return <PartnerForm step={step} onStep={onStep} error={error} />;
  }
}

/** "Add step": a disclosure with one button per step type (no condition inside a condition). */
export function AddStepMenu(props: { parent: string | null; label: string }) {
  const editor = useEditor();
  const details = useRef<HTMLDetailsElement>(null);
  const types = STEP_TYPES.filter((t) => props.parent === null || t !== 'condition');
  return (
    <details class="add-step" ref={details}>
      <summary>{props.label}</summary>
      <div class="add-step-types" role="group" aria-label={props.label}>
        {types.map((type: StepType) => (
          <button
            key={type}
            type="button"
            class="secondary small"
            onClick={() => {
              details.current?.removeAttribute('open');
              editor.add(type, props.parent);
            }}
          >
            {STEP_LABELS[type]}
          </button>
        ))}
      </div>
    </details>
  );
}
