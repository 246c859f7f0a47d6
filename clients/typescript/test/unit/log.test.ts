import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelLog, type WireEntry } from '../../src/index.js';

let n = 0;
function e(seq: number, extra: Partial<WireEntry> = {}): WireEntry {
  n++;
  return {
    type: 'MSG_RECV',
    messageId: extra.messageId ?? `id-${seq}`,
    channelId: 'c',
    senderId: extra.senderId ?? 'bob',
    seq,
    body: extra.body ?? `m${seq}`,
    ts: 1000 + seq,
    clientMsgId: `k${seq}-${n}`,
    ...extra,
  };
}

test('entries are handed out once, in seq order, whatever order they arrive in', () => {
  const log = new ChannelLog('c', 'alice');
  log.start(0);
  const out: number[] = [];
  const take = (r: { appended: readonly WireEntry[] }): void => {
    out.push(...r.appended.map((x) => x.seq));
  };
  take(log.ingest([e(1)], false));
  const r = log.ingest([e(3)], false);
  assert.equal(r.gapAfter, 1, 'a gap above seq 1 is reported');
  take(r);
  take(log.ingest([e(3)], false)); // duplicate of a held one
  take(log.ingest([e(2), e(1)], true)); // gap fill, with a duplicate
  take(log.ingest([e(2)], false));
  assert.deepEqual(out, [1, 2, 3]);
  assert.equal(log.high, 3);
  assert.equal(log.ingest([e(4)], false).gapAfter, undefined);
  assert.deepEqual(
    log.messages().map((m) => m.seq),
    [1, 2, 3, 4],
  );
});

test('duplicates are dropped by messageId even under another seq', () => {
  const log = new ChannelLog('c', 'alice');
  log.start(0);
  log.ingest([e(1, { messageId: 'x' })], false);
  const r = log.ingest([e(2, { messageId: 'x' })], false);
  assert.equal(r.appended.length, 0);
  assert.equal(log.messages().length, 1);
});

test('entries before the window is placed are held, then drained in order', () => {
  const log = new ChannelLog('c', 'alice');
  assert.equal(log.ingest([e(12)], false).appended.length, 0);
  log.start(9);
  const r = log.ingest([e(10), e(11)], true);
  assert.deepEqual(
    r.appended.map((x) => x.seq),
    [10, 11, 12],
  );
  assert.equal(log.hasOlder, true);
});

test('older pages are prepended; only the run contiguous with the window counts', () => {
  const log = new ChannelLog('c', 'alice');
  log.start(5);
  log.ingest([e(6), e(7)], true);
  const added = log.prepend([e(2), e(3), e(4), e(5)]);
  assert.deepEqual(
    added.map((x) => x.seq),
    [2, 3, 4, 5],
  );
  assert.equal(log.low, 2);
  assert.equal(log.prepend([e(1), e(2)]).length, 1);
  assert.equal(log.hasOlder, false);
  assert.deepEqual(
    log.messages().map((m) => m.seq),
    [1, 2, 3, 4, 5, 6, 7],
  );
  // a page that does not reach the window is not taken
  const other = new ChannelLog('c', 'alice');
  other.start(10);
  assert.equal(other.prepend([e(3), e(4)]).length, 0);
  assert.equal(other.low, 11);
});

