// Retention through the SDK against the real chatd (protocol §19, docs/protocol.md §20.2),
// on SQLite and PostgreSQL, with the sweep every second: an owner sets a channel's
// `retentionSecs` by `setChannelSettings` (every member's snapshot shows it from
// `CHANNEL_UPDATED`, a new session from `HELLO`, `refreshChannels` from
// `GET /v1/me/channels`; `null` clears it; a bad value is `invalid_field`), and a message
// the sweep erased reads `deleted` and `expired`: at once for a client that reads it
// afresh, after `recheckExpired` for a client that held it, a newer message untouched.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChatClient } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor, sleep } from '../helpers/server.js';
import { makeClient, waitForBodies } from '../helpers/clients.js';

for (const store of storeKinds()) {
  describe(`retention through the SDK (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    async function make(channelId: string, members: string[], owners: string[]): Promise<void> {
      const r = await server.admin('POST', '/v1/channels', { channelId, members, owners });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    /** Waits until the server's history shows the message expired (the sweep ran). */
    async function serverSaysExpired(channelId: string, messageId: string): Promise<void> {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const r = await server.admin('GET', `/v1/channels/${channelId}/messages?afterSeq=0`);
        const msgs = (r.json as { messages: { messageId: string; expired?: boolean }[] }).messages;
        if (msgs.find((m) => m.messageId === messageId)?.expired === true) return;
        if (Date.now() > deadline) throw new Error(`never expired: ${JSON.stringify(r.json)}`);
        await sleep(200);
      }
    }
    before(async () => {
      server = await ChatdServer.start({ store, env: { CHATD_RETENTION_SWEEP_SECS: '1' } });
    });
    after(async () => {
      for (const c of clients) c.close();
      await server.dispose();
    });

    test('retentionSecs: set by the owner, shown to every member (CHANNEL_UPDATED, HELLO, refreshChannels), null clears it, a bad value is invalid_field', async () => {
      await make('ret-set', ['alice'], ['olive']);
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await Promise.all([olive.whenOpen(), alice.whenOpen()]);
      const room = alice.channel('ret-set');
      await waitFor(
        () => room.getSnapshot().moderation.postingRole === 'member',
        () => `HELLO's rules ${JSON.stringify(room.getSnapshot().moderation)}`,
      );
      assert.equal(room.getSnapshot().moderation.retentionSecs, undefined, 'unset: the server’s applies');

      const rules = await olive.moderation.setChannelSettings('ret-set', { retentionSecs: 86_400 });
      assert.equal(rules.retentionSecs, 86_400);
      assert.equal(olive.channel('ret-set').getSnapshot().moderation.retentionSecs, 86_400, 'the answer is folded at once');
      await waitFor(
        () => room.getSnapshot().moderation.retentionSecs === 86_400,
        () => `alice's moderation after CHANNEL_UPDATED ${JSON.stringify(room.getSnapshot().moderation)}`,
      );

      // a new session learns it from HELLO; refreshChannels from GET /v1/me/channels
      const later = track(await makeClient(server, 'alice', { tabSync: false }));
      await later.whenOpen();
      await waitFor(
        () => later.channel('ret-set').getSnapshot().moderation.retentionSecs === 86_400,
        () => `HELLO ${JSON.stringify(later.channel('ret-set').getSnapshot().moderation)}`,
      );

      const zero = await olive.moderation.setChannelSettings('ret-set', { retentionSecs: 0 });
      assert.equal(zero.retentionSecs, 0, '0: forever, shown as 0');
      await waitFor(
        () => room.getSnapshot().moderation.retentionSecs === 0,
        () => `alice's moderation ${JSON.stringify(room.getSnapshot().moderation)}`,
      );

      const err = await olive.moderation.setChannelSettings('ret-set', { retentionSecs: -5 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof ChatdError, String(err));
      assert.equal(err.code, 'invalid_field');
      assert.equal(err.field, 'retentionSecs');
      const member = await alice.moderation.setChannelSettings('ret-set', { retentionSecs: 60 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(member instanceof ChatdError && member.code === 'forbidden', `a member may not: ${String(member)}`);
      assert.equal(room.getSnapshot().moderation.retentionSecs, 0, 'refused changes nothing');

      const cleared = await olive.moderation.setChannelSettings('ret-set', { retentionSecs: null });
      assert.equal(cleared.retentionSecs, undefined, 'null: back to the server’s');
      await waitFor(
        () => room.getSnapshot().moderation.retentionSecs === undefined,
        () => `alice's moderation after null ${JSON.stringify(room.getSnapshot().moderation)}`,
      );
      await olive.moderation.setChannelSettings('ret-set', { retentionSecs: 3600 });
      await waitFor(
        () => later.channel('ret-set').getSnapshot().moderation.retentionSecs === 3600,
        () => `later ${JSON.stringify(later.channel('ret-set').getSnapshot().moderation)}`,
      );
      await later.refreshChannels();
      assert.equal(later.channel('ret-set').getSnapshot().moderation.retentionSecs, 3600, 'GET /v1/me/channels shows it');
    });

    test('an expired message: a fresh read shows it deleted and expired; a client holding it learns it by recheckExpired; a newer message stays', async () => {
      await make('ret-expire', ['alice'], ['olive']);
      const olive = track(await makeClient(server, 'olive', { tabSync: false }));
      const alice = track(await makeClient(server, 'alice', { tabSync: false }));
      await Promise.all([olive.whenOpen(), alice.whenOpen()]);
      await olive.moderation.setChannelSettings('ret-expire', { retentionSecs: 1 });
      const room = alice.channel('ret-expire');
      const sent = await alice.send('ret-expire', 'gone soon');
      await waitForBodies(room, ['gone soon']);
      const held = room.getSnapshot().messages[0];
      assert.ok(held !== undefined && !held.deleted && !held.expired, JSON.stringify(held));

      await serverSaysExpired('ret-expire', sent.messageId);
      // keep what is posted from now on
      await olive.moderation.setChannelSettings('ret-expire', { retentionSecs: 0 });
      await alice.send('ret-expire', 'stays');
      await waitForBodies(room, ['gone soon', 'stays']);
      // no entry tells of the expiry: the held message still shows its text
      assert.equal(room.getSnapshot().messages[0]?.body, 'gone soon');

      const n = await alice.recheckExpired('ret-expire');
      assert.equal(n, 1, 'one held message became expired');
      const [gone, kept] = room.getSnapshot().messages;
      assert.ok(gone !== undefined && kept !== undefined);
      assert.deepEqual(
        { id: gone.messageId, body: gone.body, deleted: gone.deleted, expired: gone.expired },
        { id: sent.messageId, body: '', deleted: true, expired: true },
      );
      assert.deepEqual({ body: kept.body, deleted: kept.deleted, expired: kept.expired }, { body: 'stays', deleted: false, expired: false });
      assert.equal(await alice.recheckExpired('ret-expire'), 0, 'a second recheck finds nothing new');

      // a client that reads the channel afresh sees it expired at once
      const fresh = track(await makeClient(server, 'olive', { tabSync: false }));
      const froom = fresh.channel('ret-expire');
      await waitForBodies(froom, ['', 'stays']);
      const first = froom.getSnapshot().messages[0];
      assert.deepEqual({ deleted: first?.deleted, expired: first?.expired, body: first?.body }, { deleted: true, expired: true, body: '' });
    });
  });
}
