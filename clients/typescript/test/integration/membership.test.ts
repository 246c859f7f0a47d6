// The membership frames of protocol 1.2 §13.3 through the SDK against the real chatd:
// CHANNEL_ADDED lists a channel the user is added to without any read of GET
// /v1/me/channels; MEMBER join, role and leave fold into a live member list (in a channel
// with no message, where every frame's afterSeq is the read's atSeq, and in one with
// messages); CHANNEL_REMOVED with its reason (left, removed, deleted) drops the channel;
// a member list is read again after a reconnect, getting what changed while away; the
// member next in line is made owner when the last owner leaves (docs/protocol.md §13.1).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChannelSummary, ChatClient, MemberFrame, MemberListSnapshot } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor } from '../helpers/server.js';
import { makeClient, waitForBodies } from '../helpers/clients.js';
import { CuttableProxy } from '../helpers/proxy.js';

function summary(c: ChatClient, id: string): ChannelSummary | undefined {
  return c.channelList.getSnapshot().find((s) => s.channelId === id);
}

/** The member list of `channelId` as `[userId, role]` pairs. */
function roles(c: ChatClient, channelId: string): string[][] {
  return c
    .memberList(channelId)
    .getSnapshot()
    .members.map((m) => [m.userId, m.role]);
}

/** Waits until `c`'s live member list of `channelId` is `expected` (`[userId, role]`, in order). */
async function listShows(c: ChatClient, channelId: string, expected: string[][]): Promise<MemberListSnapshot> {
  const list = c.memberList(channelId);
  await waitFor(
    () => list.getSnapshot().status === 'ready' && JSON.stringify(roles(c, channelId)) === JSON.stringify(expected),
    () => `${c.userId}'s member list of ${channelId}: ${JSON.stringify(list.getSnapshot())}, expected ${JSON.stringify(expected)}`,
  );
  return list.getSnapshot();
}