test('edits, deletes and reactions fold into the message state', () => {
  const log = new ChannelLog('c', 'alice');
  log.start(0);
  log.ingest([e(1, { kind: 'message', messageId: 'm1', senderId: 'bob', body: 'hello' })], false);
  const before = log.messages();
  log.ingest([e(2, { kind: 'edit', targetId: 'm1', body: 'hello!', senderId: 'bob' })], false);
  assert.notEqual(log.messages(), before, 'a new array after a change');
  assert.equal(log.message('m1')?.body, 'hello!');
  assert.equal(log.message('m1')?.editedAt, 1002);
  log.ingest(
    [
      e(3, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'add', senderId: 'alice', body: '' }),
      e(4, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'add', senderId: 'carol', body: '' }),
      e(5, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'add', senderId: 'carol', body: '' }), // held: no change
      e(6, { kind: 'reaction', targetId: 'm1', emoji: '🎉', op: 'add', senderId: 'bob', body: '' }),
      e(7, { kind: 'reaction', targetId: 'm1', emoji: '🎉', op: 'remove', senderId: 'carol', body: '' }), // not held
    ],
    false,
  );
  assert.deepEqual(log.message('m1')?.reactions, [
    { emoji: '👍', count: 2, me: true },
    { emoji: '🎉', count: 1, me: false },
  ]);
  log.ingest([e(8, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'remove', senderId: 'alice', body: '' })], false);
  assert.deepEqual(log.message('m1')?.reactions[0], { emoji: '👍', count: 1, me: false });
  const snap = log.messages();
  assert.equal(log.messages(), snap, 'the same array until something changes');
  log.ingest([e(9, { kind: 'delete', targetId: 'm1', body: '', senderId: 'bob' })], false);
  assert.equal(log.message('m1')?.deleted, true);
  assert.equal(log.message('m1')?.body, '');
  log.ingest([e(10, { kind: 'edit', targetId: 'm1', body: 'back?', senderId: 'bob' })], false);
  assert.equal(log.message('m1')?.body, '', 'an edit after a delete does not resurrect the text');
  assert.equal(log.messages().length, 1, 'only message entries are rendered');
});

test('a render-ready read state is not folded twice', () => {
  // page back: the message comes with its state as of the read, which includes seq 3 and 4
  const log = new ChannelLog('c', 'alice');
  log.start(2);
  log.ingest(
    [
      e(3, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'add', senderId: 'carol', body: '' }),
      e(4, { kind: 'edit', targetId: 'm1', body: 'v2', senderId: 'bob' }),
    ],
    true,
  );
  log.prepend([
    e(1, { kind: 'message', messageId: 'm1', body: 'v2', editedAt: 1004, reactions: [{ emoji: '👍', count: 1, me: false }] }),
    e(2, { kind: 'message', messageId: 'm2', reactions: [] }),
  ]);
  assert.deepEqual(log.message('m1')?.reactions, [{ emoji: '👍', count: 1, me: false }]);
  assert.equal(log.message('m1')?.body, 'v2');
  // later entries fold on top of it
  log.ingest([e(5, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'add', senderId: 'dave', body: '' })], false);
  log.ingest([e(6, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'add', senderId: 'alice', body: '' })], false);
  assert.deepEqual(log.message('m1')?.reactions, [{ emoji: '👍', count: 3, me: true }]);
});

test('a modification whose target is older than the window is applied when the target arrives', () => {
  const log = new ChannelLog('c', 'alice');
  log.start(1);
  // v1-style target (no reactions field: state as created) arrives after its edit
  log.ingest([e(2, { kind: 'edit', targetId: 'm1', body: 'new', senderId: 'bob' })], false);
  log.prepend([e(1, { messageId: 'm1', body: 'old' })]);
  assert.equal(log.message('m1')?.body, 'new');
});

test('unread counting skips own and deleted messages', () => {
  const log = new ChannelLog('c', 'alice');
  log.start(0);
  log.ingest([e(1), e(2, { senderId: 'alice' }), e(3, { messageId: 'm3' }), e(4)], false);
  assert.equal(log.countUnreadAbove(0), 3);
  log.ingest([e(5, { kind: 'delete', targetId: 'm3', body: '' })], false);
  assert.equal(log.countUnreadAbove(0), 2);
  assert.equal(log.countUnreadAbove(3), 1);
});

