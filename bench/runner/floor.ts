/**
 * The floor: the benchmark test written by hand on undici, with nothing a runner adds (no
 * templating, no assertion engine, no sandbox, no result records). Per run a new undici Agent, so
 * a run connects anew like the other contenders; its three requests share that one connection.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { Contender, LoadContender } from './contender.js';

const TIME_LIMIT_MS = 1000;

interface Exchange {
  status: number;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
  ms: number;
}

async function exchange(
  agent: Agent,
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Exchange> {
  const started = performance.now();
  const response = await request(url, { dispatcher: agent, method, headers, body });
  const text = await response.body.text();
  const ms = performance.now() - started;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, json, ms };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

async function steps(agent: Agent, baseUrl: string): Promise<boolean> {
  const login = await exchange(
    agent,
    'POST',
    `${baseUrl}/login`,
    { 'content-type': 'application/json' },
    '{"user":"bench"}',
  );
  if (login.status !== 200 || login.ms >= TIME_LIMIT_MS || !isObject(login.json)) return false;
  const { token, user_id: userId } = login.json;
  if (typeof token !== 'string' || token === '' || userId === undefined) return false;

  const user = await exchange(agent, 'GET', `${baseUrl}/users/${String(userId)}`, {
    authorization: `Bearer ${token}`,
  });
  if (user.status !== 200 || user.ms >= TIME_LIMIT_MS || !isObject(user.json)) return false;
  const { items } = user.json;
  if (!Array.isArray(items) || !isObject(items[0]) || typeof items[0].id !== 'number') return false;
  const firstItem = String(items[0].id);
  if (!(items.length > 0)) return false;
  const count = String(items.length);

  if (count === '0') return true;
  const item = await exchange(agent, 'GET', `${baseUrl}/items/${firstItem}`, {});
  return item.status === 200 && item.ms < TIME_LIMIT_MS && isObject(item.json) && item.json.ok === true;
}

export const load: LoadContender = async () => {
  const contender: Contender = {
    async run(baseUrl) {
      // One connection: with more allowed, undici opens a second one for the second request,
      // dispatched before the first connection counts as free again.
      const agent = new Agent({ connections: 1 });
      try {
        return await steps(agent, baseUrl);
      } finally {
        await agent.close();
      }
    },
  };
  return contender;
};
