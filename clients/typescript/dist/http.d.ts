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
export declare function getJson(opts: ChatClientOptions, conn: Connection, path: string, signal?: AbortSignal): Promise<unknown>;
/** @internal {@link request} without a body, resolving to the answer's body only. */
export declare function requestJson(opts: ChatClientOptions, conn: Connection, method: HttpMethod, path: string, signal?: AbortSignal): Promise<unknown>;
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
export declare function request(opts: ChatClientOptions, conn: Connection, method: HttpMethod, path: string, options?: {
    body?: unknown;
    signal?: AbortSignal;
}): Promise<HttpAnswer>;
/** @internal Base URL of the user HTTP routes: `httpUrl`, else `url` with `ws`→`http` and a final `/v1/ws` removed. */
export declare function httpBase(opts: ChatClientOptions): string;
//# sourceMappingURL=http.d.ts.map