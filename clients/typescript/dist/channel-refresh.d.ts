/**
 * Reading the user's channels over HTTP (`GET /v1/me/channels`): on demand
 * (`refreshChannels`), and once right after a change of the user's own that put it in a
 * channel (a join, a new group or direct channel) when the server's `CHANNEL_ADDED` has
 * not listed it yet. There is no periodic read: a server of version 1.2 announces every
 * channel the user is added to or removed from while connected (`CHANNEL_ADDED`,
 * `CHANNEL_REMOVED`), and `HELLO` lists them all after a reconnect.
 *
 * @module
 */
import type { ChannelCtx, Channels } from './channels.js';
import type { Connection } from './connection.js';
import type { HelloChannel } from './protocol.js';
import type { Sync } from './sync.js';
import type { ChannelSummary } from './snapshot-types.js';
import type { ClientContext } from './types.js';
/** @internal The channel list, read from the user HTTP routes. */
export declare class ChannelRefresh {
    private readonly c;
    private readonly conn;
    private readonly channels;
    private readonly sync;
    /** Refreshes the channels with the connection's token; opened channels catch up through `sync`. */
    constructor(c: ClientContext, conn: Connection, channels: Channels, sync: Sync);
    /** Reads `GET /v1/me/channels` and brings the channels up to date (see `ChatClient.refreshChannels`). */
    refresh(signal?: AbortSignal): Promise<readonly ChannelSummary[]>;
    /**
     * After a change of the user's own that put it in `channelId` (a join, a new group or
     * direct channel): when the channel is listed already (the server's `CHANNEL_ADDED`
     * came before the change's answer, or the user was in it before), nothing more; else
     * reads the list at once, so that the channel is listed (`channelAdded`) when the
     * caller resolves. When that read fails, a channel not listed yet is listed from
     * `entry(ch)` (what the change's answer says of it) until its `CHANNEL_ADDED`, the next
     * `HELLO` or read; an `aborted` read still rejects (the change was made all the same).
     */
    listAfter(channelId: string, entry: (ch: ChannelCtx) => HelloChannel, signal?: AbortSignal): Promise<void>;
    /**
     * Brings the list up to date with `GET /v1/me/channels`, read after `epoch` was
     * `startEpoch`: a listing or removal seen since (a live frame) is newer than the read
     * and wins over it.
     */
    private apply;
}
//# sourceMappingURL=channel-refresh.d.ts.map