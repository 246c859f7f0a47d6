/**
 * chatd-react: React hooks over the stores of `chatd-client`, built on
 * `useSyncExternalStore`. Put a client in context with {@link ChatProvider}, then
 * {@link useChannelList} (the sidebar), {@link useChannel} (one channel's messages),
 * {@link usePresence} and {@link useTyping}. See docs/react.md ("chat in your React app").
 *
 * @packageDocumentation
 */
export { ChatProvider, useChatClient, type ChatProviderProps } from './context.js';
export { useChannel, useChannelList, useConnection, useTyping, type TypingState } from './hooks.js';
export { usePresence, type PresenceOf } from './presence.js';
export { useStoreSelector } from './select.js';
//# sourceMappingURL=index.d.ts.map