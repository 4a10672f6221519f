/** The formats an import reads, and how a file may be split into tests (no parser is loaded here). */
export const IMPORT_FORMATS = ['postman', 'openapi', 'curl', 'har', 'runscope'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** Postman: `folder` (default) or `request`; OpenAPI: `tag` (default) or `operation`. */
export const SPLITS = ['folder', 'request', 'tag', 'operation'] as const;
