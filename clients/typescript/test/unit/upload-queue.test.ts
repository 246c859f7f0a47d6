// The client's uploads in progress without a server: at most `maxUploadsInFlight` (default
// 3) POSTs at once, the others waiting in the order called, with no progress until their
// turn; an upload aborted while it waits rejects `aborted` and sends nothing; an upload the
// server refuses 429 `rate_limited` with `reason` `uploads_in_flight` (the user's other
// tabs hold the server's slots) is tried again after a backoff, a bounded number of times,
// an abort ending the wait; a 429 without that reason (max_unclaimed_upload_bytes) fails at
// once. The slots themselves (UploadSlots) in order, with aborts.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MAX_UPLOADS_IN_FLIGHT, UPLOAD_IN_FLIGHT_RETRIES, type UploadProgress } from '../../src/index.js';
import { UploadSlots } from '../../src/upload-queue.js';
import { client, json, rejectsWith, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

/** The 201 body of an upload named `name`. */
const stored = (name: string): Record<string, unknown> => ({
  attachmentId: '01a24a2e-8604-73f3-bc75-356519fcc4ad',
  channelId: 'room',
  contentType: 'text/plain',
  size: 1,
  sha256: '00',
  filename: name,
  createdAt: 1796540892702,
});

/** 429 uploads_in_flight, as the server words it. */
const inFlight429 = (): Response =>
  json(429, {
    error: {
      code: 'rate_limited',
      message: 'over max_uploads_in_flight_per_user (4): this user has that many uploads in progress; retry when one ends',
      reason: 'uploads_in_flight',
    },
  });

/** 429 past max_unclaimed_upload_bytes (no reason). */
const unclaimed429 = (): Response =>
  json(429, {
    error: {
      code: 'rate_limited',
      message: 'over max_unclaimed_upload_bytes (1000 bytes): this user’s uploads not yet part of a message hold 900 bytes and this one is 200; send them or wait for them to expire',
    },
  });

/** One POST the gated fetch holds: its file name, and how to answer it. */
interface Held {
  readonly name: string;
  readonly answer: (r: Response) => void;
}

/**
 * Replaces fetch with one that holds every request until the test answers it: `held` lists
 * those not answered yet (in arrival order), `started` the file names of all, `peak` the
 * most held at once. An abort of a held request rejects it as fetch does.
 */
function gatedFetch(): { held: Held[]; started: string[]; peak: () => number } {
  const held: Held[] = [];
  const started: string[] = [];
  let peak = 0;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url);
    const name = url.searchParams.get('filename') ?? '';
    started.push(name);
    return new Promise<Response>((resolve, reject) => {
      const item: Held = {
        name,
        answer: (r) => {
          held.splice(held.indexOf(item), 1);
          resolve(r);
        },
      };
      held.push(item);
      peak = Math.max(peak, held.length);
      init?.signal?.addEventListener('abort', () => {
        if (held.includes(item)) held.splice(held.indexOf(item), 1);
        reject(new DOMException('aborted', 'AbortError'));
      });
    });
  };
  return { held, started, peak: () => peak };
}

const file = (name: string): Blob => new File(['x'], name, { type: 'text/plain' });

test('uploads: at most maxUploadsInFlight POSTs at once, the others start in the order called, with no progress before their turn', async () => {
  const g = gatedFetch();
  const c = client({ maxUploadsInFlight: 2 });
  const progress = new Map<string, UploadProgress[]>();
  const names = ['a', 'b', 'c', 'd', 'e'];
  const calls = names.map((n) => c.attachments.upload('room', file(n), { onProgress: (p) => progress.set(n, [...(progress.get(n) ?? []), p]) }));
  await tick(10);
  assert.deepEqual(g.started, ['a', 'b']);
  assert.deepEqual([...progress.keys()], ['a', 'b'], 'no progress for the files waiting');
  // answer the second first: the third starts, not a later one
  g.held.find((h) => h.name === 'b')?.answer(json(201, stored('b')));
  await tick(10);
  assert.deepEqual(g.started, ['a', 'b', 'c']);
  while (g.held.length > 0) {
    g.held[0]?.answer(json(201, stored(g.held[0].name)));
    await tick(10);
  }
  const done = await Promise.all(calls);
  assert.deepEqual(
    done.map((a) => a.filename),
    names,
  );
  assert.deepEqual(g.started, names, 'started in the order called');
  assert.equal(g.peak(), 2, 'never more than 2 at once');
  assert.deepEqual(progress.get('e'), [
    { loaded: 0, total: 1 },
    { loaded: 1, total: 1 },
  ]);
});

