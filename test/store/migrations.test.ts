import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Migrator } from 'kysely';
import type { NewMessage } from '../../src/domain/messages.js';
import { latencyBucket } from '../../src/domain/metrics.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { messageRow } from '../../src/store/repositories/messages.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';
import { runRow, seedBucketWithTest } from '../helpers/seed.js';

/** A message as stored before migration 0010: none of the list-filter columns. */
function storedBefore0010(id: string, bucketKey: string, url: string, host: string) {
  const message = {
    source: 'api',
    unique_identifier: null,
    note: null,
    request: {
      method: 'get',
      url,
      scheme: 'https',
      host,
      path: '/A/b',
      params: {},
      headers: {},
      timestamp: 1_700_000_000,
      body: '',
      body_encoding: 'utf8',
      size_bytes: 0,
    },
    response: {
      status: 503,
      reason: 'Service Unavailable',
      headers: {},
      timestamp: 1_700_000_001,
      response_time: 1,
      body: '',
      body_encoding: 'utf8',
      size_bytes: 0,
    },
  } as unknown as NewMessage;
  const row: Record<string, unknown> = { ...messageRow(id, bucketKey, message, 1_700_000_002) };
  for (const column of [
    'request_method',
    'request_host',
    'request_path',
    'request_target',
    'response_status',
  ]) {
    delete row[column];
  }
  return row;
}

