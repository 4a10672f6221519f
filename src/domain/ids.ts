import { createHash, randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

/**
 * A UUID version 7: 48 bits of Unix milliseconds, then random bits. Ids made later sort later, so
 * rows keyed by them are appended to their index instead of landing on a random page.
 */
export function newTimeOrderedId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

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
