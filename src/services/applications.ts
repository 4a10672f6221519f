import { invalid, notFound } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import { type ClientApplication, tokensRepo } from '../store/repositories/tokens.js';
import type { Executor, Store } from '../store/store.js';
import type { Principal } from './principal.js';
import type { TokenService } from './tokens.js';

/** The shape the API presents. */
export type { ClientApplication } from '../store/repositories/tokens.js';

export interface ApplicationInput {
  name: string;
  website_url: string;
  callback_url: string;
  is_public?: boolean | undefined;
}

/** An application with its client secret, which is shown this once. */
export interface ApplicationWithSecret {
  application: ClientApplication;
  clientSecret: string;
}

/**
 * An http or https URL as given (the authorize step will compare `redirect_uri` with it exactly).
 * Any host is accepted, so `http://localhost` and `http://127.0.0.1` work for development.
 */
function httpUrl(field: string, value: string, options: { fragment: boolean }): string {
  if (/\s/.test(value)) throw invalid(field, 'must not contain white space');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(field, 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(field, `must be an http or https URL, not ${url.protocol.slice(0, -1)}`);
  }
  if (url.username || url.password) throw invalid(field, 'must not carry a user name or password');
  if (!options.fragment && value.includes('#')) {
    throw invalid(field, 'must not have a #fragment (RFC 6749, 3.1.2)');
  }
  return value;
}

/**
 * Client applications of an account (spec 5.2). Creating one also authorizes the owner's own
 * account, so the answer carries an access token besides the client secret.
 */
export class ApplicationService {
  constructor(private readonly deps: { store: Store; tokens: TokenService }) {}

  list(principal: Principal): Promise<ClientApplication[]> {
    return tokensRepo.listClients(this.deps.store.db, principal.accountId);
  }

  /** The account's application; 404 for unknown ids and other accounts' applications alike. */
  async get(
    principal: Principal,
    clientId: string,
    db: Executor = this.deps.store.db,
  ): Promise<ClientApplication> {
    const application = isUuid(clientId)
      ? await tokensRepo.findClient(db, principal.accountId, clientId)
      : undefined;
    if (!application) throw notFound(`Application ${clientId}`);
    return application;
  }

  async create(
    principal: Principal,
    input: ApplicationInput,
  ): Promise<ApplicationWithSecret & { accessToken: string }> {
    const name = input.name.trim();
    if (!name) throw invalid('/name', 'must not be blank');
    const websiteUrl = httpUrl('/website_url', input.website_url, { fragment: true });
    const callbackUrl = httpUrl('/callback_url', input.callback_url, { fragment: false });
    return this.deps.store.transaction(async (trx) => {
      const created = await this.deps.tokens.createApplication(trx, {
        accountId: principal.accountId,
        name,
        websiteUrl,
        callbackUrl,
        isPublic: input.is_public ?? false,
      });
      return {
        application: await this.get(principal, created.clientId, trx),
        clientSecret: created.clientSecret,
        accessToken: created.accessToken,
      };
    });
  }

  /** Replaces the client secret; only the new one's hash is kept. Tokens already issued stay valid. */
  async rotateSecret(principal: Principal, clientId: string): Promise<ApplicationWithSecret> {
    return this.deps.store.transaction(async (trx) => {
      const clientSecret = await this.deps.tokens.rotateClientSecret(trx, principal.accountId, clientId);
      return { application: await this.get(principal, clientId, trx), clientSecret };
    });
  }

  /** Deletes the application and, with it, every token issued to it. */
  async delete(principal: Principal, clientId: string): Promise<void> {
    const deleted =
      isUuid(clientId) && (await tokensRepo.deleteClient(this.deps.store.db, principal.accountId, clientId));
    if (!deleted) throw notFound(`Application ${clientId}`);
  }
}
