import { ChatdError } from './errors.js';
/** @internal GETs `path` (with its query): {@link requestJson} with `GET`. */
export function getJson(opts, conn, path, signal) {
    return requestJson(opts, conn, 'GET', path, signal);
}
/** @internal {@link request} without a body, resolving to the answer's body only. */
export async function requestJson(opts, conn, method, path, signal) {
    return (await request(opts, conn, method, path, { signal })).body;
}
/**
 * @internal Sends `method` to `path` (with its query) of the user HTTP routes, with `body`
 * as JSON when given, and the user's token in `Authorization: Bearer`: the token of the
 * latest connection attempt, else the token option's value. When that was an older token
 * and the server answers 401, the request is made once more with what the token function
 * returns now. Resolves to the status and parsed body of a 2xx answer; rejects with a
 * ChatdError: `aborted`, `unavailable` (no `fetch`, the server cannot be reached, or a 5xx
 * without an error body), the route's `error.code` (for `invalid_field`, `field` is the
 * name before the message's first colon; `reason` is the error's `reason` when it has
 * one), or `internal` for a 4xx answer without one.
 */
export async function request(opts, conn, method, path, options = {}) {
    const { signal } = options;
    if (signal?.aborted === true)
        throw new ChatdError('aborted', 'aborted');
    const f = globalThis.fetch;
    if (f === undefined)
        throw new ChatdError('unavailable', 'no fetch in this environment');
    const what = `${method} ${path.split('?')[0] ?? path}`;
    const json = options.body === undefined ? undefined : JSON.stringify(options.body);
    const last = conn.lastToken;
    let res = await fetchOnce(f, method, `${httpBase(opts)}${path}`, last ?? (await conn.getToken()), json, what, signal);
    if (res.status === 401 && last !== undefined && typeof opts.token === 'function') {
        const fresh = await conn.getToken();
        if (fresh !== last) {
            await res.body?.cancel().catch(() => undefined);
            res = await fetchOnce(f, method, `${httpBase(opts)}${path}`, fresh, json, what, signal);
        }
    }
    let body;
    try {
        body = res.status === 204 ? undefined : await res.json();
    }
    catch {
        body = undefined;
    }
    if (!res.ok) {
        const err = body?.error;
        const code = typeof err?.code === 'string' ? err.code : res.status >= 500 ? 'unavailable' : 'internal';
        const message = typeof err?.message === 'string' ? err.message : `${what}: HTTP ${res.status}`;
        const field = code === 'invalid_field' ? /^([A-Za-z_][A-Za-z0-9_]*):/.exec(message)?.[1] : undefined;
        const details = {};
        if (field !== undefined)
            details.field = field;
        if (typeof err?.reason === 'string')
            details.reason = err.reason;
        const after = err?.retryAfterMs;
        if (typeof after === 'number')
            details.retryAfterMs = after;
        throw new ChatdError(code, message, details);
    }
    return { status: res.status, body };
}
/** One fetch (with `json` as the body when given); a network failure becomes `unavailable` (or `aborted`). */
async function fetchOnce(f, method, url, token, json, what, signal) {
    try {
        const headers = { authorization: `Bearer ${token}` };
        if (json !== undefined)
            headers['content-type'] = 'application/json';
        const init = { method, headers, cache: 'no-store' };
        if (json !== undefined)
            init.body = json;
        if (signal !== undefined)
            init.signal = signal;
        return await f(url, init);
    }
    catch (e) {
        if (isAborted(signal))
            throw new ChatdError('aborted', 'aborted');
        throw new ChatdError('unavailable', `${what}: ${String(e)}`);
    }
}
/** @internal Base URL of the user HTTP routes: `httpUrl`, else `url` with `ws`→`http` and a final `/v1/ws` removed. */
export function httpBase(opts) {
    if (opts.httpUrl !== undefined)
        return opts.httpUrl.replace(/\/+$/, '');
    const u = new URL(opts.url);
    const scheme = u.protocol === 'wss:' ? 'https:' : u.protocol === 'ws:' ? 'http:' : u.protocol;
    let path = u.pathname.replace(/\/+$/, '');
    if (path.endsWith('/v1/ws'))
        path = path.slice(0, -'/v1/ws'.length);
    return `${scheme}//${u.host}${path}`;
}
/** Whether the signal aborted (a call, so that TypeScript does not narrow it once and for all). */
function isAborted(signal) {
    return signal?.aborted === true;
}
//# sourceMappingURL=http.js.map