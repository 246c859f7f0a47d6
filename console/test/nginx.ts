// The nginx configuration of docs/security.md ("Running behind TLS"), taken from the
// document itself and run with Debian's nginx (a child process with its own prefix in a
// temporary directory, on a free port) in front of a test's chatd: the same transformation
// as tests/api/nginx.rs (TLS off, nginx's and chatd's ports, the log paths in the
// temporary directory), for the console's browser tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort, REPO_ROOT, sleep } from '../../clients/typescript/test/helpers/server.js';

/** What the test changes in the documented block, each of which must be in it: TLS off (no certificate here). */
export const DOC_LISTEN = 'listen 443 ssl;';
/** chatd's address in the documented block, replaced by the test chatd's. */
export const DOC_UPSTREAM = 'server 127.0.0.1:8080;';
/** The documented access log, replaced by a file in the temporary directory. */
export const DOC_ACCESS_LOG = '/var/log/nginx/chatd.access.log';
/** The documented error log (if the block has one), replaced by a file in the temporary directory. */
export const DOC_ERROR_LOG = '/var/log/nginx/chatd.error.log';

/** How long {@link Nginx.start} waits for nginx to accept connections, in ms. */
const START_TIMEOUT_MS = 10_000;

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The nginx binary: Debian's (/usr/sbin/nginx), or one on PATH; `undefined` when there is none. */
export function nginxBinary(): string | undefined {
  if (isFile('/usr/sbin/nginx')) return '/usr/sbin/nginx';
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, 'nginx'))
    .find(isFile);
}

/**
 * Why a test file that needs nginx is skipped (`false`: it runs): there is no nginx.
 * Throws when CHATD_REQUIRE_NGINX=1 and there is none (CI sets it, and installs nginx).
 */
export function nginxSkipReason(): string | false {
  if (nginxBinary() !== undefined) return false;
  if (process.env.CHATD_REQUIRE_NGINX === '1') {
    throw new Error('CHATD_REQUIRE_NGINX=1 but there is no nginx (/usr/sbin/nginx or on PATH)');
  }
  const reason = 'no nginx (/usr/sbin/nginx or on PATH): the documented nginx configuration was not run; apt-get install nginx';
  console.error(`SKIPPED: ${reason}`);
  return reason;
}

/** The one ```nginx block of docs/security.md; throws when there is none, more than one, or one without what the test replaces. */
export function documentedConfig(): string {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'security.md'), 'utf8');
  const blocks = doc.split('```nginx\n').slice(1);
  if (blocks.length !== 1) throw new Error(`docs/security.md has ${blocks.length} \`\`\`nginx blocks, not one`);
  const rest = blocks[0] ?? '';
  const end = rest.indexOf('\n```');
  if (end < 0) throw new Error("docs/security.md's nginx block has no end");
  const block = rest.slice(0, end);
  for (const needle of [DOC_LISTEN, DOC_UPSTREAM, DOC_ACCESS_LOG]) {
    if (!block.includes(needle)) throw new Error(`docs/security.md's nginx block has no \`${needle}\``);
  }
  return block;
}

/**
 * The whole nginx.conf: `block` (the documented one unless told) listening on
 * 127.0.0.1:`port` without TLS, in front of chatd at `upstream` (`host:port`), its logs
 * and temporary files in `dir`, in the foreground, one process.
 */
export function nginxConfig(dir: string, port: number, upstream: string, block = documentedConfig()): string {
  const server = block
    .replaceAll(DOC_LISTEN, `listen 127.0.0.1:${port};`)
    .replaceAll(DOC_UPSTREAM, `server ${upstream};`)
    .replaceAll(DOC_ACCESS_LOG, join(dir, 'access.log'))
    .replaceAll(DOC_ERROR_LOG, join(dir, 'chatd.error.log'))
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('ssl_certificate'))
    .join('\n');
  return [
    'daemon off;',
    'master_process off;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} info;`,
    'events { worker_connections 256; }',
    'http {',
    `client_body_temp_path ${join(dir, 'client_body')};`,
    `proxy_temp_path ${join(dir, 'proxy')};`,
    `fastcgi_temp_path ${join(dir, 'fastcgi')};`,
    `uwsgi_temp_path ${join(dir, 'uwsgi')};`,
    `scgi_temp_path ${join(dir, 'scgi')};`,
    server,
    '}',
    '',
  ].join('\n');
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => {
      s.destroy();
      resolve(false);
    });
  });
}

/** nginx running a configuration of {@link nginxConfig}; {@link Nginx.close} stops it and removes its directory. */
export class Nginx {
  private exited: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    /** The port nginx listens on (127.0.0.1). */
    readonly port: number,
    /** nginx's prefix: its configuration, logs and temporary files. */
    readonly dir: string,
    /** The nginx.conf it runs. */
    readonly config: string,
  ) {
    child.once('exit', (code, signal) => {
      this.exited = `code ${String(code)}, signal ${String(signal)}`;
    });
  }

  /**
   * Starts `binary` with `block` (the documented one unless told) in front of chatd at
   * `upstream` (`host:port`) and waits, up to 10 s, until it accepts connections; throws
   * with nginx's error log and configuration when it exits or does not listen.
   */
  static async start(binary: string, upstream: string, block?: string): Promise<Nginx> {
    const dir = mkdtempSync(join(tmpdir(), 'chatd-nginx-'));
    const port = await freePort();
    const config = nginxConfig(dir, port, upstream, block);
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, config);
    const child = spawn(binary, ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf], { stdio: 'ignore' });
    const nginx = new Nginx(child, port, dir, config);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (await accepts(port)) return nginx;
      if (nginx.exited !== undefined || Date.now() > deadline) {
        const why = nginx.exited !== undefined ? `nginx exited (${nginx.exited})` : `nginx did not listen on ${port}`;
        const log = nginx.errorLog();
        await nginx.close();
        throw new Error(`${why}: ${log}\n${config}`);
      }
      await sleep(100);
    }
  }

  /** nginx's address, `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** nginx's error log so far (empty when there is none). */
  errorLog(): string {
    const file = join(this.dir, 'error.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  /** Stops nginx (SIGKILL: nothing of it is kept) and removes its directory. */
  async close(): Promise<void> {
    if (this.exited === undefined) {
      const gone = new Promise<void>((resolve) => {
        this.child.once('exit', () => {
          resolve();
        });
      });
      this.child.kill('SIGKILL');
      await gone;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
