// Replies and threads (protocol 1.2 §14) through the SDK against the real chatd: a reply's
// preview live and in a later reader's read, following the quoted message's edit and
// delete; a thread store filled by its read and by live replies, each once and in order;
// the root's summary live and as the server reads it; a reply deleted lowers the count; a
// thread reply that would start a thread is refused.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChatClient, type Message, type ThreadStore } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor } from '../helpers/server.js';
import { makeClient } from '../helpers/clients.js';

/** The bodies of a thread's replies held. */
const bodies = (t: ThreadStore): string[] => t.getSnapshot().messages.map((m) => m.body);

for (const store of storeKinds()) {
  describe(`replies and threads through the SDK (${store})`, () => {
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

    test('a reply’s preview, live and read, follows the quoted message’s edit and delete', async () => {
      await server.createChannel('rp1', ['alice', 'bob', 'carol']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      const b = bob.channel('rp1');
      alice.channel('rp1');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      const q = await alice.send('rp1', 'the quoted one');
      await bob.send('rp1', 'my reply', { replyTo: q.messageId });
      const reply = (): Message | undefined => b.getSnapshot().messages.find((m) => m.body === 'my reply');
      await waitFor(() => reply() !== undefined, () => JSON.stringify(b.getSnapshot().messages));
      assert.equal(reply()?.replyTo, q.messageId);
      assert.deepEqual(reply()?.replyPreview, { senderId: 'alice', body: 'the quoted one' }, 'made from the ACK and the held message');
      await alice.edit('rp1', q.messageId, 'the quoted one, edited');
      await waitFor(() => reply()?.replyPreview?.body === 'the quoted one, edited', () => JSON.stringify(reply()));
      // a later reader reads the preview from the server
      const carol = track(await makeClient(server, 'carol'));
      const c = carol.channel('rp1');
      await waitFor(() => c.getSnapshot().messages.some((m) => m.body === 'my reply'), () => JSON.stringify(c.getSnapshot()));
      assert.deepEqual(c.getSnapshot().messages.find((m) => m.body === 'my reply')?.replyPreview, { senderId: 'alice', body: 'the quoted one, edited' });
      await alice.deleteMessage('rp1', q.messageId);
      await waitFor(() => reply()?.replyPreview?.deleted === true, () => JSON.stringify(reply()));
      assert.deepEqual(reply()?.replyPreview, { senderId: 'alice', body: '', deleted: true });
      await waitFor(
        () => c.getSnapshot().messages.find((m) => m.body === 'my reply')?.replyPreview?.deleted === true,
        () => JSON.stringify(c.getSnapshot().messages),
      );
      const fresh = track(await makeClient(server, 'carol'));
      const f = fresh.channel('rp1');
      await waitFor(() => f.getSnapshot().status === 'ready' && f.getSnapshot().messages.length > 0, () => JSON.stringify(f.getSnapshot()));
      assert.deepEqual(f.getSnapshot().messages.find((m) => m.body === 'my reply')?.replyPreview, { senderId: 'alice', body: '', deleted: true });
    });

    test('a thread store: its read and live replies, once and in order; the root’s summary live and read; a deleted reply lowers the count; a reply cannot start a thread', async () => {
      await server.createChannel('th1', ['alice', 'bob', 'carol']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      const a = alice.channel('th1');
      bob.channel('th1');
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      const root = await alice.send('th1', 'a root');
      await alice.send('th1', 'in the channel');
      const first = await alice.send('th1', 'reply one', { threadId: root.messageId });
      const stored = (await server.admin('GET', '/v1/channels/th1/messages?latest=true&limit=50')).json as { messages: { body: string; threadId?: string }[] };
      assert.equal(stored.messages.find((m) => m.body === 'reply one')?.threadId, root.messageId, JSON.stringify(stored));
      const bt = bob.thread('th1', root.messageId);
      await waitFor(() => bt.getSnapshot().status === 'ready' && bodies(bt).length === 1, () => JSON.stringify(bt.getSnapshot()));
      assert.deepEqual(bodies(bt), ['reply one']);
      // live, from both sides: bob through the thread store, alice through send
      await bt.send('reply two');
      const third = await alice.send('th1', 'reply three', { threadId: root.messageId });
      await waitFor(() => bodies(bt).length === 3, () => JSON.stringify(bt.getSnapshot()));
      assert.deepEqual(bodies(bt), ['reply one', 'reply two', 'reply three']);
      assert.deepEqual(bt.getSnapshot().outgoing, []);
      const rootOf = (msgs: readonly Message[]): Message | undefined => msgs.find((m) => m.messageId === root.messageId);
      await waitFor(() => rootOf(a.getSnapshot().messages)?.thread?.replyCount === 3, () => JSON.stringify(rootOf(a.getSnapshot().messages)));
      assert.deepEqual(rootOf(a.getSnapshot().messages)?.thread?.participants, ['alice', 'bob']);
      // a later reader: the summary and the thread as the server reads them
      const carol = track(await makeClient(server, 'carol'));
      const c = carol.channel('th1');
      const ct = carol.thread('th1', root.messageId);
      await waitFor(() => ct.getSnapshot().status === 'ready' && bodies(ct).length === 3, () => JSON.stringify(ct.getSnapshot()));
      assert.deepEqual(bodies(ct), ['reply one', 'reply two', 'reply three']);
      const read = rootOf(c.getSnapshot().messages)?.thread;
      assert.equal(read?.replyCount, 3);
      assert.deepEqual(read?.participants, ['alice', 'bob']);
      assert.equal(read?.lastReplySeq, ct.getSnapshot().messages[2]?.seq);
      // a reply deleted: one fewer, live and read
      await alice.deleteMessage('th1', first.messageId);
      await waitFor(() => rootOf(c.getSnapshot().messages)?.thread?.replyCount === 2, () => JSON.stringify(rootOf(c.getSnapshot().messages)));
      await waitFor(() => ct.getSnapshot().messages[0]?.deleted === true, () => JSON.stringify(ct.getSnapshot().messages));
      const later = track(await makeClient(server, 'carol'));
      const l = later.channel('th1');
      await waitFor(() => rootOf(l.getSnapshot().messages) !== undefined, () => JSON.stringify(l.getSnapshot()));
      assert.equal(rootOf(l.getSnapshot().messages)?.thread?.replyCount, 2);
      // a thread reply is no root
      await assert.rejects(alice.send('th1', 'nested', { threadId: third.messageId }), (e: unknown) => {
        assert.ok(e instanceof ChatdError, String(e));
        assert.equal(e.code, 'invalid_field', e.message);
        assert.equal(e.field, 'threadId');
        return true;
      });
    });
  });
}
