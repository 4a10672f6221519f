/** OAuth scopes (DESIGN §2). A personal token holds all of them. */
export const SCOPES = ['api:read', 'test:write', 'bucket:write', 'message:write', 'account:email'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);
