// A page reloaded right after several sends (the console clears its composer at Enter):
// every record is kept, by the synchronous write-ahead, and sent once by the next page with
// its clientMsgId. The storage here is slow like IndexedDB's strict transactions, and a put
// not finished when the page goes is lost, as it is when a page unloads.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryOutboxStorage, type OutboxRecord, type OutboxStorage, type WriteAheadStore } from '../../src/index.js';
import { entry, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

/** One page's view of a shared disk: puts take `delayMs`; a put not done when the page dies is lost. */
class PageStorage implements OutboxStorage {
  dead = false;
  putsStarted = 0;
  constructor(
    private readonly disk: MemoryOutboxStorage,
    private readonly delayMs = 5,
  ) {}
  load(userId: string): Promise<OutboxRecord[]> {
    return this.disk.load(userId);
  }
  put(record: OutboxRecord): Promise<void> {
    this.putsStarted++;
    return new Promise((resolve) => {
      setTimeout(() => {
        if (this.dead) return; // the page is gone: never written, never answered
        void this.disk.put(record).then(resolve);
      }, this.delayMs);
    });
  }
  delete(userId: string, clientMsgId: string): Promise<void> {
    return this.dead ? new Promise(() => undefined) : this.disk.delete(userId, clientMsgId);
  }
}

/** A synchronous store like `localStorage`, kept across "reloads" (shared by the pages). */
class MapStore implements WriteAheadStore {
  readonly m = new Map<string, string>();
  get length(): number {
    return this.m.size;
  }
  key(i: number): string | null {
    return [...this.m.keys()][i] ?? null;
  }
  getItem(k: string): string | null {
    return this.m.get(k) ?? null;
  }
  setItem(k: string, v: string): void {
    this.m.set(k, v);
  }
  removeItem(k: string): void {
    this.m.delete(k);
  }
}

const sendsOf = (frames: { type: string; clientMsgId?: string }[]): string[] =>
  frames.filter((f) => f.type === 'MSG_SEND').map((f) => f.clientMsgId ?? '');

test('six sends then an immediate reload: the next page sends every one, once, in order, with its clientMsgId', async () => {
  const disk = new MemoryOutboxStorage();
  const wal = new MapStore();
  const page1 = new PageStorage(disk);
  const h1 = await open([entry('room')], undefined, { storage: page1, writeAhead: wal });
  const ids = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];
  for (const id of ids) h1.client.send('room', `body ${id}`, { clientMsgId: id }).catch(() => undefined);
  // the reload: at once, before any put finished
  page1.dead = true;
  h1.client.close();
  const page2 = new PageStorage(disk);
  const h2 = await open([entry('room')], undefined, { storage: page2, writeAhead: wal });
  try {
    await tick(30);
    assert.deepEqual(sendsOf(h2.ws().sent as { type: string; clientMsgId?: string }[]), ids);
    assert.deepEqual(
      (await disk.load('alice')).map((r) => r.clientMsgId).sort(),
      ids,
      'moved from the write-ahead into the storage',
    );
    assert.equal(wal.length, 0, 'write-ahead emptied once stored');
    for (const [i, id] of ids.entries()) {
      h2.ws().receive({ type: 'MSG_ACK', clientMsgId: id, messageId: `m${i}`, channelId: 'room', seq: i + 1, ts: 1, duplicate: false });
    }
    await tick(5);
    assert.deepEqual(await disk.load('alice'), []);
  } finally {
    h2.client.close();
  }
});

test('sends write their records at once (not one after another), and go out in send order', async () => {
  const disk = new MemoryOutboxStorage();
  const wal = new MapStore();
  const page = new PageStorage(disk, 10);
  const h = await open([entry('room')], undefined, { storage: page, writeAhead: wal });
  try {
    const before = page.putsStarted;
    const ids = ['a0', 'a1', 'a2', 'a3'];
    for (const id of ids) h.client.send('room', id, { clientMsgId: id }).catch(() => undefined);
    assert.equal(page.putsStarted - before, ids.length, 'every put started in the send call');
    assert.equal(wal.length, ids.length, 'every record in the write-ahead before send returned');
    await tick(40);
    assert.deepEqual(sendsOf(h.ws().sent as { type: string; clientMsgId?: string }[]), ids);
    assert.equal(wal.length, 0);
  } finally {
    h.client.close();
  }
});

