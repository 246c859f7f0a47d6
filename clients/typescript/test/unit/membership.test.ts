// The membership frames of protocol 1.2 §13.3 without a server: MEMBER, CHANNEL_ADDED and
// CHANNEL_REMOVED decoded (forward-compatible: unknown ops and reasons kept, malformed
// frames dropped, never thrown), folded onto a member list (which frames a read already
// shows, by `afterSeq` and `atSeq`), and taken by the client fed frames through a fake
// WebSocket: the channel list, the channel stores, the live member lists (read again after
// a reconnect) and no periodic read of GET /v1/me/channels. `fetch` is replaced by a fake
// for each test (and put back after it).
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ChatClient,
  decodeChannelAddedFrame,
  decodeChannelRemovedFrame,
  decodeMemberFrame,
  foldMemberFrame,
  foldReceipt,
  memberFrameShown,
  parseServerFrame,
  type ChannelSummary,
  type Member,
  type MemberFrame,
  type MemberListSnapshot,
} from '../../src/index.js';
import { entry, json, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

function member(userId: string, over: Partial<Member> = {}): Member {
  return { userId, role: 'member', joinedAt: 1000, deliveredSeq: 0, readSeq: 0, ...over };
}

function frame(over: Partial<MemberFrame> & Pick<MemberFrame, 'userId' | 'op'>): MemberFrame {
  return { type: 'MEMBER', channelId: 'room', afterSeq: 0, ts: 2000, ...over };
}

// ---------------------------------------------------------------- decoding

test('MEMBER is decoded with its optional fields; an unknown op is kept; a frame without a needed field is dropped', () => {
  assert.deepEqual(
    decodeMemberFrame({ type: 'MEMBER', channelId: 'room', userId: 'bob', op: 'join', role: 'member', actorId: 'olive', afterSeq: 1, ts: 5, extra: true }),
    { type: 'MEMBER', channelId: 'room', userId: 'bob', op: 'join', role: 'member', actorId: 'olive', afterSeq: 1, ts: 5 },
  );
  assert.deepEqual(decodeMemberFrame({ channelId: 'room', userId: 'bob', op: 'mute', mutedUntil: null, afterSeq: 0, ts: 5 }), {
    type: 'MEMBER',
    channelId: 'room',
    userId: 'bob',
    op: 'mute',
    mutedUntil: null,
    afterSeq: 0,
    ts: 5,
  });
  // a later version's op, and fields of another type left out
  assert.deepEqual(decodeMemberFrame({ channelId: 'room', userId: 'bob', op: 'promote-to-admiral', role: 7, actorId: false, mutedUntil: 'soon', afterSeq: 2, ts: 5 }), {
    type: 'MEMBER',
    channelId: 'room',
    userId: 'bob',
    op: 'promote-to-admiral',
    afterSeq: 2,
    ts: 5,
  });
  for (const bad of [{}, { channelId: 'room', userId: 'bob', op: 'join' }, { channelId: 1, userId: 'bob', op: 'join', afterSeq: 0 }, { channelId: 'room', op: 'join', afterSeq: 0 }, { channelId: 'room', userId: 'bob', afterSeq: 0 }]) {
    assert.equal(decodeMemberFrame(bad), undefined, JSON.stringify(bad));
  }
});

test('CHANNEL_ADDED and CHANNEL_REMOVED are decoded; an unknown reason is kept; parseServerFrame never throws', () => {
  assert.deepEqual(decodeChannelAddedFrame({ channel: entry('room', { role: 'owner', lastSeq: 4 }) }), {
    type: 'CHANNEL_ADDED',
    channel: entry('room', { role: 'owner', lastSeq: 4 }),
  });
  // watermarks default to 0; fields of another type are left out
  assert.deepEqual(decodeChannelAddedFrame({ channel: { channelId: 'x', lastSeq: 2, kind: 5, name: 3, memberCount: 'many' } }), {
    type: 'CHANNEL_ADDED',
    channel: { channelId: 'x', lastSeq: 2, deliveredSeq: 0, readSeq: 0 },
  });
  assert.equal(decodeChannelAddedFrame({ channel: { lastSeq: 2 } }), undefined);
  assert.equal(decodeChannelAddedFrame({ channel: [] }), undefined);
  assert.deepEqual(decodeChannelRemovedFrame({ channelId: 'room', reason: 'left' }), { type: 'CHANNEL_REMOVED', channelId: 'room', reason: 'left' });
  assert.deepEqual(decodeChannelRemovedFrame({ channelId: 'room', reason: 'expired-by-policy' }), {
    type: 'CHANNEL_REMOVED',
    channelId: 'room',
    reason: 'expired-by-policy',
  });
  assert.deepEqual(decodeChannelRemovedFrame({ channelId: 'room' }), { type: 'CHANNEL_REMOVED', channelId: 'room' });
  assert.equal(decodeChannelRemovedFrame({ reason: 'left' }), undefined);
  for (const text of ['{"type":"MEMBER"}', '{"type":"CHANNEL_ADDED","channel":null}', '{"type":"CHANNEL_REMOVED","channelId":5}', 'not json', '[]', 'null']) {
    assert.equal(parseServerFrame(text), undefined, text);
  }
  assert.deepEqual(parseServerFrame('{"type":"MEMBER","channelId":"r","userId":"u","op":"x","afterSeq":0,"ts":1}'), {
    type: 'MEMBER',
    channelId: 'r',
    userId: 'u',
    op: 'x',
    afterSeq: 0,
    ts: 1,
  });
});

// ---------------------------------------------------------------- folding

test('folding: join adds in byte order, role sets, leave and ban take out; mute sets mutedUntil; unknown ops change nothing', () => {
  const page: readonly Member[] = [member('Zed'), member('alice', { role: 'owner' }), member('carol')];
  const ids = (ms: readonly Member[]): string[] => ms.map((m) => m.userId);
  const joined = foldMemberFrame(page, frame({ userId: 'bob', op: 'join', role: 'member', ts: 77 }));
  assert.deepEqual(ids(joined), ['Zed', 'alice', 'bob', 'carol']);
  assert.deepEqual(joined[2], { userId: 'bob', role: 'member', joinedAt: 77, deliveredSeq: 0, readSeq: 0 });
  assert.deepEqual(ids(foldMemberFrame(page, frame({ userId: 'dave', op: 'join' }))), ['Zed', 'alice', 'carol', 'dave']);
  assert.deepEqual(ids(foldMemberFrame(page, frame({ userId: 'B', op: 'join' }))), ['B', 'Zed', 'alice', 'carol']);
  const promoted = foldMemberFrame(joined, frame({ userId: 'bob', op: 'role', role: 'moderator' }));
  assert.equal(promoted.find((m) => m.userId === 'bob')?.role, 'moderator');
  assert.equal(promoted.find((m) => m.userId === 'bob')?.joinedAt, 77, 'a role change keeps when it joined');
  assert.deepEqual(ids(foldMemberFrame(promoted, frame({ userId: 'bob', op: 'leave' }))), ['Zed', 'alice', 'carol']);
  assert.deepEqual(ids(foldMemberFrame(promoted, frame({ userId: 'carol', op: 'ban' }))), ['Zed', 'alice', 'bob']);
  // nothing to change: the same array
  // a mute is shown on the member (version 1.2, §17); a stranger's changes nothing
  assert.equal(foldMemberFrame(page, frame({ userId: 'carol', op: 'mute', mutedUntil: 99 }))[2]?.mutedUntil, 99);
  assert.equal(foldMemberFrame(page, frame({ userId: 'nobody', op: 'mute', mutedUntil: 99 })), page);
  assert.equal(foldMemberFrame(page, frame({ userId: 'carol', op: 'teleport' })), page);
  assert.equal(foldMemberFrame(page, frame({ userId: 'nobody', op: 'leave' })), page);
  assert.equal(foldMemberFrame(page, frame({ userId: 'alice', op: 'join', role: 'owner' })), page, 'a join already shown');
  // receipts move watermarks forward only
  const read = foldReceipt(page, { userId: 'carol', kind: 'read', seq: 5 });
  assert.deepEqual(read.find((m) => m.userId === 'carol'), member('carol', { deliveredSeq: 5, readSeq: 5 }));
  assert.equal(foldReceipt(read, { userId: 'carol', kind: 'delivered', seq: 3 }), read);
  assert.equal(foldReceipt(read, { userId: 'nobody', kind: 'read', seq: 3 }), read);
});

test('folding frames a read already shows, in order with the ones after them, ends in the same list (changes with no entry between share afterSeq)', () => {
  // bob joined, became moderator and left, carol joined: all at afterSeq 3 (no entry between)
  const stream = [
    frame({ userId: 'bob', op: 'join', role: 'member', afterSeq: 3 }),
    frame({ userId: 'bob', op: 'role', role: 'moderator', afterSeq: 3 }),
    frame({ userId: 'bob', op: 'leave', afterSeq: 3 }),
    frame({ userId: 'carol', op: 'join', role: 'member', afterSeq: 3 }),
  ];
  const truth = stream.reduce<readonly Member[]>(foldMemberFrame, [member('alice')]);
  assert.deepEqual(truth.map((m) => m.userId), ['alice', 'carol']);
  // a read (atSeq 3) made after any prefix of the changes, then every frame from the read's
  // start folded: the frames of the prefix again, then the rest
  for (let shown = 0; shown <= stream.length; shown++) {
    const page = stream.slice(0, shown).reduce<readonly Member[]>(foldMemberFrame, [member('alice')]);
    for (let from = 0; from <= shown; from++) {
      const folded = stream.slice(from).reduce(foldMemberFrame, page);
      assert.deepEqual(folded.map((m) => [m.userId, m.role]), truth.map((m) => [m.userId, m.role]), `read after ${shown}, folded from ${from}`);
    }
  }
  // which frames a read surely shows: afterSeq below its atSeq (equal: not surely)
  assert.equal(memberFrameShown(2, 3), true);
  assert.equal(memberFrameShown(3, 3), false);
  assert.equal(memberFrameShown(4, 3), false);
});

// ---------------------------------------------------------------- the client fed frames

function summary(c: ChatClient, id: string): ChannelSummary | undefined {
  return c.channelList.getSnapshot().find((s) => s.channelId === id);
}

/** Resolves when the member list of `channelId` is `status` (after its read answered). */
async function listIs(c: ChatClient, channelId: string, status: MemberListSnapshot['status']): Promise<MemberListSnapshot> {
  const store = c.memberList(channelId);
  for (let i = 0; i < 200; i++) {
    const s = store.getSnapshot();
    if (s.status === status) return s;
    await tick(1);
  }
  throw new Error(`member list of ${channelId}: ${JSON.stringify(store.getSnapshot())}`);
}

test('CHANNEL_ADDED lists the channel with its entry (channelAdded), and an opened channel reads from there', async () => {
  const h = await open([entry('general')]);
  try {
    const added: string[] = [];
    h.client.events.on('channelAdded', (id) => added.push(id));
    // opened before the user is in it (a link to it, say)
    const room = h.client.channel('room');
    h.ws().receive({ type: 'ERROR', code: 'forbidden', message: 'not a member', retryable: false, channelId: 'room' });
    assert.equal(room.getSnapshot().status, 'removed');
    h.ws().receive({ type: 'CHANNEL_ADDED', channel: entry('room', { lastSeq: 7, unread: 3, role: 'moderator', memberCount: 4, name: 'The room', visibility: 'public' }) });
    assert.deepEqual(added, ['room']);
    assert.deepEqual(h.client.channelIds().sort(), ['general', 'room']);
    assert.deepEqual(summary(h.client, 'room'), {
      channelId: 'room',
      name: 'The room',
      metadata: null,
      lastSeq: 7,
      unread: 3,
      readSeq: 0,
      opened: true,
      kind: 'group',
      visibility: 'public',
      role: 'moderator',
      memberCount: 4,
      unreadMentions: 0,
      notify: 'all',
      snoozeUntil: null,
    });
    assert.equal(room.getSnapshot().removedReason, undefined);
    // the opened channel asks for its newest page up to the entry's lastSeq
    const syncs = h.ws().sent.filter((f) => f.type === 'SYNC' && f.channelId === 'room');
    assert.equal(syncs.length, 2, JSON.stringify(syncs));
    assert.equal(syncs[1]?.latest, true);
    // the same frame again (another route added it again) adds nothing
    h.ws().receive({ type: 'CHANNEL_ADDED', channel: entry('room', { lastSeq: 7 }) });
    assert.deepEqual(added, ['room']);
    assert.deepEqual(h.gets, [], 'no GET /v1/me/channels');
  } finally {
    h.client.close();
  }
});

test('MEMBER: the user’s own role and others’ joins and leaves reach the channel list; every frame is emitted, unknown ops too', async () => {
  const h = await open([entry('room', { memberCount: 2, role: 'member' })]);
  try {
    const seen: string[] = [];
    h.client.events.on('member', (f) => seen.push(`${f.userId} ${f.op}`));
    h.ws().receive(frame({ userId: 'alice', op: 'role', role: 'moderator' }));
    assert.equal(summary(h.client, 'room')?.role, 'moderator');
    h.ws().receive(frame({ userId: 'bob', op: 'join', role: 'member' }));
    h.ws().receive(frame({ userId: 'carol', op: 'join', role: 'member' }));
    assert.equal(summary(h.client, 'room')?.memberCount, 4);
    h.ws().receive(frame({ userId: 'bob', op: 'leave' }));
    h.ws().receive(frame({ userId: 'carol', op: 'ban' }));
    assert.equal(summary(h.client, 'room')?.memberCount, 2);
    h.ws().receive(frame({ userId: 'dave', op: 'levitate' }));
    h.ws().receive('{"type":"MEMBER","channelId":"room"}');
    assert.deepEqual(seen, ['alice role', 'bob join', 'carol join', 'bob leave', 'carol ban', 'dave levitate']);
    assert.equal(summary(h.client, 'room')?.memberCount, 2);
  } finally {
    h.client.close();
  }
});

test('CHANNEL_REMOVED drops the channel with its reason (left, removed, banned, deleted, unknown; none from 1.1: deleted)', async () => {
  const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
  const h = await open(ids.map((id) => entry(id)));
  try {
    const removed: [string, string | undefined][] = [];
    h.client.events.on('channelRemoved', (id, reason) => removed.push([id, reason]));
    const a = h.client.channel('a');
    h.ws().receive({ type: 'CHANNEL_REMOVED', channelId: 'a', reason: 'left' });
    h.ws().receive({ type: 'CHANNEL_REMOVED', channelId: 'b', reason: 'removed' });
    h.ws().receive({ type: 'CHANNEL_REMOVED', channelId: 'c', reason: 'banned' });
    h.ws().receive({ type: 'CHANNEL_REMOVED', channelId: 'd', reason: 'deleted' });
    h.ws().receive({ type: 'CHANNEL_REMOVED', channelId: 'e', reason: 'archived' });
    h.ws().receive({ type: 'CHANNEL_REMOVED', channelId: 'f' });
    h.ws().receive({ type: 'CHANNEL_REMOVED', channelId: 'a', reason: 'deleted' });
    assert.deepEqual(removed, [
      ['a', 'left'],
      ['b', 'removed'],
      ['c', 'banned'],
      ['d', 'deleted'],
      ['e', 'archived'],
      ['f', 'deleted'],
    ]);
    assert.deepEqual(h.client.channelIds(), []);
    assert.deepEqual(h.client.channelList.getSnapshot(), []);
    assert.deepEqual([a.getSnapshot().status, a.getSnapshot().removedReason], ['removed', 'left']);
    // nothing more is sent for it; a refusal of a frame that crossed the removal is no news
    const errors: string[] = [];
    h.client.events.on('error', (e, f) => errors.push(`${e.code} ${f.channelId ?? ''}`));
    const sentBefore = h.ws().sent.length;
    h.client.typing('a');
    assert.equal(h.ws().sent.length, sentBefore, 'no TYPING to a removed channel');
    h.ws().receive({ type: 'ERROR', code: 'forbidden', message: 'not a member of this channel', retryable: false, channelId: 'a' });
    assert.deepEqual(errors, []);
    h.ws().receive({ type: 'ERROR', code: 'forbidden', message: 'not a member of this channel', retryable: false, channelId: 'elsewhere' });
    assert.deepEqual(errors, ['forbidden elsewhere']);
    // added back: listed again, no reason left
    h.ws().receive({ type: 'CHANNEL_ADDED', channel: entry('a') });
    assert.deepEqual(h.client.channelIds(), ['a']);
    assert.equal(a.getSnapshot().removedReason, undefined);
    // a reconnect does not read a removed channel
    h.ws().drop();
    await tick(20);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('a')] });
    assert.deepEqual(
      h.ws().sent.filter((f) => f.type === 'SYNC').map((f) => f.channelId),
      ['a'],
    );
  } finally {
    h.client.close();
  }
});

