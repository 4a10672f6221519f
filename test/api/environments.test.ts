import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_SETTINGS } from '../../src/domain/environments.js';
import { describeApi } from '../helpers/api.js';
import { withoutExportStamp } from '../helpers/export-stamp.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = '00000000-0000-4000-8000-000000000000';
const INTEGRATION_ID = '3b0f4f5e-9d7a-4c1e-8a52-6c1e2d7f0a11';
const AGENT_ID = '9a7d1b2c-3e4f-4a5b-8c6d-7e8f9a0b1c22';
const RECIPIENT_ID = 'c4d5e6f7-a8b9-4c0d-9e1f-2a3b4c5d6e33';

/** Every field of spec 2.3 that a client sets, each with a value other than its default. */
const FULL_SETTINGS = {
  auth: {
    auth_type: 'oauth_1',
    access_token: 'access',
    consumer_secret: 'consumer-secret',
    consumer_key: 'consumer-key',
    token_secret: 'token-secret',
    signature_type: 'body',
  },
  emails: {
    notify_all: true,
    notify_on: 'threshold',
    notify_threshold: 3,
    recipients: [
      { email: 'ops@example.com', name: 'Ops', id: RECIPIENT_ID },
      { email: 'dev+alerts@example.org', name: 'Dev', id: AGENT_ID },
    ],
  },
  initial_variables: { host: 'https://api.example.com', token: 's3cr3t', empty: '' },
  integrations: [
    { description: 'Browser checks', integration_type: 'partner-inspector', id: INTEGRATION_ID },
  ],
  preserve_cookies: true,
  regions: ['eu-west', 'us-east-1'],
  remote_agents: [{ name: 'lab agent', uuid: AGENT_ID }],
  retry_on_failure: true,
  retry_transport_errors: { attempts: 2, backoff_ms: 500 },
  alert_quorum: 2,
  stop_on_failure: true,
  script: 'variables.set("started", String(Date.now()));',
  verify_ssl: false,
  client_certificate: '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n',
  webhooks: ['https://hooks.example.com/vigil', 'http://hooks.example.net/path?x=1'],
  headers: { 'X-Env': ['one', 'two'] },
};

const ENV_KEYS = ['id', 'name', 'test_id', 'parent_environment_id', ...Object.keys(DEFAULT_SETTINGS)].sort();

