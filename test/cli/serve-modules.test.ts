import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/cli.js';

/** Packages a server on SQLite loads only when a feature first needs them. */
const LAZY = ['pg', 'pg-boss', 'nodemailer', 'undici', 'tough-cookie', 'xpath', '@xmldom/xmldom', 'acorn'];

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-modules-'));
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/**
 * Starts the server in a fresh process (SQLite store, in-process worker and scheduler, SMTP set),
 * answers a request, and reports which of LAZY are loaded; then loads `pg` itself, so the check is
 * seen to notice a loaded package.
 */
const script = `
import { createRequire } from 'node:module';
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/config/config.ts')).href)});
const { createServer } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/main.ts')).href)});
const require = createRequire(import.meta.url);
const lazy = JSON.parse(process.env.MODULES_LAZY);
const loaded = () => lazy.filter((name) =>
  Object.keys(require.cache).some((file) => file.includes('/node_modules/' + name + '/')));
const config = loadConfig({ ...process.env, DATA_DIR: process.env.MODULES_DATA_DIR, DATABASE_URL: '',
  SMTP_URL: 'smtp://127.0.0.1:1', LOG_LEVEL: 'warn', PORT: '0', TRAFFIC_PORT: '0',
  METRICS_ENABLED: process.env.MODULES_METRICS });
const server = await createServer(config, {});
const health = await server.app.inject('/health');
const atStart = loaded();
await server.close();
await import('pg');
console.log(JSON.stringify({ status: health.statusCode, atStart, afterImport: loaded() }));
`;

function modulesAtStart(lazy: string[], metrics: 'true' | 'false') {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: {
      ...process.env,
      MODULES_DATA_DIR: dataDir,
      MODULES_LAZY: JSON.stringify(lazy),
      MODULES_METRICS: metrics,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as {
    status: number;
    atStart: string[];
    afterImport: string[];
  };
}

test('a server on SQLite starts without PostgreSQL, mail, XML or outbound HTTP packages loaded', () => {
  const report = modulesAtStart([...LAZY, 'prom-client'], 'true');
  assert.equal(report.status, 200);
  // Metrics are on by default: their library is the one loaded at start.
  assert.deepEqual(report.atStart, ['prom-client']);
  assert.deepEqual(report.afterImport, ['pg', 'prom-client']);
});

test('with METRICS_ENABLED=false the metrics library is not loaded either', () => {
  const report = modulesAtStart([...LAZY, 'prom-client'], 'false');
  assert.equal(report.status, 200);
  assert.deepEqual(report.atStart, []);
});
