// Browser tests: the built SDK in a real headless Chromium (Debian's chromium, driven by
// playwright-core), against the real chatd binary. What the user sees is the DOM of the
// test page; every assertion reads it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { tmpdir } from 'node:os';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ChatdServer, PACKAGE_ROOT, sleep } from '../helpers/server.js';
import { CuttableProxy } from '../helpers/proxy.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function startStatic(): Promise<{ server: Server; port: number }> {
  const types: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html', '.map': 'application/json' };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    let file: string;
    if (url.pathname.startsWith('/dist/')) file = join(PACKAGE_ROOT, normalize(url.pathname));
    else if (url.pathname === '/page.js') file = join(PACKAGE_ROOT, 'test', 'browser', 'page', 'page.js');
    else file = join(PACKAGE_ROOT, 'test', 'browser', 'page', 'index.html');
    readFile(file).then(
      (data) => {
        const ext = file.slice(file.lastIndexOf('.'));
        res.writeHead(200, { 'content-type': types[ext] ?? 'application/octet-stream', 'cache-control': 'no-store' });
        res.end(data);
      },
      () => {
        res.writeHead(404);
        res.end();
      },
    );
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve({ server, port: typeof a === 'object' && a !== null ? a.port : 0 });
    });
  });
}

interface PageWindow {
  chat: {
    shown(): string[];
    classes(): string[];
    send(body: string): Promise<number>;
    sendMany(prefix: string, n: number): void;
    outboxSize(): number;
  };
  dupes: string[];
  acked: number;
  onAck?: (n: number) => void;
}

