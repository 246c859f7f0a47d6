// The console's browser tests' harness: chatd itself is started by the client's test
// helper (clients/typescript/test/helpers/server.ts, the one copy of that code, compiled
// into this package's test build too); here is what only the console's tests need: a TCP
// proxy in front of chatd that can hold what browsers send on their WebSockets (a send in
// flight that the server has not seen yet), and, on demand (CONSOLE_TEST_DIST=1), the
// console's files served from console/dist instead of the chatd binary; and what every
// browser test file does: launching Chromium, opening and signing in pages, opening a
// channel, sending, finding a message, polling until something holds.
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page, type Route } from 'playwright-core';
import { REPO_ROOT, sleep, type ChatdServer } from '../../clients/typescript/test/helpers/server.js';

export { ChatdServer, REPO_ROOT, sleep } from '../../clients/typescript/test/helpers/server.js';

/** console/ */
export const CONSOLE_ROOT = join(REPO_ROOT, 'console');

/**
 * CONSOLE_TEST_DIST=1: the browsers get the console's script, style sheet and icon from
 * console/dist as built now, not those the chatd binary embedded when it was compiled
 * (src/http/console.rs, include_str!). For trying console changes against a chatd built
 * before them, without rebuilding it. Each file is still asked of chatd, and its answer's
 * status and headers (the Content-Security-Policy among them) are kept: only the body of a
 * 200 is replaced. The page itself (index.html) still comes from chatd: a document the test
 * made up would lose its loopback address, and Chromium's local network access checks
 * would then block its WebSocket to 127.0.0.1; so the page must be the same as
 * console/dist/index.html (checked). Off by default: CI tests what chatd serves.
 */
export const CONSOLE_FROM_DIST = process.env.CONSOLE_TEST_DIST === '1';

/** The files of console/dist served instead of chatd's, by their path. */
export const DIST_FILES: ReadonlyMap<string, string> = new Map([
  ['/console/console.js', 'console.js'],
  ['/console/console.css', 'console.css'],
  ['/console/favicon.svg', 'favicon.svg'],
]);

/**
 * With {@link CONSOLE_FROM_DIST}, makes `ctx`'s pages get the console's files from
 * console/dist; throws when chatd (at `httpUrl`) serves another page than
 * console/dist/index.html.
 */
export async function consoleFilesFromDist(ctx: BrowserContext, httpUrl: string): Promise<void> {
  if (!CONSOLE_FROM_DIST) return;
  const served = await (await fetch(`${httpUrl}/console`)).text();
  if (served !== readFileSync(join(CONSOLE_ROOT, 'dist', 'index.html'), 'utf8')) {
    throw new Error('CONSOLE_TEST_DIST=1: chatd serves another index.html than console/dist has; rebuild chatd (cargo build --bin chatd)');
  }
  await ctx.route(
    (url) => DIST_FILES.has(url.pathname),
    async (route: Route) => {
      const file = DIST_FILES.get(new URL(route.request().url()).pathname) ?? '';
      let response;
      try {
        response = await route.fetch();
      } catch {
        // chatd is down (a test stopped it): the browser sees the refusal it would see without the route
        await route.abort('connectionrefused');
        return;
      }
      if (!response.ok()) {
        await route.fulfill({ response });
        return;
      }
      const body = readFileSync(join(CONSOLE_ROOT, 'dist', file));
      await route.fulfill({ response, body, headers: { ...response.headers(), 'content-length': String(body.length) } });
    },
  );
}

interface Pair {
  client: Socket;
  upstream: Socket;
  /** The connection's first bytes asked for the WebSocket. */
  ws: boolean | undefined;
  held: Buffer[];
}

/**
 * A TCP proxy to chatd. With `hold(true)`, the bytes browsers send on open WebSockets
 * (after the upgrade request) wait in the proxy: a frame the page has sent that the
 * server has not received. A held connection that the browser closes has its bytes
 * delivered first, so the server stores a send whose ACK nobody reads.
 */
