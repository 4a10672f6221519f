import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';

describe('configuration from the environment', () => {
  test('defaults of DESIGN §1', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.publicUrl, 'http://localhost:8080');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.smtpUrl, undefined);
    assert.equal(config.egressPolicy, 'allow-all');
    assert.equal(config.logLevel, 'info');
  });

  test('PUBLIC_URL follows PORT unless set, and loses a trailing slash', () => {
    assert.equal(loadConfig({ PORT: '9000' }).publicUrl, 'http://localhost:9000');
    assert.equal(
      loadConfig({ PUBLIC_URL: 'https://vigil.example.com/' }).publicUrl,
      'https://vigil.example.com',
    );
  });

  test('bad values are refused with the setting named', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'x' }, /PORT/],
      [{ PORT: '70000' }, /PORT/],
      [{ PUBLIC_URL: 'ftp://x' }, /PUBLIC_URL/],
      [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
      [{ EGRESS_POLICY: 'open' }, /EGRESS_POLICY/],
      [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
      [{ BODY_LIMIT: '-1' }, /BODY_LIMIT/],
      [{ SQLITE_SYNCHRONOUS: 'OFF' }, /SQLITE_SYNCHRONOUS/],
      [{ REGION: 'Not A Region' }, /REGION/],
      [{ WORKER_CONCURRENCY: '0' }, /WORKER_CONCURRENCY/],
      [{ RESPONSE_BODY_LIMIT: '10' }, /RESPONSE_BODY_LIMIT/],
      [{ RUN_TIMEOUT: 'soon' }, /RUN_TIMEOUT/],
      [{ RESULTS_KEEP_FULL: '0' }, /RESULTS_KEEP_FULL/],
    ];
    for (const [env, message] of cases)
      assert.throws(
        () => loadConfig(env),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
      );
  });

  test('a PostgreSQL URL selects PostgreSQL', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).databaseUrl, 'postgres://u@h/db');
    assert.equal(loadConfig({ EGRESS_POLICY: 'public-only' }).egressPolicy, 'public-only');
  });

  test('runner and store settings have defaults and take valid values', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.sqliteSynchronous, 'NORMAL');
    assert.equal(defaults.region, 'local');
    assert.equal(defaults.workerConcurrency, 10);
    assert.equal(defaults.runTimeoutSeconds, 900);
    assert.equal(loadConfig({ SQLITE_SYNCHRONOUS: 'full' }).sqliteSynchronous, 'FULL');
    assert.equal(loadConfig({ REGION: 'eu-west' }).region, 'eu-west');
  });
});
