import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import type { Test } from '../../api/resources';
import { lazyView } from '../../components/lazy';
import { paths } from '../../session';
import { TestContext } from './context';

const StepsTab = lazyView<object>(() => import('./steps'), 'StepsTab');

/** The editor of a test not stored yet: blank until saved, and nothing is stored before that. */
function blankTest(bucket: string): Test {
  return {
    id: '',
    bucket_key: bucket,
    name: '',
    description: null,
    steps: [],
    environments: [],
    schedules: [],
    last_run: null,
  } as unknown as Test;
}

/** "New test": the editor of an unsaved test; the first save creates it and opens its own page. */
export function NewTestPage(props: { bucket: string }) {
  const { bucket } = props;
  const [test, setTest] = useState<Test>(() => blankTest(bucket));
  const [created, setCreated] = useState<Test | undefined>(undefined);
  const [, navigate] = useLocation();
  // After the render that drops the unsaved-changes guard, so moving to the test's page asks nothing.
  useEffect(() => {
    if (created) navigate(paths.test(bucket, created.id), { replace: true });
  }, [created]);
  return (
    <TestContext.Provider
      value={{ bucket, test, setTest, reload: async () => undefined, create: setCreated }}
    >
      <div class="test-header">
        <div>
          <p class="breadcrumb">
            <a href={`/app${paths.tests(bucket)}`}>Tests</a> /
          </p>
          <h1>New test</h1>
          <p class="muted">Not saved yet: the test is created when you save it.</p>
        </div>
      </div>
      <section class="tab-panel">
        <StepsTab />
      </section>
    </TestContext.Provider>
  );
}
