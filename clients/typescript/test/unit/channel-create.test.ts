// ChatClient.direct, createChannel, addMember, setMemberRole and removeMember without a
// server (protocol §13.1, §13.2): the request each makes (method, URL, JSON body, token), the
// channel object checked and typed, the status that tells a new direct channel from an
// existing one, the channel list read right after a new channel (and what a failed read
// leaves), no read after a member change (the server's MEMBER frames bring it), and the
// refusals with their `reason`. `fetch` is replaced by a fake for each test (and put
// back after it).
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChannelInfo, type ChannelSummary, type ChatClient } from '../../src/index.js';
import { client, entry, fakeFetch, json, noContent, rejectsWith, restoreFetch } from '../helpers/fakes.js';

afterEach(restoreFetch);

/** A channel object of a version 1.2 server. */
function channelObject(channelId: string, over: Partial<ChannelInfo> = {}): ChannelInfo {
  return {
    channelId,
    members: ['alice', 'bob'],
    lastSeq: 0,
    createdAt: 1_796_493_488_879,
    name: null,
    metadata: null,
    kind: 'group',
    visibility: 'private',
    memberCount: 2,
    ...over,
  };
}

function summary(c: ChatClient, id: string): ChannelSummary | undefined {
  return c.channelList.getSnapshot().find((s) => s.channelId === id);
}

const DM = '0192f0a4-1c2b-7d3e-8f40-5a6b7c8d9e0f';

test('direct: PUT /v1/me/direct/{userId}, no body; 201 is `created`, 200 is not; the channel is listed when it resolves', async () => {
  const c = client();
  const added: string[] = [];
  c.events.on('channelAdded', (id) => added.push(id));
  const dm = channelObject(DM, { kind: 'direct', members: ['alice', 'bob 2'], extra: 1 } as Partial<ChannelInfo>);
  let status = 201;
  const calls = fakeFetch((method) =>
    method === 'PUT' ? json(status, dm) : json(200, { channels: [entry(DM, { kind: 'direct', memberCount: 2 })] }),
  );
  const first = await c.direct('bob 2');
  assert.deepEqual(first, { created: true, channel: channelObject(DM, { kind: 'direct', members: ['alice', 'bob 2'] }) });
  assert.deepEqual(
    calls.map((x) => [x.method, x.url, x.auth, x.body]),
    [
      ['PUT', 'http://chat.test:8080/v1/me/direct/bob%202', 'Bearer tok', undefined],
      ['GET', 'http://chat.test:8080/v1/me/channels', 'Bearer tok', undefined],
    ],
  );
  assert.deepEqual(added, [DM]);
  assert.deepEqual(
    [summary(c, DM)?.kind, summary(c, DM)?.visibility, summary(c, DM)?.role, summary(c, DM)?.memberCount],
    ['direct', 'private', 'member', 2],
  );
  // again (or from bob's side): 200, the same channel, nothing new in the list
  status = 200;
  const again = await c.direct('bob 2');
  assert.equal(again.created, false);
  assert.equal(again.channel.channelId, DM);
  assert.deepEqual(added, [DM]);
});

test('direct: refused by dm_policy: `forbidden` with `reason` `dm_policy`, nothing listed, nothing more read', async () => {
  const c = client();
  const calls = fakeFetch(() =>
    json(403, {
      error: { code: 'forbidden', message: 'direct channels with this user are not allowed here (dm_policy)', reason: 'dm_policy' },
    }),
  );
  await rejectsWith(c.direct('bob'), 'forbidden', (e) => {
    assert.equal(e.reason, 'dm_policy');
    assert.equal(e.retryable, false);
    assert.match(e.message, /dm_policy/);
  });
  assert.equal(calls.length, 1);
  assert.deepEqual(c.channelIds(), []);
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'userId: not a valid user id' } }));
  await rejectsWith(c.direct('bad id'), 'invalid_field', (e) => {
    assert.equal(e.field, 'userId');
    assert.equal(e.reason, undefined);
  });
});

test('direct: when the list cannot be read after it, the channel is listed from its object (direct, the user a member)', async () => {
  const c = client();
  fakeFetch((method) =>
    method === 'PUT'
      ? json(201, channelObject(DM, { kind: 'direct', lastSeq: 3, name: null }))
      : new Response('bad gateway', { status: 502 }),
  );
  const r = await c.direct('bob');
  assert.equal(r.created, true);
  assert.deepEqual(summary(c, DM), {
    channelId: DM,
    name: null,
    metadata: null,
    lastSeq: 3,
    // the channel object has no unread count: every entry above the read watermark, until the next read
    unread: 3,
    readSeq: 0,
    opened: false,
    kind: 'direct',
    visibility: 'private',
    role: 'member',
    memberCount: 2,
    unreadMentions: 0,
    notify: 'all',
    snoozeUntil: null,
  });
});

