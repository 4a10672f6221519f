/** OAuth scopes (DESIGN §2). A personal token holds all of them. */
export const SCOPES = ['api:read', 'test:write', 'bucket:write', 'message:write', 'account:email'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** Parses a space-separated scope string, dropping unknown names; an empty request grants api:read. */
export function parseScopes(value: string | undefined | null): Scope[] {
  const scopes = (value ?? '').split(/\s+/).filter(isScope);
  return scopes.length > 0 ? [...new Set(scopes)] : ['api:read'];
}
