// Replies and threads (protocol §14) without a server: `send` with `replyTo` and `threadId`
// (the fields kept in the durable outbox record, sent again with the same clientMsgId on a
// retry, a reconnect and a reload), reply previews and root summaries folded as edits,
// deletes and replies arrive (and not twice when a read already counted them), and the
// thread store: its first read, its live replies taken from the channel's gapless log, each
// once and in order, entries that came while the read was on its way, a read older than
// the channel re-made, older pages, the user's unsent replies, and a refused root.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelLog, cutUtf8, MemoryOutboxStorage, ThreadLog, type WireEntry } from '../../src/index.js';
import { entry, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

function msg(seq: number, senderId: string, over: Partial<WireEntry> = {}): WireEntry {
  return { type: 'MSG_RECV', messageId: `m${seq}`, channelId: 'room', senderId, seq, body: `hello ${seq}`, ts: 1000 + seq, clientMsgId: `c${seq}`, kind: 'message', ...over };
}

const sentOf = (sent: Record<string, unknown>[], type: string): Record<string, unknown>[] => sent.filter((f) => f.type === type);

// ---------------------------------------------------------------- sending

test('send: replyTo and threadId go in MSG_SEND only when given; a retryable refusal and a reconnect send the same frame with the same key', async () => {
  const h = await open([entry('room', { lastSeq: 1 })], undefined, { retryBackoff: { baseMs: 1, maxMs: 2 } });
  try {
    void h.client.send('room', 'plain', { clientMsgId: 'k0' });
    const reply = h.client.send('room', 'a reply', { clientMsgId: 'k1', replyTo: 'm1', threadId: 'm1' });
    await tick(5);
    const first = sentOf(h.ws().sent, 'MSG_SEND');
    assert.deepEqual(first, [
      { type: 'MSG_SEND', channelId: 'room', clientMsgId: 'k0', body: 'plain' },
      { type: 'MSG_SEND', channelId: 'room', clientMsgId: 'k1', body: 'a reply', replyTo: 'm1', threadId: 'm1' },
    ]);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k0', messageId: 'm2', channelId: 'room', seq: 2, ts: 2, duplicate: false });
    // unavailable: retried after the backoff, the same frame
    h.ws().receive({ type: 'ERROR', code: 'unavailable', message: 'storage down', retryable: true, clientMsgId: 'k1' });
    await tick(20);
    const again = sentOf(h.ws().sent, 'MSG_SEND').slice(2);
    assert.deepEqual(again, [{ type: 'MSG_SEND', channelId: 'room', clientMsgId: 'k1', body: 'a reply', replyTo: 'm1', threadId: 'm1' }]);
    // the connection drops before the answer: sent again on the next one, the same frame
    h.ws().drop();
    await tick(20);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room', { lastSeq: 2 })] });
    await tick(5);
    assert.deepEqual(sentOf(h.ws().sent, 'MSG_SEND'), [{ type: 'MSG_SEND', channelId: 'room', clientMsgId: 'k1', body: 'a reply', replyTo: 'm1', threadId: 'm1' }]);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k1', messageId: 'm3', channelId: 'room', seq: 3, ts: 3, duplicate: false });
    assert.equal((await reply).seq, 3);
  } finally {
    h.client.close();
  }
});

test('send: the reply fields are stored with the outbox record; a client loading it after a reload sends them with the same key', async () => {
  const storage = new MemoryOutboxStorage();
  const h1 = await open([entry('room')], undefined, { storage });
  void h1.client.send('room', 'in the thread', { clientMsgId: 'kept', replyTo: 'q', threadId: 'root' }).catch(() => undefined);
  await tick(5);
  const [record] = await storage.load('alice');
  assert.deepEqual(record?.op, { type: 'MSG_SEND', channelId: 'room', body: 'in the thread', replyTo: 'q', threadId: 'root' });
  h1.client.close();
  // the "reload": a new client on the same storage
  const h2 = await open([entry('room')], undefined, { storage });
  try {
    await tick(10);
    assert.deepEqual(sentOf(h2.ws().sent, 'MSG_SEND'), [{ type: 'MSG_SEND', channelId: 'room', clientMsgId: 'kept', body: 'in the thread', replyTo: 'q', threadId: 'root' }]);
  } finally {
    h2.client.close();
  }
});

// ---------------------------------------------------------------- folding

test('previews: an edit of the quoted message changes the preview (cut to 200 bytes), a delete makes it {body:"", deleted:true}; a read already showing them is not folded twice', () => {
  const log = new ChannelLog('room', 'alice');
  log.start(0);
  log.ingest([msg(1, 'bob', { body: 'original' }), msg(2, 'carol', { body: 'quoting', replyTo: 'm1', replyPreview: { senderId: 'bob', body: 'original' } })], false);
  assert.deepEqual(log.message('m2')?.replyPreview, { senderId: 'bob', body: 'original' });
  assert.equal(log.message('m2')?.replyTo, 'm1');
  const long = 'é'.repeat(150); // 300 bytes
  log.ingest([msg(3, 'bob', { kind: 'edit', body: long, targetId: 'm1' })], false);
  const cut = log.message('m2')?.replyPreview;
  assert.equal(cut?.body, 'é'.repeat(100));
  assert.equal(Buffer.byteLength(cut?.body ?? ''), 200);
  log.ingest([msg(4, 'bob', { kind: 'delete', body: '', targetId: 'm1' })], false);
  assert.deepEqual(log.message('m2')?.replyPreview, { senderId: 'bob', body: '', deleted: true });
  // a later edit entry cannot bring a deleted preview back
  assert.equal(log.message('m1')?.deleted, true);

  // a read as of seq 6 already shows the edit at 5: folding it again changes nothing, one at 7 does
  const read = new ChannelLog('room', 'alice');
  read.start(4);
  read.ingest(
    [msg(5, 'bob', { kind: 'edit', body: 'edited', targetId: 'x' }), msg(6, 'carol', { body: 'q', replyTo: 'x', replyPreview: { senderId: 'bob', body: 'edited twice' }, reactions: [] })],
    true,
    6,
  );
  assert.equal(read.message('m6')?.replyPreview?.body, 'edited twice');
  read.ingest([msg(7, 'bob', { kind: 'edit', body: 'third', targetId: 'x' })], false);
  assert.equal(read.message('m6')?.replyPreview?.body, 'third');
});

test('root summaries: a reply newer than the root’s read counts (count, last reply, participants up to 10); a reply deleted lowers replyCount; one the read counted is not counted again', () => {
  const log = new ChannelLog('room', 'alice');
  log.start(0);
  // the root read as of seq 3 with two replies (seqs 2 and 3) counted
  log.ingest(
    [
      msg(1, 'bob', { reactions: [], thread: { replyCount: 2, lastReplyAt: 1003, lastReplySeq: 3, participants: ['carol', 'dave'] } }),
      msg(2, 'carol', { threadId: 'm1', reactions: [] }),
      msg(3, 'dave', { threadId: 'm1', reactions: [] }),
    ],
    true,
    3,
  );
  assert.deepEqual(log.message('m1')?.thread, { replyCount: 2, lastReplyAt: 1003, lastReplySeq: 3, participants: ['carol', 'dave'] });
  // a live reply from a new participant
  log.ingest([msg(4, 'erin', { threadId: 'm1' })], false);
  assert.deepEqual(log.message('m1')?.thread, { replyCount: 3, lastReplyAt: 1004, lastReplySeq: 4, participants: ['carol', 'dave', 'erin'] });
  // one of carol's again: no new participant
  log.ingest([msg(5, 'carol', { threadId: 'm1' })], false);
  assert.equal(log.message('m1')?.thread?.replyCount, 4);
  assert.deepEqual(log.message('m1')?.thread?.participants, ['carol', 'dave', 'erin']);
  // a reply deleted (by its author or a moderator): one fewer; deleting it again changes nothing
  log.ingest([msg(6, 'dave', { kind: 'delete', body: '', targetId: 'm3' })], false);
  assert.equal(log.message('m1')?.thread?.replyCount, 3);
  log.ingest([msg(7, 'dave', { kind: 'delete', body: '', targetId: 'm3' })], false);
  assert.equal(log.message('m1')?.thread?.replyCount, 3);
  // a root with no summary yet gets one from its first reply; participants stop at 10
  log.ingest([msg(8, 'bob')], false);
  for (let i = 0; i < 12; i++) log.ingest([msg(9 + i, `u${i}`, { threadId: 'm8' })], false);
  const t = log.message('m8')?.thread;
  assert.equal(t?.replyCount, 12);
  assert.equal(t?.lastReplySeq, 20);
  assert.deepEqual(t?.participants, ['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'u9']);
  assert.equal(log.message('m9')?.threadId, 'm8');
});

test('root summaries: a reply read already deleted (its delete in the read) names the last reply and its sender but is not counted, as the server reads it', () => {
  const log = new ChannelLog('room', 'alice');
  log.start(0);
  log.ingest([msg(1, 'bob')], false);
  // after a reconnect, a read as of seq 3: carol's reply (2) deleted, and the delete (3)
  log.ingest(
    [
      msg(2, 'carol', { threadId: 'm1', body: '', deleted: true, reactions: [] }),
      msg(3, 'carol', { kind: 'delete', body: '', targetId: 'm2' }),
    ],
    true,
    3,
  );
  assert.deepEqual(log.message('m1')?.thread, { replyCount: 0, lastReplyAt: 1002, lastReplySeq: 2, participants: ['carol'] });
  // a live reply after it counts once
  log.ingest([msg(4, 'dave', { threadId: 'm1' })], false);
  assert.deepEqual(log.message('m1')?.thread, { replyCount: 1, lastReplyAt: 1004, lastReplySeq: 4, participants: ['carol', 'dave'] });
});

test('cutUtf8: at most 200 bytes at a code point boundary (an emoji is not split)', () => {
  assert.equal(cutUtf8('abc'), 'abc');
  assert.equal(cutUtf8('a'.repeat(201)), 'a'.repeat(200));
  const s = `${'a'.repeat(198)}😀`; // 198 + 4 bytes
  assert.equal(cutUtf8(s), 'a'.repeat(198));
  assert.equal(cutUtf8(`${'a'.repeat(196)}😀`), `${'a'.repeat(196)}😀`);
});

// ---------------------------------------------------------------- the thread store

test('thread: opens the channel, reads the newest replies with threadId; live replies of that thread come once and in order, others’ threads and the channel’s messages do not', async () => {
  const h = await open([entry('room', { lastSeq: 3 })], undefined, { pageSize: 20 });
  try {
    const channel = h.client.channel('room');
    await tick();
    const summary = { replyCount: 1, lastReplyAt: 1002, lastReplySeq: 2, participants: ['carol'] };
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(1, 'bob', { reactions: [], thread: summary }), msg(2, 'carol', { threadId: 'm1', reactions: [] }), msg(3, 'bob', { reactions: [] })], hasMore: false, lastSeq: 3 });
    const store = h.client.thread('room', 'm1');
    assert.equal(h.client.thread('room', 'm1').getSnapshot(), store.getSnapshot(), 'one thread store per root');
    assert.equal(store.getSnapshot().status, 'loading');
    const syncs = sentOf(h.ws().sent, 'SYNC');
    assert.deepEqual(syncs[syncs.length - 1], { type: 'SYNC', channelId: 'room', threadId: 'm1', afterSeq: 0, latest: true, limit: 20 });
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(2, 'carol', { threadId: 'm1', reactions: [] })], hasMore: false, lastSeq: 3 });
    let s = store.getSnapshot();
    assert.equal(s.status, 'ready');
    assert.deepEqual(s.messages.map((m) => m.messageId), ['m2']);
    assert.equal(s.root?.messageId, 'm1');
    // live: a reply of m1, a plain message, a reply of m3, a duplicate of m4, another of m1
    h.ws().receive(msg(4, 'bob', { threadId: 'm1' }));
    h.ws().receive(msg(5, 'carol'));
    h.ws().receive(msg(6, 'carol', { threadId: 'm3' }));
    h.ws().receive(msg(4, 'bob', { threadId: 'm1' }));
    h.ws().receive(msg(7, 'dave', { threadId: 'm1' }));
    s = store.getSnapshot();
    assert.deepEqual(s.messages.map((m) => m.messageId), ['m2', 'm4', 'm7']);
    assert.equal(s.root?.thread?.replyCount, 3, 'the root counts the live replies (its read counted one)');
    assert.deepEqual(s.root?.thread?.participants, ['carol', 'bob', 'dave']);
    // edits and deletes of its replies are folded; a reply deleted lowers the root's count
    h.ws().receive(msg(8, 'bob', { kind: 'edit', body: 'changed', targetId: 'm4' }));
    h.ws().receive(msg(9, 'dave', { kind: 'delete', body: '', targetId: 'm7' }));
    s = store.getSnapshot();
    assert.equal(s.messages[1]?.body, 'changed');
    assert.equal(s.messages[2]?.deleted, true);
    assert.equal(s.root?.thread?.replyCount, 2);
    // the channel store holds every entry of the log, the thread's replies too
    assert.deepEqual(channel.getSnapshot().messages.map((m) => m.messageId), ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
  } finally {
    h.client.close();
  }
});

