import type { Scope } from '../domain/scopes.js';

/** Who is calling: the account behind a valid access token, and what the token may do. */
export interface Principal {
  accountId: string;
  tokenId: string;
  name: string;
  email: string;
  scopes: ReadonlySet<Scope>;
}

/** Where an edit came from, recorded on revisions (spec 2.7). */
export type EditSource = 'api' | 'dashboard';

export interface Actor extends Principal {
  source: EditSource;
}

/** E-mail addresses of people are shown only to tokens with the account:email scope. */
export const visibleEmail = (principal: Principal, email: string): string =>
  principal.scopes.has('account:email') ? email : '';