test('a record both in the write-ahead and in the storage (the page went between the two) is sent once', async () => {
  const disk = new MemoryOutboxStorage();
  const wal = new MapStore();
  const page1 = new PageStorage(disk, 0);
  const h1 = await open([entry('room')], undefined, { storage: page1, writeAhead: wal });
  const rec = { userId: 'alice', clientMsgId: 'both', op: { type: 'MSG_SEND' as const, channelId: 'room', body: 'x' }, createdAt: 1, order: 1, state: 'pending' as const, owner: 'gone-tab' };
  await disk.put(rec);
  wal.setItem(`chatd-outbox-wal:alice:both`, JSON.stringify(rec));
  wal.setItem(`chatd-outbox-wal:alice:junk`, '{not json');
  h1.client.close();
  const h2 = await open([entry('room')], undefined, { storage: new PageStorage(disk, 0), writeAhead: wal });
  try {
    await tick(20);
    assert.deepEqual(sendsOf(h2.ws().sent as { type: string; clientMsgId?: string }[]), ['both']);
    assert.equal(wal.length, 0, 'entry moved, junk removed');
  } finally {
    h2.client.close();
  }
});

// ------------------------------------------------- a send made while the outbox loads
// The put starts in the `send` call, so a load running then (the one every HELLO starts)
// may read the record before the send path took its put: the record must still be held
// with the caller's waiters, so `send` settles on its ACK. (In CI the README's Node program,
// `await client.whenOpen(); await client.send(...)`, hung there until killed.)

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

/**
 * A storage whose load reads the disk `loadMs` after it was called, and whose put writes the
 * disk at once but resolves `putMs` later (as an IndexedDB transaction is committed, and
 * seen by a read, before its complete event is handled).
 */
class SlowStorage implements OutboxStorage {
  loads = 0;
  constructor(
    readonly disk: MemoryOutboxStorage,
    private readonly loadMs: number,
    private readonly putMs = 0,
    private readonly deleteMs = 0,
  ) {}
  load(userId: string): Promise<OutboxRecord[]> {
    this.loads++;
    return new Promise((resolve) => {
      setTimeout(() => {
        resolve(this.disk.load(userId));
      }, this.loadMs);
    });
  }
  put(record: OutboxRecord): Promise<void> {
    const written = this.disk.put(record);
    if (this.putMs === 0) return written;
    return new Promise((resolve) => {
      setTimeout(() => {
        resolve(written);
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

test('a send right after the connection opened (the default memory storage, as the README program does) resolves on its ACK', async () => {
  const h = await open([entry('room')]);
  try {
    const p = h.client.send('room', 'hello from Node', { clientMsgId: 'k' });
    await tick(5);
    assert.deepEqual(sendsOf(h.ws().sent as { type: string; clientMsgId?: string }[]), ['k']);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k', messageId: 'm1', channelId: 'room', seq: 1, ts: 1, duplicate: false });
    assert.equal((await within(p, 2000, 'send')).seq, 1);
  } finally {
    h.client.close();
  }
});

test('sends made while a load reads the storage settle on their ACKs, each sent once, in order', async () => {
  // a load reads 5 ms after it started; a put resolves 20 ms after its record is on disk
  const storage = new SlowStorage(new MemoryOutboxStorage(), 5, 20);
  const h = await open([entry('room')], undefined, { storage });
  try {
    const loadsBefore = storage.loads;
    // a new connection: its HELLO starts a load, which reads the storage 5 ms later
    h.ws().drop();
    await tick(10);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room')] });
    assert.equal(storage.loads, loadsBefore + 1, 'a load is running');
    const ids = ['w0', 'w1', 'w2'];
    const ps = ids.map((id) => h.client.send('room', id, { clientMsgId: id }));
    await tick(40);
    assert.deepEqual(sendsOf(h.ws().sent as { type: string; clientMsgId?: string }[]), ids);
    for (const [i, id] of ids.entries()) {
      h.ws().receive({ type: 'MSG_ACK', clientMsgId: id, messageId: `m${i}`, channelId: 'room', seq: i + 1, ts: 1, duplicate: false });
    }
    const acks = await within(Promise.all(ps), 2000, 'the sends');
    assert.deepEqual(
      acks.map((a) => a.seq),
      [1, 2, 3],
    );
    await tick(5);
    assert.deepEqual(await storage.disk.load('alice'), []);
  } finally {
    h.client.close();
  }
});

test('a send aborted while being written is not sent by a load that reads it before its delete is done', async () => {
  // put 5 ms, delete 40 ms: a load reading at 20 ms still finds the aborted record
  const storage = new SlowStorage(new MemoryOutboxStorage(), 10, 5, 40);
  const h = await open([entry('room')], undefined, { storage });
  try {
    const ac = new AbortController();
    const p = h.client.send('room', 'never', { clientMsgId: 'gone', signal: ac.signal });
    ac.abort();
    await assert.rejects(p, (e: unknown) => (e as { code?: string }).code === 'aborted');
    await tick(10);
    h.ws().drop();
    await tick(5);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room')] });
    await tick(60);
    assert.deepEqual(
      h.sockets.flatMap((s) => sendsOf(s.sent as { type: string; clientMsgId?: string }[])),
      [],
      'never sent',
    );
    assert.deepEqual(await storage.disk.load('alice'), []);
  } finally {
    h.client.close();
  }
});
