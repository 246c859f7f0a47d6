/**
 * chatd-react: React hooks over the stores of `chatd-client`, built on
 * `useSyncExternalStore`. Put a client in context with {@link ChatProvider}, then
 * {@link useChannelList} (the sidebar), {@link useChannel} (one channel's messages),
 * {@link usePresence} and {@link useTyping}. See docs/react.md ("chat in your React app").
 *
 * @packageDocumentation
 */
export { ChatProvider, useChatClient } from './context.js';
export { useChannel, useChannelList, useConnection, useTyping } from './hooks.js';
export { usePresence } from './presence.js';
export { useStoreSelector } from './select.js';
//# sourceMappingURL=index.js.map