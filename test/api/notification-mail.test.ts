import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { describeApi, PUBLIC_URL } from '../helpers/api.js';
import { finishedRun, startReceiver } from '../helpers/receiver.js';

/** E-mail notifications through SMTP (a local smtp-server sink) for each notify_on rule. */
interface Received {
  to: string[];
  headers: Record<string, string>;
  text: string;
  html: string;
}

const mails: Received[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      mails.push({
        to: session.envelope.rcptTo.map((r) => r.address),
        ...parseMime(Buffer.concat(chunks).toString('utf8')),
      });
      callback();
    });
  },
});
await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
const smtpPort = (smtp.server.address() as AddressInfo).port;
const receiver = await startReceiver((delivery) => {
  const url = new URL(delivery.path, 'http://receiver');
  return { status: url.pathname === '/status' ? Number(url.searchParams.get('code') ?? 200) : 200 };
});
after(async () => {
  await receiver.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

function headersOf(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = encodedWords(line.slice(colon + 1).trim());
  }
  return headers;
}

/** RFC 2047 Q and B encoded words, as nodemailer writes non-trivial headers. */
function encodedWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_m, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decode(text.replace(/_/g, ' '), 'quoted-printable'),
    );
}

function decode(body: string, encoding: string | undefined): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = body
      .replace(/=\r\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

/** Just enough MIME for nodemailer's multipart/alternative. */
function parseMime(raw: string): Omit<Received, 'to'> {
  const split = raw.indexOf('\r\n\r\n');
  const headers = headersOf(raw.slice(0, split));
  const boundary = /boundary="?([^";]+)"?/.exec(headers['content-type'] ?? '')?.[1];
  let text = '';
  let html = '';
  for (const part of boundary ? raw.slice(split).split(`--${boundary}`) : []) {
    const at = part.indexOf('\r\n\r\n');
    if (at < 0) continue;
    const partHeaders = headersOf(part.slice(0, at).trim());
    const content = decode(part.slice(at + 4).replace(/\r\n$/, ''), partHeaders['content-transfer-encoding']);
    if (partHeaders['content-type']?.startsWith('text/plain')) text = content;
    if (partHeaders['content-type']?.startsWith('text/html')) html = content;
  }
  return { headers, text, html };
}

