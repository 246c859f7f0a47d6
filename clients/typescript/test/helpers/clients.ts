import WebSocket from 'ws';
import { ChatClient, type ChatClientOptions, type WebSocketConstructor, type ChannelStore } from '../../src/index.js';
import type { ChatdServer } from './server.js';
import { waitFor } from './server.js';

// `ws` fits the client's WebSocket type as it is (no cast): the README's Node usage.
export const NodeWebSocket: WebSocketConstructor = WebSocket;

export async function makeClient(
  server: ChatdServer,
  userId: string,
  extra: Partial<ChatClientOptions> = {},
  url?: string,
): Promise<ChatClient> {
  const token = await server.token(userId);
  const c = new ChatClient({
    url: url ?? server.wsUrl,
    token,
    WebSocket: NodeWebSocket,
    reconnectBackoff: { baseMs: 100, maxMs: 1000 },
    retryBackoff: { baseMs: 100, maxMs: 1000 },
    ...extra,
  });
  await c.start();
  return c;
}

/** Bodies of the messages shown (log + outgoing), as a page would render them. */
export function shown(store: ChannelStore): string[] {
  const s = store.getSnapshot();
  return [...s.messages.map((m) => m.body), ...s.outgoing.map((o) => o.body)];
}

export async function waitForBodies(store: ChannelStore, expected: string[], timeoutMs = 30_000): Promise<void> {
  let paging = false;
  await waitFor(
    () => {
      const s = store.getSnapshot();
      if (s.hasOlder && !paging) {
        // like a user scrolling up until the start of the channel
        paging = true;
        store.loadOlder().then(
          () => (paging = false),
          () => (paging = false),
        );
      }
      return s.outgoing.length === 0 && s.messages.length === expected.length && !s.hasOlder;
    },
    () => `expected ${expected.length} messages, have ${store.getSnapshot().messages.length} + ${store.getSnapshot().outgoing.length} outgoing`,
    timeoutMs,
  );
}

/** Counts settled promises, for "wait until some of the burst is ACKed". */
export function counter<T>(ps: Promise<T>[], at?: number, onAt?: () => void): { readonly done: number } {
  const c = { done: 0 };
  const tick = (): void => {
    c.done++;
    if (c.done === at) onAt?.();
  };
  for (const p of ps) p.then(tick, tick);
  return c;
}
