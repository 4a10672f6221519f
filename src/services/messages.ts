import { randomBytes } from 'node:crypto';
import {
  FilterProblem,
  type MessageFilters,
  type MessageFiltersInput,
  parseMessageFilters,
} from '../domain/message-filters.js';
import { HAR_LIMITS, messagesFromHar } from '../capture/har.js';
import type { ListedMessage, MessageView, NewMessage, StoredMessage } from '../domain/messages.js';
import { MAX_MESSAGES_PER_CALL, type ItemProblem, normalizeItem } from '../capture/normalize.js';
import { AppError, notFound } from '../domain/errors.js';
import { isUuid, newTimeOrderedId, nowFloat } from '../domain/ids.js';
import type { Metrics } from '../observability/metrics.js';
import type { MessageRow } from '../store/database.js';
import { messageRow, messagesRepo, toListedMessage, toMessage } from '../store/repositories/messages.js';
import type { Executor, Store } from '../store/store.js';
import type { BucketService } from './buckets.js';
import type { Principal } from './principal.js';

export const MESSAGES_PAGE = { default: 50, max: 1000 } as const;

export interface ItemResult {
  status: 'success' | 'warning' | 'error';
  unique_identifier?: string;
  uuid?: string;
  warning?: ItemProblem;
  error?: ItemProblem;
}

export interface IngestResult {
  results: ItemResult[];
  meta: { success_count: number; warning_count: number; error_count: number };
}

/**
 * Checks the list filters (docs/capture.md); a bad one is a 400 naming it, as `?status` for query
 * parameters or `/filters/status` for a saved view's body. Answers undefined when none is given.
 */
export function checkMessageFilters(
  input: MessageFiltersInput,
  at: (name: string) => string = (name) => `?${name}`,
): MessageFilters | undefined {
  try {
    const filters = parseMessageFilters(input);
    return Object.keys(filters).length > 0 ? filters : undefined;
  } catch (error) {
    if (!(error instanceof FilterProblem)) throw error;
    const field = at(error.field);
    throw new AppError('validation_failed', `${field} ${error.message}`, field);
  }
}

/**
 * Captured traffic: creating messages (one call = one transaction), reading the four views,
 * sharing through public links, deleting, usage and retention.
 */
/** What stands in a public message where its bucket key was. */
export const MASKED_BUCKET_KEY = '[bucket-key]';

function withoutBucketKey(message: StoredMessage): StoredMessage {
  const request = message.request;
  if (!request) return message;
  const mask = (text: string) => text.replaceAll(message.bucket_key, MASKED_BUCKET_KEY);
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([name, values]) => [name, values.map(mask)]),
  );
  return {
    ...message,
    request: {
      ...request,
      url: mask(request.url),
      host: mask(request.host),
      path: mask(request.path),
      headers,
    },
  };
}

/** Which page of a message view to read. */
type MessagePageInput = {
  count?: number | undefined;
  since?: number | undefined;
  before?: number | undefined;
} & MessageFiltersInput;

export class MessageService {
  constructor(private readonly deps: { store: Store; buckets: BucketService; metrics?: Metrics }) {}

  /** `POST /buckets/<key>/messages`: one object or an array of at most 50. */
  async ingest(principal: Principal, bucketKey: string, body: unknown): Promise<IngestResult> {
    await this.deps.buckets.require(principal, bucketKey);
    if (body === undefined || body === null) {
      throw new AppError(
        'validation_failed',
        'The request body must be a message or an array of messages',
        '/',
      );
    }
    const items = Array.isArray(body) ? body : [body];
    if (items.length > MAX_MESSAGES_PER_CALL) {
      throw new AppError(
        'limit_reached',
        `A call creates at most ${MAX_MESSAGES_PER_CALL} messages; got ${items.length}, none saved`,
      );
    }
    const receivedAt = nowFloat();
    const normalized = items.map((item) => normalizeItem(item, receivedAt));
    await this.deps.store.assertRoom();
    const answer = await this.deps.store.sharedTransaction(async (trx) => {
      const results: ItemResult[] = [];
      const inserts: MessageRow[] = [];
      let added = 0;
      for (const item of normalized) {
        if (!item.ok) {
          results.push({
            status: 'error',
            ...(item.unique_identifier !== null && { unique_identifier: item.unique_identifier }),
            error: item.error,
          });
          continue;
        }
        const { message, warning } = item;
        let uuid: string | null = null;
        if (message.unique_identifier !== null) {
          // Flush so that a pair sent in one call finds its other half.
          await messagesRepo.insert(trx, inserts.splice(0));
          uuid = await this.mergePair(trx, bucketKey, message);
        }
        if (uuid === null) {
          uuid = newTimeOrderedId();
          inserts.push(messageRow(uuid, bucketKey, message, receivedAt));
          added++;
        }
        results.push({
          status: warning ? 'warning' : 'success',
          ...(message.unique_identifier !== null && { unique_identifier: message.unique_identifier }),
          uuid,
          ...(warning && { warning }),
        });
      }
      await messagesRepo.insert(trx, inserts);
      await messagesRepo.countReceived(trx, bucketKey, added);
      return {
        results,
        meta: {
          // Spec 2.8: success_count counts the items saved, those saved with a warning included.
          success_count: results.filter((r) => r.status !== 'error').length,
          warning_count: results.filter((r) => r.status === 'warning').length,
          error_count: results.filter((r) => r.status === 'error').length,
        },
      };
    });
    this.deps.metrics?.messagesStored('api', answer.meta.success_count);
    return answer;
  }

