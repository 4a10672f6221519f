import type { Scope } from '../../domain/scopes.js';

/** Per-route settings read by the auth plugin: the scope needed, or null for a public route. */
export interface RouteConfig {
  scope?: Scope | null;
}