for (const store of storeKinds()) {
  describe(`membership frames through the SDK (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const proxies: CuttableProxy[] = [];
    /** Paths of the GET requests this process made (the SDK's and the tests' own). */
    const gets: string[] = [];
    const realFetch = globalThis.fetch;
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    /** A channel made by the admin with `members`, and `owners` as its owners. */
    async function make(channelId: string, members: string[], owners: string[] = []): Promise<void> {
      const r = await server.admin('POST', '/v1/channels', { channelId, members, owners });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    before(async () => {
      server = await ChatdServer.start({ store });
      globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
        const url = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
        if ((init?.method ?? 'GET') === 'GET') gets.push(new URL(url).pathname);
        return realFetch(input, init);
      };
    });
    after(async () => {
      globalThis.fetch = realFetch;
      for (const c of clients) c.close();
      for (const p of proxies) await p.close().catch(() => undefined);
      await server.dispose();
    });

    test('CHANNEL_ADDED: a channel the user is added to (by an owner, a new channel, a direct channel) is listed at once, with no read of GET /v1/me/channels', async () => {
      await make('ca-room', ['alice'], ['olive']);
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await alice.send('ca-room', 'before bob');
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      await Promise.all([olive.whenOpen(), bob.whenOpen()]);
      const added: string[] = [];
      bob.events.on('channelAdded', (id) => added.push(id));
      const readsBefore = gets.filter((p) => p === '/v1/me/channels').length;

      // an owner adds bob
      await olive.addMember('ca-room', 'bob', { role: 'moderator' });
      await waitFor(
        () => bob.channelIds().includes('ca-room'),
        () => `bob's channels ${bob.channelIds().join(',')}`,
      );
      assert.deepEqual(summary(bob, 'ca-room'), {
        channelId: 'ca-room',
        name: null,
        metadata: null,
        lastSeq: 1,
        unread: 1,
        readSeq: 0,
        opened: false,
        kind: 'group',
        visibility: 'private',
        role: 'moderator',
        memberCount: 3,
        unreadMentions: 0,
        notify: 'all',
        snoozeUntil: null,
      });
      // tracked as a HELLO channel: opened, it reads what came before, then live messages
      const room = bob.channel('ca-room');
      await waitForBodies(room, ['before bob']);
      await alice.send('ca-room', 'hello bob');
      await waitForBodies(room, ['before bob', 'hello bob']);
      assert.equal((await bob.send('ca-room', 'hi all')).seq, 3);

      // a new channel bob is a member of (the admin's), and a direct channel alice opens
      await make('ca-new', ['bob', 'carol']);
      const { channel: dm } = await alice.direct('bob');
      await waitFor(
        () => bob.channelIds().includes('ca-new') && bob.channelIds().includes(dm.channelId),
        () => `bob's channels ${bob.channelIds().join(',')}`,
      );
      assert.equal(summary(bob, dm.channelId)?.kind, 'direct');
      assert.equal(summary(bob, 'ca-new')?.memberCount, 2);
      assert.deepEqual([...added].sort(), ['ca-new', 'ca-room', dm.channelId].sort());
      // nobody read the channel list: the frames brought it all (alice's direct() did not
      // need to either when the frame came before its answer; it may have, once)
      const reads = gets.filter((p) => p === '/v1/me/channels').length - readsBefore;
      assert.ok(reads <= 1, `${reads} reads of GET /v1/me/channels`);
    });

    test('MEMBER: join, role and leave fold into a live member list, in a channel with no message (afterSeq = atSeq) and with messages', async () => {
      await make('mf-quiet', ['alice'], ['olive']);
      await make('mf-busy', ['alice'], ['olive']);
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      await Promise.all([alice.whenOpen(), olive.whenOpen(), bob.whenOpen()]);
      const frames: MemberFrame[] = [];
      alice.events.on('member', (f) => frames.push(f));
      await olive.send('mf-busy', 'one');
      await olive.send('mf-busy', 'two');
      for (const id of ['mf-quiet', 'mf-busy']) {
        const initial = await listShows(alice, id, [
          ['alice', 'member'],
          ['olive', 'owner'],
        ]);
        assert.equal(initial.atSeq, id === 'mf-quiet' ? 0 : 2);
        const membersRead = gets.filter((p) => p === `/v1/channels/${id}/members`).length;
        await olive.addMember(id, 'bob');
        await listShows(alice, id, [
          ['alice', 'member'],
          ['bob', 'member'],
          ['olive', 'owner'],
        ]);
        await olive.setMemberRole(id, 'bob', 'moderator');
        await listShows(alice, id, [
          ['alice', 'member'],
          ['bob', 'moderator'],
          ['olive', 'owner'],
        ]);
        // alice's own role, in her list and her channel list
        await olive.setMemberRole(id, 'alice', 'moderator');
        await listShows(alice, id, [
          ['alice', 'moderator'],
          ['bob', 'moderator'],
          ['olive', 'owner'],
        ]);
        await waitFor(
          () => summary(alice, id)?.role === 'moderator',
          () => JSON.stringify(summary(alice, id)),
        );
        await bob.leave(id);
        await listShows(alice, id, [
          ['alice', 'moderator'],
          ['olive', 'owner'],
        ]);
        assert.equal(summary(alice, id)?.memberCount, 2);
        // folded, not read again
        assert.equal(gets.filter((p) => p === `/v1/channels/${id}/members`).length, membersRead, `reads of ${id}'s members`);
        const ops = frames.filter((f) => f.channelId === id).map((f) => [f.userId, f.op, f.role, f.actorId]);
        assert.deepEqual(ops, [
          ['bob', 'join', 'member', 'olive'],
          ['bob', 'role', 'moderator', 'olive'],
          ['alice', 'role', 'moderator', 'olive'],
          ['bob', 'leave', undefined, 'bob'],
        ]);
        const seqs = frames.filter((f) => f.channelId === id).map((f) => f.afterSeq);
        assert.deepEqual(seqs, seqs.map(() => (id === 'mf-quiet' ? 0 : 2)));
      }
      // the list reads the same as the route now
      const route = await alice.allMembers('mf-busy');
      assert.deepEqual(
        route.members.map((m) => [m.userId, m.role]),
        roles(alice, 'mf-busy'),
      );
    });

    test('succession: when the last owner leaves, the member next in line is made owner, in the member lists and in its own channel list (MEMBER role without actorId)', async () => {
      await make('su-room', ['alice', 'bob'], ['olive']);
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      await Promise.all([alice.whenOpen(), bob.whenOpen(), olive.whenOpen()]);
      const frames: MemberFrame[] = [];
      bob.events.on('member', (f) => frames.push(f));
      await listShows(bob, 'su-room', [
        ['alice', 'member'],
        ['bob', 'member'],
        ['olive', 'owner'],
      ]);
      await olive.setMemberRole('su-room', 'bob', 'moderator');
      await olive.leave('su-room');
      // bob, the only moderator, is next in line (alice joined with him)
      await listShows(bob, 'su-room', [
        ['alice', 'member'],
        ['bob', 'owner'],
      ]);
      await listShows(alice, 'su-room', [
        ['alice', 'member'],
        ['bob', 'owner'],
      ]);
      await waitFor(
        () => summary(bob, 'su-room')?.role === 'owner',
        () => JSON.stringify(summary(bob, 'su-room')),
      );
      assert.deepEqual(
        frames.map((f) => [f.userId, f.op, f.role, f.actorId]),
        [
          ['bob', 'role', 'moderator', 'olive'],
          ['olive', 'leave', undefined, 'olive'],
          ['bob', 'role', 'owner', undefined],
        ],
      );
      // and has an owner's powers
      await bob.setMemberRole('su-room', 'alice', 'moderator');
      await listShows(alice, 'su-room', [
        ['alice', 'moderator'],
        ['bob', 'owner'],
      ]);
    });

    test('CHANNEL_REMOVED: the channel goes with its reason: left (from another device), removed (by an owner), deleted (by the admin)', async () => {
      await make('cr-left', ['bob'], ['olive']);
      await make('cr-removed', ['bob'], ['olive']);
      await make('cr-deleted', ['bob'], ['olive']);
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      await Promise.all([bob.whenOpen(), olive.whenOpen()]);
      const removed: [string, string | undefined][] = [];
      bob.events.on('channelRemoved', (id, reason) => removed.push([id, reason]));
      const stores = ['cr-left', 'cr-removed', 'cr-deleted'].map((id) => bob.channel(id));
      const lists = ['cr-left', 'cr-removed', 'cr-deleted'].map((id) => bob.memberList(id));
      for (const l of lists) {
        await waitFor(
          () => l.getSnapshot().status === 'ready',
          () => JSON.stringify(l.getSnapshot()),
        );
      }
      // bob leaves on another device: this session hears it from the server
      const phone = track(await makeClient(server, 'bob', { tabSync: false }));
      await phone.leave('cr-left');
      await olive.removeMember('cr-removed', 'bob');
      assert.equal((await server.admin('DELETE', '/v1/channels/cr-deleted')).status, 204);
      await waitFor(
        () => removed.length === 3,
        () => JSON.stringify(removed),
      );
      assert.deepEqual(removed, [
        ['cr-left', 'left'],
        ['cr-removed', 'removed'],
        ['cr-deleted', 'deleted'],
      ]);
      assert.deepEqual(
        bob.channelIds().filter((id) => id.startsWith('cr-')),
        [],
      );
      assert.deepEqual(
        stores.map((s) => [s.getSnapshot().status, s.getSnapshot().removedReason]),
        [
          ['removed', 'left'],
          ['removed', 'removed'],
          ['removed', 'deleted'],
        ],
      );
      assert.deepEqual(
        lists.map((l) => [l.getSnapshot().status, l.getSnapshot().members.length]),
        [
          ['removed', 0],
          ['removed', 0],
          ['removed', 0],
        ],
      );
      // added back by its owner: listed again, its member list read again
      await olive.addMember('cr-removed', 'bob');
      await listShows(bob, 'cr-removed', [
        ['bob', 'member'],
        ['olive', 'owner'],
      ]);
      assert.ok(bob.channelIds().includes('cr-removed'));
      assert.equal(stores[1]?.getSnapshot().removedReason, undefined);
    });

    test('after a reconnect the member list is read again: a change made while the connection was down shows', async () => {
      await make('rc-room', ['alice', 'bob'], ['olive']);
      const proxy = new CuttableProxy(server.port);
      proxies.push(proxy);
      await proxy.listen();
      const online = new EventTarget();
      // reconnects wait a minute unless `online` fires: the change below is made while away
      const alice = track(
        await makeClient(
          server,
          'alice',
          // (the HTTP routes straight to chatd: the proxy only carries WebSockets)
          { tabSync: false, onlineEvents: online, reconnectBackoff: { baseMs: 60_000, maxMs: 60_000 }, httpUrl: server.httpUrl },
          `ws://127.0.0.1:${proxy.port}/v1/ws`,
        ),
      );
      await alice.whenOpen();
      const list = alice.memberList('rc-room');
      list.subscribe(() => undefined);
      await listShows(alice, 'rc-room', [
        ['alice', 'member'],
        ['bob', 'member'],
        ['olive', 'owner'],
      ]);
      const reads = (): number => gets.filter((p) => p === '/v1/channels/rc-room/members').length;
      const readsBefore = reads();
      assert.ok(proxy.cutAll() >= 1);
      await waitFor(
        () => alice.connection.getSnapshot().state === 'reconnecting',
        () => alice.connection.getSnapshot().state,
      );
      // while away: bob leaves, carol joins as moderator (alice gets no frame of either)
      assert.equal((await server.admin('DELETE', '/v1/channels/rc-room/members/bob')).status, 204);
      assert.equal((await server.admin('PUT', '/v1/channels/rc-room/members/carol', { role: 'moderator' })).status, 204);
      assert.deepEqual(roles(alice, 'rc-room'), [
        ['alice', 'member'],
        ['bob', 'member'],
        ['olive', 'owner'],
      ]);
      online.dispatchEvent(new Event('online'));
      await alice.whenOpen();
      await listShows(alice, 'rc-room', [
        ['alice', 'member'],
        ['carol', 'moderator'],
        ['olive', 'owner'],
      ]);
      assert.equal(reads(), readsBefore + 1, 'read once after the reconnect');
      // and live again after it
      assert.equal((await server.admin('PUT', '/v1/channels/rc-room/members/dave')).status, 204);
      await listShows(alice, 'rc-room', [
        ['alice', 'member'],
        ['carol', 'moderator'],
        ['dave', 'member'],
        ['olive', 'owner'],
      ]);
    });
  });
}
