import type { Auth } from '../../domain/auth.js';
import type { ScriptResult, StepAttempt, StepResult } from '../../domain/results.js';
import type { RequestStep } from '../../domain/steps.js';
import { applyAuth, type AuthTarget, findHeader } from '../auth.js';
import { bodyRecord } from '../bodies.js';
import type { RunContext } from '../context.js';
import type { ResponseSubject } from '../extract.js';
import {
  HttpFailure,
  type InboundResponse,
  isTransportFailure,
  type OutboundRequest,
} from '../../net/client.js';
import type { ScriptJob, ScriptOutcome, ScriptRequest, ScriptResponse } from '../sandbox/sandbox.js';
import { emptyResult, settle, StepChecks } from './checks.js';
import { realSleep, type Sleep } from './pause.js';

/** A request as it is being prepared: templates resolved, then scripts and auth applied. */
type Outgoing = AuthTarget;

/**
 * A request step, in the order of DESIGN §4: templates → pre-request scripts → auth → HTTP
 * request → variables → post-response scripts → assertions.
 */
export async function runRequestStep(
  ctx: RunContext,
  step: RequestStep,
  sleep: Sleep = realSleep,
): Promise<StepResult> {
  const result = emptyResult(ctx, step);
  result.note = step.note;
  result.method = step.method;
  result.url = step.url;
  if (step.skipped) {
    result.result = 'skipped';
    return result;
  }

  const rendered = renderRequest(ctx, step);
  if ('error' in rendered) {
    result.error = rendered.error;
    return settle(ctx, result);
  }
  let outgoing = rendered.request;
  result.url = outgoing.url;

  for (const code of step.before_scripts) {
    const scriptRequest = toScriptRequest(outgoing);
    const outcome = await runStepScript(ctx, result, {
      code,
      request: scriptRequest,
      requestWritable: true,
    });
    if (!outcome.ok) return settle(ctx, result);
    if (outcome.request) outgoing = fromScriptRequest(outgoing, scriptRequest, outcome.request);
    result.url = outgoing.url;
  }

  const auth = Object.keys(step.auth).length > 0 ? step.auth : ctx.settings.auth;
  if (Object.keys(auth).length > 0) {
    const renderedAuth = renderAuth(ctx, auth);
    if ('error' in renderedAuth) {
      result.error = renderedAuth.error;
      return settle(ctx, result);
    }
    try {
      outgoing = applyAuth(renderedAuth.auth, outgoing, { timestamp: Math.floor(ctx.clock.now() / 1000) });
    } catch (err) {
      result.error = err instanceof Error ? err.message : String(err);
      return settle(ctx, result);
    }
  }

  const body = requestBody(outgoing);
  result.method = outgoing.method;
  result.url = outgoing.url;
  const requestBytes = Buffer.from(body, 'utf8');
  result.request = {
    method: outgoing.method,
    url: outgoing.url,
    headers: outgoing.headers,
    ...bodyRecord(requestBytes, ctx.limits.maxBodyBytes),
  };

  const sent = await sendWithRetries(
    ctx,
    {
      method: outgoing.method,
      url: outgoing.url,
      headers: outgoing.headers,
      body: requestBytes.length > 0 ? requestBytes : null,
      timeoutMs: ctx.limits.requestTimeoutMs,
    },
    sleep,
  );
  if (sent.attempts) result.attempts = sent.attempts;
  if ('failure' in sent) {
    result.error = sent.failure.message;
    result.timings = sent.failure.timings;
    return settle(ctx, result);
  }
  const { response } = sent;

  result.response_status_code = response.status;
  result.response_time_ms = round3(response.timeMs);
  result.response_size_bytes = response.sizeBytes;
  result.timings = response.timings;
  result.response = {
    status: response.status,
    reason: response.reason,
    headers: response.headers,
    ...bodyRecord(response.body, ctx.limits.maxBodyBytes, response.sizeBytes, response.truncated),
  };
  if (response.truncated) {
    result.note = appendNote(
      result.note,
      `response body cut at ${ctx.limits.maxBodyBytes} bytes of ${response.sizeBytes}`,
    );
  }

  const subject: ResponseSubject = {
    status: response.status,
    headers: response.headers,
    body: response.body,
    timeMs: response.timeMs,
    sizeBytes: response.sizeBytes,
  };
  const checks = new StepChecks(ctx, subject);
  if (step.scripts.length === 0) {
    // Nothing runs between the variables and the assertions: one part, so one thread hop at most.
    ({ variables: result.variables, assertions: result.assertions } = await checks.run(step));
  } else {
    result.variables = (await checks.run({ variables: step.variables, assertions: [] })).variables;
    await runPostResponseScripts(ctx, step, outgoing, response, result);
    result.assertions = (await checks.run({ variables: [], assertions: step.assertions })).assertions;
  }
  result.error = checks.error;
  return settle(ctx, result);
}

