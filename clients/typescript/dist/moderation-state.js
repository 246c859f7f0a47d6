/** The longest a timer may wait (setTimeout's limit); a later end is checked again then. */
const MAX_TIMER_MS = 2_147_483_647;
const NOTHING = Object.freeze({ postingRole: undefined, slowModeMs: undefined, retentionSecs: undefined, mutedUntil: undefined, nextSendAt: undefined });
/** @internal The channels' moderation state; `changed(channelId)` invalidates that channel's snapshot. */
export class ModerationState {
    byId = new Map();
    now;
    userId;
    changed;
    closed = false;
    /** `now` is the client's clock, `userId` the user's id. */
    constructor(now, userId, changed) {
        this.now = now;
        this.userId = userId;
        this.changed = changed;
    }
    /** The channel's moderation as the snapshot shows it (the same object until something changes). */
    snapshot(channelId) {
        const k = this.byId.get(channelId);
        if (k === undefined)
            return NOTHING;
        const now = this.now();
        k.snapshot ??= Object.freeze({
            postingRole: k.postingRole,
            slowModeMs: k.slowModeMs,
            retentionSecs: k.retentionSecs,
            mutedUntil: k.mutedUntil !== undefined && k.mutedUntil > now ? k.mutedUntil : undefined,
            nextSendAt: k.nextSendAt !== undefined && k.nextSendAt > now ? k.nextSendAt : undefined,
        });
        return k.snapshot;
    }
    /** A `MEMBER` frame: the user's own `mute` sets (or, `null`, ends) its mute. */
    onMember(f) {
        if (f.op !== 'mute' || f.userId !== this.userId() || f.mutedUntil === undefined)
            return;
        this.update(f.channelId, (k) => {
            k.mutedUntil = f.mutedUntil ?? undefined;
            k.muteFrameSeq = Math.max(k.muteFrameSeq, f.afterSeq);
        });
    }
    /**
     * A members read at `atSeq` showed the user (its `mutedUntil`, or none: not muted); a
     * read that does not show the last mute frame folded (its `afterSeq` not below `atSeq`,
     * as for the member lists) is older than it and changes nothing.
     */
    onMemberRead(channelId, mutedUntil, atSeq) {
        const k = this.byId.get(channelId);
        // (`memberFrameShown` of member-lists.ts: a frame is shown by a read when afterSeq < atSeq)
        if (k !== undefined && !(k.muteFrameSeq < atSeq))
            return;
        this.update(channelId, (known) => {
            known.mutedUntil = mutedUntil;
        });
    }
    /** A refusal of one of the user's frames in `channelId`: what its `reason` tells. */
    onRefusal(channelId, err) {
        const now = this.now();
        switch (err.reason) {
            case 'muted':
                this.update(channelId, (k) => {
                    if (err.retryAfterMs !== undefined)
                        k.mutedUntil = now + err.retryAfterMs;
                });
                break;
            case 'read_only':
                this.update(channelId, (k) => {
                    k.postingRole = 'moderator';
                });
                break;
            case 'slow_mode':
                this.update(channelId, (k) => {
                    if (err.retryAfterMs !== undefined)
                        k.nextSendAt = now + err.retryAfterMs;
                });
                break;
            default:
                break;
        }
    }
    /**
     * The channel's rules as the server states them (a `HELLO` or `CHANNEL_ADDED` entry, a
     * `CHANNEL_UPDATED` frame, a `GET /v1/me/channels` entry); values of the wrong type (an
     * older server's absent ones) are left as known. `retentionSecs` (§19) is absent when
     * the server's retention applies: a statement that carries rules sets it, absent or not.
     */
    stated(channelId, postingRole, slowModeMs, retentionSecs) {
        const role = postingRole === 'member' || postingRole === 'moderator' ? postingRole : undefined;
        const slow = typeof slowModeMs === 'number' && Number.isFinite(slowModeMs) && slowModeMs >= 0 ? slowModeMs : undefined;
        if (role === undefined && slow === undefined)
            return;
        const retention = typeof retentionSecs === 'number' && Number.isInteger(retentionSecs) && retentionSecs >= 0 ? retentionSecs : undefined;
        this.update(channelId, (k) => {
            k.retentionSecs = retention;
            if (role !== undefined)
                k.postingRole = role;
            if (slow !== undefined) {
                k.slowModeMs = slow;
                if (slow === 0)
                    k.nextSendAt = undefined;
            }
        });
    }
    /** The answer of the user's own settings change. */
    settings(rules) {
        this.update(rules.channelId, (k) => {
            k.postingRole = rules.postingRole;
            k.slowModeMs = rules.slowModeMs;
            k.retentionSecs = rules.retentionSecs;
            if (rules.slowModeMs === 0)
                k.nextSendAt = undefined;
        });
    }
    /** The client closed: no more timers. */
    close() {
        this.closed = true;
        for (const k of this.byId.values())
            clearTimeout(k.timer);
    }
    update(channelId, fn) {
        let k = this.byId.get(channelId);
        if (k === undefined) {
            k = { postingRole: undefined, slowModeMs: undefined, retentionSecs: undefined, mutedUntil: undefined, nextSendAt: undefined, muteFrameSeq: -1, timer: undefined, snapshot: undefined };
            this.byId.set(channelId, k);
        }
        fn(k);
        this.refresh(channelId, k);
    }
    /** The snapshot is made again; a timer waits for the earliest end still ahead. */
    refresh(channelId, k) {
        const before = k.snapshot;
        k.snapshot = undefined;
        clearTimeout(k.timer);
        k.timer = undefined;
        const now = this.now();
        const ends = [k.mutedUntil, k.nextSendAt].filter((t) => t !== undefined && t > now);
        if (ends.length > 0 && !this.closed) {
            const wait = Math.min(Math.min(...ends) - now, MAX_TIMER_MS);
            k.timer = setTimeout(() => {
                k.timer = undefined;
                this.refresh(channelId, k);
            }, wait);
        }
        const after = this.snapshot(channelId);
        if (before === undefined || !sameModeration(before, after))
            this.changed(channelId);
        else
            k.snapshot = before;
    }
}
function sameModeration(a, b) {
    return a.postingRole === b.postingRole && a.slowModeMs === b.slowModeMs && a.retentionSecs === b.retentionSecs && a.mutedUntil === b.mutedUntil && a.nextSendAt === b.nextSendAt;
}
//# sourceMappingURL=moderation-state.js.map