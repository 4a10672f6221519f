import { AppError } from '../domain/errors.js';
import { newId, nowSeconds } from '../domain/ids.js';
import { accountsRepo, type TeamSummary } from '../store/repositories/accounts.js';
import type { Store } from '../store/store.js';
import type { BucketService } from './buckets.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { Principal } from './principal.js';
import type { TokenService } from './tokens.js';

export interface BootstrapResult {
  access_token: string;
  bucket_key: string;
  client_id: string;
  client_secret: string;
  account_id: string;
  created: boolean;
}

export interface AccountView {
  id: string;
  name: string;
  email: string;
  created_at: number;
  teams: TeamSummary[];
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class AccountService {
  constructor(private readonly deps: { store: Store; tokens: TokenService; buckets: BucketService }) {}

  /**
   * `vigil bootstrap`: creates the account with its team and default bucket when absent (or checks
   * the password when present), then registers a personal client application, which carries a
   * fresh access token. Everything is written in one transaction.
   */
  async bootstrap(input: { email: string; name: string; password: string }): Promise<BootstrapResult> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email) || email.length > 320)
      throw new AppError('validation_failed', 'email is not an e-mail address', '/email');
    if (!input.name.trim() || input.name.length > 255)
      throw new AppError('validation_failed', 'name must be 1 to 255 characters', '/name');
    if (input.password.length < 8 || input.password.length > 1024) {
      throw new AppError('validation_failed', 'password must be 8 to 1024 characters', '/password');
    }
    const { store, tokens, buckets } = this.deps;
    const existing = await accountsRepo.findByEmail(store.db, email);
    if (existing && !(await verifyPassword(input.password, existing.password_hash))) {
      throw new AppError('unauthorized', `the password does not match the existing account ${email}`);
    }
    const passwordHash = existing ? existing.password_hash : await hashPassword(input.password);

    return store.transaction(async (trx) => {
      const now = nowSeconds();
      let accountId = existing?.id;
      let created = false;
      if (!accountId) {
        accountId = newId();
        created = true;
        await accountsRepo.insert(trx, {
          id: accountId,
          email,
          name: input.name.trim(),
          password_hash: passwordHash,
          created_at: now,
        });
        const teamId = newId();
        await accountsRepo.insertTeam(trx, {
          id: teamId,
          name: `${input.name.trim()}'s team`,
          created_at: now,
        });
        await accountsRepo.addMember(trx, teamId, accountId, 'owner', now);
        await buckets.createInTransaction(trx, {
          teamId,
          accountId,
          name: 'My first bucket',
          isDefault: true,
        });
      }
      const teams = await accountsRepo.teamsOf(trx, accountId);
      const bucket = await buckets.defaultBucket(trx, teams[0]!.id);
      const app = await tokens.createApplication(trx, {
        accountId,
        name: 'Vigil CLI (bootstrap)',
        websiteUrl: '',
        callbackUrl: '',
      });
      return {
        access_token: app.accessToken,
        bucket_key: bucket.key,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        account_id: accountId,
        created,
      };
    });
  }

  async get(principal: Principal): Promise<AccountView> {
    const account = await accountsRepo.findById(this.deps.store.db, principal.accountId);
    if (!account) throw new AppError('unauthorized', 'The account of this token no longer exists');
    const teams = await accountsRepo.teamsOf(this.deps.store.db, principal.accountId);
    return {
      id: account.id,
      name: account.name,
      email: account.email,
      created_at: account.created_at,
      teams,
    };
  }
}
