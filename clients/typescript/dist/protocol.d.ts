/**
 * Wire types of the chatd WebSocket protocol, versions 1 and 1.1 (and of version 1.2 the
 * fields it adds to `HELLO`'s channels, the membership frames `MEMBER`, `CHANNEL_ADDED`
 * and `CHANNEL_REMOVED`'s `reason`, and replies and threads), as the repository's
 * `docs/protocol.md` describes them.
 * Field names are the protocol's own (camelCase). Unknown fields are ignored by both sides.
 *
 * @packageDocumentation
 */
import type { MessageAttachment } from './attachment-types.js';
/** The kind of a channel log entry (version 1.1). A version 1 server sends no kind: it means `message`. */
export type EntryKind = 'message' | 'edit' | 'delete' | 'reaction';
/** A reaction count as returned on `message` entries by reads (version 1.1). */
export interface ReactionCount {
    /** The emoji, 1 to 64 bytes of UTF-8. */
    readonly emoji: string;
    /** How many users hold this reaction (always > 0). */
    readonly count: number;
    /** True when the current user holds it. */
    readonly me: boolean;
}
/** One channel log entry as the server sends it: `MSG_RECV`, and the elements of `SYNC_BATCH`. */
export interface WireEntry {
    /** Always `MSG_RECV`. */
    readonly type: 'MSG_RECV';
    /** Server-assigned UUIDv7 of this entry. */
    readonly messageId: string;
    /** The channel. */
    readonly channelId: string;
    /** Who stored the entry. */
    readonly senderId: string;
    /** The entry's place in the channel's gapless sequence (starts at 1). */
    readonly seq: number;
    /** The text (current text on reads of `message` entries; `""` for delete and reaction). */
    readonly body: string;
    /** Server time in milliseconds since the Unix epoch. */
    readonly ts: number;
    /**
     * The sender's idempotency key; absent on an entry made through an HTTP route (a backend
     * post, the delete route: version 1.2 §12 common rules).
     */
    readonly clientMsgId?: string;
    /** Made with the admin token through an HTTP route (version 1.2); absent when false. */
    readonly byAdmin?: boolean;
    /** Entry kind (version 1.1); absent from a version 1 server, meaning `message`. */
    readonly kind?: EntryKind;
    /** For edit, delete and reaction: the target message's id. */
    readonly targetId?: string;
    /** For reaction entries: the emoji. */
    readonly emoji?: string;
    /** For reaction entries: `add` or `remove`. */
    readonly op?: 'add' | 'remove';
    /**
     * For reaction entries: `true` when the entry changed nothing (an `add` of a reaction
     * the sender held, a `remove` of one not held); absent otherwise.
     */
    readonly noop?: boolean;
    /** On reads: ts of the latest edit, when edited. */
    readonly editedAt?: number;
    /** On reads: true when the message was deleted (its body is then `""`). */
    readonly deleted?: boolean;
    /**
     * On reads (§19 retention): true, with `deleted`, when the retention sweep erased the
     * message (no entry marks it; reads show it so from then on); absent otherwise.
     */
    readonly expired?: boolean;
    /** On reads (version 1.1): the reaction counts, sorted by first use. */
    readonly reactions?: readonly ReactionCount[];
    /** A `message` that quotes another (version 1.2 §14): the quoted message's id. */
    readonly replyTo?: string;
    /** With `replyTo`: the quoted message as it is now (on reads) or was when this was stored (live). */
    readonly replyPreview?: ReplyPreview;
    /** A `message` in a thread (version 1.2 §14): the thread's root message id. */
    readonly threadId?: string;
    /** On reads, a root with replies: its thread's summary (version 1.2 §14). */
    readonly thread?: ThreadSummary;
    /** A `message` that mentions users (§16): those kept (members when stored), in byte order; absent when none. */
    readonly mentions?: readonly string[];
    /** A `message` that mentions every member (§16, `@channel`); absent when false. */
    readonly mentionAll?: boolean;
    /** A `message` with attachments (§15): each with its signed `url` (and an image's `thumbnailUrl`), in the order sent; absent when none or deleted. */
    readonly attachments?: readonly MessageAttachment[];
}
/** The quoted message of a reply (version 1.2 §14). */
export interface ReplyPreview {
    /** Who wrote the quoted message. */
    readonly senderId: string;
    /** Its current text cut to at most 200 bytes of UTF-8 at a character boundary; `""` once deleted. */
    readonly body: string;
    /** True once the quoted message is deleted (absent otherwise). */
    readonly deleted?: boolean;
}
/** A thread root's summary (version 1.2 §14). */
export interface ThreadSummary {
    /** Replies in the thread that are not deleted. */
    readonly replyCount: number;
    /** ts of the newest reply (ms). */
    readonly lastReplyAt: number;
    /** seq of the newest reply. */
    readonly lastReplySeq: number;
    /** The first 10 distinct senders of replies, in the order they first replied. */
    readonly participants: readonly string[];
}
/**
 * A channel's kind (protocol §13.1): `group`, or `direct` for the one channel between two
 * users (which cannot be joined or left). A kind this client does not know yet is passed
 * through as its string.
 */