describe('browser (headless Chromium)', () => {
  let chatd: ChatdServer;
  let web: { server: Server; port: number };
  let browser: Browser;
  let userDataDir: string;
  const contexts: BrowserContext[] = [];
  const proxies: CuttableProxy[] = [];
  const trackProxy = (p: CuttableProxy): CuttableProxy => {
    proxies.push(p);
    return p;
  };

  before(async () => {
    chatd = await ChatdServer.start({ store: 'sqlite' });
    web = await startStatic();
    userDataDir = mkdtempSync(join(tmpdir(), 'chatd-chromium-'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      // playwright gives the browser a fresh profile directory of its own (--user-data-dir)
      env: { ...process.env, TMPDIR: userDataDir },
    });
  });
  after(async () => {
    // the pages first, so nothing reconnects through a proxy that is closing
    for (const c of contexts) await c.close().catch(() => undefined);
    for (const p of proxies) await p.close().catch(() => undefined);
    await browser.close();
    await new Promise((r) => web.server.close(r));
    await chatd.dispose();
    rmSync(userDataDir, { recursive: true, force: true });
  });

  async function context(): Promise<BrowserContext> {
    const c = await browser.newContext();
    contexts.push(c);
    return c;
  }

  async function openPage(
    ctx: BrowserContext,
    userId: string,
    channel: string,
    wsPort = chatd.port,
    presetToken?: string,
  ): Promise<Page> {
    const token = presetToken ?? (await chatd.token(userId));
    const page = await ctx.newPage();
    page.on('pageerror', (e) => {
      console.error(`[${userId}] page error`, e);
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().includes('ERR_CONNECTION_REFUSED')) console.error(`[${userId}] console: ${m.text()}`);
    });
    const q = new URLSearchParams({ ws: `ws://127.0.0.1:${wsPort}/v1/ws`, token, channel });
    await page.goto(`http://127.0.0.1:${web.port}/?${q.toString()}`);
    await page.waitForFunction(() => 'chat' in window);
    return page;
  }

  function shown(page: Page): Promise<string[]> {
    return page.evaluate(() => (window as unknown as PageWindow).chat.shown());
  }

  /** Waits until the page shows exactly `expected` (all in the log, nothing outgoing) and never showed a duplicate. */
  async function expectShown(page: Page, expected: string[], timeoutMs = 60_000): Promise<void> {
    try {
      await page.waitForFunction(
        (exp) => {
          const w = window as unknown as PageWindow;
          const s = w.chat.shown();
          return s.length === exp.length && s.every((b, i) => b === exp[i]) && w.chat.classes().every((c) => c === 'msg');
        },
        expected,
        { timeout: timeoutMs, polling: 50 },
      );
    } catch (e) {
      const now = await shown(page);
      const cls = await page.evaluate(() => (window as unknown as PageWindow).chat.classes());
      const items = now.map((b, i) => `${b}:${cls[i] ?? ''}`);
      assert.fail(`page shows ${now.length} items, expected ${expected.length}: ${items.slice(0, 12).join(',')}… (${String(e)})`);
    }
    const dupes = await page.evaluate(() => (window as unknown as PageWindow).dupes);
    assert.deepEqual(dupes, [], 'no message was ever shown twice');
  }

  test('a reload with unACKed messages in the outbox: each shown once on every member\'s page', async () => {
    await chatd.createChannel('b1', ['alice', 'bob']);
    const alicePage = await openPage(await context(), 'alice', 'b1');
    const bobPage = await openPage(await context(), 'bob', 'b1');
    await alicePage.evaluate(() => (window as unknown as PageWindow).chat.send('before'));
    await expectShown(bobPage, ['before']);
    await chatd.kill9();
    await alicePage.evaluate(() => {
      (window as unknown as PageWindow).chat.sendMany('pending', 3);
    });
    await alicePage.waitForFunction(() => (window as unknown as PageWindow).chat.outboxSize() === 3);
    const pendingShown = await shown(alicePage);
    assert.deepEqual(pendingShown, ['before', 'pending1', 'pending2', 'pending3']);
    try {
      await alicePage.reload();
      await alicePage.waitForFunction(() => (window as unknown as PageWindow).chat.outboxSize() === 3);
    } finally {
      await chatd.spawn();
    }
    const expected = ['before', 'pending1', 'pending2', 'pending3'];
    await expectShown(alicePage, expected);
    await expectShown(bobPage, expected);
    // and a reload in the middle of a burst, with the server up
    await alicePage.evaluate(() => {
      (window as unknown as PageWindow).chat.sendMany('burst', 30);
    });
    await alicePage.reload();
    await alicePage.waitForFunction(() => 'chat' in window);
    const stored = await waitStored(chatd, 'b1', expected.length);
    const all = stored.map((m) => m.body);
    assert.ok(all.length >= expected.length);
    await expectShown(alicePage, all);
    await expectShown(bobPage, all);
    assert.equal(new Set(all).size, all.length, 'nothing stored twice');
  });

  test('kill -9 of chatd in the middle of a burst of 200, then a restart: every message once, in order, on every page', async () => {
    await chatd.createChannel('b2', ['alice', 'bob']);
    // alice's page talks through a proxy that counts the ACKs it hands over: at the 20th,
    // chatd gets SIGKILL and the connection is cut, so the page holds exactly 20 ACKs
    const proxy = trackProxy(new CuttableProxy(chatd.port));
    await proxy.listen();
    const alicePage = await openPage(await context(), 'alice', 'b2', proxy.port);
    const bobPage = await openPage(await context(), 'bob', 'b2');
    await alicePage.waitForFunction(() => document.getElementById('state')?.textContent === 'open');
    let acks = 0;
    let killed: Promise<void> | undefined;
    proxy.onServerFrame = (text) => {
      if (!text.includes('"MSG_ACK"')) return false;
      acks++;
      if (acks < 20) return false;
      killed = chatd.kill9(); // SIGKILL is sent synchronously here
      return true;
    };
    try {
      await alicePage.evaluate(() => {
        (window as unknown as PageWindow).chat.sendMany('k', 200);
      });
      const t0 = Date.now();
      while (killed === undefined && Date.now() - t0 < 30_000) await sleep(5);
      assert.ok(killed !== undefined, 'the burst started');
      await killed;
      await sleep(200);
      const ackedAtKill = await alicePage.evaluate(() => (window as unknown as PageWindow).acked);
      assert.equal(ackedAtKill, 20, 'the page had 20 of 200 ACKs when chatd died');
    } finally {
      if (!chatd.running) await chatd.spawn();
    }
    const expected = Array.from({ length: 200 }, (_, i) => `k${i + 1}`);
    await expectShown(alicePage, expected);
    await expectShown(bobPage, expected);
    assert.deepEqual(
      (await chatd.history('b2')).map((m) => m.body),
      expected,
    );
  });

  test('a dropped connection during a send: every message once, in order, on every page', async () => {
    await chatd.createChannel('b3', ['alice', 'bob']);
    const proxy = trackProxy(new CuttableProxy(chatd.port));
    await proxy.listen();
    const alicePage = await openPage(await context(), 'alice', 'b3', proxy.port);
    const bobPage = await openPage(await context(), 'bob', 'b3', proxy.port);
    await alicePage.waitForFunction(() => document.getElementById('state')?.textContent === 'open');
    await bobPage.waitForFunction(() => document.getElementById('state')?.textContent === 'open');
    let cut = false;
    await alicePage.exposeFunction('cutAt', (n: number) => {
      if (n === 5 && !cut) {
        cut = true;
        proxy.cutAll();
      }
    });
    await alicePage.evaluate(() => {
      const w = window as unknown as PageWindow & { cutAt: (n: number) => void };
      w.onAck = (n) => {
        w.cutAt(n);
      };
      w.chat.sendMany('d', 50);
    });
    const expected = Array.from({ length: 50 }, (_, i) => `d${i + 1}`);
    await expectShown(alicePage, expected);
    await expectShown(bobPage, expected);
    assert.ok(cut, 'the connection was cut during the sends');
    assert.deepEqual(
      (await chatd.history('b3')).map((m) => m.body),
      expected,
    );
  });

  test('two tabs of one user: they agree on the outbox, and each message shows once in both and on the other member\'s page', async () => {
    await chatd.createChannel('b4', ['alice', 'bob']);
    const aliceCtx = await context();
    const tab1 = await openPage(aliceCtx, 'alice', 'b4');
    const tab2 = await openPage(aliceCtx, 'alice', 'b4');
    const bobPage = await openPage(await context(), 'bob', 'b4');
    await tab1.waitForFunction(() => document.getElementById('state')?.textContent === 'open');
    await tab1.evaluate(() => (window as unknown as PageWindow).chat.send('hello from tab 1'));
    await expectShown(tab2, ['hello from tab 1']);
    await expectShown(bobPage, ['hello from tab 1']);
    const tab3Token = await chatd.token('alice');
    await chatd.kill9();
    await tab1.evaluate(() => {
      (window as unknown as PageWindow).chat.sendMany('t', 5);
    });
    const pending = ['hello from tab 1', 't1', 't2', 't3', 't4', 't5'];
    // the other tab shows tab 1's pending messages too (BroadcastChannel)
    await tab2.waitForFunction((n) => (window as unknown as PageWindow).chat.shown().length === n, pending.length);
    assert.deepEqual(await shown(tab2), pending);
    // a third tab opened now reads them from IndexedDB and leaves them to their live owner
    let tab3: Page;
    try {
      tab3 = await openPage(aliceCtx, 'alice', 'b4', chatd.port, tab3Token);
    } catch (e) {
      await chatd.spawn();
      throw e;
    }
    await tab3.waitForFunction((n) => (window as unknown as PageWindow).chat.shown().length === n, pending.length - 1);
    // tab 1 goes away with its sends unACKed: another tab takes them over (Web Locks)
    await tab1.close();
    if (!chatd.running) await chatd.spawn();
    await expectShown(tab2, pending);
    await expectShown(tab3, pending);
    await expectShown(bobPage, pending);
    assert.deepEqual(
      (await chatd.history('b4')).map((m) => m.body),
      pending,
    );
    // both tabs send at once after the restart
    await Promise.all([
      tab2.evaluate(() => (window as unknown as PageWindow).chat.send('from tab 2')),
      tab3.evaluate(() => (window as unknown as PageWindow).chat.send('from tab 3')),
    ]);
    const stored = (await chatd.history('b4')).map((m) => m.body);
    assert.equal(stored.length, pending.length + 2);
    await expectShown(tab2, stored);
    await expectShown(tab3, stored);
    await expectShown(bobPage, stored);
  });
});

async function waitStored(server: ChatdServer, channelId: string, atLeast: number): Promise<{ body: string }[]> {
  // wait until the stored history stops growing (the reloaded page has resent its outbox)
  let last = -1;
  let stable = 0;
  for (let i = 0; i < 300; i++) {
    const h = await server.history(channelId);
    if (h.length === last && h.length >= atLeast) stable++;
    else stable = 0;
    last = h.length;
    if (stable >= 10) return h;
    await sleep(100);
  }
  return server.history(channelId);
}
