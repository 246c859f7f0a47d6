// What the user sees of a send (README "What a send looks like"): `pending` in `outgoing`
// until the ACK, then the message in `messages` (`outgoing` shows `sent` only while the
// ACKed entry cannot join the window yet); and the `acked` event, for a new entry and for
// a `duplicate: true` answer.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { OutboxRecord, SentEntry, WireEntry } from '../../src/index.js';
import { bob, entry, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);


test('a send: pending in outgoing, then on its ACK in messages (one snapshot moves it); `acked` fires once, after the snapshot shows it, before send resolves', async () => {
  const h = await open([entry('room', { lastSeq: 0 })]);
  try {
    const store = h.client.channel('room');
    await tick(5);
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [], hasMore: false, lastSeq: 0 });
    await tick(5);
    const order: string[] = [];
    const events: { ack: SentEntry; record: OutboxRecord }[] = [];
    h.client.events.on('acked', (ack, record) => {
      const s = store.getSnapshot();
      order.push('acked');
      events.push({ ack, record });
      assert.deepEqual(s.outgoing, [], 'out of outgoing when acked fires');
      assert.deepEqual(
        s.messages.map((m) => [m.body, m.seq, m.clientMsgId]),
        [['hi', 1, 'k1']],
        'in messages when acked fires',
      );
    });
    const p = h.client.send('room', 'hi', { clientMsgId: 'k1' }).then((a) => {
      order.push('resolved');
      return a;
    });
    await tick(5);
    const pending = store.getSnapshot();
    assert.deepEqual(
      pending.outgoing.map((o) => [o.body, o.state, o.seq]),
      [['hi', 'pending', undefined]],
    );
    assert.deepEqual(pending.messages, []);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k1', messageId: 'm1', channelId: 'room', seq: 1, ts: 5, duplicate: false });
    const ack = await p;
    assert.deepEqual(order, ['acked', 'resolved']);
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]?.ack, ack);
    assert.deepEqual(events[0]?.ack, { clientMsgId: 'k1', messageId: 'm1', channelId: 'room', seq: 1, ts: 5, duplicate: false });
    assert.equal(events[0]?.record.op.type, 'MSG_SEND');
    assert.equal(events[0]?.record.clientMsgId, 'k1');
    await tick(5);
    assert.equal(events.length, 1, 'once');
  } finally {
    h.client.close();
  }
});

test('`sent` shows in outgoing while the ACKed entry cannot join the window (entries below it still being read), then it moves to messages', async () => {
  const h = await open([entry('room', { lastSeq: 0 })]);
  try {
    const store = h.client.channel('room');
    await tick(5);
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [], hasMore: false, lastSeq: 0 });
    await tick(5);
    const p = h.client.send('room', 'mine', { clientMsgId: 'k3' });
    await tick(5);
    // bob's two messages were stored first and have not arrived yet
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k3', messageId: 'm3', channelId: 'room', seq: 3, ts: 5, duplicate: false });
    await p;
    const s = store.getSnapshot();
    assert.deepEqual(
      s.outgoing.map((o) => [o.body, o.state, o.seq, o.messageId]),
      [['mine', 'sent', 3, 'm3']],
    );
    assert.deepEqual(s.messages, []);
    const read = h.ws().sent.filter((f) => f.type === 'SYNC').pop();
    assert.equal(read?.afterSeq, 0, 'the gap below it is read');
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [bob(1), bob(2)], hasMore: false, lastSeq: 3 });
    await tick(5);
    const after = store.getSnapshot();
    assert.deepEqual(after.outgoing, []);
    assert.deepEqual(
      after.messages.map((m) => m.body),
      ['bob 1', 'bob 2', 'mine'],
    );
  } finally {
    h.client.close();
  }
});

test('a `duplicate: true` ACK (the server had the key already): `acked` with duplicate true, a success shown once', async () => {
  const h = await open([entry('room', { lastSeq: 1 })]);
  try {
    const store = h.client.channel('room');
    await tick(5);
    const stored: WireEntry = { type: 'MSG_RECV', messageId: 'm1', channelId: 'room', senderId: 'alice', seq: 1, ts: 1, body: 'again', clientMsgId: 'k1', kind: 'message' };
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [stored], hasMore: false, lastSeq: 1 });
    await tick(5);
    const acks: SentEntry[] = [];
    h.client.events.on('acked', (ack) => acks.push(ack));
    const p = h.client.send('room', 'again', { clientMsgId: 'k1' });
    await tick(5);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k1', messageId: 'm1', channelId: 'room', seq: 1, ts: 1, duplicate: true });
    const ack = await p;
    assert.equal(ack.duplicate, true);
    assert.deepEqual(acks, [ack]);
    const s = store.getSnapshot();
    assert.deepEqual(s.outgoing, []);
    assert.deepEqual(
      s.messages.map((m) => m.body),
      ['again'],
      'shown once',
    );
  } finally {
    h.client.close();
  }
});
