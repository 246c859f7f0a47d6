// Retention (protocol §19) without a server: a read's `expired` message folds to deleted and
// expired; a held message becomes so when a later read shows it expired (its quoting
// replies preview it deleted, its root counts one reply fewer); `recheckExpired` reads the
// held window again by SYNC pages and resolves to how many became expired (rejecting
// `unavailable` when the connection drops); `retentionSecs` comes from HELLO,
// CHANNEL_ADDED and CHANNEL_UPDATED (absent: cleared) into `snapshot.moderation`.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelLog, ChatdError, type WireEntry } from '../../src/index.js';
import { entry, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

function msg(seq: number, over: Partial<WireEntry> = {}): WireEntry {
  return { type: 'MSG_RECV', messageId: `m${seq}`, channelId: 'room', senderId: 'bob', seq, body: `hello ${seq}`, ts: 1000 + seq, kind: 'message', reactions: [], ...over };
}
const expiredOf = (e: WireEntry): WireEntry => ({ ...e, body: '', deleted: true, expired: true, reactions: [] });

test('a read’s expired message shows deleted and expired, with no text, mentions or reactions; others are not expired', () => {
  const log = new ChannelLog('room', 'alice');
  log.start(0);
  log.ingest([msg(1, { body: '', deleted: true, expired: true }), msg(2, { deleted: true, body: '' }), msg(3)], true, 3);
  const [a, b, c] = log.messages();
  assert.deepEqual({ deleted: a?.deleted, expired: a?.expired, body: a?.body }, { deleted: true, expired: true, body: '' });
  assert.deepEqual({ deleted: b?.deleted, expired: b?.expired }, { deleted: true, expired: false }, 'a deleted message is not expired');
  assert.deepEqual({ deleted: c?.deleted, expired: c?.expired }, { deleted: false, expired: false });
  // `expired` alone (a server that sent no `deleted`) still reads as deleted
  const other = new ChannelLog('room', 'alice');
  other.start(0);
  other.ingest([msg(1, { expired: true, body: 'left over', mentions: ['alice'] })], true, 1);
  const m = other.message('m1');
  assert.deepEqual({ deleted: m?.deleted, expired: m?.expired, body: m?.body, mentionsMe: m?.mentionsMe }, { deleted: true, expired: true, body: '', mentionsMe: false });
});

test('a held message becomes expired when a later read shows it so: its quoting reply previews it deleted, its root counts one reply fewer', () => {
  const log = new ChannelLog('room', 'alice');
  log.start(0);
  const root = msg(1, { body: 'root', thread: { replyCount: 1, lastReplyAt: 1002, lastReplySeq: 2, participants: ['bob'] } });
  const reply = msg(2, { body: 'in thread', threadId: 'm1' });
  const quote = msg(3, { body: 'quoting', replyTo: 'm2', replyPreview: { senderId: 'bob', body: 'in thread' } });
  log.ingest([root, reply, quote], true, 3);
  assert.equal(log.message('m2')?.expired, false);
  const before = log.messages();

  // a live duplicate (not a read) changes nothing, nor does a read of it not expired
  log.ingest([msg(2, { body: 'in thread', threadId: 'm1' })], false);
  log.ingest([msg(2, { body: 'in thread', threadId: 'm1' })], true, 3);
  assert.equal(log.messages(), before, 'the same array: nothing changed');

  assert.equal(log.reread([root, expiredOf(reply), quote]), 1);
  const m2 = log.message('m2');
  assert.deepEqual({ deleted: m2?.deleted, expired: m2?.expired, body: m2?.body }, { deleted: true, expired: true, body: '' });
  assert.deepEqual(log.message('m3')?.replyPreview, { senderId: 'bob', body: '', deleted: true });
  assert.equal(log.message('m1')?.thread?.replyCount, 0, 'the root counts no reply left');
  assert.notEqual(log.messages(), before, 'a new array for the renderer');
  assert.equal(log.reread([expiredOf(reply)]), 0, 'already expired: nothing more');
  assert.equal(log.message('m1')?.thread?.replyCount, 0, 'counted once');

  // an overlapping SYNC read shows it too (ingest of held entries)
  log.ingest([expiredOf(root)], true, 3);
  assert.equal(log.message('m1')?.expired, true);
});

test('recheckExpired reads the held window by SYNC pages, folds what expired and resolves to how many; a drop rejects it unavailable', async () => {
  const h = await open([entry('room', { lastSeq: 3 })], undefined, { pageSize: 50 });
  try {
    const store = h.client.channel('room');
    await tick();
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(1), msg(2), msg(3)], hasMore: false, lastSeq: 3 });
    assert.deepEqual(
      store.getSnapshot().messages.map((m) => m.body),
      ['hello 1', 'hello 2', 'hello 3'],
    );
    const n = h.client.recheckExpired('room');
    await tick();
    const syncs = h.ws().sent.filter((f) => f.type === 'SYNC');
    assert.deepEqual(syncs[syncs.length - 1], { type: 'SYNC', channelId: 'room', afterSeq: 0, beforeSeq: 4, limit: 3 });
    // a page that stops early (a byte cap): the next page is read from its last seq
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [expiredOf(msg(1)), msg(2)], hasMore: true, lastSeq: 3 });
    await tick();
    const next = h.ws().sent.filter((f) => f.type === 'SYNC');
    assert.deepEqual(next[next.length - 1], { type: 'SYNC', channelId: 'room', afterSeq: 2, beforeSeq: 4, limit: 1 });
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [expiredOf(msg(3))], hasMore: false, lastSeq: 3 });
    assert.equal(await n, 2);
    assert.deepEqual(
      store.getSnapshot().messages.map((m) => [m.body, m.deleted, m.expired]),
      [
        ['', true, true],
        ['hello 2', false, false],
        ['', true, true],
      ],
    );

    const lost = h.client.recheckExpired('room');
    await tick();
    h.ws().drop();
    await assert.rejects(lost, (e: unknown) => e instanceof ChatdError && e.code === 'unavailable');
  } finally {
    h.client.close();
  }
});