test('no periodic GET /v1/me/channels, even with the old channelRefreshMs option set', async () => {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the option is ignored now: that is what is tested
  const h = await open([entry('room')], undefined, { channelRefreshMs: 5 });
  try {
    await tick(150);
    assert.deepEqual(h.gets, []);
    // on demand it still reads
    await h.client.refreshChannels();
    assert.deepEqual(h.gets, ['/v1/me/channels']);
  } finally {
    h.client.close();
  }
});

test('memberList: the route’s page with MEMBER frames folded: those received during the read, and later ones not shown by its atSeq', async () => {
  let answer: ((r: Response) => void) | undefined;
  const h = await open([entry('room', { lastSeq: 5 })], () => new Promise<Response>((r) => (answer = r)));
  try {
    const list = h.client.memberList('room');
    assert.equal(list, h.client.memberList('room'), 'one store per channel');
    assert.equal(list.getSnapshot().status, 'loading');
    await tick();
    assert.deepEqual(h.gets, ['/v1/channels/room/members']);
    // while the read is in flight: carol joins (already in the read: afterSeq 4 < atSeq 5),
    // dave joins at afterSeq 5 (maybe in it), then bob becomes moderator (not in it)
    h.ws().receive(frame({ userId: 'carol', op: 'join', role: 'member', afterSeq: 4 }));
    h.ws().receive(frame({ userId: 'dave', op: 'join', role: 'member', afterSeq: 5 }));
    h.ws().receive(frame({ userId: 'bob', op: 'role', role: 'moderator', afterSeq: 6 }));
    assert.ok(answer !== undefined);
    answer(json(200, { members: [member('alice'), member('bob'), member('dave')], hasMore: false, atSeq: 5 }));
    const s = await listIs(h.client, 'room', 'ready');
    assert.deepEqual(s.members.map((m) => [m.userId, m.role]), [
      ['alice', 'member'],
      ['bob', 'moderator'],
      ['dave', 'member'],
    ]);
    assert.equal(s.atSeq, 5);
    // carol's join (afterSeq 4, below the read's atSeq) counts as shown by the read: the
    // read has no carol (she left before it, say), and the frame is not folded onto it
    let notified = 0;
    list.subscribe(() => notified++);
    h.ws().receive(frame({ userId: 'erin', op: 'join', role: 'member', afterSeq: 6 }));
    h.ws().receive(frame({ userId: 'dave', op: 'leave', afterSeq: 7 }));
    h.ws().receive(frame({ userId: 'bob', op: 'leave', afterSeq: 2 }));
    h.ws().receive({ type: 'RECEIPT', channelId: 'room', userId: 'erin', kind: 'read', messageId: 'm', seq: 7, ts: 1 });
    await tick();
    assert.ok(notified > 0);
    assert.deepEqual(list.getSnapshot().members.map((m) => [m.userId, m.role, m.readSeq]), [
      ['alice', 'member', 0],
      ['bob', 'moderator', 0],
      ['erin', 'member', 7],
    ]);
    // another channel's frames change nothing here
    h.ws().receive({ ...frame({ userId: 'alice', op: 'leave', afterSeq: 9 }), channelId: 'other' });
    assert.equal(list.getSnapshot().members.length, 3);
  } finally {
    h.client.close();
  }
});

