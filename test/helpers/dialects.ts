import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Store } from '../../src/store/store.js';

/**
 * Store and API suites run once per dialect. SQLite always; PostgreSQL at TEST_DATABASE_URL
 * (default postgres://root@127.0.0.1:5432/postgres), each suite in a database of its own that is
 * dropped afterwards. Under CI PostgreSQL is required; elsewhere its suite is skipped, loudly, when
 * the server does not answer.
 */
export interface DialectFixture {
  name: 'sqlite' | 'postgres';
  /** Opens a fresh, migrated store; `cleanup` removes it. */
  create(): Promise<{ store: Store; databaseUrl?: string; dataDir: string; cleanup(): Promise<void> }>;
}

export const ADMIN_URL = process.env.TEST_DATABASE_URL || 'postgres://root@127.0.0.1:5432/postgres';

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const sqlite: DialectFixture = {
  name: 'sqlite',
  async create() {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-test-'));
    const store = Store.open({ dataDir });
    await store.migrate();
    return {
      store,
      dataDir,
      async cleanup() {
        await store.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
};

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh PostgreSQL database: its URL and a function that drops it. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `vigil_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`drop database if exists ${name} with (force)`) };
}

const postgres: DialectFixture = {
  name: 'postgres',
  async create() {
    const database = await freshPostgresDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-test-'));
    const store = Store.open({ databaseUrl: database.url, dataDir });
    await store.migrate();
    return {
      store,
      databaseUrl: database.url,
      dataDir,
      async cleanup() {
        await store.close();
        await database.drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
};

let postgresAvailable: Promise<boolean> | undefined;

/** The dialects to run on, each with `skip` set when it cannot run here. */
export async function dialects(): Promise<{ fixture: DialectFixture; skip: string | false }[]> {
  postgresAvailable ??= postgresAnswers();
  const pgUp = await postgresAvailable;
  if (!pgUp && process.env.CI)
    throw new Error(`PostgreSQL does not answer at ${ADMIN_URL}, and CI requires it`);
  return [
    { fixture: sqlite, skip: false },
    { fixture: postgres, skip: pgUp ? false : `PostgreSQL does not answer at ${ADMIN_URL}` },
  ];
}