test('retentionSecs comes from HELLO, CHANNEL_ADDED and CHANNEL_UPDATED; absent from a rules statement: the server’s applies (undefined)', async () => {
  const h = await open([entry('short', { postingRole: 'member', slowModeMs: 0, retentionSecs: 60 }), entry('plain', { postingRole: 'member', slowModeMs: 0 })]);
  try {
    const short = h.client.channel('short');
    await tick();
    assert.equal(short.getSnapshot().moderation.retentionSecs, 60, 'from HELLO');
    assert.equal(h.client.channel('plain').getSnapshot().moderation.retentionSecs, undefined, 'unset');
    const update = { type: 'CHANNEL_UPDATED', channelId: 'short', name: null, metadata: null, visibility: 'private', postingRole: 'member', slowModeMs: 0 };
    h.ws().receive({ ...update, retentionSecs: 0 });
    assert.equal(short.getSnapshot().moderation.retentionSecs, 0, '0: forever');
    h.ws().receive(update);
    assert.equal(short.getSnapshot().moderation.retentionSecs, undefined, 'absent: cleared (null was set)');
    // a malformed frame (no rules) changes nothing
    h.ws().receive({ type: 'CHANNEL_UPDATED', channelId: 'short', postingRole: 7, slowModeMs: -1, retentionSecs: 5 });
    assert.equal(short.getSnapshot().moderation.retentionSecs, undefined);
    h.ws().receive({ type: 'CHANNEL_ADDED', channel: entry('fresh', { postingRole: 'member', slowModeMs: 0, retentionSecs: 86_400 }) });
    assert.equal(h.client.channel('fresh').getSnapshot().moderation.retentionSecs, 86_400, 'from CHANNEL_ADDED');
  } finally {
    h.client.close();
  }
});
