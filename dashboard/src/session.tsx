import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { api } from './api/client';
import type { Account, Bucket } from './api/resources';
import { useResource } from './components/use-resource';
import { ErrorBanner, Loading } from './components/ui';

export interface SessionValue {
  account: Account;
  buckets: Bucket[];
  /** Loads the buckets again (after one is created, renamed or deleted). */
  reloadBuckets: () => Promise<void>;
  /** Loads the account again (after its name changed). */
  reloadAccount: () => Promise<void>;
}

const SessionContext = createContext<SessionValue | null>(null);

/** The signed-in account and its buckets, loaded once for every view. */
export function SessionProvider(props: { children: ComponentChildren }) {
  const account = useResource((signal) => api.get<Account>('/account', undefined, signal), []);
  const buckets = useResource((signal) => api.get<Bucket[]>('/buckets', undefined, signal), []);
  if (account.error || buckets.error) {
    return (
      <main id="main" class="page">
        <ErrorBanner
          error={account.error ?? buckets.error}
          onRetry={() => void Promise.all([account.reload(), buckets.reload()])}
        />
      </main>
    );
  }
  if (!account.data || !buckets.data) return <Loading label="Loading your account…" />;
  return (
    <SessionContext.Provider
      value={{
        account: account.data,
        buckets: buckets.data,
        reloadBuckets: buckets.reload,
        reloadAccount: account.reload,
      }}
    >
      {props.children}
    </SessionContext.Provider>
  );
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

/** The bucket a route names; undefined when it is not one of the account's. */
export function useBucket(key: string): Bucket | undefined {
  return useSession().buckets.find((bucket) => bucket.key === key);
}

/** Paths of the dashboard's views, in one place so links and routes agree. */
export const paths = {
  tests: (bucket: string) => `/b/${bucket}/tests`,
  newTest: (bucket: string) => `/b/${bucket}/tests/new`,
  test: (bucket: string, test: string, tab?: string) => `/b/${bucket}/tests/${test}${tab ? `/${tab}` : ''}`,
  result: (bucket: string, test: string, run: string) => `/b/${bucket}/tests/${test}/results/${run}`,
  sharedEnvironments: (bucket: string) => `/b/${bucket}/environments`,
  traffic: (bucket: string, stream = 'messages') => `/b/${bucket}/traffic/${stream}`,
  message: (bucket: string, uuid: string) => `/b/${bucket}/messages/${uuid}`,
  bucketSettings: (bucket: string) => `/b/${bucket}/settings`,
  account: (section = '') => `/account${section ? `/${section}` : ''}`,
};