  /**
   * A request and a response sent apart with the same identifier become one message: the half
   * that arrives second completes the stored one. Answers the stored id, or null when there is
   * nothing to complete.
   */
  private async mergePair(trx: Executor, bucketKey: string, message: NewMessage) {
    if (message.unique_identifier === null || (message.request && message.response)) return null;
    const lacking = message.request ? 'request' : 'response';
    const existing = await messagesRepo.pendingPair(trx, bucketKey, message.unique_identifier, lacking);
    if (!existing) return null;
    const stored = toMessage(existing);
    const merged: NewMessage = {
      source: stored.source,
      unique_identifier: stored.unique_identifier,
      request:
        message.request ?? (stored.request && { ...stored.request, body: existing.request_body ?? '' }),
      response:
        message.response ?? (stored.response && { ...stored.response, body: existing.response_body ?? '' }),
      note: stored.note,
    };
    const row = messageRow(existing.id, bucketKey, merged, existing.received_at);
    await messagesRepo.replace(trx, {
      ...row,
      share_token: existing.share_token,
      shared_at: existing.shared_at,
    });
    return existing.id;
  }

  /** Stores one exchange the service recorded itself (capture, gateway, replay, HAR import). */
  async record(bucketKey: string, message: NewMessage, id: string = newTimeOrderedId()): Promise<string> {
    await this.deps.store.assertRoom();
    await this.deps.store.sharedTransaction(async (trx) => {
      await messagesRepo.insert(trx, [messageRow(id, bucketKey, message, nowFloat())]);
      await messagesRepo.countReceived(trx, bucketKey, 1);
    });
    this.deps.metrics?.messagesStored(message.source);
    return id;
  }

  /** Stores several recorded exchanges in one transaction (HAR import). */
  async recordMany(bucketKey: string, messages: readonly NewMessage[]): Promise<string[]> {
    const now = nowFloat();
    const rows = messages.map((message) => messageRow(newTimeOrderedId(), bucketKey, message, now));
    await this.deps.store.assertRoom();
    await this.deps.store.transaction(async (trx) => {
      for (let i = 0; i < rows.length; i += 100) await messagesRepo.insert(trx, rows.slice(i, i + 100));
      await messagesRepo.countReceived(trx, bucketKey, rows.length);
    });
    for (const message of messages) this.deps.metrics?.messagesStored(message.source);
    return rows.map((row) => row.id);
  }

  /** `POST /buckets/<key>/har`: every entry of a HAR document becomes a message, in one transaction. */
  async importHar(principal: Principal, bucketKey: string, har: unknown): Promise<string[]> {
    await this.deps.buckets.require(principal, bucketKey);
    return this.recordMany(bucketKey, messagesFromHar(har, nowFloat()));
  }

  /**
   * The messages of a window with their bodies, oldest first (HAR export): at most `limit`, capped
   * at the export limit; `truncated` when the window holds more.
   */
  async exportWindow(
    principal: Principal,
    bucketKey: string,
    window: {
      since?: number | undefined;
      before?: number | undefined;
      limit?: number | undefined;
    } & MessageFiltersInput,
  ): Promise<{ messages: StoredMessage[]; limit: number; truncated: boolean }> {
    await this.deps.buckets.require(principal, bucketKey);
    const filters = checkMessageFilters(window);
    const limit = Math.min(window.limit ?? HAR_LIMITS.exportEntries, HAR_LIMITS.exportEntries);
    const rows = await messagesRepo.window(this.deps.store.db, bucketKey, {
      since: window.since,
      before: window.before,
      limit: limit + 1,
      filters,
    });
    return { messages: rows.slice(0, limit).map(toMessage), limit, truncated: rows.length > limit };
  }

