// A channel's reads that fill what it lacks (the newest page on open, the gap above its
// window): a read the server refuses with a retryable ERROR (`unavailable`: the database
// did not answer within `db_timeout_ms`, as under load or right after a restart) is asked
// again after a backoff, on the same connection; before, the channel stayed short (or
// `loading`) until the next live entry or the next reconnect, and a receiver that got no
// later entry kept lacking the newest ones.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { bob, entry, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);


const unavailable = { type: 'ERROR', code: 'unavailable', message: 'database unavailable', retryable: true, channelId: 'room' };

/** Waits up to `ms` for `fn`, in small steps. */
async function until(fn: () => boolean, ms = 500): Promise<void> {
  const end = Date.now() + ms;
  while (!fn() && Date.now() < end) await tick(2);
}

test('a catch-up read refused `unavailable` is asked again: the receiver gets the newest entries with no later one coming', async () => {
  const h = await open([entry('room', { lastSeq: 0 })], undefined, { retryBackoff: { baseMs: 5, maxMs: 10 } });
  try {
    const store = h.client.channel('room');
    await tick(5);
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [bob(1)], hasMore: false, lastSeq: 1 });
    await tick(5);
    // a reconnect (the server restarted): HELLO says 3 exist, the client reads above 1
    h.ws().drop();
    await until(() => h.sockets.length === 2);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room', { lastSeq: 3 })] });
    const syncs = (): Record<string, unknown>[] => h.ws().sent.filter((f) => f.type === 'SYNC' && f.channelId === 'room');
    await until(() => syncs().length === 1);
    assert.deepEqual(syncs().map((f) => f.afterSeq), [1]);
    h.ws().receive(unavailable);
    await until(() => syncs().length === 2);
    assert.deepEqual(syncs().map((f) => f.afterSeq), [1, 1], 'the refused read is asked again');
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [bob(2), bob(3)], hasMore: false, lastSeq: 3 });
    await tick(5);
    assert.deepEqual(
      store.getSnapshot().messages.map((m) => m.seq),
      [1, 2, 3],
    );
  } finally {
    h.client.close();
  }
});

test('an opening read refused `unavailable` is asked again: the channel does not stay `loading`', async () => {
  const h = await open([entry('room', { lastSeq: 2 })], undefined, { retryBackoff: { baseMs: 5, maxMs: 10 } });
  try {
    const store = h.client.channel('room');
    await tick(5);
    const syncs = (): Record<string, unknown>[] => h.ws().sent.filter((f) => f.type === 'SYNC' && f.channelId === 'room');
    assert.equal(syncs().length, 1);
    h.ws().receive(unavailable);
    await until(() => syncs().length === 2);
    assert.equal(syncs().length, 2, 'the refused read is asked again');
    assert.equal(syncs()[1]?.latest, true);
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [bob(1), bob(2)], hasMore: false, lastSeq: 2 });
    await tick(5);
    const s = store.getSnapshot();
    assert.equal(s.status, 'ready');
    assert.deepEqual(
      s.messages.map((m) => m.seq),
      [1, 2],
    );
  } finally {
    h.client.close();
  }
});

test('a refused read is asked again once per refusal, with backoff, and not after the client closed', async () => {
  const h = await open([entry('room', { lastSeq: 2 })], undefined, { retryBackoff: { baseMs: 40, maxMs: 40 } });
  try {
    const store = h.client.channel('room');
    await tick(5);
    const syncs = (): Record<string, unknown>[] => h.ws().sent.filter((f) => f.type === 'SYNC' && f.channelId === 'room');
    h.ws().receive(unavailable);
    await tick(5);
    assert.equal(syncs().length, 1, 'not at once: after the backoff');
    await until(() => syncs().length === 2);
    assert.equal(syncs().length, 2);
    h.ws().receive(unavailable);
    h.client.close();
    await tick(80);
    assert.equal(syncs().length, 2, 'no read after close');
    assert.equal(store.getSnapshot().status, 'loading');
  } finally {
    h.client.close();
  }
});

test('a thread’s first read refused `unavailable` is asked again, not failed', async () => {
  const h = await open([entry('room', { lastSeq: 1 })], undefined, { retryBackoff: { baseMs: 5, maxMs: 10 } });
  try {
    h.client.channel('room');
    await tick(5);
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [bob(1)], hasMore: false, lastSeq: 1 });
    const store = h.client.thread('room', 'b1');
    const reads = (): Record<string, unknown>[] => h.ws().sent.filter((f) => f.type === 'SYNC' && f.threadId === 'b1');
    assert.equal(reads().length, 1);
    h.ws().receive(unavailable);
    assert.equal(store.getSnapshot().status, 'loading', 'not failed');
    await until(() => reads().length === 2);
    assert.equal(reads().length, 2, 'the refused read is asked again');
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', threadId: 'b1', messages: [], hasMore: false, lastSeq: 1 });
    await tick(5);
    assert.equal(store.getSnapshot().status, 'ready');
  } finally {
    h.client.close();
  }
});
