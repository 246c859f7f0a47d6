// ChatClient.members and allMembers against the real chatd (GET /v1/channels/{id}/members,
// protocol §13.1): pages in byte order of the user id, roles, the watermarks a read moves,
// atSeq, and the errors a user meets (not a member, bad parameters).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChatClient, type MembersPage } from '../../src/index.js';
import { ChatdServer, sleep, storeKinds } from '../helpers/server.js';
import { makeClient, waitForBodies } from '../helpers/clients.js';

async function rejectsWith(p: Promise<unknown>, code: string, field?: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ChatdError, `a ChatdError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (field !== undefined) assert.equal(e.field, field, e.message);
    return true;
  });
}

for (const store of storeKinds()) {
  describe(`members through the SDK (${store})`, () => {
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

    test('pages in byte order of the user id (upper case first), each member a `member`; allMembers reads them all', async () => {
      const startedAt = Date.now();
      await server.createChannel('mem1', ['carol', 'Zed', 'alice', 'dave', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const ids = (p: MembersPage): string[] => p.members.map((m) => m.userId);
      const p1 = await alice.members('mem1', { limit: 2 });
      assert.deepEqual(ids(p1), ['Zed', 'alice']);
      assert.equal(p1.hasMore, true);
      assert.equal(p1.atSeq, 0, 'no entry yet');
      const p2 = await alice.members('mem1', { after: 'alice', limit: 2 });
      assert.deepEqual(ids(p2), ['bob', 'carol']);
      assert.equal(p2.hasMore, true);
      const p3 = await alice.members('mem1', { after: 'carol', limit: 2 });
      assert.deepEqual(ids(p3), ['dave']);
      assert.equal(p3.hasMore, false);
      // the server's default page holds them all
      const whole = await alice.members('mem1');
      assert.deepEqual(ids(whole), ['Zed', 'alice', 'bob', 'carol', 'dave']);
      assert.equal(whole.hasMore, false);
      for (const m of whole.members) {
        assert.equal(m.role, 'member', `${m.userId}'s role (every member is a member until roles can be set)`);
        assert.ok(m.joinedAt >= startedAt - 60_000 && m.joinedAt <= Date.now() + 60_000, `joinedAt ${m.joinedAt}`);
        assert.equal(m.deliveredSeq, 0);
        assert.equal(m.readSeq, 0);
      }
      const all = await alice.allMembers('mem1', { pageSize: 2 });
      assert.deepEqual(all, { members: whole.members, atSeq: 0 });
    });

    test('watermarks: a member who read shows readSeq (and deliveredSeq at least as far); atSeq is the channel’s last seq', async () => {
      await server.createChannel('mem2', ['alice', 'bob', 'carol']);
      const bob = track(await makeClient(server, 'bob'));
      await bob.whenOpen();
      for (const b of ['one', 'two', 'three']) await bob.send('mem2', b);
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      const room = alice.channel('mem2');
      await waitForBodies(room, ['one', 'two', 'three']);
      room.markRead();
      // MSG_READ is stored a moment after it is sent: read the route until it shows
      const aliceOf = (p: MembersPage) => p.members.find((m) => m.userId === 'alice');
      let page = await alice.members('mem2');
      const deadline = Date.now() + 20_000;
      while (aliceOf(page)?.readSeq !== 3) {
        if (Date.now() > deadline) assert.fail(`alice's watermarks: ${JSON.stringify(aliceOf(page))}`);
        await sleep(50);
        page = await alice.members('mem2');
      }
      assert.equal(page.atSeq, 3);
      const carol = page.members.find((m) => m.userId === 'carol');
      assert.deepEqual([carol?.deliveredSeq, carol?.readSeq], [0, 0], 'carol read nothing');
      const a = aliceOf(page);
      assert.ok(a !== undefined && a.readSeq === 3 && a.deliveredSeq >= 3, JSON.stringify(a));
    });

    test('a user who is not a member (or asks about a channel that does not exist) gets `forbidden`; a removed member too', async () => {
      await server.createChannel('mem3', ['alice', 'dave']);
      await server.createChannel('elsewhere', ['eve']);
      const eve = track(await makeClient(server, 'eve'));
      await rejectsWith(eve.members('mem3'), 'forbidden');
      await rejectsWith(eve.allMembers('mem3'), 'forbidden');
      await rejectsWith(eve.members('no-such-channel'), 'forbidden');
      const dave = track(await makeClient(server, 'dave'));
      assert.deepEqual((await dave.members('mem3')).members.map((m) => m.userId), ['alice', 'dave']);
      assert.equal((await server.admin('DELETE', '/v1/channels/mem3/members/dave')).status, 204);
      await rejectsWith(dave.members('mem3'), 'forbidden');
      const alice = track(await makeClient(server, 'alice'));
      assert.deepEqual((await alice.members('mem3')).members.map((m) => m.userId), ['alice']);
    });

    test('a bad `limit` or `after` is `invalid_field` naming it', async () => {
      await server.createChannel('mem4', ['alice']);
      const alice = track(await makeClient(server, 'alice'));
      await rejectsWith(alice.members('mem4', { limit: 0 }), 'invalid_field', 'limit');
      await rejectsWith(alice.members('mem4', { limit: 501 }), 'invalid_field', 'limit');
      await rejectsWith(alice.members('mem4', { after: 'not a user id' }), 'invalid_field', 'after');
      assert.equal((await alice.members('mem4', { limit: 500 })).members.length, 1);
    });
  });
}
