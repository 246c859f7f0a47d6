/**
 * The client's public data types: what an app passes in ({@link ChatClientOptions}, the
 * WebSocket and `online` sources), what its stores hold (connection, channel, channel
 * list and presence snapshots), what a send resolves to, and its events. Also the
 * context the client's parts share (internal).
 *
 * @module
 */
import type { AttachmentRef, OutboxAttachment } from './attachment-types.js';
import type { ChannelModeration } from './moderation-types.js';
import type { BackoffOptions } from './backoff.js';
import type { ChatdError, SerializedError } from './errors.js';
import type { Message } from './log.js';
import type { OutboxRecord, OutboxStorage } from './outbox.js';
import type { ChannelKind, ChannelRemovedReason, ChannelVisibility, ErrorFrame, HelloFrame, ChannelUpdatedFrame, MemberFrame, NotifyLevel, PresenceFrame, ReceiptFrame, WireEntry } from './protocol.js';
import type { Emitter, ExternalStore } from './store.js';
/**
 * An event handler property of {@link WebSocketLike}. Declared as a method's type, so that
 * TypeScript compares its parameter both ways: a socket whose handlers take a richer event
 * (the browser's `MessageEvent`, `ws`'s `WebSocket.MessageEvent`) fits, as the client only
 * reads the fields named here.
 */
export type WebSocketHandler<E> = {
    bivarianceHack(ev: E): void;
}['bivarianceHack'];
/**
 * The subset of the WebSocket API the client uses: the browser's `WebSocket`, or the `ws`
 * package's (Node), both fit as they are (no cast).
 */
export interface WebSocketLike {
    /** 0 connecting, 1 open, 2 closing, 3 closed. */
    readonly readyState: number;
    /** Sends a text frame. */
    send(data: string): void;
    /** Closes the socket. */
    close(code?: number, reason?: string): void;
    /** Open handler. */
    onopen: WebSocketHandler<unknown> | null;
    /** Message handler; `data` is the text of a text frame (a `Buffer` with `ws`: read with `String`). */
    onmessage: WebSocketHandler<{
        data: unknown;
    }> | null;
    /** Close handler. */
    onclose: WebSocketHandler<{
        code: number;
        reason: string;
    }> | null;
    /** Error handler. */
    onerror: WebSocketHandler<unknown> | null;
}
/**
 * A WebSocket constructor: `globalThis.WebSocket`, or `ws`'s default export
 * (`import WebSocket from 'ws'`, passed as it is). Only the URL is passed.
 */
export type WebSocketConstructor = new (url: string) => WebSocketLike;
/**
 * Where the browser's `online` event comes from: `window` (the default, when the global
 * object has `addEventListener`), or any `EventTarget` the app dispatches `online` on
 * (React Native's NetInfo, a test).
 */
