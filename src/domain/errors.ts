/**
 * The error catalog: every error the API can answer with has a stable code, one HTTP status and a
 * message that names the field or resource at fault. docs/errors.md lists the same codes.
 */
export const ERROR_CODES = {
  invalid_json: 400,
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  limit_reached: 422,
  rate_limited: 429,
  internal_error: 500,
  bad_gateway: 502,
  store_unavailable: 503,
  storage_full: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** JSON pointer of the offending input, e.g. `/steps/2/url`, when one field is at fault. */
    readonly field?: string,
  ) {
    super(message);
    this.status = ERROR_CODES[code];
  }
}

/** A rate limit was reached; `retryAfter` seconds until the next attempt may pass. */
export class RateLimited extends AppError {
  constructor(
    message: string,
    readonly retryAfter: number,
  ) {
    super('rate_limited', message);
  }
}

/** The store cannot be reached or is busy; the client should try again after `retryAfter` seconds. */
export class StoreUnavailable extends AppError {
  constructor(
    message = 'The data store cannot be reached right now; try again shortly',
    readonly retryAfter = 5,
  ) {
    super('store_unavailable', message);
  }
}

/** The store cannot take a write (no disk space left, or opened read-only); reads and deletes may still work. */
export class StorageFull extends AppError {
  constructor(message = 'The data store has no room for this write; delete messages or add disk space') {
    super('storage_full', message);
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} was not found`);
export const invalid = (field: string, why: string) =>
  new AppError('validation_failed', `${field} ${why}`, field);
export const conflict = (message: string) => new AppError('conflict', message);
