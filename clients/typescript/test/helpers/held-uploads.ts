// Uploads that "another tab" of a user keeps in progress, their bodies held open, so a test
// can fill the server's max_uploads_in_flight_per_user for that user on purpose. Shared by
// the client's upload-queue test and the console's (compiled into both).
//
// Each held upload is a POST to the attachments route whose body is a stream the test ends
// when it chooses (a byte every 2 s meanwhile, so the server's idle bound does not end it). The server takes the slot when the request arrives; a fixed sleep cannot
// tell when that is on a loaded machine (the console test once saw all six of its uploads
// pass because the held one had not arrived yet), so `holdUploadSlots` returns only once a
// probe upload is refused 429 with reason `uploads_in_flight`: the server then holds them all.
import { sleep, type ChatdServer } from './server.js';

/** Uploads held open by {@link holdUploadSlots}. */
export interface HeldUploads {
  /** Sends the last bytes of upload `i` (0-based) and ends its body; resolves to its answer (201 expected). */
  release(i: number): Promise<Response>;
  /** Ends every held body still open (for `t.after`: a failed test leaves none open when the server stops). */
  endAll(): void;
}

/**
 * Starts `count` uploads by `user` to `channelId`, each with a first chunk sent and its body
 * left open, and waits until the server refuses a one-byte probe upload with 429 reason
 * `uploads_in_flight`; `count` must therefore equal the server's
 * `max_uploads_in_flight_per_user`. Probes the server accepted meanwhile (the held ones not
 * arrived yet) are stored as unclaimed attachments of a byte each.
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
  const bodies: { push: (b: Uint8Array) => void; end: () => void; answer: Promise<Response> }[] = [];
  for (let i = 0; i < count; i++) {
    let ctl: ReadableStreamDefaultController<Uint8Array> | undefined;
    let ended = false;
    // a byte every 2 s: the server ends an upload whose body is silent for
    // handshake_timeout_ms (10 s by default) with 408, which would free the slot
    const keepAlive = setInterval(() => {
      if (!ended) ctl?.enqueue(new TextEncoder().encode('.'));
    }, 2_000);
    keepAlive.unref();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        ctl = c;
      },
    });
    const answer = fetch(`${route}?filename=held-${i}.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body,
      duplex: 'half',
    } as RequestInit);
    // a failed test still ends the body before the server stops, and leaves nothing unhandled
    void answer.catch(() => undefined);
    const held = {
      push: (b: Uint8Array): void => {
        if (!ended) ctl?.enqueue(b);
      },
      end: (): void => {
        if (ended) return;
        ended = true;
        clearInterval(keepAlive);
        ctl?.close();
      },
      answer,
    };
    held.push(new TextEncoder().encode(`held upload ${i} `));
    bodies.push(held);
  }
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
    if (res.status === 429 && text.includes('uploads_in_flight')) break;
    if (Date.now() > deadline) {
      for (const b of bodies) b.end();
      throw new Error(`the server never held ${count} upload(s) of ${user}: probe answers ${JSON.stringify(seen)}`);
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
