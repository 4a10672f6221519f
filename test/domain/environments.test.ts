import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEFAULT_SETTINGS,
  type EnvironmentSettings,
  normalizeSettings,
  resolveSettings,
  SETTING_KEYS,
  type StoredSettings,
  withDefaults,
} from '../../src/domain/environments.js';

const UUID_A = '6f1c7c52-4b1e-4c55-9a34-0d7f0b1f9a01';
const UUID_B = '6f1c7c52-4b1e-4c55-9a34-0d7f0b1f9a02';

describe('normalizeSettings', () => {
  test('an empty input stores nothing, so every setting is inherited', () => {
    assert.deepEqual(normalizeSettings({}), {});
  });

  test('only the settings present in the input are stored', () => {
    assert.deepEqual(normalizeSettings({ verify_ssl: false, script: 'log(1)' }), {
      verify_ssl: false,
      script: 'log(1)',
    });
  });

  test('false, empty strings and empty collections count as set', () => {
    assert.deepEqual(
      normalizeSettings({
        preserve_cookies: false,
        retry_on_failure: false,
        stop_on_failure: false,
        verify_ssl: false,
        script: '',
        client_certificate: '',
        regions: [],
        initial_variables: {},
        integrations: [],
        remote_agents: [],
      }),
      {
        preserve_cookies: false,
        retry_on_failure: false,
        stop_on_failure: false,
        verify_ssl: false,
        script: '',
        client_certificate: '',
        regions: [],
        initial_variables: {},
        integrations: [],
        remote_agents: [],
      },
    );
  });

  test('emails are completed with defaults for the properties left out', () => {
    assert.deepEqual(normalizeSettings({ emails: {} }).emails, {
      notify_all: false,
      notify_on: 'all',
      notify_threshold: null,
      recipients: [],
    });
    assert.deepEqual(
      normalizeSettings({
        emails: {
          notify_all: true,
          notify_on: 'threshold',
          notify_threshold: 3,
          recipients: [{ email: 'ops@example.com', name: 'Ops', id: UUID_A }, { email: 'dev@example.com' }],
        },
      }).emails,
      {
        notify_all: true,
        notify_on: 'threshold',
        notify_threshold: 3,
        recipients: [
          { email: 'ops@example.com', name: 'Ops', id: UUID_A },
          { email: 'dev@example.com', name: '', id: '' },
        ],
      },
    );
  });

  test('every notify_on value is kept', () => {
    for (const notifyOn of ['all', 'failures', 'threshold', 'switch'] as const) {
      assert.equal(normalizeSettings({ emails: { notify_on: notifyOn } }).emails?.notify_on, notifyOn);
    }
  });

  test('auth keeps only the properties of the chosen method', () => {
    assert.deepEqual(normalizeSettings({ auth: {} }).auth, {});
    assert.deepEqual(
      normalizeSettings({ auth: { auth_type: 'basic', username: 'u', access_token: 'dropped' } }).auth,
      { auth_type: 'basic', username: 'u', password: '' },
    );
    assert.deepEqual(
      normalizeSettings({ auth: { auth_type: 'oauth_1', consumer_key: 'ck', username: 'dropped' } }).auth,
      {
        auth_type: 'oauth_1',
        access_token: '',
        consumer_secret: '',
        consumer_key: 'ck',
        token_secret: '',
        signature_type: 'auth_header',
      },
    );
    assert.equal(
      (normalizeSettings({ auth: { auth_type: 'oauth_1', signature_type: 'query' } }).auth as any)
        .signature_type,
      'query',
    );
    assert.deepEqual(
      normalizeSettings({ auth: { auth_type: 'client_certificate', password: 'dropped' } }).auth,
      { auth_type: 'client_certificate' },
    );
  });

  test('integrations and remote agents get empty strings for missing descriptions and names', () => {
    const out = normalizeSettings({
      integrations: [{ id: UUID_A }, { id: UUID_B, integration_type: 'partner-inspector', description: 'x' }],
      remote_agents: [{ uuid: UUID_A }, { uuid: UUID_B, name: 'lab' }],
    });
    assert.deepEqual(out.integrations, [
      { description: '', integration_type: '', id: UUID_A },
      { description: 'x', integration_type: 'partner-inspector', id: UUID_B },
    ]);
    assert.deepEqual(out.remote_agents, [
      { name: '', uuid: UUID_A },
      { name: 'lab', uuid: UUID_B },
    ]);
  });

  test('webhooks may be a list or an explicit null', () => {
    assert.deepEqual(normalizeSettings({ webhooks: ['https://hooks.example.com/a'] }).webhooks, [
      'https://hooks.example.com/a',
    ]);
    const cleared = normalizeSettings({ webhooks: null });
    assert.ok('webhooks' in cleared);
    assert.equal(cleared.webhooks, null);
  });

  test('the output shares no collection with the input', () => {
    const input = {
      initial_variables: { a: '1' },
      regions: ['eu-west'],
      webhooks: ['https://hooks.example.com/a'],
    };
    const out = normalizeSettings(input);
    out.initial_variables!['b'] = '2';
    out.regions!.push('us-east');
    out.webhooks!.push('https://hooks.example.com/b');
    assert.deepEqual(input, {
      initial_variables: { a: '1' },
      regions: ['eu-west'],
      webhooks: ['https://hooks.example.com/a'],
    });
  });
});

