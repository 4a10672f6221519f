/**
 * Captured HTTP exchanges (spec 2.8): the message as it is stored and shown. Plain data.
 */

export const MESSAGE_SOURCES = ['api', 'capture', 'gateway', 'replay', 'har'] as const;
export type MessageSource = (typeof MESSAGE_SOURCES)[number];

export const MESSAGE_VIEWS = ['messages', 'errors', 'shared', 'captures'] as const;
export type MessageView = (typeof MESSAGE_VIEWS)[number];

export type BodyEncoding = 'plaintext' | 'base64';

export interface MessageRequest {
  method: string;
  url: string;
  scheme: string;
  host: string;
  path: string;
  params: Record<string, string[]>;
  headers: Record<string, string[]>;
  /** Form fields of a POST, as given; null when none were given. */
  form: Record<string, string[]> | null;
  /** Unix seconds, microsecond granularity. */
  timestamp: number;
  /** As given: plain text, or Base64 when `body_encoding` says so. */
  body: string;
  body_encoding: BodyEncoding;
  /** Length of the decoded body in bytes. */
  size_bytes: number;
}

export interface MessageResponse {
  status: number;
  reason: string;
  headers: Record<string, string[]>;
  timestamp: number;
  /** Seconds, as given (or measured by the gateway); null when unknown. */
  response_time: number | null;
  body: string;
  body_encoding: BodyEncoding;
  size_bytes: number;
}

/** A message ready to be stored: what normalisation produces. */
export interface NewMessage {
  source: MessageSource;
  unique_identifier: string | null;
  request: MessageRequest | null;
  response: MessageResponse | null;
  /** What went wrong on the way (an unreachable upstream for the gateway …); null when nothing did. */
  note: string | null;
}

export interface StoredMessage extends NewMessage {
  uuid: string;
  bucket_key: string;
  /** When the service received it, Unix seconds. */
  received_at: number;
  /** The time the lists order by: the request's timestamp, else the response's. */
  timestamp: number;
  shared: boolean;
  /** When it was last shared (the Shared list's order), Unix seconds; null when not shared. */
  shared_at: number | null;
}

/** What a list shows of a request: no headers, parameters or body. */
export type RequestSummary = Pick<
  MessageRequest,
  'method' | 'url' | 'scheme' | 'host' | 'path' | 'timestamp' | 'body_encoding' | 'size_bytes'
>;
export type ResponseSummary = Pick<
  MessageResponse,
  'status' | 'reason' | 'timestamp' | 'response_time' | 'body_encoding' | 'size_bytes'
>;

/** A list item: the message without headers, parameters and bodies (the detail has them). */
export interface ListedMessage extends Omit<StoredMessage, 'request' | 'response'> {
  request: RequestSummary | null;
  response: ResponseSummary | null;
}

export function summarize(message: Pick<NewMessage, 'request' | 'response'>): {
  request: RequestSummary | null;
  response: ResponseSummary | null;
} {
  const { request, response } = message;
  return {
    request: request && {
      method: request.method,
      url: request.url,
      scheme: request.scheme,
      host: request.host,
      path: request.path,
      timestamp: request.timestamp,
      body_encoding: request.body_encoding,
      size_bytes: request.size_bytes,
    },
    response: response && {
      status: response.status,
      reason: response.reason,
      timestamp: response.timestamp,
      response_time: response.response_time,
      body_encoding: response.body_encoding,
      size_bytes: response.size_bytes,
    },
  };
}

/**
 * A message is in the error view when its response status is ≥ 400 or it has no response. A capture
 * never is: the service answered it itself, so it is a received request, not a failed exchange
 * (captures stored before the service kept its answer have no response and are received all the same).
 */
export function isErrorExchange(message: Pick<NewMessage, 'source' | 'response'>): boolean {
  if (message.source === 'capture') return false;
  return message.response === null || message.response.status >= 400;
}
