// The fakes the unit tests share: a `fetch` that records each request and answers from a
// function, JSON and empty responses, a client that never connects, a check that a promise
// rejects with a given ChatdError code, and a channel entry of a version 1.2 server (HELLO,
// CHANNEL_ADDED, GET /v1/me/channels). A test file that calls `fakeFetch` puts the real
// `fetch` back after each test with `afterEach(restoreFetch)`.
import assert from 'node:assert/strict';
import { ChatClient, ChatdError, type HelloChannel, type WireEntry } from '../../src/index.js';
import { fakeSockets, type FakeSocket } from './fake-socket.js';

/** One request the fake `fetch` saw. */
export interface Call {
  method: string;
  /** The full URL, as the client built it. */
  url: string;
  /** The `authorization` header, if any. */
  auth: string | undefined;
  /** The `content-type` header, if any. */
  contentType: string | undefined;
  /** The request body parsed as JSON (`undefined` when there was no string body). */
  body: unknown;
}

const realFetch = globalThis.fetch;

/** Puts back the `fetch` that was there when this module loaded. */
export function restoreFetch(): void {
  globalThis.fetch = realFetch;
}

/**
 * Replaces `fetch` with `answer` (called with the method, the URL and the 1-based number of
 * the call); returns the calls made, appended as they come. A request whose signal is
 * already aborted is recorded, then fails as `fetch` would (an `AbortError`).
 */
export function fakeFetch(answer: (method: string, url: URL, call: number) => Response | Promise<Response>): Call[] {
  const calls: Call[] = [];
  const fake = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
    const headers = new Headers(init?.headers);
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    calls.push({ method, url, auth: headers.get('authorization') ?? undefined, contentType: headers.get('content-type') ?? undefined, body });
    if (init?.signal?.aborted === true) throw new DOMException('aborted', 'AbortError');
    return answer(method, new URL(url), calls.length);
  };
  globalThis.fetch = fake;
  return calls;
}

/** A response of `status` with `body` as JSON. */
export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/** A 204 with no body. */
export const noContent = (): Response => new Response(null, { status: 204 });

/** A client of user `alice` on ws://chat.test:8080/v1/ws with token `tok`, not started, no tab sync. */
export function client(extra: Partial<ConstructorParameters<typeof ChatClient>[0]> = {}): ChatClient {
  return new ChatClient({ url: 'ws://chat.test:8080/v1/ws', token: 'tok', userId: 'alice', tabSync: false, ...extra });
}

/** Asserts `p` rejects with a ChatdError of `code`; `check` looks further at the error. */
export async function rejectsWith(p: Promise<unknown>, code: string, check?: (e: ChatdError) => void): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ChatdError, `a ChatdError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    check?.(e);
    return true;
  });
}

/** A channel entry of a version 1.2 server (HELLO, CHANNEL_ADDED, GET /v1/me/channels): a private group of 2, role member, nothing sent. */
export function entry(channelId: string, over: Partial<HelloChannel> = {}): HelloChannel {
  return {
    channelId,
    lastSeq: 0,
    deliveredSeq: 0,
    readSeq: 0,
    unread: 0,
    name: null,
    metadata: null,
    kind: 'group',
    visibility: 'private',
    memberCount: 2,
    role: 'member',
    ...over,
  };
}

/** Resolves after `ms` milliseconds (0: after the queued tasks). */
/** bob's message `seq` in `room` as the server sends it (`b<seq>`, body `bob <seq>`, key `bk<seq>`). */
export const bob = (seq: number): WireEntry => ({
  type: 'MSG_RECV',
  messageId: `b${seq}`,
  channelId: 'room',
  senderId: 'bob',
  seq,
  ts: seq,
  body: `bob ${seq}`,
  clientMsgId: `bk${seq}`,
  kind: 'message',
});

export const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A client on a fake WebSocket (see {@link open}). */
export interface Harness {
  client: ChatClient;
  sockets: FakeSocket[];
  /** The socket of the current connection. */
  ws: () => FakeSocket;
  /** GET requests made, by path. */
  gets: string[];
}

/**
 * A client on a fake WebSocket, open with a HELLO of `channels`; `fetch` answers the
 * members route from `members`, GET /v1/me/channels with `channels`, anything else 204.
 */
export async function open(channels: HelloChannel[], members: (channelId: string) => Response | Promise<Response> = () => json(200, { members: [], hasMore: false, atSeq: 0 }), extra: Partial<ConstructorParameters<typeof ChatClient>[0]> = {}): Promise<Harness> {
  const gets: string[] = [];
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url);
    if ((init?.method ?? 'GET') === 'GET') gets.push(url.pathname);
    const m = /^\/v1\/channels\/([^/]+)\/members$/.exec(url.pathname);
    if (m !== null) return Promise.resolve(members(decodeURIComponent(m[1] ?? '')));
    if (url.pathname === '/v1/me/channels') return Promise.resolve(json(200, { channels }));
    return Promise.resolve(new Response(null, { status: 204 }));
  };
  const { Ctor, sockets } = fakeSockets();
  const client = new ChatClient({
    url: 'ws://chat.test/v1/ws',
    token: 'tok',
    userId: 'alice',
    tabSync: false,
    onlineEvents: null,
    WebSocket: Ctor,
    reconnectBackoff: { baseMs: 1, maxMs: 2 },
    ...extra,
  });
  await client.start();
  await tick();
  const ws = (): FakeSocket => {
    const s = sockets[sockets.length - 1];
    if (s === undefined) throw new Error('no socket');
    return s;
  };
  ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's1', serverTs: 0, channels });
  return { client, sockets, ws, gets };
}

