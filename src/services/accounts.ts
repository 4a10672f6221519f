import { AppError, invalid } from '../domain/errors.js';
import { newId, nowSeconds } from '../domain/ids.js';
import { accountsRepo, type TeamSummary } from '../store/repositories/accounts.js';
import type { Executor, Store } from '../store/store.js';
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
/** Shortest password a web sign-up accepts. */
export const MIN_SIGNUP_PASSWORD = 10;

/** Checks a new account's name, email and password; answers the email, trimmed and lowercased. */
function checkedIdentity(
  input: { email: string; name: string; password: string },
  minPassword: number,
): string {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 320)
    throw new AppError('validation_failed', 'email is not an e-mail address', '/email');
  if (!input.name.trim() || input.name.length > 255)
    throw new AppError('validation_failed', 'name must be 1 to 255 characters', '/name');
  if (input.password.length < minPassword || input.password.length > 1024) {
    throw new AppError(
      'validation_failed',
      `password must be ${minPassword} to 1024 characters`,
      '/password',
    );
  }
  return email;
}

let dummy: Promise<string> | undefined;
/** A hash of no one's password, checked against when the email is unknown. */
const dummyHash = (): Promise<string> => (dummy ??= hashPassword(newId()));

export class AccountService {
  constructor(private readonly deps: { store: Store; tokens: TokenService; buckets: BucketService }) {}

  /**
   * `vigil bootstrap`: creates the account with its team and default bucket when absent (or checks
   * the password when present), then registers a personal client application, which carries a
   * fresh access token. Everything is written in one transaction.
   */
  async bootstrap(input: { email: string; name: string; password: string }): Promise<BootstrapResult> {
    const email = checkedIdentity(input, 8);
    const { store, tokens, buckets } = this.deps;
    const existing = await accountsRepo.findByEmail(store.db, email);
    if (existing && !(await verifyPassword(input.password, existing.password_hash))) {
      throw new AppError('unauthorized', `the password does not match the existing account ${email}`);
    }
    const passwordHash = existing ? existing.password_hash : await hashPassword(input.password);
    const now = nowSeconds();

    return store.transaction(async (trx) => {
      let accountId = existing?.id;
      let created = false;
      if (!accountId) {
        accountId = await this.createInTransaction(trx, { email, name: input.name, passwordHash, now });
        created = true;
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

  /**
   * Sign-up from the web pages: the account with its team and default bucket, as bootstrap makes
   * them, but no application or token. Answers the new account's id.
   */
  async register(input: { email: string; name: string; password: string }): Promise<string> {
    const email = checkedIdentity(input, MIN_SIGNUP_PASSWORD);
    const { store } = this.deps;
    if (await accountsRepo.findByEmail(store.db, email))
      throw new AppError('conflict', `an account with the email ${email} already exists`, '/email');
    const passwordHash = await hashPassword(input.password);
    const now = nowSeconds();
    return store.transaction(async (trx) => {
      if (await accountsRepo.findByEmail(trx, email))
        throw new AppError('conflict', `an account with the email ${email} already exists`, '/email');
      return this.createInTransaction(trx, { email, name: input.name, passwordHash, now });
    });
  }

  /**
   * The account with this email and password, or null. An unknown email costs the same scrypt work
   * as a wrong password, so the answer time does not tell which accounts exist.
   */
  async checkPassword(email: string, password: string): Promise<{ id: string } | null> {
    if (password.length > 1024) return null;
    const account = await accountsRepo.findByEmail(this.deps.store.db, email.trim().toLowerCase());
    if (!account) {
      await verifyPassword(password, await dummyHash());
      return null;
    }
    return (await verifyPassword(password, account.password_hash)) ? { id: account.id } : null;
  }

  /** Renames the account (`PUT /account`); the name is trimmed, 1 to 255 characters. */
  async rename(principal: Pick<Principal, 'accountId'>, name: string): Promise<AccountView> {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 255) throw invalid('/name', 'must be 1 to 255 characters, not blank');
    await accountsRepo.updateName(this.deps.store.db, principal.accountId, trimmed);
    return this.get(principal);
  }

  /**
   * Changes the password (`POST /account/password`) after checking the current one with the same
   * scrypt code as sign-in. The new one follows the sign-up rule. Every web session of the account
   * ends in the same transaction; access tokens stay valid (spec 5.4: until revoked).
   */
  async changePassword(
    principal: Pick<Principal, 'accountId'>,
    input: { currentPassword: string; newPassword: string },
  ): Promise<void> {
    const { store } = this.deps;
    const account = await accountsRepo.findById(store.db, principal.accountId);
    if (!account) throw new AppError('unauthorized', 'The account of this token no longer exists');
    if (input.newPassword.length < MIN_SIGNUP_PASSWORD || input.newPassword.length > 1024) {
      throw invalid('/new_password', `must be ${MIN_SIGNUP_PASSWORD} to 1024 characters`);
    }
    const matches =
      input.currentPassword.length <= 1024 &&
      (await verifyPassword(input.currentPassword, account.password_hash));
    if (!matches) throw invalid('/current_password', 'is not the current password of the account');
    const passwordHash = await hashPassword(input.newPassword);
    await store.transaction(async (trx) => {
      await accountsRepo.updatePasswordHash(trx, account.id, passwordHash);
      await accountsRepo.deleteWebSessions(trx, account.id);
    });
  }

  /** The account, its team (as owner) and the team's default bucket. */
  private async createInTransaction(
    trx: Executor,
    input: { email: string; name: string; passwordHash: string; now: number },
  ): Promise<string> {
    const { now } = input;
    const name = input.name.trim();
    const accountId = newId();
    await accountsRepo.insert(trx, {
      id: accountId,
      email: input.email,
      name,
      password_hash: input.passwordHash,
      created_at: now,
    });
    const teamId = newId();
    await accountsRepo.insertTeam(trx, { id: teamId, name: `${name}'s team`, created_at: now });
    await accountsRepo.addMember(trx, teamId, accountId, 'owner', now);
    await this.deps.buckets.createInTransaction(trx, {
      teamId,
      accountId,
      name: 'My first bucket',
      isDefault: true,
    });
    return accountId;
  }

  async get(principal: Pick<Principal, 'accountId'>): Promise<AccountView> {
    const account = await accountsRepo.findById(this.deps.store.db, principal.accountId);
    if (!account) throw new AppError('unauthorized', 'The account of this token or session no longer exists');
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
