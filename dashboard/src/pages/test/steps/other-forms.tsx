/** The forms of pause, condition, subtest and partner-inspector steps. */
import { api } from '../../../api/client';
import type { Comparison, Integration, Test, TestListItem } from '../../../api/resources';
import { Checkbox, SelectField, TextField } from '../../../components/ui';
import { useResource } from '../../../components/use-resource';
import type { DraftCondition, DraftPartner, DraftPause, DraftSubtest } from './draft';
import { VALUELESS } from './draft';
import { useEditor } from './editor-context';
import { AssertionsTable, comparisonOptions, RowsTable, VariablesTable } from './tables';

export function PauseForm(props: { step: DraftPause; onStep: (step: DraftPause) => void; error: unknown }) {
  const { step } = props;
  return (
    <TextField
      label="Duration (seconds, 1–180)"
      type="number"
      min={1}
      max={180}
      step={1}
      inputMode="numeric"
      value={String(step.duration)}
      onValue={(value) => {
        const duration = Number.parseInt(value, 10);
        props.onStep({ ...step, duration: Number.isFinite(duration) ? duration : 0 });
      }}
      error={props.error}
      field="/duration"
      hint="The run waits this long before the next step."
    />
  );
}

/** The condition's own fields; its embedded steps are listed by the step list. */
export function ConditionFields(props: {
  step: DraftCondition;
  onStep: (step: DraftCondition) => void;
  error: unknown;
}) {
  const { step, onStep, error } = props;
  const set = (patch: Partial<DraftCondition>) => onStep({ ...step, ...patch });
  return (
    <div class="row condition-fields">
      <TextField
        label="Left value"
        class="mono"
        value={step.left_value}
        onValue={(left_value) => set({ left_value })}
        error={error}
        field="/left_value"
        placeholder="{{status}}"
      />
      <SelectField<Comparison>
        label="Comparison"
        value={step.comparison}
        options={comparisonOptions()}
        onValue={(comparison) => set({ comparison })}
        error={error}
        field="/comparison"
      />
      {!VALUELESS.includes(step.comparison) && (
        <TextField
          label="Right value"
          class="mono"
          value={step.right_value}
          onValue={(right_value) => set({ right_value })}
          error={error}
          field="/right_value"
        />
      )}
    </div>
  );
}

const testsCache = new Map<string, Promise<TestListItem[]>>();
function bucketTests(bucket: string): Promise<TestListItem[]> {
  let tests = testsCache.get(bucket);
  if (!tests) {
    tests = api.get<TestListItem[]>(`/buckets/${bucket}/tests`, { count: 1000 });
    tests.catch(() => testsCache.delete(bucket));
    testsCache.set(bucket, tests);
  }
  return tests;
}

