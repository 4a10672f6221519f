import { useState } from 'preact/hooks';
import { SCHEDULE_INTERVALS } from '../../../../src/domain/vocabulary';
import { api } from '../../api/client';
import type { Interval, Schedule } from '../../api/resources';
import { dateTime } from '../../components/format';
import { Empty, ErrorBanner, Notice, SelectField, TextField } from '../../components/ui';
import { testPath, useTest } from './context';
import './tabs.css';

const INTERVALS = Object.keys(SCHEDULE_INTERVALS) as Interval[];

function intervalLabel(interval: string): string {
  const seconds = SCHEDULE_INTERVALS[interval as Interval];
  if (!seconds) return interval;
  if (seconds < 3600) return `every ${seconds / 60} minute${seconds === 60 ? '' : 's'}`;
  if (seconds < 86400) return `every ${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  return 'every day';
}

interface Draft {
  interval: Interval;
  environment_id: string;
  note: string;
}

function ScheduleForm(props: {
  initial: Draft;
  submitLabel: string;
  onSubmit: (draft: Draft) => Promise<void>;
  onCancel?: () => void;
  title: string;
}) {
  const { test } = useTest();
  const [draft, setDraft] = useState(props.initial);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="card"
      aria-label={props.title}
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          await props.onSubmit(draft);
        } catch (failure) {
          setError(failure);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h3>{props.title}</h3>
      <ErrorBanner
        error={
          error &&
          !['/interval', '/environment_id', '/note'].some((f) => (error as { field?: string }).field === f)
            ? error
            : undefined
        }
      />
      <div class="row">
        <SelectField
          label="Interval"
          value={draft.interval}
          options={INTERVALS.map((value) => ({ value, label: intervalLabel(value) }))}
          onValue={(interval) => setDraft({ ...draft, interval })}
          error={error}
          field="/interval"
        />
        <SelectField
          label="Environment"
          value={draft.environment_id}
          options={test.environments.map((env) => ({
            value: env.id,
            label: env.id === test.default_environment_id ? `${env.name} (default)` : env.name,
          }))}
          onValue={(environment_id) => setDraft({ ...draft, environment_id })}
          error={error}
          field="/environment_id"
        />
        <TextField
          label="Note"
          value={draft.note}
          maxLength={2000}
          onValue={(note) => setDraft({ ...draft, note })}
          error={error}
          field="/note"
        />
      </div>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : props.submitLabel}
        </button>
        {props.onCancel && (
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/** The test's schedules: how often it runs on its own, in which environment. */
export function SchedulesTab() {
  const { bucket, test, reload } = useTest();
  const base = `${testPath(bucket, test.id)}/schedules`;
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const envName = (id: string) => test.environments.find((env) => env.id === id)?.name ?? 'an environment';

  const done = async (message: string) => {
    setEditing(null);
    setNotice(message);
    await reload();
  };

  const remove = async (schedule: Schedule) => {
    if (
      !confirm(
        `Delete the schedule ${intervalLabel(schedule.interval)} in ${envName(schedule.environment_id)}?`,
      )
    )
      return;
    setError(undefined);
    try {
      await api.delete(`${base}/${schedule.id}`);
      await done('The schedule was deleted.');
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <div>
      <h2>Schedules</h2>
      <ErrorBanner error={error} />
      {notice && <Notice kind="success">{notice}</Notice>}
      {test.schedules.length === 0 ? (
        <Empty>This test runs only when started. Add a schedule to monitor it.</Empty>
      ) : (
        <ul class="plain-list" aria-label="Schedules">
          {test.schedules.map((schedule) =>
            editing === schedule.id ? (
              <li key={schedule.id}>
                <ScheduleForm
                  title="Edit schedule"
                  submitLabel="Save schedule"
                  initial={{
                    // ScheduleOut serves the interval as a string; the server only stores the names it accepts.
                    interval: schedule.interval as Interval,
                    environment_id: schedule.environment_id,
                    note: schedule.note,
                  }}
                  onCancel={() => setEditing(null)}
                  onSubmit={async (draft) => {
                    await api.put(`${base}/${schedule.id}`, draft);
                    await done('The schedule was saved.');
                  }}
                />
              </li>
            ) : (
              <li key={schedule.id} class="card schedule-item">
                <div>
                  <strong>{intervalLabel(schedule.interval)}</strong> in {envName(schedule.environment_id)}
                  {schedule.note && <div class="muted">{schedule.note}</div>}
                  <div data-testid="next-run">
                    Next run{' '}
                    {schedule.next_run_at === null ? (
                      <span class="muted">not planned yet: the scheduler plans it shortly</span>
                    ) : (
                      <time dateTime={new Date(schedule.next_run_at * 1000).toISOString()}>
                        {dateTime(schedule.next_run_at)}
                      </time>
                    )}
                  </div>
                  <div class="muted">Created {dateTime(schedule.created_at)}</div>
                </div>
                <div class="actions">
                  <button type="button" class="secondary small" onClick={() => setEditing(schedule.id)}>
                    Edit<span class="visually-hidden"> schedule {intervalLabel(schedule.interval)}</span>
                  </button>
                  <button type="button" class="danger small" onClick={() => void remove(schedule)}>
                    Delete<span class="visually-hidden"> schedule {intervalLabel(schedule.interval)}</span>
                  </button>
                </div>
              </li>
            ),
          )}
        </ul>
      )}
      {editing === 'new' ? (
        <ScheduleForm
          title="New schedule"
          submitLabel="Add schedule"
          initial={{ interval: '1h', environment_id: test.default_environment_id, note: '' }}
          onCancel={() => setEditing(null)}
          onSubmit={async (draft) => {
            await api.post(base, draft);
            await done('The schedule was added.');
          }}
        />
      ) : (
        <button type="button" onClick={() => setEditing('new')}>
          New schedule
        </button>
      )}
    </div>
  );
}
