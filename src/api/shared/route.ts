import type { Scope } from '../../domain/scopes.js';

/**
 * Per-route settings read by the auth plugin: the scope needed, or null for a public route, and
 * whether only a personal token (not one granted to an application) may call it.
 */
export interface RouteConfig {
  scope?: Scope | null;
  personalToken?: boolean;
}
