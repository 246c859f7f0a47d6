/**
 * The user HTTP routes (`GET /v1/me/channels`, `GET /v1/channels/{channelId}/members`,
 * `GET /v1/directory`, `PUT` and `DELETE /v1/me/channels/{channelId}`, `POST
 * /v1/me/channels`, `PUT /v1/me/direct/{userId}`, `PUT` and `DELETE
 * /v1/channels/{channelId}/members/{userId}`): their base URL, and one request with the
 * connection's token whose answer is the status and parsed JSON body (or nothing, for a
 * 204) or a {@link ChatdError} with the route's error code and `reason`.
 *
 * @module
 */
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import type { ChatClientOptions } from './types.js';

/** The methods of the user HTTP routes. */
export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';

/** @internal A 2xx answer: its status and parsed body (`undefined` when it has none, as a 204's). */
export interface HttpAnswer {
  /** The HTTP status (200, 201, 204, …). */
  readonly status: number;
  /** The parsed JSON body. */
  readonly body: unknown;
}

/** @internal GETs `path` (with its query): {@link requestJson} with `GET`. */
export function getJson(opts: ChatClientOptions, conn: Connection, path: string, signal?: AbortSignal): Promise<unknown> {
  return requestJson(opts, conn, 'GET', path, signal);
}

/** @internal {@link request} without a body, resolving to the answer's body only. */
export async function requestJson(
  opts: ChatClientOptions,
  conn: Connection,
  method: HttpMethod,
  path: string,
  signal?: AbortSignal,
): Promise<unknown> {
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
export async function request(
  opts: ChatClientOptions,
  conn: Connection,
  method: HttpMethod,
  path: string,
  options: { body?: unknown; signal?: AbortSignal } = {},
): Promise<HttpAnswer> {
  const { signal } = options;
  if (signal?.aborted === true) throw new ChatdError('aborted', 'aborted');
  const f = (globalThis as { fetch?: typeof fetch }).fetch;
  if (f === undefined) throw new ChatdError('unavailable', 'no fetch in this environment');
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
  let body: unknown;
  try {
    body = res.status === 204 ? undefined : await res.json();
  } catch {
    body = undefined;
  }
  if (!res.ok) throw httpError(res.status, body, what);
  return { status: res.status, body };
}

/**
 * @internal The ChatdError of a non-2xx answer of `what` (`METHOD /path`) with parsed
 * `body`: the route's `error.code` (for `invalid_field`, `field` is the body's `field`,
 * else the name before the message's first colon; `reason` and `retryAfterMs` when the
 * error has them), `unavailable` for a 5xx without an error body, `internal` for a 4xx
 * without one.
 */
export function httpError(status: number, body: unknown, what: string): ChatdError {
  const err = (body as { error?: { code?: unknown; message?: unknown; reason?: unknown; field?: unknown } } | undefined)?.error;
  const code = typeof err?.code === 'string' ? err.code : status >= 500 ? 'unavailable' : 'internal';
  const message = typeof err?.message === 'string' ? err.message : `${what}: HTTP ${status}`;
  const named = typeof err?.field === 'string' ? err.field : undefined;
  const field = code === 'invalid_field' ? (named ?? /^([A-Za-z_][A-Za-z0-9_]*):/.exec(message)?.[1]) : undefined;
  const details: { field?: string; reason?: string; retryAfterMs?: number } = {};
  if (field !== undefined) details.field = field;
  if (typeof err?.reason === 'string') details.reason = err.reason;
  const after = (err as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  if (typeof after === 'number') details.retryAfterMs = after;
  return new ChatdError(code, message, details);
}

/** One fetch (with `json` as the body when given); a network failure becomes `unavailable` (or `aborted`). */
async function fetchOnce(
  f: typeof fetch,
  method: HttpMethod,
  url: string,
  token: string,
  json: string | undefined,
  what: string,
  signal: AbortSignal | undefined,
): Promise<Response> {
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (json !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = { method, headers, cache: 'no-store' };
    if (json !== undefined) init.body = json;
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
