/**
 * {@link FrameRouter}: each server frame the connection reads goes to the part (or parts)
 * of the client that handles it; a `HELLO` resumes the opened channels and sends what
 * waits, an `ERROR` goes to the request it answers.
 *
 * @module
 */
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import type { MemberLists } from './member-lists.js';
import type { PresenceSubscription } from './presence.js';
import type { Receipts } from './receipts.js';
import type { Sender } from './send.js';
import type { Sync } from './sync.js';
import type { ClientContext } from './types.js';
import type { TypingIndicators } from './typing-indicators.js';
/** @internal The parts of the client that server frames go to. */
export interface FrameTargets {
    /** The client's context (its events). */
    readonly c: ClientContext;
    /** The connection. */
    readonly conn: Connection;
    /** Per-channel state and the channel list. */
    readonly channels: Channels;
    /** Receipts in and out. */
    readonly receipts: Receipts;
    /** Channels' and threads' reads. */
    readonly sync: Sync;
    /** The send path. */
    readonly sender: Sender;
    /** Typing both ways. */
    readonly typingIndicators: TypingIndicators;
    /** The presence subscription. */
    readonly presenceSub: PresenceSubscription;
    /** The live member lists. */
    readonly memberLists: MemberLists;
}
/** @internal Routes each server frame to the part that handles it. */
export declare class FrameRouter {
    private readonly p;
    /** Frames go to the parts of `targets`. */
    constructor(targets: FrameTargets);
    /** A server frame arrived on connection `gen`: to the part that handles it. */
    onFrame(text: string, gen: number): void;
    /** `CHANNEL_SETTINGS`: the user changed a channel's settings (on any session). */
    private onSettings;
    /** A session opened: take its channels, then read, subscribe and send what waits. */
    private onHello;
    /**
     * `CHANNEL_ADDED`: the user is in the channel now; it is tracked as a `HELLO` channel
     * from then on (listed, and an opened one reads what it lacks from the entry's `lastSeq`).
     */
    private onChannelAdded;
    /**
     * An ERROR: a record's (by clientMsgId), the refusal of an unknown frame type, a SYNC's
     * (by channelId), a `forbidden` naming a channel the user is known to be out of (a
     * frame sent before its removal was heard of: dropped), or, naming nothing, maybe the
     * presence subscription's; else `error`.
     */
    private onError;
}
//# sourceMappingURL=frame-router.d.ts.map