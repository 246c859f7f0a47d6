// Browser tests of the console's message search (protocol §18): Debian's Chromium driven
// by playwright-core, alice and bob in their own browser contexts, against the real chatd.
// alice writes a message and then more than a page of others in one channel; bob, looking
// at another channel, types a term of it in the search box: the result shows its channel,
// sender and the term highlighted; clicking it opens the channel scrolled to the message,
// loaded though it is older than the newest page. "More results" reads the next page; a
// term found nowhere says so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { Browsers, CHAT_VIEWPORT, ChatdServer, openChannel, send, until } from './harness.js';

/** Messages alice writes after the one searched for: more than the first page (50). */
const FILLERS = 60;

describe('console message search in a real browser (alice and bob)', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();
  let bob: Page;

  function signIn(user: string): Promise<Page> {
    return browsers.signInAs(chatd, user, { viewport: CHAT_VIEWPORT });
  }

  async function searchFor(page: Page, q: string): Promise<void> {
    const box = page.locator('#search-q');
    await box.fill(q);
    await box.press('Enter');
  }

  before(async () => {
    chatd = await ChatdServer.start();
    await browsers.launch();
    for (const id of ['sa-lobby', 'sb-lab']) {
      const r = await chatd.admin('POST', '/v1/channels', { channelId: id, members: ['alice', 'bob'] });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    const alice = await signIn('alice');
    await openChannel(alice, 'sb-lab');
    await send(alice, 'Kickoff at the Zebrafish lab');
    for (let i = 1; i <= FILLERS; i++) await send(alice, `filler ${i}`);
    await until(async () => (await chatd.history('sb-lab')).length === FILLERS + 1, 'alice’s messages stored');
    bob = await signIn('bob');
    await bob.locator('#channel-title', { hasText: '# sa-lobby' }).waitFor();
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('typing a term shows the matching message with its channel, sender and the term highlighted', async () => {
    const box = bob.locator('#search-q');
    // typing (no Enter): the search is made when typing pauses
    await box.pressSequentially('zebraFISH');
    const result = bob.locator('#search-list button.search-result');
    await result.first().waitFor();
    assert.equal(await result.count(), 1);
    assert.equal(await result.getAttribute('data-channel'), 'sb-lab');
    assert.equal(await result.locator('.search-channel').textContent(), '# sb-lab');
    assert.equal(await result.locator('.search-sender').textContent(), 'alice');
    assert.equal(await result.locator('.search-body').textContent(), 'Kickoff at the Zebrafish lab');
    assert.deepEqual(await result.locator('.search-body mark').allTextContents(), ['Zebrafish']);
    assert.ok(((await result.locator('time').getAttribute('datetime')) ?? '') !== '', 'a time');
  });

  test('clicking a result opens its channel scrolled to the message, loaded though older than the newest page', async () => {
    await searchFor(bob, 'zebrafish');
    const result = bob.locator('#search-list button.search-result[data-channel="sb-lab"]');
    await result.waitFor();
    await result.click();
    await bob.locator('#channel-title', { hasText: '# sb-lab' }).waitFor();
    const found = bob.locator('#messages li.msg[data-found="true"]');
    await found.waitFor();
    assert.equal(await found.locator('.body').textContent(), 'Kickoff at the Zebrafish lab');
    // on screen, inside the scroller
    await until(async () => {
      const [m, s] = await Promise.all([found.boundingBox(), bob.locator('#scroller').boundingBox()]);
      return m !== null && s !== null && m.y >= s.y && m.y + m.height <= s.y + s.height;
    }, 'the found message in view');
    // the newest messages are there too
    // (the newest page) and the page it is in: all of them, the first at seq 1
    await bob.locator(`#messages li.msg[data-seq="${FILLERS + 1}"]`).waitFor({ state: 'attached' });
    assert.equal(await found.getAttribute('data-seq'), '1');
  });

  test('“More results” reads the next page', async () => {
    await searchFor(bob, 'filler');
    const results = bob.locator('#search-list button.search-result');
    await until(async () => (await results.count()) === 20, 'the first page of 20');
    assert.equal(await results.first().locator('.search-body').textContent(), `filler ${FILLERS}`, 'newest first');
    await bob.locator('#search-more').click();
    await until(async () => (await results.count()) === 40, 'the second page');
    assert.equal(await results.nth(39).locator('.search-body').textContent(), `filler ${FILLERS - 39}`);
  });

  test('a term found nowhere says so; Close search hides the results', async () => {
    await searchFor(bob, 'nosuchwordanywhere');
    await bob.locator('#search-status', { hasText: 'No messages match “nosuchwordanywhere”.' }).waitFor();
    assert.equal(await bob.locator('#search-list button.search-result').count(), 0);
    assert.equal(await bob.locator('#search-more').count(), 0);
    await bob.locator('#search-close').click();
    await bob.locator('#search-results').waitFor({ state: 'hidden' });
    assert.equal(await bob.locator('#search-q').inputValue(), '');
  });

  test('a long status line wraps inside the sidebar', async () => {
    // One unbroken word of 150 letters, quoted back by "No messages match …".
    const term = `z${'q'.repeat(149)}`;
    await searchFor(bob, term);
    const status = bob.locator('#search-status', { hasText: 'No messages match' });
    await status.waitFor();
    const fits = await status.evaluate((el) => {
      const sidebar = el.closest('.sidebar');
      if (sidebar === null) return 'no sidebar around the status';
      const s = sidebar.getBoundingClientRect();
      const r = el.getBoundingClientRect();
      return r.right <= s.right + 0.5 && el.scrollWidth <= el.clientWidth
        ? 'fits'
        : `status right ${r.right} (scroll ${el.scrollWidth}/${el.clientWidth}) past the sidebar's ${s.right}`;
    });
    assert.equal(fits, 'fits');
    await bob.locator('#search-close').click();
  });
});
