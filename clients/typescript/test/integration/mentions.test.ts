// Mentions and notification settings (protocol 1.2 §16) through the SDK against the real
// chatd: `send` with `mentions` keeps members only and carries them live and on reads;
// `mentionsMe` on the mentioned user's messages; `mentionAll` refused to a member;
// `unreadMentions` from HELLO and live, not raised by the user's own message, falling to 0
// on reading past the last mention; settings changed on one client shown on another
// (CHANNEL_SETTINGS) and read back in the next HELLO.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChannelSummary, type ChatClient } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor } from '../helpers/server.js';
import { makeClient } from '../helpers/clients.js';

const summaryOf = (c: ChatClient, id: string): ChannelSummary | undefined => c.channelList.getSnapshot().find((s) => s.channelId === id);

for (const store of storeKinds()) {
  describe(`mentions and notification settings through the SDK (${store})`, () => {
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

    test('mentions kept for members, live and read; mentionsMe; mentionAll refused to a member and taken from an owner; unreadMentions from HELLO, live and read past', async () => {
      const r = await server.admin('POST', '/v1/channels', { channelId: 'mn1', owners: ['olive'], members: ['alice', 'bob', 'carol'] });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      const alice = track(await makeClient(server, 'alice'));
      const olive = track(await makeClient(server, 'olive'));
      alice.channel('mn1');
      await Promise.all([alice.whenOpen(), olive.whenOpen()]);
      await alice.send('mn1', '@bob @dave hi', { mentions: ['dave', 'bob', 'bob'] });
      await alice.send('mn1', 'no mention');
      await olive.send('mn1', '@channel standup', { mentionAll: true });
      await assert.rejects(alice.send('mn1', '@channel', { mentionAll: true }), (e: unknown) => e instanceof ChatdError && e.code === 'forbidden' && e.field === 'mentionAll');
      // bob connects now: HELLO counts the two that mention him
      const bob = track(await makeClient(server, 'bob'));
      await bob.whenOpen();
      await waitFor(() => summaryOf(bob, 'mn1')?.unreadMentions === 2, () => JSON.stringify(summaryOf(bob, 'mn1')));
      assert.equal(summaryOf(bob, 'mn1')?.unread, 3);
      // live: one more that mentions him raises it; his own that mentions himself does not
      await alice.send('mn1', '@bob again', { mentions: ['bob'] });
      await bob.send('mn1', 'note to @bob', { mentions: ['bob'] });
      await waitFor(() => summaryOf(bob, 'mn1')?.lastSeq === 5, () => JSON.stringify(summaryOf(bob, 'mn1')));
      assert.equal(summaryOf(bob, 'mn1')?.unreadMentions, 3);
      // his read: the server kept bob (dave is no member), in the log with mentionsMe
      const b = bob.channel('mn1');
      await waitFor(() => b.getSnapshot().messages.length === 5, () => JSON.stringify(b.getSnapshot().messages));
      const flags = b.getSnapshot().messages.map((m) => [m.body, m.mentions, m.mentionAll, m.mentionsMe]);
      assert.deepEqual(flags, [
        ['@bob @dave hi', ['bob'], false, true],
        ['no mention', [], false, false],
        ['@channel standup', [], true, true],
        ['@bob again', ['bob'], false, true],
        ['note to @bob', ['bob'], false, true],
      ]);
      assert.equal(summaryOf(bob, 'mn1')?.unreadMentions, 3, 'exact from the log: not his own');
      // carol is not mentioned by alice's messages, only by @channel
      const carol = track(await makeClient(server, 'carol'));
      const c = carol.channel('mn1');
      await waitFor(() => c.getSnapshot().messages.length === 5, () => JSON.stringify(c.getSnapshot().messages));
      assert.deepEqual(c.getSnapshot().messages.map((m) => m.mentionsMe), [false, false, true, false, false]);
      assert.equal(summaryOf(carol, 'mn1')?.unreadMentions, 1);
      // bob reads past the last mention: 0 here, and on the server (a new client's HELLO)
      bob.markRead('mn1');
      assert.equal(summaryOf(bob, 'mn1')?.unreadMentions, 0);
      const bob2 = track(await makeClient(server, 'bob'));
      await bob2.whenOpen();
      // the MSG_READ may reach the server after bob2's HELLO: read the list until it shows
      let listed: ChannelSummary | undefined;
      for (let i = 0; i < 100; i++) {
        listed = (await bob2.refreshChannels()).find((x) => x.channelId === 'mn1');
        if (listed?.unread === 0) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.equal(listed?.unread, 0, JSON.stringify(listed));
      assert.equal(listed.unreadMentions, 0, JSON.stringify(listed));
    });

    test('settings: set on one client, seen on the other at once (CHANNEL_SETTINGS) and by a new client (HELLO); refusals change nothing', async () => {
      await server.createChannel('st1', ['alice', 'bob']);
      const phone = track(await makeClient(server, 'bob'));
      const desk = track(await makeClient(server, 'bob'));
      await Promise.all([phone.whenOpen(), desk.whenOpen()]);
      assert.deepEqual([summaryOf(desk, 'st1')?.notify, summaryOf(desk, 'st1')?.snoozeUntil], ['all', null]);
      const until = Date.now() + 3_600_000;
      const s = await phone.setNotifySettings('st1', { notify: 'mentions', snoozeUntil: until });
      assert.deepEqual(s, { notify: 'mentions', snoozeUntil: until });
      assert.equal(summaryOf(phone, 'st1')?.notify, 'mentions');
      await waitFor(() => summaryOf(desk, 'st1')?.notify === 'mentions' && summaryOf(desk, 'st1')?.snoozeUntil === until, () => JSON.stringify(summaryOf(desk, 'st1')));
      await assert.rejects(phone.setNotifySettings('st1', { notify: 'loud' }), (e: unknown) => e instanceof ChatdError && e.code === 'invalid_field' && e.field === 'notify');
      await assert.rejects(phone.setNotifySettings('nope-channel', { notify: 'none' }), (e: unknown) => e instanceof ChatdError && e.code === 'forbidden');
      // a field left out keeps its value; snoozeUntil null ends the snooze
      assert.deepEqual(await desk.setNotifySettings('st1', { snoozeUntil: null }), { notify: 'mentions', snoozeUntil: null });
      await waitFor(() => summaryOf(phone, 'st1')?.snoozeUntil === null, () => JSON.stringify(summaryOf(phone, 'st1')));
      const fresh = track(await makeClient(server, 'bob'));
      await fresh.whenOpen();
      await waitFor(() => summaryOf(fresh, 'st1')?.notify === 'mentions', () => JSON.stringify(summaryOf(fresh, 'st1')));
      assert.equal(summaryOf(fresh, 'st1')?.snoozeUntil, null);
    });
  });
}
