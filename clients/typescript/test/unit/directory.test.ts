// ChatClient.directory, join and leave without a server (protocol §13.2): the request each
// makes (method, URL, query, token), how a directory page is checked and typed, the channel
// list read right after a join (and what happens when that read fails), a leave that
// takes the channel from the list at once without reading it, which ChatdError each
// failure becomes; and the version 1.2 fields of the channel list with the contract's
// defaults for a server that does not send them. `fetch` is replaced by a fake for each
// test (and put back after it).
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChannelSummary, type ChatClient } from '../../src/index.js';
import { client, entry, fakeFetch, json, noContent, rejectsWith, restoreFetch } from '../helpers/fakes.js';

afterEach(restoreFetch);

function summary(c: ChatClient, id: string): ChannelSummary | undefined {
  return c.channelList.getSnapshot().find((s) => s.channelId === id);
}

test('directory: GET /v1/directory with q, after, limit and the token; a page typed, an unset name null', async () => {
  const calls = fakeFetch(() =>
    json(200, {
      channels: [
        { channelId: 'help', name: 'Help desk', memberCount: 3, lastSeq: 7, extra: true },
        { channelId: 'town', memberCount: 1, lastSeq: 0 },
      ],
      hasMore: true,
    }),
  );
  const c = client();
  const page = await c.directory({ q: 'Help & more', after: 'a-b', limit: 2 });
  assert.deepEqual(page, {
    channels: [
      { channelId: 'help', name: 'Help desk', memberCount: 3, lastSeq: 7 },
      { channelId: 'town', name: null, memberCount: 1, lastSeq: 0 },
    ],
    hasMore: true,
  });
  await c.directory();
  await c.directory({ q: '' });
  assert.deepEqual(calls.map(({ method, url, auth, body }) => ({ method, url, auth, body })), [
    { method: 'GET', url: 'http://chat.test:8080/v1/directory?q=Help+%26+more&after=a-b&limit=2', auth: 'Bearer tok', body: undefined },
    { method: 'GET', url: 'http://chat.test:8080/v1/directory', auth: 'Bearer tok', body: undefined },
    { method: 'GET', url: 'http://chat.test:8080/v1/directory', auth: 'Bearer tok', body: undefined },
  ]);
});

test('directory: the route’s errors are ChatdErrors (invalid_field names the field); a body of another shape is `internal`', async () => {
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'after: not a valid channel id' } }));
  await rejectsWith(client().directory({ after: 'bad id' }), 'invalid_field', (e) => {
    assert.equal(e.field, 'after');
  });
  fakeFetch(() => json(404, { error: { code: 'not_found', message: 'no route' } }));
  await rejectsWith(client().directory(), 'not_found');
  for (const body of [
    [],
    { channels: [] },
    { channels: {}, hasMore: false },
    { channels: [{ channelId: 'x', name: 1, memberCount: 1, lastSeq: 0 }], hasMore: false },
    { channels: [{ channelId: 'x', memberCount: '1', lastSeq: 0 }], hasMore: false },
  ]) {
    fakeFetch(() => json(200, body));
    await rejectsWith(client().directory(), 'internal');
  }
  const calls = fakeFetch(() => json(200, { channels: [], hasMore: false }));
  await rejectsWith(client().directory({ signal: AbortSignal.abort() }), 'aborted');
  const closed = client();
  closed.close();
  await rejectsWith(closed.directory(), 'closed');
  await rejectsWith(closed.join('town'), 'closed');
  await rejectsWith(closed.leave('town'), 'closed');
  assert.equal(calls.length, 0);
});

test('join: PUT /v1/me/channels/{id}, then the channel list is read at once: the channel is listed with its 1.2 fields', async () => {
  const c = client();
  const added: string[] = [];
  c.events.on('channelAdded', (id) => added.push(id));
  const calls = fakeFetch((method) =>
    method === 'PUT'
      ? noContent()
      : json(200, { channels: [entry('town hall', { visibility: 'public', memberCount: 4, lastSeq: 9, unread: 9, name: 'Town hall' })] }),
  );
  await c.join('town hall');
  assert.deepEqual(
    calls.map((x) => [x.method, x.url, x.auth]),
    [
      ['PUT', 'http://chat.test:8080/v1/me/channels/town%20hall', 'Bearer tok'],
      ['GET', 'http://chat.test:8080/v1/me/channels', 'Bearer tok'],
    ],
  );
  assert.deepEqual(added, ['town hall']);
  assert.deepEqual(c.channelIds(), ['town hall']);
  assert.deepEqual(summary(c, 'town hall'), {
    channelId: 'town hall',
    name: 'Town hall',
    metadata: null,
    lastSeq: 9,
    unread: 9,
    readSeq: 0,
    opened: false,
    kind: 'group',
    visibility: 'public',
    role: 'member',
    memberCount: 4,
    unreadMentions: 0,
    notify: 'all',
    snoozeUntil: null,
  });
});

test('join: refused (a private, direct or unknown channel) rejects with `forbidden` and reads nothing more', async () => {
  const c = client();
  const calls = fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'not a public channel' } }));
  await rejectsWith(c.join('secret'), 'forbidden', (e) => {
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'not a public channel');
  });
  assert.deepEqual(
    calls.map((x) => x.method),
    ['PUT'],
  );
  assert.deepEqual(c.channelIds(), []);
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'channelId: not a valid channel id' } }));
  await rejectsWith(c.join('bad id'), 'invalid_field');
});

