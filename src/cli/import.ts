import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { IMPORT_FORMATS, SPLITS } from '../import/formats.js';

export const IMPORT_USAGE = `Usage: vigil import FILE --bucket KEY [options]

Creates tests in a bucket of a running server from a Postman collection, an OpenAPI 3 or
Swagger 2.0 document (JSON or YAML), curl command lines, a HAR file or a Vigil/Runscope export
(docs/import.md). The format is recognised from the file unless --format says it.

Options:
  --bucket KEY          the bucket to create the tests in (required)
  --url URL             the server (default: VIGIL_URL, else PUBLIC_URL, else http://localhost:8080)
  --token TOKEN         an access token with test:write (default: VIGIL_TOKEN)
  --format F            ${IMPORT_FORMATS.join(' | ')}
  --environment FILE    Postman: an exported environment file
  --split S             Postman: folder (default) | request; OpenAPI: tag (default) | operation
  --base-url URL        OpenAPI: the base_url of the environment instead of the document's server
  --chain               HAR: values an answer produced and a later request sends become variables
  --dry-run             show the tests that would be created; create nothing
  --json                print the server's answer as JSON
`;

/** What the command needs from the outside; tests give their own. */
export interface ImportIo {
  fetch: typeof fetch;
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
}

interface ImportAnswer {
  dry_run: boolean;
  format: string;
  tests: {
    id?: string;
    name: string;
    step_count: number;
    steps: { method?: string; url?: string; note?: string }[];
  }[];
  notes: string[];
}

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8')) as unknown;
}

export async function importCommand(
  argv: string[],
  defaults: { publicUrl: string },
  io: ImportIo = {
    fetch,
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    env: process.env,
  },
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        bucket: { type: 'string' },
        url: { type: 'string' },
        token: { type: 'string' },
        format: { type: 'string' },
        environment: { type: 'string' },
        split: { type: 'string' },
        'base-url': { type: 'string' },
        chain: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.err(`vigil import: ${(error as Error).message}\n\n${IMPORT_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(IMPORT_USAGE);
    return 0;
  }
  const usage = (message: string) => {
    io.err(`vigil import: ${message}\n\n${IMPORT_USAGE}`);
    return 2;
  };
  if (positionals.length !== 1) return usage('give exactly one FILE');
  if (!values.bucket) return usage('--bucket is required');
  const token = values.token ?? io.env.VIGIL_TOKEN;
  if (!token) return usage('--token (or VIGIL_TOKEN) is required');
  if (values.format !== undefined && !(IMPORT_FORMATS as readonly string[]).includes(values.format))
    return usage(`--format must be one of: ${IMPORT_FORMATS.join(', ')}`);
  if (values.split !== undefined && !(SPLITS as readonly string[]).includes(values.split))
    return usage(`--split must be one of: ${SPLITS.join(', ')}`);

  let content: string;
  let environment: unknown;
  try {
    content = await readFile(positionals[0]!, 'utf8');
    if (values.environment) environment = await readJson(values.environment);
  } catch (error) {
    io.err(`vigil import: ${(error as Error).message}\n`);
    return 2;
  }
  const options = {
    ...(values.split !== undefined && { split: values.split }),
    ...(values['base-url'] !== undefined && { base_url: values['base-url'] }),
    ...(values.chain && { chain: true }),
  };
  const body = {
    content,
    ...(values.format !== undefined && { format: values.format }),
    ...(environment !== undefined && { environment }),
    ...(Object.keys(options).length > 0 && { options }),
    dry_run: values['dry-run'] ?? false,
  };
  const base = values.url ?? io.env.VIGIL_URL ?? defaults.publicUrl;
  let response: Response;
  try {
    response = await io.fetch(new URL(`/buckets/${encodeURIComponent(values.bucket)}/imports`, base), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    io.err(`vigil import: cannot reach ${base}: ${(error as Error).message}\n`);
    return 1;
  }
  const answer = (await response.json().catch(() => ({}))) as {
    data?: ImportAnswer;
    error?: { message?: string };
  };
  if (!response.ok || !answer.data) {
    io.err(`vigil import: the server answered ${response.status}: ${answer.error?.message ?? 'no data'}\n`);
    return 1;
  }
  const data = answer.data;
  if (values.json) {
    io.out(`${JSON.stringify(data)}\n`);
    return 0;
  }
  const lines = [
    `${data.dry_run ? 'Would create' : 'Created'} ${data.tests.length} test${data.tests.length === 1 ? '' : 's'} from ${data.format}:`,
  ];
  for (const t of data.tests) {
    lines.push(`  ${t.name} (${t.step_count} step${t.step_count === 1 ? '' : 's'})${t.id ? ` ${t.id}` : ''}`);
    if (data.dry_run)
      for (const s of t.steps)
        lines.push(`    ${s.method ?? ''} ${s.url ?? ''}${s.note ? `  — ${s.note}` : ''}`);
  }
  for (const note of data.notes) lines.push(`note: ${note}`);
  io.out(`${lines.join('\n')}\n`);
  return 0;
}