describe('withDefaults', () => {
  test('nothing stored shows the defaults', () => {
    assert.deepEqual(withDefaults({}), DEFAULT_SETTINGS);
  });

  test('the defaults are the documented ones', () => {
    assert.deepEqual(DEFAULT_SETTINGS, {
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
    assert.deepEqual(Object.keys(DEFAULT_SETTINGS).sort(), [...SETTING_KEYS].sort());
  });

  test('stored settings replace the defaults, the rest stay', () => {
    const shown = withDefaults({ verify_ssl: false, regions: ['eu-west'], webhooks: [] });
    assert.equal(shown.verify_ssl, false);
    assert.deepEqual(shown.regions, ['eu-west']);
    assert.deepEqual(shown.webhooks, []);
    assert.equal(shown.script, '');
    assert.deepEqual(shown.emails, DEFAULT_SETTINGS.emails);
  });

  test('a stored setting replaces the default whole, without merging', () => {
    const shown = withDefaults({ initial_variables: { only: 'me' } });
    assert.deepEqual(shown.initial_variables, { only: 'me' });
  });

  test('every setting key is present in the result', () => {
    assert.deepEqual(Object.keys(withDefaults({ script: 'x' })).sort(), [...SETTING_KEYS].sort());
  });
});

describe('resolveSettings', () => {
  test('an empty chain resolves to the defaults', () => {
    assert.deepEqual(resolveSettings([]), DEFAULT_SETTINGS);
  });

  test('a single environment resolves like withDefaults', () => {
    const stored: StoredSettings = {
      verify_ssl: false,
      initial_variables: { a: '1' },
      emails: { notify_all: true, notify_on: 'switch', notify_threshold: null, recipients: [] },
    };
    assert.deepEqual(resolveSettings([stored]), withDefaults(stored));
  });

  test('the nearest environment that sets a field wins (the chain is child first)', () => {
    const child: StoredSettings = { verify_ssl: false };
    const parent: StoredSettings = { verify_ssl: true, script: 'parent()', retry_on_failure: true };
    const grandparent: StoredSettings = {
      script: 'grandparent()',
      regions: ['eu-west'],
      retry_on_failure: false,
      client_certificate: 'PEM',
    };
    const resolved = resolveSettings([child, parent, grandparent]);
    assert.equal(resolved.verify_ssl, false, 'from the child');
    assert.equal(resolved.script, 'parent()', 'the parent is nearer than the grandparent');
    assert.equal(resolved.retry_on_failure, true, 'the parent is nearer than the grandparent');
    assert.deepEqual(resolved.regions, ['eu-west'], 'only the grandparent sets it');
    assert.equal(resolved.client_certificate, 'PEM');
    assert.equal(resolved.stop_on_failure, false, 'set by none: the default');
    assert.equal(resolved.webhooks, null, 'set by none: the default');
  });

  test('false and empty values set by a child still win over a parent', () => {
    const resolved = resolveSettings([
      { preserve_cookies: false, script: '', regions: [] },
      { preserve_cookies: true, script: 'parent()', regions: ['eu-west'] },
    ]);
    assert.equal(resolved.preserve_cookies, false);
    assert.equal(resolved.script, '');
    assert.deepEqual(resolved.regions, []);
  });

  test('webhooks set to null by a child win over a parent list', () => {
    const resolved = resolveSettings([{ webhooks: null }, { webhooks: ['https://hooks.example.com/p'] }]);
    assert.equal(resolved.webhooks, null);
    const inherited = resolveSettings([{}, { webhooks: ['https://hooks.example.com/p'] }]);
    assert.deepEqual(inherited.webhooks, ['https://hooks.example.com/p']);
  });

  test('object settings other than initial_variables come whole from the nearest environment', () => {
    const parentEmails: EnvironmentSettings['emails'] = {
      notify_all: true,
      notify_on: 'threshold',
      notify_threshold: 5,
      recipients: [{ email: 'p@example.com', name: 'P', id: UUID_A }],
    };
    const childEmails: EnvironmentSettings['emails'] = {
      notify_all: false,
      notify_on: 'failures',
      notify_threshold: null,
      recipients: [],
    };
    assert.deepEqual(
      resolveSettings([{ emails: childEmails }, { emails: parentEmails }]).emails,
      childEmails,
    );
    assert.deepEqual(resolveSettings([{}, { emails: parentEmails }]).emails, parentEmails);
    assert.deepEqual(
      resolveSettings([
        { auth: { auth_type: 'client_certificate' } },
        { auth: { auth_type: 'basic', username: 'u', password: 'p' } },
      ]).auth,
      { auth_type: 'client_certificate' },
    );
  });

  test('initial_variables are merged along the chain, the child winning', () => {
    const resolved = resolveSettings([
      { initial_variables: { user: 'child', only_child: 'c' } },
      { initial_variables: { user: 'parent', host: 'parent-host', only_parent: 'p' } },
      { initial_variables: { user: 'root', host: 'root-host', only_root: 'r' } },
    ]);
    assert.deepEqual(resolved.initial_variables, {
      user: 'child',
      host: 'parent-host',
      only_child: 'c',
      only_parent: 'p',
      only_root: 'r',
    });
  });

  test('an environment without initial_variables inherits them all', () => {
    const resolved = resolveSettings([{ verify_ssl: false }, { initial_variables: { host: 'h' } }]);
    assert.deepEqual(resolved.initial_variables, { host: 'h' });
  });

  test('an empty string variable set by the child still wins', () => {
    const resolved = resolveSettings([
      { initial_variables: { token: '' } },
      { initial_variables: { token: 'x' } },
    ]);
    assert.deepEqual(resolved.initial_variables, { token: '' });
  });

  test('the environments of the chain are left unchanged', () => {
    const child: StoredSettings = { initial_variables: { a: 'child' } };
    const parent: StoredSettings = { initial_variables: { a: 'parent', b: 'parent' }, verify_ssl: false };
    const resolved = resolveSettings([child, parent]);
    resolved.initial_variables['c'] = 'added';
    assert.deepEqual(child, { initial_variables: { a: 'child' } });
    assert.deepEqual(parent, { initial_variables: { a: 'parent', b: 'parent' }, verify_ssl: false });
    assert.deepEqual(resolveSettings([]).initial_variables, {});
  });
});
