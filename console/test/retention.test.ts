// Browser test of the console's retention (protocol §19): Debian's Chromium driven by
// playwright-core, olive (the owner) and bob (a member) in their own browser contexts,
// against the real chatd sweeping every second. Olive's channel rules show the retention
// in force and set a channel's to 2 seconds (bob, a member, has no such form); once the
// server's sweep has erased bob's message, bob's page, reloaded, shows it as "This message
// expired." (marked expired), apart from a message deleted by a moderator ("This message
// was deleted.") and from a newer message kept forever. Every assertion reads the page the
// user sees, and the server's own reads.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { Browsers, CHAT_VIEWPORT, ChatdServer, message, openChannel, send, sleep } from './harness.js';

interface Stored {
  messageId: string;
  body: string;
  kind?: string;
  deleted?: boolean;
  expired?: boolean;
}

describe('console retention in a real browser (olive the owner, bob a member)', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();
  let olive: Page;
  let bob: Page;

  function signIn(user: string): Promise<Page> {
    return browsers.signInAs(chatd, user, { viewport: CHAT_VIEWPORT });
  }

  async function history(channelId: string): Promise<Stored[]> {
    const r = await chatd.admin('GET', `/v1/channels/${channelId}/messages?afterSeq=0`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return (r.json as { messages: Stored[] }).messages.filter((m) => (m.kind ?? 'message') === 'message');
  }

  before(async () => {
    chatd = await ChatdServer.start({ env: { CHATD_RETENTION_SWEEP_SECS: '1' } });
    await browsers.launch();
    olive = await signIn('olive');
    bob = await signIn('bob');
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('olive sets a 2 s retention; after the sweep bob’s reloaded page shows the message expired, apart from a deleted one and a kept one', async () => {
    const id = 'ret-room';
    const r = await chatd.admin('POST', '/v1/channels', { channelId: id, members: ['bob'], owners: ['olive'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    for (const p of [olive, bob]) await p.locator(`button.channel[data-channel="${id}"]`).waitFor();
    await openChannel(olive, id);
    await openChannel(bob, id);

    // the owner's rules show the retention in force; a member has no form
    await olive.locator('#rules-retention-now', { hasText: "Messages are kept as the server's retention says." }).waitFor();
    assert.equal(await bob.locator('#rules').isHidden(), true, 'a member has no rules form');

    await send(bob, 'deleted by hand');
    await send(bob, 'fleeting words');
    await message(olive, 'fleeting words').waitFor();
    const byHand = (await history(id)).find((m) => m.body === 'deleted by hand');
    assert.ok(byHand !== undefined);
    const del = await chatd.admin('DELETE', `/v1/channels/${id}/messages/${byHand.messageId}`);
    assert.ok(del.status === 200 || del.status === 204, `delete: ${del.status}`);
    await bob.locator('#messages li.msg[data-deleted="true"][data-expired="false"] .body', { hasText: 'This message was deleted.' }).waitFor();

    // a number of seconds: the field shows when "for … seconds" is picked
    assert.equal(await olive.locator('#rules-retention-secs').isHidden(), true);
    await olive.locator('#rules-retention').selectOption('secs');
    await olive.locator('#rules-retention-secs').fill('2');
    await olive.locator('#rules-save').click();
    await olive.locator('#rules-status', { hasText: 'Messages are kept 2 s, then expire.' }).waitFor();
    await olive.locator('#rules-retention-now', { hasText: 'Messages are kept 2 s, then expire.' }).waitFor();
    const shown = (await chatd.admin('GET', `/v1/channels/${id}`)).json as { retentionSecs?: number };
    assert.equal(shown.retentionSecs, 2, 'stored on the channel');

    // the sweep erases it (the server's history says so)
    const deadline = Date.now() + 30_000;
    for (;;) {
      const gone = (await history(id)).find((m) => m.messageId !== byHand.messageId && m.expired === true);
      if (gone !== undefined) break;
      if (Date.now() > deadline) throw new Error(`never expired: ${JSON.stringify(await history(id))}`);
      await sleep(250);
    }
    // keep what comes next
    await olive.locator('#rules-retention').selectOption({ label: 'keep messages forever' });
    await olive.locator('#rules-save').click();
    await olive.locator('#rules-status', { hasText: 'Messages are kept forever.' }).waitFor();
    await send(bob, 'stays put');
    await message(olive, 'stays put').waitFor();
    // no entry tells of the expiry: the page holding it still shows it until its next read
    assert.equal(await message(bob, 'fleeting words').count(), 1);

    await bob.reload();
    await bob.locator('#conn[data-state="connected"]').waitFor({ timeout: 60_000 });
    await openChannel(bob, id);
    await message(bob, 'stays put').waitFor();
    const expired = bob.locator('#messages li.msg[data-expired="true"]');
    await expired.locator('.body', { hasText: 'This message expired.' }).waitFor();
    assert.equal(await expired.count(), 1, 'one expired message');
    assert.equal(await expired.getAttribute('data-deleted'), 'true');
    assert.match((await expired.getAttribute('aria-label')) ?? '', /expired message/);
    assert.equal(await message(bob, 'fleeting words').count(), 0, 'its text is gone');
    const deleted = bob.locator('#messages li.msg[data-deleted="true"][data-expired="false"]');
    assert.equal(await deleted.count(), 1, 'the deleted one stays "deleted", not "expired"');
    assert.equal(await deleted.locator('.body').textContent(), 'This message was deleted.');
    assert.equal(await bob.locator('#messages li.msg .body', { hasText: 'This message expired.' }).count(), 1);
  });
});
