import { createHash, randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A bucket key: 12 lowercase alphanumerics (DESIGN §3). */
export function newBucketKey(): string {
  const bytes = randomBytes(12);
  let key = '';
  for (const byte of bytes) key += KEY_ALPHABET[byte % KEY_ALPHABET.length];
  return key;
}

/** A random, URL-safe secret of `bytes` bytes of entropy, with an optional recognisable prefix. */
export function newSecret(prefix = '', bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** Tokens and client secrets are high-entropy, so one SHA-256 is the right hash: fast and not reversible. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
/** Unix seconds with microsecond granularity. */
export const nowFloat = (): number => Math.round(Date.now() * 1000) / 1_000_000;
