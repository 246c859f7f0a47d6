// Browser test of the console's outbox across a reload right after several sends (ninth
// hostile run, finding 1): bursts of messages typed and sent with Enter (the composer is
// cleared at once), each burst followed at once by a reload (asked by the test, or by the
// page in the same task as the Enters). Every message typed must be
// stored by the server exactly once (read back over HTTP): before the write-ahead, a reload
// while the outbox's IndexedDB puts were still queued lost the messages not yet written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { Browsers, CHAT_VIEWPORT, ChatdServer, connected, openChannel, send, until } from './harness.js';
import { storeKinds } from '../../clients/typescript/test/helpers/server.js';

const ROUNDS = 10;
const BURST = 6;

for (const store of storeKinds()) {
  describe(`console (${store}): Enter several times, then a reload at once`, () => {
    let chatd: ChatdServer;
    const browsers = new Browsers();

    before(async () => {
      chatd = await ChatdServer.start({ store, env: { CHATD_RATE_LIMIT_PER_SEC: '0', CHATD_USER_RATE_LIMIT_PER_SEC: '0' } });
      const r = await chatd.admin('POST', '/v1/channels', { channelId: 'burst', members: ['alice'] });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      await browsers.launch();
    });

    after(async () => {
      await browsers.close();
      await chatd?.dispose();
    });

    /** The bodies the server stored in channel `burst`, in seq order. */
    async function stored(): Promise<string[]> {
      const r = await chatd.admin('GET', '/v1/channels/burst/messages?afterSeq=0&limit=500');
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return (r.json as { messages: { body: string }[] }).messages.map((m) => m.body);
    }

    test(`${ROUNDS} bursts of ${BURST} sends, each followed at once by a reload: every message stored exactly once`, async () => {
      const page: Page = await browsers.signInAs(chatd, 'alice', { viewport: CHAT_VIEWPORT });
      const typed: string[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const title = (await page.locator('#channel-title').textContent().catch(() => '')) ?? '';
        if (!title.includes('burst')) await openChannel(page, 'burst');
        const bodies = Array.from({ length: BURST }, (_, k) => `burst ${i}.${k}`);
        typed.push(...bodies);
        if (i % 2 === 0) {
          // typed as a user does, the reload asked right after the last Enter
          for (const body of bodies) await send(page, body);
          await page.reload();
        } else {
          // the worst case: the Enters and the reload in one task of the page (a quick
          // typist, or a burst of pastes, and the tab reloaded or closed at once)
          const navigated = page.waitForEvent('load');
          await page.evaluate((bs) => {
            const c = document.querySelector<HTMLTextAreaElement>('#composer');
            if (c === null) throw new Error('no composer');
            for (const b of bs) {
              c.value = b;
              c.dispatchEvent(new Event('input', { bubbles: true }));
              c.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
            }
            location.reload();
          }, bodies);
          await navigated;
        }
        await connected(page);
      }
      await until(async () => {
        const s = await stored();
        return typed.every((b) => s.includes(b));
      }, 'every typed message stored').catch(async (e: unknown) => {
        const s = await stored();
        assert.deepEqual(typed.filter((b) => !s.includes(b)), [], `lost messages (${String(e)})`);
      });
      // a little longer: a second copy would come from a resend after the last reload
      await new Promise((r) => setTimeout(r, 1500));
      const s = await stored();
      assert.deepEqual(
        typed.filter((b) => s.filter((x) => x === b).length !== 1),
        [],
        'each typed message stored exactly once',
      );
      assert.equal(s.length, typed.length);
    });
  });
}
