import { createHash, randomBytes, randomFillSync, randomUUID, timingSafeEqual } from 'node:crypto';

/** A random UUID (version 4), for names that must not hint at when they were made. */
export const newRandomId = (): string => randomUUID();

let lastMs = 0;
let sequence = 0;

/**
 * Random bytes for ids, taken from a pool filled 4 KB at a time: a batch of captured messages makes
 * an id per message, and asking the system for 16 bytes at a time cost a twentieth of ingest.
 */
const pool = Buffer.alloc(4096);
let poolUsed = pool.length;
function randomPart(size: number): Buffer {
  if (poolUsed + size > pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  poolUsed += size;
  return pool.subarray(poolUsed - size, poolUsed);
}

/**
 * A UUID version 7: 48 bits of Unix milliseconds, a 12-bit sequence, then random bits. Ids made
 * later by this process sort later, also within one millisecond (the sequence counts up from a
 * random start; should it run out, the time moves on a millisecond), so rows keyed by them are
 * appended to their index, and lists ordered by time then id keep the order things were made in.
 */
export function newTimeOrderedId(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = randomPart(2).readUInt16BE(0) & 0x7ff;
  } else if (++sequence > 0xfff) {
    lastMs += 1;
    sequence = 0;
  }
  const bytes = Buffer.from(randomPart(16));
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Ids of rows: time-ordered, so a list ordered by creation time then id is in creation order. */
export const newId = (): string => newTimeOrderedId();

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

/** Whether two secrets are the same, compared in constant time (whatever their contents). */
export function sameSecret(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
