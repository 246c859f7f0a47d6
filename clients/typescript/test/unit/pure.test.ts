import { test } from 'node:test';
import assert from 'node:assert/strict';
import { indexedDB as fakeIndexedDB } from 'fake-indexeddb';
import {
  applyReceipt,
  backoffDelay,
  computeUnread,
  ChatdError,
  IndexedDBOutboxStorage,
  jwtSubject,
  MemoryOutboxStorage,
  sendOrder,
  TypingThrottle,
  TypingTracker,
  type OutboxRecord,
  type OutboxStorage,
} from '../../src/index.js';

test('backoff grows exponentially, is capped, and is jittered within the upper half', () => {
  const lo = (a: number): number => backoffDelay(a, { baseMs: 100, maxMs: 5000, random: () => 0 });
  const hi = (a: number): number => backoffDelay(a, { baseMs: 100, maxMs: 5000, random: () => 0.999999 });
  assert.deepEqual([0, 1, 2, 3].map(lo), [50, 100, 200, 400]);
  assert.deepEqual([0, 1, 2, 3].map(hi), [100, 200, 400, 800]);
  assert.equal(hi(20), 5000);
  assert.equal(lo(20), 2500);
  const seen = new Set<number>();
  for (let i = 0; i < 50; i++) seen.add(backoffDelay(4, { baseMs: 100 }));
  assert.ok(seen.size > 10, 'jitter spreads retries');
});

test('receipts never move back; read implies delivered', () => {
  let w = { deliveredSeq: 0, readSeq: 0 };
  w = applyReceipt(w, 'delivered', 5);
  assert.deepEqual(w, { deliveredSeq: 5, readSeq: 0 });
  w = applyReceipt(w, 'read', 3);
  assert.deepEqual(w, { deliveredSeq: 5, readSeq: 3 });
  const same = applyReceipt(w, 'delivered', 4);
  assert.equal(same, w, 'an older receipt changes nothing (same object)');
  w = applyReceipt(w, 'read', 9);
  assert.deepEqual(w, { deliveredSeq: 9, readSeq: 9 });
  assert.equal(applyReceipt(w, 'read', 2), w);
});

test('unread: exact from the log, else HELLO, else lastSeq - readSeq', () => {
  const base = {
    readSeq: 10,
    helloReadSeq: 10,
    helloLastSeq: 20,
    helloUnread: 4 as number | undefined,
    logStarted: false,
    logLow: 1,
    logHigh: 0,
    knownLastSeq: 20,
    countHeldAbove: () => 0,
    liveUnread: 0,
  };
  assert.equal(computeUnread(base), 4);
  assert.equal(computeUnread({ ...base, helloUnread: undefined }), 10);
  assert.equal(computeUnread({ ...base, liveUnread: 2 }), 6);
  assert.equal(computeUnread({ ...base, readSeq: 20 }), 0);
  assert.equal(computeUnread({ ...base, logStarted: true, logLow: 5, logHigh: 20, countHeldAbove: (s) => (s === 10 ? 7 : 0) }), 7);
});

test('typing: expiry at expiresAt, stop, throttle of own starts', () => {
  const t = new TypingTracker(6000);
  assert.equal(t.apply({ userId: 'bob', state: 'start', expiresAt: 5000 }, 1000), true);
  assert.equal(t.apply({ userId: 'carol', state: 'start' }, 1000), true);
  const l = t.list();
  assert.deepEqual(l, ['bob', 'carol']);
  assert.equal(t.list(), l, 'same array until a change');
  assert.equal(t.apply({ userId: 'bob', state: 'start', expiresAt: 8000 }, 2000), false, 'a renewal is no visible change');
  assert.equal(t.nextExpiry(), 7000);
  assert.equal(t.expire(7000), true);
  assert.deepEqual(t.list(), ['bob']);
  assert.equal(t.apply({ userId: 'bob', state: 'stop' }, 7100), true);
  assert.deepEqual(t.list(), []);
  assert.equal(t.apply({ userId: 'dave', state: 'start', expiresAt: 10 }, 100), false, 'already expired');

  const th = new TypingThrottle(2000);
  assert.equal(th.onInput(0), true);
  assert.equal(th.onInput(500), false);
  assert.equal(th.onInput(1999), false);
  assert.equal(th.onInput(2000), true);
  assert.equal(th.onStop(), true);
  assert.equal(th.onStop(), false, 'no stop without a start');
  assert.equal(th.onInput(2100), true, 'a new burst starts at once');
  th.onSent();
  assert.equal(th.onStop(), false, 'the server stops the indicator on send');
  // stored with no typing since the send: nothing to send again
  th.onSent();
  assert.equal(th.onStored(2200), false, 'not typing since the send');
  // typed right after sending: the start went out; once the message is stored, again
  th.onSent();
  assert.equal(th.onInput(2300), true, 'the next message starts at once');
  assert.equal(th.onStored(2350), true, 'sent again once the message is stored');
  assert.equal(th.onInput(2400), false, 'and throttled from then');
});

