// A TCP proxy between clients and chatd that can cut every connection at once: a real
// network failure (no FIN to the server before the client notices), no mock.
import { createServer, connect, type Server, type Socket } from 'node:net';

export class CuttableProxy {
  private readonly server: Server;
  private readonly pairs = new Set<[Socket, Socket]>();
  port = 0;
  private readonly target: number;

  constructor(targetPort: number) {
    this.target = targetPort;
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      };
      client.on('error', end);
      upstream.on('error', end);
      client.on('close', end);
      upstream.on('close', end);
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    const a = this.server.address();
    this.port = typeof a === 'object' && a !== null ? a.port : 0;
  }

  /** Resets every open connection (RST to both sides). */
  cutAll(): number {
    const n = this.pairs.size;
    for (const [c, u] of this.pairs) {
      c.resetAndDestroy();
      u.resetAndDestroy();
    }
    this.pairs.clear();
    return n;
  }

  get connections(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
