// The console's browser tests' harness: chatd itself is started by the client's test
// helper (clients/typescript/test/helpers/server.ts, the one copy of that code, compiled
// into this package's test build too); here is what only the console's tests need: a TCP
// proxy in front of chatd that can hold what browsers send on their WebSockets (a send in
// flight that the server has not seen yet), and, on demand (CONSOLE_TEST_DIST=1), the
// console's files served from console/dist instead of the chatd binary.
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, Route } from 'playwright-core';
import { REPO_ROOT } from '../../clients/typescript/test/helpers/server.js';

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
const DIST_FILES: ReadonlyMap<string, string> = new Map([
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
      const response = await route.fetch();
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
