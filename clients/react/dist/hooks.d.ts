import type { ChannelSnapshot, ChannelSummary, ConnectionSnapshot } from 'chatd-client';
/** The connection's snapshot: `state` (`idle`, `connecting`, `open`, `reconnecting`, `closed`), `userId`, `sessionId`. */
export declare function useConnection(): ConnectionSnapshot;
/**
 * The user's channels, sorted by id, each with its `unread` and `unreadMentions` counts,
 * name, kind and the user's role (`ChannelSummary`), without opening any of them: a
 * sidebar. Follows `HELLO`, the channels the user is added to or removed from
 * (`CHANNEL_ADDED`, `CHANNEL_REMOVED`) and live messages. The same array until a summary
 * changed.
 */
export declare function useChannelList(): readonly ChannelSummary[];
/**
 * One channel's snapshot (`ChannelSnapshot`): `status` (`loading`, `ready`, `removed`),
 * `messages` in seq order with edits, deletes and reactions folded in, the user's
 * `outgoing` messages (`pending`, `sent`, `failed`), `hasOlder`, `unread`, `receipts`,
 * `typing`. Opens the channel (its newest page) when first used for it; the channel stays
 * open in the client after the component unmounts (its messages are kept, so coming back
 * shows them at once). Send with `useChatClient().send(channelId, text)`; page back with
 * `loadOlder(channelId)`, mark read with `markRead(channelId)`.
 */
export declare function useChannel(channelId: string): ChannelSnapshot;
/** What {@link useTyping} gives. */
export interface TypingState {
    /** The users typing in the channel now, never the user; the same array until it changes. */
    readonly users: readonly string[];
    /**
     * Call on every keystroke of the composer: sends `TYPING start` at most once per
     * `typingThrottleMs` (2 s by default). Sending a message stops it by itself.
     */
    readonly typing: () => void;
    /** Call when the composer was cleared without sending: sends `TYPING stop` if a `start` is live. */
    readonly stopTyping: () => void;
}
/**
 * Who is typing in `channelId`, and the user's own typing calls. Renders again only when
 * the list of typing users changed (not on every message of the channel). Opens the
 * channel like {@link useChannel}.
 */
export declare function useTyping(channelId: string): TypingState;
//# sourceMappingURL=hooks.d.ts.map