import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { startServe, vigil } from '../helpers/cli.js';
import { dialects, freshPostgresDatabase } from '../helpers/dialects.js';

/** Messages per POST. */
const BATCH = 20;
/** Writers posting at once: one alone would leave no request in flight when the server dies. */
const WRITERS = 4;
/** The server is killed at the first acknowledgement after this much ingest … */
const KILL_AFTER_MS = 1_500;
/** … once at least this many batches were acknowledged, so that a slow machine still tests something. */
const MIN_ACKED_BATCHES = 10;

interface Acknowledged {
  uuid: string;
  marker: string;
}

interface ListItem {
  uuid: string;
  request: { url: string } | null;
}

/**
 * "No acknowledged message is lost": writers post batches to the real server until it is killed
 * with SIGKILL mid-stream; after a restart on the same store, every message whose POST answered
 * 201 is there with its marker.
 */
for (const { fixture, skip } of await dialects()) {
  describe(`acknowledged messages survive SIGKILL [${fixture.name}]`, { skip }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-durability-'));
    const database = fixture.name === 'postgres' ? await freshPostgresDatabase() : undefined;
    const env = { DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '' };
    const servers: Awaited<ReturnType<typeof startServe>>[] = [];
    after(async () => {
      for (const server of servers) {
        if (server.child.exitCode === null && server.child.signalCode === null) {
          server.child.kill('SIGKILL');
          await new Promise((resolve) => server.child.once('exit', resolve));
        }
      }
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    test('every message of a 2xx answer is stored after a restart', async () => {
      const boot = vigil(
        ['bootstrap', '--email', 'd@example.com', '--name', 'D', '--password', 'a long passphrase', '--json'],
        env,
      );
      assert.equal(boot.status, 0, boot.stderr);
      const { access_token: token, bucket_key: bucket } = JSON.parse(boot.stdout) as {
        access_token: string;
        bucket_key: string;
      };
      const headers = { authorization: `Bearer ${token}` };

      const first = await startServe(env);
      servers.push(first);
      const killed = new Promise((resolve) => first.child.once('exit', resolve));
      const acknowledged: Acknowledged[] = [];
      const refused: string[] = [];
      let ackedBatches = 0;
      let inFlight = 0;
      let inFlightAtKill = -1;
      // Each message gets its own timestamp, so that paging with `before` cannot skip one.
      const t0 = Math.floor(Date.now() / 1000) - 3_600;
      let sequence = 0;
      const startedAt = Date.now();

      const writer = async (name: string) => {
        for (let batch = 0; ; batch++) {
          const items = Array.from({ length: BATCH }, (_, i) => {
            const marker = `${name}-${batch}-${i}`;
            return {
              request: {
                method: 'POST',
                url: `https://shop.example.com/orders?marker=${marker}`,
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ marker }),
                timestamp: t0 + ++sequence / 1000,
              },
              response: { status: 201, body: `{"ok":true,"marker":"${marker}"}` },
            };
          });
          let response: Response;
          inFlight++;
          try {
            response = await fetch(`${first.url}/buckets/${bucket}/messages`, {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify(items),
              signal: AbortSignal.timeout(10_000),
            });
          } catch {
            return; // the server is gone
          } finally {
            inFlight--;
          }
          if (response.status !== 201) {
            refused.push(`${response.status} ${await response.text()}`);
            return;
          }
          const answer = (await response.json()) as { data: { status: string; uuid?: string }[] };
          answer.data.forEach((result, i) => {
            assert.equal(result.status, 'success', JSON.stringify(result));
            acknowledged.push({ uuid: result.uuid!, marker: `${name}-${batch}-${i}` });
          });
          ackedBatches++;
          if (
            inFlightAtKill === -1 &&
            ackedBatches >= MIN_ACKED_BATCHES &&
            Date.now() - startedAt >= KILL_AFTER_MS
          ) {
            inFlightAtKill = inFlight;
            first.child.kill('SIGKILL');
          }
        }
      };
      // One writer that posts one batch after another, and the rest at the same time.
      await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(i === 0 ? 'seq' : `par${i}`)));
      await killed;

      assert.deepEqual(refused, [], 'no POST may be refused before the kill');
      assert.equal(first.child.signalCode, 'SIGKILL');
      assert.ok(inFlightAtKill >= 1, 'the kill must come while requests are in flight');
      assert.ok(acknowledged.length >= MIN_ACKED_BATCHES * BATCH);

      const second = await startServe(env);
      servers.push(second);
      const stored = new Map<string, string>();
      let before: number | undefined;
      for (;;) {
        const query = `count=1000${before === undefined ? '' : `&before=${before}`}`;
        const response = await fetch(`${second.url}/buckets/${bucket}/messages?${query}`, { headers });
        assert.equal(response.status, 200);
        const page = ((await response.json()) as { data: (ListItem & { timestamp: number })[] }).data;
        for (const item of page) stored.set(item.uuid, item.request?.url ?? '');
        if (page.length < 1000) break;
        before = page.at(-1)!.timestamp;
      }

      const lost = acknowledged.filter(({ uuid }) => !stored.has(uuid));
      assert.deepEqual(
        lost.slice(0, 10),
        [],
        `${lost.length} of ${acknowledged.length} acknowledged messages lost`,
      );
      const wrong = acknowledged.filter(
        ({ uuid, marker }) => !stored.get(uuid)!.endsWith(`?marker=${marker}`),
      );
      assert.deepEqual(wrong.slice(0, 10), []);

      // Bodies too: the last acknowledged message of each writer, in full.
      const lastOfWriter = new Map(acknowledged.map((a) => [a.marker.split('-')[0], a]));
      for (const { uuid, marker } of lastOfWriter.values()) {
        const response = await fetch(`${second.url}/buckets/${bucket}/messages/${uuid}`, { headers });
        assert.equal(response.status, 200);
        const { data } = (await response.json()) as {
          data: { request: { body: string }; response: { body: string } };
        };
        assert.deepEqual(JSON.parse(data.request.body), { marker });
        assert.equal(data.response.body, `{"ok":true,"marker":"${marker}"}`);
      }
      await second.stop();
    });
  });
}
