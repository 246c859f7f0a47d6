// Uploads that "another tab" of a user keeps in progress, their bodies held open, so a test
// can fill the server's max_uploads_in_flight_per_user for that user on purpose. Shared by
// the client's upload-queue test and the console's (compiled into both).
//
// Each held upload is a POST to the attachments route, on a connection of its own
// (`node:http`, no agent), whose chunked body the test ends when it chooses (a byte every 2 s
// meanwhile, so the server's idle bound does not end it). The server takes the slot when the
// request arrives; a fixed sleep cannot tell when that is on a loaded machine (the console
// test once saw all six of its uploads pass because the held one had not arrived yet), so
// `holdUploadSlots` probes with one-byte uploads until one is refused 429 with reason
// `uploads_in_flight`: the probes go one at a time, so the others in progress then are the
// held ones. A probe can itself take a slot just before a held upload arrives, which is then
// refused 429 at once: a held upload answered before the server held them all is started
// again (without that, 3 rounds in 8 on a loaded machine ended with one held upload refused
// and every later probe accepted, until the helper gave up).
import { request } from 'node:http';

import { sleep, type ChatdServer } from './server.js';

/** Uploads held open by {@link holdUploadSlots}. */
export interface HeldUploads {
  /** Sends the last bytes of upload `i` (0-based) and ends its body; resolves to its answer (201 expected). */
  release(i: number): Promise<Response>;
  /** Ends every held body still open (for `t.after`: a failed test leaves none open when the server stops). */
  endAll(): void;
}

/** One upload whose body stays open until `end`. */
interface Held {
  push(b: Uint8Array): void;
  end(): void;
  /** The server's answer (the status and body). */
  readonly answer: Promise<Response>;
  /** Whether the answer came (before the body was ended, only a refusal can come). */
  answered(): boolean;
}

/** Starts upload `name` to `route` with `token`, its first bytes sent and its body left open. */
function startHeld(route: string, token: string, name: string): Held {
  let ended = false;
  let answered = false;
  // no Content-Length: the body goes out chunked, its headers at once (flushHeaders)
  const req = request(`${route}?filename=${name}`, {
    method: 'POST',
    agent: false,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
  });
  const answer = new Promise<Response>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        answered = true;
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0 }));
      });
      res.on('error', reject);
    });
    req.on('error', (e) => {
      answered = true;
      reject(e);
    });
  });
  // a failed test still ends the body before the server stops, and leaves nothing unhandled
  void answer.catch(() => undefined);
  req.flushHeaders();
  // a byte every 2 s: the server ends an upload whose body is silent for
  // handshake_timeout_ms (10 s by default) with 408, which would free the slot
  const keepAlive = setInterval(() => {
    if (!ended) req.write('.');
  }, 2_000);
  keepAlive.unref();
  const held: Held = {
    push: (b) => {
      if (!ended) req.write(b);
    },
    end: () => {
      if (ended) return;
      ended = true;
      clearInterval(keepAlive);
      req.end();
    },
    answer,
    answered: () => answered,
  };
  held.push(new TextEncoder().encode(`${name} `));
  return held;
}

/**
 * Starts `count` uploads by `user` to `channelId`, each with a first chunk sent and its body
 * left open, and waits until the server refuses a one-byte probe upload with 429 reason
 * `uploads_in_flight` while none of them has been answered; `count` must therefore equal the
 * server's `max_uploads_in_flight_per_user`. A held upload refused meanwhile (a probe held a
 * slot when it arrived) is started again. Probes the server accepted meanwhile are stored as
 * unclaimed attachments of a byte each.
 *
 * Throws when no probe is refused within `timeoutMs` (10 000 ms by default), with the
 * answers seen.
 */
export async function holdUploadSlots(
  server: ChatdServer,
  user: string,
  channelId: string,
  count: number,
  timeoutMs = 10_000,
): Promise<HeldUploads> {
  const token = await server.token(user);
  const route = `${server.httpUrl}/v1/channels/${encodeURIComponent(channelId)}/attachments`;
  const bodies: Held[] = [];
  for (let i = 0; i < count; i++) bodies.push(startHeld(route, token, `held-${i}.txt`));
  const seen: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${route}?filename=probe.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: 'p',
    });
    const text = await res.text();
    seen.push(`${res.status} ${text}`);
    if (res.status === 429 && text.includes('uploads_in_flight') && bodies.every((b) => !b.answered())) break;
    if (Date.now() > deadline) {
      for (const b of bodies) b.end();
      throw new Error(`the server never held ${count} upload(s) of ${user}: probe answers ${JSON.stringify(seen)}`);
    }
    // a refused one starts again before the pause, so that it reaches the server before the next probe
    for (const [i, b] of bodies.entries()) {
      if (!b.answered()) continue;
      seen.push(`held-${i}: ${(await b.answer.then((r) => r.status).catch(String)).toString()}, started again`);
      bodies[i] = startHeld(route, token, `held-${i}.txt`);
    }
    await sleep(50);
  }
  return {
    release: async (i) => {
      const b = bodies[i];
      if (b === undefined) throw new Error(`no held upload ${i}`);
      b.push(new TextEncoder().encode('is done'));
      b.end();
      return b.answer;
    },
    endAll: () => {
      for (const b of bodies) b.end();
    },
  };
}
