// Mentions and notification settings (protocol §16) without a server: `send` with
// `mentions` and `mentionAll` (sorted, repeats dropped, kept in the durable outbox record
// and sent again with the same key), `Message.mentionsMe`, the channel list's
// `unreadMentions` (from HELLO, raised by live messages of others that mention the user,
// not by the user's own, lowered by deletes and by reading past the last mention), and the
// settings: `setNotifySettings`, the list's `notify`/`snoozeUntil`, `CHANNEL_SETTINGS`.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { computeUnreadMentions, MemoryOutboxStorage, mentionsUser, type ChannelSummary, type ChatClient, type WireEntry } from '../../src/index.js';
import { entry, fakeFetch, json, open, rejectsWith, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

function msg(seq: number, senderId: string, over: Partial<WireEntry> = {}): WireEntry {
  return { type: 'MSG_RECV', messageId: `m${seq}`, channelId: 'room', senderId, seq, body: `hello ${seq}`, ts: 1000 + seq, clientMsgId: `c${seq}`, kind: 'message', ...over };
}

const sends = (sent: Record<string, unknown>[]): Record<string, unknown>[] => sent.filter((f) => f.type === 'MSG_SEND');

function summary(c: ChatClient, id = 'room'): ChannelSummary {
  const s = c.channelList.getSnapshot().find((x) => x.channelId === id);
  assert.ok(s !== undefined, `${id} listed`);
  return s;
}

// ---------------------------------------------------------------- sending

test('send: mentions (sorted, repeats once) and mentionAll go in MSG_SEND only when set; a reconnect sends the same frame with the same key', async () => {
  const h = await open([entry('room', { lastSeq: 1 })]);
  try {
    void h.client.send('room', 'plain', { clientMsgId: 'k0', mentions: [] });
    const p = h.client.send('room', '@zed @bob', { clientMsgId: 'k1', mentions: ['zed', 'bob', 'zed'], mentionAll: false });
    void h.client.send('room', '@channel', { clientMsgId: 'k2', mentionAll: true });
    await tick(5);
    const first = [
      { type: 'MSG_SEND', channelId: 'room', clientMsgId: 'k0', body: 'plain' },
      { type: 'MSG_SEND', channelId: 'room', clientMsgId: 'k1', body: '@zed @bob', mentions: ['bob', 'zed'] },
      { type: 'MSG_SEND', channelId: 'room', clientMsgId: 'k2', body: '@channel', mentionAll: true },
    ];
    assert.deepEqual(sends(h.ws().sent), first);
    h.ws().drop();
    await tick(20);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room', { lastSeq: 1 })] });
    await tick(5);
    assert.deepEqual(sends(h.ws().sent), first, 'the same frames, the same keys');
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k1', messageId: 'm2', channelId: 'room', seq: 2, ts: 2, duplicate: false });
    assert.equal((await p).seq, 2);
  } finally {
    h.client.close();
  }
});

test('send: the mention fields are stored with the outbox record; a client loading it after a reload sends them with the same key', async () => {
  const storage = new MemoryOutboxStorage();
  const h1 = await open([entry('room')], undefined, { storage });
  void h1.client.send('room', '@bob', { clientMsgId: 'kept', mentions: ['bob'], mentionAll: true }).catch(() => undefined);
  await tick(5);
  const [record] = await storage.load('alice');
  assert.deepEqual(record?.op, { type: 'MSG_SEND', channelId: 'room', body: '@bob', mentions: ['bob'], mentionAll: true });
  h1.client.close();
  const h2 = await open([entry('room')], undefined, { storage });
  try {
    await tick(10);
    assert.deepEqual(sends(h2.ws().sent), [{ type: 'MSG_SEND', channelId: 'room', clientMsgId: 'kept', body: '@bob', mentions: ['bob'], mentionAll: true }]);
  } finally {
    h2.client.close();
  }
});

test('send: a refused mentionAll fails the send with forbidden naming the field', async () => {
  const h = await open([entry('room')]);
  try {
    const p = h.client.send('room', '@channel', { clientMsgId: 'k', mentionAll: true });
    await tick(5);
    h.ws().receive({ type: 'ERROR', code: 'forbidden', message: 'only moderators may mention all', retryable: false, field: 'mentionAll', clientMsgId: 'k', channelId: 'room' });
    await rejectsWith(p, 'forbidden', (e) => { assert.equal(e.field, 'mentionAll'); });
  } finally {
    h.client.close();
  }
});

// ---------------------------------------------------------------- messages

test('Message: mentions, mentionAll and mentionsMe as the entry says; a deleted message mentions no one', async () => {
  const h = await open([entry('room', { lastSeq: 0 })]);
  try {
    const store = h.client.channel('room');
    await tick(5);
    h.ws().receive({
      type: 'SYNC_BATCH',
      channelId: 'room',
      messages: [msg(1, 'bob', { mentions: ['alice', 'carol'], reactions: [] }), msg(2, 'bob', { mentions: ['carol'], reactions: [] }), msg(3, 'olive', { mentionAll: true, reactions: [] }), msg(4, 'bob', { reactions: [] })],
      hasMore: false,
      lastSeq: 4,
    });
    await tick(5);
    const view = (): { mentions: readonly string[]; mentionAll: boolean; mentionsMe: boolean }[] =>
      store.getSnapshot().messages.map((m) => ({ mentions: m.mentions, mentionAll: m.mentionAll, mentionsMe: m.mentionsMe }));
    assert.deepEqual(view(), [
      { mentions: ['alice', 'carol'], mentionAll: false, mentionsMe: true },
      { mentions: ['carol'], mentionAll: false, mentionsMe: false },
      { mentions: [], mentionAll: true, mentionsMe: true },
      { mentions: [], mentionAll: false, mentionsMe: false },
    ]);
    h.ws().receive(msg(5, 'bob', { kind: 'delete', targetId: 'm1', body: '', messageId: 'd5' }));
    await tick(5);
    assert.deepEqual(view()[0], { mentions: [], mentionAll: false, mentionsMe: false });
  } finally {
    h.client.close();
  }
});

test('mentionsUser: mentions holding the user, or mentionAll; not a string that contains the id', () => {
  assert.equal(mentionsUser({ mentions: ['alice'] }, 'alice'), true);
  assert.equal(mentionsUser({ mentionAll: true }, 'alice'), true);
  assert.equal(mentionsUser({ mentions: ['bob'] }, 'alice'), false);
  assert.equal(mentionsUser({ mentions: 'xalicex' as unknown as string[] }, 'alice'), false);
  assert.equal(mentionsUser({}, 'alice'), false);
});

// ---------------------------------------------------------------- unreadMentions

test('unreadMentions: from HELLO, raised by live messages of others that mention the user, not by its own or other messages, lowered by a delete', async () => {
  const h = await open([entry('room', { lastSeq: 5, unread: 4, unreadMentions: 2 }), entry('other')]);
  try {
    assert.equal(summary(h.client).unreadMentions, 2);
    assert.equal(summary(h.client, 'other').unreadMentions, 0);
    h.ws().receive(msg(6, 'bob', { mentions: ['alice'] }));
    h.ws().receive(msg(7, 'olive', { mentionAll: true }));
    h.ws().receive(msg(8, 'alice', { mentions: ['alice'] }));
    h.ws().receive(msg(9, 'bob', { mentions: ['carol'] }));
    h.ws().receive(msg(10, 'bob'));
    await tick();
    assert.equal(summary(h.client).unreadMentions, 4);
    assert.equal(summary(h.client).unread, 8);
    h.ws().receive(msg(11, 'bob', { kind: 'delete', targetId: 'm6', body: '', messageId: 'd11' }));
    await tick();
    assert.equal(summary(h.client).unreadMentions, 3);
  } finally {
    h.client.close();
  }
});

test('unreadMentions: falls to 0 when the user reads past the last mention (an opened channel, markRead), and a new HELLO tells it again', async () => {
  const h = await open([entry('room', { lastSeq: 3, unread: 3, unreadMentions: 2 })]);
  try {
    h.client.channel('room');
    await tick(5);
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(1, 'bob', { mentions: ['alice'], reactions: [] }), msg(2, 'bob', { reactions: [] }), msg(3, 'olive', { mentionAll: true, reactions: [] })], hasMore: false, lastSeq: 3 });
    await tick(5);
    assert.equal(summary(h.client).unreadMentions, 2, 'exact from the log');
    assert.equal(h.client.channel('room').getSnapshot().unreadMentions, 2);
    h.client.markRead('room');
    assert.equal(summary(h.client).unreadMentions, 0);
    assert.equal(h.client.channel('room').getSnapshot().unreadMentions, 0);
    h.ws().receive(msg(4, 'bob', { mentions: ['alice'], reactions: [] }));
    await tick(5);
    assert.equal(summary(h.client).unreadMentions, 1);
  } finally {
    h.client.close();
  }
});

