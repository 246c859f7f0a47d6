// client.moderation without a server: the request each call makes (method, URL, body,
// token), how each answer is checked and typed, and the ChatdError (code, reason,
// retryAfterMs) an HTTP refusal becomes. `fetch` is replaced by a fake for each test.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { client, fakeFetch, json, noContent, rejectsWith, restoreFetch } from '../helpers/fakes.js';

afterEach(restoreFetch);

test('moderation: mute, unmute, ban, liftBan, deleteAnyMessage, block and unblock make their requests with the token', async () => {
  const calls = fakeFetch(() => noContent());
  const c = client();
  await c.moderation.mute('room 1', 'bob', 1_800_000_000_000);
  await c.moderation.unmute('room 1', 'bob');
  await c.moderation.mute('room 1', 'bob', null);
  await c.moderation.ban('room 1', 'bob');
  await c.moderation.liftBan('room 1', 'bob');
  await c.moderation.deleteAnyMessage('room 1', 'm/1');
  await c.moderation.block('bob');
  await c.moderation.unblock('bob');
  const base = 'http://chat.test:8080';
  assert.deepEqual(
    calls.map(({ method, url, auth, body }) => ({ method, url, auth, body })),
    [
      { method: 'PUT', url: `${base}/v1/channels/room%201/members/bob`, auth: 'Bearer tok', body: { mutedUntil: 1_800_000_000_000 } },
      { method: 'PUT', url: `${base}/v1/channels/room%201/members/bob`, auth: 'Bearer tok', body: { mutedUntil: null } },
      { method: 'PUT', url: `${base}/v1/channels/room%201/members/bob`, auth: 'Bearer tok', body: { mutedUntil: null } },
      { method: 'DELETE', url: `${base}/v1/channels/room%201/members/bob?ban=true`, auth: 'Bearer tok', body: undefined },
      { method: 'DELETE', url: `${base}/v1/channels/room%201/bans/bob`, auth: 'Bearer tok', body: undefined },
      { method: 'DELETE', url: `${base}/v1/channels/room%201/messages/m%2F1`, auth: 'Bearer tok', body: undefined },
      { method: 'PUT', url: `${base}/v1/me/blocks/bob`, auth: 'Bearer tok', body: undefined },
      { method: 'DELETE', url: `${base}/v1/me/blocks/bob`, auth: 'Bearer tok', body: undefined },
    ],
  );
});

test('moderation: bans pages with after and limit, typed (actorId only when given); another shape is internal', async () => {
  const calls = fakeFetch((_m, url) =>
    url.searchParams.get('after') === 'bob'
      ? json(200, { bans: [{ userId: 'carol', bannedAt: 3 }], hasMore: false })
      : json(200, { bans: [{ userId: 'bob', bannedAt: 2, actorId: 'olive', extra: 1 }], hasMore: true }),
  );
  const c = client();
  const first = await c.moderation.bans('room', { limit: 1 });
  assert.deepEqual(first, { bans: [{ userId: 'bob', bannedAt: 2, actorId: 'olive' }], hasMore: true });
  const second = await c.moderation.bans('room', { after: 'bob', limit: 1 });
  assert.deepEqual(second, { bans: [{ userId: 'carol', bannedAt: 3 }], hasMore: false });
  assert.deepEqual(
    calls.map((x) => x.url),
    ['http://chat.test:8080/v1/channels/room/bans?limit=1', 'http://chat.test:8080/v1/channels/room/bans?after=bob&limit=1'],
  );
  fakeFetch(() => json(200, { bans: [{ userId: 'bob' }], hasMore: false }));
  await rejectsWith(c.moderation.bans('room'), 'internal');
});

test('moderation: setChannelSettings PATCHes only the fields given and answers the rules; the snapshot shows them', async () => {
  const calls = fakeFetch(() =>
    json(200, { channelId: 'room', members: ['alice'], lastSeq: 1, createdAt: 1, postingRole: 'moderator', slowModeMs: 30000 }),
  );
  const c = client();
  const rules = await c.moderation.setChannelSettings('room', { postingRole: 'moderator', slowModeMs: 30000 });
  assert.deepEqual(rules, { channelId: 'room', postingRole: 'moderator', slowModeMs: 30000 });
  await c.moderation.setChannelSettings('room', { slowModeMs: 30000 });
  assert.deepEqual(calls.map((x) => [x.method, x.url, x.body]), [
    ['PATCH', 'http://chat.test:8080/v1/channels/room', { postingRole: 'moderator', slowModeMs: 30000 }],
    ['PATCH', 'http://chat.test:8080/v1/channels/room', { slowModeMs: 30000 }],
  ]);
  const m = c.channel('room').getSnapshot().moderation;
  assert.equal(m.postingRole, 'moderator');
  assert.equal(m.slowModeMs, 30000);
  c.close();
});

test('moderation: blocks are read as a list; flag posts reason and note, 201 is created and 200 the first flag again', async () => {
  let n = 0;
  const flag = { flagId: 'f1', messageId: 'm1', channelId: 'room', reporterId: 'alice', reason: 'spam', note: 'ads', createdAt: 5 };
  const calls = fakeFetch((_m, url) => {
    if (url.pathname === '/v1/me/blocks') return json(200, { blocks: ['bob', 'carol'] });
    n += 1;
    return json(n === 1 ? 201 : 200, flag);
  });
  const c = client();
  assert.deepEqual(await c.moderation.blocks(), ['bob', 'carol']);
  const first = await c.moderation.flag('m1', 'spam', { note: 'ads' });
  assert.deepEqual(first, { ...flag, created: true });
  const again = await c.moderation.flag('m1', 'abuse');
  assert.equal(again.created, false);
  assert.deepEqual(calls.slice(1).map((x) => [x.method, x.url, x.body]), [
    ['POST', 'http://chat.test:8080/v1/messages/m1/flags', { reason: 'spam', note: 'ads' }],
    ['POST', 'http://chat.test:8080/v1/messages/m1/flags', { reason: 'abuse' }],
  ]);
  fakeFetch(() => json(200, { blocks: 'bob' }));
  await rejectsWith(c.moderation.blocks(), 'internal');
});

test('moderation: an HTTP refusal keeps its code, reason and retryAfterMs; after close every call rejects with closed', async () => {
  fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'banned from this channel', reason: 'banned' } }));
  const c = client();
  await rejectsWith(c.join('lobby'), 'forbidden', (e) => {
    assert.equal(e.reason, 'banned');
  });
  fakeFetch(() => json(429, { error: { code: 'rate_limited', message: 'slow mode', reason: 'slow_mode', retryAfterMs: 29989 } }));
  await rejectsWith(c.moderation.ban('lobby', 'bob'), 'rate_limited', (e) => {
    assert.equal(e.reason, 'slow_mode');
    assert.equal(e.retryAfterMs, 29989);
    assert.equal(e.retryable, true);
  });
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'slowModeMs: must be 0..3600000' } }));
  await rejectsWith(c.moderation.setChannelSettings('lobby', { slowModeMs: -1 }), 'invalid_field', (e) => {
    assert.equal(e.field, 'slowModeMs');
  });
  c.close();
  const calls = fakeFetch(() => noContent());
  await rejectsWith(c.moderation.mute('lobby', 'bob', 1), 'closed');
  await rejectsWith(c.moderation.flag('m1', 'spam'), 'closed');
  assert.equal(calls.length, 0, 'nothing is sent after close');
});
