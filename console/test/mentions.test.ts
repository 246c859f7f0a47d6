// Browser tests of the console's mentions and notification settings (protocol §16):
// Debian's Chromium driven by playwright-core, alice (a member) and bob (a member) in their
// own browser contexts, against the real chatd. Typing `@b` in alice's composer offers bob
// from the member list; Tab picks him and the send carries `mentions: ["bob"]` (read back
// from the server); bob's channel list shows a mention badge while he is elsewhere, gone
// once he opens and reads the channel; the message is highlighted for bob. bob's
// notification menu sets "Mentions only" and a snooze (stored on the server), and his second
// browser tab shows the change at once (CHANNEL_SETTINGS); End snooze ends it, and a
// snooze that ends by the clock leaves the menu.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { Browsers, CHAT_VIEWPORT, ChatdServer, openChannel, until } from './harness.js';

describe('console mentions and notification settings in a real browser (alice and bob)', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();

  function signIn(user: string): Promise<Page> {
    return browsers.signInAs(chatd, user, { viewport: CHAT_VIEWPORT });
  }

  async function settingsOf(user: string, channelId: string): Promise<{ notify?: string; snoozeUntil?: number | null } | undefined> {
    const r = await fetch(`${chatd.httpUrl}/v1/me/channels`, { headers: { authorization: `Bearer ${await chatd.token(user)}` } });
    const body = (await r.json()) as { channels: { channelId: string; notify?: string; snoozeUntil?: number | null }[] };
    return body.channels.find((c) => c.channelId === channelId);
  }

  before(async () => {
    chatd = await ChatdServer.start();
    await browsers.launch();
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('@ autocomplete from the member list sends mentions; bob sees a mention badge and the highlight; reading clears the badge', async () => {
    for (const id of ['mx', 'elsewhere']) {
      const r = await chatd.admin('POST', '/v1/channels', { channelId: id, members: ['alice', 'bob', 'carol'] });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    const alice = await signIn('alice');
    const bob = await signIn('bob');
    await openChannel(bob, 'elsewhere');
    await openChannel(alice, 'mx');
    await alice.locator('#member-list li.member[data-user="bob"]').waitFor();
    const c = alice.locator('#composer');
    await c.fill('');
    await c.pressSequentially('lunch @b');
    await alice.locator('#mention-options li.mention-option[data-user="bob"]').waitFor();
    assert.equal(await alice.locator('#mention-options li.mention-option[data-user="carol"]').count(), 0, 'only those starting with b');
    await c.press('Tab');
    assert.equal(await c.inputValue(), 'lunch @bob ');
    assert.equal(await alice.locator('#mention-options').isHidden(), true);
    await c.pressSequentially('?');
    await c.press('Enter');
    // stored with mentions: ["bob"]
    await until(async () => {
      const h = (await chatd.admin('GET', '/v1/channels/mx/messages?afterSeq=0')).json as { messages: { body: string; mentions?: string[] }[] };
      return h.messages.some((m) => m.body === 'lunch @bob ?' && JSON.stringify(m.mentions) === '["bob"]');
    }, 'the message stored with its mention');
    // bob, in another channel: the badge of mx says one mention
    const badge = bob.locator('button.channel[data-channel="mx"] .mention-badge');
    await until(async () => (await badge.getAttribute('data-count')) === '1', 'bob’s mention badge');
    assert.match((await bob.locator('button.channel[data-channel="mx"]').getAttribute('aria-label')) ?? '', /1 mentioning you/);
    // opened: the message is highlighted, the mention marked as his; reading clears the badge
    await openChannel(bob, 'mx');
    const msg = bob.locator('#messages li.msg[data-mentions-me="true"]');
    await msg.waitFor();
    assert.equal(await msg.locator('.body .mention.mention-me[data-user="bob"]').textContent(), '@bob');
    await openChannel(bob, 'elsewhere');
    await until(async () => (await badge.getAttribute('data-count')) === '0', 'the badge cleared once read');
  });

  test('the notification menu: Mentions only and a snooze, stored and shown on the user’s other tab at once; End snooze', async () => {
    const r = await chatd.admin('POST', '/v1/channels', { channelId: 'nt', members: ['alice', 'bob'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const tab1 = await signIn('bob');
    const tab2 = await signIn('bob');
    await openChannel(tab1, 'nt');
    await openChannel(tab2, 'nt');
    assert.equal(await tab1.locator('#notify-level').inputValue(), 'all');
    await tab1.locator('#notify-level').selectOption('mentions');
    await until(async () => (await settingsOf('bob', 'nt'))?.notify === 'mentions', 'notify stored');
    await until(async () => (await tab2.locator('#notify-level').inputValue()) === 'mentions', 'the other tab’s menu');
    await tab1.locator('#snooze-1h').click();
    await tab2.locator('#snoozed', { hasText: 'Snoozed until' }).waitFor();
    const s = await settingsOf('bob', 'nt');
    assert.ok(typeof s?.snoozeUntil === 'number' && s.snoozeUntil > Date.now() + 50 * 60_000 && s.snoozeUntil < Date.now() + 70 * 60_000, JSON.stringify(s));
    assert.match((await tab2.locator('button.channel[data-channel="nt"]').getAttribute('aria-label')) ?? '', /notifications off/);
    await tab2.locator('#snooze-end').click();
    await tab1.locator('#snooze-1h').waitFor();
    assert.equal((await settingsOf('bob', 'nt'))?.snoozeUntil, null);
    assert.equal(await tab1.locator('#notify-level').inputValue(), 'mentions');
    // a short snooze (set through the route) leaves the menu when it ends, by the clock
    const put = await fetch(`${chatd.httpUrl}/v1/me/channels/nt/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await chatd.token('bob')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ snoozeUntil: Date.now() + 2000 }),
    });
    assert.equal(put.status, 200);
    await tab1.locator('#snoozed').waitFor();
    await tab1.locator('#snooze-1h').waitFor({ timeout: 10_000 });
  });
});