export interface OnlineEventSource {
    /** Registers the client's `online` listener (called once, by `start`). */
    addEventListener(type: 'online', listener: () => void): void;
    /** Removes it (called by `close`). */
    removeEventListener(type: 'online', listener: () => void): void;
}
/** Options of {@link ChatClient}. */
export interface ChatClientOptions {
    /** WebSocket URL of the server, e.g. `wss://chat.example.com/v1/ws`. The token goes in `access_token`. */
    readonly url: string;
    /** The user's JWT, or a function returning a fresh one (called before every connection). */
    readonly token: string | (() => string | Promise<string>);
    /** The user id (the token's `sub`); read from the token when absent. Keys the outbox. */
    readonly userId?: string;
    /** WebSocket constructor; default `globalThis.WebSocket` (required in Node 20: pass `ws`). */
    readonly WebSocket?: WebSocketConstructor;
    /** Outbox storage; default IndexedDB when present, else memory. */
    readonly storage?: OutboxStorage;
    /** Backoff of send retries (default 250 ms doubling to 30 s, with jitter). */
    readonly retryBackoff?: BackoffOptions;
    /** Backoff of reconnects (default 250 ms doubling to 10 s, with jitter). */
    readonly reconnectBackoff?: BackoffOptions;
    /** A send, SYNC or edit with no answer for this long makes the client reconnect (default 15 000 ms). */
    readonly replyTimeoutMs?: number;
    /** Entries read when a channel opens, and per older page (default 50, at most 500). */
    readonly pageSize?: number;
    /** Send `MSG_DELIVERED` for the newest entry of opened channels (default true). */
    readonly autoDelivered?: boolean;
    /** Minimum time between two typing `start`s (default 2000 ms). */
    readonly typingThrottleMs?: number;
    /** Coordinate tabs of one user with BroadcastChannel and Web Locks when present (default true). */
    readonly tabSync?: boolean;
    /**
     * Its `online` event makes a reconnecting client try at once instead of waiting out its
     * backoff. Default: the global object when it has `addEventListener` (`window` in a
     * browser; nothing in Node); `null`: none.
     */
    readonly onlineEvents?: OnlineEventSource | null;
    /**
     * Base URL of the server's user HTTP routes (`GET /v1/me/channels`), e.g.
     * `https://chat.example.com`. Default: `url` with `ws:`/`wss:` turned into
     * `http:`/`https:` and a final `/v1/ws` removed.
     */
    readonly httpUrl?: string;
    /**
     * @deprecated Ignored: the client no longer reads `GET /v1/me/channels` periodically.
     * The server announces every channel the user is added to or removed from while
     * connected (`CHANNEL_ADDED`, `CHANNEL_REMOVED`, protocol 1.2 §13.3), and `HELLO` lists
     * them after a reconnect. {@link ChatClient.refreshChannels} still reads the list on
     * demand. Kept so that code which sets it still compiles.
     */
    readonly channelRefreshMs?: number;
    /** Clock (default Date.now). */
    readonly now?: () => number;
}
/** Connection states. */
export type ConnectionState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';
/** The connection store's snapshot. */
export interface ConnectionSnapshot {
    /** Where the connection is. */
    readonly state: ConnectionState;
    /** The user id (known from the start; confirmed by HELLO). */
    readonly userId: string;
    /** The current session's id, while open. */
    readonly sessionId: string | undefined;
    /** Version 1.1 frame types the server answered `unknown_type` to. */
    readonly unsupported: readonly string[];
}
/** A message the user sent that is not (yet) in the channel's log. */
export interface OutgoingMessage {
    /** Its idempotency key. */
    readonly clientMsgId: string;
    /** The channel. */
    readonly channelId: string;
    /** The text. */
    readonly body: string;
    /**
     * `pending` until ACKed; `failed` after a non-retryable error (until `retry` or
     * `discard`). An ACKed message leaves `outgoing` for the snapshot's `messages` at once;
     * it shows here as `sent` (with `seq` and `messageId`) only while it cannot join them
     * yet: entries stored before it are still being read, or the first page is loading.
     */
    readonly state: 'pending' | 'sent' | 'failed';
    /** Its seq, once sent. */
    readonly seq: number | undefined;
    /** Its messageId, once sent. */
    readonly messageId: string | undefined;
    /** The error of a failed message. */
    readonly error: SerializedError | undefined;
    /** When the user sent it. */
    readonly createdAt: number;
    /** The message it quotes (protocol §14), when sent as a reply. */
    readonly replyTo?: string;
    /** The thread's root (protocol §14), when sent into a thread. */
    readonly threadId?: string;
    /** The users it mentions, as asked (protocol §16). */
    readonly mentions?: readonly string[];
    /** True when it mentions every member (protocol §16). */
    readonly mentionAll?: boolean;
    /**
     * Its uploads (protocol §15) as the send was given them: each id, with type, size, name
     * and dimensions when the send was given the uploads themselves (not only ids).
     */
    readonly attachments?: readonly OutboxAttachment[];
}
/** Another member's receipt watermarks. */
export interface Watermarks {
    /** Highest seq delivered to them. */
    readonly deliveredSeq: number;
    /** Highest seq they read. */
    readonly readSeq: number;
}
/**
 * One channel in {@link ChatClient.channelList}: what the user's channel list shows,
 * known without opening the channel (from `HELLO`, `GET /v1/me/channels` and live frames).
 */
