/**
 * The types of moderation (protocol §17, the project's docs/protocol.md §15): bans and
 * their pages, a channel's posting rules, flags, and what a channel's snapshot tells of
 * the user's own standing in it.
 *
 * @module
 */

/** One ban of a channel (`GET /v1/channels/{channelId}/bans`). */
export interface Ban {
  /** The banned user. */
  readonly userId: string;
  /** When it was banned, ms since the Unix epoch. */
  readonly bannedAt: number;
  /** The owner or moderator who banned it; absent when the admin token did. */
  readonly actorId?: string;
}

/** One page of a channel's bans, in byte order of `userId`. */
export interface BansPage {
  /** The bans. */
  readonly bans: readonly Ban[];
  /** True when more bans follow the last one (ask again with `after` set to its `userId`). */
  readonly hasMore: boolean;
}

/** Options of `Moderation.bans`. */
export interface BansOptions {
  /** Only bans of user ids after this one (keyset paging). */
  readonly after?: string;
  /** At most this many (1..500; the server's default is 100). */
  readonly limit?: number;
  /** Stops waiting (the call rejects with `aborted`). */
  readonly signal?: AbortSignal;
}

/** Who may store `message` entries: anyone, or moderators and owners only (an announcement channel). */
export type PostingRole = 'member' | 'moderator' | (string & Record<never, never>);

/** The posting rules `Moderation.setChannelSettings` changes (each one only when given). */
export interface ChannelSettings {
  /** `member` (anyone posts, the default) or `moderator` (an announcement channel). */
  readonly postingRole?: 'member' | 'moderator';
  /** Slow mode: ms a `member` waits between two messages, 0 (off) to 3600000. */
  readonly slowModeMs?: number;
  /**
   * Retention (§19): seconds a message is kept, 0 (forever, whatever the server's
   * `retention_secs`) to 3155760000; `null` clears it (the server's value applies again).
   */
  readonly retentionSecs?: number | null;
}

/** A channel's posting rules as the server answered a `PATCH`. */
export interface ChannelRules {
  /** The channel. */
  readonly channelId: string;
  /** Who may store messages now. */
  readonly postingRole: PostingRole;
  /** Slow mode now, ms (0: off). */
  readonly slowModeMs: number;
  /** The channel's own retention now, seconds (0: forever); undefined when the server's applies (§19). */
  readonly retentionSecs?: number;
}

/** Why a message is reported (`POST /v1/messages/{messageId}/flags`). */
export type FlagReason = 'spam' | 'abuse' | 'other';

/** A flag (report) of a message, as the server keeps it (no text of the message). */
export interface Flag {
  /** Its id (a UUIDv7). */
  readonly flagId: string;
  /** The flagged message. */
  readonly messageId: string;
  /** Its channel. */
  readonly channelId: string;
  /** Who reported it. */
  readonly reporterId: string;
  /** Why. */
  readonly reason: FlagReason | (string & Record<never, never>);
  /** The reporter's note, when it gave one. */
  readonly note?: string;
  /** When, ms since the Unix epoch. */
  readonly createdAt: number;
  /** False when the same reporter had flagged this message before (the first flag is answered). */
  readonly created: boolean;
}

/** Options of the moderation calls: stop waiting with `signal`. */
export interface ModerationOptions {
  /** Stops waiting (the call rejects with `aborted`); the request may have reached the server. */
  readonly signal?: AbortSignal;
}

/**
 * What the client knows of a channel's posting rules and of the user's standing in it
 * (`ChannelSnapshot.moderation`), as far as the server told it: the server sends no frame
 * when an owner changes the rules, so `postingRole` and `slowModeMs` are known from the
 * user's own `setChannelSettings` answer or learned from a refusal (`read_only`,
 * `slow_mode`), and are undefined until then.
 */
export interface ChannelModeration {
  /** `moderator` for an announcement channel (a `read_only` refusal or a settings answer), else as answered; undefined: not known. */
  readonly postingRole: PostingRole | undefined;
  /** Slow mode in ms as answered by a settings change; undefined: not known. */
  readonly slowModeMs: number | undefined;
  /**
   * The channel's own retention (§19), seconds (0: kept forever), as the server states it
   * (`HELLO`, `CHANNEL_ADDED`, `CHANNEL_UPDATED`, `GET /v1/me/channels`, a settings
   * answer); undefined when the server's `retention_secs` applies (or not known).
   */
  readonly retentionSecs: number | undefined;
  /**
   * Until when (ms since the epoch) the user is muted here: from its own `MEMBER` `mute`
   * frames, a `muted` refusal's `retryAfterMs` or a members read; undefined when not muted
   * (or the mute has ended by the client's clock).
   */
  readonly mutedUntil: number | undefined;
  /** Slow mode: when (ms since the epoch) the user's next message is allowed, from a `slow_mode` refusal; undefined once past. */
  readonly nextSendAt: number | undefined;
}