test('thread: replies that come while its read is on the way are taken above the read’s lastSeq, once; a gap in the channel is filled before they show', async () => {
  const h = await open([entry('room', { lastSeq: 1 })]);
  try {
    h.client.channel('room');
    await tick();
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(1, 'bob', { reactions: [] })], hasMore: false, lastSeq: 1 });
    const store = h.client.thread('room', 'm1');
    // two replies come live before the read's answer, which was made when only the first was stored
    h.ws().receive(msg(2, 'carol', { threadId: 'm1' }));
    h.ws().receive(msg(3, 'dave', { threadId: 'm1' }));
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(2, 'carol', { threadId: 'm1', reactions: [] })], hasMore: false, lastSeq: 2 });
    assert.deepEqual(store.getSnapshot().messages.map((m) => m.messageId), ['m2', 'm3']);
    // seq 4 is missed: seq 5 waits for the channel to fill the gap, then both show in order
    h.ws().receive(msg(5, 'carol', { threadId: 'm1' }));
    assert.deepEqual(store.getSnapshot().messages.map((m) => m.messageId), ['m2', 'm3']);
    const fill = sentOf(h.ws().sent, 'SYNC').pop();
    assert.deepEqual(fill, { type: 'SYNC', channelId: 'room', afterSeq: 3, limit: 500 });
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(4, 'bob', { threadId: 'm1', reactions: [] }), msg(5, 'carol', { threadId: 'm1', reactions: [] })], hasMore: false, lastSeq: 5 });
    assert.deepEqual(store.getSnapshot().messages.map((m) => m.messageId), ['m2', 'm3', 'm4', 'm5']);
  } finally {
    h.client.close();
  }
});

