/**
 * The user's outbox as this tab holds it, shared with the user's other tabs: the records
 * in storage, loaded at start and after a tab died (a dead tab's records are adopted, one
 * tab at a time under a Web Lock), and mirrored between live tabs over a
 * BroadcastChannel (a tab sends only its own records).
 *
 * @module
 */
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { IndexedDBOutboxStorage, MemoryOutboxStorage, sameOp, sendOrder, type OutboxOp, type OutboxRecord, type OutboxStorage } from './outbox.js';
import { platformWriteAheadStore, WriteAhead } from './outbox-wal.js';
import type { SentEntry } from './snapshot-types.js';
import type { ClientContext } from './types.js';

/** @internal A `send`, `whenSent` or `retry` call waiting for its record's outcome. */
export interface Waiter {
  /** The record was ACKed. */
  resolve: (v: SentEntry) => void;
  /** It failed, was discarded, or the client closed. */
  reject: (e: ChatdError) => void;
  /**
   * A `send` (or `edit`, `deleteMessage`, `react`) call's: while one of these waits, the
   * record is wanted (aborting one such call takes the record out of the outbox only when
   * no other call of this tab made with the same clientMsgId still waits for it).
   */
  claim?: boolean;
}

/** @internal An outbox record held in memory, with where its sending is. */
export interface Pending {
  /** The record as stored. */
  record: OutboxRecord;
  /** true when another live tab is responsible for sending it */
  foreign: boolean;
  /** Retries after retryable errors so far. */
  attempt: number;
  /** Number of the connection it was sent on last (0: not in flight). */
  inflightConn: number;
  /** Its frame's number on that connection. */
  frameNo: number;
  /** When it was sent last. */
  sentAt?: number;
  /** Waits out a retry's backoff. */
  retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Calls waiting for its outcome. */
  waiters: Waiter[];
  /**
   * Set when every send call of a record being written was aborted: its delete from the
   * storage, once its put is done (a send with the same clientMsgId waits for it, then
   * makes a new record).
   */
  deleting?: Promise<void>;
}

/** What tabs tell each other about the records. */
// `op` of 'acked' and 'deleted': the record's (absent from older versions' messages). A tab
// holding a record with the same clientMsgId but another op (two tabs sent different
// messages with one key at once) ignores messages about the other: the server stores one of
// them and refuses the other with `idempotency_conflict`, each tab's record settles on its
// own answer.
type BroadcastMsg =
  | { t: 'put'; record: OutboxRecord }
  | { t: 'acked'; clientMsgId: string; ack: SentEntry; op?: OutboxOp }
  | { t: 'deleted'; clientMsgId: string; op?: OutboxOp };

interface BroadcastChannelLike {
  postMessage(m: unknown): void;
  onmessage: ((ev: { data: unknown }) => void) | null;
  close(): void;
}

interface LockManagerLike {
  request(name: string, opts: { ifAvailable?: boolean }, cb: (lock: unknown) => Promise<void> | void): Promise<void>;
  request(name: string, cb: (lock: unknown) => Promise<void> | void): Promise<void>;
  query(): Promise<{ held?: { name?: string }[] }>;
}

/** @internal What the tab outbox asks of the send path. */
export interface TabOutboxHooks {
  /** Another tab's record was ACKed there. */
  acked(p: Pending, ack: SentEntry): void;
  /** A dead tab's records were adopted while open: send them. */
  adopted(): void;
}

/** @internal The outbox records this tab knows of (its own and its live tabs'), and their storage. */
export class TabOutbox {
  /** The records by clientMsgId. */
  readonly pending = new Map<string, Pending>();
  /** Where the records are kept across reloads. */
  readonly storage: OutboxStorage;
  /** Where a new record is written synchronously until `storage.put` resolved (see outbox-wal.ts). */
  readonly writeAhead: WriteAhead;
  /**
   * This tab's new records whose `storage.put` the send path has not taken yet (by
   * clientMsgId). A load leaves them to it: it holds them once their put resolved, with the
   * caller's waiters (the put starts in the `send` call, so a load running then may read them).
   * A send with the same clientMsgId made meanwhile waits on the one held here.
   */
  readonly writing = new Map<string, Pending>();
  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly channels: Channels;
  private readonly hooks: TabOutboxHooks;
  private readonly locks: LockManagerLike | undefined;
  private bc: BroadcastChannelLike | undefined;
  private releaseTabLock: (() => void) | undefined;
  private readonly watchedOwners = new Set<string>();
  private loadChain: Promise<void> = Promise.resolve();
  private orderCounter = 0;

