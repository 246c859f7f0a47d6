/**
 * The hooks over the client's stores: the connection, the channel list, one channel, and
 * who is typing in a channel. Each is `useSyncExternalStore` over a store of
 * `chatd-client` (see its README): a component renders again when the store's snapshot
 * changed, and with the same objects until then (fit for `memo` and effect dependencies).
 *
 * @module
 */
import { useCallback, useMemo, useSyncExternalStore } from 'react';
import type { ChannelSnapshot, ChannelStore, ChannelSummary, ConnectionSnapshot } from 'chatd-client';
import { useChatClient } from './context.js';
import { sameElements, useStoreSelector } from './select.js';

/** The connection's snapshot: `state` (`idle`, `connecting`, `open`, `reconnecting`, `closed`), `userId`, `sessionId`. */
export function useConnection(): ConnectionSnapshot {
  const { connection } = useChatClient();
  return useSyncExternalStore(connection.subscribe, connection.getSnapshot, connection.getSnapshot);
}

/**
 * The user's channels, sorted by id, each with its `unread` and `unreadMentions` counts,
 * name, kind and the user's role (`ChannelSummary`), without opening any of them: a
 * sidebar. Follows `HELLO`, the channels the user is added to or removed from
 * (`CHANNEL_ADDED`, `CHANNEL_REMOVED`) and live messages. The same array until a summary
 * changed.
 */
export function useChannelList(): readonly ChannelSummary[] {
  const { channelList } = useChatClient();
  return useSyncExternalStore(channelList.subscribe, channelList.getSnapshot, channelList.getSnapshot);
}

/** The store of `channelId` (`client.channel`), the same object while the client and id stay. */
function useChannelStore(channelId: string): ChannelStore {
  const client = useChatClient();
  return useMemo(() => client.channel(channelId), [client, channelId]);
}

/**
 * One channel's snapshot (`ChannelSnapshot`): `status` (`loading`, `ready`, `removed`),
 * `messages` in seq order with edits, deletes and reactions folded in, the user's
 * `outgoing` messages (`pending`, `sent`, `failed`), `hasOlder`, `unread`, `receipts`,
 * `typing`. Opens the channel (its newest page) when first used for it; the channel stays
 * open in the client after the component unmounts (its messages are kept, so coming back
 * shows them at once). Send with `useChatClient().send(channelId, text)`; page back with
 * `loadOlder(channelId)`, mark read with `markRead(channelId)`.
 */
export function useChannel(channelId: string): ChannelSnapshot {
  const store = useChannelStore(channelId);
  return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
}

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

const selectTyping = (s: ChannelSnapshot): readonly string[] => s.typing;

/**
 * Who is typing in `channelId`, and the user's own typing calls. Renders again only when
 * the list of typing users changed (not on every message of the channel). Opens the
 * channel like {@link useChannel}.
 */
export function useTyping(channelId: string): TypingState {
  const client = useChatClient();
  const store = useChannelStore(channelId);
  const users = useStoreSelector(store, selectTyping, sameElements);
  const typing = useCallback(() => {
    client.typing(channelId);
  }, [client, channelId]);
  const stopTyping = useCallback(() => {
    client.stopTyping(channelId);
  }, [client, channelId]);
  return useMemo(() => ({ users, typing, stopTyping }), [users, typing, stopTyping]);
}
