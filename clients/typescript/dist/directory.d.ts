/**
 * Finding, joining and leaving channels over HTTP (protocol §13.2), with the connection's
 * token: the directory of public channels (`GET /v1/directory`), joining one (`PUT
 * /v1/me/channels/{channelId}`) and leaving one (`DELETE /v1/me/channels/{channelId}`).
 * After its own join the client lists the channel before the call resolves (from the
 * server's `CHANNEL_ADDED`, or, when that has not come yet, by reading `GET
 * /v1/me/channels` once); after its own leave it takes the channel from the list at once.
 *
 * @module
 */
import type { ChannelRefresh } from './channel-refresh.js';
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import type { DirectoryOptions, DirectoryPage, MembershipOptions } from './member-types.js';
import type { ClientContext } from './types.js';
/** @internal The directory, joining and leaving. */
export declare class Directory {
    private readonly c;
    private readonly conn;
    private readonly channels;
    private readonly refresher;
    /** Requests with the connection's token; the channel list is brought up to date through `refresher`. */
    constructor(c: ClientContext, conn: Connection, channels: Channels, refresher: ChannelRefresh);
    /** One page of public channels (see `ChatClient.directory`). */
    page(options?: DirectoryOptions): Promise<DirectoryPage>;
    /**
     * Joins a public channel, then reads the channel list (see `ChatClient.join`). When that
     * read fails, the channel is listed from what the join says (a public group, the user a
     * `member`) until the next read.
     */
    join(channelId: string, options?: MembershipOptions): Promise<void>;
    /**
     * Leaves a channel: the channel is removed from the list at once (`channelRemoved`,
     * reason `left`; see `ChatClient.leave`). The server's `CHANNEL_REMOVED` says the same.
     */
    leave(channelId: string, options?: MembershipOptions): Promise<void>;
    /** `PUT` or `DELETE /v1/me/channels/{channelId}`: resolves on the 204. */
    private membership;
}
/**
 * @internal Checks and types the body of `GET /v1/directory`; rejects a body of another
 * shape with `internal`. Channels keep only the fields this client knows.
 */
export declare function parseDirectoryPage(body: unknown): DirectoryPage;
//# sourceMappingURL=directory.d.ts.map