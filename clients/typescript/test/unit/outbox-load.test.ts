// An outbox storage whose `load` fails after `start` (the loads each new connection
// makes): the client goes on (its own records are sent), and no rejection is left
// unhandled (in Node that would end the process).
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryOutboxStorage, type OutboxRecord } from '../../src/index.js';
import { entry, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

class FailingLater extends MemoryOutboxStorage {
  loads = 0;
  override load(userId: string): Promise<OutboxRecord[]> {
    this.loads++;
    return this.loads === 1 ? super.load(userId) : Promise.reject(new Error('disk gone'));
  }
}

test('a load that fails after start (on HELLO): no unhandled rejection, and a send still goes out and resolves', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown): void => {
    unhandled.push(e);
  };
  process.on('unhandledRejection', onUnhandled);
  const storage = new FailingLater();
  const h = await open([entry('room', { lastSeq: 0 })], undefined, { storage });
  try {
    await tick(20);
    assert.ok(storage.loads >= 2, `loads: ${storage.loads}`);
    const p = h.client.send('room', 'still works', { clientMsgId: 'k1' });
    await tick(5);
    assert.ok(h.ws().sent.some((f) => f.type === 'MSG_SEND' && f.clientMsgId === 'k1'));
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k1', messageId: 'm1', channelId: 'room', seq: 1, ts: 1, duplicate: false });
    assert.equal((await p).seq, 1);
    // a reconnect loads again (and fails again)
    h.ws().drop();
    await tick(20);
    h.ws().receive({ type: 'HELLO', userId: 'alice', sessionId: 's2', serverTs: 0, channels: [entry('room', { lastSeq: 1 })] });
    await tick(20);
    assert.ok(storage.loads >= 3, `loads: ${storage.loads}`);
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    h.client.close();
  }
});