export interface ChannelSummary {
    /** The channel. */
    readonly channelId: string;
    /** Its display name (version 1.1; `null` when unset, `undefined` from a version 1 server or before known). */
    readonly name: string | null | undefined;
    /** Its metadata (version 1.1; `null` when unset). */
    readonly metadata: Readonly<Record<string, unknown>> | null | undefined;
    /** Highest seq known in the channel. */
    readonly lastSeq: number;
    /**
     * Unread messages (not the user's, not deleted) after the user's read watermark: from
     * `HELLO`'s `unread` (version 1.1) plus the messages of others received since, exact
     * from the log once the channel is open and holds everything after the watermark.
     */
    readonly unread: number;
    /** The user's read watermark. */
    readonly readSeq: number;
    /** True once {@link ChatClient.channel} opened it (its entries are then read and kept). */
    readonly opened: boolean;
    /**
     * `group`, or `direct` for the one channel between two users (version 1.2; `group` from
     * an earlier server, and until known). A direct channel cannot be left.
     */
    readonly kind: ChannelKind;
    /**
     * `private` or `public` (version 1.2; `private` from an earlier server). A public
     * channel is in the {@link ChatClient.directory}.
     */
    readonly visibility: ChannelVisibility;
    /** The user's own role in the channel (version 1.2; `member` from an earlier server). */
    readonly role: MemberRole;
    /**
     * How many members the channel has, as of the last `HELLO` or `GET /v1/me/channels`
     * (version 1.2; `undefined` from an earlier server, or before known).
     */
    readonly memberCount: number | undefined;
    /**
     * Unread messages that mention the user or all (protocol §16), counted like `unread`:
     * from `HELLO`'s `unreadMentions` plus live messages of others that mention the user,
     * exact from the log once the channel is open and holds everything after the watermark;
     * 0 once the user read past the last of them.
     */
    readonly unreadMentions: number;
    /** The user's notification setting (protocol §16; `all` when the server sends none). */
    readonly notify: NotifyLevel;
    /** Until when (ms) its notifications are snoozed; `null` when not (the stored time, also once past). */
    readonly snoozeUntil: number | null;
}
/** The user's notification settings of a channel (protocol §16.3). */
export interface NotifySettings {
    /** `all` (every message), `mentions` (only those that mention the user or all) or `none`. */
    readonly notify: NotifyLevel;
    /** Until when (ms since the epoch) notifications are snoozed; `null` when not. */
    readonly snoozeUntil: number | null;
}
/** A channel store's snapshot; the same object until something in the channel changed. */
export interface ChannelSnapshot {
    /** The channel. */
    readonly channelId: string;
    /** `loading` until its first page, `ready`, or `removed` (channel deleted or user no longer a member). */
    readonly status: 'loading' | 'ready' | 'removed';
    /**
     * With `removed`: why, when known (`CHANNEL_REMOVED`'s `reason`, version 1.2: `left`,
     * `removed`, `banned`, `deleted`; `left` after {@link ChatClient.leave}); undefined when
     * the client learned it otherwise (a `HELLO` or channel list without the channel, a
     * refused read), and while not removed.
     */
    readonly removedReason: ChannelRemovedReason | undefined;
    /** The messages held (newest page first loaded, older ones by `loadOlder`), in seq order, folded. */
    readonly messages: readonly Message[];
    /** The user's messages not in `messages` yet: pending, sent-but-not-yet-in-order, failed. */
    readonly outgoing: readonly OutgoingMessage[];
    /** True when older messages can be loaded. */
    readonly hasOlder: boolean;
    /** Unread messages (not the user's, not deleted) after the user's read watermark. */
    readonly unread: number;
    /** Unread messages that mention the user or all (protocol §16; as {@link ChannelSummary.unreadMentions}). */
    readonly unreadMentions: number;
    /** Highest seq known in the channel. */
    readonly lastSeq: number;
    /** The user's own delivered watermark. */
    readonly deliveredSeq: number;
    /** The user's own read watermark. */
    readonly readSeq: number;
    /** Other users' watermarks, from RECEIPT frames. */
    readonly receipts: Readonly<Record<string, Watermarks>>;
    /** Users typing now (never the user). */
    readonly typing: readonly string[];
    /**
     * The channel's posting rules and the user's mute and slow-mode wait, as far as the
     * server told them (see {@link ChannelModeration}); the same object until one changes.
     */
    readonly moderation: ChannelModeration;
}
/** The result of a successful send, edit, delete or reaction. */
export interface SentEntry {
    /** The idempotency key. */
    readonly clientMsgId: string;
    /** The stored entry's id. */
    readonly messageId: string;
    /** The channel. */
    readonly channelId: string;
    /** Its seq. */
    readonly seq: number;
    /** Its ts. */
    readonly ts: number;
    /** True when the server already had it (a retry): still a success. */
    readonly duplicate: boolean;
}
/** Presence of one user. */
export interface Presence {
    /** Online or offline. */
    readonly status: 'online' | 'offline';
    /** When the user's last session closed, when known. */
    readonly lastSeenAt: number | undefined;
}
/**
 * A member's role in a channel (protocol §13.1): `member`, `moderator` or `owner`. A role
 * this client does not know yet is passed through as its string.
 */
