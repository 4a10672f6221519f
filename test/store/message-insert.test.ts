import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { normalizeItem } from '../../src/capture/normalize.js';
import { newTimeOrderedId } from '../../src/domain/ids.js';
import type { MessageRow } from '../../src/store/database.js';
import { bucketsRepo } from '../../src/store/repositories/buckets.js';
import { messageRow, messagesRepo } from '../../src/store/repositories/messages.js';
import { teamsRepo } from '../../src/store/repositories/teams.js';
import { tokensRepo } from '../../src/store/repositories/tokens.js';
import { Store } from '../../src/store/store.js';
import { dialects, freshPostgresDatabase } from '../helpers/dialects.js';
import { seedBucketWithTest } from '../helpers/seed.js';

const BUCKET = 'insertbucket000001';

/** A message row of the API's own making, with something different in every column it can vary. */
function row(n: number): MessageRow {
  const item = normalizeItem(
    {
      request: {
        method: n % 2 === 0 ? 'POST' : 'GET',
        url: `https://api.example.com/orders/${n}?page=${n % 7}`,
        headers: { 'Content-Type': 'application/json', 'X-N': String(n) },
        body: JSON.stringify({ n, text: `it's "quoted" \\ ${'é'.repeat(n % 5)}` }),
        timestamp: 1_700_000_000 + n / 1000,
      },
      response: {
        status: n % 13 === 0 ? 500 : 200,
        headers: { 'Content-Type': 'application/json' },
        body: `{"ok":${n % 13 !== 0}}`,
        timestamp: 1_700_000_000 + n / 1000 + 0.01,
      },
    },
    1_700_000_100,
  );
  if (!item.ok) throw new Error(item.error.message);
  return messageRow(newTimeOrderedId(), BUCKET, item.message, 1_700_000_100);
}

const sameRows = (rows: MessageRow[]) =>
  [...rows].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => ({ ...r }) as Record<string, unknown>);

/**
 * `messagesRepo.insert`: one statement per row on SQLite; on PostgreSQL one statement of the batch's
 * rows, kept prepared per connection, and split every 1,000 rows.
 */
for (const { fixture, skip } of await dialects()) {
  describe(`inserting messages [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
      await seedBucketWithTest(store, BUCKET);
    });
    after(async () => cleanup?.());

    test('batches of 1, 50 and 1,001 rows store every column as given', async () => {
      let written: MessageRow[] = [];
      let n = 0;
      for (const size of [1, 50, 50, 1_001]) {
        const rows = Array.from({ length: size }, () => row(n++));
        await store.transaction((trx) => messagesRepo.insert(trx, rows));
        written = written.concat(rows);
      }
      const stored = await store.db
        .selectFrom('messages')
        .selectAll()
        .where('bucket_key', '=', BUCKET)
        .execute();
      assert.equal(stored.length, written.length);
      assert.deepEqual(sameRows(stored), sameRows(written));
    });

    test('the usage count adds up across calls', async () => {
      const before = (await messagesRepo.usage(store.db, BUCKET)).received;
      await store.transaction((trx) => messagesRepo.countReceived(trx, BUCKET, 7));
      await store.transaction((trx) => messagesRepo.countReceived(trx, BUCKET, 5));
      assert.equal((await messagesRepo.usage(store.db, BUCKET)).received, before + 12);
    });

    if (fixture.name === 'postgres') {
      test('the batch insert, the usage count and the reads of every request are kept prepared', async () => {
        const statements = await store.transaction(async (trx) => {
          await tokensRepo.findLiveByHash(trx, 'no-such-hash', 1_700_000_000);
          await teamsRepo.membershipByBucket(trx, BUCKET, 'no-such-account');
          await bucketsRepo.getForAccount(trx, BUCKET, 'no-such-account');
          await messagesRepo.insert(trx, [row(5_000), row(5_001)]);
          await messagesRepo.countReceived(trx, BUCKET, 2);
          const { rows } = await sql<{ name: string; statement: string }>`
            select name, statement from pg_prepared_statements where name like 'vigil_%'`.execute(trx);
          return rows;
        });
        const inserts = statements.filter((s) => /^insert into "messages"/.test(s.statement));
        assert.ok(
          inserts.some((s) => (s.statement.match(/\$\d+/g) ?? []).length === 2 * 20),
          JSON.stringify(statements),
        );
        const reads = ['from "access_tokens"', 'from "buckets"', '"teams"."name" as "team_name"'];
        for (const table of ['insert into "bucket_usage"', ...reads])
          assert.ok(
            statements.some((s) => s.statement.includes(table)),
            `${table}: ${JSON.stringify(statements)}`,
          );
      });
    }
  });
}

describe('DATABASE_PREPARED_STATEMENTS=false [postgres]', { skip: (await dialects())[1]!.skip }, () => {
  test('every statement goes unnamed, and the inserts still store their rows', async () => {
    const database = await freshPostgresDatabase();
    const store = Store.open({ databaseUrl: database.url, dataDir: '', databasePreparedStatements: false });
    try {
      await store.migrate();
      await seedBucketWithTest(store, BUCKET);
      const rows = Array.from({ length: 50 }, (_, i) => row(i));
      const named = await store.transaction(async (trx) => {
        await messagesRepo.insert(trx, rows);
        await messagesRepo.countReceived(trx, BUCKET, rows.length);
        const { rows: statements } = await sql<{ name: string }>`
          select name from pg_prepared_statements where name like 'vigil_%'`.execute(trx);
        return statements;
      });
      assert.deepEqual(named, []);
      const stored = await store.db.selectFrom('messages').selectAll().execute();
      assert.deepEqual(sameRows(stored), sameRows(rows));
      assert.equal((await messagesRepo.usage(store.db, BUCKET)).received, 50);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});
