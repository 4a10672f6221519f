import type { MessageFiltersInput } from '../domain/message-filters.js';
import { MESSAGE_VIEWS, type MessageView } from '../domain/messages.js';
import { AppError, invalid, notFound } from '../domain/errors.js';
import { isUuid, newId, nowFloat } from '../domain/ids.js';
import { lockRow } from '../store/locks.js';
import { type SavedViewWithCreator, viewsRepo } from '../store/repositories/views.js';
import type { Executor, Store, Trx } from '../store/store.js';
import type { BucketService } from './buckets.js';
import { checkMessageFilters } from './messages.js';
import type { Principal } from './principal.js';

/** The shape the API presents. */
export type { SavedViewWithCreator } from '../store/repositories/views.js';

export const MAX_VIEWS_PER_BUCKET = 100;
export const VIEW_NAME_LENGTH = 100;
/** The time windows a view may keep: the dashboard lists messages of the last … */
export const VIEW_WINDOWS = ['15m', '1h', '24h', '7d', '30d'] as const;
export type ViewWindow = (typeof VIEW_WINDOWS)[number];

export interface ViewFilters extends MessageFiltersInput {
  window?: ViewWindow | undefined;
}

export interface ViewInput {
  name: string;
  stream: MessageView;
  filters?: ViewFilters | undefined;
}

/** What a view stores of its filters: the ones given, as given (trimmed of nothing else). */
function storedFilters(filters: ViewFilters | undefined): ViewFilters {
  const out: ViewFilters = {};
  if (!filters) return out;
  checkMessageFilters(filters, (name) => `/filters/${name}`);
  for (const key of ['method', 'host', 'path', 'status', 'q', 'window'] as const) {
    const value = filters[key];
    if (value !== undefined) (out as Record<string, string>)[key] = value;
  }
  return out;
}

/** Saved stream views of the dashboard (docs/capture.md): named list filters of a bucket. */
export class ViewService {
  constructor(private readonly deps: { store: Store; buckets: BucketService }) {}

  async list(principal: Principal, bucketKey: string): Promise<SavedViewWithCreator[]> {
    await this.deps.buckets.require(principal, bucketKey);
    return viewsRepo.list(this.deps.store.db, bucketKey);
  }

  async get(principal: Principal, bucketKey: string, id: string): Promise<SavedViewWithCreator> {
    await this.deps.buckets.require(principal, bucketKey);
    return this.find(this.deps.store.db, bucketKey, id);
  }

  async create(principal: Principal, bucketKey: string, input: ViewInput): Promise<SavedViewWithCreator> {
    const fields = this.fields(input);
    return this.deps.store.transaction(async (trx) => {
      await this.deps.buckets.require(principal, bucketKey, trx);
      await lockRow(trx, 'buckets', bucketKey);
      const count = await viewsRepo.count(trx, bucketKey);
      if (count >= MAX_VIEWS_PER_BUCKET) {
        throw new AppError(
          'limit_reached',
          `Bucket ${bucketKey} has ${count} saved views; the limit is ${MAX_VIEWS_PER_BUCKET}`,
        );
      }
      await this.checkName(trx, bucketKey, fields.name_key, null, fields.name);
      const now = nowFloat();
      const id = newId();
      await viewsRepo.insert(trx, {
        id,
        bucket_key: bucketKey,
        ...fields,
        created_by: principal.accountId,
        created_at: now,
        updated_at: now,
      });
      return (await viewsRepo.get(trx, bucketKey, id))!;
    });
  }

  /** PUT replaces the name, stream and filters. */
  async update(
    principal: Principal,
    bucketKey: string,
    id: string,
    input: ViewInput,
  ): Promise<SavedViewWithCreator> {
    const fields = this.fields(input);
    return this.deps.store.transaction(async (trx) => {
      await this.deps.buckets.require(principal, bucketKey, trx);
      await lockRow(trx, 'buckets', bucketKey);
      const view = await this.find(trx, bucketKey, id);
      await this.checkName(trx, bucketKey, fields.name_key, view.id, fields.name);
      await viewsRepo.update(trx, view.id, { ...fields, updated_at: nowFloat() });
      return (await viewsRepo.get(trx, bucketKey, view.id))!;
    });
  }

  async delete(principal: Principal, bucketKey: string, id: string): Promise<void> {
    await this.deps.store.transaction(async (trx) => {
      await this.deps.buckets.require(principal, bucketKey, trx);
      const view = await this.find(trx, bucketKey, id);
      await viewsRepo.delete(trx, view.id);
    });
  }

  private fields(input: ViewInput) {
    const name = input.name.trim();
    if (name.length === 0 || [...name].length > VIEW_NAME_LENGTH)
      throw invalid('/name', `must have 1 to ${VIEW_NAME_LENGTH} characters besides surrounding spaces`);
    if (!(MESSAGE_VIEWS as readonly string[]).includes(input.stream))
      throw invalid('/stream', `must be one of ${MESSAGE_VIEWS.join(', ')}`);
    return {
      name,
      name_key: name.toLowerCase(),
      stream: input.stream,
      filters: JSON.stringify(storedFilters(input.filters)),
    };
  }

  private async checkName(trx: Trx, bucketKey: string, nameKey: string, self: string | null, name: string) {
    const other = await viewsRepo.byNameKey(trx, bucketKey, nameKey);
    if (other && other.id !== self)
      throw new AppError(
        'conflict',
        `/name: bucket ${bucketKey} already has a saved view named "${name}" (names ignore case)`,
        '/name',
      );
  }

  private async find(db: Executor, bucketKey: string, id: string): Promise<SavedViewWithCreator> {
    const view = isUuid(id) ? await viewsRepo.get(db, bucketKey, id) : undefined;
    if (!view) throw notFound(`Saved view ${id}`);
    return view;
  }
}