await describeApi(
  'e-mail notifications',
  (get) => {
    const tests = () => `/buckets/${get().alice.bucketKey}/tests`;

    /** A test whose runs pass or fail by the `code` trigger parameter; `run` answers that run's mails. */
    async function setUp(name: string, emails: Record<string, unknown>) {
      const h = get();
      const created = await h.data('POST', tests(), { name });
      await h.data('PUT', `${tests()}/${created.id}/environments/${created.default_environment_id}`, {
        initial_variables: { base: receiver.base, code: '200' },
        emails,
        // Every run has at least this notification, so the test knows when planning is done.
        webhooks: [`${receiver.base}/settle`],
      });
      const t = await h.data('PUT', `${tests()}/${created.id}`, {
        steps: [
          {
            step_type: 'request',
            method: 'GET',
            url: '{{base}}/status?code={{code}}',
            note: 'status check',
            assertions: [{ source: 'response_status', comparison: 'equal_number', value: 200 }],
          },
        ],
      });
      return async (code: 200 | 500) => {
        const response = await h.call({
          method: 'GET',
          url: `${t.trigger_url.slice(PUBLIC_URL.length)}?code=${code}`,
          as: null,
        });
        const runId = response.json().data.runs[0].test_run_id as string;
        const run = await finishedRun(h, t.id, runId);
        assert.equal(run.result, code === 200 ? 'pass' : 'fail');
        const notifications = await eventuallySettled(runId);
        const email = notifications.find((n: any) => n.channel === 'email');
        if (email) assert.equal(email.status, 'delivered', JSON.stringify(email));
        return { runId, t, mails: email ? mails.filter((m) => m.text.includes(runId)) : [] };
      };

      async function eventuallySettled(runId: string): Promise<any[]> {
        const url = `${tests()}/${t.id}/results/${runId}/notifications`;
        const deadline = Date.now() + 20_000;
        for (;;) {
          const list = await h.data('GET', url);
          if (list.length > 0 && list.every((n: any) => n.status !== 'pending')) return list;
          if (Date.now() > deadline) throw new Error(`notifications of ${runId} did not settle`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
    const recipients = [
      { email: 'ops@example.com', name: 'Ops' },
      { email: 'dev@example.com', name: 'Dev' },
    ];
    const sent = async (run: (code: 200 | 500) => Promise<{ mails: Received[] }>, codes: (200 | 500)[]) => {
      const out: boolean[] = [];
      for (const code of codes) out.push((await run(code)).mails.length === 1);
      return out;
    };

    test('a failure mail names the test, environment, region, failing step and assertion', async () => {
      const run = await setUp('<Checkout & "Pay">', { notify_on: 'failures', recipients });
      const {
        runId,
        t,
        mails: [mail],
      } = await run(500);
      assert.ok(mail);
      assert.deepEqual(mail.to, ['ops@example.com', 'dev@example.com']);
      assert.match(mail.headers.to!, /"?Ops"? <ops@example\.com>, "?Dev"? <dev@example\.com>/);
      assert.match(mail.headers.from!, /vigil@localhost/);
      assert.match(mail.headers.subject!, /\[Vigil\] <Checkout & "Pay"> failed \(Test Settings, local\)/);
      const link = `${PUBLIC_URL}/buckets/${get().alice.bucketKey}/tests/${t.id}/results/${runId}`;
      for (const line of [
        'Test: <Checkout & "Pay">',
        'Environment: Test Settings',
        'Region: local',
        'Result: fail',
        `Failing step: #1 request GET ${receiver.base}/status?code=500`,
        'Failing assertion: response_status equal_number 200',
        'Expected: 200',
        'Actual: 500',
        `Result: ${link}`,
      ]) {
        assert.ok(mail.text.includes(line), `text has "${line}":\n${mail.text}`);
      }
      assert.ok(mail.html.includes('&lt;Checkout &amp; &quot;Pay&quot;&gt;'), mail.html);
      assert.ok(!mail.html.includes('<Checkout'));
      assert.ok(mail.html.includes('<th align="left">Expected</th><td>200</td>'));
      assert.ok(mail.html.includes('<th align="left">Actual</th><td>500</td>'));
      assert.ok(mail.html.includes(`href="${link}"`));
      // A pass sends nothing under `failures`.
      assert.deepEqual((await run(200)).mails, []);
    });

    test('notify_on all: every pass and fail', async () => {
      const run = await setUp('All', { notify_on: 'all', recipients });
      assert.deepEqual(await sent(run, [200, 500, 200]), [true, true, true]);
    });

    test('notify_on failures: every fail', async () => {
      const run = await setUp('Failures', { notify_on: 'failures', recipients });
      assert.deepEqual(await sent(run, [200, 500, 500, 200]), [false, true, true, false]);
    });

    test('notify_on threshold: when the streak reaches the threshold, and on the recovery after it', async () => {
      const run = await setUp('Threshold', { notify_on: 'threshold', notify_threshold: 2, recipients });
      assert.deepEqual(await sent(run, [500, 500, 500, 200, 500, 200]), [
        false,
        true,
        false,
        true,
        false,
        false,
      ]);
      const recovered = await setUp('Threshold recovery', {
        notify_on: 'threshold',
        notify_threshold: 1,
        recipients,
      });
      await recovered(500);
      const {
        mails: [mail],
      } = await recovered(200);
      assert.match(mail!.headers.subject!, /passes again/);
    });

    test('notify_on switch: when the result differs from the previous one', async () => {
      const run = await setUp('Switch', { notify_on: 'switch', recipients });
      assert.deepEqual(await sent(run, [200, 500, 500, 200, 200]), [false, true, false, true, false]);
    });

    test('notify_all: every member of the team', async () => {
      const run = await setUp('Everyone', { notify_on: 'all', notify_all: true, recipients });
      const {
        mails: [mail],
      } = await run(200);
      assert.deepEqual(mail!.to, [get().alice.email]);
    });
  },
  { env: { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, NOTIFY_RETRY_DELAY: '1' } },
);
