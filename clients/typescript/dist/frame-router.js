import { ChatdError } from './errors.js';
import { parseServerFrame } from './frame-parse.js';
import { parseNotifySettings } from './notify-settings.js';
/** @internal Routes each server frame to the part that handles it. */
export class FrameRouter {
    p;
    /** Frames go to the parts of `targets`. */
    constructor(targets) {
        this.p = targets;
    }
    /** A server frame arrived on connection `gen`: to the part that handles it. */
    onFrame(text, gen) {
        const f = parseServerFrame(text);
        if (f === undefined)
            return;
        switch (f.type) {
            case 'HELLO':
                this.onHello(f, gen);
                break;
            case 'MSG_ACK':
                if (this.p.sender.onAck(f))
                    this.p.typingIndicators.messageStored(f.channelId);
                break;
            case 'MSG_RECV':
                // fan-out reaches current members only
                this.p.channels.memberNow(this.p.channels.ctx(f.channelId));
                this.p.sync.ingest(f.channelId, [f], false);
                break;
            case 'SYNC_BATCH':
                this.p.sync.onBatch(f);
                break;
            case 'RECEIPT':
                this.p.receipts.onReceipt(f);
                this.p.memberLists.onReceipt(f);
                break;
            case 'ERROR':
                this.onError(f);
                break;
            case 'TYPING':
                this.p.typingIndicators.onTyping(f);
                break;
            case 'PRESENCE':
                this.p.presenceSub.onPresence(f);
                break;
            case 'CHANNEL_ADDED':
                this.onChannelAdded(f);
                break;
            case 'CHANNEL_REMOVED':
                // (no reason from a version 1.1 server: the channel was deleted)
                this.p.channels.markRemoved(this.p.channels.ctx(f.channelId), f.reason ?? 'deleted');
                break;
            case 'CHANNEL_SETTINGS':
                this.onSettings(f);
                break;
            case 'CHANNEL_UPDATED':
                if (typeof f.channelId === 'string')
                    this.p.channels.moderation.stated(f.channelId, f.postingRole, f.slowModeMs, f.retentionSecs);
                this.p.c.events.emit('channelUpdated', f);
                break;
            case 'MEMBER':
                this.p.channels.applyMember(f);
                this.p.channels.moderation.onMember(f);
                this.p.memberLists.onMember(f);
                this.p.c.events.emit('member', f);
                break;
            default:
                break; // unknown frame types are ignored
        }
    }
    /** `CHANNEL_SETTINGS`: the user changed a channel's settings (on any session). */
    onSettings(f) {
        let s;
        try {
            s = parseNotifySettings(f);
        }
        catch {
            return; // a malformed frame changes nothing
        }
        if (typeof f.channelId === 'string')
            this.p.channels.applySettings(f.channelId, s);
    }
    /** A session opened: take its channels, then read, subscribe and send what waits. */
    onHello(h, gen) {
        this.p.conn.opened(gen, h.sessionId);
        const listed = this.p.channels.applyHello(h);
        for (const c of h.channels)
            this.p.channels.moderation.stated(c.channelId, c.postingRole, c.slowModeMs, c.retentionSecs);
        this.p.conn.setState('open');
        this.p.conn.store.invalidate();
        this.p.c.events.emit('hello', h);
        for (const id of listed) {
            const ch = this.p.channels.get(id);
            if (ch !== undefined)
                this.p.channels.markListed(ch);
        }
        for (const ch of this.p.channels.all()) {
            if (!ch.opened || ch.removed)
                continue;
            this.p.sync.resume(ch);
            if (ch.olderWaiters.length > 0)
                this.p.sync.pumpOlder(ch);
        }
        // MEMBER frames sent while away are lost: the member lists are read again
        this.p.memberLists.opened();
        this.p.presenceSub.opened();
        void this.p.sender.resendAll();
    }
    /**
     * `CHANNEL_ADDED`: the user is in the channel now; it is tracked as a `HELLO` channel
     * from then on (listed, and an opened one reads what it lacks from the entry's `lastSeq`).
     */
    onChannelAdded(f) {
        const ch = this.p.channels.ctx(f.channel.channelId);
        this.p.channels.added(ch, f.channel);
        this.p.channels.moderation.stated(ch.id, f.channel.postingRole, f.channel.slowModeMs, f.channel.retentionSecs);
        if (ch.opened) {
            this.p.sync.resume(ch);
            if (ch.olderWaiters.length > 0)
                this.p.sync.pumpOlder(ch);
        }
    }
    /**
     * An ERROR: a record's (by clientMsgId), the refusal of an unknown frame type, a SYNC's
     * (by channelId), a `forbidden` naming a channel the user is known to be out of (a
     * frame sent before its removal was heard of: dropped), or, naming nothing, maybe the
     * presence subscription's; else `error`.
     */
    onError(e) {
        const err = ChatdError.fromFrame(e);
        // a moderation refusal (muted, read_only, slow_mode) tells the channel's snapshot
        const refusedIn = e.channelId ?? (e.clientMsgId !== undefined ? this.p.sender.channelOf(e.clientMsgId) : undefined);
        if (err.reason !== undefined && refusedIn !== undefined)
            this.p.channels.moderation.onRefusal(refusedIn, err);
        if (e.clientMsgId !== undefined && this.p.sender.onError(e.clientMsgId, err))
            return;
        if (e.code === 'unknown_type') {
            const u = this.p.conn.features.refuseOldest();
            if (u !== undefined) {
                if (u.clientMsgId !== undefined)
                    this.p.sender.unsupported(u.clientMsgId, err);
                return;
            }
        }
        if (e.channelId !== undefined && e.clientMsgId === undefined && this.p.sync.onError(e.channelId, err))
            return;
        // a thread's read refused naming only its root (`not_found`)
        if (e.channelId === undefined && e.clientMsgId === undefined && e.messageId !== undefined && this.p.sync.onThreadError(e.messageId, err))
            return;
        // a frame (TYPING, a receipt) that crossed the channel's CHANNEL_REMOVED: expected, not news
        if (e.code === 'forbidden' && e.channelId !== undefined && e.clientMsgId === undefined && this.p.channels.get(e.channelId)?.removed === true)
            return;
        if (err.retryable && e.clientMsgId === undefined && e.channelId === undefined && e.messageId === undefined) {
            this.p.presenceSub.refused(err);
        }
        this.p.c.events.emit('error', err, e);
    }
}
//# sourceMappingURL=frame-router.js.map