test('a delete drops the edit time and the reactions, as reads return a deleted message', () => {
  // found by the fault harness (chatd-faults --sdk-driver): deleted messages kept their
  // editedAt and reactions where the server reads `editedAt` absent and `reactions: []`
  const log = new ChannelLog('c', 'alice');
  log.start(0);
  log.ingest(
    [
      e(1, { kind: 'message', messageId: 'm1', senderId: 'bob', body: 'helo' }),
      e(2, { kind: 'edit', targetId: 'm1', body: 'hello', senderId: 'bob' }),
      e(3, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'add', senderId: 'alice', body: '' }),
      e(4, { kind: 'delete', targetId: 'm1', body: '', senderId: 'bob' }),
    ],
    false,
  );
  const m = log.message('m1');
  assert.equal(m?.deleted, true);
  assert.equal(m?.body, '');
  assert.equal(m?.editedAt, undefined);
  assert.deepEqual(m?.reactions, []);
});

test('a reaction entry the server marks noop changes no count, also on a read state', () => {
  // found by the fault harness: after a reconnect a message comes from a read with counts
  // only (holders unknown); a no-op add by a holder was counted again, a no-op remove by a
  // non-holder took one away
  const log = new ChannelLog('c', 'alice');
  log.start(0);
  log.ingest([e(1, { kind: 'message', messageId: 'm1', reactions: [{ emoji: '👍', count: 1, me: false }] })], true);
  log.ingest([e(2, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'add', senderId: 'carol', body: '', noop: true })], false);
  assert.deepEqual(log.message('m1')?.reactions, [{ emoji: '👍', count: 1, me: false }]);
  log.ingest([e(3, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'remove', senderId: 'dave', body: '', noop: true })], false);
  assert.deepEqual(log.message('m1')?.reactions, [{ emoji: '👍', count: 1, me: false }]);
  // what a noop taught: carol holds it, so her remove takes it away
  log.ingest([e(4, { kind: 'reaction', targetId: 'm1', emoji: '👍', op: 'remove', senderId: 'carol', body: '' })], false);
  assert.deepEqual(log.message('m1')?.reactions, []);
});

test("a read's states are as of its lastSeq: later entries that came live first are folded", () => {
  // found by the fault harness: after a reconnect a reaction at seq 3 arrived live before
  // the SYNC_BATCH (lastSeq 2) that filled the gap below it; the read's message state was
  // taken as of seq 3 (the highest known), so the reaction was never counted
  const log = new ChannelLog('c', 'alice');
  log.start(0);
  log.ingest([e(3, { kind: 'reaction', targetId: 'm1', emoji: '🎉', op: 'add', senderId: 'carol', body: '' })], false);
  log.ingest([e(1, { kind: 'message', messageId: 'm1', reactions: [] }), e(2, { messageId: 'm2', reactions: [] })], true, 2);
  assert.deepEqual(log.message('m1')?.reactions, [{ emoji: '🎉', count: 1, me: false }]);
  // the same through an older page
  const older = new ChannelLog('c', 'alice');
  older.start(1);
  older.ingest([e(2, { kind: 'reaction', targetId: 'm1', emoji: '🎉', op: 'add', senderId: 'carol', body: '' })], false);
  older.prepend([e(1, { kind: 'message', messageId: 'm1', reactions: [] })], 1);
  assert.deepEqual(older.message('m1')?.reactions, [{ emoji: '🎉', count: 1, me: false }]);
});

test('an entry made through an HTTP route keeps byAdmin and has no clientMsgId (protocol §12, version 1.2)', () => {
  const log = new ChannelLog('c', 'alice');
  log.start(0);
  const posted: WireEntry = { type: 'MSG_RECV', messageId: 'p', channelId: 'c', senderId: 'bob', seq: 1, body: 'from the backend', ts: 1001, byAdmin: true };
  log.ingest([posted, e(2)], false);
  const [byRoute, byFrame] = log.messages();
  assert.equal(byRoute?.byAdmin, true);
  assert.equal(byRoute !== undefined && 'clientMsgId' in byRoute, false);
  assert.equal(byFrame?.byAdmin, false);
  assert.match(byFrame?.clientMsgId ?? '', /^k2-/);
});
