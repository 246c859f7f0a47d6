// Browser tests of the admin view's channels and sign-in links (issue 37 point 4): Debian's
// Chromium driven by playwright-core against the real chatd. The view lists the server's
// channels (paged), shows a channel's members with their roles, renames a channel,
// deletes one only after its confirmation, shows a channel created in the view at once,
// and keeps every sign-in link minted (one per user), not only the last.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { Browsers, ChatdServer, sleep } from './harness.js';

describe('admin view: channels, members, rename, delete, sign-in links', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();
  let admin: Page;
  const failed: string[] = [];

  const row = (id: string) => admin.locator(`li.admin-channel[data-channel="${id}"]`);

  before(async () => {
    chatd = await ChatdServer.start();
    for (const [id, members] of [
      ['alpha', ['alice', 'bob']],
      ['beta', ['carol']],
    ] as const) {
      const r = await chatd.admin('POST', '/v1/channels', { channelId: id, members });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    await browsers.launch();
    admin = await browsers.newPage(chatd.httpUrl, { viewport: { width: 1200, height: 800 } });
    admin.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
    });
    await admin.goto(`${chatd.httpUrl}/console#admin`);
    await admin.locator('#admin-token').fill(chatd.adminToken);
    await admin.locator('#admin-open').click();
    await admin.locator('#new-channel-id').waitFor();
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('the channels are listed with their members, kind and last seq; Members shows each member with the role the server has', async () => {
    await row('alpha').waitFor();
    await row('beta').waitFor();
    assert.match((await row('alpha').locator('.admin-channel-meta').textContent()) ?? '', /2 members/);
    assert.match((await row('beta').locator('.admin-channel-meta').textContent()) ?? '', /1 member\b/);
    await row('alpha').locator('button.admin-members').click();
    const api = await chatd.admin('GET', '/v1/channels/alpha/members');
    const members = (api.json as { members: { userId: string; role: string }[] }).members;
    assert.deepEqual(members.map((m) => m.userId).sort(), ['alice', 'bob']);
    for (const m of members) {
      const li = row('alpha').locator(`li.admin-member[data-user="${m.userId}"]`);
      await li.waitFor();
      assert.equal(await li.locator('.role').textContent(), m.role);
    }
    assert.equal(await row('alpha').locator('li.admin-member').count(), 2);
    // Members again hides the list
    await row('alpha').locator('button.admin-members').click();
    await row('alpha').locator('.admin-member-list').waitFor({ state: 'hidden' });
  });

  test('a channel created in the view, or a member added there, shows in the list at once', async () => {
    await admin.locator('#new-channel-id').fill('gamma');
    await admin.locator('#new-channel-members').fill('alice');
    await admin.locator('#create-channel').click();
    await row('gamma').waitFor();
    assert.match((await row('gamma').locator('.admin-channel-meta').textContent()) ?? '', /1 member\b/);
    await admin.locator('#member-channel').fill('gamma');
    await admin.locator('#member-user').fill('dave');
    await admin.locator('#add-member').click();
    await row('gamma').locator('.admin-channel-meta', { hasText: '2 members' }).waitFor();
  });

  test('Rename changes the name on the server; an empty name clears it', async () => {
    await row('alpha').locator('button.admin-rename').click();
    await row('alpha').locator('input.admin-rename-input').fill('Alpha team');
    await row('alpha').locator('button.admin-rename-save').click();
    await row('alpha').locator('.admin-channel-name', { hasText: 'Alpha team' }).waitFor();
    assert.equal(((await chatd.admin('GET', '/v1/channels/alpha')).json as { name: string | null }).name, 'Alpha team');
    // Refresh reads it back from the server
    await admin.locator('#channels-refresh').click();
    await row('alpha').locator('.admin-channel-name', { hasText: 'Alpha team' }).waitFor();
    await row('alpha').locator('button.admin-rename').click();
    assert.equal(await row('alpha').locator('input.admin-rename-input').inputValue(), 'Alpha team');
    await row('alpha').locator('input.admin-rename-input').fill('');
    await row('alpha').locator('button.admin-rename-save').click();
    await row('alpha').locator('.admin-channel-result', { hasText: 'has no name now' }).waitFor();
    assert.equal(((await chatd.admin('GET', '/v1/channels/alpha')).json as { name: string | null }).name, null);
  });

  test('Delete asks first; Cancel keeps the channel; confirming deletes it on the server and from the list', async () => {
    await row('beta').locator('button.admin-delete').click();
    await row('beta').locator('.delete-question', { hasText: 'Delete beta for everyone' }).waitFor();
    await sleep(500);
    assert.equal((await chatd.admin('GET', '/v1/channels/beta')).status, 200, 'deleted by one click');
    await row('beta').locator('button.admin-delete-cancel').click();
    await row('beta').locator('.admin-delete-box').waitFor({ state: 'hidden' });
    assert.equal((await chatd.admin('GET', '/v1/channels/beta')).status, 200);
    await row('beta').locator('button.admin-delete').click();
    await row('beta').locator('button.admin-delete-confirm').click();
    await row('beta').waitFor({ state: 'detached' });
    assert.equal((await chatd.admin('GET', '/v1/channels/beta')).status, 404);
    await admin.locator('#channels-result', { hasText: 'Deleted beta.' }).waitFor();
  });

  test('more channels than a page: "More channels" lists the rest', async () => {
    for (let i = 0; i < 55; i++) {
      const r = await chatd.admin('POST', '/v1/channels', { channelId: `many-${String(i).padStart(2, '0')}`, members: ['alice'] });
      assert.equal(r.status, 201);
    }
    await admin.locator('#channels-refresh').click();
    await admin.locator('#channels-more').waitFor();
    assert.equal(await admin.locator('li.admin-channel').count(), 50);
    await admin.locator('#channels-more').click();
    await admin.locator('#channels-more').waitFor({ state: 'hidden' });
    // alpha, gamma and the 55
    assert.equal(await admin.locator('li.admin-channel').count(), 57);
    await row('many-54').waitFor();
  });

  test('every sign-in link minted stays, one per user: a second token for alice replaces her link, bob’s stays', async () => {
    const mint = async (user: string): Promise<string> => {
      const before = await admin.locator('#token-result').textContent();
      await admin.locator('#token-user').fill(user);
      await admin.locator('#mint-token').click();
      await admin.locator('#token-result', { hasText: `Token for ${user}` }).waitFor();
      assert.notEqual(await admin.locator('#token-result').textContent(), before);
      return (await admin.locator(`a.signin-link[data-user="${user}"]`).getAttribute('href')) ?? '';
    };
    const alice1 = await mint('alice');
    // tokens are minted per second: a second one for alice a second later differs
    await sleep(1100);
    const bob = await mint('bob');
    assert.equal(await admin.locator('a.signin-link').count(), 2);
    assert.equal(await admin.locator('a.signin-link[data-user="alice"]').getAttribute('href'), alice1);
    const alice2 = await mint('alice');
    assert.notEqual(alice2, alice1);
    assert.equal(await admin.locator('a.signin-link').count(), 2);
    assert.equal(await admin.locator('a.signin-link[data-user="bob"]').getAttribute('href'), bob);
    for (const [user, href] of [
      ['alice', alice2],
      ['bob', bob],
    ] as const) {
      assert.ok(href.startsWith(`${chatd.httpUrl}/console#token=`), `${user}'s link: ${href}`);
      assert.equal(await admin.locator(`li.signin-entry[data-user="${user}"] input.signin-url`).inputValue(), href);
    }
  });

  test('no request of the admin view failed', () => {
    assert.deepEqual(failed, []);
  });
});
