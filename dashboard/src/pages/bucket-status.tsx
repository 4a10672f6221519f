import { useState } from 'preact/hooks';
import { api } from '../api/client';
import { dateTime } from '../components/format';
import { Checkbox, ErrorBanner, Loading, Notice, SelectField, TextField } from '../components/ui';
import { type Resource, useResource } from '../components/use-resource';
import { FormError, useRowActions, useSubmit } from './account/shared';

/** A test as the bucket's list names it. */
interface TestName {
  id: string;
  name: string;
}

interface StatusPageGroup {
  name: string;
  tests: { test_id: string; name: string }[];
}

interface StatusPage {
  id: string;
  slug: string;
  title: string;
  environment_id: string | null;
  groups: StatusPageGroup[];
  public_url: string;
}

const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
type Weekday = (typeof WEEKDAYS)[number];
const DAY_NAMES: Record<Weekday, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

const inWeekOrder = (days: readonly Weekday[]) =>
  [...days].sort((a, b) => WEEKDAYS.indexOf(a) - WEEKDAYS.indexOf(b));

interface MaintenanceWindow {
  id: string;
  test_id: string | null;
  mode: 'pause' | 'mute';
  note: string;
  starts_at: number | null;
  ends_at: number | null;
  weekly: { days: Weekday[]; start_time: string; duration_minutes: number; time_zone: string } | null;
  active: boolean;
}

const bucketPath = (bucketKey: string) => `/buckets/${encodeURIComponent(bucketKey)}`;

type TestNames = Resource<TestName[]>;

function useTestNames(bucketKey: string): TestNames {
  return useResource(
    (signal) => api.get<TestName[]>(`${bucketPath(bucketKey)}/tests`, { count: 1000 }, signal),
    [bucketKey],
  );
}

/** `my-status` from `My status!`: what a new page's address starts as. */
function slugOf(title: string): string {
  return title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
}

// ---------------------------------------------------------------------------------------------
// Status pages

/**
 * The bucket's public status pages: each lists tests under public names, in groups, at
 * `PUBLIC_URL/status/<slug>` with no sign-in. Nothing else of a test is shown there.
 */
/** The bucket's status pages and maintenance windows, which both pick from its tests (loaded once). */
export function StatusAndMaintenance(props: { bucketKey: string }) {
  const tests = useTestNames(props.bucketKey);
  return (
    <>
      <StatusPages bucketKey={props.bucketKey} tests={tests} />
      <MaintenanceWindows bucketKey={props.bucketKey} tests={tests} />
    </>
  );
}