export type MemberRole = 'member' | 'moderator' | 'owner' | (string & Record<never, never>);
/** One member of a channel, as `GET /v1/channels/{channelId}/members` gives it. */
export interface Member {
    /** The member's user id. */
    readonly userId: string;
    /** Its role in the channel. */
    readonly role: MemberRole;
    /** When it (last) joined the channel, ms since the Unix epoch. */
    readonly joinedAt: number;
    /** Its delivered watermark in the channel (0: none). */
    readonly deliveredSeq: number;
    /** Its read watermark in the channel (0: none): it has read up to this seq. */
    readonly readSeq: number;
    /** Until when it is muted (ms since the epoch), when a mute is in force (version 1.2, §17). */
    readonly mutedUntil?: number;
}
/** One page of a channel's members ({@link ChatClient.members}). */
export interface MembersPage {
    /** The members, in byte order of `userId` (upper case before lower case). */
    readonly members: readonly Member[];
    /** Whether members follow the last one: ask again with `after` set to its `userId`. */
    readonly hasMore: boolean;
    /**
     * The channel's last seq when the page was read: membership changes after it are not
     * reflected in the page.
     */
    readonly atSeq: number;
}
/** Options of {@link ChatClient.members}. */
export interface MembersOptions {
    /** Members after this user id (exclusive, byte order); default: from the first. */
    readonly after?: string;
    /** Page size, 1 to 500; default the server's (100). */
    readonly limit?: number;
    /** Stops waiting (the call rejects with `aborted`). */
    readonly signal?: AbortSignal;
}
/** Options of {@link ChatClient.allMembers}. */
export interface AllMembersOptions {
    /** Members asked for per request, 1 to 500; default 500. */
    readonly pageSize?: number;
    /** Stops paging (the call rejects with `aborted`). */
    readonly signal?: AbortSignal;
}
/** Every member of a channel ({@link ChatClient.allMembers}). */
export interface MemberList {
    /** The members, in byte order of `userId`. */
    readonly members: readonly Member[];
    /**
     * The lowest `atSeq` of the pages read (the first page's): membership changes after it
     * may not be reflected in the list.
     */
    readonly atSeq: number;
}
/**
 * A channel's member list kept live ({@link ChatClient.memberList}): the members route
 * read, with the `MEMBER` frames received since folded onto it.
 */
