import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard } from './harness.js';
import { rebuildMetricRollups } from '../../../src/store/repositories/metric-rollups.js';

interface TestDetail {
  id: string;
  default_environment_id: string;
  schedules: { id: string; next_run_at: number | null }[];
}
interface Har {
  log: { creator: unknown; entries: unknown[] };
}

const PACKAGE_VERSION = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string }).version;

/** Until `probe` answers something other than undefined (state to wait for, not time). */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * What a new user met in the first hour: share links after a reload, the failing step of a result,
 * the next run of a schedule, metrics on a quiet day, HAR creators, integration notification
 * choices and the cURL command.
 */
describe('dashboard: first-hour fixes', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let upstream: http.Server;
  let upstreamUrl = '';
  let page: Page;
  const tests = () => `/buckets/${dash.bucket}/tests`;
  const app = (path: string) => `${dash.base}/app/b/${dash.bucket}/${path}`;

  const newMessage = async (body?: string) => {
    const created = await dash.api<{ uuid: string }[]>('POST', `/buckets/${dash.bucket}/messages`, {
      request: {
        method: body ? 'POST' : 'GET',
        url: `${upstreamUrl}/first-hour`,
        ...(body && { headers: { 'content-type': 'application/json' }, body }),
      },
      response: { status: 200, body: '{"ok":true}' },
    });
    return created.data[0]!.uuid;
  };

  /** A test whose steps call the upstream expecting these statuses (it always answers 200). */
  const newTest = async (name: string, expected: number[]) => {
    const created = await dash.api<TestDetail>('POST', tests(), {
      name,
      steps: expected.map((status, index) => ({
        step_type: 'request',
        method: 'GET',
        url: `${upstreamUrl}/step/${index + 1}`,
        assertions: [{ source: 'response_status', comparison: 'equal_number', value: status }],
      })),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.data;
  };

  const finishedRun = async (testId: string) => {
    const started = await dash.api<{ runs: { test_run_id: string }[] }>(
      'POST',
      `${tests()}/${testId}/runs`,
      {},
    );
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const runId = started.data.runs[0]!.test_run_id;
    await eventually(`run ${runId}`, async () => {
      const run = await dash.api<{ result: string }>('GET', `${tests()}/${testId}/results/${runId}`);
      return ['queued', 'working'].includes(run.data.result) ? undefined : run.data.result;
    });
    return runId;
  };

  before(async () => {
    upstream = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    dash = await startDashboard();
    ({ page } = await dash.signedIn());
    page.on('dialog', (dialog) => void dialog.accept());
  });

  after(async () => {
    await dash?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  test('a shared message shows the same public link again after a reload', async () => {
    const uuid = await newMessage();
    await page.goto(app(`messages/${uuid}`));
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    const link = page.getByTestId('public-url');
    await link.waitFor();
    const shared = (await link.getAttribute('href'))!;
    assert.match(shared, new RegExp(`^${dash.base}/public/messages/`));

    await page.reload();
    await page.getByRole('button', { name: 'Unshare' }).waitFor();
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), shared, 'the link shown is the one that works');
    assert.equal((await fetch(shared, { headers: { accept: 'application/json' } })).status, 200);
    await dash.checkA11y(page, 'shared message after a reload');
  });

  test('the first failing step of a result starts expanded, passing ones collapsed', async () => {
    const t = await newTest('Second step fails', [200, 201, 202]);
    const runId = await finishedRun(t.id);
    await page.goto(app(`tests/${t.id}/results/${runId}`));
    const summaries = page.locator('.step-result .step-summary');
    await summaries.nth(2).waitFor();
    assert.deepEqual(
      await summaries.evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-expanded'))),
      ['false', 'true', 'false'],
    );
    const failing = page.locator('.step-result').nth(1);
    await failing.getByRole('heading', { name: 'Response received' }).waitFor();
    assert.equal((await failing.locator('td[data-label="expected"]').textContent())?.trim(), '201');
    assert.equal(await page.locator('.step-result').nth(0).locator('.step-panel').isHidden(), true);
    // Closing it is the user's choice and stays so.
    await summaries.nth(1).click();
    assert.equal(await summaries.nth(1).getAttribute('aria-expanded'), 'false');
  });

  test("the schedule list shows each schedule's next run", async () => {
    const t = await newTest('Scheduled daily', [200]);
    const created = await dash.api<{ id: string }>('POST', `${tests()}/${t.id}/schedules`, {
      interval: '1d',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // The scheduler plans a new schedule's first start on its next tick.
    const nextRunAt = await eventually('the planned start', async () => {
      const detail = await dash.api<TestDetail>('GET', `${tests()}/${t.id}`);
      return detail.data.schedules[0]!.next_run_at ?? undefined;
    });
    await page.goto(app(`tests/${t.id}/schedules`));
    const time = page.getByTestId('next-run').locator('time');
    await time.waitFor();
    assert.equal(await time.getAttribute('datetime'), new Date(nextRunAt * 1000).toISOString());
    assert.match((await page.getByTestId('next-run').textContent())!, /^Next run /);
    await dash.checkA11y(page, 'schedules with next run');
  });

  test('metrics open on the shortest timeframe with runs; an explicit choice stays', async () => {
    const t = await newTest('Ran three days ago', [200]);
    const runId = await finishedRun(t.id);
    const threeDaysAgo = Date.now() / 1000 - 3 * 86_400;
    await dash.server.store.db
      .updateTable('test_runs')
      .set({ started_at: threeDaysAgo - 1, finished_at: threeDaysAgo })
      .where('id', '=', runId)
      .execute();
    // The run counted in the metric rollups as it finished, now; moved, it is counted again where it is.
    await dash.server.store.db.deleteFrom('test_metric_rollups').where('test_id', '=', t.id).execute();
    await rebuildMetricRollups(dash.server.store.db, t.id);
    await page.goto(app(`tests/${t.id}/metrics`));
    const timeframe = page.getByRole('combobox', { name: 'Timeframe', exact: true });
    await page.locator('.stat-cards').waitFor();
    assert.equal(await timeframe.inputValue(), 'week');
    const totalRuns = page.locator('.stat-cards div', { hasText: 'Total runs' }).locator('dd');
    assert.match((await totalRuns.textContent())!, /^1/);

    await timeframe.selectOption('day');
    await page
      .locator('.stat-cards div', { hasText: 'Total runs' })
      .locator('dd', { hasText: /^0/ })
      .waitFor();
    assert.equal(await timeframe.inputValue(), 'day', 'the choice is kept although the day is empty');
  });

  test('HAR files from the dashboard and from the API name the same single creator', async () => {
    await newMessage('{"n":1}');
    await page.goto(app('traffic/messages'));
    const row = page.locator('table.stream-table tbody tr', { hasText: '/first-hour' }).first();
    await row.waitFor();
    await row.getByRole('checkbox').check();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /Export selection as HAR/ }).click(),
    ]);
    const fromDashboard = JSON.parse(fs.readFileSync((await download.path())!, 'utf8')) as Har;
    const response = await fetch(`${dash.base}/buckets/${dash.bucket}/messages.har`, {
      headers: { authorization: `Bearer ${dash.token}` },
    });
    const fromApi = (await response.json()) as Har;
    const expected = { name: 'Vigil', version: PACKAGE_VERSION };
    assert.deepEqual(fromDashboard.log.creator, expected);
    assert.deepEqual(fromApi.log.creator, expected);
  });

  test('a webhook integration is limited to failures and recoveries, and changed, in the dashboard', async () => {
    await page.goto(`${dash.base}/app/account/integrations`);
    const form = page.getByTestId('new-integration');
    await page
      .getByText(/^Add an integration to /)
      .first()
      .click();
    await form.getByLabel('Type').selectOption('webhook');
    await form.getByLabel('Description').fill('Team hook');
    await form.getByLabel('URL', { exact: true }).fill(`${upstreamUrl}/hook`);
    assert.equal(await form.getByLabel('Notify on').inputValue(), 'own', 'every finished run unless chosen');
    await form.getByLabel('Notify on').selectOption('switch');
    await form.getByRole('button', { name: 'Add integration' }).click();
    const table = page.getByTestId('integrations-table');
    const row = table.locator('tr', { hasText: 'Team hook' });
    await row.getByTestId('notifies').filter({ hasText: 'a switch between pass and fail' }).waitFor();

    const teamId = (await dash.api<{ teams: { id: string }[] }>('GET', '/account')).data.teams[0]!.id;
    const listed = async () =>
      (
        await dash.api<{ description: string; notify_on: string | null; notify_threshold: number | null }[]>(
          'GET',
          `/teams/${teamId}/integrations`,
        )
      ).data.find((i) => i.description === 'Team hook')!;
    assert.equal((await listed()).notify_on, 'switch');

    // A bad threshold is refused by the server, naming the field beside it.
    await row.getByRole('button', { name: 'Change when Team hook is notified' }).click();
    await row.getByLabel('Notify on').selectOption('threshold');
    await row.getByLabel('Consecutive failures').fill('0');
    await row.getByRole('button', { name: 'Save' }).click();
    await row
      .locator('.field.invalid')
      .filter({ has: page.getByLabel('Consecutive failures') })
      .waitFor();
    await row.getByLabel('Consecutive failures').fill('3');
    await row.getByRole('button', { name: 'Save' }).click();
    await row.getByTestId('notifies').filter({ hasText: 'after 3 consecutive failures' }).waitFor();
    const saved = await listed();
    assert.deepEqual([saved.notify_on, saved.notify_threshold], ['threshold', 3]);
    await dash.checkA11y(page, 'integrations with notification choices');
  });

  test('Copy as cURL gives a command without an Expect header', async () => {
    const uuid = await newMessage('{"name":"Dana"}');
    await page.goto(app(`messages/${uuid}`));
    await page.getByRole('button', { name: 'Copy as cURL' }).click();
    const curl = (await page.getByTestId('curl').getAttribute('data-curl'))!;
    assert.match(curl, /^curl /);
    assert.match(curl, /--data-binary '\{"name":"Dana"\}'/);
    assert.doesNotMatch(curl, /Expect/i);
  });
});
