import { ChatdError } from './errors.js';
import { request } from './http.js';
/**
 * The moderation calls of a {@link ChatClient} (`client.moderation`). Every call rejects
 * with a ChatdError: the route's code (`forbidden` when the user may not, with `reason`
 * when the server gives one; `not_found`; `invalid_field` naming the field), `unavailable`
 * when the server cannot be reached, `aborted`, or `closed` after `ChatClient.close`.
 */
export class Moderation {
    c;
    conn;
    state;
    /** @internal Requests with the connection's token; answers that tell posting rules go to `state`. */
    constructor(c, conn, state) {
        this.c = c;
        this.conn = conn;
        this.state = state;
    }
    /**
     * Mutes `userId` in a channel until `until` (ms since the epoch; `null`, or a time
     * already past, unmutes): `PUT /v1/channels/{channelId}/members/{userId}`
     * `{"mutedUntil"}`. An owner mutes anyone, a moderator `member`s only; not in a direct
     * channel. A user who is not a member is added first (as `addMember`). Until then its
     * sends, edits, reactions and typing in the channel are refused with `reason: "muted"`.
     */
    async mute(channelId, userId, until, options = {}) {
        await this.call('PUT', memberPath(channelId, userId), { mutedUntil: until }, options);
    }
    /** Lifts a mute ({@link Moderation.mute} with `null`); fine when there was none. */
    unmute(channelId, userId, options = {}) {
        return this.mute(channelId, userId, null, options);
    }
    /**
     * Removes `userId` from a channel and bans it (`DELETE
     * /v1/channels/{channelId}/members/{userId}?ban=true`): joining again is refused with
     * `reason: "banned"` until {@link Moderation.liftBan} or a moderator adds it back. A
     * user who is not a member is banned too; banning again changes nothing.
     */
    async ban(channelId, userId, options = {}) {
        await this.call('DELETE', `${memberPath(channelId, userId)}?ban=true`, undefined, options);
    }
    /** Lifts a ban (`DELETE /v1/channels/{channelId}/bans/{userId}`; fine when there was none). */
    async liftBan(channelId, userId, options = {}) {
        await this.call('DELETE', `${channelPath(channelId)}/bans/${encodeURIComponent(userId)}`, undefined, options);
    }
    /**
     * One page of a channel's bans (`GET /v1/channels/{channelId}/bans?after&limit`), in byte
     * order of `userId`; with `hasMore`, ask again with `after` the last one's `userId`. An
     * owner or moderator only (a member gets `forbidden`).
     */
    async bans(channelId, options = {}) {
        const q = new URLSearchParams();
        if (options.after !== undefined)
            q.set('after', options.after);
        if (options.limit !== undefined)
            q.set('limit', String(options.limit));
        const query = q.toString() === '' ? '' : `?${q.toString()}`;
        const body = await this.call('GET', `${channelPath(channelId)}/bans${query}`, undefined, options);
        return parseBansPage(body);
    }
    /**
     * Changes a channel's posting rules (`PATCH /v1/channels/{channelId}` with the fields
     * given): `postingRole` `moderator` makes it an announcement channel, `slowModeMs` (0 to
     * 3600000) slows `member`s down, `retentionSecs` (§19: 0 forever to 3155760000, `null`
     * back to the server's `retention_secs`) sets how long its messages are kept (a bad
     * value: `invalid_field`, `field` `retentionSecs`). An owner only; a direct channel has
     * no posting rules. Resolves
     * to the rules now in force (also shown in the channel's `snapshot.moderation`).
     */
    async setChannelSettings(channelId, settings, options = {}) {
        const body = {};
        if (settings.postingRole !== undefined)
            body.postingRole = settings.postingRole;
        if (settings.slowModeMs !== undefined)
            body.slowModeMs = settings.slowModeMs;
        if (settings.retentionSecs !== undefined)
            body.retentionSecs = settings.retentionSecs;
        const answer = await this.call('PATCH', channelPath(channelId), body, options);
        const rules = parseRules(answer);
        this.state.settings(rules);
        return rules;
    }
    /**
     * Deletes any message of a channel without a frame (`DELETE
     * /v1/channels/{channelId}/messages/{messageId}`): an owner's or moderator's token (or
     * the admin's). The `delete` entry (its `senderId` the moderator) comes to every member,
     * this user too, as a `MSG_RECV`. `not_found` when the message is unknown, not a
     * message, already deleted or of another channel. (`ChatClient.deleteMessage` does the
     * same by `MSG_DELETE`, through the outbox.)
     */
    async deleteAnyMessage(channelId, messageId, options = {}) {
        await this.call('DELETE', `${channelPath(channelId)}/messages/${encodeURIComponent(messageId)}`, undefined, options);
    }
    /**
     * Blocks `userId` (`PUT /v1/me/blocks/{userId}`; fine when blocked already): no direct
     * channel between the two, its sends into an existing one refused, the user shown
     * offline to it. In group channels the server still delivers its messages: an app
     * hides them (see {@link Moderation.blocks}). Blocking oneself is `invalid_field`.
     */
    async block(userId, options = {}) {
        await this.call('PUT', blockPath(userId), undefined, options);
    }
    /** Unblocks `userId` (`DELETE /v1/me/blocks/{userId}`; fine when not blocked). */
    async unblock(userId, options = {}) {
        await this.call('DELETE', blockPath(userId), undefined, options);
    }
    /** The users this user blocks (`GET /v1/me/blocks`), in byte order. */
    async blocks(options = {}) {
        const body = await this.call('GET', '/v1/me/blocks', undefined, options);
        const list = body?.blocks;
        if (!Array.isArray(list) || !list.every((u) => typeof u === 'string')) {
            throw new ChatdError('internal', 'GET /v1/me/blocks: no blocks list');
        }
        return Object.freeze([...list]);
    }
    /**
     * Reports a message (`POST /v1/messages/{messageId}/flags` `{"reason","note"?}`; a member
     * of its channel; `note` at most 1000 bytes). The same user reporting the same message
     * again gets its first flag (`created: false`). `not_found` for an unknown or deleted
     * message.
     */
    async flag(messageId, reason, options = {}) {
        const body = options.note === undefined ? { reason } : { reason, note: options.note };
        const answer = await request(this.c.opts, this.conn, 'POST', `/v1/messages/${encodeURIComponent(messageId)}/flags`, {
            body,
            ...this.signal(options),
        });
        return parseFlag(answer.body, answer.status === 201);
    }
    async call(method, path, body, options) {
        const answer = await request(this.c.opts, this.conn, method, path, { body, ...this.signal(options) });
        return answer.body;
    }
    /** Rejects with `closed` after `ChatClient.close`; the options' signal. */
    signal(options) {
        if (this.conn.state === 'closed')
            throw new ChatdError('closed', 'client closed');
        return options.signal === undefined ? {} : { signal: options.signal };
    }
}
function channelPath(channelId) {
    return `/v1/channels/${encodeURIComponent(channelId)}`;
}
function memberPath(channelId, userId) {
    return `${channelPath(channelId)}/members/${encodeURIComponent(userId)}`;
}
function blockPath(userId) {
    return `/v1/me/blocks/${encodeURIComponent(userId)}`;
}
/** @internal Checks and types a bans page; `internal` for another shape. */
export function parseBansPage(body) {
    const bad = (why) => new ChatdError('internal', `GET /v1/channels/{channelId}/bans: ${why}`);
    const b = (typeof body === 'object' && body !== null ? body : {});
    if (!Array.isArray(b.bans) || typeof b.hasMore !== 'boolean')
        throw bad('not a bans page');
    const bans = b.bans.map((x) => {
        const r = (typeof x === 'object' && x !== null ? x : {});
        if (typeof r.userId !== 'string' || typeof r.bannedAt !== 'number')
            throw bad(`a ban of another shape: ${JSON.stringify(x)}`);
        const ban = { userId: r.userId, bannedAt: r.bannedAt };
        return Object.freeze(typeof r.actorId === 'string' ? { ...ban, actorId: r.actorId } : ban);
    });
    return { bans: Object.freeze(bans), hasMore: b.hasMore };
}
/** @internal The posting rules of a `PATCH /v1/channels/{channelId}` answer (a channel object). */
export function parseRules(body) {
    const r = (typeof body === 'object' && body !== null ? body : {});
    if (typeof r.channelId !== 'string')
        throw new ChatdError('internal', 'PATCH /v1/channels/{channelId}: no channelId');
    const rules = {
        channelId: r.channelId,
        postingRole: typeof r.postingRole === 'string' ? r.postingRole : 'member',
        slowModeMs: typeof r.slowModeMs === 'number' ? r.slowModeMs : 0,
    };
    return typeof r.retentionSecs === 'number' ? { ...rules, retentionSecs: r.retentionSecs } : rules;
}
/** @internal Checks and types a flag; `created` is whether the answer was a 201. */
export function parseFlag(body, created) {
    const r = (typeof body === 'object' && body !== null ? body : {});
    const { flagId, messageId, channelId, reporterId, reason, createdAt, note } = r;
    if (typeof flagId !== 'string' ||
        typeof messageId !== 'string' ||
        typeof channelId !== 'string' ||
        typeof reporterId !== 'string' ||
        typeof reason !== 'string' ||
        typeof createdAt !== 'number') {
        throw new ChatdError('internal', `POST /v1/messages/{messageId}/flags: a flag of another shape: ${JSON.stringify(body)}`);
    }
    const flag = { flagId, messageId, channelId, reporterId, reason, createdAt, created };
    return Object.freeze(typeof note === 'string' ? { ...flag, note } : flag);
}
//# sourceMappingURL=moderation.js.map