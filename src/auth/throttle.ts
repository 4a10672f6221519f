/** Failed sign-ins a limit counts, over this window. */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
/** Failures of one account from one address before that address must wait. */
export const FAILURES_PER_ACCOUNT_AND_ADDRESS = 5;
/** Failures from one address, whatever the accounts, before it must wait. */
export const FAILURES_PER_ADDRESS = 20;
/**
 * Failures of one account from every address before the addresses that failed on it must wait (a
 * guess spread over many addresses); an address with no failure on the account still gets through.
 */
export const FAILURES_PER_ACCOUNT = 100;

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

  /** Whether the key has a failure in the window. */
  has(key: string): boolean {
    return this.recent(key, this.now()).length > 0;
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
 * Limits on failed sign-ins, per account from one address, per address, and per account from the
 * addresses that failed on it. A stranger's wrong passwords hold back only the stranger's own
 * address: the owner, signing in from an address with no failures, is never locked out. When a limit
 * is over, the sign-in is refused before the password is checked.
 */
export class SignInThrottle {
  private readonly byPair: FailureWindow;
  private readonly byAddress: FailureWindow;
  private readonly byAccount: FailureWindow;

  constructor(
    options: {
      perPair?: number;
      perAddress?: number;
      perAccount?: number;
      windowMs?: number;
      now?: () => number;
    } = {},
  ) {
    const windowMs = options.windowMs ?? THROTTLE_WINDOW_MS;
    const now = options.now ?? Date.now;
    this.byPair = new FailureWindow(options.perPair ?? FAILURES_PER_ACCOUNT_AND_ADDRESS, windowMs, now);
    this.byAddress = new FailureWindow(options.perAddress ?? FAILURES_PER_ADDRESS, windowMs, now);
    this.byAccount = new FailureWindow(options.perAccount ?? FAILURES_PER_ACCOUNT, windowMs, now);
  }

  /** Seconds until a sign-in of this account from this address may be tried, 0 when it may now. */
  retryAfter(account: string, address: string): number {
    const pair = pairKey(account, address);
    const ms = Math.max(
      this.byPair.retryAfter(pair),
      this.byAddress.retryAfter(address),
      this.byPair.has(pair) ? this.byAccount.retryAfter(accountKey(account)) : 0,
    );
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0;
  }

  failed(account: string, address: string): void {
    this.byPair.fail(pairKey(account, address));
    this.byAddress.fail(address);
    this.byAccount.fail(accountKey(account));
  }

  /** A successful sign-in forgets the failures of the account from this address. */
  succeeded(account: string, address: string): void {
    this.byPair.clear(pairKey(account, address));
  }
}

const accountKey = (account: string): string => account.trim().toLowerCase();
const pairKey = (account: string, address: string): string => `${accountKey(account)}\n${address}`;
