/**
 * The client a component tree uses: {@link ChatProvider} puts a started (or starting)
 * `ChatClient` in React context, {@link useChatClient} reads it.
 *
 * @module
 */
import { type ReactElement, type ReactNode } from 'react';
import type { ChatClient } from 'chatd-client';
/** Props of {@link ChatProvider}. */
export interface ChatProviderProps {
    /**
     * The client the hooks below read. The app makes it and calls `start()` (and `close()`
     * when done): the provider neither starts nor closes it, so a client can outlive the
     * tree (e.g. across a route change) and one tree can be given another client.
     */
    readonly client: ChatClient;
    /** The tree that uses the client. */
    readonly children?: ReactNode;
}
/** Makes `client` the one every hook of this package uses in `children`. */
export declare function ChatProvider({ client, children }: ChatProviderProps): ReactElement;
/**
 * The `ChatClient` of the nearest {@link ChatProvider}: for the actions (`send`,
 * `markRead`, `loadOlder`, `join`, …). Throws when there is none above the component.
 */
export declare function useChatClient(): ChatClient;
//# sourceMappingURL=context.d.ts.map