// A send that reuses the clientMsgId of a record still in the outbox (a caller retrying an
// unresolved send with the same key, as the protocol asks): with the same channel and body
// it settles on the one ACK like the first; with another it is refused with
// `idempotency_conflict` (the server's answer) and the first goes on. Every promise of the
// key settles: when the first send is aborted, when the record is still being written,
// when it failed, and when another tab of the user holds it. Each wait is bounded, so a
// promise that never settles fails its test instead of hanging the run.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryOutboxStorage, type ChatdError, type OutboxRecord, type OutboxStorage } from '../../src/index.js';
import { entry, open, restoreFetch, tick, type Harness } from '../helpers/fakes.js';

afterEach(restoreFetch);

/** Rejects when `p` has not settled within `ms` (a hang fails the test instead of the run). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what}: not settled within ${ms} ms`));
    }, ms);
  });
  return Promise.race([p, late]).finally(() => {
    clearTimeout(timer);
  });
}

/** Waits (bounded) for `p` to reject with `code`. */
async function rejectsWithin(p: Promise<unknown>, code: string, what: string): Promise<void> {
  await assert.rejects(within(p, 2000, what), (e: unknown) => {
    assert.equal((e as ChatdError).code, code, `${what}: ${String(e)}`);
    return true;
  });
}

/** Memory storage whose puts resolve `putMs` after they were asked (a record being written). */
class SlowPuts implements OutboxStorage {
  readonly disk = new MemoryOutboxStorage();
  constructor(
    private readonly putMs: number,
    private readonly deleteMs = 0,
  ) {}
  load(userId: string): Promise<OutboxRecord[]> {
    return this.disk.load(userId);
  }
  put(record: OutboxRecord): Promise<void> {
    return new Promise((resolve) => {
      setTimeout(() => {
        resolve(this.disk.put(record));
      }, this.putMs);
    });
  }
  delete(userId: string, clientMsgId: string): Promise<void> {
    return new Promise((resolve) => {
      setTimeout(() => {
        resolve(this.disk.delete(userId, clientMsgId));
      }, this.deleteMs);
    });
  }
}

/** Web Locks in one process, as the tabs of a browser share them: exclusive, queued by name. */
class FakeLocks {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly holding = new Set<string>();
  request(name: string, a: { ifAvailable?: boolean } | ((lock: unknown) => Promise<void> | void), b?: (lock: unknown) => Promise<void> | void): Promise<void> {
    const cb = typeof a === 'function' ? a : b;
    if (cb === undefined) return Promise.reject(new Error('no callback'));
    if (typeof a !== 'function' && a.ifAvailable === true && this.holding.has(name)) return Promise.resolve(cb(null)).then(() => undefined);
    const run = (this.tails.get(name) ?? Promise.resolve()).then(async () => {
      this.holding.add(name);
      try {
        await cb({ name });
      } finally {
        this.holding.delete(name);
      }
    });
    this.tails.set(
      name,
      run.catch(() => undefined),
    );
    return run;
  }
  query(): Promise<{ held: { name: string }[] }> {
    return Promise.resolve({ held: [...this.holding].map((name) => ({ name })) });
  }
}

const sends = (h: Harness): { clientMsgId?: string; body?: string; channelId?: string }[] =>
  h.sockets.flatMap((s) => s.sent as { type: string; clientMsgId?: string; body?: string; channelId?: string }[]).filter((f) => (f as { type: string }).type === 'MSG_SEND');

const ack = (h: Harness, clientMsgId: string, seq = 1, duplicate = false): void => {
  h.ws().receive({ type: 'MSG_ACK', clientMsgId, messageId: `m${seq}`, channelId: 'room', seq, ts: 1, duplicate });
};

test('a send reusing the key of one waiting for its ACK (same channel and body) settles on the one ACK; the frame goes out once', async () => {
  const h = await open([entry('room')]);
  try {
    const first = h.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(5);
    const again = h.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(5);
    assert.deepEqual(sends(h).map((f) => f.clientMsgId), ['k']);
    assert.equal(h.client.outbox().length, 1, 'one record for the key');
    ack(h, 'k');
    const [a, b] = await within(Promise.all([first, again]), 2000, 'both sends');
    assert.deepEqual(b, a);
    assert.equal(a.seq, 1);
    assert.deepEqual(h.client.outbox(), []);
  } finally {
    h.client.close();
  }
});

