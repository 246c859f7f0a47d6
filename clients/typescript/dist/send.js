/**
 * The send path: a send, edit, delete or reaction becomes an outbox record (durable
 * before its first try), goes out in send order on the open connection (a channel's
 * records one behind the other), and is matched with its `MSG_ACK` or `ERROR` by
 * clientMsgId; retryable errors wait out a backoff, others fail the record. An ACK is
 * also the entry itself for the sending session (the server sends it no `MSG_RECV`).
 *
 * @module
 */
import { ackedAttachments, attachmentFields, outgoingAttachments } from './attachment-types.js';
import { mentionFields } from './mentions.js';
import { backoffDelay } from './backoff.js';
import { ChatdError } from './errors.js';
import { uuidv7 } from './ids.js';
import { cutUtf8 } from './message-states.js';
import { newPending } from './outbox-tabs.js';
import { sameOp, sendOrder } from './outbox.js';
/** @internal Sends this tab's outbox records and settles them. */
export class Sender {
    c;
    conn;
    channels;
    sync;
    outbox;
    attached;
    putChain = Promise.resolve();
    /** Sends the outbox's records on the connection; ACKed entries go into the channels through `sync`. */
    constructor(c, conn, channels, sync, outbox, attached) {
        this.attached = attached;
        this.c = c;
        this.conn = conn;
        this.channels = channels;
        this.sync = sync;
        this.outbox = outbox;
    }
    /**
     * Makes `op` an outbox record and sends it; resolves on its ACK (see `ChatClient.send`).
     * With the clientMsgId of a record this tab holds (being written, waiting for its ACK, or
     * failed; its own or another tab's), no second record is made: the call waits for that
     * one's outcome, and a failed one is sent again (as `retry` does), when `op` is the same;
     * else it rejects with `idempotency_conflict`, as the server would answer, and the held
     * record goes on unchanged.
     */
    enqueue(op, options) {
        if (options.signal?.aborted === true)
            return Promise.reject(new ChatdError('aborted', 'aborted'));
        if (op.type !== 'MSG_SEND' && this.conn.features.unsupported.has(op.type)) {
            return Promise.reject(new ChatdError('unknown_type', `the server does not support ${op.type}`));
        }
        const clientMsgId = options.clientMsgId ?? uuidv7();
        const held = this.outbox.writing.get(clientMsgId) ?? this.outbox.pending.get(clientMsgId);
        if (held?.deleting !== undefined) {
            // every earlier send of this key was aborted while its record was written, and the
            // record is being deleted: a new one is made once that is done
            return held.deleting.then(() => this.enqueue(op, { ...options, clientMsgId }));
        }
        if (held !== undefined)
            return this.again(held, op, options.signal);
        const record = {
            userId: this.c.userId,
            clientMsgId,
            op,
            createdAt: this.c.now(),
            order: this.outbox.nextOrder(),
            state: 'pending',
            owner: this.c.tabId,
        };
        const p = newPending(record, false);
        const promise = this.claim(p, options.signal);
        // kept across a reload from here on: written synchronously, before this call returns (the
        // console clears its composer at once); the storage's put takes a transaction or more
        this.outbox.writeAhead.add(record);
        // a load that reads the storage before the put is taken below leaves the record to us,
        // and a send with the same clientMsgId made until then waits on it
        this.outbox.writing.set(clientMsgId, p);
        // durable before the first try: the put starts at once (IndexedDB runs a store's
        // transactions in the order they were made); the puts' outcomes are taken in send order,
        // so the sends go out in the order they were made
        const put = this.outbox.storage.put(record);
        put.catch(() => undefined); // its failure is handled below, once the earlier puts are
        const ready = this.putChain.then(() => put);
        this.putChain = ready.catch(() => undefined);
        ready.then(() => {
            this.outbox.writeAhead.remove(record.userId, clientMsgId);
            const existing = this.outbox.pending.get(clientMsgId);
            if (existing !== undefined) {
                // another tab's record with this key came in while ours was written (its broadcast,
                // or a load): ours replaced it in the storage, so it is put back; the calls wait on it
                this.outbox.writing.delete(clientMsgId);
                void this.outbox.storage.put(existing.record).catch(() => undefined);
                const waiters = p.waiters;
                p.waiters = [];
                if (!sameOp(existing.record.op, op)) {
                    for (const w of waiters)
                        w.reject(conflict(clientMsgId));
                    return;
                }
                existing.waiters.push(...waiters);
                if (existing.record.state === 'failed' && waiters.some((w) => w.claim === true))
                    this.revive(existing);
                return;
            }
            if (!p.waiters.some((w) => w.claim === true)) {
                // every send of it was aborted while it was being written: the record must not stay
                // behind to be sent by a later load (which leaves it alone until it is deleted)
                const deleted = () => {
                    this.outbox.writing.delete(clientMsgId);
                };
                p.deleting = this.outbox.storage.delete(this.c.userId, clientMsgId).then(deleted, deleted);
                return;
            }
            this.outbox.writing.delete(clientMsgId);
            this.outbox.pending.set(clientMsgId, p);
            this.outbox.broadcast({ t: 'put', record });
            this.channels.changed(op.channelId);
            this.transmit(p);
        }, (e) => {
            // the send is refused (its callers are told): no later load may send it
            this.outbox.writing.delete(clientMsgId);
            this.outbox.writeAhead.remove(record.userId, clientMsgId);
            for (const w of p.waiters)
                w.reject(new ChatdError('internal', `outbox storage failed: ${String(e)}`));
            p.waiters = [];
        });
        return promise;
    }
    /**
     * A send with the clientMsgId of the held record `p`: waits for its outcome when `op` is
     * the same (a failed record is sent again), else rejects with `idempotency_conflict`.
     */
    again(p, op, signal) {
        if (!sameOp(p.record.op, op))
            return Promise.reject(conflict(p.record.clientMsgId));
        const promise = this.claim(p, signal);
        if (p.record.state === 'failed')
            this.revive(p);
        return promise;
    }
    /**
     * A waiter of a send call on `p`. Its `signal` rejects it with `aborted`; when no other
     * send call of this tab then waits for the record, and the record is this tab's, it
     * leaves the outbox (and the storage), so nothing resends it; one being written is
     * deleted once its put is done.
     */
    claim(p, signal) {
        const promise = this.wait(p, signal, true, (cur) => {
            if (cur.waiters.some((w) => w.claim === true))
                return;
            // still waiting for its ACK: out of the outbox (storage too), so nothing resends it
            if (this.outbox.pending.get(cur.record.clientMsgId) === cur && !cur.foreign)
                void this.discard(cur.record.clientMsgId);
        });
        // a caller that drops the promise gets no unhandled rejection (e.g. `closed` at close)
        promise.catch(() => undefined);
        return promise;
    }
    /**
     * Waits for the outcome of the record `p` (a send call's wait when `claim`, else a
     * `whenSent`). When `signal` aborts first, the wait rejects with `aborted` and leaves the
     * record that holds it then (a waiter moves when another tab's record with the same key is
     * taken), and `aborted` is called with that record; a wait already settled is left alone.
     */
    wait(p, signal, claim, aborted) {
        const clientMsgId = p.record.clientMsgId;
        return new Promise((resolve, reject) => {
            const onAbort = () => {
                const cur = this.outbox.writing.get(clientMsgId) ?? this.outbox.pending.get(clientMsgId);
                const i = cur?.waiters.indexOf(waiter) ?? -1;
                if (cur === undefined || i < 0)
                    return; // settled already
                cur.waiters.splice(i, 1);
                reject(new ChatdError('aborted', 'aborted'));
                aborted?.(cur);
            };
            const waiter = {
                resolve: (v) => {
                    signal?.removeEventListener('abort', onAbort);
                    resolve(v);
                },
                reject: (e) => {
                    signal?.removeEventListener('abort', onAbort);
                    reject(e);
                },
            };
            if (claim)
                waiter.claim = true;
            signal?.addEventListener('abort', onAbort, { once: true });
            p.waiters.push(waiter);
        });
    }
    /** Sends a failed outbox record again, with its same clientMsgId. */
    async retry(clientMsgId) {
        const p = this.outbox.pending.get(clientMsgId);
        if (p === undefined)
            throw new ChatdError('not_found', 'no such outbox record');
        await this.takeOver(p);
        const promise = new Promise((resolve, reject) => p.waiters.push({ resolve, reject }));
        this.transmit(p);
        return promise;
    }
    /** Makes `p` this tab's pending record again (durably, other tabs told). */
    async takeOver(p) {
        const record = { ...p.record, state: 'pending', owner: this.c.tabId };
        delete record.error;
        p.record = record;
        p.foreign = false;
        p.attempt = 0;
        await this.outbox.storage.put(record);
        this.outbox.broadcast({ t: 'put', record });
        this.channels.changed(record.op.channelId);
    }
    /** A send made with the key of the failed record `p`: it is sent again, as by `retry` (a failed put fails it again). */
    revive(p) {
        this.takeOver(p).then(() => {
            this.transmit(p);
        }, (e) => {
            this.fail(p, new ChatdError('internal', `outbox storage failed: ${String(e)}`));
        });
    }
    /** Removes an outbox record; its waiters reject with `discarded`. */
    async discard(clientMsgId) {
        const p = this.outbox.pending.get(clientMsgId);
        if (p === undefined)
            return;
        this.outbox.pending.delete(clientMsgId);
        clearTimeout(p.retryTimer);
        for (const w of p.waiters)
            w.reject(new ChatdError('discarded', 'discarded'));
        p.waiters = [];
        await this.outbox.storage.delete(this.c.userId, clientMsgId);
        this.outbox.broadcast({ t: 'deleted', clientMsgId, op: p.record.op });
        this.channels.changed(p.record.op.channelId);
    }
    /** The outbox records in send order (this tab's and other tabs'). */
    records() {
        return sendOrder([...this.outbox.pending.values()].map((p) => p.record));
    }
    /** Waits for a record's outcome (see `ChatClient.whenSent`). */
    whenSent(clientMsgId, signal) {
        const p = this.outbox.pending.get(clientMsgId);
        if (p === undefined)
            return Promise.reject(new ChatdError('not_found', 'no such outbox record'));
        if (signal?.aborted === true)
            return Promise.reject(new ChatdError('aborted', 'aborted'));
        // aborting stops this wait only: the record stays in the outbox and is still sent
        return this.wait(p, signal, false);
    }
    /**
     * A connection opened: send this tab's records, then those other tabs left behind
     * (reload, crash). Never rejects: a storage `load` that fails is tried again on the next
     * connection.
     */
    async resendAll() {
        // ours first, at once and in order; then records other tabs left behind
        this.pump();
        try {
            await this.outbox.load();
        }
        catch {
            // the storage could not be read: the records held go out all the same; those left by
            // other tabs or an earlier run wait for the next load (the next connection's)
            return;
        }
        this.pump();
    }
    /**
     * A MSG_ACK arrived: its record is settled (or, not held any more, its entry is read).
     * Returns true when it stored a new message of this tab (a `MSG_SEND`, not a duplicate).
     */
    onAck(a) {
        const p = this.outbox.pending.get(a.clientMsgId);
        if (p === undefined) {
            // a send aborted or discarded while on its way was stored after all: read it, so it shows
            const ch = this.channels.get(a.channelId);
            if (ch?.opened === true) {
                ch.log.noteLastSeq(a.seq);
                this.sync.catchUp(ch);
            }
            return false;
        }
        this.conn.features.confirmUpTo(p.frameNo);
        if (p.record.op.type !== 'MSG_SEND')
            this.conn.features.confirm(p.record.op.type);
        const sent = {
            clientMsgId: a.clientMsgId,
            messageId: a.messageId,
            channelId: a.channelId,
            seq: a.seq,
            ts: a.ts,
            duplicate: a.duplicate,
        };
        this.completed(p, sent);
        void this.outbox.storage.delete(this.c.userId, a.clientMsgId);
        this.outbox.broadcast({ t: 'acked', clientMsgId: a.clientMsgId, ack: sent, op: p.record.op });
        return p.record.op.type === 'MSG_SEND' && !a.duplicate;
    }
    /** An outbox record was ACKed (here or in another tab). */
    completed(p, sent) {
        this.outbox.pending.delete(p.record.clientMsgId);
        clearTimeout(p.retryTimer);
        const op = p.record.op;
        const ch = this.channels.ctx(sent.channelId);
        if (!sent.duplicate)
            this.channels.memberNow(ch);
        if (op.type === 'MSG_SEND') {
            ch.sent.set(sent.clientMsgId, {
                clientMsgId: sent.clientMsgId,
                channelId: sent.channelId,
                body: op.body,
                state: 'sent',
                seq: sent.seq,
                messageId: sent.messageId,
                error: undefined,
                createdAt: p.record.createdAt,
                ...(op.replyTo !== undefined ? { replyTo: op.replyTo } : {}),
                ...(op.threadId !== undefined ? { threadId: op.threadId } : {}),
                ...mentionFields(op),
                ...outgoingAttachments(op),
            });
        }
        // the sending session gets no MSG_RECV for its own entry: make it from the ACK
        const entry = {
            type: 'MSG_RECV',
            messageId: sent.messageId,
            channelId: sent.channelId,
            senderId: this.c.userId,
            seq: sent.seq,
            ts: sent.ts,
            clientMsgId: sent.clientMsgId,
            ...(op.type === 'MSG_SEND'
                ? { kind: 'message', body: op.body, ...replyFields(op, ch.log) }
                : op.type === 'MSG_EDIT'
                    ? { kind: 'edit', body: op.body, targetId: op.messageId }
                    : op.type === 'MSG_DELETE'
                        ? { kind: 'delete', body: '', targetId: op.messageId }
                        : { kind: 'reaction', body: '', targetId: op.messageId, emoji: op.emoji, op: op.op }),
        };
        if (sent.duplicate && !ch.log.has(sent.messageId)) {
            // a duplicate's original may already have been edited: learn its state by reading, not from here
            ch.log.noteLastSeq(sent.seq);
            if (ch.opened && ch.log.isStarted && sent.seq <= ch.log.high) {
                /* already in the window under another path: nothing to do */
            }
            else if (ch.opened) {
                this.sync.ingest(ch.id, op.type === 'MSG_SEND' ? [entry] : [], false);
                this.sync.catchUp(ch);
            }
        }
        else {
            this.sync.ingest(ch.id, [entry], false);
            if (op.type === 'MSG_SEND' && (op.attachments?.length ?? 0) > 0)
                this.attached?.sentWithAttachments(sent);
        }
        ch.store.invalidate();
        this.c.events.emit('acked', sent, p.record);
        for (const w of p.waiters)
            w.resolve(sent);
        p.waiters = [];
    }
    /**
     * An ERROR naming a clientMsgId arrived: when it is a held record's, it is retried
     * (retryable) or failed. Returns whether it was one.
     */
    onError(clientMsgId, err) {
        const p = this.outbox.pending.get(clientMsgId);
        if (p === undefined)
            return false;
        this.conn.features.confirmUpTo(p.frameNo);
        this.sendFailed(p, err);
        return true;
    }
    /** The channel of a held record (undefined when none is held under `clientMsgId`). */
    channelOf(clientMsgId) {
        return this.outbox.pending.get(clientMsgId)?.record.op.channelId;
    }
    /** The server does not know the frame type of record `clientMsgId` (`unknown_type`): it fails. */
    unsupported(clientMsgId, err) {
        const p = this.outbox.pending.get(clientMsgId);
        if (p !== undefined)
            this.fail(p, err);
    }
    /** Whether a record sent on the open connection has waited for its answer longer than `limitMs`. */
    stale(now, limitMs) {
        const open = this.conn.openGen;
        for (const p of this.outbox.pending.values()) {
            if (p.inflightConn !== 0 && p.inflightConn === open && now - (p.sentAt ?? now) > limitMs)
                return true;
        }
        return false;
    }
    /** The connection dropped: nothing is in flight (all is sent again after the next HELLO). */
    dropped() {
        for (const p of this.outbox.pending.values())
            p.inflightConn = 0;
    }
    /** The client closed: no more retries; waiters reject with `closed` (the records stay stored). */
    close() {
        for (const p of this.outbox.pending.values()) {
            clearTimeout(p.retryTimer);
            for (const w of p.waiters)
                w.reject(new ChatdError('closed', 'client closed'));
            p.waiters = [];
        }
    }
    transmit(p) {
        clearTimeout(p.retryTimer);
        p.retryTimer = undefined;
        this.pump();
    }
    /**
     * Sends every pending record of this tab that is not in flight on the current
     * connection, in send order; a channel's later records wait behind one that waits for
     * its retry, so a channel's messages are stored in the order they were sent.
     */
    pump() {
        if (this.conn.openGen === 0)
            return;
        const pending = this.outbox.pending;
        const blocked = new Set();
        for (const r of sendOrder([...pending.values()].map((x) => x.record))) {
            const p = pending.get(r.clientMsgId);
            if (p === undefined || p.foreign || p.record.state !== 'pending')
                continue;
            const ch = p.record.op.channelId;
            if (blocked.has(ch))
                continue;
            if (p.retryTimer !== undefined) {
                blocked.add(ch);
                continue;
            }
            if (p.inflightConn === this.conn.openGen)
                continue;
            const no = this.conn.send(frameOf(p.record));
            if (no === 0)
                return;
            p.inflightConn = this.conn.openGen;
            p.frameNo = no;
            p.sentAt = this.c.now();
        }
    }
    /**
     * A refusal of a record: retryable ones wait and go again with the same clientMsgId (slow
     * mode's, `reason: "slow_mode"`, exactly its `retryAfterMs`, without growing the backoff:
     * the server's time is exact); others (`muted`, `read_only`, `blocked`, …) fail it for good.
     */
    sendFailed(p, err) {
        if (err.retryable && err.reason === 'slow_mode' && err.retryAfterMs !== undefined) {
            p.inflightConn = 0;
            clearTimeout(p.retryTimer);
            p.retryTimer = setTimeout(() => {
                p.retryTimer = undefined;
                this.pump();
            }, Math.max(1, err.retryAfterMs));
            return;
        }
        if (err.retryable) {
            p.inflightConn = 0;
            const delay = Math.max(backoffDelay(p.attempt++, { baseMs: 250, maxMs: 30_000, ...this.c.opts.retryBackoff }), err.retryAfterMs ?? 0);
            clearTimeout(p.retryTimer);
            p.retryTimer = setTimeout(() => {
                p.retryTimer = undefined;
                this.pump();
            }, delay);
            return;
        }
        this.fail(p, err);
    }
    fail(p, err) {
        p.inflightConn = 0;
        const record = { ...p.record, state: 'failed', error: err.toJSON() };
        p.record = record;
        void this.outbox.storage.put(record);
        this.outbox.broadcast({ t: 'put', record });
        this.channels.changed(record.op.channelId);
        for (const w of p.waiters)
            w.reject(err);
        p.waiters = [];
        this.c.events.emit('failed', record.clientMsgId, err);
    }
}
/**
 * The reply fields of the entry an ACK of a send stands for (the ACK carries none): its
 * `replyTo` and `threadId`, and a preview of the quoted message when the channel's window
 * holds it (as the server made it: the current text cut to 200 bytes, or deleted).
 */
