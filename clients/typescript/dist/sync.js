/**
 * Reading the log: `SYNC` to open a channel on its newest page, to catch up after a
 * reconnect or a gap, and to page back (`loadOlder`); the same for a thread (`SYNC` with
 * `threadId`, protocol §14); matching `SYNC_BATCH` answers to their requests; and taking
 * entries (live, read, or made from an ACK) into a channel and its opened threads.
 *
 * @module
 */
import { backoffDelay } from './backoff.js';
import { mentionsUser } from './mentions.js';
import { ChatdError } from './errors.js';
import { entryKind } from './log.js';
/** @internal The SYNC requests of the open connection, per channel, answered in order. */
export class Sync {
    c;
    conn;
    channels;
    receipts;
    syncs = new Map();
    /** A channel's opening or catch-up read (or a thread's first read, keyed channel NUL root) refused with a retryable error: the timer that asks again. */
    retryTimers = new Map();
    /** How many such refusals in a row, per key (the backoff's attempt). */
    retryAttempts = new Map();
    /** Reads over the connection into the channels; appended entries are delivered receipts to be. */
    constructor(c, conn, channels, receipts) {
        this.c = c;
        this.conn = conn;
        this.channels = channels;
        this.receipts = receipts;
    }
    /** An opened channel after a (re)connection or a listing: open it, or catch it up; then its threads. */
    resume(ch) {
        if (ch.log.isStarted)
            this.catchUp(ch);
        else
            this.openChannel(ch);
        for (const t of ch.threads.values()) {
            this.openThread(ch, t);
            if (t.olderWaiters.length > 0)
                this.pumpThreadOlder(ch, t);
        }
    }
    /** Reads the newest replies of a thread not read yet (after its channel's reads, so as of a later seq). */
    openThread(ch, t) {
        if (this.conn.state !== 'open' || t.log.isStarted || t.error !== undefined)
            return;
        if (this.syncQueue(ch.id).some((r) => r.kind === 'thread' && r.thread === t))
            return;
        const frame = { type: 'SYNC', channelId: ch.id, threadId: t.log.rootId, afterSeq: 0, latest: true, limit: this.pageSize() };
        this.sendSync(ch, { kind: 'thread', afterSeq: 0, thread: t }, frame);
    }
    /** Loads the page of a thread's replies below its oldest held one; resolves to whether even older ones exist. */
    threadOlder(ch, t, signal) {
        return new Promise((resolve, reject) => {
            if (signal?.aborted === true) {
                reject(new ChatdError('aborted', 'aborted'));
                return;
            }
            if (t.log.isStarted && !t.log.hasOlder) {
                resolve(false);
                return;
            }
            const onAbort = () => {
                const i = t.olderWaiters.indexOf(done);
                if (i >= 0)
                    t.olderWaiters.splice(i, 1);
                reject(new ChatdError('aborted', 'aborted'));
            };
            const done = (err) => {
                signal?.removeEventListener('abort', onAbort);
                if (err !== undefined)
                    reject(err);
                else
                    resolve(t.log.hasOlder);
            };
            signal?.addEventListener('abort', onAbort, { once: true });
            t.olderWaiters.push(done);
            this.pumpThreadOlder(ch, t);
        });
    }
    pumpThreadOlder(ch, t) {
        if (this.conn.state !== 'open' || t.loadingOlder)
            return;
        if (!t.log.isStarted) {
            this.openThread(ch, t);
            return;
        }
        const below = t.log.oldestSeq;
        if (!t.log.hasOlder || below === undefined) {
            for (const w of t.olderWaiters.splice(0))
                w();
            return;
        }
        t.loadingOlder = true;
        const frame = { type: 'SYNC', channelId: ch.id, threadId: t.log.rootId, afterSeq: 0, beforeSeq: below, limit: this.pageSize() };
        if (!this.sendSync(ch, { kind: 'threadOlder', afterSeq: 0, thread: t }, frame))
            t.loadingOlder = false;
    }
    /** The answer to a thread's read. */
    onThreadBatch(ch, req, b) {
        const t = req.thread;
        if (req.kind === 'threadOlder') {
            t.loadingOlder = false;
            t.log.prepend(b.messages, b.lastSeq, b.hasMore);
            t.store.invalidate();
            for (const w of t.olderWaiters.splice(0))
                w();
            return;
        }
        this.retryAttempts.delete(`${ch.id}\u0000${t.log.rootId}`);
        // a read older than what the channel held when the thread opened: read again
        if (!t.log.start(b.messages, b.lastSeq, b.hasMore))
            this.openThread(ch, t);
        t.store.invalidate();
        if (t.log.isStarted && t.olderWaiters.length > 0)
            this.pumpThreadOlder(ch, t);
    }
    /** Reads the newest page of an opened channel whose window is not placed yet. */
    openChannel(ch) {
        if (this.conn.state !== 'open' || ch.log.isStarted)
            return;
        if (this.syncQueue(ch.id).some((r) => r.kind === 'open'))
            return;
        const limit = this.pageSize();
        const afterSeq = Math.max(0, ch.log.knownLastSeq - limit);
        // `latest` for version 1.1; afterSeq gives the same page on a version 1 server (seqs are gapless)
        this.sendSync(ch, { kind: 'open', afterSeq }, { type: 'SYNC', channelId: ch.id, afterSeq, limit, latest: true });
    }
    /** Reads what is known to exist above the window (a gap, or what came while away). */
    catchUp(ch) {
        if (this.conn.state !== 'open' || !ch.log.isStarted)
            return;
        if (ch.log.knownLastSeq <= ch.log.high)
            return;
        if (this.syncQueue(ch.id).some((r) => r.kind === 'forward' || r.kind === 'open'))
            return;
        const afterSeq = ch.log.high;
        this.sendSync(ch, { kind: 'forward', afterSeq }, { type: 'SYNC', channelId: ch.id, afterSeq, limit: 500 });
    }
    /**
     * Loads the page just below the window for `ch`'s `loadOlder` waiters. Resolves to
     * whether even older entries exist.
     */
    loadOlder(ch, signal) {
        return new Promise((resolve, reject) => {
            if (signal?.aborted === true) {
                reject(new ChatdError('aborted', 'aborted'));
                return;
            }
            const onAbort = () => {
                const i = ch.olderWaiters.indexOf(done);
                if (i >= 0)
                    ch.olderWaiters.splice(i, 1);
                reject(new ChatdError('aborted', 'aborted'));
            };
            const done = (err) => {
                signal?.removeEventListener('abort', onAbort);
                if (err !== undefined)
                    reject(err);
                else
                    resolve(ch.log.hasOlder);
            };
            if (ch.log.isStarted && !ch.log.hasOlder) {
                resolve(false);
                return;
            }
            signal?.addEventListener('abort', onAbort, { once: true });
            ch.olderWaiters.push(done);
            this.pumpOlder(ch);
        });
    }
    /**
     * Reads the held window again (pages of SYNC from its bottom to its top), so that the
     * held messages the retention sweep has erased since (§19; no entry tells of it) show
     * `expired`. Resolves to how many became expired; rejects with `unavailable` when the
     * connection is not open or drops, or the SYNC's error.
     */
    recheck(ch) {
        return new Promise((resolve, reject) => {
            if (!ch.log.isStarted || ch.log.low > ch.log.high) {
                resolve(0);
                return;
            }
            const done = (err, n) => {
                if (err !== undefined)
                    reject(err);
                else
                    resolve(n ?? 0);
            };
            if (!this.recheckPage(ch, ch.log.low - 1, ch.log.high, 0, done))
                reject(new ChatdError('unavailable', 'not connected'));
        });
    }
    recheckPage(ch, afterSeq, through, expired, done) {
        const limit = Math.min(500, Math.max(1, through - afterSeq));
        return this.sendSync(ch, { kind: 'recheck', afterSeq, through, expired, done }, { type: 'SYNC', channelId: ch.id, afterSeq, beforeSeq: through + 1, limit });
    }
    onRecheckBatch(ch, req, b) {
        const done = req.done;
        const n = (req.expired ?? 0) + ch.log.reread(b.messages);
        for (const t of ch.threads.values()) {
            if (t.log.reread(b.messages) > 0)
                t.store.invalidate();
        }
        if (n > 0)
            ch.store.invalidate();
        const through = req.through ?? 0;
        const last = b.messages.length > 0 ? b.messages[b.messages.length - 1] : undefined;
        if (last !== undefined && last.seq < through) {
            if (!this.recheckPage(ch, last.seq, through, n, (err, m) => done?.(err, m)))
                done?.(new ChatdError('unavailable', 'connection lost'));
            return;
        }
        done?.(undefined, n);
    }
    /** Reads the next older page when `loadOlder` calls wait for one (the window placed first). */
    pumpOlder(ch, fromSeq) {
        if (this.conn.state !== 'open')
            return;
        if (!ch.log.isStarted) {
            this.openChannel(ch);
            return;
        }
        if (!ch.log.hasOlder) {
            const ws = ch.olderWaiters.splice(0);
            for (const w of ws)
                w();
            return;
        }
        if (ch.loadingOlder)
            return;
        const low = ch.log.low;
        const limit = Math.min(this.pageSize(), low - 1);
        const afterSeq = fromSeq ?? Math.max(0, low - 1 - limit);
        ch.loadingOlder = true;
        const sent = this.sendSync(ch, { kind: 'older', afterSeq }, { type: 'SYNC', channelId: ch.id, afterSeq, beforeSeq: low, limit });
        if (!sent)
            ch.loadingOlder = false;
    }
    /** A SYNC_BATCH arrived: the answer to the channel's oldest SYNC. */
    onBatch(b) {
        const ch = this.channels.ctx(b.channelId);
        const req = this.syncs.get(b.channelId)?.shift();
        if (req !== undefined)
            this.conn.features.confirmUpTo(req.frameNo);
        const kind = req?.kind ?? 'forward';
        if (kind === 'recheck' && req !== undefined) {
            this.onRecheckBatch(ch, req, b);
            return;
        }
        if (req?.thread !== undefined) {
            this.onThreadBatch(ch, { ...req, thread: req.thread }, b);
            return;
        }
        if (kind === 'older') {
            ch.loadingOlder = false;
            const lowBefore = ch.log.low;
            const added = ch.log.prepend(b.messages, b.lastSeq);
            if (added.length > 0)
                this.c.events.emit('older', ch.id, added);
            ch.store.invalidate();
            const top = b.messages.length > 0 ? b.messages[b.messages.length - 1] : undefined;
            if (ch.log.low === lowBefore && top !== undefined && top.seq < lowBefore - 1) {
                // a version 1 page that stopped early (max_page_bytes): read on towards the window
                this.pumpOlder(ch, top.seq);
                return;
            }
            const ws = ch.olderWaiters.splice(0);
            for (const w of ws)
                w();
            return;
        }
        this.retryAttempts.delete(ch.id);
        if (kind === 'open' && !ch.log.isStarted) {
            const first = b.messages[0];
            ch.log.start(first !== undefined ? first.seq - 1 : (req?.afterSeq ?? 0));
            ch.store.invalidate();
        }
        this.ingest(ch.id, b.messages, true, b.lastSeq);
        if (ch.olderWaiters.length > 0)
            this.pumpOlder(ch);
    }
    /**
     * Takes entries into a channel: an opened one's log (emitting `entries` for those
     * appended, catching up on a gap); a channel not opened only counts them (its last seq,
     * others' messages for the unread count). `fromRead`: they come from a SYNC_BATCH whose
     * `lastSeq` is `readLastSeq`.
     */
    ingest(channelId, entries, fromRead, readLastSeq) {
        const ch = this.channels.ctx(channelId);
        if (!ch.opened) {
            // not displayed: only count (others' messages above what HELLO counted, less deleted ones)
            for (const e of entries) {
                const kind = entryKind(e);
                if (kind === 'delete' && e.targetId !== undefined) {
                    ch.liveUnread.delete(e.targetId);
                    ch.liveMentions.delete(e.targetId);
                }
                if (e.seq > ch.log.knownLastSeq) {
                    ch.log.noteLastSeq(e.seq);
                    if (kind === 'message' && e.senderId !== this.c.userId) {
                        ch.liveUnread.set(e.messageId, e.seq);
                        if (mentionsUser(e, this.c.userId))
                            ch.liveMentions.set(e.messageId, e.seq);
                    }
                }
            }
            ch.store.invalidate();
            return;
        }
        const r = ch.log.ingest(entries, fromRead, readLastSeq);
        if (r.appended.length > 0) {
            for (const e of r.appended) {
                if (entryKind(e) === 'message' && ch.typing.remove(e.senderId))
                    ch.store.invalidate();
            }
            // the channel's log is gapless: its threads take their replies and changes from it
            const readAsOf = fromRead ? Math.max(readLastSeq ?? ch.log.knownLastSeq, 0) : undefined;
            for (const t of ch.threads.values()) {
                t.log.channelAppended(r.appended, readAsOf);
                t.store.invalidate();
            }
            this.c.events.emit('entries', ch.id, r.appended);
            this.receipts.scheduleDelivered();
        }
        ch.store.invalidate();
        if (r.gapAfter !== undefined)
            this.catchUp(ch);
    }
    /**
     * An ERROR naming the channel and no clientMsgId: the answer to its oldest SYNC, if one
     * waits (`forbidden`: the channel is gone for the user). Returns whether it was one.
     */
    onError(channelId, err) {
        const req = this.syncs.get(channelId)?.shift();
        if (req === undefined)
            return false;
        const ch = this.channels.ctx(channelId);
        if (req.kind === 'recheck')
            req.done?.(err);
        if (req.kind === 'older') {
            ch.loadingOlder = false;
            for (const w of ch.olderWaiters.splice(0))
                w(err);
        }
        // the newest page or the entries above the window, refused for now (`unavailable`: the
        // database did not answer in time): asked again, or the channel stays short of what it
        // knows exists until a later entry or reconnect happens to ask
        if ((req.kind === 'open' || req.kind === 'forward') && err.retryable)
            this.retryRead(ch, err);
        const t = req.thread;
        if (t !== undefined) {
            // the thread's read was refused (an unknown root, a message that is no root): it fails
            t.loadingOlder = false;
            // a thread's first read refused for now is asked again (as a channel's, below)
            if (req.kind === 'thread' && err.retryable)
                this.retryRead(ch, err, t);
            else if (req.kind === 'thread')
                t.error = err.toJSON();
            for (const w of t.olderWaiters.splice(0))
                w(err);
            t.store.invalidate();
        }
        if (err.code === 'forbidden')
            this.channels.markRemoved(ch);
        ch.store.invalidate();
        return true;
    }
    /**
     * An ERROR naming only a message (no channel, no clientMsgId): the answer to a thread's
     * read of that root, when one is the oldest SYNC of its channel. Returns whether it was one.
     */
    onThreadError(messageId, err) {
        for (const [channelId, q] of this.syncs) {
            const head = q[0];
            if (head?.thread !== undefined && head.thread.log.rootId === messageId)
                return this.onError(channelId, err);
        }
        return false;
    }
    /** Whether a SYNC has waited for its answer longer than `limitMs`. */
    stale(now, limitMs) {
        for (const q of this.syncs.values())
            for (const r of q)
                if (now - r.sentAt > limitMs)
                    return true;
        return false;
    }
    /**
     * Asks a channel's refused opening or catch-up read (with `thread`: that thread's first
     * read) again after a backoff
     * (`retryBackoff`, at least the ERROR's `retryAfterMs`), on the same connection; one
     * timer per channel. A reconnect meanwhile asks by itself (HELLO resumes the channel).
     */
    retryRead(ch, err, thread) {
        const key = thread === undefined ? ch.id : `${ch.id}\u0000${thread.log.rootId}`;
        if (this.retryTimers.has(key))
            return;
        const attempt = this.retryAttempts.get(key) ?? 0;
        this.retryAttempts.set(key, attempt + 1);
        const delay = Math.max(backoffDelay(attempt, { baseMs: 250, maxMs: 30_000, ...this.c.opts.retryBackoff }), err.retryAfterMs ?? 0);
        const gen = this.conn.openGen;
        const timer = setTimeout(() => {
            this.retryTimers.delete(key);
            if (this.conn.openGen !== gen || !ch.opened || ch.removed)
                return;
            if (thread !== undefined)
                this.openThread(ch, thread);
            else if (ch.log.isStarted)
                this.catchUp(ch);
            else
                this.openChannel(ch);
        }, delay);
        this.retryTimers.set(key, timer);
    }
    /** The client closed: no read is asked again. */
    close() {
        for (const t of this.retryTimers.values())
            clearTimeout(t);
        this.retryTimers.clear();
    }
    /** The connection dropped: no SYNC on it will be answered (they are sent again after HELLO). */
    dropped() {
        for (const t of this.retryTimers.values())
            clearTimeout(t);
        this.retryTimers.clear();
        const lost = [...this.syncs.values()].flat().filter((r) => r.kind === 'recheck');
        this.syncs.clear();
        for (const r of lost)
            r.done?.(new ChatdError('unavailable', 'connection lost'));
        for (const ch of this.channels.all()) {
            ch.loadingOlder = false;
            for (const t of ch.threads.values())
                t.loadingOlder = false;
        }
    }
    syncQueue(channelId) {
        let q = this.syncs.get(channelId);
        if (q === undefined) {
            q = [];
            this.syncs.set(channelId, q);
        }
        return q;
    }
    sendSync(ch, req, frame) {
        const no = this.conn.send(frame);
        if (no === 0)
            return false;
        this.syncQueue(ch.id).push({ ...req, frameNo: no, sentAt: this.c.now() });
        return true;
    }
    pageSize() {
        return Math.min(500, Math.max(1, this.c.opts.pageSize ?? 50));
    }
}
//# sourceMappingURL=sync.js.map