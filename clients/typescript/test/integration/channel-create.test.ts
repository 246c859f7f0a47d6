// ChatClient.direct, createChannel, addMember, setMemberRole and removeMember against the
// real chatd (protocol §13.1, §13.2): the one direct channel of two users, made once and
// found from either side, messages both ways; dm_policy (`off`, `shared_channel`) refusing
// with `reason: "dm_policy"`; a user's own group channel with the user its owner, and
// user_channel_creation off; roles at work (an owner sets roles, a moderator adds and
// removes members only, a member none), each refusal a `forbidden` with the server's words.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChannelSummary, type ChatClient } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor } from '../helpers/server.js';
import { makeClient, waitForBodies } from '../helpers/clients.js';

async function rejectsWith(p: Promise<unknown>, code: string, check?: (e: ChatdError) => void): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ChatdError, `a ChatdError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    check?.(e);
    return true;
  });
}

function summary(c: ChatClient, id: string): ChannelSummary | undefined {
  return c.channelList.getSnapshot().find((s) => s.channelId === id);
}

/** The channel's members and their roles, as the admin reads them. */
async function roles(server: ChatdServer, channelId: string): Promise<Record<string, string>> {
  const r = await server.admin('GET', `/v1/channels/${channelId}/members`);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return Object.fromEntries((r.json as { members: { userId: string; role: string }[] }).members.map((m) => [m.userId, m.role]));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

for (const store of storeKinds()) {
  describe(`direct channels, new channels and roles through the SDK (${store})`, () => {
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

    test('direct: made once (201), the same channel from either side after (200), listed at once, messages both ways', async () => {
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      await alice.whenOpen();
      await bob.whenOpen();
      const bobAdded: string[] = [];
      bob.events.on('channelAdded', (id) => bobAdded.push(id));

      const first = await alice.direct('bob');
      assert.equal(first.created, true);
      const dm = first.channel;
      assert.match(dm.channelId, UUID, 'an id the server chose');
      assert.deepEqual([...dm.members].sort(), ['alice', 'bob']);
      assert.deepEqual([dm.kind, dm.visibility, dm.memberCount, dm.lastSeq], ['direct', 'private', 2, 0]);
      // listed for alice when the call resolves
      const s = summary(alice, dm.channelId);
      assert.deepEqual([s?.kind, s?.visibility, s?.role, s?.memberCount], ['direct', 'private', 'member', 2]);

      // again, and from bob's side: the same channel, 200
      const again = await alice.direct('bob');
      assert.deepEqual([again.created, again.channel.channelId], [false, dm.channelId]);
      // alice writes before bob opened it: his open session gets it, and the channel joins his list
      await alice.send(dm.channelId, 'hi bob, direct');
      await waitFor(
        () => bob.channelIds().includes(dm.channelId),
        () => `bob's channels ${bob.channelIds().join(',')}`,
      );
      assert.ok(bobAdded.includes(dm.channelId));
      const fromBob = await bob.direct('alice');
      assert.deepEqual([fromBob.created, fromBob.channel.channelId, fromBob.channel.lastSeq], [false, dm.channelId, 1]);
      const room = bob.channel(dm.channelId);
      await waitForBodies(room, ['hi bob, direct']);
      await bob.send(dm.channelId, 'hi alice');
      await waitForBodies(alice.channel(dm.channelId), ['hi bob, direct', 'hi alice']);

      // no one leaves it, and no one is added to it (its members are not owners either)
      await rejectsWith(alice.leave(dm.channelId), 'forbidden');
      await rejectsWith(alice.addMember(dm.channelId, 'carol'), 'forbidden');
      await rejectsWith(alice.removeMember(dm.channelId, 'bob'), 'forbidden');
      assert.deepEqual(await roles(server, dm.channelId), { alice: 'member', bob: 'member' });
      // it never shows in the directory
      assert.equal((await alice.directory({ q: dm.channelId })).channels.length, 0);
    });

    test('direct: with oneself, a channel whose only member is the user; a bad user id is `invalid_field`', async () => {
      const carol = track(await makeClient(server, 'carol', { tabSync: false }));
      const self = await carol.direct('carol');
      assert.equal(self.created, true);
      assert.deepEqual(self.channel.members, ['carol']);
      assert.equal(self.channel.kind, 'direct');
      assert.equal((await carol.direct('carol')).channel.channelId, self.channel.channelId);
      await rejectsWith(carol.direct('not an id'), 'invalid_field', (e) => {
        assert.equal(e.field, 'userId');
      });
    });

    test('createChannel: a group with the user its owner and the members `member`s (201), listed at once; refusals', async () => {
      const dora = track(await makeClient(server, 'dora', { tabSync: false }));
      const ed = track(await makeClient(server, 'ed', { tabSync: false }));
      const added: string[] = [];
      dora.events.on('channelAdded', (id) => added.push(id));
      const club = await dora.createChannel({ channelId: 'dora-club', name: 'Dora’s club', visibility: 'public', members: ['ed', 'fay'] });
      assert.deepEqual(
        [club.channelId, club.name, club.kind, club.visibility, club.memberCount, club.lastSeq, [...club.members].sort()],
        ['dora-club', 'Dora’s club', 'group', 'public', 3, 0, ['dora', 'ed', 'fay']],
      );
      assert.ok(club.createdAt > 0);
      assert.deepEqual(added, ['dora-club']);
      const s = summary(dora, 'dora-club');
      assert.deepEqual([s?.name, s?.role, s?.visibility, s?.memberCount], ['Dora’s club', 'owner', 'public', 3]);
      assert.deepEqual(await roles(server, 'dora-club'), { dora: 'owner', ed: 'member', fay: 'member' });
      // a member reads the roles too; the public channel is in the directory
      const seen = await ed.allMembers('dora-club');
      assert.deepEqual(
        seen.members.map((m) => [m.userId, m.role]),
        [
          ['dora', 'owner'],
          ['ed', 'member'],
          ['fay', 'member'],
        ],
      );
      assert.deepEqual(
        (await ed.directory({ q: 'dora' })).channels.map((c) => c.channelId),
        ['dora-club'],
      );
      // without an id or options: a private channel of the user alone, an id the server chose
      const bare = await dora.createChannel();
      assert.match(bare.channelId, UUID);
      assert.deepEqual([bare.visibility, bare.members, bare.name], ['private', ['dora'], null]);
      assert.equal(summary(dora, bare.channelId)?.role, 'owner');
      // refusals
      await rejectsWith(dora.createChannel({ channelId: 'dora-club' }), 'conflict');
      await rejectsWith(dora.createChannel({ visibility: 'secret' as 'public' }), 'invalid_field', (e) => {
        assert.equal(e.field, 'visibility');
      });
      await rejectsWith(dora.createChannel({ channelId: 'bad id' }), 'invalid_field');
      await rejectsWith(dora.createChannel({ name: 'x'.repeat(201) }), 'invalid_field', (e) => {
        assert.equal(e.field, 'name');
      });
      await rejectsWith(dora.createChannel({ members: ['not an id'] }), 'invalid_field');
    });

    test('roles: an owner sets roles; a moderator adds and removes `member`s only; a member changes nothing; each refusal in the server’s words', async () => {
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      const mo = track(await makeClient(server, 'mo', { tabSync: false }));
      const mel = track(await makeClient(server, 'mel', { tabSync: false }));
      await olive.createChannel({ channelId: 'roles-club', members: ['mo', 'mel'] });
      // the owner makes mo a moderator: mo's own list says so after its next read
      await olive.setMemberRole('roles-club', 'mo', 'moderator');
      assert.deepEqual(await roles(server, 'roles-club'), { mel: 'member', mo: 'moderator', olive: 'owner' });
      await mo.refreshChannels();
      assert.equal(summary(mo, 'roles-club')?.role, 'moderator');

      // the moderator adds a member and removes it again
      await mo.addMember('roles-club', 'newbie');
      assert.equal((await roles(server, 'roles-club')).newbie, 'member');
      assert.equal(summary(mo, 'roles-club')?.memberCount, 4, 'the list read after the change');
      await mo.removeMember('roles-club', 'newbie');
      assert.equal((await roles(server, 'roles-club')).newbie, undefined);
      // …but sets no role, and removes no owner
      await rejectsWith(mo.addMember('roles-club', 'third', { role: 'moderator' }), 'forbidden', (e) => {
        assert.match(e.message, /owner/);
      });
      await rejectsWith(mo.setMemberRole('roles-club', 'mel', 'moderator'), 'forbidden');
      await rejectsWith(mo.removeMember('roles-club', 'olive'), 'forbidden');
      // a member may not add or remove anyone
      await rejectsWith(mel.addMember('roles-club', 'someone'), 'forbidden', (e) => {
        assert.match(e.message, /moderator/);
      });
      await rejectsWith(mel.removeMember('roles-club', 'mo'), 'forbidden');
      // a user who is not a member, alike for a channel that does not exist
      const stranger = track(await makeClient(server, 'stranger', { tabSync: false }));
      await rejectsWith(stranger.addMember('roles-club', 'stranger'), 'forbidden');
      await rejectsWith(stranger.addMember('no-such-club', 'stranger'), 'forbidden');
      // a bad role
      await rejectsWith(olive.setMemberRole('roles-club', 'mel', 'boss'), 'invalid_field', (e) => {
        assert.equal(e.field, 'role');
      });
      assert.deepEqual(await roles(server, 'roles-club'), { mel: 'member', mo: 'moderator', olive: 'owner' });

      // the owner adds with a role, and removes a moderator; mo's list loses the channel
      await olive.addMember('roles-club', 'co-owner', { role: 'owner' });
      await olive.removeMember('roles-club', 'mo');
      assert.deepEqual(await roles(server, 'roles-club'), { 'co-owner': 'owner', mel: 'member', olive: 'owner' });
      await mo.refreshChannels();
      assert.equal(mo.channelIds().includes('roles-club'), false);
      await rejectsWith(mo.send('roles-club', 'still here?'), 'forbidden');
      // a member made moderator may now add members
      await olive.setMemberRole('roles-club', 'mel', 'moderator');
      await mel.addMember('roles-club', 'pat');
      assert.equal((await roles(server, 'roles-club')).pat, 'member');
      // an owner who removes itself: the channel leaves its list at once
      await olive.removeMember('roles-club', 'olive');
      assert.equal(olive.channelIds().includes('roles-club'), false);
    });
  });

  describe(`dm_policy and user_channel_creation (${store})`, () => {
    const servers: ChatdServer[] = [];
    const clients: ChatClient[] = [];
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    const start = async (env: Record<string, string>): Promise<ChatdServer> => {
      const s = await ChatdServer.start({ store, env });
      servers.push(s);
      return s;
    };
    after(async () => {
      for (const c of clients) c.close();
      for (const s of servers) await s.dispose();
    });

    test('dm_policy = off: a new direct channel is refused, `forbidden` with `reason` `dm_policy`', async () => {
      const server = await start({ CHATD_DM_POLICY: 'off' });
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await rejectsWith(alice.direct('bob'), 'forbidden', (e) => {
        assert.equal(e.reason, 'dm_policy');
        assert.match(e.message, /dm_policy/);
      });
      assert.deepEqual(alice.channelIds(), []);
    });

    test('dm_policy = shared_channel: refused until the two share a group channel; then made, and it stays open', async () => {
      const server = await start({ CHATD_DM_POLICY: 'shared_channel' });
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await rejectsWith(alice.direct('bob'), 'forbidden', (e) => {
        assert.equal(e.reason, 'dm_policy');
      });
      // with oneself: always allowed
      assert.equal((await alice.direct('alice')).created, true);
      await server.createChannel('team', ['alice', 'bob']);
      const dm = await alice.direct('bob');
      assert.equal(dm.created, true);
      // bob leaves the group: the direct channel they have stays open to both
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      await bob.leave('team');
      const fromBob = await bob.direct('alice');
      assert.deepEqual([fromBob.created, fromBob.channel.channelId], [false, dm.channel.channelId]);
      // a user who shares nothing with alice is still refused
      const carol = track(await makeClient(server, 'carol', { tabSync: false }));
      await rejectsWith(carol.direct('alice'), 'forbidden', (e) => {
        assert.equal(e.reason, 'dm_policy');
      });
    });

    test('user_channel_creation = false: createChannel is `forbidden`; the admin still creates channels', async () => {
      const server = await start({ CHATD_USER_CHANNEL_CREATION: 'false' });
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await rejectsWith(alice.createChannel({ channelId: 'mine' }), 'forbidden', (e) => {
        assert.match(e.message, /user_channel_creation/);
        assert.equal(e.reason, undefined);
      });
      await server.createChannel('by-admin', ['alice']);
      assert.equal((await alice.refreshChannels()).some((c) => c.channelId === 'by-admin'), true);
      assert.equal(alice.channelIds().includes('mine'), false);
    });
  });
}
