/**
 * The user HTTP routes (`GET /v1/me/channels`, `GET /v1/channels/{channelId}/members`,
 * `GET /v1/directory`, `PUT` and `DELETE /v1/me/channels/{channelId}`): their base URL,
 * and one request with the connection's token whose answer is the parsed JSON body (or
 * nothing, for a 204) or a {@link ChatdError} with the route's error code.
 *
 * @module
 */
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import type { ChatClientOptions } from './types.js';

/** The methods of the user HTTP routes. */
export type HttpMethod = 'GET' | 'PUT' | 'DELETE';

/** @internal GETs `path` (with its query): {@link requestJson} with `GET`. */
export function getJson(opts: ChatClientOptions, conn: Connection, path: string, signal?: AbortSignal): Promise<unknown> {
  return requestJson(opts, conn, 'GET', path, signal);
}

/**
 * @internal Sends `method` to `path` (with its query) of the user HTTP routes, without a
 * body, with the user's token in `Authorization: Bearer`: the token of the latest
 * connection attempt, else the token option's value. When that was an older token and
 * the server answers 401, the request is made once more with what the token function
 * returns now. Resolves to the parsed body of a 2xx answer (`undefined` when it has none,
 * as a 204's); rejects with a ChatdError: `aborted`, `unavailable` (no `fetch`, the server
 * cannot be reached, or a 5xx without an error body), the route's `error.code` (for
 * `invalid_field`, `field` is the name before the message's first colon), or `internal`
 * for a 4xx answer without one.
 */
export async function requestJson(
  opts: ChatClientOptions,
  conn: Connection,
  method: HttpMethod,
  path: string,
  signal?: AbortSignal,
): Promise<unknown> {
  if (signal?.aborted === true) throw new ChatdError('aborted', 'aborted');
  const f = (globalThis as { fetch?: typeof fetch }).fetch;
  if (f === undefined) throw new ChatdError('unavailable', 'no fetch in this environment');
  const what = `${method} ${path.split('?')[0] ?? path}`;
  const last = conn.lastToken;
  let res = await request(f, method, `${httpBase(opts)}${path}`, last ?? (await conn.getToken()), what, signal);
  if (res.status === 401 && last !== undefined && typeof opts.token === 'function') {
    const fresh = await conn.getToken();
    if (fresh !== last) {
      await res.body?.cancel().catch(() => undefined);
      res = await request(f, method, `${httpBase(opts)}${path}`, fresh, what, signal);
    }
  }
  let body: unknown;
  try {
    body = res.status === 204 ? undefined : await res.json();
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const err = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const code = typeof err?.code === 'string' ? err.code : res.status >= 500 ? 'unavailable' : 'internal';
    const message = typeof err?.message === 'string' ? err.message : `${what}: HTTP ${res.status}`;
    const field = code === 'invalid_field' ? /^([A-Za-z_][A-Za-z0-9_]*):/.exec(message)?.[1] : undefined;
    throw new ChatdError(code, message, field === undefined ? {} : { field });
  }
  return body;
}

/** One fetch; a network failure becomes `unavailable` (or `aborted`). */
async function request(
  f: typeof fetch,
  method: HttpMethod,
  url: string,
  token: string,
  what: string,
  signal: AbortSignal | undefined,
): Promise<Response> {
  try {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${token}` }, cache: 'no-store' };
    if (signal !== undefined) init.signal = signal;
    return await f(url, init);
  } catch (e) {
    if (isAborted(signal)) throw new ChatdError('aborted', 'aborted');
    throw new ChatdError('unavailable', `${what}: ${String(e)}`);
  }
}

/** @internal Base URL of the user HTTP routes: `httpUrl`, else `url` with `ws`→`http` and a final `/v1/ws` removed. */
export function httpBase(opts: ChatClientOptions): string {
  if (opts.httpUrl !== undefined) return opts.httpUrl.replace(/\/+$/, '');
  const u = new URL(opts.url);
  const scheme = u.protocol === 'wss:' ? 'https:' : u.protocol === 'ws:' ? 'http:' : u.protocol;
  let path = u.pathname.replace(/\/+$/, '');
  if (path.endsWith('/v1/ws')) path = path.slice(0, -'/v1/ws'.length);
  return `${scheme}//${u.host}${path}`;
}

/** Whether the signal aborted (a call, so that TypeScript does not narrow it once and for all). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
