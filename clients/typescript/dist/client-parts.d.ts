/**
 * {@link ClientParts}: the parts of one {@link ChatClient} (connection, channels, sync,
 * send path, tab outbox, receipts, typing, presence, channel refresh, members, member
 * lists, directory, new channels, search, moderation, attachments), made and wired
 * together; server frames go to its {@link FrameRouter}.
 *
 * @module
 */
import { Attachments } from './attachments.js';
import { NewChannels } from './channel-create.js';
import { ChannelRefresh } from './channel-refresh.js';
import { Channels } from './channels.js';
import { Connection } from './connection.js';
import { Directory } from './directory.js';
import { type FrameTargets } from './frame-router.js';
import { MemberLists } from './member-lists.js';
import { Members } from './members.js';
import { Moderation } from './moderation.js';
import { TabOutbox } from './outbox-tabs.js';
import { PresenceSubscription } from './presence.js';
import { Receipts } from './receipts.js';
import { Search } from './search.js';
import { Sender } from './send.js';
import type { MessageSendOptions, SentEntry } from './snapshot-types.js';
import type { Emitter } from './store.js';
import { Sync } from './sync.js';
import type { ChatClientEvents, ChatClientOptions, ClientContext } from './types.js';
import { TypingIndicators } from './typing-indicators.js';
/** @internal The parts of one client, wired together. */
export declare class ClientParts implements FrameTargets {
    /** The client's context. */
    readonly c: ClientContext;
    /** The WebSocket session. */
    readonly conn: Connection;
    /** Per-channel state, snapshots, membership, the channel list. */
    readonly channels: Channels;
    /** `MSG_READ` and `MSG_DELIVERED` out, `RECEIPT` in. */
    readonly receipts: Receipts;
    /** `SYNC`: channels' and threads' reads. */
    readonly sync: Sync;
    /** The outbox records this tab holds. */
    readonly tabOutbox: TabOutbox;
    /** The send path. */
    readonly sender: Sender;
    /** Typing both ways. */
    readonly typingIndicators: TypingIndicators;
    /** The presence subscription. */
    readonly presenceSub: PresenceSubscription;
    /** `GET /v1/me/channels`. */
    readonly refresher: ChannelRefresh;
    /** The members routes. */
    readonly memberRoutes: Members;
    /** The live member lists. */
    readonly memberLists: MemberLists;
    /** The directory, joining and leaving. */
    readonly dir: Directory;
    /** New group and direct channels. */
    readonly newChannels: NewChannels;
    /** Search. */
    readonly finder: Search;
    /** Moderation's routes. */
    readonly moderation: Moderation;
    /** Attachments' routes. */
    readonly attachments: Attachments;
    private readonly router;
    /**
     * Makes the context (the user id from the options or the token, when there) and the
     * parts; `send` is the client's (attachments' `sendFiles` sends through it).
     */
    constructor(options: ChatClientOptions, events: Emitter<ChatClientEvents>, send: (channelId: string, body: string, options: MessageSendOptions) => Promise<SentEntry>);
    /**
     * Reads the user id from the token when it is not known yet, loads the outbox, joins the
     * other tabs and connects.
     */
    start(): Promise<void>;
    /** Closes the connection and every part that holds timers, listeners or waiters. */
    close(): void;
}
//# sourceMappingURL=client-parts.d.ts.map