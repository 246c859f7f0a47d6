/**
 * The client a component tree uses: {@link ChatProvider} puts a started (or starting)
 * `ChatClient` in React context, {@link useChatClient} reads it.
 *
 * @module
 */
import { createContext, createElement, useContext } from 'react';
const ChatClientContext = createContext(null);
/** Makes `client` the one every hook of this package uses in `children`. */
export function ChatProvider({ client, children }) {
    return createElement(ChatClientContext.Provider, { value: client }, children);
}
/**
 * The `ChatClient` of the nearest {@link ChatProvider}: for the actions (`send`,
 * `markRead`, `loadOlder`, `join`, …). Throws when there is none above the component.
 */
export function useChatClient() {
    const client = useContext(ChatClientContext);
    if (client === null)
        throw new Error('chatd-react: no <ChatProvider client={…}> above this component');
    return client;
}
//# sourceMappingURL=context.js.map