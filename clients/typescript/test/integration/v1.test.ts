// Integration tests against the real chatd binary (version 1 protocol), on SQLite and,
// when CHATD_TEST_DATABASE_URL is set, PostgreSQL.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, MemoryOutboxStorage, type ChatClient } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor, sleep } from '../helpers/server.js';
import { counter, makeClient, shown, waitForBodies } from '../helpers/clients.js';
import { CuttableProxy } from '../helpers/proxy.js';

for (const store of storeKinds()) {
  describe(`v1 protocol through the SDK (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const proxies: CuttableProxy[] = [];
    const trackProxy = (p: CuttableProxy): CuttableProxy => {
      proxies.push(p);
      return p;
    };
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    before(async () => {
      server = await ChatdServer.start({ store });
    });
    after(async () => {
      for (const c of clients) c.close();
      for (const p of proxies) await p.close().catch(() => undefined);
      await server.dispose();
    });

    test('send resolves on ACK; the other member sees each message once, in order', async () => {
      await server.createChannel('r1', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      const a = alice.channel('r1');
      const b = bob.channel('r1');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      const acks = await Promise.all([1, 2, 3, 4, 5].map((i) => alice.send('r1', `m${i}`)));
      assert.deepEqual(
        acks.map((x) => x.seq),
        [1, 2, 3, 4, 5],
      );
      assert.ok(acks.every((x) => !x.duplicate));
      await waitForBodies(b, ['m1', 'm2', 'm3', 'm4', 'm5']);
      assert.deepEqual(shown(b), ['m1', 'm2', 'm3', 'm4', 'm5']);
      await waitForBodies(a, ['m1', 'm2', 'm3', 'm4', 'm5']);
      assert.deepEqual(shown(a), ['m1', 'm2', 'm3', 'm4', 'm5'], 'the sender sees its own messages once');
      const snap = b.getSnapshot();
      assert.equal(b.getSnapshot(), snap, 'getSnapshot returns the same object until a change');
    });

    test('a retry with the same clientMsgId is a duplicate success, shown once', async () => {
      await server.createChannel('r2', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      const b = bob.channel('r2');
      const key = crypto.randomUUID();
      const first = await alice.send('r2', 'once', { clientMsgId: key });
      const again = await alice.send('r2', 'once', { clientMsgId: key });
      assert.equal(first.duplicate, false);
      assert.equal(again.duplicate, true);
      assert.equal(again.messageId, first.messageId);
      assert.equal(again.seq, first.seq);
      await waitForBodies(b, ['once']);
      await sleep(200);
      assert.deepEqual(shown(b), ['once']);
      assert.equal((await server.history('r2')).length, 1);
    });

    test('non-retryable errors give a failed state with the code; retry and discard', async () => {
      await server.createChannel('r3', ['alice']);
      const alice = track(await makeClient(server, 'alice'));
      const a = alice.channel('notmine');
      const err = await alice.send('notmine', 'x').then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof ChatdError);
      assert.equal(err.code, 'forbidden');
      await waitFor(
        () => a.getSnapshot().outgoing.some((o) => o.state === 'failed'),
        () => 'failed state',
      );
      const failed = a.getSnapshot().outgoing[0];
      assert.equal(failed?.error?.code, 'forbidden');
      const big = await alice.send('r3', 'x'.repeat(16385)).catch((e: unknown) => e);
      assert.ok(big instanceof ChatdError);
      assert.equal(big.code, 'body_too_large');
      // the failed message is joined to the channel by an admin: retry succeeds with the same key
      await server.createChannel('notmine', ['alice']);
      const key = failed?.clientMsgId ?? '';
      const ok = await alice.retry(key);
      assert.equal(ok.clientMsgId, key);
      assert.equal(ok.seq, 1);
      await alice.discard(alice.outbox()[0]?.clientMsgId ?? '');
      assert.equal(alice.outbox().length, 0);
      await waitFor(
        () => shown(a).join() === 'x',
        () => JSON.stringify(shown(a)),
      );
    });

    test('opens on the newest entries and pages back to the start', async () => {
      await server.createChannel('r4', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      await Promise.all(Array.from({ length: 120 }, (_, i) => alice.send('r4', `p${i + 1}`)));
      const bob = track(await makeClient(server, 'bob', { pageSize: 50 }));
      const b = bob.channel('r4');
      await waitFor(
        () => b.getSnapshot().status === 'ready' && b.getSnapshot().messages.length === 50,
        () => `first page: ${b.getSnapshot().messages.length}`,
      );
      assert.equal(b.getSnapshot().messages[0]?.seq, 71);
      assert.equal(b.getSnapshot().hasOlder, true);
      assert.equal(await b.loadOlder(), true);
      assert.equal(b.getSnapshot().messages[0]?.seq, 21);
      assert.equal(await b.loadOlder(), false);
      const seqs = b.getSnapshot().messages.map((m) => m.seq);
      assert.deepEqual(
        seqs,
        Array.from({ length: 120 }, (_, i) => i + 1),
      );
      assert.equal(b.getSnapshot().unread, 120, 'nothing read yet');
      b.markRead();
      await waitFor(
        () => b.getSnapshot().unread === 0,
        () => 'unread 0',
      );
    });

    test('receipts move monotonic watermarks on the sender', async () => {
      await server.createChannel('r5', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob', { autoDelivered: false }));
      const a = alice.channel('r5');
      const b = bob.channel('r5');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      for (let i = 1; i <= 3; i++) await alice.send('r5', `r${i}`);
      await waitForBodies(b, ['r1', 'r2', 'r3']);
      b.markRead();
      await waitFor(
        () => a.getSnapshot().receipts.bob?.readSeq === 3,
        () => JSON.stringify(a.getSnapshot().receipts),
      );
      assert.equal(a.getSnapshot().receipts.bob?.deliveredSeq, 3, 'read implies delivered');
      b.markRead(); // nothing moves: no frame, nothing changes
      await sleep(200);
      assert.equal(a.getSnapshot().receipts.bob?.readSeq, 3);
      assert.equal(b.getSnapshot().readSeq, 3);
    });

    test('unread count after a reconnect, from HELLO', async () => {
      await server.createChannel('r6', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      for (let i = 1; i <= 4; i++) await alice.send('r6', `u${i}`);
      const bob = track(await makeClient(server, 'bob'));
      await bob.whenOpen();
      assert.equal(bob.channel('r6').getSnapshot().unread, 4);
    });

    test('a dropped connection during a burst: every message once, in order, on both sides', async () => {
      await server.createChannel('r7', ['alice', 'bob']);
      const proxy = trackProxy(new CuttableProxy(server.port));
      await proxy.listen();
      const url = `ws://127.0.0.1:${proxy.port}/v1/ws`;
      const alice = track(await makeClient(server, 'alice', {}, url));
      const bob = track(await makeClient(server, 'bob', {}, url));
      const a = alice.channel('r7');
      const b = bob.channel('r7');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      const bodies = Array.from({ length: 100 }, (_, i) => `d${i + 1}`);
      const sends = bodies.map((x) => alice.send('r7', x));
      const acked = counter(sends);
      await waitFor(
        () => acked.done >= 10,
        () => 'some acks',
      );
      assert.ok(proxy.cutAll() >= 2);
      const acks = await Promise.all(sends);
      assert.deepEqual(
        acks.map((x) => x.seq),
        bodies.map((_, i) => i + 1),
        'ACKed in send order, one seq each',
      );
      await waitForBodies(b, bodies);
      await waitForBodies(a, bodies);
      assert.deepEqual(shown(b), bodies);
      assert.deepEqual(shown(a), bodies);
      assert.deepEqual(
        (await server.history('r7')).map((m) => m.body),
        bodies,
        'stored once each',
      );
      });

    test('kill -9 of chatd in the middle of a burst of 200, then a restart: exactly once, in order', async () => {
      await server.createChannel('r8', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      const a = alice.channel('r8');
      const b = bob.channel('r8');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      const bodies = Array.from({ length: 200 }, (_, i) => `k${i + 1}`);
      const sends = bodies.map((x) => alice.send('r8', x));
      let killed: Promise<void> | undefined;
      let ackedAtKill = 0;
      const acked = counter(sends, 20, () => {
        killed = server.kill9(); // SIGKILL goes out synchronously, at the 20th ACK
        ackedAtKill = acked.done;
      });
      await waitFor(
        () => killed !== undefined,
        () => 'some acks',
      );
      await killed;
      assert.equal(ackedAtKill, 20, 'killed in the middle of the burst');
      await sleep(300);
      await server.spawn();
      const acks = await Promise.all(sends);
      assert.deepEqual(
        acks.map((x) => x.seq),
        bodies.map((_, i) => i + 1),
      );
      await waitForBodies(b, bodies);
      await waitForBodies(a, bodies);
      assert.deepEqual(shown(b), bodies);
      assert.deepEqual(shown(a), bodies);
      assert.deepEqual(
        (await server.history('r8')).map((m) => m.body),
        bodies,
      );
    });

    test('an outbox written while the server is down is resent by the next client with the same keys', async () => {
      await server.createChannel('r9', ['alice', 'bob']);
      const storage = new MemoryOutboxStorage();
      const first = await makeClient(server, 'alice', { storage });
      await first.whenOpen();
      await server.kill9();
      const sends = ['o1', 'o2', 'o3'].map((x) => first.send('r9', x));
      await waitFor(
        () => first.outbox().length === 3,
        () => 'written to the outbox',
      );
      const keys = first.outbox().map((r) => r.clientMsgId);
      first.close(); // "reload": the page goes away with its sends unACKed
      await Promise.allSettled(sends);
      assert.equal((await storage.load('alice')).length, 3);
      await server.spawn();
      const second = track(await makeClient(server, 'alice', { storage }));
      const s = second.channel('r9');
      assert.deepEqual(
        second.outbox().map((r) => r.clientMsgId),
        keys,
      );
      const acks = await Promise.all(keys.map((k) => second.whenSent(k)));
      assert.deepEqual(
        acks.map((x) => x.clientMsgId),
        keys,
      );
      assert.equal((await storage.load('alice')).length, 0, 'removed from storage once ACKed');
      await waitForBodies(s, ['o1', 'o2', 'o3']);
      assert.deepEqual(shown(s), ['o1', 'o2', 'o3']);
      const bob = track(await makeClient(server, 'bob'));
      const b = bob.channel('r9');
      await waitForBodies(b, ['o1', 'o2', 'o3']);
      assert.deepEqual(shown(b), ['o1', 'o2', 'o3']);
    });

    test('a gap in live delivery is filled with SYNC', async () => {
      await server.createChannel('r10', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      const b = bob.channel('r10');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      await alice.send('r10', 'g1');
      await waitForBodies(b, ['g1']);
      bob.reconnect();
      // sent while bob is away
      await alice.send('r10', 'g2');
      await alice.send('r10', 'g3');
      await waitForBodies(b, ['g1', 'g2', 'g3']);
      await alice.send('r10', 'g4');
      await waitForBodies(b, ['g1', 'g2', 'g3', 'g4']);
      assert.deepEqual(shown(b), ['g1', 'g2', 'g3', 'g4']);
    });
  });
}