export interface MemberListSnapshot {
    /** The channel. */
    readonly channelId: string;
    /**
     * `loading` until the first read answers; `ready`; `error` when the last read failed
     * (`members` are then those known before, if any); `removed` when the user is no longer
     * in the channel (`members` empty) until it is added back.
     */
    readonly status: 'loading' | 'ready' | 'error' | 'removed';
    /** The members, in byte order of `userId`, with their roles and watermarks (moved by `RECEIPT`s). */
    readonly members: readonly Member[];
    /** `atSeq` of the read (0 before one answered). */
    readonly atSeq: number;
    /** With `error`: why the read failed. */
    readonly error: ChatdError | undefined;
}
/**
 * The store of one channel's live member list, for `useSyncExternalStore(store.subscribe,
 * store.getSnapshot)`.
 */
export interface MemberListStore extends ExternalStore<MemberListSnapshot> {
    /** The channel. */
    readonly channelId: string;
    /** Reads the members route again (folding the frames received meanwhile). */
    refresh(): void;
}
/** One public channel of the directory ({@link ChatClient.directory}). */
export interface DirectoryChannel {
    /** The channel. */
    readonly channelId: string;
    /** Its display name, `null` when unset. */
    readonly name: string | null;
    /** How many members it has. */
    readonly memberCount: number;
    /** Its highest stored seq (0 when empty). */
    readonly lastSeq: number;
}
/** One page of the directory of public channels ({@link ChatClient.directory}). */
export interface DirectoryPage {
    /** Public group channels, in byte order of `channelId` (upper case before lower case). */
    readonly channels: readonly DirectoryChannel[];
    /** Whether channels follow the last one: ask again with `after` set to its `channelId`. */
    readonly hasMore: boolean;
}
/** Options of {@link ChatClient.directory}. */
export interface DirectoryOptions {
    /** Only channels whose id or name holds this text, case-insensitively (at most 200 characters); empty: all. */
    readonly q?: string;
    /** Channels after this channel id (exclusive, byte order); default: from the first. */
    readonly after?: string;
    /** Page size, 1 to 500; default the server's (100). */
    readonly limit?: number;
    /** Stops waiting (the call rejects with `aborted`). */
    readonly signal?: AbortSignal;
}
/** Options of {@link ChatClient.join} and {@link ChatClient.leave}. */
export interface MembershipOptions {
    /**
     * Stops waiting (the call rejects with `aborted`). The request may have reached the
     * server already: the user may then be in (or out of) the channel all the same, and the
     * channel list shows it after its next refresh.
     */
    readonly signal?: AbortSignal;
}
/**
 * A channel as the HTTP API gives it (the channel object of `POST /v1/me/channels` and `PUT
 * /v1/me/direct/{userId}`, protocol §13).
 */