  /**
   * Storage: the `storage` option, else IndexedDB when present, else memory. Write-ahead:
   * the `writeAhead` option, else `localStorage` in a browser with the default IndexedDB
   * storage (a memory storage, given or default, is not meant to outlive the page).
   */
  constructor(c: ClientContext, conn: Connection, channels: Channels, hooks: TabOutboxHooks) {
    this.c = c;
    this.conn = conn;
    this.channels = channels;
    this.hooks = hooks;
    const idb = c.opts.storage === undefined && (globalThis as { indexedDB?: unknown }).indexedDB !== undefined;
    this.storage = c.opts.storage ?? (idb ? new IndexedDBOutboxStorage() : new MemoryOutboxStorage());
    const wal = c.opts.writeAhead;
    this.writeAhead = new WriteAhead(wal === null ? undefined : (wal ?? (idb ? platformWriteAheadStore() : undefined)));
    const nav = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator;
    this.locks = c.opts.tabSync === false ? undefined : nav?.locks;
  }

  /** The records, in the order they were added (for the channels' `outgoing`). */
  *records(): IterableIterator<OutboxRecord> {
    for (const p of this.pending.values()) yield p.record;
  }

  /** The `order` of a new record: after every record made or loaded so far (microseconds of the clock, or more). */
  nextOrder(): number {
    const base = this.c.now() * 1000;
    this.orderCounter = Math.max(this.orderCounter + 1, base);
    return this.orderCounter;
  }

  /** Joins the other tabs: their broadcasts, and a lock held for this tab's life. */
  joinTabs(): void {
    const BC = (globalThis as { BroadcastChannel?: new (name: string) => BroadcastChannelLike }).BroadcastChannel;
    const inBrowser = typeof (globalThis as { document?: unknown }).document !== 'undefined';
    if (BC !== undefined && inBrowser) {
      this.bc = new BC(`chatd-outbox:${this.c.userId}`);
      this.bc.onmessage = (ev) => {
        this.onBroadcast(ev.data as BroadcastMsg);
      };
    }
    if (this.locks !== undefined) {
      // held for this tab's life: other tabs see it alive and leave its records to it
      void this.locks.request(`chatd-tab:${this.c.tabId}`, () => {
        return new Promise<void>((resolve) => {
          this.releaseTabLock = resolve;
        });
      });
    }
  }

  /** Tells the other tabs a record was written, ACKed or deleted. */
  broadcast(m: BroadcastMsg): void {
    try {
      this.bc?.postMessage(m);
    } catch {
      /* closed */
    }
  }

  /**
   * Reads the outbox from storage: adopts records of dead tabs, mirrors those of live
   * ones. One tab at a time (a Web Lock), so a dead tab's records get one new owner.
   */
  load(): Promise<void> {
    const run = (): Promise<void> =>
      this.locks !== undefined
        ? this.locks.request(`chatd-adopt:${this.c.userId}`, () => this.loadLocked())
        : this.loadLocked();
    const next = this.loadChain.then(run, run);
    this.loadChain = next.catch(() => undefined);
    return next;
  }

  /** The client closed: leaves the other tabs (its records are adopted by one of them). */
  close(): void {
    this.bc?.close();
    this.releaseTabLock?.();
  }