test('uploads: by default DEFAULT_MAX_UPLOADS_IN_FLIGHT (3) at once; a refused or failed upload gives its turn to the next', async () => {
  assert.equal(DEFAULT_MAX_UPLOADS_IN_FLIGHT, 3);
  const g = gatedFetch();
  const c = client();
  const calls = ['a', 'b', 'c', 'd', 'e'].map((n) => c.attachments.upload('room', file(n)));
  for (const p of calls) p.catch(() => undefined);
  await tick(10);
  assert.deepEqual(g.started, ['a', 'b', 'c']);
  g.held[0]?.answer(json(415, { error: { code: 'unsupported_media_type', message: 'no' } }));
  await tick(10);
  assert.deepEqual(g.started, ['a', 'b', 'c', 'd']);
  await rejectsWith(calls[0] as Promise<unknown>, 'unsupported_media_type');
  g.held[0]?.answer(json(503, {}));
  await tick(10);
  assert.deepEqual(g.started, ['a', 'b', 'c', 'd', 'e']);
  await rejectsWith(calls[1] as Promise<unknown>, 'unavailable');
  while (g.held.length > 0) {
    g.held[0]?.answer(json(201, stored(g.held[0].name)));
    await tick(10);
  }
  await Promise.all(calls.slice(2));
  assert.equal(g.peak(), 3);
});

test('uploads: one aborted while it waits its turn rejects aborted at once, sends nothing and reports no progress; the next takes its place', async () => {
  const g = gatedFetch();
  const c = client({ maxUploadsInFlight: 1 });
  const ac = new AbortController();
  const progress: UploadProgress[] = [];
  const a = c.attachments.upload('room', file('a'));
  const b = c.attachments.upload('room', file('b'), { signal: ac.signal, onProgress: (p) => progress.push(p) });
  const d = c.attachments.upload('room', file('d'));
  await tick(10);
  ac.abort();
  await rejectsWith(b, 'aborted');
  assert.deepEqual(g.started, ['a'], 'the aborted upload waited and was not sent');
  assert.deepEqual(progress, []);
  g.held[0]?.answer(json(201, stored('a')));
  await tick(10);
  assert.deepEqual(g.started, ['a', 'd']);
  g.held[0]?.answer(json(201, stored('d')));
  assert.equal((await a).filename, 'a');
  assert.equal((await d).filename, 'd');
  assert.equal(g.peak(), 1);
});

test('uploads: one waiting its turn when the client closes rejects closed and sends nothing', async () => {
  const g = gatedFetch();
  const c = client({ maxUploadsInFlight: 1 });
  const a = c.attachments.upload('room', file('a'));
  const b = c.attachments.upload('room', file('b'));
  b.catch(() => undefined);
  await tick(10);
  c.close();
  g.held[0]?.answer(json(201, stored('a')));
  assert.equal((await a).filename, 'a', 'the upload under way ends as it would');
  await rejectsWith(b, 'closed');
  assert.deepEqual(g.started, ['a']);
});

test('uploads: a 429 uploads_in_flight is tried again after a backoff, keeping its turn; progress starts again from 0', async () => {
  const answers = [inFlight429(), inFlight429(), json(201, stored('a'))];
  let posts = 0;
  const at: number[] = [];
  globalThis.fetch = (): Promise<Response> => {
    at.push(Date.now());
    return Promise.resolve(answers[posts++] ?? json(500, {}));
  };
  const c = client({ maxUploadsInFlight: 1, uploadRetryBackoff: { baseMs: 40, maxMs: 40, random: () => 0 } });
  const progress: UploadProgress[] = [];
  const a = c.attachments.upload('room', file('a'), { onProgress: (p) => progress.push(p) });
  const b = c.attachments.upload('room', file('b'));
  const up = await a;
  assert.equal(up.filename, 'a');
  assert.equal(posts, 3, 'two refusals, then stored');
  // equal jitter with random 0: half of 40 ms between tries
  assert.ok((at[1] ?? 0) - (at[0] ?? 0) >= 15 && (at[2] ?? 0) - (at[1] ?? 0) >= 15, JSON.stringify(at));
  assert.deepEqual(progress, [
    { loaded: 0, total: 1 },
    { loaded: 0, total: 1 },
    { loaded: 0, total: 1 },
    { loaded: 1, total: 1 },
  ]);
  await rejectsWith(b, 'unavailable');
  assert.equal(posts, 4, 'b waited for a, retries included');
});