for (const { fixture, skip } of await dialects()) {
  describe(`migrations [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
    });
    after(async () => cleanup());

    test('0010 fills the filter columns of existing messages as new ones get them, letters of any script', async () => {
      const migrator = new Migrator({ db: store.db, provider: migrationProvider });
      const down = await migrator.migrateTo('0009_dashboard_client');
      assert.ifError(down.error);
      await seedBucketWithTest(store, 'migrate00001');
      await store.db
        .insertInto('messages')
        .values([
          storedBefore0010(
            'm-ascii',
            'migrate00001',
            'HTTPS://Api.Example.com:8443/A/b?Q=1',
            'Api.Example.com:8443',
          ),
          storedBefore0010('m-other', 'migrate00001', 'https://Bücher.Example/A/b?Q=Ä', 'Bücher.Example'),
        ] as never)
        .execute();
      const up = await migrator.migrateToLatest();
      assert.ifError(up.error);
      const rows = await store.db
        .selectFrom('messages')
        .select(['id', 'request_method', 'request_host', 'request_path', 'request_target', 'response_status'])
        .orderBy('id')
        .execute();
      assert.deepEqual(rows, [
        {
          id: 'm-ascii',
          request_method: 'GET',
          request_host: 'api.example.com:8443',
          request_path: '/A/b',
          request_target: 'api.example.com:8443/a/b?q=1',
          response_status: 503,
        },
        {
          id: 'm-other',
          request_method: 'GET',
          request_host: 'bücher.example',
          request_path: '/A/b',
          request_target: 'bücher.example/a/b?q=ä',
          response_status: 503,
        },
      ]);
    });

    test('0018 backfills the daily rollups from finished pass/fail runs, subtest runs aside', async () => {
      const migrator = new Migrator({ db: store.db, provider: migrationProvider });
      const down = await migrator.migrateTo('0017_alerting');
      assert.ifError(down.error);
      const { testId } = await seedBucketWithTest(store, 'migrate00003');
      const day = 19_675; // 2023-11-14
      const at = (d: number, seconds: number) => (day + d) * 86_400 + seconds;
      const rows = [
        runRow(testId, 'migrate00003', 'pass', at(0, 10)),
        runRow(testId, 'migrate00003', 'fail', at(0, 86_399.2)), // finishes 86_399.7: the same day
        runRow(testId, 'migrate00003', 'pass', at(0, 86_399.6)), // finishes 86_400.1: the next day
        runRow(testId, 'migrate00003', 'canceled', at(1, 50)),
        runRow(testId, 'migrate00003', 'working', at(1, 60)),
        { ...runRow(testId, 'migrate00003', 'fail', at(1, 70)), source: 'subtest' },
        { ...runRow(testId, 'migrate00003', 'fail', at(1, 80)), environment_id: 'other' },
      ];
      await store.db.insertInto('test_runs').values(rows).execute();
      const up = await migrator.migrateToLatest();
      assert.ifError(up.error);
      const rollups = await store.db
        .selectFrom('test_daily_rollups')
        .select(['environment_id', 'day', 'passes', 'fails'])
        .where('test_id', '=', testId)
        .orderBy('day')
        .orderBy('environment_id')
        .execute();
      assert.deepEqual(
        rollups.map((r) => ({ ...r, day: Number(r.day), passes: Number(r.passes), fails: Number(r.fails) })),
        [
          { environment_id: 'e', day, passes: 1, fails: 1 },
          { environment_id: 'e', day: day + 1, passes: 1, fails: 0 },
          { environment_id: 'other', day: day + 1, passes: 0, fails: 1 },
        ],
      );
    });

    test('0020 rolls up the finished pass/fail runs per hour and day, response-time bucket and region', async () => {
      const migrator = new Migrator({ db: store.db, provider: migrationProvider });
      const down = await migrator.migrateTo('0019_runs_recent_index');
      assert.ifError(down.error);
      const { testId } = await seedBucketWithTest(store, 'migrate00020');
      const hour = 472_200; // 2023-11-14 00:00 UTC, in hours
      const at = (seconds: number) => hour * 3_600 + seconds;
      const rows = [
        runRow(testId, 'migrate00020', 'pass', at(10), 100),
        runRow(testId, 'migrate00020', 'fail', at(20), 100.5), // the same bucket as 100 ms
        runRow(testId, 'migrate00020', 'pass', at(3_700), null), // the next hour, no response time
        runRow(testId, 'migrate00020', 'canceled', at(30)),
        runRow(testId, 'migrate00020', 'working', at(40)),
        { ...runRow(testId, 'migrate00020', 'pass', at(50), 100), region: 'eu' },
      ];
      await store.db.insertInto('test_runs').values(rows).execute();
      const up = await migrator.migrateToLatest();
      assert.ifError(up.error);
      const cells = await store.db
        .selectFrom('test_metric_rollups')
        .select(['grain', 'slot', 'region', 'bucket', 'runs', 'passes', 'response_time_sum'])
        .where('test_id', '=', testId)
        .orderBy('grain')
        .orderBy('slot')
        .orderBy('region')
        .orderBy('bucket')
        .execute();
      const bucket = latencyBucket(100);
      assert.equal(latencyBucket(100.5), bucket);
      const region = rows[0]!.region;
      assert.deepEqual(
        cells.map((c) => ({ ...c, slot: Number(c.slot), runs: Number(c.runs), passes: Number(c.passes) })),
        [
          { grain: 3_600, slot: hour, region: 'eu', bucket, runs: 1, passes: 1, response_time_sum: 100 },
          { grain: 3_600, slot: hour, region, bucket, runs: 2, passes: 1, response_time_sum: 200.5 },
          { grain: 3_600, slot: hour + 1, region, bucket: -1, runs: 1, passes: 1, response_time_sum: 0 },
          {
            grain: 86_400,
            slot: hour / 24,
            region: 'eu',
            bucket,
            runs: 1,
            passes: 1,
            response_time_sum: 100,
          },
          { grain: 86_400, slot: hour / 24, region, bucket: -1, runs: 1, passes: 1, response_time_sum: 0 },
          { grain: 86_400, slot: hour / 24, region, bucket, runs: 2, passes: 1, response_time_sum: 200.5 },
        ].sort(
          (a, b) =>
            a.grain - b.grain || a.slot - b.slot || a.region.localeCompare(b.region) || a.bucket - b.bucket,
        ),
      );
    });

    test('0015 takes captures stored without a response out of the error view; other exchanges stay', async () => {
      const migrator = new Migrator({ db: store.db, provider: migrationProvider });
      const down = await migrator.migrateTo('0014_token_name_expiry');
      assert.ifError(down.error);
      await seedBucketWithTest(store, 'migrate00002');
      const unanswered = (id: string, source: NewMessage['source']) => ({
        ...messageRow(
          id,
          'migrate00002',
          {
            source,
            unique_identifier: null,
            note: null,
            request: {
              method: 'POST',
              url: 'https://x.test/hook',
              scheme: 'https',
              host: 'x.test',
              path: '/hook',
              params: {},
              headers: {},
              form: null,
              timestamp: 1_700_000_000,
              body: '',
              body_encoding: 'plaintext',
              size_bytes: 0,
            },
            response: null,
          },
          1_700_000_002,
        ),
        // As stored before 0015: every exchange without a response was an error, captures too.
        is_error: 1,
      });
      await store.db
        .insertInto('messages')
        .values([unanswered('c-old', 'capture'), unanswered('g-old', 'gateway')] as never)
        .execute();
      const up = await migrator.migrateToLatest();
      assert.ifError(up.error);
      const rows = await store.db
        .selectFrom('messages')
        .select(['id', 'is_error', 'response_status'])
        .where('bucket_key', '=', 'migrate00002')
        .orderBy('id')
        .execute();
      assert.deepEqual(rows, [
        { id: 'c-old', is_error: 0, response_status: null },
        { id: 'g-old', is_error: 1, response_status: null },
      ]);
    });
  });
}
