// Browser tests of the console's shell offline (issue 37 point 4): Debian's Chromium driven
// by playwright-core against the real chatd. A reload while chatd is down shows the
// console from its service worker's cache (not the browser's error page), with the
// message sent while down still pending in the channel that was open; once chatd is back
// it is sent, once, and the other side sees it once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { ConsoleFront } from './front.js';
import { Browsers, ChatdServer, connected, message, openChannel, send, until } from './harness.js';

describe('console offline: the shell from the service worker, the outbox across a reload while the server is down', () => {
  let chatd: ChatdServer;
  let front: ConsoleFront;
  const browsers = new Browsers();

  /** A page signed in as `user` through the front, its service worker allowed. */
  async function signIn(user: string): Promise<Page> {
    return browsers.signIn(front.url, await chatd.token(user), { viewport: { width: 1100, height: 720 }, front: true });
  }

  before(async () => {
    chatd = await ChatdServer.start();
    const r = await chatd.admin('POST', '/v1/channels', { channelId: 'room', members: ['alice', 'bob'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    for (const id of ['aaa', 'zzz']) assert.equal((await chatd.admin('POST', '/v1/channels', { channelId: id, members: ['alice'] })).status, 201);
    front = new ConsoleFront(() => chatd.port);
    await front.listen();
    await browsers.launch();
  });

  after(async () => {
    await browsers.close();
    await front?.close();
    await chatd?.dispose();
  });

  /** Waits until the page's service worker is active (its install cached the shell). */
  async function workerReady(page: Page): Promise<void> {
    await until(
      () => page.evaluate(async () => (await navigator.serviceWorker.getRegistration('/console/'))?.active?.state === 'activated'),
      'the service worker activated',
    );
  }

  /** Whether a service worker controls `page`. */
  function controlled(page: Page): Promise<boolean> {
    return page.evaluate(() => navigator.serviceWorker.controller !== null);
  }

  test('the address moves to /console/ (the worker’s scope); after a reload the service worker answers the page', async () => {
    const alice = await signIn('alice');
    const url = new URL(alice.url());
    assert.equal(url.pathname, '/console/');
    assert.equal(url.hash, '', 'the token left the address');
    await workerReady(alice);
    await alice.reload();
    await connected(alice);
    assert.equal(await controlled(alice), true);
  });

  test('a reload while chatd is down shows the console with the pending message; it is sent once when chatd is back', async () => {
    const alice = await signIn('alice');
    const bob = await signIn('bob');
    await workerReady(alice);
    await openChannel(alice, 'room');
    await openChannel(bob, 'room');
    await send(alice, 'before the outage');
    await message(alice, 'before the outage').and(alice.locator('[data-state="sent"]')).waitFor();
    await chatd.stop();
    let restarted = false;
    try {
      await alice.locator('#conn:not([data-state="connected"])').waitFor();
      await send(alice, 'written while down');
      await message(alice, 'written while down').and(alice.locator('[data-state="pending"]')).waitFor();
      // the reload: the page comes from the worker's cache, not the browser's error page
      await alice.reload();
      await alice.locator('#conn').waitFor();
      assert.equal(new URL(alice.url()).pathname, '/console/');
      assert.notEqual(await alice.locator('#conn').getAttribute('data-state'), 'connected');
      // the channel that was open, with the message still pending (from IndexedDB)
      await alice.locator('#channel-title[data-channel="room"]').waitFor({ timeout: 10_000 });
      await message(alice, 'written while down').and(alice.locator('[data-state="pending"]')).waitFor({ timeout: 10_000 });
      await chatd.spawn();
      restarted = true;
    } finally {
      if (!restarted) await chatd.spawn();
    }
    await connected(alice);
    await message(alice, 'written while down').and(alice.locator('[data-state="sent"]')).waitFor();
    await message(bob, 'written while down').waitFor();
    // once on each screen
    await until(async () => (await message(alice, 'written while down').count()) === 1 && (await message(bob, 'written while down').count()) === 1, 'one copy on each screen');
    // the sidebar is back with every channel
    for (const id of ['aaa', 'room', 'zzz']) await alice.locator(`button.channel[data-channel="${id}"]`).waitFor();
  });
});
