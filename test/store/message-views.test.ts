import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { MESSAGE_VIEWS } from '../../src/domain/messages.js';
import { listQuery } from '../../src/store/repositories/messages.js';
import type { Store } from '../../src/store/store.js';
import { dialects } from '../helpers/dialects.js';

/** The index each view's list reads, newest first. */
const INDEX_OF_VIEW = {
  messages: 'messages_bucket_time',
  errors: 'messages_bucket_errors_only',
  captures: 'messages_bucket_captures_only',
  shared: 'messages_bucket_shared',
} as const;

for (const { fixture, skip } of await dialects()) {
  describe(`message views read their own index [${fixture.name}]`, { skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await fixture.create());
    });
    after(async () => cleanup?.());

    /** The plan of a view's list, as one text. */
    async function planOf(view: (typeof MESSAGE_VIEWS)[number], page: { since?: number }) {
      return store.transaction(async (trx) => {
        const compiled = listQuery(trx, 'bucket-of-the-plan', view, { count: 50, ...page }).compile();
        if (store.dialect === 'sqlite') {
          const rows = await trx.executeQuery<{ detail: string }>(
            CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
          );
          return rows.rows.map((row) => row.detail).join('\n');
        }
        // An empty table is cheapest to scan whole: ask for the plan an index can give.
        await sql`set local enable_seqscan = off`.execute(trx);
        const rows = await trx.executeQuery<{ 'QUERY PLAN': string }>(
          CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
        );
        return rows.rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    }

    for (const view of MESSAGE_VIEWS) {
      test(`${view}: from ${INDEX_OF_VIEW[view]}, in its order, with or without a window`, async () => {
        for (const page of [{}, { since: 1_700_000_000 }]) {
          const plan = await planOf(view, page);
          assert.match(plan, new RegExp(`\\b${INDEX_OF_VIEW[view]}\\b`), plan);
          if (store.dialect === 'sqlite') assert.doesNotMatch(plan, /TEMP B-TREE/, plan);
          else assert.doesNotMatch(plan, /\bSort\b/, plan);
        }
      });
    }
  });
}
