/**
 * One channel's store, for `useSyncExternalStore(store.subscribe, store.getSnapshot)`, with
 * the channel's actions.
 */
export class ChannelStore {
    /** The channel. */
    channelId;
    /** {@inheritDoc ExternalStore.subscribe} */
    subscribe;
    /** {@inheritDoc ExternalStore.getSnapshot} */
    getSnapshot;
    client;
    /** @internal Use {@link ChatClient.channel}. */
    constructor(client, channelId, store) {
        this.client = client;
        this.channelId = channelId;
        this.subscribe = store.subscribe;
        this.getSnapshot = store.getSnapshot;
    }
    /** Sends a message to this channel (a reply or a thread reply with `options`, see {@link ChatClient.send}). */
    send(body, options) {
        return this.client.send(this.channelId, body, options);
    }
    /** Loads older entries; resolves to whether more exist. */
    loadOlder(signal) {
        return this.client.loadOlder(this.channelId, signal);
    }
    /** Marks everything held as read. */
    markRead() {
        this.client.markRead(this.channelId);
    }
    /** The user is typing. */
    typing() {
        this.client.typing(this.channelId);
    }
    /** The user stopped typing. */
    stopTyping() {
        this.client.stopTyping(this.channelId);
    }
}
//# sourceMappingURL=channel-store.js.map