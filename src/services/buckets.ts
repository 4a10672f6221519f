import { AppError, conflict, notFound } from '../domain/errors.js';
import { newBucketKey, newSecret, nowSeconds } from '../domain/ids.js';
import type { BucketRow } from '../store/database.js';
import { accountsRepo } from '../store/repositories/accounts.js';
import { type BucketWithTeam, bucketsRepo } from '../store/repositories/buckets.js';
import type { Executor, Store } from '../store/store.js';
import type { Principal } from './principal.js';

export const BUCKET_KEY_PATTERN = /^[a-z0-9]{12}$/;

/** Days captured messages are kept unless shared (DESIGN §6). */
export const DEFAULT_RETENTION_DAYS = 30;

export class BucketService {
  constructor(private readonly deps: { store: Store }) {}

  list(principal: Principal): Promise<BucketWithTeam[]> {
    return bucketsRepo.listForAccount(this.deps.store.db, principal.accountId);
  }

  /** The bucket when the caller's team owns it; 404 otherwise, so foreign buckets stay invisible. */
  async require(
    principal: Principal,
    key: string,
    db: Executor = this.deps.store.db,
  ): Promise<BucketWithTeam> {
    const bucket = BUCKET_KEY_PATTERN.test(key)
      ? await bucketsRepo.getForAccount(db, key, principal.accountId)
      : undefined;
    if (!bucket) throw notFound(`Bucket ${key}`);
    return bucket;
  }

  async create(
    principal: Principal,
    input: { name: string; teamId?: string | undefined },
  ): Promise<BucketWithTeam> {
    const { store } = this.deps;
    const teams = await accountsRepo.teamsOf(store.db, principal.accountId);
    const team = input.teamId ? teams.find((t) => t.id === input.teamId) : teams[0];
    if (!team) {
      throw new AppError(
        'validation_failed',
        `team_uuid ${input.teamId ?? ''} is not a team of this account`,
        '/team_uuid',
      );
    }
    const row = await store.transaction((trx) =>
      this.createInTransaction(trx, {
        teamId: team.id,
        accountId: principal.accountId,
        name: input.name,
        isDefault: false,
      }),
    );
    return { ...row, team_name: team.name };
  }

  async createInTransaction(
    db: Executor,
    input: { teamId: string; accountId: string; name: string; isDefault: boolean },
  ): Promise<BucketRow> {
    const row: BucketRow = {
      key: newBucketKey(),
      name: input.name,
      team_id: input.teamId,
      created_by: input.accountId,
      is_default: input.isDefault ? 1 : 0,
      verify_ssl: 1,
      trigger_id: newSecret('', 18),
      signing_secret: newSecret('vgl_ws_'),
      created_at: nowSeconds(),
      retention_days: DEFAULT_RETENTION_DAYS,
    };
    await bucketsRepo.insert(db, row);
    return row;
  }

  async defaultBucket(db: Executor, teamId: string): Promise<BucketRow> {
    const bucket = await bucketsRepo.findDefault(db, teamId);
    if (!bucket) throw new AppError('internal_error', 'The team has no default bucket');
    return bucket;
  }

  /** Changes the bucket's name, `verify_ssl` or message retention; one transaction. */
  async update(
    principal: Principal,
    key: string,
    patch: {
      name?: string | undefined;
      verify_ssl?: boolean | undefined;
      retention_days?: number | undefined;
    },
  ): Promise<BucketWithTeam> {
    return this.deps.store.transaction(async (trx) => {
      const bucket = await this.require(principal, key, trx);
      const changes = {
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.verify_ssl !== undefined && { verify_ssl: patch.verify_ssl ? 1 : 0 }),
        ...(patch.retention_days !== undefined && { retention_days: patch.retention_days }),
      };
      await bucketsRepo.update(trx, key, changes);
      return { ...bucket, ...changes };
    });
  }

  /** Deletes a bucket with everything in it. The default bucket stays: 409. */
  async delete(principal: Principal, key: string): Promise<void> {
    await this.deps.store.transaction(async (trx) => {
      const bucket = await this.require(principal, key, trx);
      if (bucket.is_default)
        throw conflict(`Bucket ${key} is the team's default bucket and cannot be deleted`);
      await bucketsRepo.delete(trx, key);
    });
  }
}
