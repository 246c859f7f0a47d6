import { ChatdError } from './errors.js';
import { getJson, request } from './http.js';
/** The largest page the route gives (and {@link Members.all}'s default page size). */
const MAX_PAGE = 500;
/** @internal A channel's members, read and changed through the user HTTP routes. */
export class Members {
    c;
    conn;
    channels;
    /** Requests with the connection's token. */
    constructor(c, conn, channels) {
        this.c = c;
        this.conn = conn;
        this.channels = channels;
    }
    /**
     * `PUT /v1/channels/{channelId}/members/{userId}`, with `{"role"}` when `role` is given
     * (see `ChatClient.addMember` and `setMemberRole`).
     */
    async put(channelId, userId, role, options = {}) {
        this.notClosed();
        const body = role === undefined ? undefined : { role };
        await request(this.c.opts, this.conn, 'PUT', memberPath(channelId, userId), { body, signal: options.signal });
    }
    /**
     * `DELETE /v1/channels/{channelId}/members/{userId}` (see `ChatClient.removeMember`); the
     * user's own removal takes the channel from the list at once (reason `removed`), as a
     * leave does.
     */
    async remove(channelId, userId, options = {}) {
        this.notClosed();
        await request(this.c.opts, this.conn, 'DELETE', memberPath(channelId, userId), { signal: options.signal });
        if (this.conn.state === 'closed')
            return;
        if (userId === this.c.userId) {
            const ch = this.channels.get(channelId);
            if (ch !== undefined)
                this.channels.markRemoved(ch, 'removed');
        }
    }
    /** Rejects with `closed` after `ChatClient.close`. */
    notClosed() {
        if (this.conn.state === 'closed')
            throw new ChatdError('closed', 'client closed');
    }
    /** One page (see `ChatClient.members`). */
    async page(channelId, options = {}) {
        if (this.conn.state === 'closed')
            throw new ChatdError('closed', 'client closed');
        const q = new URLSearchParams();
        if (options.after !== undefined)
            q.set('after', options.after);
        if (options.limit !== undefined)
            q.set('limit', String(options.limit));
        const query = q.toString() === '' ? '' : `?${q.toString()}`;
        const path = `/v1/channels/${encodeURIComponent(channelId)}/members`;
        const body = await getJson(this.c.opts, this.conn, path + query, options.signal);
        const page = parseMembersPage(body);
        const me = page.members.find((m) => m.userId === this.c.userId);
        if (me !== undefined)
            this.channels.moderation.onMemberRead(channelId, me.mutedUntil, page.atSeq);
        return page;
    }
    /** Every member, page after page (see `ChatClient.allMembers`). */
    async all(channelId, options = {}) {
        const limit = options.pageSize ?? MAX_PAGE;
        const members = [];
        let atSeq = Number.POSITIVE_INFINITY;
        let after;
        for (;;) {
            const opts = { limit };
            if (after !== undefined)
                opts.after = after;
            if (options.signal !== undefined)
                opts.signal = options.signal;
            const page = await this.page(channelId, opts);
            members.push(...page.members);
            atSeq = Math.min(atSeq, page.atSeq);
            const last = page.members[page.members.length - 1];
            if (!page.hasMore)
                break;
            // a page that does not move on would be asked for forever (user ids are ASCII: JS order is byte order)
            if (last === undefined || (after !== undefined && !(last.userId > after))) {
                throw new ChatdError('internal', 'GET /v1/channels/{channelId}/members: hasMore without a later member');
            }
            after = last.userId;
        }
        return { members, atSeq: Number.isFinite(atSeq) ? atSeq : 0 };
    }
}
/** The route of one member of a channel. */
function memberPath(channelId, userId) {
    return `/v1/channels/${encodeURIComponent(channelId)}/members/${encodeURIComponent(userId)}`;
}
/**
 * @internal Checks and types the body of `GET /v1/channels/{channelId}/members`; rejects a
 * body of another shape with `internal`. Members keep only the fields this client knows
 * (`mutedUntil` when the server shows one).
 */
export function parseMembersPage(body) {
    const bad = (what) => new ChatdError('internal', `GET /v1/channels/{channelId}/members: ${what}`);
    if (typeof body !== 'object' || body === null)
        throw bad('not a JSON object');
    const b = body;
    if (!Array.isArray(b.members))
        throw bad('no members list');
    if (typeof b.hasMore !== 'boolean')
        throw bad('no hasMore');
    if (typeof b.atSeq !== 'number')
        throw bad('no atSeq');
    const members = b.members.map((m) => {
        const r = (typeof m === 'object' && m !== null ? m : {});
        const { userId, role, joinedAt, deliveredSeq, readSeq, mutedUntil } = r;
        if (typeof userId !== 'string' ||
            typeof role !== 'string' ||
            typeof joinedAt !== 'number' ||
            typeof deliveredSeq !== 'number' ||
            typeof readSeq !== 'number') {
            throw bad(`a member of another shape: ${JSON.stringify(m)}`);
        }
        const member = { userId, role, joinedAt, deliveredSeq, readSeq };
        return typeof mutedUntil === 'number' ? { ...member, mutedUntil } : member;
    });
    return { members, hasMore: b.hasMore, atSeq: b.atSeq };
}
//# sourceMappingURL=members.js.map