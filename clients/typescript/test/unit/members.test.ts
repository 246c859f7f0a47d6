// ChatClient.members and allMembers without a server: the request each makes (URL, query,
// token), how a page is checked and typed, how pages are walked, and which ChatdError each
// failure becomes. `fetch` is replaced by a fake for each test (and put back after it).
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { type Member, type WebSocketConstructor, type WebSocketLike } from '../../src/index.js';
import { client, fakeFetch, json, rejectsWith, restoreFetch } from '../helpers/fakes.js';

afterEach(restoreFetch);

function member(userId: string, over: Partial<Member> = {}): Member {
  return { userId, role: 'member', joinedAt: 1_700_000_000_000, deliveredSeq: 0, readSeq: 0, ...over };
}

test('members: GET /v1/channels/{id}/members on the HTTP side of the WebSocket URL, with after, limit and the token', async () => {
  const calls = fakeFetch(() =>
    json(200, { members: [{ ...member('bob', { role: 'owner', deliveredSeq: 7, readSeq: 5, mutedUntil: 9 }), extra: true }], hasMore: true, atSeq: 12 }),
  );
  const c = client();
  const page = await c.members('room 1', { after: 'alice', limit: 1 });
  assert.deepEqual(page, {
    // mutedUntil is kept (a mute in force, version 1.2 §17); fields this client does not know are not
    members: [{ userId: 'bob', role: 'owner', joinedAt: 1_700_000_000_000, deliveredSeq: 7, readSeq: 5, mutedUntil: 9 }],
    hasMore: true,
    atSeq: 12,
  });
  await c.members('room1');
  assert.deepEqual(calls.map(({ method, url, auth, body }) => ({ method, url, auth, body })), [
    { method: 'GET', url: 'http://chat.test:8080/v1/channels/room%201/members?after=alice&limit=1', auth: 'Bearer tok', body: undefined },
    { method: 'GET', url: 'http://chat.test:8080/v1/channels/room1/members', auth: 'Bearer tok', body: undefined },
  ]);
  // httpUrl wins; wss becomes https
  await client({ httpUrl: 'https://api.test/chat/' }).members('r');
  await client({ url: 'wss://secure.test/base/v1/ws' }).members('r');
  assert.deepEqual(
    calls.slice(2).map((x) => x.url),
    ['https://api.test/chat/v1/channels/r/members', 'https://secure.test/base/v1/channels/r/members'],
  );
});

test('allMembers: pages with `after` set to the last user id until hasMore is false; atSeq is the lowest', async () => {
  const all = ['A', 'a', 'b', 'c', 'd'].map((u, i) => member(u, { readSeq: i }));
  const calls = fakeFetch((_method, url) => {
    const after = url.searchParams.get('after');
    const limit = Number(url.searchParams.get('limit'));
    const from = after === null ? 0 : all.findIndex((m) => m.userId === after) + 1;
    const members = all.slice(from, from + limit);
    return json(200, { members, hasMore: from + limit < all.length, atSeq: 40 - from });
  });
  const list = await client().allMembers('room', { pageSize: 2 });
  assert.deepEqual(list, { members: all, atSeq: 36 });
  assert.deepEqual(
    calls.map((x) => new URL(x.url).search),
    ['?limit=2', '?after=a&limit=2', '?after=c&limit=2'],
  );
  // the default page is the largest the route gives
  fakeFetch(() => json(200, { members: [], hasMore: false, atSeq: 0 }));
  assert.deepEqual(await client().allMembers('empty'), { members: [], atSeq: 0 });
});

test('allMembers: a page that says hasMore but does not move on is an error, not an endless loop', async () => {
  fakeFetch(() => json(200, { members: [], hasMore: true, atSeq: 1 }));
  await rejectsWith(client().allMembers('room'), 'internal');
  const calls = fakeFetch(() => json(200, { members: [member('x')], hasMore: true, atSeq: 1 }));
  await rejectsWith(client().allMembers('room'), 'internal');
  assert.equal(calls.length, 2, 'stopped at the page that repeated the cursor');
});

test('members: the route’s errors are ChatdErrors with its code; invalid_field names the field', async () => {
  fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'not a member of this channel' } }));
  await rejectsWith(client().members('secret'), 'forbidden', (e) => {
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'not a member of this channel');
  });
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'limit: must be an integer between 1 and 500' } }));
  await rejectsWith(client().members('room', { limit: 0 }), 'invalid_field', (e) => {
    assert.equal(e.field, 'limit');
  });
  fakeFetch(() => new Response('bad gateway', { status: 502 }));
  await rejectsWith(client().members('room'), 'unavailable', (e) => {
    assert.equal(e.retryable, true);
    assert.match(e.message, /GET \/v1\/channels\/room\/members: HTTP 502/);
  });
  fakeFetch(() => {
    throw new TypeError('fetch failed');
  });
  await rejectsWith(client().members('room'), 'unavailable');
  // an answer of another shape
  for (const body of [[], { members: [], hasMore: false }, { members: [{ userId: 'a' }], hasMore: false, atSeq: 1 }, { members: {}, hasMore: false, atSeq: 1 }]) {
    fakeFetch(() => json(200, body));
    await rejectsWith(client().members('room'), 'internal');
  }
});

test('members: an AbortSignal rejects with `aborted`; a closed client with `closed`', async () => {
  const calls = fakeFetch(() => json(200, { members: [], hasMore: false, atSeq: 0 }));
  await rejectsWith(client().members('room', { signal: AbortSignal.abort() }), 'aborted');
  assert.equal(calls.length, 0, 'no request for an aborted signal');
  const ac = new AbortController();
  fakeFetch(
    () =>
      new Promise<Response>((_resolve, reject) => {
        ac.signal.addEventListener('abort', () => {
          reject(new DOMException('aborted', 'AbortError'));
        });
        ac.abort();
      }),
  );
  await rejectsWith(client().allMembers('room', { signal: ac.signal }), 'aborted');
  const c = client();
  c.close();
  await rejectsWith(c.members('room'), 'closed');
});

/** A WebSocket that never opens: the client keeps its connection attempt's token. */
class SilentSocket implements WebSocketLike {
  readonly readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  send(): void {
    /* never open */
  }
  close(): void {
    /* never open */
  }
}

test('members: a 401 for the connection’s older token is asked again once with a fresh one from the token function', async () => {
  let n = 0;
  const c = client({
    token: () => `t${++n}`,
    WebSocket: SilentSocket as unknown as WebSocketConstructor,
    onlineEvents: null,
  });
  try {
    await c.start();
    // the connection attempt took t1 (kept once its promise settled)
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(n, 1);
    const calls = fakeFetch((_method, _url, call) =>
      call === 1 ? json(401, { error: { code: 'unauthorized', message: 'invalid token: expired' } }) : json(200, { members: [member('alice')], hasMore: false, atSeq: 3 }),
    );
    const page = await c.members('room');
    assert.deepEqual(page.members.map((m) => m.userId), ['alice']);
    assert.deepEqual(
      calls.map((x) => x.auth),
      ['Bearer t1', 'Bearer t2'],
    );
    // a string token is not asked again: the 401 is the answer
    const once = fakeFetch(() => json(401, { error: { code: 'unauthorized', message: 'invalid token: expired' } }));
    await rejectsWith(client().members('room'), 'unauthorized');
    assert.equal(once.length, 1);
  } finally {
    c.close();
  }
});
