import { Redirect, Route, Router, Switch } from 'wouter-preact';
import { lazyView } from './components/lazy';
import { Empty } from './components/ui';
import { Layout } from './layout';
import { TestsListPage } from './pages/tests-list';
import { TestShell } from './pages/test/shell';
import { paths, SessionProvider, useSession } from './session';

const NewTestPage = lazyView<{ bucket: string }>(() => import('./pages/test/new-test'), 'NewTestPage');
const StepsTab = lazyView<object>(() => import('./pages/test/steps'), 'StepsTab');
const EnvironmentsTab = lazyView<object>(() => import('./pages/test/environments'), 'EnvironmentsTab');
const SchedulesTab = lazyView<object>(() => import('./pages/test/schedules'), 'SchedulesTab');
const ResultsTab = lazyView<object>(() => import('./pages/test/results'), 'ResultsTab');
const ResultPage = lazyView<{ runId: string }>(() => import('./pages/test/result'), 'ResultPage');
const MetricsTab = lazyView<object>(() => import('./pages/test/metrics'), 'MetricsTab');
const RevisionsTab = lazyView<object>(() => import('./pages/test/revisions'), 'RevisionsTab');
const SharedEnvironmentsPage = lazyView<{ bucket: string }>(
  () => import('./pages/shared-environments'),
  'SharedEnvironmentsPage',
);
const TrafficPage = lazyView<{ bucket: string; stream: string }>(
  () => import('./pages/traffic/stream'),
  'TrafficPage',
);
const MessagePage = lazyView<{ bucket: string; uuid: string }>(
  () => import('./pages/traffic/message'),
  'MessagePage',
);
const BucketSettingsPage = lazyView<{ bucket: string }>(
  () => import('./pages/bucket-settings'),
  'BucketSettingsPage',
);
const AccountPage = lazyView<{ section: string }>(() => import('./pages/account/account'), 'AccountPage');

function Home() {
  const { buckets } = useSession();
  const bucket = buckets.find((b) => b.default) ?? buckets[0];
  if (!bucket) return <Empty>This account has no bucket yet.</Empty>;
  return <Redirect to={paths.tests(bucket.key)} replace />;
}

function TestRoutes(props: { bucket: string; test: string; rest: string }) {
  const [tab = '', run] = props.rest.split('/');
  const view = (() => {
    switch (tab) {
      case '':
        return <StepsTab />;
      case 'environments':
        return <EnvironmentsTab />;
      case 'schedules':
        return <SchedulesTab />;
      case 'results':
        return run ? <ResultPage runId={run} /> : <ResultsTab />;
      case 'metrics':
        return <MetricsTab />;
      case 'revisions':
        return <RevisionsTab />;
      default:
        return <Empty>There is no such page.</Empty>;
    }
  })();
  return (
    <TestShell bucket={props.bucket} testId={props.test} tab={tab}>
      {view}
    </TestShell>
  );
}

export function App() {
  return (
    <Router base="/app">
      <SessionProvider>
        <Layout>
          <Switch>
            <Route path="/">
              <Home />
            </Route>
            <Route path="/b/:bucket/tests">{(params) => <TestsListPage bucket={params.bucket} />}</Route>
            <Route path="/b/:bucket/tests/new">{(params) => <NewTestPage bucket={params.bucket} />}</Route>
            <Route path="/b/:bucket/tests/:test/*?">
              {(params) => <TestRoutes bucket={params.bucket} test={params.test} rest={params['*'] ?? ''} />}
            </Route>
            <Route path="/b/:bucket/environments">
              {(params) => <SharedEnvironmentsPage bucket={params.bucket} />}
            </Route>
            <Route path="/b/:bucket/traffic/:stream?">
              {(params) => <TrafficPage bucket={params.bucket} stream={params.stream ?? 'messages'} />}
            </Route>
            <Route path="/b/:bucket/messages/:uuid">
              {(params) => <MessagePage bucket={params.bucket} uuid={params.uuid} />}
            </Route>
            <Route path="/b/:bucket/settings">
              {(params) => <BucketSettingsPage bucket={params.bucket} />}
            </Route>
            <Route path="/account/:section?">
              {(params) => <AccountPage section={params.section ?? ''} />}
            </Route>
            <Route>
              <Empty>There is no such page.</Empty>
            </Route>
          </Switch>
        </Layout>
      </SessionProvider>
    </Router>
  );
}