test('thread: a read older than what the channel held when the thread opened is made again; older pages with beforeSeq; a refused root fails the store', async () => {
  const h = await open([entry('room', { lastSeq: 10 })], undefined, { pageSize: 2 });
  try {
    h.client.channel('room');
    await tick();
    h.ws().receive({
      type: 'SYNC_BATCH',
      channelId: 'room',
      messages: [msg(9, 'bob', { threadId: 'm1', reactions: [] }), msg(10, 'carol', { threadId: 'm1', reactions: [] })],
      hasMore: true,
      lastSeq: 10,
    });
    const store = h.client.thread('room', 'm1');
    const count = (): number => sentOf(h.ws().sent, 'SYNC').filter((f) => f.threadId === 'm1').length;
    assert.equal(count(), 1);
    // an answer as of seq 8 (< 10, what the channel held): not taken, asked again
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(5, 'dave', { threadId: 'm1', reactions: [] })], hasMore: true, lastSeq: 8 });
    assert.equal(store.getSnapshot().status, 'loading');
    assert.equal(count(), 2);
    h.ws().receive({
      type: 'SYNC_BATCH',
      channelId: 'room',
      messages: [msg(9, 'bob', { threadId: 'm1', reactions: [] }), msg(10, 'carol', { threadId: 'm1', reactions: [] })],
      hasMore: true,
      lastSeq: 10,
    });
    assert.deepEqual(store.getSnapshot().messages.map((m) => m.seq), [9, 10]);
    assert.equal(store.getSnapshot().hasOlder, true);
    const older = store.loadOlder();
    await tick();
    assert.deepEqual(sentOf(h.ws().sent, 'SYNC').pop(), { type: 'SYNC', channelId: 'room', threadId: 'm1', afterSeq: 0, beforeSeq: 9, limit: 2 });
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(3, 'erin', { threadId: 'm1', reactions: [] }), msg(5, 'dave', { threadId: 'm1', reactions: [] })], hasMore: false, lastSeq: 10 });
    assert.equal(await older, false);
    assert.deepEqual(store.getSnapshot().messages.map((m) => m.seq), [3, 5, 9, 10]);
    assert.equal(await store.loadOlder(), false, 'nothing older: no read');

    // a root the server refuses, naming only the message: the store fails with the error
    const bad = h.client.thread('room', 'nope');
    h.ws().receive({ type: 'ERROR', code: 'not_found', message: 'unknown message', retryable: false, messageId: 'nope' });
    assert.equal(bad.getSnapshot().status, 'failed');
    assert.equal(bad.getSnapshot().error?.code, 'not_found');
  } finally {
    h.client.close();
  }
});

