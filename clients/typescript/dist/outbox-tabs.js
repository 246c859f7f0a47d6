import { ChatdError } from './errors.js';
import { IndexedDBOutboxStorage, MemoryOutboxStorage, sameOp, sendOrder } from './outbox.js';
import { platformWriteAheadStore, WriteAhead } from './outbox-wal.js';
/** @internal The outbox records this tab knows of (its own and its live tabs'), and their storage. */
export class TabOutbox {
    /** The records by clientMsgId. */
    pending = new Map();
    /** Where the records are kept across reloads. */
    storage;
    /** Where a new record is written synchronously until `storage.put` resolved (see outbox-wal.ts). */
    writeAhead;
    /**
     * This tab's new records whose `storage.put` the send path has not taken yet (by
     * clientMsgId). A load leaves them to it: it holds them once their put resolved, with the
     * caller's waiters (the put starts in the `send` call, so a load running then may read them).
     * A send with the same clientMsgId made meanwhile waits on the one held here.
     */
    writing = new Map();
    c;
    conn;
    channels;
    hooks;
    locks;
    bc;
    releaseTabLock;
    watchedOwners = new Set();
    loadChain = Promise.resolve();
    orderCounter = 0;
    /**
     * Storage: the `storage` option, else IndexedDB when present, else memory. Write-ahead:
     * the `writeAhead` option, else `localStorage` in a browser with the default IndexedDB
     * storage (a memory storage, given or default, is not meant to outlive the page).
     */
    constructor(c, conn, channels, hooks) {
        this.c = c;
        this.conn = conn;
        this.channels = channels;
        this.hooks = hooks;
        const idb = c.opts.storage === undefined && globalThis.indexedDB !== undefined;
        this.storage = c.opts.storage ?? (idb ? new IndexedDBOutboxStorage() : new MemoryOutboxStorage());
        const wal = c.opts.writeAhead;
        this.writeAhead = new WriteAhead(wal === null ? undefined : (wal ?? (idb ? platformWriteAheadStore() : undefined)));
        const nav = globalThis.navigator;
        this.locks = c.opts.tabSync === false ? undefined : nav?.locks;
    }
    /** The records, in the order they were added (for the channels' `outgoing`). */
    *records() {
        for (const p of this.pending.values())
            yield p.record;
    }
    /** The `order` of a new record: after every record made or loaded so far (microseconds of the clock, or more). */
    nextOrder() {
        const base = this.c.now() * 1000;
        this.orderCounter = Math.max(this.orderCounter + 1, base);
        return this.orderCounter;
    }
    /** Joins the other tabs: their broadcasts, and a lock held for this tab's life. */
    joinTabs() {
        const BC = globalThis.BroadcastChannel;
        const inBrowser = typeof globalThis.document !== 'undefined';
        if (BC !== undefined && inBrowser) {
            this.bc = new BC(`chatd-outbox:${this.c.userId}`);
            this.bc.onmessage = (ev) => {
                this.onBroadcast(ev.data);
            };
        }
        if (this.locks !== undefined) {
            // held for this tab's life: other tabs see it alive and leave its records to it
            void this.locks.request(`chatd-tab:${this.c.tabId}`, () => {
                return new Promise((resolve) => {
                    this.releaseTabLock = resolve;
                });
            });
        }
    }
    /** Tells the other tabs a record was written, ACKed or deleted. */
    broadcast(m) {
        try {
            this.bc?.postMessage(m);
        }
        catch {
            /* closed */
        }
    }
    /**
     * Reads the outbox from storage: adopts records of dead tabs, mirrors those of live
     * ones. One tab at a time (a Web Lock), so a dead tab's records get one new owner.
     */
    load() {
        const run = () => this.locks !== undefined
            ? this.locks.request(`chatd-adopt:${this.c.userId}`, () => this.loadLocked())
            : this.loadLocked();
        const next = this.loadChain.then(run, run);
        this.loadChain = next.catch(() => undefined);
        return next;
    }
    /** The client closed: leaves the other tabs (its records are adopted by one of them). */
    close() {
        this.bc?.close();
        this.releaseTabLock?.();
    }
    onBroadcast(m) {
        const held = this.pending.get(m.t === 'put' ? m.record.clientMsgId : m.clientMsgId);
        const op = m.t === 'put' ? m.record.op : m.op;
        // another message under the same key, sent by that tab at the same time as ours (see BroadcastMsg)
        if (held !== undefined && !held.foreign && op !== undefined && !sameOp(held.record.op, op))
            return;
        if (m.t === 'put' &&
            held !== undefined &&
            !held.foreign &&
            held.record.state === 'pending' &&
            m.record.state === 'pending' &&
            m.record.owner !== this.c.tabId &&
            this.c.tabId < m.record.owner) {
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
                if (r.owner !== this.c.tabId)
                    this.watchOwner(r.owner);
            }
            else {
                p.record = r;
                if (r.owner !== this.c.tabId) {
                    p.foreign = true;
                    clearTimeout(p.retryTimer);
                    p.retryTimer = undefined;
                    this.watchOwner(r.owner);
                }
                if (r.state === 'failed') {
                    const err = new ChatdError(r.error?.code ?? 'internal', r.error?.message ?? 'failed', { retryable: false });
                    for (const w of p.waiters)
                        w.reject(err);
                    p.waiters = [];
                }
            }
            this.channels.changed(r.op.channelId);
        }
        else if (m.t === 'acked') {
            const p = this.pending.get(m.clientMsgId);
            if (p !== undefined)
                this.hooks.acked(p, m.ack);
        }
        else {
            const p = this.pending.get(m.clientMsgId);
            if (p !== undefined) {
                this.pending.delete(m.clientMsgId);
                clearTimeout(p.retryTimer);
                for (const w of p.waiters)
                    w.reject(new ChatdError('discarded', 'discarded'));
                this.channels.changed(p.record.op.channelId);
            }
        }
    }
    /** When another tab dies, its lock is released: adopt its records then. */
    watchOwner(owner) {
        if (this.locks === undefined || this.watchedOwners.has(owner) || owner === this.c.tabId)
            return;
        this.watchedOwners.add(owner);
        void this.locks.request(`chatd-tab:${owner}`, async () => {
            this.watchedOwners.delete(owner);
            if (this.conn.state === 'closed')
                return;
            try {
                await this.load();
            }
            catch {
                return; // the storage could not be read: the next connection loads again
            }
            if (this.conn.state === 'open')
                this.hooks.adopted();
        });
    }
    async liveOwners() {
        const live = new Set([this.c.tabId]);
        if (this.locks === undefined)
            return live;
        try {
            const q = await this.locks.query();
            for (const l of q.held ?? [])
                if (l.name?.startsWith('chatd-tab:') === true)
                    live.add(l.name.slice(10));
        }
        catch {
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
    async absorbWriteAhead(live) {
        for (const r of this.writeAhead.list(this.c.userId)) {
            if (live.has(r.owner))
                continue;
            await this.storage.put(r);
            this.writeAhead.remove(r.userId, r.clientMsgId);
        }
    }
    async loadLocked() {
        const live = await this.liveOwners();
        await this.absorbWriteAhead(live);
        const records = await this.storage.load(this.c.userId);
        for (const r0 of sendOrder(records)) {
            if (r0.owner === this.c.tabId && this.writing.has(r0.clientMsgId))
                continue;
            const existing = this.pending.get(r0.clientMsgId);
            if (existing !== undefined && (!existing.foreign || live.has(existing.record.owner)))
                continue;
            let r = r0;
            const foreign = r.owner !== this.c.tabId && live.has(r.owner);
            if (!foreign && r.owner !== this.c.tabId) {
                r = { ...r, owner: this.c.tabId };
                await this.storage.put(r);
                this.broadcast({ t: 'put', record: r });
            }
            if (foreign)
                this.watchOwner(r.owner);
            this.orderCounter = Math.max(this.orderCounter, r.order);
            if (existing !== undefined) {
                existing.record = r;
                existing.foreign = foreign;
            }
            else {
                this.pending.set(r.clientMsgId, newPending(r, foreign));
            }
            this.channels.changed(r.op.channelId);
        }
    }
}
/** @internal A record not sent yet (by this tab: `foreign` false). */
export function newPending(record, foreign) {
    return { record, foreign, attempt: 0, inflightConn: 0, frameNo: 0, retryTimer: undefined, waiters: [] };
}
//# sourceMappingURL=outbox-tabs.js.map