// ChatClient.search and searchPages without a server (protocol §18): the request each
// makes (URL, query, token), a page typed as render-ready messages (reactions' `me`,
// mentionsMe, a reply's preview), `next` followed by searchPages until the last page, the
// checks made before any request (empty q, q over 256 bytes: invalid_field, field q), and
// which ChatdError a refusal or a body of another shape becomes. `fetch` is replaced by a
// fake for each test (and put back after it).
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SearchPage } from '../../src/index.js';
import { client, fakeFetch, json, rejectsWith, restoreFetch } from '../helpers/fakes.js';

afterEach(restoreFetch);

/** A result as the server sends it. */
function result(seq: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'MSG_RECV',
    messageId: `m-${seq}`,
    channelId: 'room',
    senderId: 'bob',
    seq,
    body: `text ${seq}`,
    ts: 1_700_000_000_000 + seq,
    clientMsgId: `c${seq}`,
    kind: 'message',
    reactions: [],
    ...over,
  };
}

test('search: GET /v1/me/search with q, channelId, before, limit and the token; results are render-ready messages', async () => {
  const calls = fakeFetch(() =>
    json(200, {
      results: [
        result(9, {
          body: 'Der ÄRGER war groß',
          editedAt: 1_700_000_000_500,
          reactions: [{ emoji: '👍', count: 2, me: true }],
          mentions: ['alice'],
          replyTo: 'm-3',
          replyPreview: { senderId: 'carol', body: 'quoted' },
          extra: 1,
        }),
        result(4, { channelId: 'other', senderId: 'alice' }),
      ],
      next: 'cursor-1',
    }),
  );
  const c = client();
  const page = await c.search('ärger gro', { channelId: 'room', before: 'c0 /x', limit: 2 });
  assert.equal(page.next, 'cursor-1');
  assert.equal(page.results.length, 2);
  const [a, b] = page.results;
  assert.deepEqual(
    [a?.messageId, a?.channelId, a?.senderId, a?.seq, a?.body, a?.editedAt, a?.deleted, a?.mentionsMe, a?.replyTo, a?.replyPreview],
    ['m-9', 'room', 'bob', 9, 'Der ÄRGER war groß', 1_700_000_000_500, false, true, 'm-3', { senderId: 'carol', body: 'quoted' }],
  );
  assert.deepEqual(a?.reactions, [{ emoji: '👍', count: 2, me: true }]);
  assert.deepEqual([b?.channelId, b?.senderId, b?.mentionsMe, b?.reactions], ['other', 'alice', false, []]);
  await c.search('x');
  assert.deepEqual(
    calls.map(({ method, url, auth }) => ({ method, url, auth })),
    [
      { method: 'GET', url: 'http://chat.test:8080/v1/me/search?q=%C3%A4rger+gro&channelId=room&before=c0+%2Fx&limit=2', auth: 'Bearer tok' },
      { method: 'GET', url: 'http://chat.test:8080/v1/me/search?q=x', auth: 'Bearer tok' },
    ],
  );
});

test('search: a page without next is the last (next absent)', async () => {
  fakeFetch(() => json(200, { results: [] }));
  const page: SearchPage = await client().search('nothing');
  assert.deepEqual(page, { results: [] });
  assert.equal('next' in page, false);
});

test('searchPages: follows next until the last page, one request per page asked for; break stops reading', async () => {
  const pages = [
    { results: [result(5), result(4)], next: 'n1' },
    { results: [], next: 'n2' },
    { results: [result(1)] },
  ];
  const calls = fakeFetch((_m, _u, n) => json(200, pages[n - 1]));
  const c = client();
  const seen: number[][] = [];
  for await (const p of c.searchPages('text', { limit: 2, channelId: 'room' })) seen.push(p.results.map((m) => m.seq));
  assert.deepEqual(seen, [[5, 4], [], [1]]);
  assert.deepEqual(
    calls.map((x) => new URL(x.url).search),
    ['?q=text&channelId=room&limit=2', '?q=text&channelId=room&before=n1&limit=2', '?q=text&channelId=room&before=n2&limit=2'],
  );
  // stopping after the first page reads no more
  const calls2 = fakeFetch((_m, _u, n) => json(200, pages[n - 1]));
  for await (const p of c.searchPages('text')) {
    assert.equal(p.next, 'n1');
    break;
  }
  assert.equal(calls2.length, 1);
  // starting from a cursor
  const calls3 = fakeFetch(() => json(200, { results: [] }));
  for await (const p of c.searchPages('text', { before: 'n9' })) assert.deepEqual(p.results, []);
  assert.deepEqual(calls3.map((x) => new URL(x.url).search), ['?q=text&before=n9']);
});

test('search: an empty q, or one over 256 bytes of UTF-8, is refused before any request (invalid_field, field q)', async () => {
  const calls = fakeFetch(() => json(200, { results: [] }));
  const c = client();
  const fieldQ = (e: { field?: string | undefined }): void => {
    assert.equal(e.field, 'q');
  };
  await rejectsWith(c.search(''), 'invalid_field', fieldQ);
  // 86 three-byte characters: 258 bytes, though 86 UTF-16 units
  await rejectsWith(c.search('東'.repeat(86)), 'invalid_field', fieldQ);
  await rejectsWith(c.search('x'.repeat(257)), 'invalid_field', fieldQ);
  const it = c.searchPages('');
  await rejectsWith(it.next(), 'invalid_field', fieldQ);
  assert.equal(calls.length, 0);
  // exactly 256 bytes is asked
  await c.search('東'.repeat(85) + 'x');
  assert.equal(calls.length, 1);
});

test('search: the route’s errors are ChatdErrors (invalid_field names the field); a body of another shape is `internal`', async () => {
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'before: not a cursor of this server' } }));
  await rejectsWith(client().search('x', { before: 'bad' }), 'invalid_field', (e) => {
    assert.equal(e.field, 'before');
  });
  fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'not a member' } }));
  await rejectsWith(client().search('x', { channelId: 'secret' }), 'forbidden');
  fakeFetch(() => json(404, { error: { code: 'not_found', message: 'no route' } }));
  await rejectsWith(client().search('x'), 'not_found');
  for (const body of [
    [],
    {},
    { results: {} },
    { results: [], next: 5 },
    { results: [{ messageId: 'm', channelId: 'c', senderId: 's', seq: '1', body: '', ts: 1, clientMsgId: 'x' }] },
    { results: [result(1, { kind: 'edit' })] },
  ]) {
    fakeFetch(() => json(200, body));
    await rejectsWith(client().search('x'), 'internal');
  }
});

test('search: a message posted through an HTTP route (no clientMsgId, byAdmin) is a result like any other', async () => {
  // Version 1.2 common rules: entries made through an HTTP route carry no clientMsgId.
  const posted = result(4, { body: 'deployed build-42', byAdmin: true });
  delete posted.clientMsgId;
  fakeFetch(() => json(200, { results: [posted, result(3, { body: 'build-42 is next' })] }));
  const page = await client().search('build-42');
  assert.deepEqual(
    page.results.map((m) => [m.seq, m.body, m.clientMsgId]),
    [
      [4, 'deployed build-42', undefined],
      [3, 'build-42 is next', 'c3'],
    ],
  );
});

test('search: a closed client rejects with `closed`', async () => {
  const c = client();
  c.close();
  await rejectsWith(c.search('x'), 'closed');
});
