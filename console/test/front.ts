// A loopback HTTP server in front of chatd for the tests of the console's service worker
// (offline.test.ts): every request and WebSocket upgrade goes on to chatd; under
// CONSOLE_TEST_DIST=1 the console's script, style sheet and icon are answered from
// console/dist instead, with chatd's status and headers for them. Every answer is a real
// one from a loopback address, so Chromium's local network access checks let the pages
// the service worker answers open their WebSocket to 127.0.0.1 (a response made up by
// playwright's `route.fulfill` would not be). While chatd is down, the front closes each
// connection, as a stopped server would be seen.
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { CONSOLE_FROM_DIST, CONSOLE_ROOT, DIST_FILES } from './harness.js';

/** Headers not copied from chatd's answer to the front's (the body is replaced or re-sent). */
const HOP_HEADERS = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive']);

/** The front: {@link ConsoleFront.url} is the address pages open instead of chatd's. */
export class ConsoleFront {
  port = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  /** @param targetPort - chatd's port now (it may change when chatd is restarted) */
  constructor(targetPort: () => number) {
    this.server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://front').pathname;
      const file = CONSOLE_FROM_DIST ? DIST_FILES.get(path) : undefined;
      const up = httpRequest({ host: '127.0.0.1', port: targetPort(), path: req.url, method: req.method, headers: req.headers }, (answer: IncomingMessage) => {
        if (file === undefined || answer.statusCode !== 200) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        answer.resume();
        const body = readFileSync(join(CONSOLE_ROOT, 'dist', file));
        const headers: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_HEADERS.has(k)) headers[k] = v;
        headers['content-length'] = String(body.length);
        res.writeHead(200, headers).end(body);
      });
      up.on('error', () => {
        req.socket.destroy();
      });
      req.pipe(up);
    });
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
      const upstream = connect(targetPort(), '127.0.0.1', () => {
        const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`];
        for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i] ?? ''}: ${req.rawHeaders[i + 1] ?? ''}`);
        upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      this.sockets.add(upstream);
      upstream.once('close', () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
    });
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts listening on a free loopback port. */
  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    const a = this.server.address();
    this.port = typeof a === 'object' && a !== null ? a.port : 0;
  }

  /** Closes every connection and stops listening. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((r) => {
      this.server.close(() => {
        r();
      });
    });
  }
}
