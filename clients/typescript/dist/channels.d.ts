/**
 * The user's channels as the client holds them: each channel's state (its log window,
 * watermarks, receipts, typing, what HELLO said), its store's snapshot, membership
 * (listed, removed), and the channel list built from them.
 *
 * @module
 */
import type { ChatdError } from './errors.js';
import { ChannelLog } from './log.js';
import type { OutboxRecord } from './outbox.js';
import type { ChannelRemovedReason, HelloChannel, HelloFrame, MemberFrame } from './protocol.js';
import { ModerationState } from './moderation-state.js';
import { LazyStore } from './store.js';
import type { ThreadCtx } from './threads.js';
import type { ChannelSnapshot, ChannelSummary, NotifySettings, OutgoingMessage, Watermarks } from './snapshot-types.js';
import type { ClientContext } from './types.js';
import { TypingThrottle, TypingTracker } from './typing.js';
/** @internal Everything the client holds about one channel. */
export interface ChannelCtx {
    /** The channel. */
    id: string;
    /** Its entries: the window held, folded. */
    log: ChannelLog;
    /** True once `ChatClient.channel` opened it (its entries are then read and kept). */
    opened: boolean;
    /** Deleted, or the user is no longer a member. */
    removed: boolean;
    /** Why it was removed, when known (`CHANNEL_REMOVED`'s `reason`). */
    removedReason: ChannelRemovedReason | undefined;
    /** Its entry of the last HELLO (or `GET /v1/me/channels`); undefined until listed. */
    hello: HelloChannel | undefined;
    /** `lastSeq` of that entry. */
    helloLastSeq: number;
    /** others' `message` entries received while not opened, after `helloLastSeq`: messageId → seq */
    liveUnread: Map<string, number>;
    /** those of them that mention the user (protocol §16): messageId → seq */
    liveMentions: Map<string, number>;
    /** `epoch` when the channel was last listed (see refreshChannels) */
    listedEpoch: number;
    /** `epoch` when the channel was last removed */
    removedEpoch: number;
    /** The user's read watermark. */
    readSeq: number;
    /** The user's delivered watermark. */
    deliveredSeq: number;
    /** Highest seq a MSG_DELIVERED (or MSG_READ) was sent for. */
    deliveredSent: number;
    /** Other users' watermarks. */
    receipts: Map<string, Watermarks>;
    /** Who else is typing. */
    typing: TypingTracker;
    /** Expires the next typing indicator. */
    typingTimer: ReturnType<typeof setTimeout> | undefined;
    /** Throttles the user's own typing `start`s. */
    throttle: TypingThrottle;
    /** The user's ACKed messages, until they show in the log. */
    sent: Map<string, OutgoingMessage>;
    /** The channel's store. */
    store: LazyStore<ChannelSnapshot>;
    /** `loadOlder` calls waiting for the next older page. */
    olderWaiters: ((err?: ChatdError) => void)[];
    /** An older page is being read. */
    loadingOlder: boolean;
    /** The threads opened in it (`ChatClient.thread`), by root id: fed the entries its log appends. */
    threads: Map<string, ThreadCtx>;
}
/** @internal The channels, by id, and the channel list. */
export declare class Channels {
    /** The channel list's store. */
    readonly list: LazyStore<readonly ChannelSummary[]>;
    /** The channels' posting rules and the user's mutes (`ChannelSnapshot.moderation`). */
    readonly moderation: ModerationState;
    private readonly c;
    private readonly byId;
    /** The user's outbox records (this tab's and other tabs'), for the channels' `outgoing`. */
    private readonly outbox;
    private listValue;
    /** ids emitted by `channelAdded` and not removed since */
    private readonly listed;
    /** counts channel listings and removals, to order them against a refresh in flight */
    private epochValue;
    /** `outbox` lists the user's outbox records in the order they were made. */
    constructor(c: ClientContext, outbox: () => Iterable<OutboxRecord>);
    /** The count of listings and removals so far. */
    get epoch(): number;
    /** Every channel the client knows of, listed or not, removed or not. */
    all(): IterableIterator<ChannelCtx>;
    /** A channel, if known. */
    get(channelId: string): ChannelCtx | undefined;
    /** A channel, created (not opened, not listed) when first asked for. */
    ctx(channelId: string): ChannelCtx;
    /** The listed channels that are not removed (`ChatClient.channelIds`). */
    ids(): string[];
    /** Something shown in the channel changed (its outbox records): a new snapshot. */
    changed(channelId: string): void;
    /**
     * Takes a HELLO's channels; those it no longer lists are removed (`channelRemoved`).
     * Returns the ids it lists, for {@link Channels.markListed} once the state is `open`.
     */
    applyHello(h: HelloFrame): Set<string>;
    /** Takes a channel's entry of HELLO (or of `GET /v1/me/channels`): its seqs, watermarks, unread base. */
    takeChannelState(ch: ChannelCtx, c: HelloChannel): void;
    /**
     * A live frame shows the user is a member now (added while connected, or again): a
     * `MSG_RECV`, or the ACK of a new (not duplicate) entry. A duplicate ACK proves nothing:
     * the server gives it also after the sender left the channel.
     */
    memberNow(ch: ChannelCtx): void;
    /**
     * `CHANNEL_ADDED`: the user is in the channel now, as its entry says (taken as a `HELLO`
     * channel's); listed (`channelAdded`) when it was not.
     */
    added(ch: ChannelCtx, entry: HelloChannel): void;
    /**
     * A `MEMBER` frame of a listed channel: the user's own role (`join`, `role`), and the
     * member count for others' `join`, `leave` and `ban` (the user's own are in its
     * `CHANNEL_ADDED`, and its channel is removed after its own leave).
     */
    applyMember(f: MemberFrame): void;
    /** The channel is (again) in the list: `channelAdded` when it was not. */
    markListed(ch: ChannelCtx): void;
    /** The channel was deleted or the user left it (`reason`, when known): `channelRemoved` once. */
    markRemoved(ch: ChannelCtx, reason?: ChannelRemovedReason): void;
    private buildSnapshot;
    private unreadOf;
    private unreadMentionsOf;
    /**
     * `CHANNEL_SETTINGS`, or the answer of the user's own settings call: the channel's
     * `notify` and `snoozeUntil` now (a channel not listed is left alone: its `HELLO` or
     * `CHANNEL_ADDED` entry will carry them).
     */
    applySettings(channelId: string, settings: NotifySettings): void;
    /** The channel list's snapshot: the previous array (and summaries) when nothing changed. */
    private buildList;
}
//# sourceMappingURL=channels.d.ts.map