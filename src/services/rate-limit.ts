/**
 * A sliding-window limit per key, in this process: at most `limit` events per `windowMs`. Keys
 * with no recent events are dropped, so memory stays bounded by the active keys.
 */
export class SlidingWindowLimiter {
  private readonly events = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records an event; answers 0 when allowed, else the milliseconds until one would be. */
  take(key: string): number {
    const now = this.now();
    this.sweep(now);
    const recent = (this.events.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.events.set(key, recent);
      return recent[0]! + this.windowMs - now;
    }
    recent.push(now);
    this.events.set(key, recent);
    return 0;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, times] of this.events) {
      if (times.every((t) => t <= now - this.windowMs)) this.events.delete(key);
    }
  }
}