test('errors carry the spec codes and retryability', () => {
  const e = ChatdError.fromFrame({ code: 'rate_limited', message: 'slow', retryable: true, retryAfterMs: 40 });
  assert.equal(e.code, 'rate_limited');
  assert.equal(e.retryable, true);
  assert.equal(e.retryAfterMs, 40);
  assert.equal(new ChatdError('forbidden', 'x').retryable, false);
  assert.equal(new ChatdError('unavailable', 'x').retryable, true);
  assert.equal(e.reason, undefined);
  assert.equal(new ChatdError('forbidden', 'x', { reason: 'dm_policy' }).reason, 'dm_policy');
  assert.ok(e instanceof Error);
  assert.deepEqual(JSON.parse(JSON.stringify(e)), { code: 'rate_limited', message: 'slow', retryable: true, retryAfterMs: 40 });
  // a refusal's reason (version 1.2, §17) is kept, also in the stored copy
  const muted = ChatdError.fromFrame({ code: 'forbidden', message: 'muted', retryable: false, retryAfterMs: 9, reason: 'muted' });
  assert.equal(muted.reason, 'muted');
  assert.deepEqual(muted.toJSON(), { code: 'forbidden', message: 'muted', retryable: false, reason: 'muted', retryAfterMs: 9 });
});

test('jwtSubject reads sub', () => {
  const payload = Buffer.from(JSON.stringify({ sub: 'alice@x', exp: 1 })).toString('base64url');
  assert.equal(jwtSubject(`h.${payload}.s`), 'alice@x');
  assert.equal(jwtSubject('garbage'), undefined);
});

function rec(clientMsgId: string, order: number, userId = 'alice'): OutboxRecord {
  return {
    userId,
    clientMsgId,
    op: { type: 'MSG_SEND', channelId: 'c', body: `b-${clientMsgId}` },
    createdAt: 1,
    order,
    state: 'pending',
    owner: 'tab',
  };
}

async function storageContract(s: OutboxStorage): Promise<void> {
  await s.put(rec('b', 2));
  await s.put(rec('a', 1));
  await s.put(rec('z', 1, 'bob'));
  let all = await s.load('alice');
  assert.deepEqual(
    sendOrder(all).map((r) => r.clientMsgId),
    ['a', 'b'],
  );
  await s.put({ ...rec('a', 1), state: 'failed', error: { code: 'forbidden', message: 'no', retryable: false } });
  all = await s.load('alice');
  const a = all.find((r) => r.clientMsgId === 'a');
  assert.equal(a?.state, 'failed');
  assert.equal(a?.error?.code, 'forbidden');
  await s.delete('alice', 'a');
  await s.delete('alice', 'nope');
  assert.deepEqual(
    (await s.load('alice')).map((r) => r.clientMsgId),
    ['b'],
  );
  assert.equal((await s.load('bob')).length, 1);
}

test('memory outbox storage', async () => {
  await storageContract(new MemoryOutboxStorage());
});

test('IndexedDB outbox storage (fake-indexeddb): records survive a new connection', async () => {
  const name = `t-${Math.random()}`;
  const s = new IndexedDBOutboxStorage(name, fakeIndexedDB);
  await storageContract(s);
  await s.close();
  const again = new IndexedDBOutboxStorage(name, fakeIndexedDB);
  assert.deepEqual(
    (await again.load('alice')).map((r) => r.clientMsgId),
    ['b'],
  );
  await again.close();
});
