import { ChatdError } from './errors.js';
import { requestJson } from './http.js';
import { MessageStates } from './message-states.js';
/** The most bytes of UTF-8 a search's `q` may hold (protocol §18). */
export const SEARCH_Q_MAX_BYTES = 256;
/** @internal The search route of one client. */
export class Search {
    c;
    conn;
    constructor(c, conn) {
        this.c = c;
        this.conn = conn;
    }
    /**
     * One page (`ChatClient.search`): the messages of the user's current channels (or of
     * `channelId` alone) whose current text holds every white-space separated term of `q`
     * as a case-insensitive substring, in any script, newest first, each a render-ready
     * {@link Message} with its `channelId`. A deleted message, or the text an edit replaced,
     * is never found; a channel the user left is not searched.
     *
     * Rejects with a ChatdError: `invalid_field` (its `field` says which) for an empty `q` or
     * one over 256 bytes of UTF-8 (before any request), a `q` of white space only or with a
     * control character, a `limit` not in 1..100, a `before` that is no cursor of this
     * server, a bad `channelId`; `forbidden` for a `channelId` the user is not a member of
     * (or that does not exist: the same answer); `not_found` from a server without search;
     * `unavailable`, `aborted`, `closed`.
     *
     * @example
     * ```ts
     * const { results, next } = await client.search('ärger', { limit: 20 });
     * for (const m of results) console.log(m.channelId, m.senderId, m.body);
     * if (next !== undefined) await client.search('ärger', { limit: 20, before: next });
     * ```
     */
    async page(q, options = {}) {
        if (this.conn.state === 'closed')
            throw new ChatdError('closed', 'client closed');
        checkQuery(q);
        const params = new URLSearchParams({ q });
        if (options.channelId !== undefined)
            params.set('channelId', options.channelId);
        if (options.before !== undefined)
            params.set('before', options.before);
        if (options.limit !== undefined)
            params.set('limit', String(options.limit));
        const body = await requestJson(this.c.opts, this.conn, 'GET', `/v1/me/search?${params.toString()}`, options.signal);
        return parseSearchPage(body, this.c.userId);
    }
    /**
     * Every page (`ChatClient.searchPages`) from the newest (or from `options.before`), each
     * read when the loop asks for it, following `next` until the last page (a page may be
     * empty and not the last). `break` out of the loop to read no more. Throws as
     * {@link Search.page} rejects.
     *
     * @example
     * ```ts
     * for await (const page of client.searchPages('build-42')) {
     *   show(page.results);
     *   if (enough()) break;
     * }
     * ```
     */
    async *pages(q, options = {}) {
        let opts = options;
        for (;;) {
            const page = await this.page(q, opts);
            yield page;
            if (page.next === undefined)
                return;
            opts = { ...options, before: page.next };
        }
    }
}
/**
 * @internal Rejects, before any request, what the server refuses for certain: an empty
 * `q` and one over {@link SEARCH_Q_MAX_BYTES} bytes of UTF-8 (`invalid_field`, field `q`).
 * A `q` of white space only, or with a control character, is the server's to refuse (the
 * same error).
 */
export function checkQuery(q) {
    if (q === '')
        throw new ChatdError('invalid_field', 'q: must hold at least one term', { field: 'q' });
    const bytes = new TextEncoder().encode(q).length;
    if (bytes > SEARCH_Q_MAX_BYTES) {
        throw new ChatdError('invalid_field', `q: ${bytes} bytes, at most ${SEARCH_Q_MAX_BYTES}`, { field: 'q' });
    }
}
/**
 * @internal Checks and types the body of `GET /v1/me/search` for user `me` (reactions'
 * `me`, `mentionsMe`); rejects a body of another shape with `internal`.
 */
export function parseSearchPage(body, me) {
    const bad = (what) => new ChatdError('internal', `GET /v1/me/search: ${what}`);
    if (typeof body !== 'object' || body === null)
        throw bad('not a JSON object');
    const b = body;
    if (!Array.isArray(b.results))
        throw bad('no results list');
    if (b.next !== undefined && b.next !== null && typeof b.next !== 'string')
        throw bad('a next that is no string');
    const results = b.results.map((x) => {
        if (!isMessageEntry(x))
            throw bad(`a result of another shape: ${JSON.stringify(x)}`);
        // the folding a channel's log does, for one entry read now: its state as of its own read
        const states = new MessageStates(me, false);
        states.addMessage(x, x.seq, false, true);
        const m = states.message(x.messageId);
        if (m === undefined)
            throw bad('a result not folded');
        return m;
    });
    return typeof b.next === 'string' ? { results, next: b.next } : { results };
}
/** Whether `x` has the fields of a `message` entry as reads return it. */
function isMessageEntry(x) {
    if (typeof x !== 'object' || x === null)
        return false;
    const r = x;
    return (typeof r.messageId === 'string' &&
        typeof r.channelId === 'string' &&
        typeof r.senderId === 'string' &&
        typeof r.seq === 'number' &&
        typeof r.ts === 'number' &&
        typeof r.body === 'string' &&
        // absent on an entry made through an HTTP route (version 1.2 common rules)
        (r.clientMsgId === undefined || typeof r.clientMsgId === 'string') &&
        (r.kind === undefined || r.kind === 'message') &&
        (r.reactions === undefined || Array.isArray(r.reactions)));
}
//# sourceMappingURL=search.js.map