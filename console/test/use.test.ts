// Browser tests of the console in real use (issue 37, points 4 and 10): Debian's Chromium
// driven by playwright-core against the real chatd. A long word wraps inside its bubble
// (the page never grows wider than the window, Send stays on screen); a reload reopens the
// channel that was open; the user's own presence dot follows the connection; banners show
// code as code; the admin sign-in makes no request that fails; Delete asks first; typing
// right after a send is shown at once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { Browsers, ChatdServer, openChannel, send, type Viewport } from './harness.js';

describe('console in real use (long words, reloads, presence, banners, deletes)', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();

  function newPage(viewport = { width: 1100, height: 720 }): Promise<Page> {
    return browsers.newPage(chatd.httpUrl, { viewport });
  }

  function signIn(user: string, viewport: Viewport = { width: 1100, height: 720 }): Promise<Page> {
    return browsers.signInAs(chatd, user, { viewport });
  }

  before(async () => {
    chatd = await ChatdServer.start();
    for (const id of ['first', 'second', 'third']) {
      const r = await chatd.admin('POST', '/v1/channels', { channelId: id, members: ['alice', 'bob'] });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    await browsers.launch();
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('a 500-character word wraps in its bubble: the page is no wider than the window and Send stays on screen (both users, desktop and phone)', async () => {
    const word = `https://example.com/${'x'.repeat(480)}`;
    const alice = await signIn('alice');
    const bob = await signIn('bob', { width: 390, height: 740 });
    await openChannel(alice, 'first');
    await openChannel(bob, 'first');
    await send(alice, word);
    for (const page of [alice, bob]) {
      await page.locator('#messages li.msg .body', { hasText: word }).waitFor();
      const m = await page.evaluate(() => {
        const send = document.getElementById('send');
        const r = send?.getBoundingClientRect();
        return {
          scrollWidth: document.documentElement.scrollWidth,
          bodyScrollWidth: document.body.scrollWidth,
          innerWidth: window.innerWidth,
          send: r === undefined ? undefined : { left: r.left, right: r.right, text: send?.textContent ?? '' },
        };
      });
      assert.ok(m.scrollWidth <= m.innerWidth, `page ${m.scrollWidth} px wide in a ${m.innerWidth} px window`);
      assert.ok(m.bodyScrollWidth <= m.innerWidth, `body ${m.bodyScrollWidth} px wide in a ${m.innerWidth} px window`);
      assert.ok(m.send !== undefined, 'no Send button');
      assert.match(m.send.text, /Send/);
      assert.ok(m.send.left >= 0 && m.send.right <= m.innerWidth, `Send at ${m.send.left}–${m.send.right} px in a ${m.innerWidth} px window`);
    }
  });

  test('a reload reopens the channel that was open, not the first one', async () => {
    const alice = await signIn('alice');
    for (const id of ['third', 'second']) {
      await openChannel(alice, id);
      await alice.reload();
      await alice.locator('#conn[data-state="connected"]').waitFor({ timeout: 60_000 });
      await alice.locator(`#channel-title[data-channel="${id}"]`).waitFor({ timeout: 10_000 });
      assert.equal(await alice.locator('#channel-title').getAttribute('data-channel'), id);
      assert.equal(await alice.locator(`button.channel[data-channel="${id}"]`).getAttribute('aria-current'), 'true');
    }
  });

  test("the user's own presence dot says online while connected, and not online while the server is unreachable", async () => {
    const alice = await signIn('alice');
    await openChannel(alice, 'third');
    await send(alice, 'my own dot');
    const own = alice.locator('#messages li.msg[data-mine="true"]').filter({ hasText: 'my own dot' }).locator('.dot[data-user="alice"]');
    const head = alice.locator('#people .dot[data-user="alice"]');
    await own.waitFor();
    const status = async (): Promise<(string | null)[]> => [await own.getAttribute('data-status'), await head.getAttribute('data-status')];
    assert.deepEqual(await status(), ['online', 'online']);
    await chatd.stop();
    try {
      await alice.locator('#conn:not([data-state="connected"])').waitFor();
      await alice.locator('#messages li.msg[data-mine="true"] .dot[data-user="alice"][data-status="offline"]').first().waitFor({ timeout: 10_000 });
      assert.deepEqual(await status(), ['offline', 'offline']);
      assert.equal(await head.getAttribute('aria-label'), 'alice is offline');
    } finally {
      await chatd.spawn();
    }
    await alice.locator('#conn[data-state="connected"]').waitFor({ timeout: 60_000 });
    await alice.locator('#people .dot[data-user="alice"][data-status="online"]').waitFor({ timeout: 10_000 });
    assert.deepEqual(await status(), ['online', 'online']);
  });

  test('a banner shows code as code, without backticks (a token from another server)', async () => {
    const good = await chatd.token('alice');
    const [head, payload, sig] = good.split('.');
    assert.ok(head !== undefined && payload !== undefined && sig !== undefined && sig.length > 10);
    // the signature changed in its middle: the server answers "bad signature"
    const mid = Math.floor(sig.length / 2);
    const bad = `${head}.${payload}.${sig.slice(0, mid)}${sig[mid] === 'A' ? 'B' : 'A'}${sig.slice(mid + 1)}`;
    const page = await newPage();
    await page.goto(`${chatd.httpUrl}/console#token=${bad}`);
    const banner = page.locator('#banner', { hasText: 'signature does not match' });
    await banner.waitFor();
    const text = (await banner.textContent()) ?? '';
    assert.ok(!text.includes('`'), `raw backticks in the banner: ${text}`);
    assert.equal(await page.locator('#banner code', { hasText: 'chatd token' }).count(), 1);
  });

  test('the admin sign-in makes no request that fails', async () => {
    const page = await newPage();
    const failed: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
    });
    await page.goto(`${chatd.httpUrl}/console#admin`);
    await page.locator('#admin-token').fill(chatd.adminToken);
    await page.locator('#admin-open').click();
    await page.locator('#new-channel-id').waitFor();
    assert.deepEqual(failed, []);
    // a wrong token is still refused
    await page.reload();
    await page.locator('#admin-token').fill('not-the-admin-token');
    await page.locator('#admin-open').click();
    await page.locator('.result', { hasText: 'admin token was refused' }).waitFor();
    assert.equal(await page.locator('#new-channel-id').count(), 0);
  });
  test('Delete asks first: the message stays until "Delete" is confirmed, Cancel keeps it, and the question survives a redraw', async () => {
    const alice = await signIn('alice');
    const bob = await signIn('bob');
    await openChannel(alice, 'second');
    await openChannel(bob, 'second');
    await send(alice, 'delete me, maybe');
    const mine = alice.locator('#messages li.msg[data-mine="true"][data-deleted="false"]').filter({ hasText: 'delete me, maybe' });
    await mine.locator('button.delete').waitFor();
    await bob.locator('#messages li.msg', { hasText: 'delete me, maybe' }).waitFor();
    // one click only asks
    await mine.locator('button.delete').click();
    await mine.locator('.delete-question', { hasText: 'Delete for everyone?' }).waitFor();
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await mine.count(), 1, 'deleted by one click');
    assert.equal(await bob.locator('#messages li.msg[data-deleted="true"]').count(), 0);
    // Cancel keeps it
    await mine.locator('button.delete-cancel').click();
    await mine.locator('button.delete').waitFor();
    assert.equal(await mine.locator('button.delete-confirm').count(), 0);
    // asked again, a redraw (bob's message) keeps the question; confirming deletes it on both screens
    await mine.locator('button.delete').click();
    await send(bob, 'a redraw meanwhile');
    await alice.locator('#messages li.msg', { hasText: 'a redraw meanwhile' }).waitFor();
    await mine.locator('button.delete-confirm').click();
    await alice.locator('#messages li.msg[data-mine="true"][data-deleted="true"]').waitFor();
    await bob.locator('#messages li.msg[data-deleted="true"]').waitFor();
  });

  test('typing right after a send is shown at once on the other side (the send does not swallow the next start)', async () => {
    const alice = await signIn('alice');
    const bob = await signIn('bob');
    await openChannel(alice, 'first');
    await openChannel(bob, 'first');
    const typingLine = bob.locator('#typing');
    // the first message of a conversation: typed (a start), then sent
    await alice.locator('#composer').pressSequentially('hello');
    await typingLine.filter({ hasText: 'alice is typing…' }).waitFor({ timeout: 5_000 });
    for (const n of [1, 2, 3]) {
      // Enter, and at once the next message (before her send is stored)
      await alice.locator('#composer').press('Enter');
      await alice.locator('#composer').pressSequentially(`next ${n}`);
      const t0 = Date.now();
      await bob.locator('#messages li.msg', { hasText: n === 1 ? 'hello' : `next ${n - 1}` }).waitFor();
      // bob sees her typing the next one well within the throttle window (2 s) that her
      // earlier start opened
      await typingLine.filter({ hasText: 'alice is typing…' }).waitFor({ timeout: 1_500 });
      assert.ok(Date.now() - t0 < 1_500, `typing shown ${Date.now() - t0} ms after she started`);
    }
    await alice.locator('#composer').fill('');
  });

  test('a phone-sized window (390×740) gives the messages at least 45 % of its height; no button label in the channel’s head wraps', async () => {
    const phone = await signIn('alice', { width: 390, height: 740 });
    await openChannel(phone, 'second');
    await send(phone, 'on a phone');
    await phone.locator('#messages li.msg', { hasText: 'on a phone' }).waitFor();
    const m = await phone.evaluate(() => {
      const scroller = document.querySelector('#pane .scroller')?.getBoundingClientRect();
      const composer = document.getElementById('composer')?.getBoundingClientRect();
      // a button whose label wraps is taller than one line of its text
      const wrapped = [...document.querySelectorAll<HTMLElement>('.pane-head button, .sidebar button, .composer button')]
        .filter((b) => b.offsetParent !== null)
        .filter((b) => {
          const lh = parseFloat(getComputedStyle(b).lineHeight) || parseFloat(getComputedStyle(b).fontSize) * 1.3;
          return b.getBoundingClientRect().height - (parseFloat(getComputedStyle(b).paddingTop) + parseFloat(getComputedStyle(b).paddingBottom) + 2) > lh * 1.5;
        })
        .map((b) => b.textContent ?? '');
      return { scroller: scroller?.height ?? 0, composerBottom: composer?.bottom ?? Infinity, wrapped, width: document.documentElement.scrollWidth };
    });
    assert.ok(m.scroller >= 0.45 * 740, `the message list is ${m.scroller} px of 740`);
    assert.deepEqual(m.wrapped, [], 'button labels broken over two lines');
    assert.ok(m.composerBottom <= 740, `the composer ends at ${m.composerBottom} px`);
    assert.ok(m.width <= 390, `page ${m.width} px wide`);
  });

  test('the header says the admin token is in use while the admin view holds it, "Not signed in" once it is forgotten', async () => {
    const page = await newPage();
    await page.goto(`${chatd.httpUrl}/console#admin`);
    await page.locator('#conn', { hasText: 'Not signed in' }).waitFor();
    await page.locator('#admin-token').fill(chatd.adminToken);
    await page.locator('#admin-open').click();
    await page.locator('#new-channel-id').waitFor();
    await page.locator('#conn[data-state="admin"]', { hasText: 'Admin token in use' }).waitFor({ timeout: 5_000 });
    await page.locator('#admin-forget').click();
    await page.locator('#admin-token').waitFor();
    assert.equal(await page.locator('#conn').textContent(), 'Not signed in');
  });
});