await describeApi('environments API', (harness) => {
  const get = () => withoutExportStamp(harness());
  const bucket = () => get().alice.bucketKey;
  const tests = (key = bucket()) => `/buckets/${key}/tests`;
  const testEnvs = (testId: string, key = bucket()) => `/buckets/${key}/tests/${testId}/environments`;
  const sharedEnvs = (key = bucket()) => `/buckets/${key}/environments`;
  const newTest = (name = 'Env test', key = bucket()) => get().data('POST', tests(key), { name });
  const newBucket = async (name: string) => (await get().data('POST', '/buckets', { name })).key as string;

  const expectError = (...args: Parameters<ReturnType<typeof get>['expectError']>) =>
    get().expectError(...args);

  const countRows = async (table: 'environments' | 'tests' | 'revisions', where: Record<string, unknown>) => {
    let query = get()
      .store.db.selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'));
    for (const [column, value] of Object.entries(where)) {
      query =
        value === null
          ? query.where(column as never, 'is', null)
          : value === 'not null'
            ? query.where(column as never, 'is not', null)
            : query.where(column as never, '=', value as never);
    }
    return Number((await query.executeTakeFirstOrThrow()).n);
  };
  const testEnvCount = (key: string) => countRows('environments', { bucket_key: key, test_id: 'not null' });

  test('POST answers 201 in the envelope with every field of spec 2.3 round-tripped', async () => {
    const { call, data } = get();
    const t = await newTest();
    const response = await call({
      method: 'POST',
      url: testEnvs(t.id),
      body: { name: 'Everything', ...FULL_SETTINGS },
    });
    assert.equal(response.statusCode, 201, response.body);
    const body = response.json();
    assert.deepEqual(body.meta, { status: 'success' });
    assert.equal(body.error, null);
    const created = body.data;
    assert.match(created.id, UUID);
    assert.deepEqual(created, {
      id: created.id,
      name: 'Everything',
      test_id: t.id,
      parent_environment_id: null,
      ...FULL_SETTINGS,
    });
    assert.deepEqual(Object.keys(created).sort(), ENV_KEYS);

    assert.deepEqual(await data('GET', `${testEnvs(t.id)}/${created.id}`), created);
    const list = await call({ method: 'GET', url: testEnvs(t.id) });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().meta, { status: 'success' });
    assert.equal(list.json().error, null);
    assert.deepEqual(
      list.json().data.map((e: any) => e.id),
      [t.default_environment_id, created.id],
    );
    assert.deepEqual(list.json().data[1], created);
    const detail = await data('GET', `${tests()}/${t.id}`);
    assert.deepEqual(
      detail.environments.find((e: any) => e.id === created.id),
      created,
    );
  });

  test('shared environments round-trip every field with test_id null', async () => {
    const { data } = get();
    const created = await data('POST', sharedEnvs(), { name: 'Shared everything', ...FULL_SETTINGS });
    assert.match(created.id, UUID);
    assert.deepEqual(created, {
      id: created.id,
      name: 'Shared everything',
      test_id: null,
      parent_environment_id: null,
      ...FULL_SETTINGS,
    });
    assert.deepEqual(await data('GET', `${sharedEnvs()}/${created.id}`), created);
    const list = await data('GET', sharedEnvs());
    assert.deepEqual(
      list.find((e: any) => e.id === created.id),
      created,
    );
    assert.ok(list.every((e: any) => e.test_id === null));
  });

  test('omitted fields take their defaults', async () => {
    const { data } = get();
    const t = await newTest();
    const expected = (id: string, name: string, testId: string | null) => ({
      id,
      name,
      test_id: testId,
      parent_environment_id: null,
      auth: {},
      emails: { notify_all: false, notify_on: 'all', notify_threshold: null, recipients: [] },
      initial_variables: {},
      integrations: [],
      preserve_cookies: false,
      regions: [],
      remote_agents: [],
      retry_on_failure: false,
      retry_transport_errors: null,
      alert_quorum: 1,
      stop_on_failure: false,
      script: '',
      verify_ssl: true,
      client_certificate: '',
      webhooks: null,
      headers: {},
    });
    const bare = await data('POST', testEnvs(t.id), { name: 'Bare' });
    assert.deepEqual(bare, expected(bare.id, 'Bare', t.id));
    const shared = await data('POST', sharedEnvs(), { name: 'Bare shared' });
    assert.deepEqual(shared, expected(shared.id, 'Bare shared', null));
    // The default environment of a new test shows the defaults too.
    const initial = await data('GET', `${testEnvs(t.id)}/${t.default_environment_id}`);
    assert.deepEqual(initial, expected(t.default_environment_id, initial.name, t.id));
    // Partial emails are completed with the defaults of the properties left out.
    const partial = await data('POST', testEnvs(t.id), {
      name: 'Partial emails',
      emails: {
        notify_on: 'failures',
        recipients: [{ email: 'x@example.com', name: 'X', id: RECIPIENT_ID }],
      },
    });
    assert.deepEqual(partial.emails, {
      notify_all: false,
      notify_on: 'failures',
      notify_threshold: null,
      recipients: [{ email: 'x@example.com', name: 'X', id: RECIPIENT_ID }],
    });
  });

  test('id and test_id are assigned by the service, whatever the body says', async () => {
    const { data } = get();
    const t = await newTest();
    const other = await newTest('Other');
    const chosen = '11111111-2222-4333-8444-555555555555';
    const env = await data('POST', testEnvs(t.id), { name: 'Assigned', id: chosen, test_id: other.id });
    assert.match(env.id, UUID);
    assert.notEqual(env.id, chosen);
    assert.equal(env.test_id, t.id);
    assert.equal((await data('GET', testEnvs(other.id))).length, 1);

    const shared = await data('POST', sharedEnvs(), { name: 'Assigned shared', id: chosen, test_id: t.id });
    assert.notEqual(shared.id, chosen);
    assert.equal(shared.test_id, null);

    const a = await data('POST', testEnvs(t.id), { name: 'A' });
    const b = await data('POST', testEnvs(t.id), { name: 'B' });
    assert.notEqual(a.id, b.id);

    // PUT cannot change them either.
    const put = await data('PUT', `${testEnvs(t.id)}/${a.id}`, { name: 'A2', id: chosen, test_id: other.id });
    assert.deepEqual(put, { ...a, name: 'A2' });
    const sharedPut = await data('PUT', `${sharedEnvs()}/${shared.id}`, { name: 'S2', test_id: t.id });
    assert.deepEqual(sharedPut, { ...shared, name: 'S2' });
    assert.equal((await data('GET', testEnvs(other.id))).length, 1);
  });

  test('an environment as served can be posted back as it is', async () => {
    const { data } = get();
    const t = await newTest();
    const original = await data('POST', testEnvs(t.id), { name: 'Served', ...FULL_SETTINGS });
    const target = await newTest('Copy target');
    const copy = await data('POST', testEnvs(target.id), original);
    assert.notEqual(copy.id, original.id);
    assert.deepEqual(copy, { ...original, id: copy.id, test_id: target.id });
  });

  test('each kind of auth round-trips, keeping only the properties of its method', async () => {
    const { data } = get();
    const t = await newTest();
    const cases: { input: Record<string, unknown>; shown: Record<string, unknown> }[] = [
      { input: {}, shown: {} },
      {
        input: { auth_type: 'basic', username: 'user', password: 'pass' },
        shown: { auth_type: 'basic', username: 'user', password: 'pass' },
      },
      {
        input: { auth_type: 'basic', username: 'only-user', access_token: 'ignored' },
        shown: { auth_type: 'basic', username: 'only-user', password: '' },
      },
      ...(['auth_header', 'body', 'query'] as const).map((signature_type) => ({
        input: {
          auth_type: 'oauth_1',
          access_token: 'a',
          consumer_secret: 'b',
          consumer_key: 'c',
          token_secret: 'd',
          signature_type,
        },
        shown: {
          auth_type: 'oauth_1',
          access_token: 'a',
          consumer_secret: 'b',
          consumer_key: 'c',
          token_secret: 'd',
          signature_type,
        },
      })),
      {
        input: { auth_type: 'oauth_1', consumer_key: 'ck', username: 'ignored' },
        shown: {
          auth_type: 'oauth_1',
          access_token: '',
          consumer_secret: '',
          consumer_key: 'ck',
          token_secret: '',
          signature_type: 'auth_header',
        },
      },
      {
        input: { auth_type: 'client_certificate', password: 'ignored' },
        shown: { auth_type: 'client_certificate' },
      },
    ];
    for (const { input, shown } of cases) {
      const env = await data('POST', testEnvs(t.id), { name: `auth ${JSON.stringify(input)}`, auth: input });
      assert.deepEqual(env.auth, shown, JSON.stringify(input));
      assert.deepEqual((await data('GET', `${testEnvs(t.id)}/${env.id}`)).auth, shown);
    }
    // PUT switches the method and drops the old one's properties.
    const env = await data('POST', testEnvs(t.id), {
      name: 'auth switch',
      auth: { auth_type: 'basic', username: 'u', password: 'p' },
    });
    const switched = await data('PUT', `${testEnvs(t.id)}/${env.id}`, {
      auth: { auth_type: 'client_certificate' },
    });
    assert.deepEqual(switched.auth, { auth_type: 'client_certificate' });
    const cleared = await data('PUT', `${testEnvs(t.id)}/${env.id}`, { auth: {} });
    assert.deepEqual(cleared.auth, {});
  });

  test('emails round-trip with every notify_on value, notify_threshold and recipients', async () => {
    const { data } = get();
    const t = await newTest();
    for (const notifyOn of ['all', 'failures', 'threshold', 'switch']) {
      const emails = {
        notify_all: notifyOn === 'all',
        notify_on: notifyOn,
        notify_threshold: notifyOn === 'threshold' ? 5 : null,
        recipients: [{ email: `${notifyOn}@example.com`, name: `On ${notifyOn}`, id: RECIPIENT_ID }],
      };
      const env = await data('POST', testEnvs(t.id), { name: `emails ${notifyOn}`, emails });
      assert.deepEqual(env.emails, emails);
      assert.deepEqual((await data('GET', `${testEnvs(t.id)}/${env.id}`)).emails, emails);
      const shared = await data('POST', sharedEnvs(), { name: `shared emails ${notifyOn}`, emails });
      assert.deepEqual(shared.emails, emails);
    }
    const env = await data('POST', testEnvs(t.id), { name: 'emails by PUT' });
    for (const notifyOn of ['all', 'failures', 'threshold', 'switch']) {
      const emails = { notify_all: false, notify_on: notifyOn, notify_threshold: 1000, recipients: [] };
      assert.deepEqual((await data('PUT', `${testEnvs(t.id)}/${env.id}`, { emails })).emails, emails);
      assert.deepEqual((await data('GET', `${testEnvs(t.id)}/${env.id}`)).emails, emails);
    }
    const many = Array.from({ length: 3 }, (_, i) => ({
      email: `r${i}@example.com`,
      name: `R${i}`,
      id: RECIPIENT_ID,
    }));
    const updated = await data('PUT', `${testEnvs(t.id)}/${env.id}`, {
      emails: { notify_all: false, notify_on: 'switch', notify_threshold: null, recipients: many },
    });
    assert.deepEqual(updated.emails.recipients, many);
  });

  test('webhooks may be an array or null, and change between the two', async () => {
    const { data } = get();
    const t = await newTest();
    const withHooks = await data('POST', testEnvs(t.id), {
      name: 'hooks',
      webhooks: ['https://hooks.example.com/a'],
    });
    assert.deepEqual(withHooks.webhooks, ['https://hooks.example.com/a']);
    const none = await data('POST', testEnvs(t.id), { name: 'no hooks', webhooks: null });
    assert.equal(none.webhooks, null);
    const empty = await data('POST', testEnvs(t.id), { name: 'empty hooks', webhooks: [] });
    assert.deepEqual(empty.webhooks, []);
    const url = `${testEnvs(t.id)}/${withHooks.id}`;
    assert.equal((await data('PUT', url, { webhooks: null })).webhooks, null);
    assert.equal((await data('GET', url)).webhooks, null);
    const two = ['https://a.example.com/1', 'https://b.example.com/2'];
    assert.deepEqual((await data('PUT', url, { webhooks: two })).webhooks, two);
    assert.deepEqual((await data('GET', url)).webhooks, two);
  });

  test('PUT changes only the properties given', async () => {
    const { data } = get();
    const t = await newTest();
    const shared = await data('POST', sharedEnvs(), { name: 'PUT parent' });
    const env = await data('POST', testEnvs(t.id), { name: 'Original', ...FULL_SETTINGS });
    const url = `${testEnvs(t.id)}/${env.id}`;

    const renamed = await data('PUT', url, { name: 'Renamed' });
    assert.deepEqual(renamed, { ...env, name: 'Renamed' });
    assert.deepEqual(await data('GET', url), renamed);

    const ssl = await data('PUT', url, { verify_ssl: true });
    assert.deepEqual(ssl, { ...renamed, verify_ssl: true });

    const changes: Record<string, unknown> = {
      preserve_cookies: false,
      retry_on_failure: false,
      stop_on_failure: false,
      script: '',
      client_certificate: '',
      regions: ['ap-south'],
      integrations: [],
      remote_agents: [],
      auth: { auth_type: 'basic', username: 'u', password: 'p' },
      emails: { notify_all: false, notify_on: 'switch', notify_threshold: null, recipients: [] },
    };
    let current = ssl;
    for (const [key, value] of Object.entries(changes)) {
      const updated = await data('PUT', url, { [key]: value });
      assert.deepEqual(updated, { ...current, [key]: value }, key);
      current = updated;
    }

    // A given initial_variables replaces the stored map as a whole.
    const vars = await data('PUT', url, { initial_variables: { only: 'this' } });
    assert.deepEqual(vars, { ...current, initial_variables: { only: 'this' } });

    const parented = await data('PUT', url, { parent_environment_id: shared.id });
    assert.deepEqual(parented, { ...vars, parent_environment_id: shared.id });
    const kept = await data('PUT', url, { name: 'Still parented' });
    assert.equal(kept.parent_environment_id, shared.id);
    const unparented = await data('PUT', url, { parent_environment_id: null });
    assert.deepEqual(unparented, { ...kept, parent_environment_id: null });

    // Several at once.
    const several = await data('PUT', url, { name: 'Several', verify_ssl: false, webhooks: null });
    assert.deepEqual(several, { ...unparented, name: 'Several', verify_ssl: false, webhooks: null });
    assert.deepEqual(await data('GET', url), several);
    assert.equal(several.id, env.id);
    assert.equal(several.test_id, t.id);
  });

  test('PUT on a shared environment changes only the properties given', async () => {
    const { data } = get();
    const env = await data('POST', sharedEnvs(), { name: 'Shared PUT', ...FULL_SETTINGS });
    const url = `${sharedEnvs()}/${env.id}`;
    const updated = await data('PUT', url, { initial_variables: { a: '1' }, regions: [] });
    assert.deepEqual(updated, { ...env, initial_variables: { a: '1' }, regions: [] });
    assert.deepEqual(await data('GET', url), updated);
    assert.equal(updated.test_id, null);
  });

  test('validation errors answer 400 naming the field, and write nothing', async () => {
    const { data } = get();
    const t = await newTest();
    const env = await data('POST', testEnvs(t.id), { name: 'Valid', ...FULL_SETTINGS });
    const cases: { body: Record<string, unknown>; field: string; mentions?: string[] }[] = [
      {
        body: { emails: { notify_on: 'sometimes' } },
        field: '/emails/notify_on',
        mentions: ['all', 'failures', 'threshold', 'switch'],
      },
      { body: { webhooks: ['not a url'] }, field: '/webhooks/0' },
      { body: { webhooks: ['https://ok.example.com', 'ftp://files.example.com/x'] }, field: '/webhooks/1' },
      { body: { webhooks: 'https://hooks.example.com' }, field: '/webhooks' },
      { body: { initial_variables: { count: 5 } }, field: '/initial_variables/count' },
      { body: { initial_variables: { flag: true } }, field: '/initial_variables/flag' },
      { body: { initial_variables: { nothing: null } }, field: '/initial_variables/nothing' },
      { body: { regions: ['EU West'] }, field: '/regions/0' },
      { body: { regions: ['eu-west', 'bad_region!'] }, field: '/regions/1' },
      {
        body: { emails: { recipients: [{ email: 'not-an-email', name: 'X' }] } },
        field: '/emails/recipients/0/email',
      },
      {
        body: { emails: { recipients: [{ email: 'ok@example.com' }, { email: '@example.com' }] } },
        field: '/emails/recipients/1/email',
      },
      { body: { emails: { recipients: [{ name: 'No address' }] } }, field: '/emails/recipients/0/email' },
      { body: { emails: { notify_threshold: -1 } }, field: '/emails/notify_threshold' },
      { body: { emails: { notify_threshold: 1.5 } }, field: '/emails/notify_threshold' },
      { body: { auth: { auth_type: 'digest' } }, field: '/auth/auth_type' },
      { body: { auth: { auth_type: 'oauth_1', signature_type: 'header' } }, field: '/auth/signature_type' },
      { body: { verify_ssl: 'yes' }, field: '/verify_ssl' },
      { body: { preserve_cookies: 1 }, field: '/preserve_cookies' },
      { body: { script: 42 }, field: '/script' },
      { body: { integrations: [{ id: 'not-a-uuid' }] }, field: '/integrations/0/id' },
      { body: { remote_agents: [{ name: 'no uuid' }] }, field: '/remote_agents/0/uuid' },
      { body: { name: '' }, field: '/name' },
      { body: { name: null }, field: '/name' },
      { body: { parent_environment_id: 42 }, field: '/parent_environment_id' },
      {
        body: { retry_transport_errors: { attempts: 6, backoff_ms: 0 } },
        field: '/retry_transport_errors/attempts',
      },
      {
        body: { retry_transport_errors: { attempts: 1.5, backoff_ms: 0 } },
        field: '/retry_transport_errors/attempts',
      },
      {
        body: { retry_transport_errors: { attempts: -1, backoff_ms: 0 } },
        field: '/retry_transport_errors/attempts',
      },
      {
        body: { retry_transport_errors: { attempts: 1, backoff_ms: 60_001 } },
        field: '/retry_transport_errors/backoff_ms',
      },
      { body: { retry_transport_errors: { attempts: 1 } }, field: '/retry_transport_errors/backoff_ms' },
      { body: { retry_transport_errors: 3 }, field: '/retry_transport_errors' },
      { body: { alert_quorum: 0 }, field: '/alert_quorum' },
      { body: { alert_quorum: 51 }, field: '/alert_quorum' },
      { body: { alert_quorum: 'two' }, field: '/alert_quorum' },
    ];
    for (const { body, field, mentions } of cases) {
      const post = await expectError(
        { method: 'POST', url: testEnvs(t.id), body: { name: 'Invalid', ...body } },
        400,
        'validation_failed',
        field,
      );
      for (const word of mentions ?? []) assert.ok(post.message.includes(word), post.message);
      await expectError(
        { method: 'PUT', url: `${testEnvs(t.id)}/${env.id}`, body },
        400,
        'validation_failed',
        field,
      );
    }
    await expectError(
      { method: 'POST', url: testEnvs(t.id), body: { verify_ssl: false } },
      400,
      'validation_failed',
      '/name',
    );
    await expectError(
      { method: 'POST', url: sharedEnvs(), body: { name: 'Shared invalid', webhooks: ['nope'] } },
      400,
      'validation_failed',
      '/webhooks/0',
    );
    await expectError(
      { method: 'POST', url: sharedEnvs(), body: { name: 'Shared invalid', regions: ['Nowhere'] } },
      400,
      'validation_failed',
      '/regions/0',
    );
    const list = await data('GET', testEnvs(t.id));
    assert.deepEqual(
      list.map((e: any) => e.id),
      [t.default_environment_id, env.id],
    );
    assert.deepEqual(await data('GET', `${testEnvs(t.id)}/${env.id}`), env);
  });

  test('a JSON body needs the JSON content type; bad JSON is 400', async () => {
    const t = await newTest();
    await expectError(
      {
        method: 'POST',
        url: testEnvs(t.id),
        body: JSON.stringify({ name: 'x' }),
        headers: { 'content-type': 'text/plain' },
      },
      415,
      'unsupported_media_type',
    );
    await expectError({ method: 'POST', url: testEnvs(t.id), body: '{"name":' }, 400, 'invalid_json');
  });

  test('the limit of 100 test-specific environments per bucket', async () => {
    const { call, data } = get();
    const key = await newBucket('Limit A');
    const other = await newBucket('Limit B');
    assert.equal(await testEnvCount(key), 0);

    // Shared environments do not count toward the limit.
    const shared = await data('POST', sharedEnvs(key), { name: 'Shared before' });

    // 99 tests bring 99 default environments; one more environment makes 100.
    const created = await data(
      'POST',
      tests(key),
      Array.from({ length: 99 }, (_, i) => ({ name: `Limit ${i}` })),
    );
    assert.equal(created.length, 99);
    assert.equal(await testEnvCount(key), 99);
    const first = created[0];

    // At 99, two new tests would need two environments: refused whole.
    const testsBefore = await countRows('tests', { bucket_key: key });
    const pair = await expectError(
      { method: 'POST', url: tests(key), body: [{ name: 'One' }, { name: 'Two' }] },
      422,
      'limit_reached',
    );
    assert.match(pair.message, /100/);
    assert.equal(await countRows('tests', { bucket_key: key }), testsBefore);
    assert.equal(await testEnvCount(key), 99);

    const hundredth = await data('POST', testEnvs(first.id, key), { name: 'The hundredth' });
    assert.equal(await testEnvCount(key), 100);

    const revisionsBefore = await countRows('revisions', { bucket_key: key });
    const error = await expectError(
      { method: 'POST', url: testEnvs(first.id, key), body: { name: 'One too many' } },
      422,
      'limit_reached',
    );
    assert.match(error.message, /100/);
    assert.equal(await testEnvCount(key), 100);
    assert.equal(await countRows('environments', { bucket_key: key, name: 'One too many' }), 0);
    assert.deepEqual(
      (await data('GET', testEnvs(first.id, key))).map((e: any) => e.id),
      [first.default_environment_id, hundredth.id],
    );

    // A new test would bring a default environment: refused, nothing written.
    await expectError({ method: 'POST', url: tests(key), body: { name: 'Over' } }, 422, 'limit_reached');
    await expectError(
      { method: 'POST', url: tests(key), body: [{ name: 'Over too' }] },
      422,
      'limit_reached',
    );
    assert.equal(await countRows('tests', { bucket_key: key }), testsBefore);
    assert.equal(await countRows('tests', { bucket_key: key, name: 'Over' }), 0);
    assert.equal(await countRows('revisions', { bucket_key: key }), revisionsBefore);
    assert.equal(await testEnvCount(key), 100);

    // At the limit, shared environments can still be created, and existing ones changed.
    const sharedAfter = await data('POST', sharedEnvs(key), { name: 'Shared at the limit' });
    assert.equal(sharedAfter.test_id, null);
    assert.equal(
      (await data('PUT', `${testEnvs(first.id, key)}/${hundredth.id}`, { parent_environment_id: shared.id }))
        .parent_environment_id,
      shared.id,
    );
    assert.equal(await countRows('environments', { bucket_key: key, test_id: null }), 2);
    assert.equal(await testEnvCount(key), 100);

    // Another bucket of the same account is not affected.
    const elsewhere = await data('POST', tests(other), { name: 'Elsewhere' });
    const elsewhereEnv = await data('POST', testEnvs(elsewhere.id, other), { name: 'Elsewhere env' });
    assert.equal(elsewhereEnv.test_id, elsewhere.id);
    assert.equal(await testEnvCount(other), 2);
    // Nor is the account's default bucket.
    const home = await newTest('Home');
    assert.ok(home.id);

    // Deleting frees room again.
    const gone = await call({ method: 'DELETE', url: `${testEnvs(first.id, key)}/${hundredth.id}` });
    assert.equal(gone.statusCode, 204);
    assert.equal(await testEnvCount(key), 99);
    const again = await data('POST', testEnvs(first.id, key), { name: 'Room again' });
    assert.equal(again.test_id, first.id);
    assert.equal(await testEnvCount(key), 100);
    await expectError(
      { method: 'POST', url: tests(key), body: { name: 'Still over' } },
      422,
      'limit_reached',
    );
    const removed = await call({ method: 'DELETE', url: `${tests(key)}/${created[1].id}` });
    assert.equal(removed.statusCode, 204);
    assert.equal(await testEnvCount(key), 99);

    // An import brings every environment it carries: two do not fit in the one place left.
    const exported = (await call({ method: 'GET', url: `${tests(key)}/${first.id}/export` })).json();
    assert.equal(exported.environments.length, 2);
    await expectError({ method: 'POST', url: tests(key), body: exported }, 422, 'limit_reached');
    assert.equal(await testEnvCount(key), 99);
    assert.equal(await countRows('tests', { bucket_key: key }), testsBefore - 1);

    assert.equal((await data('POST', tests(key), { name: 'Fits' })).name, 'Fits');
    assert.equal(await testEnvCount(key), 100);
  });

  test('concurrent creates cannot pass the limit together', async () => {
    const { call, data } = get();
    const key = await newBucket('Limit race');
    const created = await data(
      'POST',
      tests(key),
      Array.from({ length: 97 }, (_, i) => ({ name: `Race ${i}` })),
    );
    assert.equal(await testEnvCount(key), 97);
    const target = created[0].id;
    const responses = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) =>
        call({ method: 'POST', url: testEnvs(target, key), body: { name: `Racer ${i}` } }),
      ),
      ...Array.from({ length: 2 }, (_, i) =>
        call({ method: 'POST', url: tests(key), body: { name: `New ${i}` } }),
      ),
    ]);
    const statuses = responses.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 201).length, 3, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 422).length, 3, statuses.join(' '));
    assert.equal(await testEnvCount(key), 100);
  });

  test('DELETE answers 204 with no body and removes the environment', async () => {
    const { call, data } = get();
    const t = await newTest();
    const env = await data('POST', testEnvs(t.id), { name: 'Doomed' });
    const response = await call({ method: 'DELETE', url: `${testEnvs(t.id)}/${env.id}` });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    await expectError({ method: 'GET', url: `${testEnvs(t.id)}/${env.id}` }, 404, 'not_found');
    await expectError({ method: 'DELETE', url: `${testEnvs(t.id)}/${env.id}` }, 404, 'not_found');
    assert.deepEqual(
      (await data('GET', testEnvs(t.id))).map((e: any) => e.id),
      [t.default_environment_id],
    );

    const shared = await data('POST', sharedEnvs(), { name: 'Doomed shared' });
    const sharedResponse = await call({ method: 'DELETE', url: `${sharedEnvs()}/${shared.id}` });
    assert.equal(sharedResponse.statusCode, 204);
    assert.equal(sharedResponse.body, '');
    assert.ok(!(await data('GET', sharedEnvs())).some((e: any) => e.id === shared.id));
  });

  test('deleting a default environment is 409 until the test uses another', async () => {
    const { call, data } = get();
    const t = await newTest();
    const url = `${testEnvs(t.id)}/${t.default_environment_id}`;
    const error = await expectError({ method: 'DELETE', url }, 409, 'conflict');
    assert.ok(error.message.includes(t.default_environment_id), error.message);
    assert.equal((await data('GET', url)).id, t.default_environment_id);

    const replacement = await data('POST', testEnvs(t.id), { name: 'Replacement' });
    await data('PUT', `${tests()}/${t.id}`, { default_environment_id: replacement.id });
    const response = await call({ method: 'DELETE', url });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    await expectError({ method: 'GET', url }, 404, 'not_found');

    // A shared environment that is some test's default is protected the same way.
    const shared = await data('POST', sharedEnvs(), { name: 'Shared default' });
    await data('PUT', `${tests()}/${t.id}`, { default_environment_id: shared.id });
    await expectError({ method: 'DELETE', url: `${sharedEnvs()}/${shared.id}` }, 409, 'conflict');
    await data('PUT', `${tests()}/${t.id}`, { default_environment_id: replacement.id });
    assert.equal((await call({ method: 'DELETE', url: `${sharedEnvs()}/${shared.id}` })).statusCode, 204);
  });

  test('deleting a parent environment is 409 until no environment inherits from it', async () => {
    const { call, data } = get();
    const t = await newTest();
    const parent = await data('POST', sharedEnvs(), { name: 'Parent' });
    const child = await data('POST', testEnvs(t.id), { name: 'Child', parent_environment_id: parent.id });
    assert.equal(child.parent_environment_id, parent.id);
    const sharedChild = await data('POST', sharedEnvs(), {
      name: 'Shared child',
      parent_environment_id: parent.id,
    });

    const error = await expectError(
      { method: 'DELETE', url: `${sharedEnvs()}/${parent.id}` },
      409,
      'conflict',
    );
    assert.ok(error.message.includes(parent.id), error.message);
    await data('PUT', `${testEnvs(t.id)}/${child.id}`, { parent_environment_id: null });
    await expectError({ method: 'DELETE', url: `${sharedEnvs()}/${parent.id}` }, 409, 'conflict');
    await data('PUT', `${sharedEnvs()}/${sharedChild.id}`, { parent_environment_id: null });
    const response = await call({ method: 'DELETE', url: `${sharedEnvs()}/${parent.id}` });
    assert.equal(response.statusCode, 204);

    // A test environment can be a parent too.
    const testParent = await data('POST', testEnvs(t.id), { name: 'Test parent' });
    const testChild = await data('POST', testEnvs(t.id), {
      name: 'Test child',
      parent_environment_id: testParent.id,
    });
    await expectError({ method: 'DELETE', url: `${testEnvs(t.id)}/${testParent.id}` }, 409, 'conflict');
    assert.equal(
      (await call({ method: 'DELETE', url: `${testEnvs(t.id)}/${testChild.id}` })).statusCode,
      204,
    );
    assert.equal(
      (await call({ method: 'DELETE', url: `${testEnvs(t.id)}/${testParent.id}` })).statusCode,
      204,
    );
  });

  test('deleting a test leaves no environment naming a parent that is gone', async () => {
    const { call, data, store } = get();
    const doomed = await newTest('Parent owner');
    const survivor = await newTest('Survivor');
    const parentEnv = await data('POST', testEnvs(doomed.id), { name: 'Parent of others' });
    const sharedChild = await data('POST', sharedEnvs(), {
      name: 'Shared child of a test env',
      parent_environment_id: parentEnv.id,
    });
    const testChild = await data('POST', testEnvs(survivor.id), {
      name: 'Child in another test',
      parent_environment_id: doomed.default_environment_id,
    });

    const response = await call({ method: 'DELETE', url: `${tests()}/${doomed.id}` });
    // Either the delete is refused like deleting the parent itself, or the children are let go.
    assert.ok([204, 409].includes(response.statusCode), `${response.statusCode}: ${response.body}`);
    const rows = await store.db
      .selectFrom('environments')
      .select(['id', 'parent_environment_id'])
      .where('bucket_key', '=', bucket())
      .execute();
    const ids = new Set(rows.map((r) => r.id));
    const dangling = rows.filter(
      (r) => r.parent_environment_id !== null && !ids.has(r.parent_environment_id),
    );
    assert.deepEqual(dangling, [], 'environments whose parent no longer exists');
    if (response.statusCode === 409) {
      assert.equal(response.json().error.code, 'conflict');
      assert.equal((await data('GET', `${testEnvs(doomed.id)}/${parentEnv.id}`)).id, parentEnv.id);
    } else {
      for (const url of [`${sharedEnvs()}/${sharedChild.id}`, `${testEnvs(survivor.id)}/${testChild.id}`]) {
        const parent = (await data('GET', url)).parent_environment_id;
        assert.ok(parent === null || ids.has(parent), `${url} names parent ${parent}`);
      }
    }
  });

  test('parent_environment_id must name another environment of the same bucket without a cycle', async () => {
    const { data, bob } = get();
    const t = await newTest();
    const field = '/parent_environment_id';
    const otherBucket = await newBucket('Parent elsewhere');
    const foreignShared = await data('POST', sharedEnvs(otherBucket), { name: 'Foreign shared' });
    const foreignTest = await newTest('Foreign test', otherBucket);
    const bobsShared = (
      await get().call({
        method: 'POST',
        url: sharedEnvs(bob.bucketKey),
        body: { name: "Bob's" },
        as: bob,
      })
    ).json().data;

    const badParents = [
      MISSING,
      'not-a-uuid',
      foreignShared.id,
      foreignTest.default_environment_id,
      bobsShared.id,
    ];
    for (const parent of badParents) {
      await expectError(
        { method: 'POST', url: testEnvs(t.id), body: { name: 'Orphan', parent_environment_id: parent } },
        400,
        'validation_failed',
        field,
      );
      await expectError(
        { method: 'POST', url: sharedEnvs(), body: { name: 'Orphan', parent_environment_id: parent } },
        400,
        'validation_failed',
        field,
      );
    }
    assert.equal(await countRows('environments', { name: 'Orphan' }), 0);

    const a = await data('POST', sharedEnvs(), { name: 'A' });
    const b = await data('POST', sharedEnvs(), { name: 'B', parent_environment_id: a.id });
    assert.equal(b.parent_environment_id, a.id);
    for (const parent of [...badParents, a.id]) {
      await expectError(
        { method: 'PUT', url: `${sharedEnvs()}/${a.id}`, body: { parent_environment_id: parent } },
        400,
        'validation_failed',
        field,
      );
    }
    // A → B → A.
    await expectError(
      { method: 'PUT', url: `${sharedEnvs()}/${a.id}`, body: { parent_environment_id: b.id } },
      400,
      'validation_failed',
      field,
    );
    // A → C → B → A, with a test environment in the chain.
    const c = await data('POST', testEnvs(t.id), { name: 'C', parent_environment_id: b.id });
    await expectError(
      { method: 'PUT', url: `${sharedEnvs()}/${a.id}`, body: { parent_environment_id: c.id } },
      400,
      'validation_failed',
      field,
    );
    // Self, on a test environment.
    await expectError(
      { method: 'PUT', url: `${testEnvs(t.id)}/${c.id}`, body: { parent_environment_id: c.id } },
      400,
      'validation_failed',
      field,
    );
    assert.equal((await data('GET', `${sharedEnvs()}/${a.id}`)).parent_environment_id, null);
    assert.equal((await data('GET', `${testEnvs(t.id)}/${c.id}`)).parent_environment_id, b.id);

    // Re-parenting without a cycle is fine: C → A directly.
    assert.equal(
      (await data('PUT', `${testEnvs(t.id)}/${c.id}`, { parent_environment_id: a.id })).parent_environment_id,
      a.id,
    );
    // A test environment may inherit from a shared one of the bucket.
    const d = await data('POST', testEnvs(t.id), { name: 'D', parent_environment_id: b.id });
    assert.equal(d.parent_environment_id, b.id);
  });

  test('unknown, malformed, misplaced and foreign environments are 404', async () => {
    const { call, data, bob } = get();
    const t1 = await newTest('First');
    const t2 = await newTest('Second');
    const env1 = await data('POST', testEnvs(t1.id), { name: 'Of the first' });
    const shared = await data('POST', sharedEnvs(), { name: 'Shared one' });

    const notFoundUrls = [
      `${testEnvs(t1.id)}/${MISSING}`,
      `${testEnvs(t1.id)}/not-a-uuid`,
      `${sharedEnvs()}/${MISSING}`,
      `${sharedEnvs()}/not-a-uuid`,
      // A test environment through another test's path.
      `${testEnvs(t2.id)}/${env1.id}`,
      // A shared environment through a test's path.
      `${testEnvs(t1.id)}/${shared.id}`,
      // Unknown and malformed tests.
      `${testEnvs(MISSING)}/${env1.id}`,
      `${testEnvs('not-a-uuid')}/${env1.id}`,
      // Alice's environments through Bob's bucket.
      `${testEnvs(t1.id, bob.bucketKey)}/${env1.id}`,
      `${sharedEnvs(bob.bucketKey)}/${shared.id}`,
    ];
    // A test environment is reachable through the bucket's path too, as on the original service.
    assert.equal((await data('GET', `${sharedEnvs()}/${env1.id}`)).test_id, t1.id);
    for (const url of notFoundUrls) {
      await expectError({ method: 'GET', url }, 404, 'not_found');
      await expectError({ method: 'PUT', url, body: { name: 'Hijacked' } }, 404, 'not_found');
      await expectError({ method: 'DELETE', url }, 404, 'not_found');
    }
    for (const url of [testEnvs(MISSING), testEnvs('not-a-uuid'), testEnvs(t1.id, bob.bucketKey)]) {
      await expectError({ method: 'GET', url }, 404, 'not_found');
      await expectError({ method: 'POST', url, body: { name: 'Nowhere' } }, 404, 'not_found');
    }

    // Bob cannot see or touch Alice's bucket at all.
    for (const url of [
      testEnvs(t1.id),
      `${testEnvs(t1.id)}/${env1.id}`,
      sharedEnvs(),
      `${sharedEnvs()}/${shared.id}`,
    ]) {
      await expectError({ method: 'GET', url, as: bob }, 404, 'not_found');
    }
    await expectError(
      { method: 'POST', url: testEnvs(t1.id), body: { name: 'Bob' }, as: bob },
      404,
      'not_found',
    );
    await expectError(
      { method: 'POST', url: sharedEnvs(), body: { name: 'Bob' }, as: bob },
      404,
      'not_found',
    );
    await expectError(
      { method: 'PUT', url: `${testEnvs(t1.id)}/${env1.id}`, body: { name: 'Bob' }, as: bob },
      404,
      'not_found',
    );
    await expectError({ method: 'DELETE', url: `${sharedEnvs()}/${shared.id}`, as: bob }, 404, 'not_found');
    const bobsList = await call({ method: 'GET', url: sharedEnvs(bob.bucketKey), as: bob });
    assert.equal(bobsList.statusCode, 200);
    assert.ok(!bobsList.json().data.some((e: any) => e.id === shared.id));

    // Nothing was changed by any of it.
    assert.deepEqual(await data('GET', `${testEnvs(t1.id)}/${env1.id}`), env1);
    assert.deepEqual(await data('GET', `${sharedEnvs()}/${shared.id}`), shared);
    assert.equal((await data('GET', testEnvs(t2.id))).length, 1);
  });

  test('without a token 401, with only api:read writes are 403', async () => {
    const { data, tokenWith } = get();
    const t = await newTest();
    const env = await data('POST', testEnvs(t.id), { name: 'Scoped' });
    const response = await get().call({ method: 'GET', url: testEnvs(t.id), as: null });
    assert.equal(response.statusCode, 401);
    assert.match(String(response.headers['www-authenticate']), /^Bearer/);
    const reader = await tokenWith(['api:read']);
    const read = await get().call({ method: 'GET', url: `${testEnvs(t.id)}/${env.id}`, as: reader });
    assert.equal(read.statusCode, 200);
    await expectError(
      { method: 'POST', url: testEnvs(t.id), body: { name: 'x' }, as: reader },
      403,
      'forbidden',
    );
    await expectError(
      { method: 'POST', url: sharedEnvs(), body: { name: 'x' }, as: reader },
      403,
      'forbidden',
    );
    await expectError(
      { method: 'PUT', url: `${testEnvs(t.id)}/${env.id}`, body: { name: 'x' }, as: reader },
      403,
      'forbidden',
    );
    await expectError({ method: 'DELETE', url: `${testEnvs(t.id)}/${env.id}`, as: reader }, 403, 'forbidden');
    assert.deepEqual(await data('GET', `${testEnvs(t.id)}/${env.id}`), env);
  });

  test('every create, update and delete of a test environment writes an environment revision', async () => {
    const { call, data } = get();
    const t = await newTest();
    const env = await data('POST', testEnvs(t.id), { name: 'Tracked', initial_variables: { a: '1' } });
    await data('PUT', `${testEnvs(t.id)}/${env.id}`, { name: 'Tracked 2', verify_ssl: false });
    // Failed writes leave no trace.
    await call({ method: 'PUT', url: `${testEnvs(t.id)}/${env.id}`, body: { regions: ['BAD'] } });
    await call({
      method: 'PUT',
      url: `${testEnvs(t.id)}/${env.id}`,
      body: { parent_environment_id: env.id },
    });
    await call({ method: 'DELETE', url: `${testEnvs(t.id)}/${t.default_environment_id}` });
    const deleted = await call({ method: 'DELETE', url: `${testEnvs(t.id)}/${env.id}` });
    assert.equal(deleted.statusCode, 204);

    const revisions = await data('GET', `${tests()}/${t.id}/revisions`);
    const history = revisions.env_revisions[env.id];
    assert.ok(Array.isArray(history), JSON.stringify(Object.keys(revisions.env_revisions)));
    assert.deepEqual(
      history.map((r: any) => r.action),
      ['create', 'update', 'delete'],
    );
    for (const revision of history) {
      assert.equal(revision.item_type, 'environment');
      assert.equal(revision.item_id, env.id);
      assert.match(revision.uuid, UUID);
      assert.equal(typeof revision.timestamp, 'number');
      assert.equal(revision.author_uuid, get().alice.accountId);
      assert.equal(revision.author_email, 'alice@example.com');
      assert.equal(revision.bucket_key, bucket());
      assert.equal(revision.source, 'api');
      assert.match(revision.organization_id, UUID);
    }
    assert.ok(history[0].timestamp < history[1].timestamp && history[1].timestamp < history[2].timestamp);
    assert.deepEqual(history[0].snapshot, env);
    assert.equal(history[1].snapshot.name, 'Tracked 2');
    assert.equal(history[1].snapshot.verify_ssl, false);
    assert.deepEqual(history[1].snapshot.initial_variables, { a: '1' });
    assert.equal(history[2].snapshot.name, 'Tracked 2');

    // The default environment has only its creation, as the failed delete wrote nothing.
    assert.deepEqual(
      revisions.env_revisions[t.default_environment_id].map((r: any) => r.action),
      ['create'],
    );
    // Environment changes are not test revisions.
    assert.ok(revisions.test_revisions.every((r: any) => r.item_type === 'radar_test'));
  });

  test('every create, update and delete of a shared environment writes an environment revision', async () => {
    const { call, data, store } = get();
    const env = await data('POST', sharedEnvs(), { name: 'Shared tracked' });
    await data('PUT', `${sharedEnvs()}/${env.id}`, { script: 'log(1)' });
    assert.equal((await call({ method: 'DELETE', url: `${sharedEnvs()}/${env.id}` })).statusCode, 204);
    const rows = await store.db
      .selectFrom('revisions')
      .selectAll()
      .where('item_id', '=', env.id)
      .orderBy('timestamp')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.item_type, r.action, r.test_id, r.bucket_key]),
      [
        ['environment', 'create', null, bucket()],
        ['environment', 'update', null, bucket()],
        ['environment', 'delete', null, bucket()],
      ],
    );
    assert.equal(JSON.parse(rows[1]!.snapshot).script, 'log(1)');
  });
});
