// The console through the documented nginx configuration (issue 37, point 6): Debian's
// Chromium driven by playwright-core against chatd behind nginx running the ```nginx block
// of docs/security.md (test/nginx.ts). Two users chat through it: a message is seen live
// over the WebSocket through nginx, a reaction and a reply come back, a reload shows the
// history; no request of the chat view is stopped by nginx. With chatd stopped behind
// nginx, the console says the server is unreachable (nginx's 502: src/adapter.ts), keeps
// a send and delivers it once chatd is back. The admin view's sign-in does not pass nginx
// (the block keeps the admin routes for the private network): the console says where the
// admin API is (src/admin.ts) and does not open the admin tools.
//
// Without nginx the file says so and is skipped, unless CHATD_REQUIRE_NGINX=1 (then it
// fails), as tests/api/nginx.rs does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { Browsers, ChatdServer, connected, message, openChannel, send, until, type Viewport } from './harness.js';
import { Nginx, nginxBinary, nginxSkipReason } from './nginx.js';

const VIEWPORT: Viewport = { width: 1100, height: 720 };

/** What a page did wrong: its uncaught errors, and the requests that failed or were answered with an error. */
interface Trouble {
  errors: string[];
  failed: string[];
}

/** Starts recording `page`'s uncaught errors and its requests that failed or got a status of 400 or more. */
function watch(page: Page): Trouble {
  const t: Trouble = { errors: [], failed: [] };
  page.on('pageerror', (e) => t.errors.push(e.message));
  page.on('response', (r) => {
    if (r.status() >= 400) t.failed.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
  });
  page.on('requestfailed', (r) => {
    t.failed.push(`${r.method()} ${new URL(r.url()).pathname} ${r.failure()?.errorText ?? 'failed'}`);
  });
  return t;
}

