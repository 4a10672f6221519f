/**
 * The floor of the API benchmark: a bare `node:http` server with hand-written prepared statements
 * that answers the benchmarked test routes with the same JSON as Vigil, from the same SQLite data.
 * It is the least work any implementation on this storage must do per request, so Vigil's req/s
 * divided by the floor's is the share of the machine Vigil's layers leave for the work itself.
 *
 * GETs read Vigil's database file read-only. POSTs write to a private copy of it (made at start
 * with SQLite's backup API), mirroring the rows Vigil writes for a new test: the test, its default
 * environment, its default step and the two revisions, in one transaction.
 *
 * Settings (env): FLOOR_DB (Vigil's vigil.db), FLOOR_COPY (path of the writable copy), PORT, HOST,
 * PUBLIC_URL (must equal Vigil's, since it is part of `trigger_url`).
 */
import fs from 'node:fs';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { type FloorDb, openFloorDb } from './sqlite.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BUCKET_KEY = /^[a-z0-9]{12}$/;
const BEARER = /^Bearer[ ]+([^\s]+)\s*$/i;
const TESTS_PATH = /^\/buckets\/([^/]+)\/tests(?:\/([^/]+))?\/?$/;
const MAX_TEST_ENVIRONMENTS_PER_BUCKET = 100;
const MAX_BODY = 1024 * 1024;

/** What an environment shows for every setting it does not set itself. */
const DEFAULT_SETTINGS = {
  auth: {},
  headers: {},
  emails: { notify_all: false, notify_on: 'all', notify_threshold: null, recipients: [] },
  initial_variables: {},
  integrations: [],
  preserve_cookies: false,
  regions: [],
  remote_agents: [],
  retry_on_failure: false,
  retry_transport_errors: null,
  alert_quorum: 1,
  stop_on_failure: false,
  script: '',
  verify_ssl: true,
  client_certificate: '',
  webhooks: null,
};

/** The stored body (everything but id and step_type) of the step a new test starts with. */
const DEFAULT_STEP_BODY = {
  method: 'GET',
  url: '',
  body: '',
  form: {},
  headers: {},
  auth: {},
  assertions: [{ source: 'response_status', property: '', comparison: 'is_equal', value: 200 }],
  variables: [],
  scripts: [],
  before_scripts: [],
  skipped: false,
  note: '',
};

interface TokenRow {
  id: string;
  account_id: string;
  scopes: string;
  name: string;
  email: string;
}
interface BucketRow {
  key: string;
  team_id: string;
}
interface TestRow {
  id: string;
  name: string;
  description: string | null;
  created_at: number;
  created_by: string;
  default_environment_id: string;
  trigger_id: string;
  creator_name: string | null;
  creator_email: string | null;
}
interface StepRow {
  id: string;
  parent_id: string | null;
  step_type: string;
  body: string;
}
interface EnvironmentRow {
  id: string;
  name: string;
  test_id: string | null;
  parent_environment_id: string | null;
  settings: string;
  updated_at: number;
}
interface ScheduleRow {
  id: string;
  environment_id: string;
  interval: string;
  next_run_at: number | null;
  note: string;
  created_at: number;
}
type Step = Record<string, unknown> & { id: string; step_type: string; steps?: Step[] };

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const sourcePath = required('FLOOR_DB');
const copyPath = required('FLOOR_COPY');
const publicUrl = required('PUBLIC_URL');
const port = Number(required('PORT'));
const host = process.env.HOST || '127.0.0.1';

if (!fs.existsSync(sourcePath)) throw new Error(`FLOOR_DB ${sourcePath} does not exist`);
const source = openFloorDb(sourcePath);
source.pragma('busy_timeout = 5000');
fs.rmSync(copyPath, { force: true });
source.exec(`VACUUM INTO '${copyPath.replace(/'/g, "''")}'`);
source.pragma('query_only = ON');
const copy = openFloorDb(copyPath);
copy.pragma('journal_mode = WAL');
copy.pragma('synchronous = NORMAL');
copy.pragma('foreign_keys = ON');
copy.pragma('busy_timeout = 5000');