  async list(
    principal: Principal,
    bucketKey: string,
    view: MessageView,
    page: MessagePageInput,
  ): Promise<ListedMessage[]> {
    return (await this.listRows(principal, bucketKey, view, page)).map(toListedMessage);
  }

  /** A page of the Shared view, each message with the token of its public link. */
  async listShared(
    principal: Principal,
    bucketKey: string,
    page: MessagePageInput,
  ): Promise<{ message: ListedMessage; token: string }[]> {
    const rows = await this.listRows(principal, bucketKey, 'shared', page);
    // The Shared view holds only rows with a token.
    return rows.map((row) => ({ message: toListedMessage(row), token: row.share_token ?? '' }));
  }

  private async listRows(principal: Principal, bucketKey: string, view: MessageView, page: MessagePageInput) {
    await this.deps.buckets.require(principal, bucketKey);
    const filters = checkMessageFilters(page);
    const count = Math.min(page.count ?? MESSAGES_PAGE.default, MESSAGES_PAGE.max);
    return messagesRepo.list(this.deps.store.db, bucketKey, view, {
      count,
      since: page.since,
      before: page.before,
      filters,
    });
  }

  async detail(principal: Principal, bucketKey: string, uuid: string): Promise<StoredMessage> {
    return toMessage(await this.requireRow(principal, bucketKey, uuid));
  }

  async delete(principal: Principal, bucketKey: string, uuid: string): Promise<void> {
    await this.requireRow(principal, bucketKey, uuid);
    await messagesRepo.delete(this.deps.store.db, bucketKey, uuid);
    this.deps.store.roomFreed();
  }

  async clear(principal: Principal, bucketKey: string): Promise<number> {
    await this.deps.buckets.require(principal, bucketKey);
    const deleted = await messagesRepo.clear(this.deps.store.db, bucketKey);
    this.deps.store.roomFreed();
    return deleted;
  }

  /** Shares a message under a new random token (sharing again replaces the old one). */
  async share(
    principal: Principal,
    bucketKey: string,
    uuid: string,
  ): Promise<{ message: StoredMessage; token: string }> {
    await this.requireRow(principal, bucketKey, uuid);
    const token = randomBytes(24).toString('base64url');
    await messagesRepo.share(this.deps.store.db, bucketKey, uuid, token, nowFloat());
    const row = await messagesRepo.get(this.deps.store.db, bucketKey, uuid);
    return { message: toMessage(row!), token };
  }

  async unshare(principal: Principal, bucketKey: string, uuid: string): Promise<void> {
    await this.requireRow(principal, bucketKey, uuid);
    await messagesRepo.unshare(this.deps.store.db, bucketKey, uuid);
  }

  /** The message behind a public link; null when the token is unknown or revoked. */
  /**
   * The message a public link shows. A link hands out read access to one exchange, never write
   * access to its bucket: the bucket key is masked wherever the request names it (a captured
   * request's URL, its Host and Referer).
   */
  async byShareToken(token: string): Promise<StoredMessage | null> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return null;
    const row = await messagesRepo.byShareToken(this.deps.store.db, token);
    return row ? withoutBucketKey(toMessage(row)) : null;
  }

  async usage(principal: Principal, bucketKey: string) {
    await this.deps.buckets.require(principal, bucketKey);
    const usage = await messagesRepo.usage(this.deps.store.db, bucketKey);
    return {
      bucket_key: bucketKey,
      messages_received: usage.received,
      messages_stored: usage.stored,
      messages_shared: usage.shared,
    };
  }

  /** Deletes unshared messages past their bucket's retention. */
  async applyRetention(now: number = nowFloat()): Promise<number> {
    const deleted = await messagesRepo.applyRetention(this.deps.store.db, now);
    this.deps.store.roomFreed();
    return deleted;
  }

  private async requireRow(principal: Principal, bucketKey: string, uuid: string): Promise<MessageRow> {
    await this.deps.buckets.require(principal, bucketKey);
    const row = isUuid(uuid) ? await messagesRepo.get(this.deps.store.db, bucketKey, uuid) : undefined;
    if (!row) throw notFound(`Message ${uuid}`);
    return row;
  }
}