test('createChannel: POST /v1/me/channels with the JSON body of the options given; resolves to the channel, listed with the user its owner', async () => {
  const c = client();
  const added: string[] = [];
  c.events.on('channelAdded', (id) => added.push(id));
  const made = channelObject('book-club', { name: 'Book club', visibility: 'public', members: ['alice', 'bob', 'carol'], memberCount: 3 });
  const calls = fakeFetch((method) =>
    method === 'POST'
      ? json(201, made)
      : json(200, { channels: [entry('book-club', { name: 'Book club', visibility: 'public', role: 'owner', memberCount: 3 })] }),
  );
  const ch = await c.createChannel({ channelId: 'book-club', name: 'Book club', visibility: 'public', members: ['bob', 'carol'] });
  assert.deepEqual(ch, made);
  assert.deepEqual(
    calls.map((x) => [x.method, x.url, x.auth, x.contentType, x.body]),
    [
      [
        'POST',
        'http://chat.test:8080/v1/me/channels',
        'Bearer tok',
        'application/json',
        { channelId: 'book-club', name: 'Book club', visibility: 'public', members: ['bob', 'carol'] },
      ],
      ['GET', 'http://chat.test:8080/v1/me/channels', 'Bearer tok', undefined, undefined],
    ],
  );
  assert.deepEqual(added, ['book-club']);
  assert.equal(summary(c, 'book-club')?.role, 'owner');
  // no options: an empty object, the server picks the id
  const serverId = '0192f0a4-0000-7000-8000-000000000001';
  const calls2 = fakeFetch((method) =>
    method === 'POST' ? json(201, channelObject(serverId, { members: ['alice'], memberCount: 1 })) : json(200, { channels: [] }),
  );
  const bare = await c.createChannel();
  assert.deepEqual(calls2[0]?.body, {});
  assert.equal(bare.memberCount, 1);
});

test('createChannel: when the list cannot be read after it, the channel is listed from its object, the user its owner', async () => {
  const c = client();
  const made = channelObject('mine', { name: 'Mine', visibility: 'public', members: ['alice'], memberCount: 1 });
  fakeFetch((method) => (method === 'POST' ? json(201, made) : new Response('down', { status: 503 })));
  await c.createChannel({ channelId: 'mine', name: 'Mine', visibility: 'public' });
  const s = summary(c, 'mine');
  assert.deepEqual([s?.name, s?.kind, s?.visibility, s?.role, s?.memberCount], ['Mine', 'group', 'public', 'owner', 1]);
});

test('createChannel: the refusals (taken id, creation off, a bad field) are ChatdErrors; nothing is listed', async () => {
  const c = client();
  fakeFetch(() => json(409, { error: { code: 'conflict', message: 'channel already exists' } }));
  await rejectsWith(c.createChannel({ channelId: 'taken' }), 'conflict');
  fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'users may not create channels here (user_channel_creation)' } }));
  await rejectsWith(c.createChannel({ name: 'x' }), 'forbidden', (e) => {
    assert.match(e.message, /user_channel_creation/);
  });
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'visibility: must be private or public' } }));
  await rejectsWith(c.createChannel({ visibility: 'secret' as 'public' }), 'invalid_field', (e) => {
    assert.equal(e.field, 'visibility');
  });
  assert.deepEqual(c.channelIds(), []);
});

test('the channel object is checked: another shape is `internal`; fields of an earlier server take the contract’s defaults', async () => {
  const c = client();
  for (const body of [
    [],
    'text',
    { members: [], lastSeq: 0, createdAt: 1 },
    { channelId: 'x', members: 'alice', lastSeq: 0, createdAt: 1 },
    { channelId: 'x', members: [1], lastSeq: 0, createdAt: 1 },
    { channelId: 'x', members: [], createdAt: 1 },
    { channelId: 'x', members: [], lastSeq: 0, createdAt: 1, name: 5 },
    { channelId: 'x', members: [], lastSeq: 0, createdAt: 1, metadata: [1] },
    { channelId: 'x', members: [], lastSeq: 0, createdAt: 1, kind: 1 },
    { channelId: 'x', members: [], lastSeq: 0, createdAt: 1, memberCount: '2' },
  ]) {
    fakeFetch(() => json(201, body));
    await rejectsWith(c.createChannel(), 'internal');
  }
  const old = { channelId: 'old', members: ['alice', 'bob'], lastSeq: 4, createdAt: 9 };
  fakeFetch((method) => (method === 'POST' ? json(201, old) : json(200, { channels: [] })));
  assert.deepEqual(await c.createChannel(), {
    channelId: 'old',
    members: ['alice', 'bob'],
    lastSeq: 4,
    createdAt: 9,
    name: null,
    metadata: null,
    kind: 'group',
    visibility: 'private',
    memberCount: 2,
  });
});

