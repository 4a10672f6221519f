import { useMemo, useState } from 'preact/hooks';
import { api, request } from '../../api/client';
import type { Revision, Revisions, Test } from '../../api/resources';
import { dateTime, timeAgo } from '../../components/format';
import { Empty, ErrorBanner, Loading, Notice } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { testPath, useTest } from './context';
import { canonicalJson, lineDiff, withContext } from './line-diff';
import './tabs.css';

type Against = 'previous' | 'current';

function nameOf(revision: Revision): string {
  const name = (revision.snapshot as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : '';
}

function itemLabel(revision: Revision): string {
  return revision.item_type === 'environment' ? `Environment ${nameOf(revision)}` : 'Test';
}

/** The test as its revisions snapshot it (name, description, default environment, steps, schedules). */
function testSnapshot(test: Test): unknown {
  return {
    id: test.id,
    name: test.name,
    description: test.description,
    default_environment_id: test.default_environment_id,
    steps: test.steps,
    schedules: test.schedules.map(({ id, environment_id, interval, note }) => ({
      id,
      environment_id,
      interval,
      note,
    })),
  };
}

function Diff(props: { before: unknown; after: unknown; beforeLabel: string; afterLabel: string }) {
  const chunks = useMemo(
    () => withContext(lineDiff(canonicalJson(props.before), canonicalJson(props.after))),
    [props.before, props.after],
  );
  const changed = chunks.some((chunk) => chunk.kind === 'lines');
  if (!changed) return <p class="muted">No differences.</p>;
  return (
    <div
      class="diff"
      role="region"
      tabIndex={0}
      aria-label={`Changes from ${props.beforeLabel} to ${props.afterLabel}`}
    >
      {chunks.map((chunk, index) =>
        chunk.kind === 'gap' ? (
          <span key={index} class="diff-gap">
            … {chunk.count} unchanged line{chunk.count === 1 ? '' : 's'}
          </span>
        ) : (
          chunk.lines.map((line, k) => (
            <span key={`${index}-${k}`} class={`diff-line ${line.kind}`}>
              <span class="sign" aria-hidden="true">
                {line.kind === 'added' ? '+' : line.kind === 'removed' ? '−' : ' '}
              </span>
              {line.kind !== 'same' && <span class="visually-hidden">{line.kind}: </span>}
              {line.text}
            </span>
          ))
        ),
      )}
    </div>
  );
}

/** The edit history of the test and its environments, a diff of each change, and restore. */
export function RevisionsTab() {
  const { bucket, test, setTest } = useTest();
  const path = `${testPath(bucket, test.id)}/revisions`;
  const revisions = useResource((signal) => api.get<Revisions>(path, undefined, signal), [path]);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [against, setAgainst] = useState<Against>('previous');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  const all = useMemo(() => {
    const data = revisions.data;
    if (!data) return [];
    return [...data.test_revisions, ...Object.values(data.env_revisions).flat()].sort(
      (a, b) => b.timestamp - a.timestamp,
    );
  }, [revisions.data]);

  if (revisions.error && !revisions.data)
    return <ErrorBanner error={revisions.error} onRetry={revisions.reload} />;
  if (!revisions.data) return <Loading label="Loading revisions…" />;

  const revision = all.find((r) => r.uuid === selected) ?? all[0];
  const index = revision ? all.indexOf(revision) : -1;
  const previous = revision ? all.slice(index + 1).find((r) => r.item_id === revision.item_id) : undefined;
  const current =
    revision?.item_type === 'environment'
      ? (test.environments.find((env) => env.id === revision.item_id) ?? null)
      : testSnapshot(test);
  const shownSnapshot = revision?.action === 'delete' ? null : revision?.snapshot;

  const restore = async () => {
    if (!revision) return;
    if (
      !confirm(`Restore ${itemLabel(revision).toLowerCase()} as it was on ${dateTime(revision.timestamp)}?`)
    )
      return;
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      const answer = await request<Test>('POST', `${path}/${revision.uuid}/restore`);
      setTest(answer.data);
      const skipped = (answer.meta.skipped as { message: string }[] | undefined) ?? [];
      setNotice(
        `Restored ${itemLabel(revision).toLowerCase()} as of ${dateTime(revision.timestamp)}.` +
          (skipped.length ? ` Left out: ${skipped.map((s) => s.message).join('; ')}` : ''),
      );
      setSelected(undefined);
      await revisions.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div>
      <h2>Revisions</h2>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorBanner error={error} />
      {all.length === 0 ? (
        <Empty>No revisions yet.</Empty>
      ) : (
        <div class="revisions-layout">
          <ul class="revision-list" aria-label="Revisions, newest first">
            {all.map((r) => (
              <li key={r.uuid}>
                <button type="button" aria-pressed={r === revision} onClick={() => setSelected(r.uuid)}>
                  <strong>
                    {itemLabel(r)}: {actionLabel(r)}
                  </strong>
                  <span class="muted block">
                    <time dateTime={new Date(r.timestamp * 1000).toISOString()} title={dateTime(r.timestamp)}>
                      {timeAgo(r.timestamp)}
                    </time>{' '}
                    by {r.author_name || 'someone'} via {r.source}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          {revision && (
            <section aria-labelledby="revision-title">
              <h3 id="revision-title">
                {itemLabel(revision)}: {actionLabel(revision)}, {dateTime(revision.timestamp)}
              </h3>
              <p class="muted">
                By {revision.author_name || 'someone'}
                {revision.author_email && ` (${revision.author_email})`} via {revision.source}.
              </p>
              <fieldset class="compare">
                <legend>Compare with</legend>
                <label>
                  <input
                    type="radio"
                    name="against"
                    checked={against === 'previous'}
                    onChange={() => setAgainst('previous')}
                  />{' '}
                  the revision before
                </label>{' '}
                <label>
                  <input
                    type="radio"
                    name="against"
                    checked={against === 'current'}
                    onChange={() => setAgainst('current')}
                  />{' '}
                  the current state
                </label>
              </fieldset>
              {against === 'previous' ? (
                <>
                  <p class="muted">
                    {previous
                      ? `Changes since the revision of ${dateTime(previous.timestamp)}.`
                      : 'The first revision: everything it holds is new.'}
                  </p>
                  <Diff
                    before={previous && previous.action !== 'delete' ? previous.snapshot : null}
                    after={shownSnapshot}
                    beforeLabel="the revision before"
                    afterLabel="this revision"
                  />
                </>
              ) : (
                <>
                  <p class="muted">What restoring this revision would change (− now, + after restoring).</p>
                  <Diff
                    before={current}
                    after={shownSnapshot}
                    beforeLabel="the current state"
                    afterLabel="this revision"
                  />
                </>
              )}
              {revision.action !== 'delete' || revision.item_type === 'environment' ? (
                <button type="button" disabled={busy} onClick={() => void restore()}>
                  {busy ? 'Restoring…' : 'Restore this revision'}
                </button>
              ) : (
                <p class="muted">This revision records a deletion; it cannot be restored.</p>
              )}
            </section>
          )}
        </div>
      )}
    </div>
  );
}

/** The action of a revision; a test created again by undoing its deletion says it was restored. */
function actionLabel(revision: Revision): string {
  const snapshot = revision.snapshot as { restored_from?: unknown } | null;
  return revision.action === 'create' && typeof snapshot?.restored_from === 'string'
    ? 'restored after deletion'
    : revision.action;
}