function replyFields(op, log) {
    const quoted = op.replyTo === undefined ? undefined : log.message(op.replyTo);
    return {
        ...(op.replyTo !== undefined ? { replyTo: op.replyTo } : {}),
        ...(quoted !== undefined
            ? { replyPreview: quoted.deleted ? { senderId: quoted.senderId, body: '', deleted: true } : { senderId: quoted.senderId, body: cutUtf8(quoted.body) } }
            : {}),
        ...(op.threadId !== undefined ? { threadId: op.threadId } : {}),
        // as asked: the server keeps those who are members, which the ACK does not say; a read
        // of the entry has the mentions kept
        ...mentionFields(op),
        // without signed URLs (the ACK has none): the attachments module reads them next
        ...(op.attachments !== undefined && op.attachments.length > 0 ? { attachments: ackedAttachments(op.attachments) } : {}),
    };
}
/** The refusal of a send reusing a held record's clientMsgId with another op (the server's answer to it). */
function conflict(clientMsgId) {
    return new ChatdError('idempotency_conflict', `clientMsgId ${clientMsgId} is already in the outbox with another channel, body or option; nothing was sent`, { retryable: false });
}
/** The frame that sends an outbox record. */
function frameOf(r) {
    const op = r.op;
    switch (op.type) {
        case 'MSG_SEND':
            // the reply fields only when set: the same frame as before for a plain send
            return {
                type: 'MSG_SEND',
                channelId: op.channelId,
                clientMsgId: r.clientMsgId,
                body: op.body,
                ...(op.replyTo !== undefined ? { replyTo: op.replyTo } : {}),
                ...(op.threadId !== undefined ? { threadId: op.threadId } : {}),
                ...mentionFields(op),
                ...attachmentFields(op),
            };
        case 'MSG_EDIT':
            return { type: 'MSG_EDIT', clientMsgId: r.clientMsgId, messageId: op.messageId, body: op.body };
        case 'MSG_DELETE':
            return { type: 'MSG_DELETE', clientMsgId: r.clientMsgId, messageId: op.messageId };
        case 'MSG_REACT':
            return { type: 'MSG_REACT', clientMsgId: r.clientMsgId, messageId: op.messageId, emoji: op.emoji, op: op.op };
    }
}
//# sourceMappingURL=send.js.map