test('a send reusing the key of one still being written settles on its ACK; the frame goes out once', async () => {
  const storage = new SlowPuts(20);
  const h = await open([entry('room')], undefined, { storage });
  try {
    const first = h.client.send('room', 'hi', { clientMsgId: 'k' });
    const again = h.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(50);
    assert.deepEqual(sends(h).map((f) => f.clientMsgId), ['k']);
    ack(h, 'k');
    const [a, b] = await within(Promise.all([first, again]), 2000, 'both sends');
    assert.deepEqual(b, a);
    await tick(5);
    assert.deepEqual(await storage.disk.load('alice'), []);
  } finally {
    h.client.close();
  }
});

test('a send reusing a held key with another body or channel is refused with idempotency_conflict; the first goes on unchanged', async () => {
  const storage = new SlowPuts(20);
  const h = await open([entry('room'), entry('other')], undefined, { storage });
  try {
    const first = h.client.send('room', 'hi', { clientMsgId: 'k' });
    // while the first is being written, then while it waits for its ACK
    await rejectsWithin(h.client.send('room', 'changed', { clientMsgId: 'k' }), 'idempotency_conflict', 'other body, being written');
    await tick(50);
    await rejectsWithin(h.client.send('room', 'changed', { clientMsgId: 'k' }), 'idempotency_conflict', 'other body');
    await rejectsWithin(h.client.send('other', 'hi', { clientMsgId: 'k' }), 'idempotency_conflict', 'other channel');
    await rejectsWithin(h.client.send('room', 'hi', { clientMsgId: 'k', replyTo: 'm0' }), 'idempotency_conflict', 'another option');
    await tick(30);
    assert.deepEqual(
      sends(h).map((f) => [f.clientMsgId, f.channelId, f.body]),
      [['k', 'room', 'hi']],
    );
    assert.deepEqual(
      (await storage.disk.load('alice')).map((r) => (r.op.type === 'MSG_SEND' ? [r.op.channelId, r.op.body] : [])),
      [['room', 'hi']],
      'the stored record is the first send',
    );
    ack(h, 'k');
    assert.equal((await within(first, 2000, 'the first send')).seq, 1);
  } finally {
    h.client.close();
  }
});

test('the first send of a key aborted: a second send of it keeps the record, which is sent and settles the second on its ACK', async () => {
  const h = await open([entry('room')]);
  try {
    const ac = new AbortController();
    const first = h.client.send('room', 'hi', { clientMsgId: 'k', signal: ac.signal });
    await tick(5);
    const again = h.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(5);
    ac.abort();
    await rejectsWithin(first, 'aborted', 'the aborted send');
    await tick(5);
    assert.deepEqual(h.client.outbox().map((r) => r.clientMsgId), ['k'], 'still wanted by the second send');
    ack(h, 'k');
    assert.equal((await within(again, 2000, 'the second send')).seq, 1);
  } finally {
    h.client.close();
  }
});

test('the first send aborted while its record is being written: the record stays in the storage for the second send of the key, which settles', async () => {
  // deletes take 40 ms: one started for the aborted send would remove the record late
  const storage = new SlowPuts(20, 40);
  const h = await open([entry('room')], undefined, { storage });
  try {
    const ac = new AbortController();
    const first = h.client.send('room', 'hi', { clientMsgId: 'k', signal: ac.signal });
    const again = h.client.send('room', 'hi', { clientMsgId: 'k' });
    ac.abort();
    await rejectsWithin(first, 'aborted', 'the aborted send');
    await tick(100);
    assert.deepEqual(sends(h).map((f) => f.clientMsgId), ['k']);
    assert.deepEqual(
      (await storage.disk.load('alice')).map((r) => r.clientMsgId),
      ['k'],
      'the record is in the storage until its ACK',
    );
    ack(h, 'k');
    assert.equal((await within(again, 2000, 'the second send')).seq, 1);
  } finally {
    h.client.close();
  }
});

test('a send of a key made just after its only send was aborted while being written: a new record, kept in the storage, sent, settles', async () => {
  // the aborted record's delete takes 40 ms: it must not remove the new record
  const storage = new SlowPuts(20, 40);
  const h = await open([entry('room')], undefined, { storage });
  try {
    const ac = new AbortController();
    const first = h.client.send('room', 'hi', { clientMsgId: 'k', signal: ac.signal });
    ac.abort();
    await rejectsWithin(first, 'aborted', 'the aborted send');
    await tick(25); // its put is done, its delete under way
    const again = h.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(100);
    assert.deepEqual(sends(h).map((f) => f.clientMsgId), ['k']);
    assert.deepEqual(
      (await storage.disk.load('alice')).map((r) => r.clientMsgId),
      ['k'],
      'the new record is in the storage until its ACK',
    );
    ack(h, 'k');
    assert.equal((await within(again, 2000, 'the new send')).seq, 1);
  } finally {
    h.client.close();
  }
});

