/**
 * {@link ChannelStore}: one channel's store with the channel's actions, which it asks of
 * its client.
 *
 * @module
 */
import type { ChannelSnapshot, MessageSendOptions, SentEntry } from './snapshot-types.js';
import type { ExternalStore } from './store.js';

/** @internal The client's calls a {@link ChannelStore} makes (a `ChatClient` has them). */
export interface ChannelActions {
  /** Sends a message. */
  send(channelId: string, body: string, options?: MessageSendOptions): Promise<SentEntry>;
  /** Loads older entries. */
  loadOlder(channelId: string, signal?: AbortSignal): Promise<boolean>;
  /** Marks the channel read. */
  markRead(channelId: string): void;
  /** The user is typing. */
  typing(channelId: string): void;
  /** The user stopped typing. */
  stopTyping(channelId: string): void;
}

/**
 * One channel's store, for `useSyncExternalStore(store.subscribe, store.getSnapshot)`, with
 * the channel's actions.
 */
export class ChannelStore implements ExternalStore<ChannelSnapshot> {
  /** The channel. */
  readonly channelId: string;
  /** {@inheritDoc ExternalStore.subscribe} */
  readonly subscribe: (listener: () => void) => () => void;
  /** {@inheritDoc ExternalStore.getSnapshot} */
  readonly getSnapshot: () => ChannelSnapshot;
  private readonly client: ChannelActions;

  /** @internal Use {@link ChatClient.channel}. */
  constructor(client: ChannelActions, channelId: string, store: ExternalStore<ChannelSnapshot>) {
    this.client = client;
    this.channelId = channelId;
    this.subscribe = store.subscribe;
    this.getSnapshot = store.getSnapshot;
  }

  /** Sends a message to this channel (a reply or a thread reply with `options`, see {@link ChatClient.send}). */
  send(body: string, options?: MessageSendOptions): Promise<SentEntry> {
    return this.client.send(this.channelId, body, options);
  }
  /** Loads older entries; resolves to whether more exist. */
  loadOlder(signal?: AbortSignal): Promise<boolean> {
    return this.client.loadOlder(this.channelId, signal);
  }
  /** Marks everything held as read. */
  markRead(): void {
    this.client.markRead(this.channelId);
  }
  /** The user is typing. */
  typing(): void {
    this.client.typing(this.channelId);
  }
  /** The user stopped typing. */
  stopTyping(): void {
    this.client.stopTyping(this.channelId);
  }
}