describe('the console through the documented nginx configuration', { skip: nginxSkipReason() }, () => {
  let chatd: ChatdServer;
  let nginx: Nginx;
  const browsers = new Browsers();

  before(async () => {
    chatd = await ChatdServer.start();
    const r = await chatd.admin('POST', '/v1/channels', { channelId: 'proxied', members: ['alice', 'bob'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    nginx = await Nginx.start(nginxBinary() ?? 'nginx', `127.0.0.1:${chatd.port}`);
    await browsers.launch();
  });

  after(async () => {
    await browsers.close();
    await nginx?.close();
    await chatd?.dispose();
  });

  /** A page signed in as `user` through nginx (the console's address is nginx's), with its trouble recorded from the start. */
  async function signIn(user: string): Promise<[Page, Trouble]> {
    const page = await browsers.newPage(nginx.url, { viewport: VIEWPORT });
    const trouble = watch(page);
    await page.goto(`${nginx.url}/console#token=${await chatd.token(user)}`);
    try {
      await connected(page);
    } catch (e) {
      throw new Error(`${user} did not connect through nginx: ${String(e)}\n${JSON.stringify(trouble)}\nnginx: ${nginx.errorLog()}`);
    }
    return [page, trouble];
  }

  test('two users chat through nginx: a message live over its WebSocket, a reaction and a reply back, the history after a reload', async () => {
    const [alice, aliceTrouble] = await signIn('alice');
    const [bob, bobTrouble] = await signIn('bob');
    // the pages are nginx's: their WebSocket goes through it too
    for (const page of [alice, bob]) assert.equal(new URL(page.url()).port, String(nginx.port));
    await openChannel(alice, 'proxied');
    await openChannel(bob, 'proxied');

    // alice sends; bob sees it live (no reload: over the WebSocket through nginx)
    await send(alice, 'hello through nginx');
    await message(bob, 'hello through nginx').waitFor();

    // bob reacts and replies; alice sees both live
    await message(bob, 'hello through nginx').locator('button.react[data-emoji="👍"]').click();
    await message(alice, 'hello through nginx').locator('button.reaction[data-emoji="👍"]', { hasText: '👍 1' }).waitFor();
    await message(bob, 'hello through nginx').locator('button.reply').click();
    await send(bob, 'a reply through nginx');
    await message(alice, 'a reply through nginx').locator('.quote', { hasText: 'hello through nginx' }).waitFor();

    // the server stored what the pages sent through nginx
    const h = await chatd.admin('GET', '/v1/channels/proxied/messages?afterSeq=0');
    assert.equal(h.status, 200);
    const entries = (h.json as { messages: { senderId: string; kind?: string; body: string; replyTo?: string }[] }).messages;
    const stored = entries.map((m) => `${m.kind ?? 'message'} ${m.senderId}: ${m.body}${m.replyTo === undefined ? '' : ' (a reply)'}`);
    assert.deepEqual(stored, ['message alice: hello through nginx', 'reaction bob: ', 'message bob: a reply through nginx (a reply)']);

    // alice's reload through nginx: the channel reopens with its history, the reaction and the reply's quote
    await alice.reload();
    assert.equal(new URL(alice.url()).port, String(nginx.port));
    await connected(alice);
    await alice.locator('#channel-title[data-channel="proxied"]').waitFor();
    await message(alice, 'hello through nginx').locator('button.reaction[data-emoji="👍"]', { hasText: '👍 1' }).waitFor();
    await message(alice, 'a reply through nginx').locator('.quote', { hasText: 'hello through nginx' }).waitFor();

    // after the reload, still live both ways
    await send(alice, 'after the reload');
    await message(bob, 'after the reload').waitFor();

    // nothing the chat view asked for was stopped by nginx, and no page error
    for (const [who, t] of [['alice', aliceTrouble], ['bob', bobTrouble]] as const) {
      assert.deepEqual(t.failed, [], `${who}'s requests that failed through nginx`);
      assert.deepEqual(t.errors, [], `${who}'s page errors`);
    }
  });

  test('chatd down behind nginx: the console says the server is unreachable (the proxy answers 502), keeps a send, and delivers it through nginx once chatd is back', async () => {
    const [alice, aliceTrouble] = await signIn('alice');
    const [bob] = await signIn('bob');
    await openChannel(alice, 'proxied');
    await openChannel(bob, 'proxied');
    await chatd.stop();
    try {
      await alice.locator('#conn[data-state="offline"]', { hasText: 'Offline: server unreachable' }).waitFor();
      await alice.locator('#banner', { hasText: 'The chat server cannot be reached' }).waitFor();
      await send(alice, 'sent while chatd was down');
      await message(alice, 'sent while chatd was down').waitFor();
    } finally {
      await chatd.spawn();
    }
    await connected(alice);
    await connected(bob);
    await message(bob, 'sent while chatd was down').waitFor();
    await until(
      async () => (await chatd.history('proxied')).filter((m) => m.body === 'sent while chatd was down').length === 1,
      'the send stored once',
    );
    // while chatd was down the page's requests got nginx's answers: its 502s and its 404 for /readyz, nothing else
    const other = aliceTrouble.failed.filter((f) => !/ (502|404)$/.test(f) && !f.startsWith('GET /v1/ws '));
    assert.deepEqual(other, [], 'requests that failed otherwise');
    assert.deepEqual(aliceTrouble.errors, []);
  });

  test("the admin view's sign-in does not pass nginx: the card says it failed, the admin tools stay closed, the page does not break", async () => {
    const page = await browsers.newPage(nginx.url, { viewport: VIEWPORT });
    const trouble = watch(page);
    await page.goto(`${nginx.url}/console#admin`);
    await page.locator('#admin-token').fill(chatd.adminToken);
    await page.locator('#admin-open').click();
    const out = page.locator('.result[data-ok="false"]');
    // the card's failure, or the admin tools (had nginx passed the request)
    await page.locator('.result[data-ok="false"], #new-channel-id').first().waitFor();
    assert.equal(await page.locator('#new-channel-id').count(), 0, 'the admin view opened through nginx');
    const text = (await out.textContent()) ?? '';
    assert.match(text, /^The admin API is not served at this address \(HTTP 404\)/, `the card's words: ${text}`);
    // the token is not held
    assert.equal(await page.locator('#conn[data-state="admin"]').count(), 0);
    // the one request the card made was stopped by nginx (its 404 page, not chatd's JSON)
    assert.deepEqual(trouble.failed, ['GET /v1/channels 404']);
    assert.deepEqual(trouble.errors, []);
    // the page still works: the form can be sent again, with the same answer
    await page.locator('#admin-open').click();
    await until(() => Promise.resolve(trouble.failed.length === 2), 'the second sign-in');
    assert.deepEqual(trouble.failed, ['GET /v1/channels 404', 'GET /v1/channels 404']);
    assert.match((await out.textContent()) ?? '', /^The admin API is not served at this address/);
    assert.equal(await page.locator('#new-channel-id').count(), 0);
    assert.deepEqual(trouble.errors, []);
    // the admin token reaches chatd directly (the private network), so nginx alone stopped it
    const direct = await fetch(`${chatd.httpUrl}/v1/channels?limit=1`, { headers: { authorization: `Bearer ${chatd.adminToken}` } });
    assert.equal(direct.status, 200);
  });
});