type Sent = { attempts: StepAttempt[] | undefined } & (
  { response: InboundResponse } | { failure: HttpFailure }
);

/**
 * Sends the request, and again after a transport error while the environment's
 * `retry_transport_errors` allows, waiting `backoff_ms` between two sends. A request that got an
 * HTTP answer is never sent again. With the policy set, every send is listed in `attempts`.
 */
async function sendWithRetries(ctx: RunContext, request: OutboundRequest, sleep: Sleep): Promise<Sent> {
  const policy = ctx.settings.retry_transport_errors;
  const attempts: StepAttempt[] | undefined = policy ? [] : undefined;
  for (let resends = 0; ; resends++) {
    const startedAt = ctx.nowSeconds();
    try {
      const response = await ctx.session.send(request, ctx.signal);
      attempts?.push({
        started_at: startedAt,
        finished_at: ctx.nowSeconds(),
        error: null,
        response_status_code: response.status,
        response_time_ms: round3(response.timeMs),
        timings: response.timings,
      });
      return { attempts, response };
    } catch (err) {
      if (!(err instanceof HttpFailure)) throw err;
      attempts?.push({
        started_at: startedAt,
        finished_at: ctx.nowSeconds(),
        error: err.message,
        response_status_code: null,
        response_time_ms: null,
        timings: err.timings,
      });
      if (!policy || resends >= policy.attempts || !isTransportFailure(err))
        return { attempts, failure: err };
      try {
        await sleep(policy.backoff_ms, ctx.signal);
      } catch {
        // Canceled or out of time while waiting: the last failure stands and the run stops.
        return { attempts, failure: err };
      }
    }
  }
}

/** Post-response scripts, in order, with `response`; a failing script stops the ones after it. */
async function runPostResponseScripts(
  ctx: RunContext,
  step: RequestStep,
  outgoing: Outgoing,
  response: InboundResponse,
  result: StepResult,
): Promise<void> {
  const scriptRequest = toScriptRequest(outgoing);
  const scriptResponse: ScriptResponse = {
    status: response.status,
    reason: response.reason,
    headers: response.headers,
    body: response.body.toString('utf8'),
    response_time_ms: round3(response.timeMs),
    size_bytes: response.sizeBytes,
  };
  for (const code of step.scripts) {
    const outcome = await runStepScript(ctx, result, {
      code,
      request: scriptRequest,
      requestWritable: false,
      response: scriptResponse,
    });
    if (!outcome.ok) break;
  }
}

/**
 * Runs one script of the step with the run's variables and the script time limit, takes the
 * variables it set and records its result.
 */