test('thread: the user’s reply is pending in the thread (and the channel) until ACKed, then once in the thread with its preview made from the quoted message', async () => {
  const h = await open([entry('room', { lastSeq: 2 })]);
  try {
    const channel = h.client.channel('room');
    await tick();
    const summary = { replyCount: 1, lastReplyAt: 1002, lastReplySeq: 2, participants: ['carol'] };
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(1, 'bob', { reactions: [], thread: summary }), msg(2, 'carol', { threadId: 'm1', reactions: [] })], hasMore: false, lastSeq: 2 });
    const store = h.client.thread('room', 'm1');
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(2, 'carol', { threadId: 'm1', reactions: [] })], hasMore: false, lastSeq: 2 });
    const sent = store.send('me too', { clientMsgId: 'mine', replyTo: 'm2' });
    await tick(5);
    const out = store.getSnapshot().outgoing;
    assert.deepEqual(
      out.map((o) => [o.clientMsgId, o.state, o.threadId, o.replyTo]),
      [['mine', 'pending', 'm1', 'm2']],
    );
    assert.equal(channel.getSnapshot().outgoing[0]?.threadId, 'm1');
    assert.deepEqual(sentOf(h.ws().sent, 'MSG_SEND'), [{ type: 'MSG_SEND', channelId: 'room', clientMsgId: 'mine', body: 'me too', replyTo: 'm2', threadId: 'm1' }]);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'mine', messageId: 'm3', channelId: 'room', seq: 3, ts: 3, duplicate: false });
    await sent;
    const s = store.getSnapshot();
    assert.deepEqual(s.outgoing, []);
    assert.deepEqual(s.messages.map((m) => m.messageId), ['m2', 'm3']);
    assert.deepEqual(s.messages[1]?.replyPreview, { senderId: 'carol', body: 'hello 2' });
    assert.equal(s.root?.thread?.replyCount, 2);
    assert.deepEqual(s.root?.thread?.participants, ['carol', 'alice']);
  } finally {
    h.client.close();
  }
});

test('ThreadLog: a read answered with entries of no thread or another (a server before §14 ignores threadId) takes none of them', () => {
  const t = new ThreadLog('room', 'm1', 'alice', 0);
  assert.equal(t.start([msg(1, 'bob'), msg(2, 'carol', { threadId: 'm9' }), msg(3, 'dave', { threadId: 'm1' })], 3, false), true);
  assert.deepEqual(t.messages().map((m) => m.messageId), ['m3']);
  // nor does the channel's log give it others' entries
  t.channelAppended([msg(4, 'bob'), msg(5, 'carol', { threadId: 'm9' }), msg(6, 'erin', { threadId: 'm1' })]);
  assert.deepEqual(t.messages().map((m) => m.messageId), ['m3', 'm6']);
});
