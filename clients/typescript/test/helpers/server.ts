// Starts a real chatd binary for tests: the client's integration and browser tests, and the
// console's browser tests (console/tsconfig.test.json compiles this file too, so it
// imports node built-ins only). The one copy of the code that starts chatd.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes, randomUUID } from 'node:crypto';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The repository root: the nearest directory above this file with `Cargo.toml` and
 * `clients/typescript` (this file is compiled into clients/typescript/build/test/helpers
 * and into console/build/clients/typescript/test/helpers).
 */
export const REPO_ROOT = findRepoRoot(here);
/** The client package's root, clients/typescript. */
export const PACKAGE_ROOT = join(REPO_ROOT, 'clients', 'typescript');

function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'Cargo.toml')) && existsSync(join(dir, 'clients', 'typescript'))) return dir;
    if (dirname(dir) === dir) return resolve(from, '..', '..', '..', '..', '..');
  }
}

/** The chatd binary: CHATD_BIN, else target/debug/chatd of the repository. */
export function chatdBin(): string {
  const bin = process.env.CHATD_BIN ?? join(REPO_ROOT, 'target', 'debug', 'chatd');
  if (!existsSync(bin)) throw new Error(`chatd binary not found at ${bin} (build it: cargo build --bin chatd; or set CHATD_BIN)`);
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

/** The database chatd stores in. */
export type StoreKind = 'sqlite' | 'postgres';

/** Options of {@link ChatdServer.start}. */
export interface ServerOptions {
  /** SQLite in the data directory (the default), or a PostgreSQL database made for this server (CHATD_TEST_DATABASE_URL). */
  store?: StoreKind;
  /** chatd settings on top of the harness's own (listen address, data directory, admin token, JWT secret, `warn` logs). */
  env?: Record<string, string>;
}

/** The stores to run the integration tests on: SQLite always, PostgreSQL when CHATD_TEST_DATABASE_URL is set. */
export function storeKinds(): StoreKind[] {
  return process.env.CHATD_TEST_DATABASE_URL !== undefined && process.env.CHATD_TEST_DATABASE_URL !== ''
    ? ['sqlite', 'postgres']
    : ['sqlite'];
}

/**
 * `chatd serve` on a free port with a temporary data directory. It inherits this
 * process's environment except CHATD_* variables (so a developer's CHATD_DATABASE_URL
 * or CHATD_CONFIG cannot reach it): its settings are the harness's and `env`'s only.
 */
export class ChatdServer {
  readonly port: number;
  readonly dataDir: string;
  readonly adminToken = randomBytes(16).toString('hex');
  readonly jwtSecret = randomBytes(24).toString('hex');
  private proc: ChildProcess | undefined;
  private readonly env: Record<string, string>;
  private pgDb: string | undefined;
  /** The end of the process's output (20 000 characters), for failure messages. */
  log = '';

  private constructor(port: number, dataDir: string, env: Record<string, string>, pgDb: string | undefined) {
    this.port = port;
    this.dataDir = dataDir;
    this.env = env;
    this.pgDb = pgDb;
  }

  /** Starts a server (see {@link ServerOptions}) and waits until it is ready. */
  static async start(options: ServerOptions = {}): Promise<ChatdServer> {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'chatd-test-'));
    const env: Record<string, string> = { ...options.env };
    let pgDb: string | undefined;
    if (options.store === 'postgres') {
      const base = process.env.CHATD_TEST_DATABASE_URL;
      if (base === undefined) throw new Error('CHATD_TEST_DATABASE_URL not set');
      pgDb = `chatd_ts_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
      execFileSync('psql', [base, '-q', '-c', `CREATE DATABASE ${pgDb}`], { stdio: 'pipe' });
      const u = new URL(base);
      u.pathname = `/${pgDb}`;
      env.CHATD_DATABASE_URL = u.toString();
    }
    const s = new ChatdServer(port, dataDir, env, pgDb);
    await s.spawn();
    return s;
  }

  /** The HTTP base URL. */
  get httpUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  /** The WebSocket URL. */
  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}/v1/ws`;
  }

  /** Starts the process (again, after a kill or stop: same port, data and tokens) and waits for /readyz. */
  async spawn(): Promise<void> {
    const proc = spawn(chatdBin(), ['serve'], {
      env: {
        ...inheritedEnv(),
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
    const onData = (d: Buffer): void => {
      this.log = (this.log + d.toString()).slice(-20000);
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`chatd exited with ${proc.exitCode}: ${this.log}`);
      try {
        const r = await fetch(`${this.httpUrl}/readyz`);
        if (r.status === 200) return;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`chatd not ready: ${this.log}`);
      await sleep(50);
    }
  }

  /** The process runs. */
  get running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** kill -9: no shutdown at all. */
  async kill9(): Promise<void> {
    const p = this.proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM (SIGKILL after 12 s), and waits for the exit. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (p !== undefined && p.exitCode === null && p.signalCode === null) {
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      const t = setTimeout(() => p.kill('SIGKILL'), 12_000);
      await exited;
      clearTimeout(t);
    }
  }

  /** Stops it and removes its data (directory, PostgreSQL database). */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
    if (this.pgDb !== undefined) {
      const base = process.env.CHATD_TEST_DATABASE_URL ?? '';
      try {
        execFileSync('psql', [base, '-q', '-c', `DROP DATABASE IF EXISTS ${this.pgDb} WITH (FORCE)`], { stdio: 'pipe' });
      } catch {
        /* best effort */
      }
      this.pgDb = undefined;
    }
  }

  /** A request to the admin HTTP API; `json` is the parsed body (the text when it is not JSON). */
  async admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${this.adminToken}` } };
    if (body !== undefined) init.body = JSON.stringify(body);
    const r = await fetch(`${this.httpUrl}${path}`, init);
    const text = await r.text();
    let json: unknown = undefined;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: r.status, json };
  }

  /** Creates a channel with these members (admin API). */
  async createChannel(channelId: string, members: string[]): Promise<void> {
    const r = await this.admin('POST', '/v1/channels', { channelId, members });
    if (r.status !== 201) throw new Error(`create channel: ${r.status} ${JSON.stringify(r.json)}`);
  }

  /** Mints a user token (admin API). */
  async token(userId: string, ttlSeconds = 3600): Promise<string> {
    const r = await this.admin('POST', '/v1/tokens', { userId, ttlSeconds });
    if (r.status !== 201) throw new Error(`token: ${r.status} ${JSON.stringify(r.json)}`);
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

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** This process's environment less its CHATD_* variables (see {@link ChatdServer}). */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CHATD_')) env[k] = v;
  return env;
}

/** Polls `fn` until it returns true or the time is up; then throws with `what()`. */
export async function waitFor(fn: () => boolean, what: () => string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await sleep(20);
  }
}