  private onBroadcast(m: BroadcastMsg): void {
    const held = this.pending.get(m.t === 'put' ? m.record.clientMsgId : m.clientMsgId);
    const op = m.t === 'put' ? m.record.op : m.op;
    // another message under the same key, sent by that tab at the same time as ours (see BroadcastMsg)
    if (held !== undefined && !held.foreign && op !== undefined && !sameOp(held.record.op, op)) return;
    if (
      m.t === 'put' &&
      held !== undefined &&
      !held.foreign &&
      held.record.state === 'pending' &&
      m.record.state === 'pending' &&
      m.record.owner !== this.c.tabId &&
      this.c.tabId < m.record.owner
    ) {
      // both tabs made (or took) the record at once, and each told the other: one of them
      // must send it, not neither; the tab with the lower id keeps it, the other gives it up
      // (its calls settle on this tab's 'acked')
      return;
    }
    if (m.t === 'put') {
      const r = m.record;
      const p = this.pending.get(r.clientMsgId);
      if (p === undefined) {
        this.pending.set(r.clientMsgId, newPending(r, r.owner !== this.c.tabId));
        if (r.owner !== this.c.tabId) this.watchOwner(r.owner);
      } else {
        p.record = r;
        if (r.owner !== this.c.tabId) {
          p.foreign = true;
          clearTimeout(p.retryTimer);
          p.retryTimer = undefined;
          this.watchOwner(r.owner);
        }
        if (r.state === 'failed') {
          const err = new ChatdError(r.error?.code ?? 'internal', r.error?.message ?? 'failed', { retryable: false });
          for (const w of p.waiters) w.reject(err);
          p.waiters = [];
        }
      }
      this.channels.changed(r.op.channelId);
    } else if (m.t === 'acked') {
      const p = this.pending.get(m.clientMsgId);
      if (p !== undefined) this.hooks.acked(p, m.ack);
    } else {
      const p = this.pending.get(m.clientMsgId);
      if (p !== undefined) {
        this.pending.delete(m.clientMsgId);
        clearTimeout(p.retryTimer);
        for (const w of p.waiters) w.reject(new ChatdError('discarded', 'discarded'));
        this.channels.changed(p.record.op.channelId);
      }
    }
  }

  /** When another tab dies, its lock is released: adopt its records then. */
  private watchOwner(owner: string): void {
    if (this.locks === undefined || this.watchedOwners.has(owner) || owner === this.c.tabId) return;
    this.watchedOwners.add(owner);
    void this.locks.request(`chatd-tab:${owner}`, async () => {
      this.watchedOwners.delete(owner);
      if (this.conn.state === 'closed') return;
      try {
        await this.load();
      } catch {
        return; // the storage could not be read: the next connection loads again
      }
      if (this.conn.state === 'open') this.hooks.adopted();
    });
  }

  private async liveOwners(): Promise<Set<string>> {
    const live = new Set<string>([this.c.tabId]);
    if (this.locks === undefined) return live;
    try {
      const q = await this.locks.query();
      for (const l of q.held ?? []) if (l.name?.startsWith('chatd-tab:') === true) live.add(l.name.slice(10));
    } catch {
      /* no query: treat others as gone */
    }
    return live;
  }

  /**
   * Moves the write-ahead entries of tabs that are gone (reloaded, closed, crashed) into
   * the storage, unchanged (same key: a record already there is only written again), so the
   * load that follows adopts them. A live tab's entries are left to it: it removes them once
   * its own `put` resolved. An entry is removed only after its `put` resolved.
   */
  private async absorbWriteAhead(live: Set<string>): Promise<void> {
    for (const r of this.writeAhead.list(this.c.userId)) {
      if (live.has(r.owner)) continue;
      await this.storage.put(r);
      this.writeAhead.remove(r.userId, r.clientMsgId);
    }
  }

  private async loadLocked(): Promise<void> {
    const live = await this.liveOwners();
    await this.absorbWriteAhead(live);
    const records = await this.storage.load(this.c.userId);
    for (const r0 of sendOrder(records)) {
      if (r0.owner === this.c.tabId && this.writing.has(r0.clientMsgId)) continue;
      const existing = this.pending.get(r0.clientMsgId);
      if (existing !== undefined && (!existing.foreign || live.has(existing.record.owner))) continue;
      let r = r0;
      const foreign = r.owner !== this.c.tabId && live.has(r.owner);
      if (!foreign && r.owner !== this.c.tabId) {
        r = { ...r, owner: this.c.tabId };
        await this.storage.put(r);
        this.broadcast({ t: 'put', record: r });
      }
      if (foreign) this.watchOwner(r.owner);
      this.orderCounter = Math.max(this.orderCounter, r.order);
      if (existing !== undefined) {
        existing.record = r;
        existing.foreign = foreign;
      } else {
        this.pending.set(r.clientMsgId, newPending(r, foreign));
      }
      this.channels.changed(r.op.channelId);
    }
  }
}

/** @internal A record not sent yet (by this tab: `foreign` false). */
export function newPending(record: OutboxRecord, foreign: boolean): Pending {
  return { record, foreign, attempt: 0, inflightConn: 0, frameNo: 0, retryTimer: undefined, waiters: [] };
}
