/**
 * What the client knows of each channel's posting rules and of the user's standing in it
 * (`ChannelSnapshot.moderation`), folded from what the server tells: the user's own
 * `MEMBER` `mute` frames, its refusals (`muted` with `retryAfterMs`, `read_only`,
 * `slow_mode` with `retryAfterMs`), a members read that shows the user's `mutedUntil`, and
 * the answer of the user's own `setChannelSettings`. A mute or a slow-mode wait that ends
 * by the clock changes the snapshot then (one timer per channel, for the earliest end).
 *
 * @module
 */
import type { ChatdError } from './errors.js';
import type { ChannelModeration, ChannelRules } from './moderation-types.js';
import type { MemberFrame } from './protocol.js';
/** @internal The channels' moderation state; `changed(channelId)` invalidates that channel's snapshot. */
export declare class ModerationState {
    private readonly byId;
    private readonly now;
    private readonly userId;
    private readonly changed;
    private closed;
    /** `now` is the client's clock, `userId` the user's id. */
    constructor(now: () => number, userId: () => string, changed: (channelId: string) => void);
    /** The channel's moderation as the snapshot shows it (the same object until something changes). */
    snapshot(channelId: string): ChannelModeration;
    /** A `MEMBER` frame: the user's own `mute` sets (or, `null`, ends) its mute. */
    onMember(f: MemberFrame): void;
    /**
     * A members read at `atSeq` showed the user (its `mutedUntil`, or none: not muted); a
     * read that does not show the last mute frame folded (its `afterSeq` not below `atSeq`,
     * as for the member lists) is older than it and changes nothing.
     */
    onMemberRead(channelId: string, mutedUntil: number | undefined, atSeq: number): void;
    /** A refusal of one of the user's frames in `channelId`: what its `reason` tells. */
    onRefusal(channelId: string, err: ChatdError): void;
    /**
     * The channel's rules as the server states them (a `HELLO` or `CHANNEL_ADDED` entry, a
     * `CHANNEL_UPDATED` frame, a `GET /v1/me/channels` entry); values of the wrong type (an
     * older server's absent ones) are left as known. `retentionSecs` (§19) is absent when
     * the server's retention applies: a statement that carries rules sets it, absent or not.
     */
    stated(channelId: string, postingRole: unknown, slowModeMs: unknown, retentionSecs?: unknown): void;
    /** The answer of the user's own settings change. */
    settings(rules: ChannelRules): void;
    /** The client closed: no more timers. */
    close(): void;
    private update;
    /** The snapshot is made again; a timer waits for the earliest end still ahead. */
    private refresh;
}
//# sourceMappingURL=moderation-state.d.ts.map