test('computeUnreadMentions: HELLO base, 0 past HELLO lastSeq, at most what is left when the watermark moved, exact from a log that holds everything', () => {
  const base = { readSeq: 0, helloReadSeq: 0, helloLastSeq: 10, helloUnreadMentions: 3, logStarted: false, logLow: 0, countHeldAbove: () => 0, liveMentions: 1 };
  assert.equal(computeUnreadMentions(base), 4);
  assert.equal(computeUnreadMentions({ ...base, readSeq: 10 }), 1);
  assert.equal(computeUnreadMentions({ ...base, readSeq: 9 }), 2);
  assert.equal(computeUnreadMentions({ ...base, helloUnreadMentions: undefined }), 1);
  assert.equal(computeUnreadMentions({ ...base, logStarted: true, logLow: 1, countHeldAbove: (s) => (s === 0 ? 5 : 0) }), 5);
  assert.equal(computeUnreadMentions({ ...base, logStarted: true, logLow: 6, countHeldAbove: (s) => (s === 10 ? 2 : 99) }), 5);
});

// ---------------------------------------------------------------- settings

test('settings: from HELLO (defaults all / null), setNotifySettings sends the change and shows the answer, CHANNEL_SETTINGS from another session folds in', async () => {
  const h = await open([entry('room', { notify: 'mentions', snoozeUntil: 1_796_532_000_000 }), entry('other')]);
  try {
    assert.deepEqual([summary(h.client).notify, summary(h.client).snoozeUntil], ['mentions', 1_796_532_000_000]);
    assert.deepEqual([summary(h.client, 'other').notify, summary(h.client, 'other').snoozeUntil], ['all', null]);
    const calls = fakeFetch(() => json(200, { channelId: 'other', notify: 'none', snoozeUntil: null }));
    const s = await h.client.setNotifySettings('other', { notify: 'none' });
    assert.deepEqual(s, { notify: 'none', snoozeUntil: null });
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.method, 'PUT');
    assert.equal(new URL(calls[0]?.url ?? '').pathname, '/v1/me/channels/other/settings');
    assert.deepEqual(calls[0]?.body, { notify: 'none' });
    assert.equal(summary(h.client, 'other').notify, 'none');
    h.ws().receive({ type: 'CHANNEL_SETTINGS', channelId: 'room', notify: 'all', snoozeUntil: null });
    await tick();
    assert.deepEqual([summary(h.client).notify, summary(h.client).snoozeUntil], ['all', null]);
    // a malformed frame changes nothing
    h.ws().receive({ type: 'CHANNEL_SETTINGS', channelId: 'room', notify: 3, snoozeUntil: null });
    await tick();
    assert.equal(summary(h.client).notify, 'all');
  } finally {
    h.client.close();
  }
});

test('settings: a refusal rejects with its code and field and changes nothing shown', async () => {
  const h = await open([entry('room')]);
  try {
    fakeFetch(() => json(400, { error: { code: 'invalid_field', message: 'notify: must be all, mentions or none' } }));
    await rejectsWith(h.client.setNotifySettings('room', { notify: 'loud' }), 'invalid_field', (e) => { assert.equal(e.field, 'notify'); });
    fakeFetch(() => json(403, { error: { code: 'forbidden', message: 'not a member' } }));
    await rejectsWith(h.client.setNotifySettings('room', { snoozeUntil: 5 }), 'forbidden');
    assert.deepEqual([summary(h.client).notify, summary(h.client).snoozeUntil], ['all', null]);
  } finally {
    h.client.close();
  }
});
