// Version 1.1 features through the SDK against the real chatd. A test is skipped only when
// the server answers `unknown_type` to the frame it is about (the feature is not built
// yet); any other outcome is asserted.
import { describe, test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChatClient } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor, sleep } from '../helpers/server.js';
import { makeClient, shown, waitForBodies } from '../helpers/clients.js';

function skipIfUnknownType(t: TestContext, e: unknown, frame: string): boolean {
  if (e instanceof ChatdError && e.code === 'unknown_type') {
    t.skip(`server answered unknown_type to ${frame}: version 1.1 ${frame} not built yet`);
    return true;
  }
  return false;
}

for (const store of storeKinds()) {
  describe(`v1.1 protocol through the SDK (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    before(async () => {
      server = await ChatdServer.start({ store });
    });
    after(async () => {
      for (const c of clients) c.close();
      await server.dispose();
    });

    test('edit, react and delete fold into every member\'s message state; reads are render-ready', async (t) => {
      await server.createChannel('e1', ['alice', 'bob', 'carol']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      const a = alice.channel('e1');
      const b = bob.channel('e1');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      const m1 = await alice.send('e1', 'first');
      const m2 = await alice.send('e1', 'second');
      await waitForBodies(b, ['first', 'second']);
      try {
        await alice.edit('e1', m1.messageId, 'first (edited)');
      } catch (e) {
        if (skipIfUnknownType(t, e, 'MSG_EDIT')) return;
        throw e;
      }
      await waitFor(
        () => b.getSnapshot().messages[0]?.body === 'first (edited)',
        () => JSON.stringify(b.getSnapshot().messages[0]),
      );
      assert.equal(typeof b.getSnapshot().messages[0]?.editedAt, 'number');
      assert.equal(a.getSnapshot().messages[0]?.body, 'first (edited)', 'the editor sees it too');
      try {
        await bob.react('e1', m1.messageId, '👍');
      } catch (e) {
        if (skipIfUnknownType(t, e, 'MSG_REACT')) return;
        throw e;
      }
      await alice.react('e1', m1.messageId, '👍');
      await bob.react('e1', m1.messageId, '👍'); // held already: stored, changes nothing
      await waitFor(
        () => a.getSnapshot().messages[0]?.reactions[0]?.count === 2,
        () => JSON.stringify(a.getSnapshot().messages[0]?.reactions),
      );
      assert.deepEqual(a.getSnapshot().messages[0]?.reactions, [{ emoji: '👍', count: 2, me: true }]);
      await waitFor(
        () => b.getSnapshot().messages[0]?.reactions[0]?.count === 2,
        () => JSON.stringify(b.getSnapshot().messages[0]?.reactions),
      );
      assert.deepEqual(b.getSnapshot().messages[0]?.reactions, [{ emoji: '👍', count: 2, me: true }]);
      try {
        await alice.deleteMessage('e1', m2.messageId);
      } catch (e) {
        if (skipIfUnknownType(t, e, 'MSG_DELETE')) return;
        throw e;
      }
      await waitFor(
        () => b.getSnapshot().messages[1]?.deleted === true,
        () => JSON.stringify(b.getSnapshot().messages[1]),
      );
      assert.equal(b.getSnapshot().messages[1]?.body, '');
      // bob may not edit alice's message
      const denied = await bob.edit('e1', m1.messageId, 'hijack').catch((e: unknown) => e);
      assert.ok(denied instanceof ChatdError);
      assert.equal(denied.code, 'forbidden');
      // a fresh reader (carol, opening on the newest page) gets the same state from the read alone
      const carol = track(await makeClient(server, 'carol'));
      const c = carol.channel('e1');
      await waitFor(
        () => c.getSnapshot().status === 'ready' && c.getSnapshot().messages.length === 2,
        () => JSON.stringify(c.getSnapshot().messages),
      );
      const [c1, c2] = c.getSnapshot().messages;
      assert.equal(c1?.body, 'first (edited)');
      assert.deepEqual(c1?.reactions, [{ emoji: '👍', count: 2, me: false }]);
      assert.equal(c2?.deleted, true);
      assert.equal(c2?.body, '');
      assert.equal(c.getSnapshot().unread, 1, 'HELLO unread: deleted messages do not count');
    });

    test('typing reaches the other member and expires by itself', async (t) => {
      await server.createChannel('t1', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      const b = bob.channel('t1');
      alice.channel('t1');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      alice.typing('t1');
      const deadline = Date.now() + 3000;
      while (Date.now() < deadline) {
        if (alice.connection.getSnapshot().unsupported.includes('TYPING')) {
          t.skip('server answered unknown_type to TYPING: version 1.1 typing not built yet');
          return;
        }
        if (b.getSnapshot().typing.includes('alice')) break;
        await sleep(20);
      }
      assert.deepEqual(b.getSnapshot().typing, ['alice']);
      alice.stopTyping('t1');
      await waitFor(
        () => b.getSnapshot().typing.length === 0,
        () => 'stop',
      );
      // The server forwards at most one start per (user, channel) per
      // typing_throttle_ms (default 2 s, spec §9), a start right after a stop
      // included: start again once that window has passed.
      await sleep(2100);
      alice.typing('t1');
      await waitFor(
        () => b.getSnapshot().typing.length === 1,
        () => 'start again',
      );
      // no renewal: the indicator ends at expiresAt (server default 6 s) without a stop
      await waitFor(
        () => b.getSnapshot().typing.length === 0,
        () => 'expiry',
        9000,
      );
    });

    test('typing the next message while the last is being stored is shown once it is stored', async () => {
      await server.createChannel('t2', ['tina', 'tom']);
      const tina = track(await makeClient(server, 'tina'));
      const tom = track(await makeClient(server, 'tom'));
      const b = tom.channel('t2');
      tina.channel('t2');
      await Promise.all([tina.whenOpen(), tom.whenOpen()]);
      tina.typing('t2');
      await waitFor(
        () => b.getSnapshot().typing.includes('tina'),
        () => 'first start',
      );
      for (const n of [1, 2, 3]) {
        // Sent, and at once typing again: this start reaches the server within the
        // throttle of the last one, before the message is stored, and the message's
        // stop ends it; the client sends it again when the ACK comes.
        const sent = tina.send('t2', `message ${n}`);
        tina.typing('t2');
        await sent;
        await waitFor(
          () => b.getSnapshot().messages.some((m) => m.body === `message ${n}`),
          () => `message ${n} at tom`,
        );
        await waitFor(
          () => b.getSnapshot().typing.includes('tina'),
          () => `tina typing again after message ${n}: ${JSON.stringify(b.getSnapshot().typing)}`,
          1500,
        );
      }
    });

    test('presence subscription: snapshot, then changes', async (t) => {
      // Users of this test's own: the earlier tests' sessions of alice and bob
      // may still count as online within presence_grace_ms (5 s).
      await server.createChannel('p1', ['pam', 'pete']);
      const alice = track(await makeClient(server, 'pam'));
      await alice.whenOpen();
      alice.subscribePresence(['pete', 'stranger']);
      const deadline = Date.now() + 3000;
      while (Date.now() < deadline) {
        if (alice.connection.getSnapshot().unsupported.includes('PRESENCE_SUB')) {
          t.skip('server answered unknown_type to PRESENCE_SUB: version 1.1 presence not built yet');
          return;
        }
        if (alice.presence.getSnapshot().pete !== undefined) break;
        await sleep(20);
      }
      assert.equal(alice.presence.getSnapshot().pete?.status, 'offline');
      await waitFor(
        () => alice.presence.getSnapshot().stranger?.status === 'offline',
        () => 'stranger reported offline',
      );
      assert.equal(alice.presence.getSnapshot().stranger?.lastSeenAt, undefined);
      const bob = track(await makeClient(server, 'pete'));
      await bob.whenOpen();
      await waitFor(
        () => alice.presence.getSnapshot().pete?.status === 'online',
        () => JSON.stringify(alice.presence.getSnapshot()),
      );
    });

    test('a deleted channel is reported removed to live members', async (t) => {
      await server.createChannel('x1', ['alice']);
      const alice = track(await makeClient(server, 'alice'));
      const x = alice.channel('x1');
      await alice.whenOpen();
      await alice.send('x1', 'bye');
      const r = await server.admin('DELETE', '/v1/channels/x1');
      if (r.status === 405) {
        t.skip('server answered 405 to DELETE /v1/channels/{id}: version 1.1 backend API not built yet');
        return;
      }
      assert.equal(r.status, 204);
      await waitFor(
        () => x.getSnapshot().status === 'removed',
        () => x.getSnapshot().status,
      );
      assert.deepEqual(shown(x), ['bye']);
    });
  });
}
