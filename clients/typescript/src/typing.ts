import type { TypingFrame } from './protocol.js';

/**
 * Who is typing in one channel: each `start` lasts until its `expiresAt` (or `ttlMs`
 * when the server sent none), a `stop` or a message from that user ends it. Pure: the
 * caller passes the time.
 */
export class TypingTracker {
  private readonly typers = new Map<string, number>();
  private cache: readonly string[] | undefined = [];
  private readonly ttlMs: number;

  /** @param ttlMs - lifetime of a `start` without `expiresAt` (default 6000 ms, the server's default) */
  constructor(ttlMs = 6000) {
    this.ttlMs = ttlMs;
  }

  /** Applies a server TYPING frame; returns true when the list changed. */
  apply(frame: Pick<TypingFrame, 'userId' | 'state' | 'expiresAt'>, now: number): boolean {
    if (frame.state === 'stop') return this.remove(frame.userId);
    const until = frame.expiresAt ?? now + this.ttlMs;
    if (until <= now) return this.remove(frame.userId);
    const had = this.typers.has(frame.userId);
    this.typers.set(frame.userId, until);
    if (!had) this.cache = undefined;
    return !had;
  }

  /** Ends a user's indicator (a stop, or a message from them); returns true when it changed. */
  remove(userId: string): boolean {
    const had = this.typers.delete(userId);
    if (had) this.cache = undefined;
    return had;
  }

  /** Drops expired indicators; returns true when the list changed. */
  expire(now: number): boolean {
    let changed = false;
    for (const [u, until] of this.typers) {
      if (until <= now) {
        this.typers.delete(u);
        changed = true;
      }
    }
    if (changed) this.cache = undefined;
    return changed;
  }

  /** The earliest expiry, for scheduling a timer. */
  nextExpiry(): number | undefined {
    let min: number | undefined;
    for (const until of this.typers.values()) if (min === undefined || until < min) min = until;
    return min;
  }

  /** Users typing now, sorted; the same array until it changes. */
  list(): readonly string[] {
    this.cache ??= Object.freeze([...this.typers.keys()].sort());
    return this.cache;
  }
}

/**
 * Client-side throttle of the user's own typing: at most one `start` per `throttleMs`
 * while typing goes on, one `stop` when it ends. Pure: the caller passes the time.
 */
export class TypingThrottle {
  private lastStart: number | undefined;
  private readonly throttleMs: number;

  /** @param throttleMs - minimum time between two `start` frames (default 2000 ms) */
  constructor(throttleMs = 2000) {
    this.throttleMs = throttleMs;
  }

  /** The user typed: returns true when a `start` should be sent now. */
  onInput(now: number): boolean {
    if (this.lastStart !== undefined && now - this.lastStart < this.throttleMs) return false;
    this.lastStart = now;
    return true;
  }

  /** The user stopped typing: returns true when a `stop` should be sent. */
  onStop(): boolean {
    const active = this.lastStart !== undefined;
    this.lastStart = undefined;
    return active;
  }

  /** A message was sent: the server stops the indicator itself, so no `stop` is needed. */
  onSent(): void {
    this.lastStart = undefined;
  }

  /**
   * A message of the user was stored (its ACK arrived): the server ended the typing with
   * it, and a `start` sent since the send may have reached it before the message was
   * stored, so the stop ended it too. Returns true when the user has typed since the send:
   * a `start` should be sent again now (the server's throttle ended with the message).
   */
  onStored(now: number): boolean {
    if (this.lastStart === undefined) return false;
    this.lastStart = now;
    return true;
  }
}