export interface ChannelInfo {
    /** The channel (chosen by the server for a direct channel, and for a new one made without an id). */
    readonly channelId: string;
    /** Its members' user ids. */
    readonly members: readonly string[];
    /** Its highest stored seq (0 when empty). */
    readonly lastSeq: number;
    /** When it was made, ms since the Unix epoch. */
    readonly createdAt: number;
    /** Its display name, `null` when unset. */
    readonly name: string | null;
    /** Its metadata, `null` when unset. */
    readonly metadata: Readonly<Record<string, unknown>> | null;
    /** `group`, or `direct` for the one channel between two users. */
    readonly kind: ChannelKind;
    /** `private` or `public` (in the {@link ChatClient.directory}). */
    readonly visibility: ChannelVisibility;
    /** How many members it has. */
    readonly memberCount: number;
}
/** What {@link ChatClient.direct} resolves to. */
export interface DirectResult {
    /** The direct channel of the two users. */
    readonly channel: ChannelInfo;
    /** True when this call made it (201), false when it existed (200), made by either user. */
    readonly created: boolean;
}
/** Options of {@link ChatClient.createChannel}. */
export interface CreateChannelOptions {
    /** The channel id; default: one the server chooses (a UUIDv7). */
    readonly channelId?: string;
    /** Its display name (at most 200 characters, no control characters); default none. */
    readonly name?: string;
    /** `private` (the default: members only) or `public` (in the directory, anyone may join). */
    readonly visibility?: 'private' | 'public';
    /** Users added as `member`s (the user making it is its `owner`). */
    readonly members?: readonly string[];
    /**
     * Stops waiting (the call rejects with `aborted`). The request may have reached the
     * server already: the channel may then exist all the same.
     */
    readonly signal?: AbortSignal;
}
/** Options of {@link ChatClient.addMember}. */
export interface AddMemberOptions extends MembershipOptions {
    /**
     * The member's role; default: a new member is a `member`, an existing one keeps its role.
     * Any role but `member`, or changing an existing member's, needs the user to be an owner.
     */
    readonly role?: MemberRole;
}
/** Events of {@link ChatClient}. */
export interface ChatClientEvents {
    /** New entries of a channel's log, each once, in seq order (live, catch-up and gap fills). */
    entries: (channelId: string, entries: readonly WireEntry[]) => void;
    /** Older entries added below the window by `loadOlder`, in seq order. */
    older: (channelId: string, entries: readonly WireEntry[]) => void;
    /** Another user's watermark moved. */
    receipt: (receipt: ReceiptFrame) => void;
    /**
     * A subscribed user's presence changed. A PRESENCE for an id the current subscription
     * does not list (a late frame of a replaced one) is dropped and not emitted.
     */
    presence: (frame: PresenceFrame) => void;
    /**
     * A channel was removed (deleted, or the user is no longer a member), once. `reason`:
     * `CHANNEL_REMOVED`'s (version 1.2: `left`, `removed`, `banned`, `deleted`, or one this
     * client does not know), `left` after {@link ChatClient.leave}, `removed` after the
     * user's own {@link ChatClient.removeMember}; undefined when the client learned it
     * otherwise (a `HELLO` or channel list without it, a refused read).
     */
    channelRemoved: (channelId: string, reason: ChannelRemovedReason | undefined) => void;
    /**
     * A channel joined {@link ChatClient.channelIds}: listed by a `HELLO` (each channel on
     * the first one), by `CHANNEL_ADDED` (the user was added while connected: version 1.2),
     * by `GET /v1/me/channels`, or first seen in a live `MSG_RECV`.
     */
    channelAdded: (channelId: string) => void;
    /**
     * A `MEMBER` frame (version 1.2 §13.3): a membership of a channel of the user changed
     * (someone joined, left, was removed or banned, got a role, was muted). Emitted for every
     * frame, ops this client does not know included, after the channel list and the
     * channel's {@link ChatClient.memberList} took it.
     */
    member: (frame: MemberFrame) => void;
    /**
     * `CHANNEL_UPDATED` (this server's frame): a channel's name, metadata, visibility,
     * `postingRole` or `slowModeMs` changed; its snapshot's `moderation` already shows the
     * rules.
     */
    channelUpdated: (frame: ChannelUpdatedFrame) => void;
    /** Connection state changed. */
    state: (state: ConnectionState) => void;
    /** A HELLO arrived (each connection). */
    hello: (hello: HelloFrame) => void;
    /**
     * An outbox record was ACKed (`MSG_ACK`): the send, edit, delete or reaction `record`
     * asked for is stored, as `ack` says (its `seq`, `messageId`). `ack.duplicate` is true
     * when the server had stored that `clientMsgId` before: a retry whose first ACK was lost,
     * or a record sent again after a restart because it was still in the outbox storage
     * (records are deleted after their ACK: see the README's "Outbox storage"); a success
     * all the same, shown once. Emitted once per record, for records this client sent and
     * (in a browser) those another tab of the user sent, after the channel's snapshot shows
     * the result (a sent message is in `messages`, no longer in `outgoing`) and before the
     * `send`, `retry` or `whenSent` promise resolves. Not emitted for a send that was aborted
     * or discarded before its ACK came.
     */
    acked: (ack: SentEntry, record: OutboxRecord) => void;
    /** An outbox record failed (non-retryable error). */
    failed: (clientMsgId: string, error: ChatdError) => void;
    /** An ERROR the client could not tie to a request. */
    error: (error: ChatdError, frame: ErrorFrame) => void;
}
/** Options of a send-like call. */
export interface SendOptions {
    /** Stop waiting and stop retrying. The message may still have been stored (it would then show). */
    readonly signal?: AbortSignal;
    /** Use this idempotency key instead of a fresh `crypto.randomUUID()`. */
    readonly clientMsgId?: string;
}
/** Options of {@link ChatClient.send}: those of every send-like call, and the reply fields (protocol §14). */
export interface MessageSendOptions extends SendOptions {
    /**
     * Quote this message (a `messageId` of a `message` in the same channel, not deleted): the
     * stored message carries `replyTo` and a `replyPreview` of it. Kept in the outbox with the
     * send, so a retry sends the same (the idempotency key covers it).
     */
    readonly replyTo?: string;
    /**
     * Put the message in the thread of this root (a `message` of the same channel that is not
     * itself in a thread). Kept in the outbox with the send, like `replyTo`.
     */
    readonly threadId?: string;
    /**
     * Mention these users (protocol §16, `@bob`): at most 50 distinct; the server keeps those
     * who are members when it stores the message. Kept in the outbox with the send, like
     * `replyTo` (the idempotency key covers the set; order and repeats do not matter).
     */
    readonly mentions?: readonly string[];
    /** Mention every member (`@channel`): moderators and owners only (else `forbidden`). Kept like `mentions`. */
    readonly mentionAll?: boolean;
    /**
     * Send these uploads with the message (protocol §15): what
     * {@link Attachments.upload} returned (or their ids), in the order to show them; each
     * uploaded by the user into this channel and not part of any message yet, at most the
     * server's `max_attachments_per_message` (default 10); with attachments the body may be
     * `""`. Kept in the outbox with the send, like `replyTo` (the idempotency key covers the
     * list, in order). Refused: the send fails with `invalid_field` (field `attachments`).
     */
    readonly attachments?: readonly AttachmentRef[];
}
/** A thread store's snapshot ({@link ChatClient.thread}); the same object until something in the thread changed. */
export interface ThreadSnapshot {
    /** The channel. */
    readonly channelId: string;
    /** The thread's root message id. */
    readonly rootId: string;
    /**
     * `loading` until its first page, `ready`, `removed` when the user is no longer in the
     * channel, or `failed` when the server refused the thread's read (`error` says why:
     * `not_found` for an unknown root, `invalid_field` for a message that cannot be a root).
     */
    readonly status: 'loading' | 'ready' | 'removed' | 'failed';
    /** With `failed`: the server's refusal. */
    readonly error: SerializedError | undefined;
    /** The root, when the channel's window holds it (its `thread` summary folded live). */
    readonly root: Message | undefined;
    /** The thread's replies held (newest page first, older ones by `loadOlder`), in seq order, folded. */
    readonly messages: readonly Message[];
    /** The user's replies in this thread not in `messages` yet: pending, sent, failed. */
    readonly outgoing: readonly OutgoingMessage[];
    /** True when older replies can be loaded. */
    readonly hasOlder: boolean;
}
/** A thread's replies as a store ({@link ChatClient.thread}). */
export interface ThreadStore extends ExternalStore<ThreadSnapshot> {
    /** Loads the page of replies just below the oldest held one; resolves to whether even older ones exist. */
    loadOlder(signal?: AbortSignal): Promise<boolean>;
    /**
     * Sends a reply into this thread (`ChatClient.send` with its `threadId`; `replyTo` may
     * quote one of its messages; `attachments` and mentions as for any send).
     */
    send(body: string, options?: Omit<MessageSendOptions, 'threadId'>): Promise<SentEntry>;
}
/**
 * @internal What every part of the client shares: its options, clock, tab id, events,
 * and the user id (empty until `start` read it from the token when it was not given).
 */
export interface ClientContext {
    /** The options the client was made with. */
    readonly opts: ChatClientOptions;
    /** The clock (`opts.now`, or `Date.now`). */
    readonly now: () => number;
    /** This tab's id: owner of the outbox records it sends. */
    readonly tabId: string;
    /** The client's typed events. */
    readonly events: Emitter<ChatClientEvents>;
    /** The user id. */
    userId: string;
}
//# sourceMappingURL=types.d.ts.map