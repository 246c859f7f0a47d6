// ChatClient.directory, join and leave against the real chatd (protocol §13.2): the
// directory's byte order, `q` filter and pages; joining a public channel and then getting
// another user's messages (live, and the history of a channel opened before the join);
// leaving, after which a send is refused; joining a private or unknown channel refused.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChannelSummary, type ChatClient, type DirectoryPage } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor } from '../helpers/server.js';
import { makeClient, waitForBodies } from '../helpers/clients.js';

async function rejectsWith(p: Promise<unknown>, code: string, field?: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ChatdError, `a ChatdError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (field !== undefined) assert.equal(e.field, field, e.message);
    return true;
  });
}

function summary(c: ChatClient, id: string): ChannelSummary | undefined {
  return c.channelList.getSnapshot().find((s) => s.channelId === id);
}

const ids = (p: DirectoryPage): string[] => p.channels.map((c) => c.channelId);

for (const store of storeKinds()) {
  describe(`directory, join and leave through the SDK (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    /** Creates a channel with the admin API, public unless said otherwise, and names it. */
    async function make(channelId: string, members: string[], visibility = 'public', name?: string): Promise<void> {
      const r = await server.admin('POST', '/v1/channels', { channelId, members, visibility });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      if (name !== undefined) {
        const p = await server.admin('PATCH', `/v1/channels/${channelId}`, { name });
        assert.equal(p.status, 200, JSON.stringify(p.json));
      }
    }
    before(async () => {
      server = await ChatdServer.start({ store });
    });
    after(async () => {
      for (const c of clients) c.close();
      await server.dispose();
    });

    test('the directory: public channels in byte order of the id, filtered by `q` (id or name, any case), in pages', async () => {
      await make('zq-b-general', ['alice', 'bob'], 'public', 'General Chat');
      await make('zq-A-help', [], 'public', 'Help desk');
      await make('zq-c-random', ['carol']);
      await make('zq-secret', ['alice'], 'private', 'general private');
      const alice = track(await makeClient(server, 'alice'));
      await alice.send('zq-b-general', 'hello');
      const dave = track(await makeClient(server, 'dave'));

      const all = await dave.directory({ q: 'zq' });
      // upper case first; the private channel never appears
      assert.deepEqual(ids(all), ['zq-A-help', 'zq-b-general', 'zq-c-random']);
      assert.equal(all.hasMore, false);
      assert.deepEqual(all.channels[1], { channelId: 'zq-b-general', name: 'General Chat', memberCount: 2, lastSeq: 1 });
      assert.deepEqual(all.channels[2], { channelId: 'zq-c-random', name: null, memberCount: 1, lastSeq: 0 });
      // q: a case-insensitive substring of the name or of the id
      assert.deepEqual(ids(await dave.directory({ q: 'GENERAL' })), ['zq-b-general']);
      assert.deepEqual(ids(await dave.directory({ q: 'help DESK' })), ['zq-A-help']);
      assert.deepEqual(ids(await dave.directory({ q: 'RAND' })), ['zq-c-random']);
      assert.deepEqual(ids(await dave.directory({ q: 'no such thing' })), []);
      // pages: after the last id of the one before
      const p1 = await dave.directory({ q: 'zq', limit: 2 });
      assert.deepEqual([ids(p1), p1.hasMore], [['zq-A-help', 'zq-b-general'], true]);
      const p2 = await dave.directory({ q: 'zq', after: 'zq-b-general', limit: 2 });
      assert.deepEqual([ids(p2), p2.hasMore], [['zq-c-random'], false]);
      // walking the whole directory a channel at a time gives the same order
      const walked: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await dave.directory(after === undefined ? { limit: 1 } : { after, limit: 1 });
        walked.push(...ids(page));
        const last = walked[walked.length - 1];
        if (!page.hasMore || last === undefined) break;
        after = last;
      }
      assert.deepEqual(
        walked.filter((id) => id.startsWith('zq-')),
        ['zq-A-help', 'zq-b-general', 'zq-c-random'],
      );
      assert.deepEqual(walked, [...walked].sort(), 'byte order (ids are ASCII)');
      // bad parameters name the field
      await rejectsWith(dave.directory({ limit: 0 }), 'invalid_field', 'limit');
      await rejectsWith(dave.directory({ limit: 501 }), 'invalid_field', 'limit');
      await rejectsWith(dave.directory({ after: 'not an id' }), 'invalid_field', 'after');
      await rejectsWith(dave.directory({ q: 'x'.repeat(201) }), 'invalid_field', 'q');
    });

    test('join: the channel is listed when it resolves, and another user’s messages arrive, live and on opening it', async () => {
      await make('town', ['alice'], 'public', 'Town square');
      const alice = track(await makeClient(server, 'alice'));
      await alice.send('town', 'before bob');
      const bob = track(await makeClient(server, 'bob', { tabSync: false }));
      await bob.whenOpen();
      assert.equal(bob.channelIds().includes('town'), false);
      const added: string[] = [];
      bob.events.on('channelAdded', (id) => added.push(id));
      await bob.join('town');
      // at once: no wait for the periodic read of the channel list
      assert.ok(bob.channelIds().includes('town'), `channels ${bob.channelIds().join(',')}`);
      assert.deepEqual(added, ['town']);
      const s = summary(bob, 'town');
      assert.deepEqual(
        [s?.name, s?.kind, s?.visibility, s?.role, s?.memberCount, s?.lastSeq, s?.opened],
        ['Town square', 'group', 'public', 'member', 2, 1, false],
      );
      // joining again changes nothing
      await bob.join('town');
      assert.equal(summary(bob, 'town')?.memberCount, 2);
      // a live message counts as unread without the channel being opened
      await alice.send('town', 'welcome bob');
      await waitFor(
        () => summary(bob, 'town')?.lastSeq === 2,
        () => JSON.stringify(summary(bob, 'town')),
      );
      // opened: the history, then live messages
      const room = bob.channel('town');
      await waitForBodies(room, ['before bob', 'welcome bob']);
      await alice.send('town', 'and live');
      await waitForBodies(room, ['before bob', 'welcome bob', 'and live']);
      // bob may write there now
      const ack = await bob.send('town', 'thanks');
      assert.equal(ack.seq, 4);
    });

    test('join: a channel opened before the join (refused then) reads its messages once joined', async () => {
      await make('plaza', ['alice']);
      const alice = track(await makeClient(server, 'alice'));
      await alice.send('plaza', 'first in the plaza');
      const carol = track(await makeClient(server, 'carol', { tabSync: false }));
      await carol.whenOpen();
      const room = carol.channel('plaza');
      await waitFor(
        () => room.getSnapshot().status === 'removed',
        () => `status ${room.getSnapshot().status}`,
      );
      await carol.join('plaza');
      // read by the client itself (no loadOlder here, which would read it too)
      const bodies = (): string => room.getSnapshot().messages.map((m) => m.body).join('|');
      await waitFor(
        () => bodies() === 'first in the plaza',
        () => `status ${room.getSnapshot().status}, messages ${bodies()}`,
      );
      assert.equal(room.getSnapshot().status, 'ready');
      await alice.send('plaza', 'hello carol');
      await waitFor(
        () => bodies() === 'first in the plaza|hello carol',
        () => `messages ${bodies()}`,
      );
    });

    test('leave: the channel goes from the list at once; a send to it is then refused with `forbidden`', async () => {
      await make('lobby', ['alice', 'erin']);
      const erin = track(await makeClient(server, 'erin', { tabSync: false }));
      await erin.whenOpen();
      const room = erin.channel('lobby');
      await erin.send('lobby', 'bye all');
      await waitForBodies(room, ['bye all']);
      const removed: string[] = [];
      erin.events.on('channelRemoved', (id) => removed.push(id));
      await erin.leave('lobby');
      assert.equal(erin.channelIds().includes('lobby'), false);
      assert.equal(summary(erin, 'lobby'), undefined);
      assert.deepEqual(removed, ['lobby']);
      assert.equal(room.getSnapshot().status, 'removed');
      await rejectsWith(erin.send('lobby', 'still here?'), 'forbidden');
      // leaving again (not a member), or a channel that does not exist, is fine
      await erin.leave('lobby');
      await erin.leave('no-such-channel');
      const stored = await server.history('lobby');
      assert.deepEqual(
        stored.map((m) => m.body),
        ['bye all'],
        'nothing erin sent after leaving was stored',
      );
      const members = await server.admin('GET', '/v1/channels/lobby/members');
      assert.deepEqual(
        (members.json as { members: { userId: string }[] }).members.map((m) => m.userId),
        ['alice'],
      );
      // and back in: the channel is listed again
      await erin.join('lobby');
      assert.ok(erin.channelIds().includes('lobby'));
    });

    test('join: a private channel, or one that does not exist, is refused alike with `forbidden`', async () => {
      await make('vault', ['alice'], 'private');
      const frank = track(await makeClient(server, 'frank'));
      await frank.whenOpen();
      await rejectsWith(frank.join('vault'), 'forbidden');
      await rejectsWith(frank.join('nowhere'), 'forbidden');
      await rejectsWith(frank.join('not an id'), 'invalid_field');
      assert.deepEqual(frank.channelIds(), []);
      const members = await server.admin('GET', '/v1/channels/vault/members');
      assert.deepEqual(
        (members.json as { members: { userId: string }[] }).members.map((m) => m.userId),
        ['alice'],
      );
      // the directory does not show it either
      assert.deepEqual(ids(await frank.directory({ q: 'vault' })), []);
    });
  });
}
