import { api } from '../api/client';
import type { Environment } from '../api/resources';
import { ErrorBanner, Loading, PageHeader } from '../components/ui';
import { useResource } from '../components/use-resource';
import { useBucket } from '../session';
import { EnvironmentManager } from './environments/manager';

/** The bucket's shared environments: variables and settings every test's environment may inherit. */
export function SharedEnvironmentsPage(props: { bucket: string }) {
  const bucket = useBucket(props.bucket);
  const path = `/buckets/${props.bucket}/environments`;
  const shared = useResource((signal) => api.get<Environment[]>(path, undefined, signal), [path]);
  return (
    <div>
      <PageHeader
        title="Shared environments"
        subtitle={`Environments of ${bucket?.name ?? props.bucket} that tests' environments can inherit from.`}
      />
      {shared.error !== undefined && !shared.data && (
        <ErrorBanner error={shared.error} onRetry={shared.reload} />
      )}
      {!shared.data && !shared.error && <Loading label="Loading shared environments…" />}
      {shared.data && (
        <EnvironmentManager
          noun="shared environments"
          environments={shared.data}
          collectionPath={path}
          parents={shared.data}
          teamId={bucket?.team.id}
          onChanged={shared.reload}
        />
      )}
    </div>
  );
}
