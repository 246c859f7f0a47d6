/**
 * A channel's members over HTTP (protocol §13.1), with the connection's token: reading
 * them (`GET /v1/channels/{channelId}/members`), one page at a time or all of them, each
 * with its role and watermarks, so that an app that opens a channel can show who is in it
 * and who read how far without waiting for live `RECEIPT`s; and, for a channel's owners
 * and moderators, adding and removing members and setting their roles (`PUT` and `DELETE
 * /v1/channels/{channelId}/members/{userId}`). The server's `MEMBER` frames bring the
 * change to the channel list (member count, the user's own role) and the member lists.
 *
 * @module
 */
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import type { AllMembersOptions, MemberList, MemberRole, MembersOptions, MembersPage, MembershipOptions } from './member-types.js';
import type { ClientContext } from './types.js';
/** @internal A channel's members, read and changed through the user HTTP routes. */
export declare class Members {
    private readonly c;
    private readonly conn;
    private readonly channels;
    /** Requests with the connection's token. */
    constructor(c: ClientContext, conn: Connection, channels: Channels);
    /**
     * `PUT /v1/channels/{channelId}/members/{userId}`, with `{"role"}` when `role` is given
     * (see `ChatClient.addMember` and `setMemberRole`).
     */
    put(channelId: string, userId: string, role: MemberRole | undefined, options?: MembershipOptions): Promise<void>;
    /**
     * `DELETE /v1/channels/{channelId}/members/{userId}` (see `ChatClient.removeMember`); the
     * user's own removal takes the channel from the list at once (reason `removed`), as a
     * leave does.
     */
    remove(channelId: string, userId: string, options?: MembershipOptions): Promise<void>;
    /** Rejects with `closed` after `ChatClient.close`. */
    private notClosed;
    /** One page (see `ChatClient.members`). */
    page(channelId: string, options?: MembersOptions): Promise<MembersPage>;
    /** Every member, page after page (see `ChatClient.allMembers`). */
    all(channelId: string, options?: AllMembersOptions): Promise<MemberList>;
}
/**
 * @internal Checks and types the body of `GET /v1/channels/{channelId}/members`; rejects a
 * body of another shape with `internal`. Members keep only the fields this client knows
 * (`mutedUntil` when the server shows one).
 */
export declare function parseMembersPage(body: unknown): MembersPage;
//# sourceMappingURL=members.d.ts.map