// client.moderation and the outbox's handling of moderation's refusals against the real
// chatd (protocol §17, docs/protocol.md §15), on SQLite and PostgreSQL: an owner's mute
// (the member's send fails for good with `muted`, its snapshot shows until when, an unmute
// lets it send), ban, the bans list with keyset paging and lifting a ban, announcement
// channels (`read_only`), slow mode (the outbox waits `retryAfterMs` and sends the same
// key again), a moderator's delete by the route, blocks and flags.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChatClient } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor } from '../helpers/server.js';
import { makeClient, waitForBodies } from '../helpers/clients.js';

async function rejectsWith(p: Promise<unknown>, code: string, reason?: string): Promise<ChatdError> {
  let err: ChatdError | undefined;
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ChatdError, `a ChatdError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (reason !== undefined) assert.equal(e.reason, reason, e.message);
    err = e;
    return true;
  });
  if (err === undefined) throw new Error('unreachable');
  return err;
}

for (const store of storeKinds()) {
  describe(`moderation through the SDK (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    async function make(channelId: string, members: string[], owners: string[], visibility = 'private'): Promise<void> {
      const r = await server.admin('POST', '/v1/channels', { channelId, members, owners, visibility });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    before(async () => {
      server = await ChatdServer.start({ store });
    });
    after(async () => {
      for (const c of clients) c.close();
      await server.dispose();
    });

    test('mute: the member’s send fails for good with muted and retryAfterMs, nothing is stored; its snapshot shows the mute; an unmute lets it send', async () => {
      await make('mod-mute', ['alice'], ['olive']);
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await Promise.all([olive.whenOpen(), alice.whenOpen()]);
      const room = alice.channel('mod-mute');
      await alice.send('mod-mute', 'before');
      const until = Date.now() + 3_600_000;
      await olive.moderation.mute('mod-mute', 'alice', until);
      await waitFor(
        () => room.getSnapshot().moderation.mutedUntil === until,
        () => `alice's moderation ${JSON.stringify(room.getSnapshot().moderation)}`,
      );
      const err = await rejectsWith(alice.send('mod-mute', 'while muted', { clientMsgId: 'muted-1' }), 'forbidden', 'muted');
      assert.ok(err.retryAfterMs !== undefined && err.retryAfterMs > 3_500_000 && err.retryAfterMs <= 3_600_000, `retryAfterMs ${String(err.retryAfterMs)}`);
      const failed = alice.outbox().find((r) => r.clientMsgId === 'muted-1');
      assert.equal(failed?.state, 'failed');
      assert.equal(failed?.error?.reason, 'muted');
      // the member list shows the mute to the owner
      const page = await olive.members('mod-mute');
      assert.equal(page.members.find((m) => m.userId === 'alice')?.mutedUntil, until);
      await olive.moderation.unmute('mod-mute', 'alice');
      await waitFor(
        () => room.getSnapshot().moderation.mutedUntil === undefined,
        () => `alice's moderation ${JSON.stringify(room.getSnapshot().moderation)}`,
      );
      // the failed record sent again with its same key is stored now
      assert.equal((await alice.retry('muted-1')).duplicate, false);
      const bodies = (await server.history('mod-mute')).map((e) => e.body);
      assert.deepEqual(bodies, ['before', 'while muted']);
    });

    test('ban: the user is removed (reason banned), its join is refused with banned; bans pages by user id; liftBan lets it join again', async () => {
      await make('mod-ban', ['bob', 'carol', 'alice'], ['olive'], 'public');
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      await Promise.all([olive.whenOpen(), bob.whenOpen()]);
      const removed: [string, string | undefined][] = [];
      bob.events.on('channelRemoved', (id, reason) => removed.push([id, reason]));
      await olive.moderation.ban('mod-ban', 'bob');
      await olive.moderation.ban('mod-ban', 'carol');
      await waitFor(
        () => removed.length === 1,
        () => `bob's removals ${JSON.stringify(removed)}`,
      );
      assert.deepEqual(removed, [['mod-ban', 'banned']]);
      await rejectsWith(bob.join('mod-ban'), 'forbidden', 'banned');
      const first = await olive.moderation.bans('mod-ban', { limit: 1 });
      assert.deepEqual(first.bans.map((b) => [b.userId, b.actorId]), [['bob', 'olive']]);
      assert.equal(first.hasMore, true);
      const second = await olive.moderation.bans('mod-ban', { after: 'bob', limit: 1 });
      assert.deepEqual(second.bans.map((b) => b.userId), ['carol']);
      assert.equal(second.hasMore, false);
      // a member may not read the bans
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await rejectsWith(alice.moderation.bans('mod-ban'), 'forbidden');
      await olive.moderation.liftBan('mod-ban', 'bob');
      await bob.join('mod-ban');
      assert.deepEqual((await olive.moderation.bans('mod-ban')).bans.map((b) => b.userId), ['carol']);
    });

    test('settings: an announcement channel refuses a member’s send with read_only (failed, not retried); slow mode is waited out with the same key', async () => {
      await make('mod-rules', ['alice'], ['olive']);
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await Promise.all([olive.whenOpen(), alice.whenOpen()]);
      const rules = await olive.moderation.setChannelSettings('mod-rules', { postingRole: 'moderator' });
      assert.deepEqual(rules, { channelId: 'mod-rules', postingRole: 'moderator', slowModeMs: 0 });
      assert.equal(olive.channel('mod-rules').getSnapshot().moderation.postingRole, 'moderator');
      const room = alice.channel('mod-rules');
      await rejectsWith(alice.send('mod-rules', 'not allowed', { clientMsgId: 'ro-1' }), 'forbidden', 'read_only');
      assert.equal(room.getSnapshot().moderation.postingRole, 'moderator');
      assert.equal(alice.outbox().find((r) => r.clientMsgId === 'ro-1')?.state, 'failed');
      await olive.send('mod-rules', 'announcement');
      await alice.discard('ro-1');

      await olive.moderation.setChannelSettings('mod-rules', { postingRole: 'member', slowModeMs: 1500 });
      await alice.send('mod-rules', 'first');
      let sawWait = false;
      const unsub = room.subscribe(() => {
        if (room.getSnapshot().moderation.nextSendAt !== undefined) sawWait = true;
      });
      const second = await alice.send('mod-rules', 'second', { clientMsgId: 'slow-2' });
      unsub();
      assert.equal(second.clientMsgId, 'slow-2');
      assert.equal(second.duplicate, false);
      assert.ok(sawWait, 'the snapshot showed when the next send is allowed');
      const entries = await server.history('mod-rules');
      assert.deepEqual(entries.map((e) => e.body), ['announcement', 'first', 'second']);
      assert.equal(entries.filter((e) => e.clientMsgId === 'slow-2').length, 1);
    });

    test('deleteAnyMessage: a moderator deletes a member’s message by the route; every member sees it deleted; again is not_found', async () => {
      await make('mod-del', ['alice', 'mia'], ['olive']);
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      await olive.setMemberRole('mod-del', 'mia', 'moderator');
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      const mia = track(await makeClient(server, 'mia', { tabSync: false }));
      await Promise.all([alice.whenOpen(), mia.whenOpen()]);
      const sent = await alice.send('mod-del', 'spam spam');
      const room = alice.channel('mod-del');
      await waitForBodies(room, ['spam spam']);
      await mia.moderation.deleteAnyMessage('mod-del', sent.messageId);
      await waitFor(
        () => room.getSnapshot().messages.find((m) => m.messageId === sent.messageId)?.deleted === true,
        () => `alice's messages ${JSON.stringify(room.getSnapshot().messages)}`,
      );
      const entries = await server.history('mod-del');
      const del = entries.find((e) => e.seq === 2);
      assert.equal(del?.senderId, 'mia', 'the delete entry is the moderator’s');
      assert.ok(!entries.some((e) => e.body.includes('spam')), 'the text is gone');
      await rejectsWith(mia.moderation.deleteAnyMessage('mod-del', sent.messageId), 'not_found');
      // a member may not
      const again = await mia.send('mod-del', 'mine');
      await rejectsWith(alice.moderation.deleteAnyMessage('mod-del', again.messageId), 'forbidden');
    });

    test('blocks and flags: block refuses the direct channel (blocked), blocks lists, unblock lifts; a flag is made once per reporter', async () => {
      await make('mod-flag', ['alice', 'bob'], []);
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      await bob.moderation.block('alice');
      await bob.moderation.block('alice');
      assert.deepEqual(await bob.moderation.blocks(), ['alice']);
      await rejectsWith(alice.direct('bob'), 'forbidden', 'blocked');
      await rejectsWith(bob.moderation.block('bob'), 'invalid_field');
      await bob.moderation.unblock('alice');
      assert.deepEqual(await bob.moderation.blocks(), []);
      assert.equal((await alice.direct('bob')).channel.kind, 'direct');

      const sent = await bob.send('mod-flag', 'buy now');
      const flag = await alice.moderation.flag(sent.messageId, 'spam', { note: 'ads' });
      assert.equal(flag.created, true);
      assert.deepEqual([flag.messageId, flag.channelId, flag.reporterId, flag.reason, flag.note], [sent.messageId, 'mod-flag', 'alice', 'spam', 'ads']);
      const again = await alice.moderation.flag(sent.messageId, 'abuse');
      assert.equal(again.created, false);
      assert.equal(again.flagId, flag.flagId);
      const listed = await server.admin('GET', '/v1/flags');
      const flags = (listed.json as { flags: { flagId: string }[] }).flags;
      assert.deepEqual(flags.filter((f) => f.flagId === flag.flagId).length, 1);
      await rejectsWith(alice.moderation.flag('01a248bb-e7ab-7580-bff9-3083c4f47b08', 'spam'), 'not_found');
    });
  });
}