test('uploads: a 429 uploads_in_flight is tried UPLOAD_IN_FLIGHT_RETRIES times, then rejects rate_limited with its reason', async () => {
  let posts = 0;
  globalThis.fetch = (): Promise<Response> => {
    posts++;
    return Promise.resolve(inFlight429());
  };
  const c = client({ uploadRetryBackoff: { baseMs: 1, maxMs: 2 } });
  await rejectsWith(c.attachments.upload('room', file('a')), 'rate_limited', (e) => {
    assert.equal(e.reason, 'uploads_in_flight');
  });
  assert.equal(posts, 1 + UPLOAD_IN_FLIGHT_RETRIES);
});

test('uploads: an abort while waiting to try again after a 429 uploads_in_flight rejects aborted and posts no more', async () => {
  let posts = 0;
  globalThis.fetch = (): Promise<Response> => {
    posts++;
    return Promise.resolve(inFlight429());
  };
  const c = client({ maxUploadsInFlight: 1, uploadRetryBackoff: { baseMs: 60_000, maxMs: 60_000 } });
  const ac = new AbortController();
  const a = c.attachments.upload('room', file('a'), { signal: ac.signal });
  await tick(20);
  assert.equal(posts, 1);
  const started = Date.now();
  ac.abort();
  await rejectsWith(a, 'aborted');
  assert.ok(Date.now() - started < 1000, 'at once, not after the backoff');
  // its turn was given back
  globalThis.fetch = (): Promise<Response> => Promise.resolve(json(201, stored('b')));
  assert.equal((await c.attachments.upload('room', file('b'))).filename, 'b');
  assert.equal(posts, 1);
});

test('uploads: a 429 without reason uploads_in_flight (max_unclaimed_upload_bytes) fails at once, not tried again', async () => {
  let posts = 0;
  globalThis.fetch = (): Promise<Response> => {
    posts++;
    return Promise.resolve(unclaimed429());
  };
  const c = client({ uploadRetryBackoff: { baseMs: 1, maxMs: 1 } });
  await rejectsWith(c.attachments.upload('room', file('a')), 'rate_limited', (e) => {
    assert.equal(e.reason, undefined);
    assert.match(e.message, /max_unclaimed_upload_bytes/);
  });
  await tick(20);
  assert.equal(posts, 1);
  // nor one with another reason
  globalThis.fetch = (): Promise<Response> => {
    posts++;
    return Promise.resolve(json(429, { error: { code: 'rate_limited', message: 'slow down', reason: 'something_else' } }));
  };
  await rejectsWith(c.attachments.upload('room', file('b')), 'rate_limited', (e) => {
    assert.equal(e.reason, 'something_else');
  });
  assert.equal(posts, 2);
});

test('uploads: an invalid maxUploadsInFlight (0, 1.5) is the default', async () => {
  for (const bad of [0, 1.5, -2]) {
    const g = gatedFetch();
    const c = client({ maxUploadsInFlight: bad });
    const calls = ['a', 'b', 'c', 'd'].map((n) => c.attachments.upload('room', file(n)));
    await tick(10);
    assert.deepEqual(g.started, ['a', 'b', 'c'], String(bad));
    while (g.held.length > 0) {
      g.held[0]?.answer(json(201, stored(g.held[0].name)));
      await tick(5);
    }
    await Promise.all(calls);
  }
});

test('UploadSlots: first come first served; a waiter aborted leaves the line; a release given twice counts once', async () => {
  const slots = new UploadSlots(2);
  const order: string[] = [];
  const r1 = await slots.acquire();
  const r2 = await slots.acquire();
  const ac = new AbortController();
  const w3 = slots.acquire().then((r) => (order.push('3'), r));
  const w4 = slots.acquire(ac.signal).then((r) => (order.push('4'), r));
  const w5 = slots.acquire().then((r) => (order.push('5'), r));
  assert.equal(slots.queued, 3);
  ac.abort();
  await rejectsWith(w4, 'aborted');
  assert.equal(slots.queued, 2);
  r1();
  r1();
  await tick();
  assert.deepEqual(order, ['3']);
  assert.equal(slots.inFlight, 2);
  r2();
  await tick();
  assert.deepEqual(order, ['3', '5']);
  (await w3)();
  (await w5)();
  assert.equal(slots.inFlight, 0);
  const pre = new AbortController();
  pre.abort();
  await rejectsWith(slots.acquire(pre.signal), 'aborted');
  assert.equal(slots.inFlight, 0);
});