test('addMember and setMemberRole: PUT …/members/{userId}, with {"role"} only when a role is given; the channel list is not read', async () => {
  const c = client();
  const calls = fakeFetch((method) => (method === 'PUT' ? noContent() : json(200, { channels: [entry('club', { role: 'owner', memberCount: 3 })] })));
  await c.addMember('club', 'bob');
  await c.addMember('club', 'carol', { role: 'moderator' });
  await c.setMemberRole('club', 'bob', 'owner');
  // (the server's MEMBER frames bring the change to the channel list and the member lists)
  assert.deepEqual(
    calls.map((x) => [x.method, x.url, x.auth, x.contentType, x.body]),
    [
      ['PUT', 'http://chat.test:8080/v1/channels/club/members/bob', 'Bearer tok', undefined, undefined],
      ['PUT', 'http://chat.test:8080/v1/channels/club/members/carol', 'Bearer tok', 'application/json', { role: 'moderator' }],
      ['PUT', 'http://chat.test:8080/v1/channels/club/members/bob', 'Bearer tok', 'application/json', { role: 'owner' }],
    ],
  );
});

test('addMember, setMemberRole, removeMember: refused by the caller’s role (`forbidden`, the server’s words), a bad role (`invalid_field`)', async () => {
  const c = client();
  const calls = fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'needs the role owner in this channel' } }));
  await rejectsWith(c.setMemberRole('club', 'bob', 'moderator'), 'forbidden', (e) => {
    assert.equal(e.message, 'needs the role owner in this channel');
  });
  await rejectsWith(c.removeMember('club', 'olive'), 'forbidden');
  await rejectsWith(c.addMember('club', 'x'), 'forbidden');
  assert.deepEqual(
    calls.map((x) => x.method),
    ['PUT', 'DELETE', 'PUT'],
    'no list read after a refusal',
  );
  fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'role: must be member, moderator or owner' } }));
  await rejectsWith(c.setMemberRole('club', 'bob', 'boss'), 'invalid_field', (e) => {
    assert.equal(e.field, 'role');
  });
  const closed = client();
  closed.close();
  const none = fakeFetch(() => noContent());
  await rejectsWith(closed.addMember('club', 'bob'), 'closed');
  await rejectsWith(closed.setMemberRole('club', 'bob', 'owner'), 'closed');
  await rejectsWith(closed.removeMember('club', 'bob'), 'closed');
  await rejectsWith(closed.direct('bob'), 'closed');
  await rejectsWith(closed.createChannel(), 'closed');
  assert.equal(none.length, 0);
});

test('removeMember: DELETE …/members/{userId} and no read after it; removing oneself takes the channel from the list at once', async () => {
  const c = client();
  fakeFetch(() => json(200, { channels: [entry('club', { role: 'owner', memberCount: 3 })] }));
  await c.refreshChannels();
  const removed: [string, string | undefined][] = [];
  c.events.on('channelRemoved', (id, reason) => removed.push([id, reason]));
  const calls = fakeFetch(() => noContent());
  await c.removeMember('club', 'bob');
  assert.deepEqual(
    calls.map((x) => [x.method, x.url, x.body]),
    [['DELETE', 'http://chat.test:8080/v1/channels/club/members/bob', undefined]],
  );
  assert.deepEqual(removed, []);
  // the user itself: gone at once
  await c.removeMember('club', 'alice');
  assert.deepEqual(removed, [['club', 'removed']]);
  assert.deepEqual(c.channelIds(), []);
});

test('an abort before the request sends nothing and rejects with `aborted`', async () => {
  const c = client();
  const calls = fakeFetch(() => noContent());
  await rejectsWith(c.direct('bob', { signal: AbortSignal.abort() }), 'aborted');
  await rejectsWith(c.createChannel({ signal: AbortSignal.abort() }), 'aborted');
  await rejectsWith(c.addMember('club', 'bob', { signal: AbortSignal.abort() }), 'aborted');
  await rejectsWith(c.removeMember('club', 'bob', { signal: AbortSignal.abort() }), 'aborted');
  assert.equal(calls.length, 0);
});