export type ChannelKind = 'group' | 'direct' | (string & Record<never, never>);
/**
 * A channel's visibility (protocol §13.1): `private` (only its members see it) or
 * `public` (listed in the directory; anyone may join).
 */
export type ChannelVisibility = 'private' | 'public' | (string & Record<never, never>);
/** One channel entry of `HELLO` (and of `GET /v1/me/channels`). */
export interface HelloChannel {
    /** The channel id. */
    readonly channelId: string;
    /** Highest stored seq. */
    readonly lastSeq: number;
    /** The user's delivered watermark (0 when none). */
    readonly deliveredSeq: number;
    /** The user's read watermark (0 when none). */
    readonly readSeq: number;
    /** Unread `message` entries (version 1.1). */
    readonly unread?: number;
    /** Channel name (version 1.1, backend API). */
    readonly name?: string | null;
    /** Channel metadata (version 1.1, backend API). */
    readonly metadata?: Readonly<Record<string, unknown>> | null;
    /** `group`, or `direct` for the one channel between two users (version 1.2; absent before: `group`). */
    readonly kind?: ChannelKind;
    /** `private` (members only) or `public` (in the directory; version 1.2; absent before: `private`). */
    readonly visibility?: ChannelVisibility;
    /** How many members the channel has (version 1.2). */
    readonly memberCount?: number;
    /** The user's own role in the channel: `member`, `moderator` or `owner` (version 1.2; absent before: `member`). */
    readonly role?: 'member' | 'moderator' | 'owner' | (string & Record<never, never>);
    /** Unread `message` entries that mention the user or all (§16); absent before. */
    readonly unreadMentions?: number;
    /** Who may post (§17): `member` (anyone) or `moderator` (an announcement channel); absent from an older server. */
    readonly postingRole?: 'member' | 'moderator' | (string & Record<never, never>);
    /** Slow mode (§17): ms a member waits between two messages, 0 when off; absent from an older server. */
    readonly slowModeMs?: number;
    /** The channel's own retention (§19), seconds (0: forever); absent when the server's `retention_secs` applies. */
    readonly retentionSecs?: number;
    /** The user's notification setting for the channel (§16): `all`, `mentions` or `none`. */
    readonly notify?: NotifyLevel;
    /** Until when (ms) notifications are snoozed (§16); `null` when not. */
    readonly snoozeUntil?: number | null;
}
/** A notification setting (§16): every message, mentions only, or nothing; a later word is passed through. */
export type NotifyLevel = 'all' | 'mentions' | 'none' | (string & Record<never, never>);
/**
 * `CHANNEL_SETTINGS` (this server's frame, docs/protocol.md §16.3): the user's settings of
 * a channel changed (on any of its sessions); sent to every live session of the user.
 */
export interface ChannelSettingsFrame {
    /** Frame type. */
    readonly type: 'CHANNEL_SETTINGS';
    /** The channel. */
    readonly channelId: string;
    /** The setting now. */
    readonly notify: NotifyLevel;
    /** Until when (ms) snoozed; `null` when not. */
    readonly snoozeUntil: number | null;
}
/**
 * `CHANNEL_UPDATED` (this server's frame, docs/protocol.md §15.3): a channel's shared
 * settings changed (`PATCH /v1/channels/{id}`); sent to every live session of its members.
 */
