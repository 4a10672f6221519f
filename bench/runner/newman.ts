/**
 * Newman: one `newman.run()` per run (what Newman costs per run: it builds the collection, a
 * runner and a script sandbox each time) with postman-collection.json, `base_url` as an
 * environment variable, and no reporter.
 *
 * Connections: by default Newman's requests share one agent pool across runs; here each run gets a
 * new keep-alive `http.Agent` through `requestAgents`, destroyed when the run ends, so a run opens
 * one connection and its three requests share it, as with the floor.
 */
import fs from 'node:fs';
import http from 'node:http';
import newman from 'newman';
import type { Contender, LoadContender } from './contender.js';

const COLLECTION_FILE = new URL('postman-collection.json', import.meta.url);
/** Requests and `pm.test` assertions of a passing run: 3 + 4 + 3 assertions. */
const REQUESTS = 3;
const ASSERTIONS = 10;

function runOnce(collection: object, baseUrl: string, agent: http.Agent) {
  return new Promise<newman.NewmanRunSummary>((resolve, reject) => {
    newman.run(
      {
        collection,
        envVar: [{ key: 'base_url', value: baseUrl }],
        requestAgents: { http: agent },
        reporters: [],
      },
      (error, summary) => (error ? reject(error) : resolve(summary)),
    );
  });
}

export const load: LoadContender = async () => {
  const collection = JSON.parse(fs.readFileSync(COLLECTION_FILE, 'utf8')) as object;
  const contender: Contender = {
    async run(baseUrl) {
      const agent = new http.Agent({ keepAlive: true });
      try {
        const { run } = await runOnce(collection, baseUrl, agent);
        return (
          !run.error &&
          run.failures.length === 0 &&
          run.stats.requests.total === REQUESTS &&
          run.stats.requests.failed === 0 &&
          run.stats.assertions.total === ASSERTIONS &&
          run.stats.assertions.failed === 0 &&
          run.stats.testScripts.failed === 0 &&
          run.stats.prerequestScripts.failed === 0
        );
      } finally {
        agent.destroy();
      }
    },
  };
  return contender;
};
