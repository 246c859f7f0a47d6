import { ChatdError } from './errors.js';
import { request } from './http.js';
/** @internal New group channels and direct channels. */
export class NewChannels {
    c;
    conn;
    refresher;
    /** Requests with the connection's token; the channel list is brought up to date through `refresher`. */
    constructor(c, conn, refresher) {
        this.c = c;
        this.conn = conn;
        this.refresher = refresher;
    }
    /** The direct channel with `userId`, made when there is none (see `ChatClient.direct`). */
    async direct(userId, options = {}) {
        if (this.conn.state === 'closed')
            throw new ChatdError('closed', 'client closed');
        const path = `/v1/me/direct/${encodeURIComponent(userId)}`;
        const answer = await request(this.c.opts, this.conn, 'PUT', path, { signal: options.signal });
        const channel = parseChannelInfo(answer.body, 'PUT /v1/me/direct/{userId}');
        await this.listed(channel, 'member', options.signal);
        return { channel, created: answer.status === 201 };
    }
    /** A group channel with the user as its owner (see `ChatClient.createChannel`). */
    async create(options = {}) {
        if (this.conn.state === 'closed')
            throw new ChatdError('closed', 'client closed');
        const body = {};
        if (options.channelId !== undefined)
            body.channelId = options.channelId;
        if (options.name !== undefined)
            body.name = options.name;
        if (options.visibility !== undefined)
            body.visibility = options.visibility;
        if (options.members !== undefined)
            body.members = [...options.members];
        const answer = await request(this.c.opts, this.conn, 'POST', '/v1/me/channels', { body, signal: options.signal });
        const channel = parseChannelInfo(answer.body, 'POST /v1/me/channels');
        await this.listed(channel, 'owner', options.signal);
        return channel;
    }
    /** Reads the channel list; when that fails, lists `channel` from its object, the user's role `role`. */
    async listed(channel, role, signal) {
        await this.refresher.listAfter(channel.channelId, (ch) => ({
            channelId: channel.channelId,
            lastSeq: Math.max(channel.lastSeq, ch.log.knownLastSeq),
            deliveredSeq: ch.deliveredSeq,
            readSeq: ch.readSeq,
            name: channel.name,
            metadata: channel.metadata,
            kind: channel.kind,
            visibility: channel.visibility,
            memberCount: channel.memberCount,
            role,
        }), signal);
    }
}
/**
 * @internal Checks and types a channel object of the HTTP API (the answer of `what`);
 * rejects one of another shape with `internal`. Fields a server before version 1.2 does
 * not send take the contract's defaults (`group`, `private`, the members counted); fields
 * this client does not know are dropped.
 */
export function parseChannelInfo(body, what) {
    const bad = (why) => new ChatdError('internal', `${what}: ${why}`);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw bad('not a JSON object');
    const b = body;
    const { channelId, members, lastSeq, createdAt } = b;
    const name = b.name ?? null;
    const metadata = b.metadata ?? null;
    const kind = b.kind ?? 'group';
    const visibility = b.visibility ?? 'private';
    if (typeof channelId !== 'string')
        throw bad('no channelId');
    if (!Array.isArray(members) || !members.every((m) => typeof m === 'string'))
        throw bad('no members list');
    if (typeof lastSeq !== 'number' || typeof createdAt !== 'number')
        throw bad('no lastSeq or createdAt');
    if (name !== null && typeof name !== 'string')
        throw bad('a name that is not a string');
    if (metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata)))
        throw bad('metadata that is not an object');
    if (typeof kind !== 'string' || typeof visibility !== 'string')
        throw bad('a kind or visibility that is not a string');
    const memberCount = b.memberCount ?? members.length;
    if (typeof memberCount !== 'number')
        throw bad('a memberCount that is not a number');
    return {
        channelId,
        members,
        lastSeq,
        createdAt,
        name,
        metadata: metadata,
        kind,
        visibility,
        memberCount,
    };
}
//# sourceMappingURL=channel-create.js.map