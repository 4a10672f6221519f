/** Failed sign-ins a limit counts, over this window. */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
export const FAILURES_PER_ACCOUNT = 5;
export const FAILURES_PER_ADDRESS = 20;

/**
 * Failures per key over a sliding window, in this process. Unlike a request limit, only failures
 * count, and a key can be checked without recording anything. Keys with no recent failures are
 * dropped, so memory stays bounded by the keys that failed lately.
 */
class FailureWindow {
  private readonly failures = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** 0 while under the limit, else the milliseconds until the oldest failure leaves the window. */
  retryAfter(key: string): number {
    const now = this.now();
    const recent = this.recent(key, now);
    return recent.length >= this.limit ? recent[recent.length - this.limit]! + this.windowMs - now : 0;
  }

  fail(key: string): void {
    const now = this.now();
    this.sweep(now);
    this.failures.set(key, [...this.recent(key, now), now]);
  }

  clear(key: string): void {
    this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    return (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, times] of this.failures) {
      if (times.every((t) => t <= now - this.windowMs)) this.failures.delete(key);
    }
  }
}

/**
 * Limits on failed sign-ins: per account (the email as typed, lowercased) and per client address.
 * When either is over, the sign-in is refused before the password is checked.
 */
export class SignInThrottle {
  private readonly byAccount: FailureWindow;
  private readonly byAddress: FailureWindow;

  constructor(
    options: { perAccount?: number; perAddress?: number; windowMs?: number; now?: () => number } = {},
  ) {
    const windowMs = options.windowMs ?? THROTTLE_WINDOW_MS;
    const now = options.now ?? Date.now;
    this.byAccount = new FailureWindow(options.perAccount ?? FAILURES_PER_ACCOUNT, windowMs, now);
    this.byAddress = new FailureWindow(options.perAddress ?? FAILURES_PER_ADDRESS, windowMs, now);
  }

  /** Seconds until a sign-in of this email from this address may be tried, 0 when it may now. */
  retryAfter(email: string, address: string): number {
    const ms = Math.max(this.byAccount.retryAfter(accountKey(email)), this.byAddress.retryAfter(address));
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0;
  }

  failed(email: string, address: string): void {
    this.byAccount.fail(accountKey(email));
    this.byAddress.fail(address);
  }

  /** A successful sign-in forgets the account's failures; the address keeps its count. */
  succeeded(email: string): void {
    this.byAccount.clear(accountKey(email));
  }
}

const accountKey = (email: string): string => email.trim().toLowerCase();