test('memberList: read again after a reconnect (frames sent while away are lost), and `removed` until the user is added back', async () => {
  const n = { reads: 0 };
  const reads = (): number => n.reads;
  let page: Member[] = [member('alice'), member('bob')];
  const h = await open([entry('room')], () => {
    n.reads++;
    return json(200, { members: page, hasMore: false, atSeq: 0 });
  });
  try {
    const list = h.client.memberList('room');
    list.subscribe(() => undefined);
    await listIs(h.client, 'room', 'ready');
    assert.equal(reads(), 1);
    // bob leaves while the connection is down: no frame
    h.ws().drop();
    page = [member('alice')];
    await tick(20);
    assert.equal(h.sockets.length, 2);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room')] });
    for (let i = 0; i < 100 && list.getSnapshot().members.length !== 1; i++) await tick(1);
    assert.equal(reads(), 2);
    assert.deepEqual(list.getSnapshot().members.map((m) => m.userId), ['alice']);
    // a list nobody listens to is read on its next subscribe, not at once
    const quiet = h.client.memberList('quiet');
    await listIs(h.client, 'quiet', 'ready');
    const before = reads();
    h.ws().drop();
    await tick(20);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's3', serverTs: 0, channels: [entry('room'), entry('quiet')] });
    await tick(5);
    assert.equal(reads(), before + 1, 'only the list with a listener');
    quiet.subscribe(() => undefined);
    await tick(5);
    assert.equal(reads(), before + 2);
    // the user is removed: the list empties, frames of the channel are not folded
    h.ws().receive(frame({ userId: 'alice', op: 'leave', afterSeq: 1 }));
    h.ws().receive({ type: 'CHANNEL_REMOVED', channelId: 'room', reason: 'removed' });
    assert.deepEqual([list.getSnapshot().status, list.getSnapshot().members], ['removed', []]);
    h.ws().receive(frame({ userId: 'zed', op: 'join', afterSeq: 1 }));
    assert.deepEqual(list.getSnapshot().members, []);
    // added back: read again
    page = [member('alice'), member('zed')];
    h.ws().receive({ type: 'CHANNEL_ADDED', channel: entry('room', { lastSeq: 1 }) });
    const back = await listIs(h.client, 'room', 'ready');
    assert.deepEqual(back.members.map((m) => m.userId), ['alice', 'zed']);
  } finally {
    h.client.close();
  }
});

test('memberList: a failed read is `error` with the ChatdError (the members known before stay); refresh reads again', async () => {
  let fail = true;
  const h = await open([entry('room')], () =>
    fail ? json(403, { error: { code: 'forbidden', message: 'not a member of this channel' } }) : json(200, { members: [member('alice')], hasMore: false, atSeq: 0 }),
  );
  try {
    const s = await listIs(h.client, 'room', 'error');
    assert.equal(s.error?.code, 'forbidden');
    assert.deepEqual(s.members, []);
    fail = false;
    h.client.memberList('room').refresh();
    const ok = await listIs(h.client, 'room', 'ready');
    assert.deepEqual(ok.members.map((m) => m.userId), ['alice']);
    assert.equal(ok.error, undefined);
    fail = true;
    h.client.memberList('room').refresh();
    const again = await listIs(h.client, 'room', 'error');
    assert.deepEqual(again.members.map((m) => m.userId), ['alice'], 'what was known stays');
  } finally {
    h.client.close();
  }
});