export interface ChannelUpdatedFrame {
    /** Frame type. */
    readonly type: 'CHANNEL_UPDATED';
    /** The channel. */
    readonly channelId: string;
    /** Its name now; `null` when unset. */
    readonly name: string | null;
    /** Its metadata now; `null` when unset. */
    readonly metadata: Readonly<Record<string, unknown>> | null;
    /** `private` or `public`. */
    readonly visibility: ChannelVisibility;
    /** Who may post: `member` or `moderator`. */
    readonly postingRole: 'member' | 'moderator' | (string & Record<never, never>);
    /** Ms a member waits between two messages; 0 when off. */
    readonly slowModeMs: number;
    /** The channel's own retention (§19), seconds (0: forever); absent when the server's `retention_secs` applies. */
    readonly retentionSecs?: number;
}
/** `HELLO`: the first frame of every session. */
export interface HelloFrame {
    /** Frame type. */
    readonly type: 'HELLO';
    /** The authenticated user. */
    readonly userId: string;
    /** This session's id. */
    readonly sessionId: string;
    /** Server time. */
    readonly serverTs: number;
    /** Every channel the user is a current member of. */
    readonly channels: readonly HelloChannel[];
}
/** `MSG_ACK`: a send (or edit, delete, reaction) is stored. */
export interface AckFrame {
    /** Frame type. */
    readonly type: 'MSG_ACK';
    /** The key of the acknowledged send. */
    readonly clientMsgId: string;
    /** The stored entry's id. */
    readonly messageId: string;
    /** Its channel. */
    readonly channelId: string;
    /** Its seq. */
    readonly seq: number;
    /** Its server time. */
    readonly ts: number;
    /** True when the key was already stored (a retry): still a success. */
    readonly duplicate: boolean;
}
/** `RECEIPT`: a user's delivered or read watermark moved. */
export interface ReceiptFrame {
    /** Frame type. */
    readonly type: 'RECEIPT';
    /** The channel. */
    readonly channelId: string;
    /** Who moved the watermark. */
    readonly userId: string;
    /** Which watermark. */
    readonly kind: 'delivered' | 'read';
    /** The entry at the new watermark. */
    readonly messageId: string;
    /** The new watermark. */
    readonly seq: number;
    /** When it moved. */
    readonly ts: number;
}
/** `SYNC_BATCH`: one page of a channel's log. */
export interface SyncBatchFrame {
    /** Frame type. */
    readonly type: 'SYNC_BATCH';
    /** The channel. */
    readonly channelId: string;
    /** Entries in increasing seq. */
    readonly messages: readonly WireEntry[];
    /** Forward reads: newer entries exist; `beforeSeq`/`latest` reads: older entries exist. */
    readonly hasMore: boolean;
    /**
     * The channel's last seq in the read's snapshot (version 1.1): the messages' states
     * include every entry up to it, and none after it.
     */
    readonly lastSeq?: number;
}
/** `ERROR`: a refusal; the connection stays open. */
export interface ErrorFrame {
    /** Frame type. */
    readonly type: 'ERROR';
    /** One of the spec's codes. */
    readonly code: string;
    /** Human-readable text. */
    readonly message: string;
    /** True when the same frame may be sent again later. */
    readonly retryable: boolean;
    /** The field at fault (`invalid_field`, `body_too_large`). */
    readonly field?: string;
    /** The send this is about. */
    readonly clientMsgId?: string;
    /** The message this is about. */
    readonly messageId?: string;
    /** The channel this is about. */
    readonly channelId?: string;
    /** With `rate_limited`: milliseconds until the next frame may be sent; with `reason: "muted"`, until the mute ends. */
    readonly retryAfterMs?: number;
    /** Which refusal of its code (version 1.2): `muted`, `read_only`, `slow_mode`, `blocked`, … */
    readonly reason?: string;
}
/** `TYPING` from the server (version 1.1). */
export interface TypingFrame {
    /** Frame type. */
    readonly type: 'TYPING';
    /** The channel. */
    readonly channelId: string;
    /** Who is typing. */
    readonly userId: string;
    /** Started or stopped. */
    readonly state: 'start' | 'stop';
    /** With `start`: when the indicator expires unless renewed. */
    readonly expiresAt?: number;
}
/** `PRESENCE` (version 1.1). */
export interface PresenceFrame {
    /** Frame type. */
    readonly type: 'PRESENCE';
    /** The user. */
    readonly userId: string;
    /** Online when at least one session is open. */
    readonly status: 'online' | 'offline';
    /** When the user's last session closed. */
    readonly lastSeenAt?: number;
}
/**
 * Why a channel was removed from the user's channels (`CHANNEL_REMOVED`'s `reason`,
 * version 1.2 §13.3): the user `left` it, was `removed` or `banned` by a moderator, owner
 * or the admin, or the channel was `deleted`. A reason this client does not know yet is
 * passed through as its string.
 */
