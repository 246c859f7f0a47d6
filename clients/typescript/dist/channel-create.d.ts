/**
 * Making channels over HTTP (protocol §13.2), with the connection's token: a group channel
 * with the user as its `owner` (`POST /v1/me/channels`), and the one direct channel of the
 * user and another user (`PUT /v1/me/direct/{userId}`). The client reads its channel list
 * right after either (`GET /v1/me/channels`), so that the channel is listed when the call
 * resolves, without waiting for a frame or the periodic read.
 *
 * @module
 */
import type { ChannelRefresh } from './channel-refresh.js';
import type { Connection } from './connection.js';
import type { ChannelInfo, CreateChannelOptions, DirectResult, MembershipOptions } from './member-types.js';
import type { ClientContext } from './types.js';
/** @internal New group channels and direct channels. */
export declare class NewChannels {
    private readonly c;
    private readonly conn;
    private readonly refresher;
    /** Requests with the connection's token; the channel list is brought up to date through `refresher`. */
    constructor(c: ClientContext, conn: Connection, refresher: ChannelRefresh);
    /** The direct channel with `userId`, made when there is none (see `ChatClient.direct`). */
    direct(userId: string, options?: MembershipOptions): Promise<DirectResult>;
    /** A group channel with the user as its owner (see `ChatClient.createChannel`). */
    create(options?: CreateChannelOptions): Promise<ChannelInfo>;
    /** Reads the channel list; when that fails, lists `channel` from its object, the user's role `role`. */
    private listed;
}
/**
 * @internal Checks and types a channel object of the HTTP API (the answer of `what`);
 * rejects one of another shape with `internal`. Fields a server before version 1.2 does
 * not send take the contract's defaults (`group`, `private`, the members counted); fields
 * this client does not know are dropped.
 */
export declare function parseChannelInfo(body: unknown, what: string): ChannelInfo;
//# sourceMappingURL=channel-create.d.ts.map