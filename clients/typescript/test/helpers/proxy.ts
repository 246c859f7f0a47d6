// A TCP proxy between clients and chatd that can cut every connection at once: a real
// network failure (no FIN to the server before the client notices), no mock.
import { createServer, connect, type Server, type Socket } from 'node:net';

/** Called with each server-to-client WebSocket text frame; return true to cut every connection right after it. */
export type FrameHook = (text: string) => boolean;

export class CuttableProxy {
  private readonly server: Server;
  /** When set, server-to-client data is forwarded frame by frame through this hook. */
  onServerFrame: FrameHook | undefined;
  /**
   * When set, each server-to-client text frame is passed to it and the client gets the
   * text it returns instead (a forged frame), as one unfragmented text frame.
   */
  rewriteServerFrame: ((text: string) => string) | undefined;
  private readonly pairs = new Set<[Socket, Socket]>();
  /**
   * Every socket of every connection not yet closed, cut or not: `server.close()` waits
   * for all of them, including a client cut with a FIN that it never answered.
   */
  private readonly sockets = new Set<Socket>();
  port = 0;
  private readonly target: number;

  constructor(targetPort: number) {
    this.target = targetPort;
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
      }
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      client.pipe(upstream);
      let head = true;
      let buf = Buffer.alloc(0);
      // Always parsed frame by frame, hooks set or not: a hook set between two frames
      // of an open connection then applies from the next whole frame on.
      upstream.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        if (head) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          client.write(buf.subarray(0, end + 4));
          buf = buf.subarray(end + 4);
          head = false;
        }
        // unmasked server frames: FIN+opcode, length (7, 16 or 64 bits), payload
        for (;;) {
          if (buf.length < 2) return;
          const b1 = buf[1] ?? 0;
          let len = b1 & 0x7f;
          let off = 2;
          if (len === 126) {
            if (buf.length < 4) return;
            len = buf.readUInt16BE(2);
            off = 4;
          } else if (len === 127) {
            if (buf.length < 10) return;
            len = Number(buf.readBigUInt64BE(2));
            off = 10;
          }
          if (buf.length < off + len) return;
          const frame = buf.subarray(0, off + len);
          buf = buf.subarray(off + len);
          const opcode = (frame[0] ?? 0) & 0x0f;
          const hook = this.onServerFrame ?? ((): boolean => false);
          const rewrite = this.rewriteServerFrame;
          if (opcode === 1 && rewrite !== undefined) {
            client.write(textFrame(rewrite(frame.subarray(off).toString('utf8'))));
          } else {
            client.write(frame);
          }
          if (opcode === 1 && hook(frame.subarray(off).toString('utf8'))) {
            // the client gets every frame up to this one, then the connection ends
            this.onServerFrame = undefined;
            for (const [c, u] of this.pairs) {
              // let the client take what was written, then FIN; the server side is reset
              u.removeAllListeners('close');
              u.removeAllListeners('data');
              u.on('error', () => undefined);
              u.unpipe();
              c.unpipe();
              u.resetAndDestroy();
              c.end();
            }
            this.pairs.clear();
            return;
          }
        }
      });
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

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cutAll();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((r) => {
      this.server.close(() => {
        r();
      });
    });
  }
}

/** An unmasked, unfragmented WebSocket text frame (server to client). */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const n = payload.length;
  let head: Buffer;
  if (n < 126) {
    head = Buffer.from([0x81, n]);
  } else if (n < 65_536) {
    head = Buffer.alloc(4);
    head[0] = 0x81;
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = 0x81;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}