export type ChannelRemovedReason = 'left' | 'removed' | 'banned' | 'deleted' | (string & Record<never, never>);
/**
 * `CHANNEL_REMOVED`: the user is no longer in the channel (version 1.1: the channel was
 * deleted; version 1.2 adds `reason`). Nothing more of the channel follows.
 */
export interface ChannelRemovedFrame {
    /** Frame type. */
    readonly type: 'CHANNEL_REMOVED';
    /** The channel. */
    readonly channelId: string;
    /** Why (version 1.2); absent from a version 1.1 server, where it means `deleted`. */
    readonly reason?: ChannelRemovedReason;
}
/**
 * `CHANNEL_ADDED` (version 1.2 §13.3): the user was added to a channel (by anyone, by any
 * route, or a new channel it is a member of), before any `MSG_RECV` or `MEMBER` of it.
 */
export interface ChannelAddedFrame {
    /** Frame type. */
    readonly type: 'CHANNEL_ADDED';
    /** The channel, as a `HELLO` channel entry (with the user's role). */
    readonly channel: HelloChannel;
}
/**
 * What a `MEMBER` frame says happened (version 1.2 §13.3). An op this client does not know
 * yet is passed through as its string (and changes no member list).
 */
export type MemberOp = 'join' | 'leave' | 'role' | 'mute' | 'ban' | (string & Record<never, never>);
/**
 * `MEMBER` (version 1.2 §13.3): a channel's membership changed. Sent to the channel's
 * members after the change and to the user concerned. It took effect between the entries
 * `afterSeq` and `afterSeq + 1`; a members page whose `atSeq` is above `afterSeq` already
 * shows it.
 */
export interface MemberFrame {
    /** Frame type. */
    readonly type: 'MEMBER';
    /** The channel. */
    readonly channelId: string;
    /** The member concerned. */
    readonly userId: string;
    /** `join`, `leave`, `role`, `mute`, `ban` (or a later one). */
    readonly op: MemberOp;
    /** With `join` and `role`: the member's role now. */
    readonly role?: 'member' | 'moderator' | 'owner' | (string & Record<never, never>);
    /** With `mute`: until when (ms), `null` when unmuted. */
    readonly mutedUntil?: number | null;
    /** Who made the change (the member itself for its own join or leave); absent when the admin token made it. */
    readonly actorId?: string;
    /** The channel's last seq when the change took effect. */
    readonly afterSeq: number;
    /** When it was stored (ms). */
    readonly ts: number;
}
/** Every server frame this client understands. */
export type ServerFrame = HelloFrame | AckFrame | WireEntry | ReceiptFrame | SyncBatchFrame | ErrorFrame | TypingFrame | PresenceFrame | ChannelRemovedFrame | ChannelAddedFrame | MemberFrame | ChannelSettingsFrame | ChannelUpdatedFrame;
/** Every client frame this client sends. */
export type ClientFrame = {
    readonly type: 'MSG_SEND';
    readonly channelId: string;
    readonly clientMsgId: string;
    readonly body: string;
    readonly replyTo?: string;
    readonly threadId?: string;
    readonly mentions?: readonly string[];
    readonly mentionAll?: boolean;
    /** Uploads of the sender into this channel that no message carries yet (§15), at most `max_attachments_per_message`. */
    readonly attachments?: readonly string[];
} | {
    readonly type: 'MSG_EDIT';
    readonly clientMsgId: string;
    readonly messageId: string;
    readonly body: string;
} | {
    readonly type: 'MSG_DELETE';
    readonly clientMsgId: string;
    readonly messageId: string;
} | {
    readonly type: 'MSG_REACT';
    readonly clientMsgId: string;
    readonly messageId: string;
    readonly emoji: string;
    readonly op: 'add' | 'remove';
} | {
    readonly type: 'MSG_DELIVERED';
    readonly messageId: string;
} | {
    readonly type: 'MSG_READ';
    readonly messageId: string;
} | {
    readonly type: 'SYNC';
    readonly channelId: string;
    readonly afterSeq: number;
    readonly limit?: number;
    readonly beforeSeq?: number;
    readonly latest?: boolean;
    readonly threadId?: string;
} | {
    readonly type: 'TYPING';
    readonly channelId: string;
    readonly state: 'start' | 'stop';
} | {
    readonly type: 'PRESENCE_SUB';
    readonly userIds: readonly string[];
};
//# sourceMappingURL=protocol.d.ts.map