async function runStepScript(
  ctx: RunContext,
  result: StepResult,
  job: Omit<ScriptJob, 'variables' | 'limits'>,
): Promise<ScriptOutcome> {
  const outcome = await ctx.scripts.run(
    { ...job, variables: { ...ctx.variables }, limits: { timeMs: ctx.limits.scriptTimeMs } },
    ctx.signal,
  );
  Object.assign(ctx.variables, outcome.variables);
  result.scripts.push(scriptResult(outcome));
  return outcome;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function appendNote(note: string, text: string): string {
  return note ? `${note} (${text})` : text;
}

export function scriptResult(outcome: { ok: boolean; output: string; error: string | null }): ScriptResult {
  return {
    result: outcome.ok ? 'pass' : 'fail',
    output: outcome.output,
    error: outcome.ok ? null : outcome.error,
  };
}

function renderRequest(ctx: RunContext, step: RequestStep): { request: Outgoing } | { error: string } {
  const field = (name: string, text: string): string | { error: string } => {
    const rendered = ctx.render(text);
    return rendered.ok ? rendered.value : { error: `${name}: ${rendered.error}` };
  };
  const url = field('url', step.url);
  if (typeof url !== 'string') return url;
  if (url.trim() === '') return { error: 'url: the request has no URL' };
  if (!/^https?:\/\//i.test(url.trim())) {
    return { error: `url: ${JSON.stringify(url.slice(0, 200))} is not an absolute http:// or https:// URL` };
  }
  const headers: Record<string, string[]> = {};
  // The environment's headers go with every request step; a header the step sets itself wins.
  const own = new Set(Object.keys(step.headers).map((name) => name.toLowerCase()));
  const inherited = Object.entries(ctx.definition.environment.settings.headers ?? {}).filter(
    ([name]) => !own.has(name.toLowerCase()),
  );
  for (const [rawName, values] of [...inherited, ...Object.entries(step.headers)]) {
    const name = field(`headers.${rawName}`, rawName);
    if (typeof name !== 'string') return name;
    const list: string[] = [];
    for (const value of values) {
      const renderedValue = field(`headers.${rawName}`, value);
      if (typeof renderedValue !== 'string') return renderedValue;
      list.push(renderedValue);
    }
    (headers[name] ??= []).push(...list);
  }
  const body = field('body', step.body);
  if (typeof body !== 'string') return body;
  const form: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(step.form)) {
    if (Array.isArray(value)) {
      const list: string[] = [];
      for (const item of value) {
        const rendered = field(`form.${key}`, item);
        if (typeof rendered !== 'string') return rendered;
        list.push(rendered);
      }
      form[key] = list;
    } else {
      const rendered = field(`form.${key}`, value);
      if (typeof rendered !== 'string') return rendered;
      form[key] = rendered;
    }
  }
  return { request: { method: step.method, url: url.trim(), headers, body, form } };
}

function renderAuth(ctx: RunContext, auth: Auth): { auth: Auth } | { error: string } {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(auth)) {
    if (typeof value !== 'string') continue;
    const rendered = ctx.render(value);
    if (!rendered.ok) return { error: `auth.${key}: ${rendered.error}` };
    out[key] = rendered.value;
  }
  return { auth: out as Auth };
}

/** The body to send: the step body, or its form fields URL-encoded when the body is empty. */
function requestBody(request: Outgoing): string {
  if (request.body !== '' || Object.keys(request.form).length === 0) return request.body;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(request.form)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, item);
  }
  if (findHeader(request.headers, 'content-type') === undefined) {
    request.headers = { ...request.headers, 'Content-Type': ['application/x-www-form-urlencoded'] };
  }
  return params.toString();
}

export function toScriptRequest(request: Outgoing): ScriptRequest {
  let host = '';
  let path = '';
  let scheme = '';
  const params: Record<string, string[]> = {};
  try {
    const url = new URL(request.url);
    host = url.host;
    path = url.pathname;
    scheme = url.protocol.replace(/:$/, '');
    for (const [name, value] of url.searchParams) (params[name] ??= []).push(value);
  } catch {
    // An unparsable URL still reaches the script as text; the request itself will fail.
  }
  return {
    method: request.method,
    url: request.url,
    host,
    path,
    scheme,
    params,
    headers: structuredClone(request.headers),
    body: request.body,
    form: structuredClone(request.form),
  };
}

/** Applies what a pre-request script changed: `url` wins over `params`, which rebuild the query. */
function fromScriptRequest(current: Outgoing, before: ScriptRequest, after: ScriptRequest): Outgoing {
  let url = after.url;
  if (url === before.url && JSON.stringify(after.params) !== JSON.stringify(before.params)) {
    try {
      const parsed = new URL(url);
      const search = new URLSearchParams();
      for (const [name, values] of Object.entries(after.params))
        for (const value of values) search.append(name, value);
      parsed.search = search.toString();
      url = parsed.toString();
    } catch {
      // Keep the URL as it is; the request reports it.
    }
  }
  return {
    method: after.method ? after.method.toUpperCase() : current.method,
    url,
    headers: after.headers,
    body: after.body,
    form: after.form,
  };
}