function StatusPages(props: { bucketKey: string; tests: TestNames }) {
  const pages = useResource(
    (signal) => api.get<StatusPage[]>(`${bucketPath(props.bucketKey)}/status-pages`, undefined, signal),
    [props.bucketKey],
  );
  const { tests } = props;
  const [editing, setEditing] = useState<StatusPage | 'new' | null>(null);
  const rows = useRowActions();

  const remove = (page: StatusPage) =>
    rows.run(`Delete the status page “${page.title}”? Its address stops answering.`, async () => {
      await api.delete(`${bucketPath(props.bucketKey)}/status-pages/${page.id}`);
      await pages.reload();
      return `The status page “${page.title}” was deleted.`;
    });

  return (
    <section class="card" aria-labelledby="bucket-status-pages">
      <h2 id="bucket-status-pages">Status pages</h2>
      <p class="muted">
        A public page, with no sign-in, showing chosen tests under the names you give them: their state, 90
        days of daily uptime, open incidents and maintenance. URLs, hosts, bodies, variables and assertions
        are never shown.
      </p>
      <ErrorBanner error={pages.error ?? tests.error} onRetry={() => void (pages.reload(), tests.reload())} />
      <ErrorBanner error={rows.error} />
      {rows.notice && <Notice kind="success">{rows.notice}</Notice>}
      {!pages.data && !pages.error && <Loading label="Loading status pages…" />}
      {pages.data && pages.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Status pages of this bucket</caption>
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Public address</th>
                <th scope="col">Tests</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {pages.data.map((page) => (
                <tr key={page.id}>
                  <td>{page.title}</td>
                  <td>
                    <a href={page.public_url} target="_blank" rel="noopener noreferrer">
                      {page.public_url}
                    </a>
                  </td>
                  <td>{page.groups.reduce((n, g) => n + g.tests.length, 0)}</td>
                  <td class="actions">
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Edit status page “${page.title}”`}
                      onClick={() => setEditing(page)}
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      class="danger small"
                      aria-label={`Delete status page “${page.title}”`}
                      onClick={() => void remove(page)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pages.data && pages.data.length === 0 && !editing && <p>This bucket has no status page yet.</p>}
      {editing ? (
        tests.data ? (
          <StatusPageForm
            key={editing === 'new' ? 'new' : editing.id}
            bucketKey={props.bucketKey}
            page={editing === 'new' ? null : editing}
            tests={tests.data}
            onDone={async (message) => {
              setEditing(null);
              rows.setNotice(message);
              await pages.reload();
            }}
            onCancel={() => setEditing(null)}
          />
        ) : (
          <Loading label="Loading the bucket's tests…" />
        )
      ) : (
        <div class="actions">
          <button type="button" onClick={() => setEditing('new')}>
            New status page
          </button>
        </div>
      )}
    </section>
  );
}

/** One group in the editor: its name, and for every test of the bucket whether it is shown and as what. */
interface GroupDraft {
  name: string;
  shown: Record<string, string | undefined>;
}

function StatusPageForm(props: {
  bucketKey: string;
  page: StatusPage | null;
  tests: TestName[];
  onDone: (message: string) => Promise<void>;
  onCancel: () => void;
}) {
  const { page, tests } = props;
  const [title, setTitle] = useState(page?.title ?? '');
  const [slug, setSlug] = useState(page?.slug ?? '');
  const [slugTouched, setSlugTouched] = useState(page !== null);
  const [groups, setGroups] = useState<GroupDraft[]>(
    page
      ? page.groups.map((g) => ({
          name: g.name,
          shown: Object.fromEntries(g.tests.map((t) => [t.test_id, t.name])),
        }))
      : [{ name: 'Services', shown: {} }],
  );
  const submit = useSubmit();
  const testName = new Map(tests.map((t) => [t.id, t.name]));

  const setGroup = (index: number, change: (group: GroupDraft) => GroupDraft) =>
    setGroups((all) => all.map((group, i) => (i === index ? change(group) : group)));

  const save = async (event: Event) => {
    event.preventDefault();
    const body = {
      title,
      slug,
      groups: groups.map((group) => ({
        name: group.name,
        tests: Object.entries(group.shown)
          .filter((entry): entry is [string, string] => entry[1] !== undefined)
          .map(([test_id, name]) => ({ test_id, name })),
      })),
    };
    await submit.run(async () => {
      const base = `${bucketPath(props.bucketKey)}/status-pages`;
      const saved = page
        ? await api.put<StatusPage>(`${base}/${page.id}`, body)
        : await api.post<StatusPage>(base, body);
      await props.onDone(`The status page “${saved.title}” was saved; it is at ${saved.public_url}.`);
    });
  };

  return (
    <form onSubmit={save} noValidate class="status-page-form" data-testid="status-page-form">
      <h3>{page ? `Edit “${page.title}”` : 'New status page'}</h3>
      <div class="row">
        <TextField
          label="Title"
          value={title}
          onValue={(value) => {
            setTitle(value);
            if (!slugTouched) setSlug(slugOf(value));
          }}
          error={submit.error}
          field="/title"
          maxLength={200}
        />
        <TextField
          label="Address (slug)"
          value={slug}
          onValue={(value) => {
            setSlug(value);
            setSlugTouched(true);
          }}
          error={submit.error}
          field="/slug"
          hint="Lower-case letters, digits and dashes: the page is at /status/<slug>."
          maxLength={63}
        />
      </div>
      {groups.map((group, index) => (
        <fieldset key={index} class="status-group">
          <legend>Group {index + 1}</legend>
          <TextField
            label={`Name of group ${index + 1}`}
            value={group.name}
            onValue={(name) => setGroup(index, (g) => ({ ...g, name }))}
            error={submit.error}
            field={`/groups/${index}/name`}
            maxLength={100}
          />
          {tests.length === 0 && <p class="muted">This bucket has no tests yet.</p>}
          <ul class="status-group-tests">
            {tests.map((test) => {
              const shown = group.shown[test.id];
              return (
                <li key={test.id}>
                  <Checkbox
                    label={`Show “${test.name}” in group ${index + 1}`}
                    checked={shown !== undefined}
                    onValue={(checked) =>
                      setGroup(index, (g) => ({
                        ...g,
                        shown: { ...g.shown, [test.id]: checked ? test.name : undefined },
                      }))
                    }
                  />
                  {shown !== undefined && (
                    <TextField
                      label={`Public name of “${test.name}”`}
                      value={shown}
                      onValue={(name) =>
                        setGroup(index, (g) => ({ ...g, shown: { ...g.shown, [test.id]: name } }))
                      }
                      maxLength={100}
                    />
                  )}
                </li>
              );
            })}
            {/* Tests the page shows that are no longer in the bucket's list. */}
            {Object.entries(group.shown)
              .filter(([id, name]) => name !== undefined && !testName.has(id))
              .map(([id, name]) => (
                <li key={id} class="muted">
                  {name} (a test this bucket no longer lists)
                </li>
              ))}
          </ul>
          {groups.length > 1 && (
            <button
              type="button"
              class="secondary small"
              onClick={() => setGroups((all) => all.filter((_, i) => i !== index))}
            >
              Remove group {index + 1}
            </button>
          )}
        </fieldset>
      ))}
      <FormError error={submit.error} fields={['/title', '/slug', '/groups/0/name']} />
      <div class="actions">
        <button
          type="button"
          class="secondary"
          onClick={() => setGroups((all) => [...all, { name: '', shown: {} }])}
          disabled={groups.length >= 20}
        >
          Add a group
        </button>
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Saving…' : page ? 'Save status page' : 'Create status page'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------
// Maintenance windows

function describeWindow(item: MaintenanceWindow): string {
  if (item.weekly) {
    const { days, start_time, duration_minutes, time_zone } = item.weekly;
    const hours = duration_minutes % 60 === 0 ? `${duration_minutes / 60} h` : `${duration_minutes} min`;
    return `Every ${inWeekOrder(days)
      .map((d) => DAY_NAMES[d])
      .join(', ')} at ${start_time} (${time_zone}) for ${hours}`;
  }
  return `${dateTime(item.starts_at)} to ${dateTime(item.ends_at)}`;
}

/**
 * The bucket's maintenance windows: while one is under way, schedules start no run (pause) or runs
 * go on without notifications (mute).
 */
function MaintenanceWindows(props: { bucketKey: string; tests: TestNames }) {
  const windows = useResource(
    (signal) =>
      api.get<MaintenanceWindow[]>(`${bucketPath(props.bucketKey)}/maintenance_windows`, undefined, signal),
    [props.bucketKey],
  );
  const { tests } = props;
  const [adding, setAdding] = useState(false);
  const rows = useRowActions();
  const testName = new Map((tests.data ?? []).map((t) => [t.id, t.name]));

  const remove = (item: MaintenanceWindow) =>
    rows.run('Delete this maintenance window?', async () => {
      await api.delete(`${bucketPath(props.bucketKey)}/maintenance_windows/${item.id}`);
      await windows.reload();
      return 'The maintenance window was deleted.';
    });

  return (
    <section class="card" aria-labelledby="bucket-maintenance">
      <h2 id="bucket-maintenance">Maintenance windows</h2>
      <p class="muted">
        During a window, <strong>pause</strong> stops schedules from starting runs; <strong>mute</strong> lets
        them run but sends no notification. Results of runs in a window are marked “in maintenance”.
      </p>
      <ErrorBanner error={windows.error} onRetry={windows.reload} />
      <ErrorBanner error={rows.error} />
      {rows.notice && <Notice kind="success">{rows.notice}</Notice>}
      {!windows.data && !windows.error && <Loading label="Loading maintenance windows…" />}
      {windows.data && windows.data.length === 0 && !adding && <p>No maintenance windows.</p>}
      {windows.data && windows.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Maintenance windows of this bucket</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Mode</th>
                <th scope="col">Applies to</th>
                <th scope="col">Note</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {windows.data.map((item) => (
                <tr key={item.id}>
                  <td>
                    {describeWindow(item)}{' '}
                    {item.active && <span class="badge result-working">under way</span>}
                  </td>
                  <td>{item.mode === 'pause' ? 'Pause' : 'Mute'}</td>
                  <td>
                    {item.test_id === null ? 'Every test' : (testName.get(item.test_id) ?? 'A deleted test')}
                  </td>
                  <td>{item.note}</td>
                  <td class="actions">
                    <button
                      type="button"
                      class="danger small"
                      aria-label={`Delete the window ${describeWindow(item)}`}
                      onClick={() => void remove(item)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {adding ? (
        <MaintenanceForm
          bucketKey={props.bucketKey}
          tests={tests.data ?? []}
          onDone={async () => {
            setAdding(false);
            rows.setNotice('The maintenance window was added.');
            await windows.reload();
          }}
          onCancel={() => setAdding(false)}
        />
      ) : (
        <div class="actions">
          <button type="button" onClick={() => setAdding(true)}>
            Add a maintenance window
          </button>
        </div>
      )}
    </section>
  );
}

/** Unix seconds from a `datetime-local` value, read in the browser's time zone; NaN when empty. */
const fromLocal = (value: string) => (value ? new Date(value).getTime() / 1000 : Number.NaN);

function MaintenanceForm(props: {
  bucketKey: string;
  tests: TestName[];
  onDone: () => Promise<void>;
  onCancel: () => void;
}) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const [kind, setKind] = useState<'once' | 'weekly'>('once');
  const [mode, setMode] = useState<'pause' | 'mute'>('mute');
  const [testId, setTestId] = useState('');
  const [starts, setStarts] = useState('');
  const [ends, setEnds] = useState('');
  const [days, setDays] = useState<Weekday[]>(['sun']);
  const [startTime, setStartTime] = useState('02:00');
  const [duration, setDuration] = useState('60');
  const [timeZone, setTimeZone] = useState(zone);
  const [note, setNote] = useState('');
  const submit = useSubmit();

  const save = async (event: Event) => {
    event.preventDefault();
    const minutes = Number(duration);
    const timing =
      kind === 'once'
        ? // An empty or unreadable time is sent as typed, so the API names the field.
          {
            starts_at: Number.isFinite(fromLocal(starts)) ? fromLocal(starts) : starts || null,
            ends_at: Number.isFinite(fromLocal(ends)) ? fromLocal(ends) : ends || null,
          }
        : {
            weekly: {
              days: inWeekOrder(days),
              start_time: startTime,
              duration_minutes: duration.trim() !== '' && Number.isFinite(minutes) ? minutes : duration,
              time_zone: timeZone,
            },
          };
    await submit.run(async () => {
      await api.post(`${bucketPath(props.bucketKey)}/maintenance_windows`, {
        mode,
        test_id: testId || null,
        note: note || null,
        ...timing,
      });
      await props.onDone();
    });
  };

  const fields = [
    '/starts_at',
    '/ends_at',
    '/mode',
    '/test_id',
    '/note',
    '/weekly/start_time',
    '/weekly/duration_minutes',
    '/weekly/time_zone',
  ];
  return (
    <form onSubmit={save} noValidate class="maintenance-form" data-testid="maintenance-form">
      <h3>New maintenance window</h3>
      <div class="row">
        <SelectField
          label="Mode"
          value={mode}
          options={[
            { value: 'mute', label: 'Mute: runs go on, no notifications' },
            { value: 'pause', label: 'Pause: schedules start no run' },
          ]}
          onValue={setMode}
          error={submit.error}
          field="/mode"
        />
        <SelectField
          label="Applies to"
          value={testId}
          options={[
            { value: '', label: 'Every test of the bucket' },
            ...props.tests.map((t) => ({ value: t.id, label: t.name })),
          ]}
          onValue={setTestId}
          error={submit.error}
          field="/test_id"
        />
        <SelectField
          label="Repeats"
          value={kind}
          options={[
            { value: 'once', label: 'Once' },
            { value: 'weekly', label: 'Every week' },
          ]}
          onValue={setKind}
        />
      </div>
      {kind === 'once' ? (
        <div class="row">
          <TextField
            label="Starts"
            type="datetime-local"
            value={starts}
            onValue={setStarts}
            error={submit.error}
            field="/starts_at"
            hint={`In your time zone (${zone}).`}
          />
          <TextField
            label="Ends"
            type="datetime-local"
            value={ends}
            onValue={setEnds}
            error={submit.error}
            field="/ends_at"
          />
        </div>
      ) : (
        <>
          <fieldset class="weekdays">
            <legend>Days</legend>
            {WEEKDAYS.map((day) => (
              <Checkbox
                key={day}
                label={DAY_NAMES[day]}
                checked={days.includes(day)}
                onValue={(checked) =>
                  setDays((all) => (checked ? [...all, day] : all.filter((d) => d !== day)))
                }
              />
            ))}
          </fieldset>
          <div class="row">
            <TextField
              label="Starts at (local time)"
              type="time"
              value={startTime}
              onValue={setStartTime}
              error={submit.error}
              field="/weekly/start_time"
            />
            <TextField
              label="Lasts (minutes)"
              type="number"
              inputMode="numeric"
              min={1}
              max={10080}
              value={duration}
              onValue={setDuration}
              error={submit.error}
              field="/weekly/duration_minutes"
            />
            <TextField
              label="Time zone"
              value={timeZone}
              onValue={setTimeZone}
              error={submit.error}
              field="/weekly/time_zone"
              hint="An IANA name, such as Europe/Berlin. Daylight-saving changes keep the local start time."
            />
          </div>
        </>
      )}
      <TextField
        label="Note (for your team; never shown publicly)"
        value={note}
        onValue={setNote}
        error={submit.error}
        field="/note"
        maxLength={1000}
      />
      <FormError error={submit.error} fields={fields} />
      <div class="actions">
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Adding…' : 'Add window'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
