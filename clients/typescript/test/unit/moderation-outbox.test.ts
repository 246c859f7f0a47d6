// Moderation's refusals and frames on a fake WebSocket: the durable outbox fails a send
// for good on `muted` and `read_only` (never sent again, also not after a reconnect),
// waits out `slow_mode`'s `retryAfterMs` and sends the same clientMsgId again; what the
// refusals and the user's own `MEMBER` `mute` frames tell shows in `snapshot.moderation`,
// and a mute that ends by the clock leaves it by itself.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { foldMemberFrame, type ChatdError, type Member } from '../../src/index.js';
import { entry, json, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

function refusal(clientMsgId: string, code: string, reason: string, retryAfterMs?: number): Record<string, unknown> {
  return {
    type: 'ERROR',
    code,
    message: reason,
    retryable: code === 'rate_limited',
    clientMsgId,
    channelId: 'room',
    reason,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
}

test('outbox: a muted send fails for good with reason muted and is not sent again after a reconnect; the snapshot shows until when', async () => {
  const h = await open([entry('room')], undefined, { now: () => 1_000_000 });
  try {
    const store = h.client.channel('room');
    const sent = h.client.send('room', 'hello', { clientMsgId: 'k1' });
    await tick();
    assert.equal(h.ws().sent.filter((f) => f.type === 'MSG_SEND').length, 1);
    h.ws().receive(refusal('k1', 'forbidden', 'muted', 60_000));
    await assert.rejects(sent, (e: ChatdError) => e.code === 'forbidden' && e.reason === 'muted' && e.retryAfterMs === 60_000);
    const snap = store.getSnapshot();
    assert.equal(snap.moderation.mutedUntil, 1_060_000);
    const out = snap.outgoing.find((o) => o.clientMsgId === 'k1');
    assert.equal(out?.state, 'failed');
    assert.equal(out?.error?.reason, 'muted');
    assert.equal(out?.error?.retryAfterMs, 60_000);
    // a new connection: the failed record is not sent again
    const before = h.sockets.length;
    h.client.reconnect();
    await tick(20);
    assert.ok(h.sockets.length > before);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room')] });
    await tick(20);
    assert.equal(h.ws().sent.filter((f) => f.type === 'MSG_SEND').length, 0, 'no MSG_SEND on the new connection');
  } finally {
    h.client.close();
  }
});

test('outbox: a read_only send fails for good; the snapshot learns the channel is an announcement channel', async () => {
  const h = await open([entry('room')]);
  try {
    const store = h.client.channel('room');
    const sent = h.client.send('room', 'hello', { clientMsgId: 'k1' });
    await tick();
    h.ws().receive(refusal('k1', 'forbidden', 'read_only'));
    await assert.rejects(sent, (e: ChatdError) => e.reason === 'read_only');
    await tick(30);
    assert.equal(h.ws().sent.filter((f) => f.type === 'MSG_SEND').length, 1, 'sent once only');
    assert.equal(store.getSnapshot().moderation.postingRole, 'moderator');
  } finally {
    h.client.close();
  }
});

test('outbox: slow_mode waits retryAfterMs, sends the same clientMsgId again and resolves on its ACK; nextSendAt shows the wait', async () => {
  const h = await open([entry('room')]);
  try {
    const store = h.client.channel('room');
    const sent = h.client.send('room', 'second', { clientMsgId: 'k2' });
    await tick();
    const t0 = Date.now();
    h.ws().receive(refusal('k2', 'rate_limited', 'slow_mode', 150));
    const next = store.getSnapshot().moderation.nextSendAt;
    assert.ok(next !== undefined && next >= t0 + 150 && next <= Date.now() + 150, `nextSendAt ${String(next)}`);
    await tick(60);
    assert.equal(h.ws().sent.filter((f) => f.type === 'MSG_SEND').length, 1, 'not sent again before retryAfterMs');
    await tick(250);
    const sends = h.ws().sent.filter((f) => f.type === 'MSG_SEND');
    assert.equal(sends.length, 2, 'sent again after retryAfterMs');
    assert.equal(sends[1]?.clientMsgId, 'k2', 'with the same clientMsgId');
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k2', messageId: 'm2', channelId: 'room', seq: 2, ts: 5, duplicate: false });
    assert.equal((await sent).seq, 2);
    assert.equal(store.getSnapshot().moderation.nextSendAt, undefined, 'the wait is over');
  } finally {
    h.client.close();
  }
});

test('snapshot: the user’s own MEMBER mute frames set and lift its mute; others’ change only the member list; an ended mute leaves by itself', async () => {
  const h = await open([entry('room')]);
  try {
    const store = h.client.channel('room');
    const first = store.getSnapshot();
    assert.deepEqual(first.moderation, { postingRole: undefined, slowModeMs: undefined, retentionSecs: undefined, mutedUntil: undefined, nextSendAt: undefined });
    const until = Date.now() + 3_600_000;
    h.ws().receive({ type: 'MEMBER', channelId: 'room', userId: 'bob', op: 'mute', mutedUntil: until, actorId: 'olive', afterSeq: 1, ts: 1 });
    assert.equal(store.getSnapshot().moderation, first.moderation, 'another member’s mute: the same object');
    h.ws().receive({ type: 'MEMBER', channelId: 'room', userId: 'alice', op: 'mute', mutedUntil: until, actorId: 'olive', afterSeq: 1, ts: 2 });
    assert.equal(store.getSnapshot().moderation.mutedUntil, until);
    h.ws().receive({ type: 'MEMBER', channelId: 'room', userId: 'alice', op: 'mute', mutedUntil: null, actorId: 'olive', afterSeq: 1, ts: 3 });
    assert.equal(store.getSnapshot().moderation.mutedUntil, undefined);
    // a short mute ends by the clock: the snapshot changes without a frame
    h.ws().receive({ type: 'MEMBER', channelId: 'room', userId: 'alice', op: 'mute', mutedUntil: Date.now() + 40, actorId: 'olive', afterSeq: 1, ts: 4 });
    const muted = store.getSnapshot();
    assert.ok(muted.moderation.mutedUntil !== undefined);
    await tick(120);
    const after = store.getSnapshot();
    assert.notEqual(after, muted, 'a new snapshot');
    assert.equal(after.moderation.mutedUntil, undefined);
  } finally {
    h.client.close();
  }
});

test('foldMemberFrame: mute sets and lifts a member’s mutedUntil; for a stranger nothing changes', () => {
  const bob: Member = { userId: 'bob', role: 'member', joinedAt: 1, deliveredSeq: 0, readSeq: 0 };
  const list: readonly Member[] = [bob];
  const frame = { type: 'MEMBER' as const, channelId: 'room', userId: 'bob', op: 'mute', afterSeq: 1, ts: 2 };
  const muted = foldMemberFrame(list, { ...frame, mutedUntil: 99 });
  assert.deepEqual(muted, [{ ...bob, mutedUntil: 99 }]);
  assert.equal(foldMemberFrame(muted, { ...frame, mutedUntil: 99 }), muted, 'the same mute: unchanged');
  assert.deepEqual(foldMemberFrame(muted, { ...frame, mutedUntil: null }), [bob]);
  assert.equal(foldMemberFrame(list, { ...frame, userId: 'zed', mutedUntil: 5 }), list);
});

test('snapshot: a members read showing the user’s mutedUntil sets it, one without lifts it, an older read than the last mute frame changes nothing; an edit refused muted (by messageId) tells its record’s channel', async () => {
  let muted: number | undefined = Date.now() + 600_000;
  let atSeq = 0;
  const h = await open([entry('room'), entry('other')], () =>
    json(200, { members: [{ userId: 'alice', role: 'member', joinedAt: 1, deliveredSeq: 0, readSeq: 0, ...(muted !== undefined ? { mutedUntil: muted } : {}) }], hasMore: false, atSeq }),
  );
  try {
    const room = h.client.channel('room');
    const until = muted;
    await h.client.members('room');
    assert.equal(room.getSnapshot().moderation.mutedUntil, until);
    muted = undefined;
    await h.client.members('room');
    assert.equal(room.getSnapshot().moderation.mutedUntil, undefined);
    // a mute frame after seq 3, then a read at atSeq 3 that does not show it (it was on its way): the frame wins
    const later = Date.now() + 900_000;
    h.ws().receive({ type: 'MEMBER', channelId: 'room', userId: 'alice', op: 'mute', mutedUntil: later, actorId: 'olive', afterSeq: 3, ts: 9 });
    atSeq = 3;
    await h.client.members('room');
    assert.equal(room.getSnapshot().moderation.mutedUntil, later, 'an older read does not undo the mute');
    atSeq = 4;
    await h.client.members('room');
    assert.equal(room.getSnapshot().moderation.mutedUntil, undefined, 'a read that shows the frame is taken');

    const other = h.client.channel('other');
    const edit = h.client.edit('other', 'm1', 'changed', { clientMsgId: 'e1' });
    await tick();
    h.ws().receive({ type: 'ERROR', code: 'forbidden', message: 'muted', retryable: false, clientMsgId: 'e1', messageId: 'm1', reason: 'muted', retryAfterMs: 30_000 });
    await assert.rejects(edit, (e: ChatdError) => e.reason === 'muted');
    const m = other.getSnapshot().moderation.mutedUntil;
    assert.ok(m !== undefined && m > Date.now() + 25_000, `mutedUntil ${String(m)}`);
    assert.equal(room.getSnapshot().moderation.mutedUntil, undefined, 'not another channel');
  } finally {
    h.client.close();
  }
});