function statements(db: FloorDb) {
  return {
    token: db.prepare<[string], TokenRow>(
      `SELECT t.id, t.account_id, t.scopes, a.name, a.email
       FROM access_tokens t JOIN accounts a ON a.id = t.account_id
       WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
    ),
    bucket: db.prepare<[string, string], BucketRow>(
      `SELECT b.key, b.team_id
       FROM buckets b
       JOIN team_members m ON m.team_id = b.team_id AND m.account_id = ?
       JOIN teams ON teams.id = b.team_id
       WHERE b.key = ?`,
    ),
    test: db.prepare<[string, string], TestRow>(
      `SELECT t.id, t.name, t.description, t.created_at, t.created_by, t.default_environment_id,
              t.trigger_id, a.name AS creator_name, a.email AS creator_email
       FROM tests t LEFT JOIN accounts a ON a.id = t.created_by
       WHERE t.id = ? AND t.bucket_key = ?`,
    ),
    list: db.prepare<[string, number, number], TestRow>(
      `SELECT t.id, t.name, t.description, t.created_at, t.created_by, t.default_environment_id,
              t.trigger_id, a.name AS creator_name, a.email AS creator_email
       FROM tests t LEFT JOIN accounts a ON a.id = t.created_by
       WHERE t.bucket_key = ? ORDER BY t.created_at DESC, t.id DESC LIMIT ? OFFSET ?`,
    ),
    steps: db.prepare<[string], StepRow>(
      'SELECT id, parent_id, step_type, body FROM steps WHERE test_id = ? ORDER BY position',
    ),
    environments: db.prepare<[string], EnvironmentRow>(
      `SELECT id, name, test_id, parent_environment_id, settings, updated_at
       FROM environments WHERE test_id = ? ORDER BY created_at, id`,
    ),
    schedules: db.prepare<[string], ScheduleRow>(
      `SELECT id, environment_id, interval, note, created_at, next_run_at
       FROM schedules WHERE test_id = ? ORDER BY created_at, id`,
    ),
  };
}

const read = statements(source);
const write = statements(copy);
const countTestEnvironments = copy.prepare<[string], { n: number }>(
  'SELECT count(*) AS n FROM environments WHERE bucket_key = ? AND test_id IS NOT NULL',
);
const insertTest = copy.prepare(
  `INSERT INTO tests (id, bucket_key, name, description, created_by, created_at, updated_at,
                      default_environment_id, trigger_id)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const insertEnvironment = copy.prepare(
  `INSERT INTO environments (id, bucket_key, test_id, name, parent_environment_id, settings, created_at, updated_at)
   VALUES (?, ?, ?, ?, NULL, '{}', ?, ?)`,
);
const insertStep = copy.prepare(
  `INSERT INTO steps (id, test_id, parent_id, position, step_type, body) VALUES (?, ?, NULL, 0, 'request', ?)`,
);
const insertRevision = copy.prepare(
  `INSERT INTO revisions (id, item_type, item_id, test_id, action, timestamp, author_id, author_name,
                          author_email, team_id, bucket_key, source, snapshot)
   VALUES (?, ?, ?, ?, 'create', ?, ?, ?, ?, ?, ?, ?, ?)`,
);

const nowFloat = (): number => Math.round(Date.now() * 1000) / 1_000_000;
let lastRevisionTimestamp = 0;
function revisionTimestamp(): number {
  const now = nowFloat();
  lastRevisionTimestamp =
    now > lastRevisionTimestamp
      ? now
      : Math.round((lastRevisionTimestamp + 0.000001) * 1_000_000) / 1_000_000;
  return lastRevisionTimestamp;
}

interface Caller extends TokenRow {
  scopeSet: Set<string>;
}

function authenticate(db: ReturnType<typeof statements>, header: string | undefined, scope: string): Caller {
  const match = header ? BEARER.exec(header) : null;
  if (!match)
    throw new HttpError(401, 'unauthorized', 'This endpoint needs Authorization: Bearer <access token>');
  const token = match[1]!;
  const row =
    token.length >= 16 && token.length <= 512
      ? db.token.get(createHash('sha256').update(token).digest('hex'))
      : undefined;
  if (!row) throw new HttpError(401, 'unauthorized', 'The access token is unknown or has been revoked');
  const scopeSet = new Set(row.scopes.split(' '));
  if (!scopeSet.has(scope)) {
    throw new HttpError(403, 'forbidden', `The access token lacks the scope ${scope}`);
  }
  return { ...row, scopeSet };
}

function requireBucket(db: ReturnType<typeof statements>, caller: Caller, key: string): BucketRow {
  const bucket = BUCKET_KEY.test(key) ? db.bucket.get(caller.account_id, key) : undefined;
  if (!bucket) throw new HttpError(404, 'not_found', `Bucket ${key} not found`);
  return bucket;
}

function listItem(test: TestRow, caller: Caller) {
  return {
    id: test.id,
    name: test.name,
    description: test.description,
    created_at: test.created_at,
    created_by: {
      email: caller.scopeSet.has('account:email') ? (test.creator_email ?? '') : '',
      name: test.creator_name ?? '',
      id: test.created_by,
    },
    default_environment_id: test.default_environment_id,
  };
}

function environmentView(row: EnvironmentRow) {
  return {
    id: row.id,
    name: row.name,
    test_id: row.test_id,
    parent_environment_id: row.parent_environment_id,
    ...DEFAULT_SETTINGS,
    ...(JSON.parse(row.settings) as object),
  };
}

/** Top-level steps in position order, with each condition's embedded steps under it. */
function assembleSteps(rows: readonly StepRow[]): Step[] {
  const top: Step[] = [];
  const conditions = new Map<string, Step>();
  for (const row of rows) {
    if (row.parent_id !== null) continue;
    const step: Step = { id: row.id, step_type: row.step_type, ...(JSON.parse(row.body) as object) };
    if (row.step_type === 'condition') {
      step.steps = [];
      conditions.set(row.id, step);
    }
    top.push(step);
  }
  for (const row of rows) {
    if (row.parent_id === null) continue;
    conditions
      .get(row.parent_id)
      ?.steps?.push({ id: row.id, step_type: row.step_type, ...(JSON.parse(row.body) as object) });
  }
  return top;
}

/** Format version of environment and schedule answers, and the time their version was written. */
const EXPORT_VERSION = '1.0';
const presentEnvironment = (row: EnvironmentRow) => ({
  ...environmentView(row),
  version: EXPORT_VERSION,
  exported_at: Math.floor(row.updated_at),
});

function detail(
  test: TestRow,
  caller: Caller,
  environments: unknown[],
  steps: Step[],
  schedules: readonly ScheduleRow[],
) {
  return {
    ...listItem(test, caller),
    environments,
    steps,
    schedules: schedules.map((s) => ({
      id: s.id,
      environment_id: s.environment_id,
      interval: s.interval,
      note: s.note,
      created_at: s.created_at,
      next_run_at: s.next_run_at,
      version: EXPORT_VERSION,
      exported_at: s.created_at,
    })),
    last_run: null,
    trigger_url: `${publicUrl}/radar/${test.trigger_id}/trigger`,
  };
}

const envelope = (data: unknown): string =>
  JSON.stringify({ data, meta: { status: 'success' }, error: null });

function getTest(authorization: string | undefined, bucketKey: string, testId: string): string {
  const caller = authenticate(read, authorization, 'api:read');
  requireBucket(read, caller, bucketKey);
  const test = UUID.test(testId) ? read.test.get(testId, bucketKey) : undefined;
  if (!test) throw new HttpError(404, 'not_found', `Test ${testId} not found`);
  const steps = assembleSteps(read.steps.all(test.id));
  const environments = read.environments.all(test.id).map(presentEnvironment);
  return envelope(detail(test, caller, environments, steps, read.schedules.all(test.id)));
}

function listTests(authorization: string | undefined, bucketKey: string, query: URLSearchParams): string {
  const caller = authenticate(read, authorization, 'api:read');
  requireBucket(read, caller, bucketKey);
  const count = Math.min(Number(query.get('count') ?? 50) || 50, 1000);
  const offset = Number(query.get('offset') ?? 0) || 0;
  return envelope(read.list.all(bucketKey, count, offset).map((row) => listItem(row, caller)));
}

const createTest = copy.transaction(
  (
    caller: Caller,
    bucket: BucketRow,
    input: { name: string; description: string | null },
    source: string,
  ) => {
    const { n } = countTestEnvironments.get(bucket.key)!;
    if (n + 1 > MAX_TEST_ENVIRONMENTS_PER_BUCKET) {
      throw new HttpError(
        422,
        'limit_reached',
        `Bucket ${bucket.key} has ${n} test-specific environments; the limit is ${MAX_TEST_ENVIRONMENTS_PER_BUCKET}`,
      );
    }
    const now = Math.floor(Date.now() / 1000);
    const test: TestRow = {
      id: randomUUID(),
      name: input.name,
      description: input.description,
      created_at: now,
      created_by: caller.account_id,
      default_environment_id: randomUUID(),
      trigger_id: randomBytes(18).toString('base64url'),
      creator_name: caller.name,
      creator_email: caller.email,
    };
    const envCreated = nowFloat();
    const environment: EnvironmentRow = {
      id: test.default_environment_id,
      name: 'Test Settings',
      test_id: test.id,
      parent_environment_id: null,
      settings: '{}',
      updated_at: envCreated,
    };
    const stepId = randomUUID();
    const stepBody = JSON.stringify(DEFAULT_STEP_BODY);
    insertTest.run(
      test.id,
      bucket.key,
      test.name,
      test.description,
      test.created_by,
      now,
      nowFloat(),
      test.default_environment_id,
      test.trigger_id,
    );
    insertEnvironment.run(environment.id, bucket.key, test.id, environment.name, envCreated, envCreated);
    insertStep.run(stepId, test.id, stepBody);

    const steps = assembleSteps([{ id: stepId, parent_id: null, step_type: 'request', body: stepBody }]);
    const view = environmentView(environment);
    const testSnapshot = {
      id: test.id,
      name: test.name,
      description: test.description,
      default_environment_id: test.default_environment_id,
      steps,
      schedules: [],
    };
    const author = [
      caller.account_id,
      caller.name,
      caller.email,
      bucket.team_id,
      bucket.key,
      source,
    ] as const;
    insertRevision.run(
      randomUUID(),
      'radar_test',
      test.id,
      test.id,
      revisionTimestamp(),
      ...author,
      JSON.stringify(testSnapshot),
    );
    insertRevision.run(
      randomUUID(),
      'environment',
      environment.id,
      test.id,
      revisionTimestamp(),
      ...author,
      JSON.stringify(view),
    );
    return detail(test, caller, [presentEnvironment(environment)], steps, []);
  },
);

function parseCreate(text: string): { name: string; description: string | null } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new HttpError(
      400,
      'invalid_json',
      `The request body is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'validation_failed', 'The body must be a JSON object');
  }
  const { name, description } = body as Record<string, unknown>;
  if (typeof name !== 'string' || name.length < 1 || name.length > 255) {
    throw new HttpError(400, 'validation_failed', '/name must be a string of 1 to 255 characters');
  }
  if (description !== undefined && description !== null && typeof description !== 'string') {
    throw new HttpError(400, 'validation_failed', '/description must be a string or null');
  }
  return { name, description: description ?? null };
}

function postTest(request: http.IncomingMessage, bucketKey: string, text: string): string {
  const caller = authenticate(write, request.headers.authorization, 'test:write');
  if (!request.headers['content-type']?.startsWith('application/json')) {
    throw new HttpError(415, 'unsupported_media_type', 'A JSON body needs Content-Type: application/json');
  }
  const input = parseCreate(text);
  const bucket = requireBucket(write, caller, bucketKey);
  const source = request.headers['x-vigil-source'] === 'dashboard' ? 'dashboard' : 'api';
  return envelope(createTest(caller, bucket, input, source));
}

function send(response: http.ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

function sendError(response: http.ServerResponse, error: unknown): void {
  const known =
    error instanceof HttpError
      ? error
      : new HttpError(500, 'internal_error', 'The server met an unexpected condition');
  if (!(error instanceof HttpError)) process.stderr.write(`floor: ${String(error)}\n`);
  if (known.status === 401) response.setHeader('WWW-Authenticate', 'Bearer realm="vigil"');
  send(
    response,
    known.status,
    JSON.stringify({
      data: null,
      meta: { status: 'error' },
      error: { status: known.status, code: known.code, message: known.message, more_info: '' },
    }),
  );
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) reject(new HttpError(413, 'payload_too_large', 'The request body is too large'));
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const server = http.createServer((request, response) => {
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  try {
    if (path === '/health' && request.method === 'GET') {
      source.prepare('SELECT 1').get();
      return send(response, 200, '{"status":"ok"}');
    }
    const match = TESTS_PATH.exec(path);
    if (!match) throw new HttpError(404, 'not_found', `No resource at ${path}`);
    const bucketKey = decodeURIComponent(match[1]!);
    const testId = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    if (request.method === 'GET' && testId !== undefined) {
      return send(response, 200, getTest(request.headers.authorization, bucketKey, testId));
    }
    if (request.method === 'GET') {
      const query = new URLSearchParams(queryAt === -1 ? '' : url.slice(queryAt + 1));
      return send(response, 200, listTests(request.headers.authorization, bucketKey, query));
    }
    if (request.method === 'POST' && testId === undefined) {
      readBody(request).then(
        (text) => {
          try {
            send(response, 201, postTest(request, bucketKey, text));
          } catch (error) {
            sendError(response, error);
          }
        },
        (error: unknown) => sendError(response, error),
      );
      return;
    }
    throw new HttpError(405, 'method_not_allowed', `${request.method} is not allowed on ${path}`);
  } catch (error) {
    sendError(response, error);
  }
});

function shutdown(): void {
  server.close();
  server.closeAllConnections();
  source.close();
  copy.close();
  process.exit(0);
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

server.listen(port, host, () => {
  process.stdout.write(`floor listening on http://${host}:${port}\n`);
});
