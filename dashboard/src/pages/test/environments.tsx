import { api } from '../../api/client';
import type { Environment, Test } from '../../api/resources';
import { ErrorBanner, Loading } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { Link } from 'wouter-preact';
import { paths, useBucket } from '../../session';
import { EnvironmentManager } from '../environments/manager';
import { testPath, useTest } from './context';

/** The test's environments, its default one, and the shared environments they may inherit from. */
export function EnvironmentsTab() {
  const { bucket, test, setTest, reload } = useTest();
  const teamId = useBucket(bucket)?.team.id;
  const shared = useResource(
    (signal) => api.get<Environment[]>(`/buckets/${bucket}/environments`, undefined, signal),
    [bucket],
  );
  if (shared.error && !shared.data) return <ErrorBanner error={shared.error} onRetry={shared.reload} />;
  if (!shared.data) return <Loading label="Loading environments…" />;
  return (
    <div>
      <h2>Environments of this test</h2>
      <p class="muted">
        A run uses one environment: the default one unless another is chosen. An environment may inherit from
        a shared environment of the bucket.
      </p>
      <EnvironmentManager
        noun="environments of this test"
        environments={test.environments}
        collectionPath={`${testPath(bucket, test.id)}/environments`}
        parents={shared.data}
        teamId={teamId}
        onChanged={reload}
        defaultId={test.default_environment_id}
        onMakeDefault={async (id) => {
          setTest(await api.put<Test>(testPath(bucket, test.id), { default_environment_id: id }));
        }}
      />
      <h2>Shared environments of the bucket</h2>
      {shared.data.length === 0 ? (
        <p class="muted">None yet. Shared environments are managed on the bucket's Environments page.</p>
      ) : (
        <ul>
          {shared.data.map((env) => (
            <li key={env.id}>
              {env.name}{' '}
              <span class="muted">
                ({Object.keys(env.initial_variables).length} variables
                {env.regions.length > 0 && `, regions ${env.regions.join(', ')}`})
              </span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link href={paths.sharedEnvironments(bucket)}>Manage shared environments</Link>
      </p>
    </div>
  );
}
