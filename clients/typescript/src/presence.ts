/**
 * The presence subscription (version 1.1): the ids of the last `subscribePresence`, kept
 * across reconnects, the `PRESENCE` snapshot and changes for them, and sending the
 * `PRESENCE_SUB` again while the server refuses it.
 *
 * @module
 */
import { backoffDelay } from './backoff.js';
import type { Connection } from './connection.js';
import type { ChatdError } from './errors.js';
import type { PresenceFrame } from './protocol.js';
import { LazyStore } from './store.js';
import type { Presence } from './snapshot-types.js';
import type { ClientContext } from './types.js';

/** @internal The presence subscription and what it brought. */
export class PresenceSubscription {
  /** Presence of the subscribed users; keyed by user id. */
  readonly store: LazyStore<Readonly<Record<string, Presence>>>;
  private readonly c: ClientContext;
  private readonly conn: Connection;
  /** The ids of the last `subscribePresence`, without repeats. */
  private ids: ReadonlySet<string> = new Set();
  /**
   * Ids of the pending PRESENCE_SUB whose PRESENCE has not arrived since it was sent;
   * undefined when no subscription is pending (snapshot complete, empty, or not sent).
   */
  private waiting: Set<string> | undefined;
  /** Retries of the pending PRESENCE_SUB so far (the backoff's attempt number). */
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly map = new Map<string, Presence>();

  /** An empty subscription on the connection. */
  constructor(c: ClientContext, conn: Connection) {
    this.c = c;
    this.conn = conn;
    this.store = new LazyStore(() => Object.freeze(Object.fromEntries(this.map)));
  }

  /** Replaces the subscription (see `ChatClient.subscribePresence`). */
  subscribe(userIds: readonly string[]): void {
    this.ids = new Set(userIds);
    for (const id of [...this.map.keys()]) if (!this.ids.has(id)) this.map.delete(id);
    this.store.invalidate();
    this.attempt = 0;
    this.send();
  }

  /** A connection opened: subscribe on it. */
  opened(): void {
    this.attempt = 0;
    if (this.ids.size > 0) this.send();
  }

  /**
   * A PRESENCE arrived. One for an id no longer subscribed is a late frame of a replaced
   * subscription (its snapshot was still on the wire): dropped, so the store holds the
   * current subscription's ids only.
   */
  onPresence(f: PresenceFrame): void {
    this.conn.features.confirm('PRESENCE_SUB');
    if (!this.ids.has(f.userId)) return;
    this.map.set(f.userId, Object.freeze({ status: f.status, lastSeenAt: f.lastSeenAt }));
    this.store.invalidate();
    this.arrived(f.userId);
    this.c.events.emit('presence', f);
  }

  /**
   * A retryable ERROR naming no frame arrived: while the subscription is pending, send it
   * again after a backoff. Misattributing another frame's ERROR (a MSG_READ's, say) costs
   * one redundant PRESENCE_SUB only: it is idempotent (it replaces the subscription and
   * the server sends the snapshot again). One retry is scheduled at a time, so a burst of
   * ERRORs cannot make a tight loop.
   */
  refused(err: ChatdError): void {
    if (this.waiting === undefined || this.timer !== undefined) return;
    const delay = Math.max(
      backoffDelay(this.attempt++, { baseMs: 250, maxMs: 30_000, ...this.c.opts.retryBackoff }),
      err.retryAfterMs ?? 0,
    );
    const gen = this.conn.openGen;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.waiting === undefined || this.conn.openGen !== gen) return;
      this.send();
    }, delay);
  }

  /** The connection dropped: nothing is pending on it (the next HELLO subscribes again). */
  dropped(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting = undefined;
  }

  /** The client closed: no more retries. */
  close(): void {
    clearTimeout(this.timer);
    this.waiting = undefined;
  }

  /** Sends the current PRESENCE_SUB (if open) and makes it the pending one. */
  private send(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting = undefined;
    if (this.conn.state !== 'open' || this.conn.features.unsupported.has('PRESENCE_SUB')) return;
    if (this.conn.send({ type: 'PRESENCE_SUB', userIds: [...this.ids] }) === 0) return;
    if (this.ids.size > 0) this.waiting = new Set(this.ids);
  }

  /** A PRESENCE arrived: one id fewer to wait for; the snapshot may be complete. */
  private arrived(userId: string): void {
    const w = this.waiting;
    if (w === undefined) return;
    w.delete(userId);
    if (w.size > 0) return;
    this.waiting = undefined;
    this.attempt = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
