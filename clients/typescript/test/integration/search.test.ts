// ChatClient.search and searchPages against the real chatd (protocol §18), on SQLite and on
// PostgreSQL (CHATD_TEST_DATABASE_URL): a term found as a case-insensitive substring
// (Unicode case: ÄRGER/ärger), every term of q, a CJK term, newest first across channels,
// render-ready results with their channelId; the channelId filter; pages with next
// (searchPages reads them all, in order); a deleted message and the text an edit replaced
// never found (the edit's text is); a channel the user left no longer searched; and the
// errors, each with its field: q empty, white space only or over 256 bytes, a bad limit or
// cursor, a channel the user is not in (or that does not exist).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChatClient, type Message } from '../../src/index.js';
import { ChatdServer, storeKinds } from '../helpers/server.js';
import { makeClient } from '../helpers/clients.js';

async function rejectsWith(p: Promise<unknown>, code: string, field?: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ChatdError, `a ChatdError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (field !== undefined) assert.equal(e.field, field, e.message);
    return true;
  });
}

const bodies = (ms: readonly Message[]): string[] => ms.map((m) => m.body);

for (const store of storeKinds()) {
  describe(`search through the SDK (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    async function make(channelId: string, members: string[], visibility = 'private'): Promise<void> {
      const r = await server.admin('POST', '/v1/channels', { channelId, members, visibility });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    before(async () => {
      server = await ChatdServer.start({ store });
    });
    after(async () => {
      for (const c of clients) c.close();
      await server.dispose();
    });

    test('a case-insensitive substring in any script, every term, newest first across channels, render-ready with channelId; channelId filters', async () => {
      await make('sr-a', ['alice', 'bob']);
      await make('sr-b', ['alice', 'bob']);
      await make('sr-c', ['alice', 'carol']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      for (const id of ['sr-a', 'sr-b', 'sr-c']) alice.channel(id);
      const first = await alice.send('sr-a', 'Der ÄRGER war groß');
      await alice.send('sr-a', 'nothing to see');
      await alice.send('sr-c', 'ärger that bob may not read');
      const second = await alice.send('sr-b', 'kein ärger heute');
      await alice.send('sr-b', '会议在東京举行');

      const found = await bob.search('ärger');
      assert.deepEqual(bodies(found.results), ['kein ärger heute', 'Der ÄRGER war groß'], 'newest first, only bob’s channels');
      assert.equal(found.next, undefined);
      const [r0, r1] = found.results;
      assert.deepEqual(
        [r0?.messageId, r0?.channelId, r0?.senderId, r0?.seq, r0?.ts, r0?.deleted, r0?.editedAt, r0?.reactions, r0?.mentionsMe],
        [second.messageId, 'sr-b', 'alice', second.seq, second.ts, false, undefined, [], false],
      );
      assert.deepEqual([r1?.messageId, r1?.channelId, r1?.seq], [first.messageId, 'sr-a', first.seq]);
      // a part of a word, upper case in q; every term must be in the text
      assert.deepEqual(bodies((await bob.search('ÄRG')).results), ['kein ärger heute', 'Der ÄRGER war groß']);
      assert.deepEqual(bodies((await bob.search('ärger GROSS')).results), []);
      assert.deepEqual(bodies((await bob.search('ärger GROß')).results), ['Der ÄRGER war groß']);
      // a CJK term as written
      const cjk = await bob.search('東京');
      assert.deepEqual(bodies(cjk.results), ['会议在東京举行']);
      assert.equal(cjk.results[0]?.channelId, 'sr-b');
      assert.deepEqual(bodies((await bob.search('京都')).results), []);
      // one channel only
      assert.deepEqual(bodies((await bob.search('ärger', { channelId: 'sr-a' })).results), ['Der ÄRGER war groß']);
      assert.deepEqual(bodies((await alice.search('ärger', { channelId: 'sr-c' })).results), ['ärger that bob may not read']);
      // a channel bob is not in, and one that does not exist: the same answer
      await rejectsWith(bob.search('ärger', { channelId: 'sr-c' }), 'forbidden');
      await rejectsWith(bob.search('ärger', { channelId: 'sr-no-such' }), 'forbidden');
    });

    test('bad input: q empty, white space only, over 256 bytes; limit out of 1..100; a cursor this server never gave (invalid_field with the field)', async () => {
      const bob = track(await makeClient(server, 'bob'));
      await bob.whenOpen();
      await rejectsWith(bob.search(''), 'invalid_field', 'q');
      await rejectsWith(bob.search(' \u3000 '), 'invalid_field', 'q');
      await rejectsWith(bob.search('x'.repeat(257)), 'invalid_field', 'q');
      await rejectsWith(bob.search('ä'.repeat(129)), 'invalid_field', 'q');
      // 256 bytes is allowed
      assert.deepEqual((await bob.search('ä'.repeat(128))).results, []);
      await rejectsWith(bob.search('x', { limit: 0 }), 'invalid_field', 'limit');
      await rejectsWith(bob.search('x', { limit: 101 }), 'invalid_field', 'limit');
      await rejectsWith(bob.search('x', { before: 'not-a-cursor' }), 'invalid_field', 'before');
    });

    test('pages: limit results each, next until the last page; searchPages reads them all in order', async () => {
      await make('sr-p', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      alice.channel('sr-p');
      for (let i = 1; i <= 5; i++) await alice.send('sr-p', `pageterm ${i}`);
      await alice.send('sr-p', 'unrelated');
      const p1 = await bob.search('PAGETERM', { limit: 2 });
      assert.deepEqual(bodies(p1.results), ['pageterm 5', 'pageterm 4']);
      assert.equal(typeof p1.next, 'string');
      const p2 = await bob.search('PAGETERM', { limit: 2, before: p1.next });
      assert.deepEqual(bodies(p2.results), ['pageterm 3', 'pageterm 2']);
      const p3 = await bob.search('PAGETERM', { limit: 2, before: p2.next });
      assert.deepEqual(bodies(p3.results), ['pageterm 1']);
      assert.equal(p3.next, undefined, 'the last page has no next');
      const all: string[] = [];
      let pages = 0;
      for await (const page of bob.searchPages('pageterm', { limit: 2, channelId: 'sr-p' })) {
        pages++;
        all.push(...bodies(page.results));
      }
      assert.deepEqual(all, ['pageterm 5', 'pageterm 4', 'pageterm 3', 'pageterm 2', 'pageterm 1']);
      assert.equal(pages, 3);
      // the default page holds them all
      assert.equal((await bob.search('pageterm')).results.length, 5);
    });

    test('a deleted message is never found; an edited one is found by its new text only, with editedAt', async () => {
      await make('sr-e', ['alice', 'bob']);
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      alice.channel('sr-e');
      const edited = await alice.send('sr-e', 'zebracrossing original words');
      const doomed = await alice.send('sr-e', 'okapicount is secret');
      await alice.send('sr-e', 'okapicount kept');
      assert.equal((await bob.search('zebracrossing')).results.length, 1);
      assert.equal((await bob.search('okapicount')).results.length, 2);
      await alice.edit('sr-e', edited.messageId, 'giraffeneck replacement words');
      await alice.deleteMessage('sr-e', doomed.messageId);
      // from the ACK on
      assert.deepEqual((await bob.search('zebracrossing')).results, []);
      assert.deepEqual((await bob.search('original')).results, []);
      const now = await bob.search('giraffeneck');
      assert.deepEqual(bodies(now.results), ['giraffeneck replacement words']);
      assert.equal(now.results[0]?.messageId, edited.messageId);
      assert.equal(typeof now.results[0]?.editedAt, 'number');
      assert.deepEqual(bodies((await bob.search('okapicount')).results), ['okapicount kept']);
      assert.deepEqual((await bob.search('secret', { channelId: 'sr-e' })).results, []);
    });

    test('a channel the user left is no longer searched (and a channelId of it is forbidden)', async () => {
      await make('sr-pub', ['alice', 'bob'], 'public');
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      alice.channel('sr-pub');
      await alice.send('sr-pub', 'walrusmoustache sighting');
      assert.deepEqual(bodies((await bob.search('walrusmoustache')).results), ['walrusmoustache sighting']);
      await bob.leave('sr-pub');
      assert.deepEqual((await bob.search('walrusmoustache')).results, []);
      await rejectsWith(bob.search('walrusmoustache', { channelId: 'sr-pub' }), 'forbidden');
      // alice still finds it; bob again once he is back
      assert.equal((await alice.search('walrusmoustache')).results.length, 1);
      await bob.join('sr-pub');
      assert.equal((await bob.search('walrusmoustache')).results.length, 1);
    });
  });
}
