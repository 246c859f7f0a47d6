// The real chatd binary as a child process, and a TCP proxy in front of it that can
// hold what browsers send on their WebSockets (a send in flight that the server has not
// seen yet), for the console's browser tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

const here = dirname(fileURLToPath(import.meta.url));
/** console/ (build/test -> ../..) */
export const CONSOLE_ROOT = resolve(here, '..', '..');
/** The repository root. */
export const REPO_ROOT = resolve(CONSOLE_ROOT, '..');

/** The chatd binary: CHATD_BIN, else ../target/debug/chatd. */
export function chatdBin(): string {
  const bin = process.env.CHATD_BIN ?? join(REPO_ROOT, 'target', 'debug', 'chatd');
  if (!existsSync(bin)) throw new Error(`chatd binary not found at ${bin}: run \`cargo build --bin chatd\` or set CHATD_BIN`);
  return bin;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => {
        res(port);
      });
    });
    s.on('error', rej);
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `chatd serve` on a port of its own, over an SQLite file in a temporary directory. */
export class Chatd {
  readonly adminToken = randomBytes(16).toString('hex');
  readonly jwtSecret = randomBytes(24).toString('hex');
  readonly dataDir = mkdtempSync(join(tmpdir(), 'chatd-console-'));
  port = 0;
  log = '';
  private proc: ChildProcess | undefined;
  private readonly env: Record<string, string>;

  constructor(env: Record<string, string> = {}) {
    this.env = env;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, on the same port and data after a kill) and waits for /readyz. */
  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const proc = spawn(chatdBin(), ['serve'], {
      env: {
        PATH: process.env.PATH ?? '',
        CHATD_LISTEN: `127.0.0.1:${this.port}`,
        CHATD_DATA_DIR: this.dataDir,
        CHATD_ADMIN_TOKEN: this.adminToken,
        CHATD_JWT_SECRET: this.jwtSecret,
        CHATD_LOG: 'warn',
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    const keep = (d: Buffer): void => {
      this.log = (this.log + d.toString()).slice(-20_000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`chatd exited with ${proc.exitCode}: ${this.log}`);
      try {
        if ((await fetch(`${this.url}/readyz`)).status === 200) return;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`chatd not ready: ${this.log}`);
      await sleep(50);
    }
  }

  /** SIGKILL: no shutdown, no goodbye to the sessions. */
  async kill9(): Promise<void> {
    const p = this.proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const p = this.proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 12_000);
    await exited;
    clearTimeout(t);
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** The admin HTTP API (test set-up only; the tests' own admin steps go through the admin view). */
  async admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${this.adminToken}` } };
    if (body !== undefined) init.body = JSON.stringify(body);
    const r = await fetch(`${this.url}${path}`, init);
    const text = await r.text();
    return { status: r.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  }

  async token(userId: string, ttlSeconds = 3600): Promise<string> {
    const r = await this.admin('POST', '/v1/tokens', { userId, ttlSeconds });
    if (r.status !== 201) throw new Error(`token: ${r.status}`);
    return (r.json as { token: string }).token;
  }

  /** Every stored entry of a channel, read through the admin history route. */
  async history(channelId: string): Promise<{ seq: number; body: string; clientMsgId: string; senderId: string }[]> {
    const out: { seq: number; body: string; clientMsgId: string; senderId: string }[] = [];
    let after = 0;
    for (;;) {
      const r = await this.admin('GET', `/v1/channels/${channelId}/messages?afterSeq=${after}&limit=500`);
      if (r.status !== 200) throw new Error(`history: ${r.status}`);
      const page = r.json as { messages: { seq: number; body: string; clientMsgId: string; senderId: string }[]; hasMore: boolean };
      out.push(...page.messages);
      const last = page.messages[page.messages.length - 1];
      if (!page.hasMore || last === undefined) return out;
      after = last.seq;
    }
  }
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
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
