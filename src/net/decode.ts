/**
 * Reading a response body: undoing its content-encoding (gzip, deflate, br, and zstd where Node has
 * it), keeping the first `maxBodyBytes` decoded bytes and counting the rest up to `maxDrainBytes`.
 */
import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';

export interface BodyLimits {
  /** Decoded bytes kept. */
  maxBodyBytes: number;
  /** Decoded bytes counted before reading stops; at least maxBodyBytes. */
  maxDrainBytes: number;
}

export interface ReadBody {
  body: Buffer;
  truncated: boolean;
  /** Decoded size: the whole body, or what was counted when reading stopped at maxDrainBytes. */
  sizeBytes: number;
}

export interface BodyEvents {
  /** The decoded body went past maxDrainBytes: stop reading, the body is complete as far as it goes. */
  overflow(): void;
  /** The encoded body could not be decoded. */
  error(error: Error): void;
  /** A paused writer may go on. */
  drain(): void;
}

const zstd = (zlib as unknown as { createZstdDecompress?: () => Transform }).createZstdDecompress;

/**
 * Deflate as servers send it: with the zlib wrapper (RFC 1950) as the standard says, or raw (RFC 1951)
 * as some do. The first byte tells which.
 */
class AnyInflate extends Transform {
  #inner: zlib.Inflate | zlib.InflateRaw | null = null;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.#inner) {
      const options = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
      const zlibWrapped = ((chunk[0] ?? 0) & 0x0f) === 0x08;
      this.#inner = zlibWrapped ? zlib.createInflate(options) : zlib.createInflateRaw(options);
      this.#inner.on('data', (data: Buffer) => this.push(data));
      this.#inner.on('error', (error) => this.destroy(error));
    }
    this.#inner.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    if (!this.#inner) return done();
    this.#inner.once('end', () => done());
    this.#inner.end();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.#inner?.destroy();
    done(error);
  }
}

function decoderFor(coding: string): Transform | null {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'deflate':
      return new AnyInflate();
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    case 'zstd':
      return zstd ? zstd() : null;
    default:
      return null;
  }
}

/**
 * The decoders for a content-encoding value, outermost first (the reverse of the order listed), or
 * null when there is nothing to undo or a coding is unknown (the body is then kept as sent).
 */
function decoders(contentEncoding: string | undefined): Transform[] | null {
  if (!contentEncoding) return null;
  const codings = contentEncoding
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return null;
  const chain: Transform[] = [];
  for (const coding of codings.reverse()) {
    const decoder = decoderFor(coding);
    if (!decoder) {
      for (const made of chain) made.destroy();
      return null;
    }
    chain.push(decoder);
  }
  return chain;
}

/** Collects one response body. Write the encoded chunks, then `finish`. */
export class BodySink {
  readonly #limits: BodyLimits;
  readonly #events: BodyEvents;
  readonly #chain: Transform[] | null;
  #chunks: Buffer[] = [];
  #kept = 0;
  #size = 0;
  #stopped = false;

  constructor(contentEncoding: string | undefined, limits: BodyLimits, events: BodyEvents) {
    this.#limits = limits;
    this.#events = events;
    this.#chain = decoders(contentEncoding);
    if (this.#chain) this.#wire(this.#chain);
  }

  #wire(chain: Transform[]): void {
    const onError = (error: Error): void => {
      if (this.#stopped) return;
      this.#stopped = true;
      this.#destroyChain();
      this.#events.error(error);
    };
    for (let i = 0; i < chain.length; i++) {
      const stage = chain[i] as Transform;
      stage.on('error', onError);
      const next = chain[i + 1];
      if (next) stage.pipe(next);
      else stage.on('data', (data: Buffer) => this.#take(data));
    }
    (chain[0] as Transform).on('drain', () => this.#events.drain());
  }

  #take(data: Buffer): void {
    if (this.#stopped) return;
    this.#size += data.length;
    const room = this.#limits.maxBodyBytes - this.#kept;
    if (room > 0) {
      const kept = data.length <= room ? data : data.subarray(0, room);
      this.#chunks.push(kept);
      this.#kept += kept.length;
    }
    if (this.#size > this.#limits.maxDrainBytes) {
      this.#stopped = true;
      this.#destroyChain();
      this.#events.overflow();
    }
  }

  #destroyChain(): void {
    if (this.#chain) for (const stage of this.#chain) stage.destroy();
  }

  /** Takes one encoded chunk; false asks the writer to pause until `drain`. */
  write(chunk: Buffer): boolean {
    if (this.#stopped) return true;
    if (!this.#chain) {
      this.#take(chunk);
      return true;
    }
    return (this.#chain[0] as Transform).write(chunk);
  }

  /** The encoded body is complete: `done` runs once the decoded body is. */
  finish(done: () => void): void {
    if (this.#stopped || !this.#chain) return done();
    const last = this.#chain[this.#chain.length - 1] as Transform;
    last.once('end', () => {
      if (!this.#stopped) done();
    });
    (this.#chain[0] as Transform).end();
  }

  /** Stops decoding (the exchange failed or was cut short). */
  stop(): void {
    this.#stopped = true;
    this.#destroyChain();
  }

  result(): ReadBody {
    return {
      body: Buffer.concat(this.#chunks, this.#kept),
      truncated: this.#size > this.#limits.maxBodyBytes,
      sizeBytes: this.#size,
    };
  }
}
