// Browser tests of the admin view's data lifecycle cards (protocol §19): Debian's Chromium
// driven by playwright-core against the real chatd. Erase: the confirmation names the user
// and its Erase button stays off until the admin types that id; afterwards the user's
// messages read as deleted to another member, the user has left the channel, their page is
// signed out and their old token is refused; a bad id is refused in words; a user with many
// messages shows "Still erasing…" (202) until the erasure is done. Export: the file the
// browser downloads is chatd-export-<userId>.ndjson, its lines parse, and it ends with the
// end line counting them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { Browsers, ChatdServer } from './harness.js';

/** This file's browser window, in CSS pixels (taller than the chat tests' CHAT_VIEWPORT). */
const VIEWPORT = { width: 1200, height: 900 };

describe('console admin view: erase and export a user, in a real browser', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();
  const servers: ChatdServer[] = [];

  function newPage(server: ChatdServer): Promise<Page> {
    return browsers.newPage(server.httpUrl, { viewport: VIEWPORT, acceptDownloads: true });
  }

  function signIn(server: ChatdServer, user: string, token: string): Promise<Page> {
    return browsers.signIn(server.httpUrl, token, { viewport: VIEWPORT, acceptDownloads: true });
  }

  async function openAdmin(server: ChatdServer): Promise<Page> {
    const page = await newPage(server);
    await page.goto(`${server.httpUrl}/console#admin`);
    await page.locator('#admin-token').fill(server.adminToken);
    await page.locator('#admin-open').click();
    await page.locator('#erase-user').waitFor();
    return page;
  }

  /** Asks to erase `userId` and types it into the confirmation (the button then on). */
  async function askErase(admin: Page, userId: string): Promise<void> {
    await admin.locator('#erase-user').fill(userId);
    await admin.locator('#erase-ask').click();
    await admin.locator('#erase-question', { hasText: `Erase ${userId} for good?` }).waitFor();
    await admin.locator('#erase-confirm').fill(userId);
    assert.equal(await admin.locator('#erase-confirm-button').isEnabled(), true);
  }

  before(async () => {
    chatd = await ChatdServer.start();
    servers.push(chatd);
    await browsers.launch();
  });

  after(async () => {
    await browsers.close();
    for (const s of servers) await s.dispose();
  });

  test('erase: the confirmation names the user and stays off until the id is typed; then bob sees her messages deleted and her old token is refused', async () => {
    const r = await chatd.admin('POST', '/v1/channels', { channelId: 'erase-room', members: ['alice', 'bob'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const aliceToken = await chatd.token('alice');
    const alice = await signIn(chatd, 'alice', aliceToken);
    const bob = await signIn(chatd, 'bob', await chatd.token('bob'));
    for (const p of [alice, bob]) {
      await p.locator('button.channel[data-channel="erase-room"]').click();
      await p.locator('#channel-title', { hasText: '# erase-room' }).waitFor();
    }
    for (const [page, body] of [
      [alice, 'my phone number is 555-0100'],
      [bob, 'bob stays'],
      [alice, 'and my address too'],
    ] as const) {
      await page.locator('#composer').fill(body);
      await page.locator('#composer').press('Enter');
      await bob.locator('#messages li.msg .body', { hasText: body }).waitFor();
    }

    const admin = await openAdmin(chatd);
    // the question names the user; the button is off until the id is typed exactly
    await admin.locator('#erase-user').fill('alice');
    await admin.locator('#erase-ask').click();
    await admin.locator('#erase-question', { hasText: 'Erase alice for good?' }).waitFor();
    assert.equal(await admin.locator('label[for="erase-confirm"]').textContent(), 'Type alice to confirm');
    assert.equal(await admin.locator('#erase-confirm-button').textContent(), 'Erase alice');
    assert.equal(await admin.locator('#erase-confirm-button').isDisabled(), true, 'off before anything is typed');
    for (const wrong of ['alic', 'Alice', 'alice ', 'bob']) {
      await admin.locator('#erase-confirm').fill(wrong);
      assert.equal(await admin.locator('#erase-confirm-button').isDisabled(), true, `off with "${wrong}" typed`);
    }
    // Enter with a wrong id erases nothing either
    await admin.locator('#erase-confirm').press('Enter');
    // Cancel: nothing erased
    await admin.locator('#erase-cancel').click();
    await admin.locator('#erase-confirm-box').waitFor({ state: 'hidden' });
    const still = (await chatd.admin('GET', '/v1/channels/erase-room')).json as { members: string[] };
    assert.deepEqual(still.members, ['alice', 'bob'], 'cancel erased nothing');
    assert.equal((await fetch(`${chatd.httpUrl}/v1/me/channels`, { headers: { authorization: `Bearer ${aliceToken}` } })).status, 200);

    await admin.locator('#erase-ask').click();
    await admin.locator('#erase-confirm').fill('alice');
    assert.equal(await admin.locator('#erase-confirm-button').isEnabled(), true, 'on once the id matches');
    await admin.locator('#erase-confirm-button').click();
    const out = admin.locator('#erase-result[data-state="done"]');
    await out.waitFor();
    const said = (await out.textContent()) ?? '';
    for (const words of ['Erased alice.', 'deleted for everyone', 'memberships ended', 'live sessions are closed', 'issued to alice before now is refused']) {
      assert.ok(said.includes(words), `the result says "${words}": ${said}`);
    }
    assert.equal(await admin.locator('#erase-result').getAttribute('data-ok'), 'true');
    await admin.locator('#admin-log li', { hasText: 'erased alice' }).waitFor();

    // bob sees alice's messages deleted, his own as it was; alice has left the channel
    const aliceMsgs = bob.locator('#messages li.msg[data-sender="alice"]');
    await bob.locator('#messages li.msg[data-sender="alice"][data-deleted="true"]').nth(1).waitFor();
    assert.equal(await aliceMsgs.count(), 2);
    for (const text of await aliceMsgs.locator('.body').allTextContents()) assert.equal(text, 'This message was deleted.');
    assert.equal(await bob.locator('#messages li.msg[data-sender="bob"] .body').textContent(), 'bob stays');
    assert.equal(await bob.locator('#messages').getByText('555-0100').count(), 0, 'the erased text is gone from bob’s page');
    const after = (await chatd.admin('GET', '/v1/channels/erase-room')).json as { members: string[] };
    assert.deepEqual(after.members, ['bob']);

    // alice's old token is refused, and her page says why
    const refused = await fetch(`${chatd.httpUrl}/v1/me/channels`, { headers: { authorization: `Bearer ${aliceToken}` } });
    assert.equal(refused.status, 401);
    assert.match(await refused.text(), /issued before the user was erased/);
    await alice.locator('#banner', { hasText: 'An admin erased this user' }).waitFor({ timeout: 60_000 });
    await alice.locator('#signin').waitFor();
  });

  test('erase: a bad id is refused in words, and nothing is asked for an empty id', async () => {
    const admin = await openAdmin(chatd);
    await admin.locator('#erase-ask').click();
    await admin.locator('#erase-result[data-ok="false"]', { hasText: 'Enter the id of the user to erase.' }).waitFor();
    assert.equal(await admin.locator('#erase-confirm-box').isHidden(), true);
    await askErase(admin, 'bad id');
    await admin.locator('#erase-confirm-button').click();
    const out = admin.locator('#erase-result[data-state="failed"]');
    await out.waitFor();
    assert.equal(await out.getAttribute('data-ok'), 'false');
    assert.match((await out.textContent()) ?? '', /“bad id” is not a user id chatd accepts \(userId: .*\); nothing was erased\./);
  });

  test('erase: a user with many messages answers 202 first; the card says "Still erasing…" and asks again until it is done', async () => {
    // A request may wait at most handshake_timeout_ms less a second (at least 0.5 s), and one
    // entry in flight at a time: erasing 600 messages takes longer than that.
    const slow = await ChatdServer.start({ env: { CHATD_HANDSHAKE_TIMEOUT_MS: '1000', CHATD_ERASURE_BATCH: '1' } });
    servers.push(slow);
    assert.equal((await slow.admin('POST', '/v1/channels', { channelId: 'big', members: ['dave', 'erin'] })).status, 201);
    const N = 600;
    for (let i = 0; i < N; i += 20) {
      const batch = [];
      for (let j = i; j < i + 20; j++) batch.push(slow.admin('POST', '/v1/channels/big/messages', { senderId: 'dave', clientMsgId: `c${j}`, body: `dave says ${j}` }));
      for (const a of await Promise.all(batch)) assert.equal(a.status, 201, JSON.stringify(a.json));
    }
    const admin = await openAdmin(slow);
    // every state and text the result shows, in order
    await admin.evaluate(() => {
      const el = document.getElementById('erase-result');
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      if (el !== null) new MutationObserver(() => seen.push(`${el.dataset.state ?? ''}|${el.textContent ?? ''}`)).observe(el, { attributes: true, childList: true, subtree: true, characterData: true });
    });
    await askErase(admin, 'dave');
    await admin.locator('#erase-confirm-button').click();
    await admin.locator('#erase-result[data-state="done"]', { hasText: 'Erased dave.' }).waitFor({ timeout: 120_000 });
    const seen = await admin.evaluate(() => (window as unknown as { seen: string[] }).seen);
    const pending = seen.filter((s) => s.startsWith('pending|'));
    assert.ok(pending.length > 0, `"Still erasing…" was shown: ${JSON.stringify(seen)}`);
    assert.match(pending[0] ?? '', /^pending\|Still erasing dave… \(\d+ s so far/);
    // and it is done: every message of dave's reads deleted
    const entries = (await slow.history('big')) as unknown as { senderId: string; kind: string; deleted?: boolean }[];
    const daves = entries.filter((e) => e.senderId === 'dave' && e.kind === 'message');
    assert.equal(daves.length, N);
    assert.equal(daves.filter((m) => m.deleted === true).length, N, 'every message of dave’s reads deleted');
    assert.equal(entries.filter((e) => e.senderId === 'dave' && e.kind === 'delete').length, N, 'a delete entry each');
  });

  test('export: "Export data" downloads chatd-export-<userId>.ndjson whose lines parse and end with the end line counting them', async () => {
    assert.equal((await chatd.admin('POST', '/v1/channels', { channelId: 'export-room', members: ['frank', 'gina'] })).status, 201);
    for (const [i, body] of ['first from frank', 'second from frank'].entries()) {
      const r = await chatd.admin('POST', '/v1/channels/export-room/messages', { senderId: 'frank', clientMsgId: `e${i}`, body });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    const up = await fetch(`${chatd.httpUrl}/v1/channels/export-room/attachments?filename=note.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await chatd.token('frank')}`, 'content-type': 'text/plain' },
      body: 'hi',
    });
    assert.equal(up.status, 201, await up.text());

    const admin = await openAdmin(chatd);
    await admin.locator('#export-user').fill('frank');
    const [download] = await Promise.all([admin.waitForEvent('download'), admin.locator('#export-start').click()]);
    assert.equal(download.suggestedFilename(), 'chatd-export-frank.ndjson');
    const text = readFileSync(await download.path(), 'utf8');
    const lines = text.split('\n').filter((l) => l !== '');
    const parsed = lines.map((l) => JSON.parse(l) as { type: string; count?: number; body?: string; channelId?: string; url?: string });
    const last = parsed[parsed.length - 1];
    assert.equal(last?.type, 'end');
    assert.equal(last?.count, parsed.length - 1, 'the end line counts every line before it');
    assert.deepEqual(
      parsed.filter((l) => l.type === 'message').map((l) => [l.channelId, l.body]),
      [
        ['export-room', 'first from frank'],
        ['export-room', 'second from frank'],
      ],
    );
    assert.equal(parsed.filter((l) => l.type === 'membership' && l.channelId === 'export-room').length, 1);
    const files = parsed.filter((l) => l.type === 'attachment');
    assert.equal(files.length, 1);
    assert.ok((files[0]?.url ?? '').startsWith('/v1/attachments/'), JSON.stringify(files[0]));
    const out = admin.locator('#export-result[data-state="done"]');
    await out.waitFor();
    assert.equal(await out.getAttribute('data-ok'), 'true');
    assert.match((await out.textContent()) ?? '', new RegExp(`Exported frank: ${parsed.length - 1} lines \\(2 messages, 1 membership, 0 reactions, 1 attachment\\), and the end line counts ${parsed.length - 1}: the file is complete\\.`));
    assert.equal(await admin.locator('#export-link').getAttribute('download'), 'chatd-export-frank.ndjson');

    // a user chatd never saw: a file with the end line alone
    await admin.locator('#export-user').fill('nobody');
    const [empty] = await Promise.all([admin.waitForEvent('download'), admin.locator('#export-start').click()]);
    assert.equal(empty.suggestedFilename(), 'chatd-export-nobody.ndjson');
    assert.deepEqual(
      readFileSync(await empty.path(), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as unknown),
      [{ type: 'end', count: 0 }],
    );
    await admin.locator('#export-result[data-state="done"]', { hasText: 'chatd holds nothing for this user' }).waitFor();

    // a bad id: refused in words, nothing downloaded
    await admin.locator('#export-user').fill('bad id');
    await admin.locator('#export-start').click();
    await admin.locator('#export-result[data-state="failed"]', { hasText: '“bad id” is not a user id chatd accepts' }).waitFor();
  });
});
