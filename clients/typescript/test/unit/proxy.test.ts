// The test proxy itself (test/helpers/proxy.ts): closing it must end every connection it
// accepted, or a test file's `after` hook waits forever on `server.close()`. A browser's
// socket that was cut with a FIN (the frame hook) and never answered it is one such
// connection; a CI run once hung 90 minutes in that hook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { CuttableProxy } from '../helpers/proxy.js';

function listen(server: Server): Promise<number> {
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      r(typeof a === 'object' && a !== null ? a.port : 0);
    }),
  );
}

/** The unmasked text frame "hi" (server to client). */
const HI = Buffer.from([0x81, 0x02, 0x68, 0x69]);

/** An upstream whose connections `serve` handles, and a proxy in front of it. */
async function proxied(serve: (s: Socket) => void): Promise<{ upstream: Server; proxy: CuttableProxy }> {
  const upstream = createServer((s) => {
    s.on('error', () => undefined);
    serve(s);
  });
  const proxy = new CuttableProxy(await listen(upstream));
  await proxy.listen();
  return { upstream, proxy };
}

/** Resolves with `p`'s value, or rejects after `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, rej) => {
    timer = setTimeout(() => { rej(new Error(`${what} took over ${ms} ms`)); }, ms);
  });
  return Promise.race([p, late]).finally(() => { clearTimeout(timer); });
}

test('close() ends a connection whose peer ignored the FIN of a frame-hook cut', async () => {
  // an upstream that answers the upgrade and then one text frame
  const { upstream, proxy } = await proxied((s) => {
    s.once('data', () => {
      s.write('HTTP/1.1 101 Switching Protocols\r\n\r\n');
      s.write(HI);
    });
  });
  let frames = 0;
  proxy.onServerFrame = () => {
    frames++;
    return true; // cut after the first frame: FIN to the client
  };
  // a peer that keeps its half of the connection open after the FIN, as a stuck browser would
  const client: Socket = connect({ port: proxy.port, host: '127.0.0.1', allowHalfOpen: true });
  client.on('error', () => undefined);
  client.resume(); // read what comes, so 'end' is emitted
  const gotEnd = new Promise<void>((r) => client.once('end', r));
  client.write('GET /v1/ws HTTP/1.1\r\n\r\n');
  await within(gotEnd, 5_000, 'the FIN of the cut');
  assert.equal(frames, 1);
  assert.equal(client.destroyed, false, 'the peer still holds its half');
  await within(proxy.close(), 5_000, 'proxy.close()');
  client.destroy();
  await new Promise<void>((r) => upstream.close(() => { r(); }));
});

test('a rewrite set after the upgrade, between frames, rewrites the next frame', async () => {
  // an upstream that answers the upgrade and a text frame, then one more text frame per
  // byte the client sends
  const { upstream, proxy } = await proxied((s) => {
    let upgraded = false;
    s.on('data', () => {
      if (!upgraded) {
        upgraded = true;
        s.write('HTTP/1.1 101 Switching Protocols\r\n\r\n');
      }
      s.write(HI);
    });
  });
  const client: Socket = connect({ port: proxy.port, host: '127.0.0.1' });
  client.on('error', () => undefined);
  let got = Buffer.alloc(0);
  const waitFor = async (bytes: Buffer): Promise<void> => {
    const deadline = Date.now() + 5_000;
    while (got.indexOf(bytes) < 0) {
      if (Date.now() > deadline) throw new Error(`no ${bytes.toString('hex')} in ${got.toString('hex')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  client.on('data', (chunk: Buffer) => {
    got = Buffer.concat([got, chunk]);
  });
  client.write('GET /v1/ws HTTP/1.1\r\n\r\n');
  await waitFor(HI); // the first frame, forwarded as it came
  proxy.rewriteServerFrame = (text) => (text === 'hi' ? 'ho' : text);
  client.write('x');
  await waitFor(Buffer.from([0x81, 0x02, 0x68, 0x6f])); // "ho": the next frame was rewritten
  assert.equal(got.indexOf(Buffer.from([0x68, 0x69]), got.indexOf('\r\n\r\n') + 8), -1, 'the second "hi" never reached the client');
  client.destroy();
  await within(proxy.close(), 5_000, 'proxy.close()');
  await new Promise<void>((r) => upstream.close(() => { r(); }));
});
