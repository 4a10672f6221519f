import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  defaultSqliteDriver,
  SQLITE_DRIVERS,
  type SqliteDriverName,
  sqliteDriverUnavailable,
} from '../../src/store/dialects/sqlite-drivers.js';
import { newId } from '../../src/domain/ids.js';
import { sqliteErrorCode, Store } from '../../src/store/store.js';
import { loadConfig } from '../../src/config/config.js';
import { seedBucketWithTest } from '../helpers/seed.js';

const nodeMajor = Number(process.versions.node.split('.')[0]);
const available = SQLITE_DRIVERS.filter((driver) => sqliteDriverUnavailable(driver) === null);

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-driver-'));
  dirs.push(dir);
  return dir;
}

async function openMigrated(dataDir: string, driver: SqliteDriverName): Promise<Store> {
  const store = Store.open({ dataDir, sqliteDriver: driver });
  await store.migrate();
  return store;
}

describe('SQLite drivers: which runs where', () => {
  test('node:sqlite wherever this Node has it, better-sqlite3 on Node 20; never better-sqlite3 12 on 24+', () => {
    if (nodeMajor <= 20) assert.equal(defaultSqliteDriver(), 'better-sqlite3');
    if (nodeMajor >= 24) {
      assert.equal(defaultSqliteDriver(), 'node:sqlite');
      assert.match(sqliteDriverUnavailable('better-sqlite3')!, /aborts on Node/);
      assert.throws(
        () => Store.open({ dataDir: ':memory:', sqliteDriver: 'better-sqlite3' }),
        /better-sqlite3 cannot run here/,
      );
    }
    assert.ok(available.includes(defaultSqliteDriver()));
    assert.equal(Store.open({ dataDir: ':memory:' }).driver, defaultSqliteDriver());
  });

  test('SQLITE_DRIVER picks one by hand and names the choices when wrong', () => {
    assert.equal(loadConfig({}).sqliteDriver, undefined);
    for (const driver of available) assert.equal(loadConfig({ SQLITE_DRIVER: driver }).sqliteDriver, driver);
    for (const driver of SQLITE_DRIVERS.filter((d) => !available.includes(d))) {
      assert.throws(
        () => loadConfig({ SQLITE_DRIVER: driver }),
        new RegExp(`SQLITE_DRIVER=${driver} cannot run here`),
      );
      // PostgreSQL opens no SQLite at all.
      assert.equal(
        loadConfig({ SQLITE_DRIVER: driver, DATABASE_URL: 'postgres://x@y/z' }).sqliteDriver,
        driver,
      );
    }
    assert.throws(
      () => loadConfig({ SQLITE_DRIVER: 'sqlite3' }),
      /SQLITE_DRIVER must be node:sqlite or better-sqlite3, got "sqlite3"/,
    );
  });
});

for (const driver of SQLITE_DRIVERS) {
  const skip = sqliteDriverUnavailable(driver) ?? false;
  describe(`SQLite driver ${driver}`, { skip }, () => {
    test('rows are plain objects, numbers stay numbers', async () => {
      const store = await openMigrated(tempDir(), driver);
      try {
        assert.equal(store.driver, driver);
        const { testId, now } = await seedBucketWithTest(store, 'plainrows001');
        const row = await store.db
          .selectFrom('tests')
          .select(['id', 'created_at'])
          .where('id', '=', testId)
          .executeTakeFirstOrThrow();
        assert.equal(Object.getPrototypeOf(row), Object.prototype);
        assert.deepEqual(row, { id: testId, created_at: now });
      } finally {
        await store.close();
      }
    });

    test('sqliteErrorCode names unique, foreign-key and not-null violations', async () => {
      const store = await openMigrated(tempDir(), driver);
      try {
        const { testId } = await seedBucketWithTest(store, 'errorcodes01');
        const failure = (promise: Promise<unknown>) =>
          promise.then(
            () => assert.fail('the statement succeeded'),
            (error: unknown) => sqliteErrorCode(error),
          );
        const test = await store.db
          .selectFrom('tests')
          .selectAll()
          .where('id', '=', testId)
          .executeTakeFirstOrThrow();
        assert.equal(
          await failure(store.db.insertInto('tests').values(test).execute()),
          'SQLITE_CONSTRAINT_UNIQUE',
        );
        assert.equal(
          await failure(
            store.db
              .insertInto('tests')
              .values({ ...test, id: newId(), trigger_id: newId(), bucket_key: 'nosuchbucket' })
              .execute(),
          ),
          'SQLITE_CONSTRAINT_FOREIGNKEY',
        );
        assert.equal(
          await failure(
            store.db
              .updateTable('tests')
              .set({ name: null as unknown as string })
              .where('id', '=', testId)
              .execute(),
          ),
          'SQLITE_CONSTRAINT_NOTNULL',
        );
        assert.equal(
          await failure(
            store.db
              .selectFrom('no_such_table' as 'tests')
              .selectAll()
              .execute(),
          ),
          'SQLITE_ERROR',
        );
      } finally {
        await store.close();
      }
    });
  });
}

describe('sqliteErrorCode on errors that are not SQLite errors', () => {
  test('undefined, also for PostgreSQL errors and plain errors', () => {
    assert.equal(sqliteErrorCode(new Error('x')), undefined);
    assert.equal(sqliteErrorCode(Object.assign(new Error('dup'), { code: '23505' })), undefined);
    assert.equal(sqliteErrorCode(undefined), undefined);
    assert.equal(sqliteErrorCode('SQLITE_FULL'), undefined);
  });

  test('both drivers’ shapes of one error give one name', () => {
    const better = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const node = Object.assign(new Error('database or disk is full'), {
      code: 'ERR_SQLITE_ERROR',
      errcode: 13,
      errstr: 'database or disk is full',
    });
    assert.equal(sqliteErrorCode(better), 'SQLITE_FULL');
    assert.equal(sqliteErrorCode(node), 'SQLITE_FULL');
    // An extended code the table lacks falls back to its primary code.
    assert.equal(sqliteErrorCode({ code: 'ERR_SQLITE_ERROR', errcode: 13 + 99 * 256 }), 'SQLITE_FULL');
  });
});

describe(
  'one file format: a store made by one driver opens under the other',
  {
    skip:
      available.length < 2
        ? `only ${available.join()} runs on Node ${process.version}; both run on Node 22`
        : false,
  },
  () => {
    for (const [first, second] of [
      ['node:sqlite', 'better-sqlite3'],
      ['better-sqlite3', 'node:sqlite'],
    ] as const) {
      test(`made by ${first}, opened by ${second}`, async () => {
        const dataDir = tempDir();
        const made = await openMigrated(dataDir, first);
        const { testId } = await seedBucketWithTest(made, 'fileformat01');
        await made.close();
        const opened = Store.open({ dataDir, sqliteDriver: second });
        try {
          assert.equal(opened.driver, second);
          assert.deepEqual(await opened.migrate(), [], 'the schema is already there');
          const row = await opened.db
            .selectFrom('tests')
            .select('id')
            .where('id', '=', testId)
            .executeTakeFirst();
          assert.deepEqual(row, { id: testId });
          await opened.db
            .updateTable('tests')
            .set({ name: 'written by the other' })
            .where('id', '=', testId)
            .execute();
        } finally {
          await opened.close();
        }
        const back = Store.open({ dataDir, sqliteDriver: first });
        try {
          const row = await back.db
            .selectFrom('tests')
            .select('name')
            .where('id', '=', testId)
            .executeTakeFirst();
          assert.deepEqual(row, { name: 'written by the other' });
        } finally {
          await back.close();
        }
      });
    }
  },
);
