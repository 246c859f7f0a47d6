/**
 * What the client's stores hold (connection, channel, channel list, thread and presence
 * snapshots, the user's outgoing messages), and what a send takes and resolves to.
 *
 * @module
 */
import type { AttachmentRef, OutboxAttachment } from './attachment-types.js';
import type { ChannelModeration } from './moderation-types.js';
import type { SerializedError } from './errors.js';
import type { Message } from './log.js';
import type { MemberRole } from './member-types.js';
import type { ChannelKind, ChannelRemovedReason, ChannelVisibility, NotifyLevel } from './protocol.js';
import type { ExternalStore } from './store.js';
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
/** Options of a send-like call. */
export interface SendOptions {
    /**
     * Stop waiting and stop retrying. The message may still have been stored (it would then
     * show). With several calls of one `clientMsgId`, it rejects its own call only; the record
     * leaves the outbox when no other call of this tab waits for it (README, "Sending again
     * with the same `clientMsgId`").
     */
    readonly signal?: AbortSignal;
    /**
     * Use this idempotency key instead of a fresh UUIDv7 (`uuidv7`). A key the outbox holds
     * already makes no second record: the call settles with that record (a failed one is sent
     * again), or rejects with `idempotency_conflict` when the op differs (README, "Sending
     * again with the same `clientMsgId`").
     */
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
//# sourceMappingURL=snapshot-types.d.ts.map