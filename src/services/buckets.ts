import { BUCKET_KEY } from '../domain/gateway-urls.js';
import { AppError, conflict, notFound } from '../domain/errors.js';
import { newBucketKey, newSecret, nowSeconds, sameSecret } from '../domain/ids.js';
import type { BucketRow } from '../store/database.js';
import { accountsRepo } from '../store/repositories/accounts.js';
import { type BucketWithTeam, bucketsRepo } from '../store/repositories/buckets.js';
import type { Executor, Store } from '../store/store.js';
import type { Principal } from './principal.js';

/** The shape the API presents. */
export type { BucketWithTeam } from '../store/repositories/buckets.js';

export const BUCKET_KEY_PATTERN = BUCKET_KEY;

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
      auth_token: null,
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

  /**
   * Makes the capture and gateway URLs of the bucket require a new random token (the old one stops
   * working at once), or with `require: false` the bucket key alone again.
   */
  async setAuthToken(principal: Principal, key: string, require: boolean): Promise<BucketWithTeam> {
    return this.deps.store.transaction(async (trx) => {
      const bucket = await this.require(principal, key, trx);
      const changes = { auth_token: require ? newSecret('vgl_ba_') : null };
      await bucketsRepo.update(trx, key, changes);
      return { ...bucket, ...changes };
    });
  }

  /**
   * The bucket that capture or gateway traffic names, when the token it presents is the one the
   * bucket requires (if any). No token is needed to call these URLs: the bucket key names where the
   * traffic goes, and an unknown key is a 404.
   */
  async forTraffic(key: string, presented: string | undefined): Promise<BucketRow> {
    const bucket = BUCKET_KEY_PATTERN.test(key)
      ? await bucketsRepo.byKey(this.deps.store.db, key)
      : undefined;
    if (!bucket) throw notFound(`Bucket ${key}`);
    if (
      bucket.auth_token !== null &&
      (presented === undefined || !sameSecret(bucket.auth_token, presented))
    ) {
      throw new AppError(
        'unauthorized',
        presented === undefined
          ? `Bucket ${key} requires its auth token in the Vigil-Bucket-Auth header or query parameter`
          : `The Vigil-Bucket-Auth token is not the one bucket ${key} requires`,
      );
    }
    return bucket;
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
