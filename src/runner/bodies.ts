import { Buffer, isUtf8 } from 'node:buffer';
import type { BodyRecord } from '../domain/results.js';

/**
 * A body as a result keeps it: UTF-8 text when the bytes are valid UTF-8, Base64 otherwise, cut at
 * `keepBytes` (the cut is noted, `size_bytes` stays the whole size).
 */
export function bodyRecord(
  body: Buffer | string,
  keepBytes: number,
  sizeBytes?: number,
  truncated = false,
): BodyRecord {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const size = sizeBytes ?? bytes.length;
  let kept = bytes;
  let cut = truncated;
  if (kept.length > keepBytes) {
    kept = kept.subarray(0, keepBytes);
    cut = true;
  }
  if (kept.length === 0) return { body: '', body_encoding: 'text', size_bytes: size, truncated: cut };
  if (isUtf8(kept))
    return { body: kept.toString('utf8'), body_encoding: 'text', size_bytes: size, truncated: cut };
  // A cut may split a multi-byte character: keep the text if only the tail is incomplete.
  if (cut) {
    for (let back = 1; back <= 3 && back < kept.length; back++) {
      const shorter = kept.subarray(0, kept.length - back);
      if (isUtf8(shorter)) {
        return { body: shorter.toString('utf8'), body_encoding: 'text', size_bytes: size, truncated: true };
      }
    }
  }
  return { body: kept.toString('base64'), body_encoding: 'base64', size_bytes: size, truncated: cut };
}