export function SubtestForm(props: {
  step: DraftSubtest;
  onStep: (step: DraftSubtest) => void;
  error: unknown;
}) {
  const { step, onStep, error } = props;
  const { bucket, testId } = useEditor();
  const bucketKey = step.bucket_key || bucket;
  const set = (patch: Partial<DraftSubtest>) => onStep({ ...step, ...patch });
  const tests = useResource(() => bucketTests(bucketKey), [bucketKey]);
  const child = useResource(
    (signal) =>
      step.test_uuid
        ? api.get<Test>(`/buckets/${bucketKey}/tests/${step.test_uuid}`, undefined, signal)
        : Promise.resolve(undefined),
    [bucketKey, step.test_uuid],
  );
  const choices = (tests.data ?? []).filter((t) => t.id !== testId);
  const known = choices.some((t) => t.id === step.test_uuid);
  const testOptions = [
    { value: '', label: tests.data ? 'Choose a test…' : 'Loading tests…' },
    ...(step.test_uuid && !known ? [{ value: step.test_uuid, label: step.test_uuid }] : []),
    ...choices.map((t) => ({ value: t.id, label: t.name })),
  ];
  const environments = child.data?.environments ?? [];
  const envKnown = environments.some((e) => e.id === step.environment_uuid);
  return (
    <div>
      <div class="row">
        <SelectField
          label="Test to run"
          value={step.test_uuid}
          options={testOptions}
          onValue={(test_uuid) => set({ test_uuid, environment_uuid: '', bucket_key: bucketKey })}
          error={error}
          field="/test_uuid"
        />
        <SelectField
          label="Environment"
          value={step.environment_uuid}
          disabled={!step.test_uuid}
          options={[
            { value: '', label: "The test's default environment" },
            ...(step.environment_uuid && !envKnown
              ? [{ value: step.environment_uuid, label: step.environment_uuid }]
              : []),
            ...environments.map((e) => ({ value: e.id, label: e.name })),
          ]}
          onValue={(environment_uuid) => set({ environment_uuid })}
          error={error}
          field="/environment_uuid"
        />
      </div>
      {tests.error !== undefined && <p class="field-error">The tests could not be loaded.</p>}
      <RowsTable
        caption="Parameters (initial variables of the subtest)"
        nameLabel="Name"
        valueLabel="Value"
        rows={step.params}
        onRows={(params) => set({ params })}
        error={error}
        field="/params"
        indexed
      />
      <p class="muted">
        The subtest answers like a response: status 200 when it passed, 500 when it failed, and its final
        variables as the JSON body.
      </p>
      <AssertionsTable
        assertions={step.assertions}
        onChange={(assertions) => set({ assertions })}
        error={error}
      />
      <VariablesTable variables={step.variables} onChange={(variables) => set({ variables })} error={error} />
    </div>
  );
}

export function PartnerForm(props: {
  step: DraftPartner;
  onStep: (step: DraftPartner) => void;
  error: unknown;
}) {
  const { step, onStep, error } = props;
  const { teamId } = useEditor();
  const set = (patch: Partial<DraftPartner>) => onStep({ ...step, ...patch });
  const integrations = useResource(
    (signal) =>
      teamId
        ? api.get<Integration[]>(`/teams/${teamId}/integrations`, undefined, signal)
        : Promise.resolve([] as Integration[]),
    [teamId],
  );
  const partners = (integrations.data ?? []).filter((i) => i.integration_type === 'partner-inspector');
  const known = partners.some((i) => i.id === step.integration_id);
  return (
    <div>
      <SelectField
        label="Integration"
        value={step.integration_id}
        options={[
          {
            value: '',
            label: integrations.data
              ? partners.length
                ? 'Choose an integration…'
                : 'No partner-inspector integration in this team'
              : 'Loading integrations…',
          },
          ...(step.integration_id && !known
            ? [{ value: step.integration_id, label: step.integration_id }]
            : []),
          ...partners.map((i) => ({ value: i.id, label: i.description || i.id })),
        ]}
        onValue={(integration_id) => set({ integration_id })}
        error={error}
        field="/integration_id"
      />
      <div class="row">
        <TextField
          label="Suite ID"
          value={step.suite_id}
          onValue={(suite_id) => set({ suite_id })}
          error={error}
          field="/suite_id"
        />
        <TextField
          label="Test ID"
          value={step.test_id}
          onValue={(test_id) => set({ test_id })}
          error={error}
          field="/test_id"
        />
      </div>
      <Checkbox
        label="Use a custom start URL"
        checked={step.is_custom_start_url}
        onValue={(is_custom_start_url) => set({ is_custom_start_url })}
      />
      {step.is_custom_start_url && (
        <TextField
          label="Start URL"
          class="mono"
          value={step.start_url}
          onValue={(start_url) => set({ start_url })}
          error={error}
          field="/start_url"
        />
      )}
      <AssertionsTable
        assertions={step.assertions}
        onChange={(assertions) => set({ assertions })}
        error={error}
      />
      <VariablesTable variables={step.variables} onChange={(variables) => set({ variables })} error={error} />
    </div>
  );
}