export class HoldingProxy {
  port = 0;
  private readonly server: Server;
  private readonly pairs = new Set<Pair>();
  /** Every socket not yet closed, paired or not: `server.close()` waits for all of them. */
  private readonly sockets = new Set<Socket>();
  private holding = false;

  constructor(targetPort: () => number) {
    this.server = createServer((client) => {
      const upstream = connect(targetPort(), '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
      }
      const pair: Pair = { client, upstream, ws: undefined, held: [] };
      this.pairs.add(pair);
      client.on('data', (chunk: Buffer) => {
        if (pair.ws === undefined) {
          pair.ws = chunk.toString('latin1').startsWith('GET /v1/ws');
          upstream.write(chunk);
        } else if (pair.ws && this.holding) pair.held.push(chunk);
        else upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        client.write(chunk);
      });
      const end = (): void => {
        if (!this.pairs.delete(pair)) return;
        if (pair.held.length > 0 && !upstream.destroyed) {
          for (const b of pair.held.splice(0)) upstream.write(b);
          upstream.end();
        } else upstream.destroy();
        client.destroy();
      };
      client.on('error', end);
      upstream.on('error', end);
      client.on('close', end);
      upstream.on('close', end);
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    const a = this.server.address();
    this.port = typeof a === 'object' && a !== null ? a.port : 0;
  }

  /** Starts or stops holding; stopping delivers what was held, in order. */
  hold(on: boolean): void {
    this.holding = on;
    if (on) return;
    for (const p of this.pairs) for (const b of p.held.splice(0)) p.upstream.write(b);
  }

  /** Bytes held now, over all connections. */
  heldBytes(): number {
    let n = 0;
    for (const p of this.pairs) for (const b of p.held) n += b.length;
    return n;
  }

  async close(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
    this.pairs.clear();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((r) => {
      this.server.close(() => {
        r();
      });
    });
  }
}

// ---- the browser side, shared by every browser test file ----

/** Debian's Chromium, or the one CHROMIUM_PATH names. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Chromium's flags for the tests: headless, no sandbox, GPU, QUIC, first-run UI or background traffic. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Every action's default timeout in a test page, in ms: generous, as CI machines are
 * shared and a reconnect after a restart backs off up to 10 s.
 */
export const ACTION_TIMEOUT_MS = 45_000;

/** How long {@link connected} waits for the page's connection, in ms. */
export const CONNECT_TIMEOUT_MS = 60_000;

/** How long {@link until} and {@link untilDefined} poll unless told, in ms. */
export const UNTIL_TIMEOUT_MS = 30_000;

/** How often {@link until} and {@link untilDefined} ask, in ms. */
const POLL_MS = 50;

/** A browser window's size in CSS pixels. */
export interface Viewport {
  width: number;
  height: number;
}

/** The chat tests' window (attachments, mentions, moderation, retention, search), in CSS pixels. */
export const CHAT_VIEWPORT: Viewport = { width: 1200, height: 760 };

/** What a test page is opened with. */
export interface PageOptions {
  /** The window's size. */
  viewport: Viewport;
  /** Lets the page download files (playwright's `acceptDownloads`); off unless set. */
  acceptDownloads?: boolean;
  /**
   * `httpUrl` is a {@link ConsoleFront} (test/front.ts), which serves console/dist itself
   * under {@link CONSOLE_FROM_DIST}: no route is set, and the console's service worker
   * (src/offline.ts) may run. Without it, service workers are blocked: the other tests'
   * reloads come from chatd, and under CONSOLE_FROM_DIST a worker whose script
   * `route.fulfill` made up would count as public to Chromium's local network access
   * checks, and the pages it answered could not open their WebSocket to 127.0.0.1.
   */
  front?: boolean;
}

/**
 * One Chromium (playwright gives every launch a fresh profile directory of its own) and
 * the browser contexts the tests open in it, one per page, closed together by
 * {@link Browsers.close}.
 */
export class Browsers {
  private browser: Browser | undefined;
  private readonly contexts: BrowserContext[] = [];

  /** Starts Chromium ({@link CHROMIUM}, headless). */
  async launch(): Promise<void> {
    this.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }

  /**
   * A page in a browser context of its own, nothing loaded yet: the console's files from
   * console/dist with {@link CONSOLE_FROM_DIST} (checked against what chatd at `httpUrl`
   * serves; with `options.front`, the front at `httpUrl` serves them, and service workers
   * run), every action's timeout {@link ACTION_TIMEOUT_MS}, and the page's uncaught
   * errors written to stderr.
   */
  async newPage(httpUrl: string, options: PageOptions): Promise<Page> {
    if (this.browser === undefined) throw new Error('Browsers.newPage before launch');
    const ctx = await this.browser.newContext({
      viewport: options.viewport,
      ...(options.acceptDownloads === true ? { acceptDownloads: true } : {}),
      serviceWorkers: options.front === true ? 'allow' : 'block',
    });
    if (options.front !== true) await consoleFilesFromDist(ctx, httpUrl);
    ctx.setDefaultTimeout(ACTION_TIMEOUT_MS);
    this.contexts.push(ctx);
    const page = await ctx.newPage();
    page.on('pageerror', (e) => {
      console.error('page error:', e.message);
    });
    return page;
  }

  /**
   * A new page ({@link Browsers.newPage}) signed in with `token`: it opens
   * `<httpUrl>/console#token=<token>` and waits until the connection shows connected
   * ({@link connected}, up to {@link CONNECT_TIMEOUT_MS}).
   */
  async signIn(httpUrl: string, token: string, options: PageOptions): Promise<Page> {
    const page = await this.newPage(httpUrl, options);
    await page.goto(`${httpUrl}/console#token=${token}`);
    await connected(page);
    return page;
  }

  /** {@link Browsers.signIn} as `user`, with a token `server` mints for them. */
  async signInAs(server: ChatdServer, user: string, options: PageOptions): Promise<Page> {
    return this.signIn(server.httpUrl, await server.token(user), options);
  }

  /** Closes every context, then Chromium; errors (a context already gone) are ignored. */
  async close(): Promise<void> {
    for (const c of this.contexts) await c.close().catch(() => undefined);
    this.contexts.length = 0;
    await this.browser?.close().catch(() => undefined);
    this.browser = undefined;
  }
}

/** Waits, up to {@link CONNECT_TIMEOUT_MS}, for the page's `#conn` to read `data-state="connected"`. */
export async function connected(page: Page): Promise<void> {
  await page.locator('#conn[data-state="connected"]').waitFor({ timeout: CONNECT_TIMEOUT_MS });
}

/**
 * Clicks channel `id` in the channel list and waits (the page's default timeout) for the
 * channel title to read `# <id>`.
 */
export async function openChannel(page: Page, id: string): Promise<void> {
  await page.locator(`button.channel[data-channel="${id}"]`).click();
  await page.locator('#channel-title', { hasText: `# ${id}` }).waitFor();
}

/** Types `body` into the composer and presses Enter (it does not wait for the message). */
export async function send(page: Page, body: string): Promise<void> {
  const c = page.locator('#composer');
  await c.fill(body);
  await c.press('Enter');
}

/** The messages in the page's list whose text is exactly `body`. */
export function message(page: Page, body: string): Locator {
  const exact = new RegExp(`^${body.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  return page.locator('#messages li.msg').filter({ has: page.locator('.body', { hasText: exact }) });
}

/**
 * Polls `f` every 50 ms until it is true; throws "timed out waiting for <what>" once
 * `timeoutMs` (default {@link UNTIL_TIMEOUT_MS}) have passed.
 */
export async function until(f: () => Promise<boolean>, what: string, timeoutMs = UNTIL_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/**
 * Polls `f` every 50 ms until it returns a value other than undefined, and returns that
 * value; throws "timed out waiting for <what>" once `timeoutMs` (default
 * {@link UNTIL_TIMEOUT_MS}) have passed.
 */
export async function untilDefined<T>(f: () => Promise<T | undefined>, what: string, timeoutMs = UNTIL_TIMEOUT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}
