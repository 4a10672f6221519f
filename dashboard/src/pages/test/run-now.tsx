import { useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { api, messageOf } from '../../api/client';
import type { Environment } from '../../api/resources';
import { confirmLeaving } from '../../components/leave-guard';
import { SelectField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { paths } from '../../session';
import type { StartedRuns } from '../runs/types';
import '../runs/runs.css';
import { testPath, useTest } from './context';

/**
 * "Run now" in the test's header: starts a manual run in the chosen environment (the default one
 * first; the test's own environments, then the bucket's shared ones) and opens its result, which
 * follows the run live. An environment with several regions starts one run per region; then the
 * results list opens.
 */
export function RunNow() {
  const { bucket, test } = useTest();
  const [, navigate] = useLocation();
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const shared = useResource(
    (signal) => api.get<Environment[]>(`/buckets/${bucket}/environments`, undefined, signal),
    [bucket],
  );
  const choices = [
    ...test.environments.map((env) => ({
      value: env.id,
      label: env.id === test.default_environment_id ? `${env.name} (default)` : env.name,
    })),
    ...(shared.data ?? [])
      .filter((env) => !test.environments.some((own) => own.id === env.id))
      .map((env) => ({ value: env.id, label: `${env.name} (shared)` })),
  ];
  const environmentId =
    chosen && choices.some((choice) => choice.value === chosen) ? chosen : test.default_environment_id;

  const run = async () => {
    // The run uses the saved test: unsaved edits on screen would be left behind.
    if (!confirmLeaving()) return;
    setBusy(true);
    setError(undefined);
    try {
      const started = await api.post<StartedRuns>(`${testPath(bucket, test.id)}/runs`, {
        environment_id: environmentId,
      });
      const [first, ...others] = started.runs;
      if (first && others.length === 0) navigate(paths.result(bucket, test.id, first.test_run_id));
      else navigate(paths.test(bucket, test.id, 'results'));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="run-now"
      onSubmit={(event) => {
        event.preventDefault();
        void run();
      }}
    >
      {choices.length > 1 && (
        <SelectField label="Environment to run" value={environmentId} options={choices} onValue={setChosen} />
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Starting…' : 'Run now'}
      </button>
      {error !== undefined && (
        <p class="run-now-error" role="alert">
          {messageOf(error)}
        </p>
      )}
    </form>
  );
}