test('the second send of a key aborted: only it rejects, the first settles on the ACK; every send aborted: the record is gone', async () => {
  const h = await open([entry('room')]);
  try {
    const first = h.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(5);
    const ac = new AbortController();
    const again = h.client.send('room', 'hi', { clientMsgId: 'k', signal: ac.signal });
    ac.abort();
    await rejectsWithin(again, 'aborted', 'the aborted second send');
    assert.equal(h.client.outbox().length, 1);
    ack(h, 'k');
    assert.equal((await within(first, 2000, 'the first send')).seq, 1);

    const ac1 = new AbortController();
    const ac2 = new AbortController();
    const s1 = h.client.send('room', 'bye', { clientMsgId: 'j', signal: ac1.signal });
    await tick(5);
    const s2 = h.client.send('room', 'bye', { clientMsgId: 'j', signal: ac2.signal });
    await tick(5);
    ac1.abort();
    await rejectsWithin(s1, 'aborted', 'the first of j');
    assert.equal(h.client.outbox().length, 1, 'still wanted by the second send of j');
    ac2.abort();
    await rejectsWithin(s2, 'aborted', 'the second of j');
    await tick(5);
    assert.deepEqual(h.client.outbox(), []);
  } finally {
    h.client.close();
  }
});

test('a send reusing the key of a failed record sends it again (as retry does) and settles on its ACK', async () => {
  const h = await open([entry('room')]);
  try {
    const first = h.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(5);
    h.ws().receive({ type: 'ERROR', code: 'forbidden', message: 'no', retryable: false, clientMsgId: 'k' });
    await rejectsWithin(first, 'forbidden', 'the first send');
    assert.equal(h.client.outbox()[0]?.state, 'failed');
    await rejectsWithin(h.client.send('room', 'changed', { clientMsgId: 'k' }), 'idempotency_conflict', 'other body');
    const again = h.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(5);
    assert.deepEqual(sends(h).map((f) => f.clientMsgId), ['k', 'k']);
    assert.equal(h.client.outbox()[0]?.state, 'pending');
    ack(h, 'k');
    assert.equal((await within(again, 2000, 'the second send')).seq, 1);
  } finally {
    h.client.close();
  }
});

test('two tabs sharing the outbox: a send in one tab reusing the key of the other tab\'s record settles on that tab\'s ACK; another body is refused', async () => {
  // the tabs mirror each other over a BroadcastChannel and tell live tabs by Web Locks, as in
  // a browser (the client uses both when a document is there)
  const g = globalThis as { document?: unknown };
  const hadDocument = 'document' in g;
  g.document ??= {};
  const navBefore = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  Object.defineProperty(globalThis, 'navigator', { value: { locks: new FakeLocks() }, configurable: true, writable: true });
  const storage = new MemoryOutboxStorage();
  const tab1 = await open([entry('room')], undefined, { storage, tabSync: true });
  const tab2 = await open([entry('room')], undefined, { storage, tabSync: true });
  try {
    const first = tab1.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(20);
    assert.deepEqual(tab2.client.outbox().map((r) => r.clientMsgId), ['k'], 'tab 2 mirrors tab 1\'s record');
    const again = tab2.client.send('room', 'hi', { clientMsgId: 'k' });
    await rejectsWithin(tab2.client.send('room', 'changed', { clientMsgId: 'k' }), 'idempotency_conflict', 'other body in tab 2');
    await tick(20);
    assert.deepEqual(sends(tab2), [], 'tab 2 leaves the record to its owner');
    assert.deepEqual(
      (await storage.load('alice')).map((r) => [r.owner === tab1.client.outbox()[0]?.owner, r.op.type === 'MSG_SEND' ? r.op.body : '']),
      [[true, 'hi']],
      'the stored record is still tab 1\'s',
    );
    ack(tab1, 'k');
    const [a, b] = await within(Promise.all([first, again]), 2000, 'the sends of both tabs');
    assert.equal(a.seq, 1);
    assert.equal(b.messageId, a.messageId);
  } finally {
    tab1.client.close();
    tab2.client.close();
    if (!hadDocument) delete g.document;
    if (navBefore !== undefined) Object.defineProperty(globalThis, 'navigator', navBefore);
    else delete (globalThis as { navigator?: unknown }).navigator;
  }
});