test('an HTTP refusal keeps the server’s `reason` (version 1.2), and none when the body has none', async () => {
  const c = client();
  fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'banned from this channel', reason: 'banned' } }));
  await rejectsWith(c.join('town'), 'forbidden', (e) => {
    assert.equal(e.reason, 'banned');
    assert.equal(e.message, 'banned from this channel');
    assert.equal(e.field, undefined);
  });
  // a reason this client does not know is passed through; one that is not a string is not
  fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'x', reason: 'a_later_reason' } }));
  await rejectsWith(c.join('town'), 'forbidden', (e) => {
    assert.equal(e.reason, 'a_later_reason');
  });
  fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'x', reason: 7 } }));
  await rejectsWith(c.join('town'), 'forbidden', (e) => {
    assert.equal(e.reason, undefined);
  });
  // with `invalid_field`, both the field and the reason
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'q: at most 200 characters', reason: 'too_long' } }));
  await rejectsWith(c.directory({ q: 'x' }), 'invalid_field', (e) => {
    assert.deepEqual([e.field, e.reason], ['q', 'too_long']);
  });
  fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'not a public channel' } }));
  await rejectsWith(c.join('town'), 'forbidden', (e) => {
    assert.equal(e.reason, undefined);
  });
});

test('join: when the list cannot be read after it, the channel is listed all the same (a public group, the user a member)', async () => {
  const c = client();
  const calls = fakeFetch((method) => (method === 'PUT' ? noContent() : new Response('bad gateway', { status: 502 })));
  await c.join('town');
  assert.equal(calls.length, 2);
  assert.deepEqual(summary(c, 'town'), {
    channelId: 'town',
    name: undefined,
    metadata: undefined,
    lastSeq: 0,
    unread: 0,
    readSeq: 0,
    opened: false,
    kind: 'group',
    visibility: 'public',
    role: 'member',
    memberCount: undefined,
    unreadMentions: 0,
    notify: 'all',
    snoozeUntil: null,
  });
  // the next read brings it up to date
  fakeFetch(() => json(200, { channels: [entry('town', { visibility: 'public', memberCount: 5, name: 'Town' })] }));
  await c.refreshChannels();
  assert.equal(summary(c, 'town')?.memberCount, 5);
  assert.equal(summary(c, 'town')?.name, 'Town');
});

test('leave: DELETE /v1/me/channels/{id}; the channel goes from the list at once (channelRemoved, reason `left`), with no read after it', async () => {
  const c = client();
  const removed: [string, string | undefined][] = [];
  c.events.on('channelRemoved', (id, reason) => removed.push([id, reason]));
  fakeFetch(() => json(200, { channels: [entry('town', { visibility: 'public' }), entry('room')] }));
  await c.refreshChannels();
  assert.deepEqual(c.channelIds().sort(), ['room', 'town']);
  const calls = fakeFetch(() => noContent());
  await c.leave('town');
  assert.deepEqual(
    calls.map((x) => [x.method, x.url]),
    [['DELETE', 'http://chat.test:8080/v1/me/channels/town']],
  );
  assert.deepEqual(removed, [['town', 'left']]);
  assert.deepEqual(c.channelIds(), ['room']);
  await c.leave('room');
  assert.deepEqual(c.channelIds(), []);
  assert.deepEqual(removed, [['town', 'left'], ['room', 'left']]);
});

test('leave: a direct channel cannot be left (`forbidden`): it stays in the list', async () => {
  const c = client();
  fakeFetch(() => json(200, { channels: [entry('dm-1', { kind: 'direct', memberCount: 2 })] }));
  await c.refreshChannels();
  assert.equal(summary(c, 'dm-1')?.kind, 'direct');
  const calls = fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'a direct channel cannot be left' } }));
  await rejectsWith(c.leave('dm-1'), 'forbidden');
  assert.equal(calls.length, 1);
  assert.deepEqual(c.channelIds(), ['dm-1']);
});

test('the channel list: the 1.2 fields of HELLO and /v1/me/channels, with the contract’s defaults from an earlier server', async () => {
  const c = client();
  fakeFetch(() =>
    json(200, {
      channels: [
        { channelId: 'old', lastSeq: 3, deliveredSeq: 0, readSeq: 0, unread: 3, name: null, metadata: null },
        entry('new', { kind: 'group', visibility: 'public', role: 'owner', memberCount: 12 }),
      ],
    }),
  );
  const list = await c.refreshChannels();
  const pick = (s: ChannelSummary | undefined) => [s?.kind, s?.visibility, s?.role, s?.memberCount];
  assert.deepEqual(pick(list.find((s) => s.channelId === 'old')), ['group', 'private', 'member', undefined]);
  assert.deepEqual(pick(list.find((s) => s.channelId === 'new')), ['group', 'public', 'owner', 12]);
  // a changed member count (or role) is a new summary; nothing changed keeps the array
  fakeFetch(() =>
    json(200, {
      channels: [
        { channelId: 'old', lastSeq: 3, deliveredSeq: 0, readSeq: 0, unread: 3, name: null, metadata: null },
        entry('new', { kind: 'group', visibility: 'public', role: 'owner', memberCount: 13 }),
      ],
    }),
  );
  const next = await c.refreshChannels();
  assert.notEqual(next, list);
  const byId = (l: readonly ChannelSummary[], id: string) => l.find((s) => s.channelId === id);
  assert.equal(byId(next, 'old'), byId(list, 'old'), 'the unchanged summary is the same object');
  assert.equal(byId(next, 'new')?.memberCount, 13);
  const same = await c.refreshChannels();
  assert.equal(same, next);
});
