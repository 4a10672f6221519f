/**
 * Replaying a stored request: sent again, as stored, through the egress policy with the runner's HTTP
 * client, and turned into a new message (`source: replay`) whether or not an answer came.
 */
import { type HttpSession, HttpFailure, openHttpSession } from '../net/client.js';
import type { EgressPolicy } from '../net/egress.js';
import { endToEnd, recordedRequest } from './exchange.js';
import { GATEWAY_TIMEOUT_MS } from './gateway.js';
import type { MessageRequest, NewMessage } from '../domain/messages.js';
import { bodyBytes, bodyFromBytes, microseconds } from './normalize.js';

export interface ReplayOptions {
  egress: EgressPolicy;
  /** Response bytes kept in the new message. */
  maxBodyBytes: number;
  timeoutMs?: number;
  /** Opens the HTTP session (tests); the runner's client by default. */
  open?: typeof openHttpSession;
}

/** The new message, and why no response came when none did. */
export interface Replayed {
  message: NewMessage;
  failure: string | null;
}

export async function replayRequest(
  original: { uuid: string; request: MessageRequest },
  options: ReplayOptions,
): Promise<Replayed> {
  const stored = original.request;
  const body = bodyBytes(stored.body, stored.body_encoding);
  const headers = endToEnd(
    Object.fromEntries(Object.entries(stored.headers).map(([name, values]) => [name.toLowerCase(), values])),
    ['content-length', 'host', 'expect'],
  );
  const startedAt = Date.now() / 1000;
  const request = recordedRequest({
    method: stored.method,
    url: stored.url,
    headers,
    body,
    timestamp: startedAt,
  });
  const note = `replay of ${original.uuid}`;
  const session: HttpSession = (options.open ?? openHttpSession)({
    egress: options.egress,
    verifySsl: true,
    cookies: false,
    maxBodyBytes: options.maxBodyBytes,
  });
  try {
    const answer = await session.send({
      method: stored.method,
      url: stored.url,
      headers,
      body: body.length > 0 ? body : null,
      timeoutMs: options.timeoutMs ?? GATEWAY_TIMEOUT_MS,
    });
    const cut = answer.truncated
      ? `; the response body is longer than ${options.maxBodyBytes} bytes, the first ${options.maxBodyBytes} are kept`
      : '';
    return {
      message: {
        source: 'replay',
        unique_identifier: null,
        request,
        response: {
          status: answer.status,
          reason: answer.reason,
          headers: answer.headers,
          timestamp: microseconds(startedAt + (answer.timeMs - answer.timings.receive_response_ms) / 1000),
          response_time: microseconds(answer.timeMs / 1000),
          ...bodyFromBytes(answer.body),
        },
        note: `${note}${cut}`,
      },
      failure: null,
    };
  } catch (error) {
    if (!(error instanceof HttpFailure)) throw error;
    return {
      message: {
        source: 'replay',
        unique_identifier: null,
        request,
        response: null,
        note: `${note}: ${error.message}`,
      },
      failure: error.message,
    };
  } finally {
    await session.close();
  }
}
