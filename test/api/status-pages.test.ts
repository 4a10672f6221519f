import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';
import { startReceiver, statusCodeTest } from '../helpers/receiver.js';

/**
 * Public status pages: editors manage them in their bucket; `/status/<slug>` shows display names,
 * states, uptime from the daily rollups and open incidents, and never a test id, URL, host, body,
 * variable, assertion or environment name.
 */
const receiver = await startReceiver((delivery) => {
  const url = new URL(delivery.path, 'http://receiver');
  return { status: Number(url.searchParams.get('code') ?? 200), body: { secret_body: 'BODY-MARKER' } };
});
after(() => receiver.close());

await describeApi('status pages', (get) => {
  const pages = () => `/buckets/${get().alice.bucketKey}/status-pages`;

  /** A test whose one step GETs the receiver with `?code=`, and a function that runs it once. */
  const monitoredTest = (name: string) =>
    statusCodeTest(get(), {
      name,
      url: '{{base}}/health?code={{code}}&token={{api_token}}',
      environment: {
        name: 'Secret Production Env',
        initial_variables: { base: receiver.base, code: '200', api_token: 'VARIABLE-MARKER' },
      },
    });

  test('create, public HTML and JSON, nothing internal shown, rollups kept as runs finish', async () => {
    const h = get();
    const api = await monitoredTest('Checkout API internal name');
    const web = await monitoredTest('Web internal name');
    const first = await api.run('200');
    assert.equal(first.result, 'pass');
    const failed = await api.run('500');
    assert.equal(failed.result, 'fail');
    assert.equal((await web.run('200')).result, 'pass');

    const rollups = await h.store.db
      .selectFrom('test_daily_rollups')
      .selectAll()
      .where('test_id', '=', api.test.id)
      .execute();
    assert.equal(rollups.length, 1, 'one day, one environment');
    assert.equal(Number(rollups[0]!.passes), 1);
    assert.equal(Number(rollups[0]!.fails), 1);

    const slug = `acme-${h.dialect}`;
    const page = await h.data('POST', pages(), {
      slug,
      title: 'Acme <Status>',
      groups: [
        { name: 'Backend', tests: [{ test_id: api.test.id, name: 'Checkout' }] },
        { name: 'Frontend', tests: [{ test_id: web.test.id, name: 'Website' }] },
      ],
    });
    assert.equal(page.public_url, `${PUBLIC_URL}/status/${slug}`);
    assert.deepEqual(await h.data('GET', `${pages()}/${page.id}`), page);
    assert.deepEqual(
      (await h.data('GET', pages())).map((p: any) => p.id),
      [page.id],
    );

    const json = await h.call({
      method: 'GET',
      url: `/status/${slug}`,
      as: null,
      headers: { accept: 'application/json' },
    });
    assert.equal(json.statusCode, 200, json.body);
    assert.match(String(json.headers['cache-control']), /max-age=\d+/);
    const status = json.json().data;
    assert.equal(status.title, 'Acme <Status>');
    assert.equal(status.status, 'degraded');
    const [backend, frontend] = status.groups;
    assert.equal(backend.tests[0].name, 'Checkout');
    assert.equal(backend.tests[0].state, 'fail');
    assert.equal(backend.tests[0].uptime_percent, 50);
    assert.equal(backend.tests[0].days.length, 90);
    assert.deepEqual(backend.tests[0].days.at(-1), {
      date: new Date().toISOString().slice(0, 10),
      passes: 1,
      fails: 1,
    });
    assert.ok(Math.abs(backend.tests[0].failing_since - failed.finished_at) < 0.01);
    assert.equal(frontend.tests[0].state, 'pass');
    assert.equal(frontend.tests[0].uptime_percent, 100);
    assert.deepEqual(
      status.incidents.map((i: any) => [i.group, i.test]),
      [['Backend', 'Checkout']],
    );

    const html = await h.call({
      method: 'GET',
      url: `/status/${slug}`,
      as: null,
      headers: { accept: 'text/html' },
    });
    assert.equal(html.statusCode, 200);
    assert.match(String(html.headers['content-type']), /text\/html/);
    assert.match(html.body, /<h1>Acme &lt;Status&gt;<\/h1>/);
    assert.match(html.body, /Checkout/);
    assert.match(html.body, /Open incidents/);

    for (const body of [json.body, html.body]) {
      for (const secret of [
        api.test.id,
        web.test.id,
        api.environmentId,
        'internal name',
        'Secret Production Env',
        receiver.base,
        '127.0.0.1',
        '/health',
        'BODY-MARKER',
        'VARIABLE-MARKER',
        'equal_number',
        'trigger',
        h.alice.bucketKey,
      ]) {
        assert.ok(!body.includes(secret), `the public page shows ${secret}`);
      }
    }

    // Recovery: the incident closes.
    await api.run('200');
    const healed = (
      await h.call({
        method: 'GET',
        url: `/status/${slug}`,
        as: null,
        headers: { accept: 'application/json' },
      })
    ).json().data;
    assert.equal(healed.status, 'operational');
    assert.deepEqual(healed.incidents, []);
    assert.equal(healed.groups[0].tests[0].days.at(-1).passes, 2);

    // Only the chosen environment counts: another environment has no runs.
    const shared = await h.data('POST', `/buckets/${h.alice.bucketKey}/environments`, { name: 'Staging' });
    const filtered = await h.data('PUT', `${pages()}/${page.id}`, { environment_id: shared.id });
    assert.equal(filtered.environment_id, shared.id);
    const empty = (
      await h.call({
        method: 'GET',
        url: `/status/${slug}`,
        as: null,
        headers: { accept: 'application/json' },
      })
    ).json().data;
    assert.equal(empty.groups[0].tests[0].state, 'unknown');
    assert.equal(empty.groups[0].tests[0].uptime_percent, null);

    assert.equal((await h.call({ method: 'DELETE', url: `${pages()}/${page.id}` })).statusCode, 204);
    const gone = await h.call({
      method: 'GET',
      url: `/status/${slug}`,
      as: null,
      headers: { accept: 'text/html' },
    });
    assert.equal(gone.statusCode, 404);
    assert.match(gone.body, /Not found/);
    await h.expectError(
      { method: 'GET', url: `/status/${slug}`, as: null, headers: { accept: 'application/json' } },
      404,
      'not_found',
    );
  });

  test("maintenance of the bucket and of the page's tests, under way or within a week, without notes", async () => {
    const h = get();
    const shown = await monitoredTest('Shown test');
    const other = await monitoredTest('Test not on the page');
    const slug = `maint-${h.dialect}`;
    await h.data('POST', pages(), {
      slug,
      title: 'Maintenance',
      groups: [{ name: 'All', tests: [{ test_id: shown.test.id, name: 'Public name' }] }],
    });
    const windows = `/buckets/${h.alice.bucketKey}/maintenance_windows`;
    const now = Math.floor(Date.now() / 1000);
    const note = 'NOTE-MARKER internal';
    await h.data('POST', windows, { mode: 'mute', starts_at: now - 600, ends_at: now + 600, note });
    await h.data('POST', windows, {
      mode: 'pause',
      test_id: shown.test.id,
      starts_at: now + 86_400,
      ends_at: now + 90_000,
      note,
    });
    await h.data('POST', windows, {
      mode: 'pause',
      test_id: other.test.id,
      starts_at: now + 60,
      ends_at: now + 120,
    });
    await h.data('POST', windows, { mode: 'mute', starts_at: now + 8 * 86_400, ends_at: now + 9 * 86_400 });
    await h.data('POST', windows, { mode: 'mute', starts_at: now - 7_200, ends_at: now - 3_600 });

    const json = await h.call({
      method: 'GET',
      url: `/status/${slug}`,
      as: null,
      headers: { accept: 'application/json' },
    });
    assert.equal(json.statusCode, 200, json.body);
    assert.deepEqual(json.json().data.maintenance, [
      { title: 'Scheduled maintenance', starts_at: now - 600, ends_at: now + 600 },
      { title: 'Scheduled maintenance: Public name', starts_at: now + 86_400, ends_at: now + 90_000 },
    ]);
    const html = await h.call({
      method: 'GET',
      url: `/status/${slug}`,
      as: null,
      headers: { accept: 'text/html' },
    });
    assert.match(html.body, /Scheduled maintenance: Public name/);
    for (const body of [json.body, html.body]) {
      assert.ok(!body.includes('NOTE-MARKER'), "a window's note is never public");
      assert.ok(!body.includes('Test not on the page'));
    }
  });

  test('validation names the field; slugs are unique; another account cannot see or edit a page', async () => {
    const h = get();
    const { test: t } = await monitoredTest('Validated');
    const groups = [{ name: 'All', tests: [{ test_id: t.id, name: 'API' }] }];
    await h.expectError(
      { method: 'POST', url: pages(), body: { slug: 'Bad Slug', title: 'x', groups } },
      400,
      'validation_failed',
      '/slug',
    );
    await h.expectError(
      { method: 'POST', url: pages(), body: { slug: 'a', title: 'x', groups } },
      400,
      'validation_failed',
      '/slug',
    );
    await h.expectError(
      {
        method: 'POST',
        url: pages(),
        body: {
          slug: 'ok-slug',
          title: 'x',
          groups: [
            { name: 'All', tests: [{ test_id: '00000000-0000-4000-8000-000000000000', name: 'API' }] },
          ],
        },
      },
      400,
      'validation_failed',
      '/groups/0/tests/0/test_id',
    );
    await h.expectError(
      { method: 'POST', url: pages(), body: { slug: 'ok-slug', title: 'x', environment_id: 'nope', groups } },
      400,
      'validation_failed',
      '/environment_id',
    );
    const slug = `mine-${h.dialect}`;
    const page = await h.data('POST', pages(), { slug, title: 'Mine', groups });
    await h.expectError(
      { method: 'POST', url: pages(), body: { slug, title: 'Again', groups } },
      409,
      'conflict',
    );

    // Bob cannot read, change or delete it, nor point his own page at alice's test.
    const bobPages = `/buckets/${h.bob.bucketKey}/status-pages`;
    await h.expectError({ method: 'GET', url: `${pages()}/${page.id}`, as: h.bob }, 404, 'not_found');
    await h.expectError(
      { method: 'PUT', url: `${pages()}/${page.id}`, as: h.bob, body: { title: 'Mine now' } },
      404,
      'not_found',
    );
    await h.expectError({ method: 'DELETE', url: `${pages()}/${page.id}`, as: h.bob }, 404, 'not_found');
    await h.expectError(
      { method: 'PUT', url: `${bobPages}/${page.id}`, as: h.bob, body: { title: 'Mine now' } },
      404,
      'not_found',
    );
    await h.expectError(
      { method: 'POST', url: bobPages, as: h.bob, body: { slug: `bob-${h.dialect}`, title: 'Bob', groups } },
      400,
      'validation_failed',
      '/groups/0/tests/0/test_id',
    );
    // A read-only token cannot write.
    const reader = await h.tokenWith(['api:read']);
    await h.expectError(
      { method: 'PUT', url: `${pages()}/${page.id}`, as: reader, body: { title: 'x' } },
      403,
      'forbidden',
    );
    assert.equal((await h.data('GET', `${pages()}/${page.id}`)).title, 'Mine');
    assert.equal((await h.call({ method: 'DELETE', url: `${pages()}/${page.id}` })).statusCode, 204);
  });
});
