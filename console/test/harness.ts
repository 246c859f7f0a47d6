// The console's browser tests' harness: chatd itself is started by the client's test
// helper (clients/typescript/test/helpers/server.ts, the one copy of that code, compiled
// into this package's test build too); here is what only the console's tests need: a TCP
// proxy in front of chatd that can hold what browsers send on their WebSockets (a send in
// flight that the server has not seen yet).
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from '../../clients/typescript/test/helpers/server.js';

export { ChatdServer, REPO_ROOT, sleep } from '../../clients/typescript/test/helpers/server.js';

/** console/ */
export const CONSOLE_ROOT = join(REPO_ROOT, 'console');

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
