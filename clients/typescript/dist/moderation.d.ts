/**
 * Moderation over HTTP (protocol §17, the project's docs/protocol.md §15), with the
 * connection's token: an owner's or moderator's mutes, bans (and the bans list), posting
 * rules (announcement channels, slow mode) and deletes of anyone's message; any user's
 * blocks and reports (flags). The server judges who may: a call the user's role does not
 * allow rejects with `forbidden`. Each change the server announces (`MEMBER` `mute` and
 * `ban`, the `delete` entry) reaches the channel's snapshot and member lists by its frame.
 *
 * @module
 */
import type { Connection } from './connection.js';
import type { ModerationState } from './moderation-state.js';
import type { BansOptions, BansPage, ChannelRules, ChannelSettings, Flag, FlagReason, ModerationOptions } from './moderation-types.js';
import type { ClientContext } from './types.js';
/**
 * The moderation calls of a {@link ChatClient} (`client.moderation`). Every call rejects
 * with a ChatdError: the route's code (`forbidden` when the user may not, with `reason`
 * when the server gives one; `not_found`; `invalid_field` naming the field), `unavailable`
 * when the server cannot be reached, `aborted`, or `closed` after `ChatClient.close`.
 */
export declare class Moderation {
    private readonly c;
    private readonly conn;
    private readonly state;
    /** @internal Requests with the connection's token; answers that tell posting rules go to `state`. */
    constructor(c: ClientContext, conn: Connection, state: ModerationState);
    /**
     * Mutes `userId` in a channel until `until` (ms since the epoch; `null`, or a time
     * already past, unmutes): `PUT /v1/channels/{channelId}/members/{userId}`
     * `{"mutedUntil"}`. An owner mutes anyone, a moderator `member`s only; not in a direct
     * channel. A user who is not a member is added first (as `addMember`). Until then its
     * sends, edits, reactions and typing in the channel are refused with `reason: "muted"`.
     */
    mute(channelId: string, userId: string, until: number | null, options?: ModerationOptions): Promise<void>;
    /** Lifts a mute ({@link Moderation.mute} with `null`); fine when there was none. */
    unmute(channelId: string, userId: string, options?: ModerationOptions): Promise<void>;
    /**
     * Removes `userId` from a channel and bans it (`DELETE
     * /v1/channels/{channelId}/members/{userId}?ban=true`): joining again is refused with
     * `reason: "banned"` until {@link Moderation.liftBan} or a moderator adds it back. A
     * user who is not a member is banned too; banning again changes nothing.
     */
    ban(channelId: string, userId: string, options?: ModerationOptions): Promise<void>;
    /** Lifts a ban (`DELETE /v1/channels/{channelId}/bans/{userId}`; fine when there was none). */
    liftBan(channelId: string, userId: string, options?: ModerationOptions): Promise<void>;
    /**
     * One page of a channel's bans (`GET /v1/channels/{channelId}/bans?after&limit`), in byte
     * order of `userId`; with `hasMore`, ask again with `after` the last one's `userId`. An
     * owner or moderator only (a member gets `forbidden`).
     */
    bans(channelId: string, options?: BansOptions): Promise<BansPage>;
    /**
     * Changes a channel's posting rules (`PATCH /v1/channels/{channelId}` with the fields
     * given): `postingRole` `moderator` makes it an announcement channel, `slowModeMs` (0 to
     * 3600000) slows `member`s down, `retentionSecs` (§19: 0 forever to 3155760000, `null`
     * back to the server's `retention_secs`) sets how long its messages are kept (a bad
     * value: `invalid_field`, `field` `retentionSecs`). An owner only; a direct channel has
     * no posting rules. Resolves
     * to the rules now in force (also shown in the channel's `snapshot.moderation`).
     */
    setChannelSettings(channelId: string, settings: ChannelSettings, options?: ModerationOptions): Promise<ChannelRules>;
    /**
     * Deletes any message of a channel without a frame (`DELETE
     * /v1/channels/{channelId}/messages/{messageId}`): an owner's or moderator's token (or
     * the admin's). The `delete` entry (its `senderId` the moderator) comes to every member,
     * this user too, as a `MSG_RECV`. `not_found` when the message is unknown, not a
     * message, already deleted or of another channel. (`ChatClient.deleteMessage` does the
     * same by `MSG_DELETE`, through the outbox.)
     */
    deleteAnyMessage(channelId: string, messageId: string, options?: ModerationOptions): Promise<void>;
    /**
     * Blocks `userId` (`PUT /v1/me/blocks/{userId}`; fine when blocked already): no direct
     * channel between the two, its sends into an existing one refused, the user shown
     * offline to it. In group channels the server still delivers its messages: an app
     * hides them (see {@link Moderation.blocks}). Blocking oneself is `invalid_field`.
     */
    block(userId: string, options?: ModerationOptions): Promise<void>;
    /** Unblocks `userId` (`DELETE /v1/me/blocks/{userId}`; fine when not blocked). */
    unblock(userId: string, options?: ModerationOptions): Promise<void>;
    /** The users this user blocks (`GET /v1/me/blocks`), in byte order. */
    blocks(options?: ModerationOptions): Promise<readonly string[]>;
    /**
     * Reports a message (`POST /v1/messages/{messageId}/flags` `{"reason","note"?}`; a member
     * of its channel; `note` at most 1000 bytes). The same user reporting the same message
     * again gets its first flag (`created: false`). `not_found` for an unknown or deleted
     * message.
     */
    flag(messageId: string, reason: FlagReason, options?: ModerationOptions & {
        readonly note?: string;
    }): Promise<Flag>;
    private call;
    /** Rejects with `closed` after `ChatClient.close`; the options' signal. */
    private signal;
}
/** @internal Checks and types a bans page; `internal` for another shape. */
export declare function parseBansPage(body: unknown): BansPage;
/** @internal The posting rules of a `PATCH /v1/channels/{channelId}` answer (a channel object). */
export declare function parseRules(body: unknown): ChannelRules;
/** @internal Checks and types a flag; `created` is whether the answer was a 201. */
export declare function parseFlag(body: unknown, created: boolean): Flag;
//# sourceMappingURL=moderation.d.ts.map