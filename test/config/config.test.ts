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
    assert.equal(config.apiCompat, 'spec');
  });

  test('API_COMPAT is spec or runscope', () => {
    assert.equal(loadConfig({ API_COMPAT: 'runscope' }).apiCompat, 'runscope');
    assert.equal(loadConfig({ API_COMPAT: 'spec' }).apiCompat, 'spec');
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
      [{ CHECK_TIMEOUT_MS: '5' }, /CHECK_TIMEOUT_MS must be between 10 and 60000/],
      [{ CHECK_TIMEOUT_MS: '1.5' }, /CHECK_TIMEOUT_MS must be a whole number/],
      [{ RESULTS_KEEP_FULL: '0' }, /RESULTS_KEEP_FULL/],
      [{ GATEWAY_EGRESS_POLICY: 'open' }, /GATEWAY_EGRESS_POLICY/],
      [{ TRAFFIC_PORT: '8080' }, /TRAFFIC_PORT must differ from PORT/],
      [{ TRAFFIC_PUBLIC_URL: 'http://localhost:8080/' }, /another origin than PUBLIC_URL/],
      [{ TRAFFIC_PUBLIC_URL: 'ftp://x' }, /TRAFFIC_PUBLIC_URL/],
      [{ GATEWAY_DOMAIN: 'not a domain' }, /GATEWAY_DOMAIN/],
      [{ GATEWAY_DOMAIN: 'localhost' }, /GATEWAY_DOMAIN/],
      [{ SHUTDOWN_GRACE: 'a while' }, /SHUTDOWN_GRACE/],
      [{ MIN_FREE_DISK: '100 TB' }, /MIN_FREE_DISK must be a size/],
      [{ MIN_FREE_DISK: '-5MB' }, /MIN_FREE_DISK/],
      [{ API_COMPAT: 'Runscope' }, /API_COMPAT must be spec or runscope/],
      [{ METRICS_ENABLED: 'no' }, /METRICS_ENABLED must be true or false/],
      [{ DATABASE_PREPARED_STATEMENTS: 'off' }, /DATABASE_PREPARED_STATEMENTS must be true or false/],
      [{ METRICS_TOKEN: 'short' }, /METRICS_TOKEN must be 16 to 512/],
      [{ METRICS_TOKEN: 'has a space in it, sixteen+' }, /METRICS_TOKEN/],
      [{ METRICS_PORT: '8080' }, /METRICS_PORT must differ from PORT/],
      [{ METRICS_PORT: '8081' }, /METRICS_PORT must differ from PORT and TRAFFIC_PORT/],
      [{ METRICS_PORT: '70000' }, /METRICS_PORT must be between 0 and 65535/],
    ];
    for (const [env, message] of cases)
      assert.throws(
        () => loadConfig(env),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
      );
  });

  test('traffic has its own origin: the next port by default, the gateway public-only', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.trafficPort, 8081);
    assert.equal(defaults.trafficPublicUrl, 'http://localhost:8081');
    assert.equal(defaults.gatewayEgressPolicy, 'public-only');
    assert.equal(defaults.gatewayDomain, undefined);
    const custom = loadConfig({
      PORT: '9000',
      PUBLIC_URL: 'https://vigil.example.com',
      GATEWAY_EGRESS_POLICY: 'allow-all',
      GATEWAY_DOMAIN: 'GW.Example.com.',
    });
    assert.equal(custom.trafficPort, 9001);
    assert.equal(custom.trafficPublicUrl, 'https://vigil.example.com:9001');
    assert.equal(custom.gatewayEgressPolicy, 'allow-all');
    assert.equal(custom.gatewayDomain, 'gw.example.com');
    const own = loadConfig({ TRAFFIC_PORT: '7000', TRAFFIC_PUBLIC_URL: 'https://traffic.example.com/' });
    assert.equal(own.trafficPort, 7000);
    assert.equal(own.trafficPublicUrl, 'https://traffic.example.com');
  });

  test('metrics are on by default on the API origin, without a token', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.metricsEnabled, true);
    assert.equal(defaults.metricsToken, undefined);
    assert.equal(defaults.metricsPort, 0);
    const custom = loadConfig({
      METRICS_ENABLED: 'FALSE',
      METRICS_TOKEN: 'a-token-of-sixteen-or-more',
      METRICS_PORT: '9464',
    });
    assert.equal(custom.metricsEnabled, false);
    assert.equal(custom.metricsToken, 'a-token-of-sixteen-or-more');
    assert.equal(custom.metricsPort, 9464);
  });

  test('a PostgreSQL URL selects PostgreSQL', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).databaseUrl, 'postgres://u@h/db');
    assert.equal(loadConfig({}).databasePreparedStatements, true);
    assert.equal(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'FALSE' }).databasePreparedStatements, false);
    assert.equal(loadConfig({ EGRESS_POLICY: 'public-only' }).egressPolicy, 'public-only');
  });

  test('runner and store settings have defaults and take valid values', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.sqliteSynchronous, 'NORMAL');
    assert.equal(defaults.region, 'local');
    assert.equal(defaults.workerConcurrency, 10);
    assert.equal(defaults.runTimeoutSeconds, 900);
    assert.equal(defaults.checkTimeoutMs, 1000);
    assert.equal(loadConfig({ CHECK_TIMEOUT_MS: '250' }).checkTimeoutMs, 250);
    assert.equal(loadConfig({ SQLITE_SYNCHRONOUS: 'full' }).sqliteSynchronous, 'FULL');
    assert.equal(loadConfig({ REGION: 'eu-west' }).region, 'eu-west');
  });

  test('reliability settings: SHUTDOWN_GRACE in seconds, MIN_FREE_DISK in bytes or with a unit', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.shutdownGraceSeconds, 30);
    assert.equal(defaults.minFreeDisk, 100 * 1024 * 1024);
    assert.equal(loadConfig({ SHUTDOWN_GRACE: '0' }).shutdownGraceSeconds, 0);
    assert.equal(loadConfig({ MIN_FREE_DISK: '512KB' }).minFreeDisk, 512 * 1024);
    assert.equal(loadConfig({ MIN_FREE_DISK: '2 gb' }).minFreeDisk, 2 * 1024 ** 3);
    assert.equal(loadConfig({ MIN_FREE_DISK: '4096' }).minFreeDisk, 4096);
  });
});