/** Sets up two tabs of alice on one disk (puts taking `putMs`), with BroadcastChannel and Web Locks as in a browser. */
async function twoTabs(putMs: number): Promise<{ tab1: Harness; tab2: Harness; disk: MemoryOutboxStorage; done: () => void }> {
  const g = globalThis as { document?: unknown };
  const hadDocument = 'document' in g;
  g.document ??= {};
  const navBefore = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  Object.defineProperty(globalThis, 'navigator', { value: { locks: new FakeLocks() }, configurable: true, writable: true });
  const disk = new MemoryOutboxStorage();
  const onDisk = (): OutboxStorage => ({
    load: (u) => disk.load(u),
    put: (r) =>
      new Promise((resolve) => {
        setTimeout(() => {
          resolve(disk.put(r));
        }, putMs);
      }),
    delete: (u, k) => disk.delete(u, k),
  });
  const tab1 = await open([entry('room')], undefined, { storage: onDisk(), tabSync: true });
  const tab2 = await open([entry('room')], undefined, { storage: onDisk(), tabSync: true });
  await tick(10);
  return {
    tab1,
    tab2,
    disk,
    done: () => {
      tab1.client.close();
      tab2.client.close();
      if (!hadDocument) delete g.document;
      if (navBefore !== undefined) Object.defineProperty(globalThis, 'navigator', navBefore);
      else delete (globalThis as { navigator?: unknown }).navigator;
    },
  };
}

test('two tabs send one key with different bodies at the same moment: one is stored, the other refused with idempotency_conflict; both settle', async () => {
  const { tab1, tab2, done } = await twoTabs(20);
  try {
    const s1 = tab1.client.send('room', 'from tab 1', { clientMsgId: 'k' });
    const s2 = tab2.client.send('room', 'from tab 2', { clientMsgId: 'k' });
    const o1 = within(s1, 2000, 'tab 1').then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    const o2 = within(s2, 2000, 'tab 2').then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    await tick(60);
    // the server stores tab 1's (sent first or alone) and refuses tab 2's copy
    const sent1 = sends(tab1).filter((f) => f.clientMsgId === 'k');
    const sent2 = sends(tab2).filter((f) => f.clientMsgId === 'k');
    assert.deepEqual(
      sent1.map((f) => f.body),
      ['from tab 1'],
    );
    assert.ok(sent2.every((f) => f.body === 'from tab 2'), 'each tab sends only its own body');
    // the refusal of tab 2's copy (when it sent one) before tab 1's ACK
    if (sent2.length > 0) tab2.ws().receive({ type: 'ERROR', code: 'idempotency_conflict', message: 'changed', retryable: false, clientMsgId: 'k' });
    await tick(20);
    ack(tab1, 'k');
    const [r1, r2] = await Promise.all([o1, o2]);
    assert.ok(r1.ok, `tab 1: ${r1.ok ? '' : String(r1.e)}`);
    assert.equal(r1.v.seq, 1);
    assert.ok(!r2.ok, 'tab 2 is refused');
    assert.equal((r2.e as ChatdError).code, 'idempotency_conflict');
  } finally {
    done();
  }
});

test('two tabs send one key (same body) at the same moment and the connections drop before the ACK: one tab sends it again, both settle', async () => {
  const { tab1, tab2, done } = await twoTabs(20);
  try {
    const s1 = tab1.client.send('room', 'hi', { clientMsgId: 'k' });
    const s2 = tab2.client.send('room', 'hi', { clientMsgId: 'k' });
    await tick(60);
    const before = [tab1, tab2].map((t) => sends(t).length);
    for (const tab of [tab1, tab2]) tab.ws().drop();
    await tick(20);
    for (const tab of [tab1, tab2]) tab.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room')] });
    await tick(40);
    const again = [tab1, tab2].filter((t, i) => sends(t).length > (before[i] ?? 0));
    assert.equal(again.length, 1, 'exactly one tab sends the record again');
    const sender = again[0];
    if (sender === undefined) throw new Error('unreachable');
    ack(sender, 'k');
    const [a, b] = await within(Promise.all([s1, s2]), 2000, 'the sends of both tabs');
    assert.equal(a.messageId, 'm1');
    assert.equal(b.messageId, 'm1');
  } finally {
    done();
  }
});
