// Attachments (protocol §15) without a server: the upload call (its URL, type, filename,
// body, progress, the refusals it becomes: body_too_large, unsupported_media_type,
// invalid_field naming body or filename, forbidden; a 401 tried once more with a fresh
// token; a broken connection, an abort, an answer of another shape), `attachments` on a
// send (the frame's ids, kept in the durable outbox record and sent again with the same key,
// shown on the outgoing message), the sender's own message made from its ACK and then given
// signed URLs by one read of the stored entry, messages received with attachments (and
// without them once deleted), `url` and `download`, and the pure wire checks.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isImageType,
  MemoryOutboxStorage,
  parseMessageAttachments,
  signedExpiry,
  type UploadProgress,
  type WebSocketConstructor,
  type WebSocketLike,
  type WireEntry,
} from '../../src/index.js';
import { attachmentFields } from '../../src/attachment-types.js';
import { client, entry, json, open, rejectsWith, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

const ID1 = '01a24a2e-8604-73f3-bc75-356519fcc4ad';
const ID2 = '01a24a2e-8640-718f-a78f-765e2d85d1dd';
const SIGNED1 = `/v1/attachments/${ID1}?exp=1796544493&sig=89498653dedf460`;
const THUMB1 = `/v1/attachments/${ID1}/thumbnail?exp=1796544493&sig=b224712a830e792e`;
const SIGNED2 = `/v1/attachments/${ID2}?exp=1796544493&sig=9148ff52bdad842`;

/** The upload route's 201 body for the PNG of the protocol docs' example. */
const uploadedPng = {
  attachmentId: ID1,
  channelId: 'room',
  contentType: 'image/png',
  size: 1949,
  sha256: 'f7203e1d40984b1f72ddc9eff44e41c0f0128480e1e5484f194f04b0b3e163c3',
  filename: 'cat.png',
  width: 640,
  height: 480,
  createdAt: 1796540892702,
};
const uploadedText = { attachmentId: ID2, channelId: 'room', contentType: 'text/plain', size: 5, sha256: '2cf2', filename: 'notes.txt', createdAt: 1796540892703 };

/** The attachments of the stored entry, as the server's reads give them. */
const carried = [
  { attachmentId: ID1, contentType: 'image/png', filename: 'cat.png', size: 1949, width: 640, height: 480, url: SIGNED1, thumbnailUrl: THUMB1 },
  { attachmentId: ID2, contentType: 'text/plain', filename: 'notes.txt', size: 5, url: SIGNED2 },
];

interface Posted {
  url: URL;
  method: string;
  auth: string | undefined;
  contentType: string | undefined;
  bytes: Uint8Array | undefined;
}

/** Replaces fetch: records each request with its body's bytes; `answer` gives the response. */
function recordFetch(answer: (p: Posted, n: number) => Response | Promise<Response>, fallback?: typeof fetch): Posted[] {
  const seen: Posted[] = [];
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url);
    const headers = new Headers(init?.headers);
    const b = init?.body;
    const bytes = b instanceof Blob ? new Uint8Array(await b.arrayBuffer()) : undefined;
    const p: Posted = { url, method: init?.method ?? 'GET', auth: headers.get('authorization') ?? undefined, contentType: headers.get('content-type') ?? undefined, bytes };
    if (fallback !== undefined && !url.pathname.includes('/attachments') && !url.pathname.endsWith('/messages')) return fallback(input, init);
    seen.push(p);
    if (init?.signal?.aborted === true) throw new DOMException('aborted', 'AbortError');
    return answer(p, seen.length);
  };
  return seen;
}

// ---------------------------------------------------------------- upload

test('upload: the raw bytes to POST /v1/channels/{channelId}/attachments with the type, the filename in the query, the token; progress; the stored upload typed', async () => {
  const seen = recordFetch(() => json(201, uploadedPng));
  const c = client();
  const progress: UploadProgress[] = [];
  const file = new File([new Uint8Array([137, 80, 78, 71, 1, 2, 3])], 'cat & dog.png', { type: 'image/png' });
  const up = await c.attachments.upload('room/1', file, { onProgress: (p) => progress.push(p) });
  assert.equal(seen.length, 1);
  const [p] = seen;
  assert.equal(p?.method, 'POST');
  assert.equal(p?.url.origin + (p?.url.pathname ?? ''), 'http://chat.test:8080/v1/channels/room%2F1/attachments');
  assert.equal(p?.url.searchParams.get('filename'), 'cat & dog.png', 'a File’s name, encoded');
  assert.equal(p?.contentType, 'image/png');
  assert.equal(p?.auth, 'Bearer tok');
  assert.deepEqual([...(p?.bytes ?? [])], [137, 80, 78, 71, 1, 2, 3]);
  assert.deepEqual(progress, [
    { loaded: 0, total: 7 },
    { loaded: 7, total: 7 },
  ]);
  assert.deepEqual(up, uploadedPng);
  assert.ok(Object.isFrozen(up));
});

test('upload: raw bytes default to application/octet-stream and no filename; the options name both', async () => {
  const seen = recordFetch(() => json(201, { ...uploadedText, contentType: 'application/octet-stream', filename: undefined }));
  const c = client();
  const up = await c.attachments.upload('room', new Uint8Array([1, 2]));
  assert.equal(seen[0]?.contentType, 'application/octet-stream');
  assert.equal(seen[0]?.url.search, '');
  assert.equal(up.filename, undefined);
  await c.attachments.upload('room', new TextEncoder().encode('hello').buffer, { contentType: 'text/plain', filename: 'notes.txt' });
  assert.equal(seen[1]?.contentType, 'text/plain');
  assert.equal(seen[1]?.url.searchParams.get('filename'), 'notes.txt');
  assert.equal(new TextDecoder().decode(seen[1]?.bytes), 'hello');
});

test('upload: refusals become their codes (429 rate_limited past max_unclaimed_upload_bytes too), invalid_field with the body’s field; nothing reports full progress', async () => {
  const answers = [
    json(413, { error: { code: 'body_too_large', message: 'attachment over max_attachment_bytes (4000 bytes)' } }),
    json(415, { error: { code: 'unsupported_media_type', message: 'Content-Type must be one of attachment_types' } }),
    json(400, { error: { code: 'invalid_field', field: 'body', message: 'body: the image has 100000000 pixels, the limit is 50000000' } }),
    json(400, { error: { code: 'invalid_field', field: 'filename', message: 'filename: no / or control characters' } }),
    json(403, { error: { code: 'forbidden', message: 'not a member' } }),
    json(429, {
      error: {
        code: 'rate_limited',
        message: 'over max_unclaimed_upload_bytes (268435456 bytes): this user’s uploads not yet part of a message hold 251658240 bytes and this one is 26214400; send them or wait for them to expire',
      },
    }),
    json(503, { error: { code: 'unavailable', message: 'attachment storage unavailable; retry' } }),
  ];
  recordFetch((_p, n) => answers[n - 1] ?? json(500, {}));
  const c = client();
  const progress: UploadProgress[] = [];
  const up = (): Promise<unknown> => c.attachments.upload('room', new Blob(['x'], { type: 'image/png' }), { onProgress: (p) => progress.push(p) });
  await rejectsWith(up(), 'body_too_large');
  await rejectsWith(up(), 'unsupported_media_type');
  await rejectsWith(up(), 'invalid_field', (e) => {
    assert.equal(e.field, 'body');
  });
  await rejectsWith(up(), 'invalid_field', (e) => {
    assert.equal(e.field, 'filename');
  });
  await rejectsWith(up(), 'forbidden');
  await rejectsWith(up(), 'rate_limited', (e) => {
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, undefined);
    assert.match(e.message, /max_unclaimed_upload_bytes/);
  });
  await rejectsWith(up(), 'unavailable', (e) => {
    assert.equal(e.retryable, true);
  });
  assert.ok(progress.every((p) => p.loaded === 0), JSON.stringify(progress));
});

test('upload: a 401 is tried once more with the token function’s fresh token; a broken connection is unavailable; an abort is aborted; another shape is internal', async () => {
  let n = 0;
  const c = client({ token: () => `t${++n}`, WebSocket: SilentSocket as unknown as WebSocketConstructor, onlineEvents: null });
  try {
    await c.start();
    // the connection attempt took t1 (kept once its promise settled)
    await tick(20);
    const seen = recordFetch((p) => (p.auth === 'Bearer t1' ? json(401, { error: { code: 'unauthorized', message: 'expired' } }) : json(201, uploadedText)));
    const up = await c.attachments.upload('room', new Blob(['hello'], { type: 'text/plain' }));
    assert.deepEqual(
      seen.map((p) => p.auth),
      ['Bearer t1', 'Bearer t2'],
    );
    assert.equal(up.attachmentId, ID2);
    assert.deepEqual([...(seen[1]?.bytes ?? [])], [...new TextEncoder().encode('hello')], 'the same bytes again');
  } finally {
    c.close();
  }

  globalThis.fetch = () => Promise.reject(new TypeError('fetch failed'));
  await rejectsWith(client().attachments.upload('room', new Blob(['x'])), 'unavailable');

  recordFetch(() => json(201, uploadedText));
  const ac = new AbortController();
  ac.abort();
  await rejectsWith(client().attachments.upload('room', new Blob(['x']), { signal: ac.signal }), 'aborted');

  recordFetch(() => json(201, { attachmentId: 7 }));
  await rejectsWith(client().attachments.upload('room', new Blob(['x'])), 'internal');
});

test('sendFiles: uploads each file in order with its index in progress, then sends them in one message', async () => {
  const h = await open([entry('room', { lastSeq: 0 })]);
  try {
    const fallback = globalThis.fetch;
    const answers = [uploadedPng, uploadedText];
    recordFetch((_p, n) => json(201, answers[n - 1]), fallback);
    const indexes: number[] = [];
    const p = h.client.attachments.sendFiles(
      'room',
      '',
      [{ data: new Blob(['png'], { type: 'image/png' }), filename: 'cat.png' }, { data: new Blob(['hello'], { type: 'text/plain' }), filename: 'notes.txt' }],
      { clientMsgId: 'k9', onProgress: (x) => indexes.push(x.index) },
    );
    await tick(10);
    assert.deepEqual(indexes, [0, 0, 1, 1]);
    const frames = h.ws().sent.filter((f) => f.type === 'MSG_SEND');
    assert.deepEqual(frames, [{ type: 'MSG_SEND', channelId: 'room', clientMsgId: 'k9', body: '', attachments: [ID1, ID2] }]);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k9', messageId: 'm1', channelId: 'room', seq: 1, ts: 5, duplicate: false });
    assert.equal((await p).seq, 1);
  } finally {
    h.client.close();
  }
});

// ---------------------------------------------------------------- sending

test('send with attachments: the frame carries the ids in order, the outbox record keeps the uploads, a reload sends the same frame with the same key', async () => {
  const storage = new MemoryOutboxStorage();
  const h1 = await open([entry('room')], undefined, { storage });
  void h1.client.send('room', 'the plan', { clientMsgId: 'kept', attachments: [uploadedPng, ID2] }).catch(() => undefined);
  await tick(5);
  const frame = { type: 'MSG_SEND', channelId: 'room', clientMsgId: 'kept', body: 'the plan', attachments: [ID1, ID2] };
  assert.deepEqual(h1.ws().sent.filter((f) => f.type === 'MSG_SEND'), [frame]);
  const [record] = await storage.load('alice');
  assert.deepEqual(record?.op, {
    type: 'MSG_SEND',
    channelId: 'room',
    body: 'the plan',
    attachments: [{ attachmentId: ID1, contentType: 'image/png', size: 1949, filename: 'cat.png', width: 640, height: 480 }, { attachmentId: ID2 }],
  });
  const outgoing = h1.client.channel('room').getSnapshot().outgoing;
  assert.deepEqual(
    outgoing.map((o) => o.attachments?.map((a) => a.attachmentId)),
    [[ID1, ID2]],
  );
  h1.client.close();
  const h2 = await open([entry('room')], undefined, { storage });
  try {
    await tick(10);
    assert.deepEqual(h2.ws().sent.filter((f) => f.type === 'MSG_SEND'), [frame]);
  } finally {
    h2.client.close();
  }
});

test('send without attachments (or an empty list) sends no attachments field', async () => {
  const h = await open([entry('room')]);
  try {
    void h.client.send('room', 'a', { clientMsgId: 'a' });
    void h.client.send('room', 'b', { clientMsgId: 'b', attachments: [] });
    await tick(5);
    assert.deepEqual(
      h.ws().sent.filter((f) => f.type === 'MSG_SEND').map((f) => 'attachments' in f),
      [false, false],
    );
  } finally {
    h.client.close();
  }
});

test('the sender’s own message: from the ACK with the uploads it was given (unsigned paths), then the stored entry’s signed URLs from one read', async () => {
  const h = await open([entry('room', { lastSeq: 0 })]);
  try {
    const store = h.client.channel('room');
    await tick(5);
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [], hasMore: false, lastSeq: 0 });
    await tick(5);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const fallback = globalThis.fetch;
    const reads = recordFetch(async (p) => {
      await gate;
      assert.equal(p.url.pathname, '/v1/channels/room/messages');
      return json(200, {
        messages: [{ type: 'MSG_RECV', messageId: 'm1', channelId: 'room', senderId: 'alice', seq: 1, ts: 5, body: 'look', clientMsgId: 'k1', kind: 'message', reactions: [], attachments: carried }],
        hasMore: false,
        lastSeq: 1,
      });
    }, fallback);
    const p = h.client.send('room', 'look', { clientMsgId: 'k1', attachments: [uploadedPng, uploadedText] });
    await tick(5);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'k1', messageId: 'm1', channelId: 'room', seq: 1, ts: 5, duplicate: false });
    await p;
    const fromAck = store.getSnapshot().messages[0]?.attachments;
    assert.deepEqual(fromAck, [
      { attachmentId: ID1, contentType: 'image/png', size: 1949, filename: 'cat.png', width: 640, height: 480, url: `/v1/attachments/${ID1}` },
      { attachmentId: ID2, contentType: 'text/plain', size: 5, filename: 'notes.txt', url: `/v1/attachments/${ID2}` },
    ]);
    release();
    await tick(10);
    assert.equal(reads.length, 1);
    assert.equal(reads[0]?.url.search, '?afterSeq=0&limit=1');
    assert.equal(reads[0]?.auth, 'Bearer tok');
    const signed = store.getSnapshot().messages[0]?.attachments;
    assert.deepEqual(signed, [
      { ...carried[0], urlExpiresAt: 1796544493000 },
      { ...carried[1], urlExpiresAt: 1796544493000 },
    ]);
    assert.equal(h.client.attachments.url(signed?.[0] ?? carried[0] as never), `http://chat.test${SIGNED1}`);
    assert.equal(h.client.attachments.url(signed?.[0] ?? carried[0] as never, { thumbnail: true }), `http://chat.test${THUMB1}`);
    assert.equal(h.client.attachments.url(signed?.[1] ?? carried[1] as never, { thumbnail: true }), undefined);
  } finally {
    h.client.close();
  }
});

test('received messages carry their attachments; a deleted message has none', async () => {
  const h = await open([entry('room', { lastSeq: 0 })]);
  try {
    const store = h.client.channel('room');
    await tick(5);
    const m1: WireEntry = { type: 'MSG_RECV', messageId: 'm1', channelId: 'room', senderId: 'bob', seq: 1, ts: 1, body: '', clientMsgId: 'b1', kind: 'message', reactions: [], attachments: carried };
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [m1], hasMore: false, lastSeq: 1 });
    await tick(5);
    h.ws().receive({ type: 'MSG_RECV', messageId: 'm2', channelId: 'room', senderId: 'bob', seq: 2, ts: 2, body: 'plain', clientMsgId: 'b2', kind: 'message' });
    await tick(5);
    const [first, second] = store.getSnapshot().messages;
    assert.deepEqual(
      first?.attachments.map((a) => [a.attachmentId, a.contentType, a.filename, a.thumbnailUrl !== undefined]),
      [
        [ID1, 'image/png', 'cat.png', true],
        [ID2, 'text/plain', 'notes.txt', false],
      ],
    );
    assert.deepEqual(second?.attachments, []);
    h.ws().receive({ type: 'MSG_RECV', messageId: 'd3', channelId: 'room', senderId: 'bob', seq: 3, ts: 3, body: '', clientMsgId: 'b3', kind: 'delete', targetId: 'm1' });
    await tick(5);
    assert.deepEqual(store.getSnapshot().messages[0]?.attachments, []);
    assert.equal(store.getSnapshot().messages[0]?.deleted, true);
  } finally {
    h.client.close();
  }
});

// ---------------------------------------------------------------- reading

test('refreshUrls: one read of the stored entry gives fresh signed URLs, put into the snapshot; [] for a message deleted since', async () => {
  const h = await open([entry('room', { lastSeq: 0 })]);
  try {
    const store = h.client.channel('room');
    await tick(5);
    const old = carried.map((a) => ({ ...a, url: a.url.replace('exp=1796544493', 'exp=1000') }));
    const m2: WireEntry = { type: 'MSG_RECV', messageId: 'm2', channelId: 'room', senderId: 'bob', seq: 2, ts: 2, body: 'files', clientMsgId: 'b2', kind: 'message', reactions: [], attachments: old };
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [m2], hasMore: false, lastSeq: 2 });
    await tick(5);
    const held = store.getSnapshot().messages[0];
    assert.ok(held !== undefined);
    assert.equal(held.attachments[0]?.urlExpiresAt, 1_000_000);
    const fallback = globalThis.fetch;
    let deleted = false;
    const reads = recordFetch(
      () =>
        json(200, {
          messages: [deleted ? { ...m2, body: '', deleted: true, attachments: undefined } : { ...m2, attachments: carried }],
          hasMore: false,
          lastSeq: 2,
        }),
      fallback,
    );
    const fresh = await h.client.attachments.refreshUrls(held);
    assert.equal(`${reads[0]?.url.pathname ?? ''}${reads[0]?.url.search ?? ''}`, '/v1/channels/room/messages?afterSeq=1&limit=1');
    assert.deepEqual(
      fresh.map((a) => [a.url, a.urlExpiresAt]),
      [
        [SIGNED1, 1796544493000],
        [SIGNED2, 1796544493000],
      ],
    );
    assert.deepEqual(store.getSnapshot().messages[0]?.attachments, fresh);
    deleted = true;
    assert.deepEqual(await h.client.attachments.refreshUrls(held), []);
  } finally {
    h.client.close();
  }
});

test('a thread’s send carries attachments with its threadId', async () => {
  const h = await open([entry('room', { lastSeq: 1 })]);
  try {
    void h.client.thread('room', 'root1').send('in the thread', { clientMsgId: 't1', attachments: [uploadedText] });
    await tick(5);
    assert.deepEqual(
      h.ws().sent.filter((f) => f.type === 'MSG_SEND'),
      [{ type: 'MSG_SEND', channelId: 'room', clientMsgId: 't1', body: 'in the thread', threadId: 'root1', attachments: [ID2] }],
    );
  } finally {
    h.client.close();
  }
});

test('download: the bytes with the token (and the thumbnail route); an unknown or unreadable attachment is not_found', async () => {
  const seen = recordFetch((p) =>
    p.url.pathname === `/v1/attachments/${ID2}` ? new Response('hello', { status: 200, headers: { 'content-type': 'text/plain' } }) : p.url.pathname.endsWith('/thumbnail') ? new Response(new Uint8Array([255, 216]), { status: 200, headers: { 'content-type': 'image/jpeg' } }) : json(404, { error: { code: 'not_found', message: 'no such attachment' } }),
  );
  const c = client();
  const blob = await c.attachments.download(ID2);
  assert.equal(await blob.text(), 'hello');
  assert.equal(blob.type, 'text/plain');
  assert.equal(seen[0]?.auth, 'Bearer tok');
  const thumb = await c.attachments.download(ID1, { thumbnail: true });
  assert.equal(seen[1]?.url.pathname, `/v1/attachments/${ID1}/thumbnail`);
  assert.deepEqual([...new Uint8Array(await thumb.arrayBuffer())], [255, 216]);
  await rejectsWith(c.attachments.download('nope'), 'not_found');
});

test('url: a path joined to the HTTP base (httpUrl with a prefix too); an absolute URL is kept', () => {
  const c = client({ httpUrl: 'https://chat.example.com/chat/' });
  const [a] = parseMessageAttachments(carried);
  assert.ok(a !== undefined);
  assert.equal(c.attachments.url(a), `https://chat.example.com/chat${SIGNED1}`);
  const [abs] = parseMessageAttachments([{ ...carried[1], url: 'https://cdn.example.com/x' }]);
  assert.ok(abs !== undefined);
  assert.equal(c.attachments.url(abs), 'https://cdn.example.com/x');
});

// ---------------------------------------------------------------- pure

test('parseMessageAttachments: the wire shape checked and frozen, urlExpiresAt from exp; other shapes left out', () => {
  const list = parseMessageAttachments([...carried, { attachmentId: 'x' }, null, 'y', { ...carried[1], size: '5' }]);
  assert.equal(list.length, 2);
  assert.ok(Object.isFrozen(list) && Object.isFrozen(list[0]));
  assert.equal(list[0]?.urlExpiresAt, 1796544493000);
  assert.deepEqual(parseMessageAttachments(undefined), []);
  assert.deepEqual(parseMessageAttachments({}), []);
});

test('signedExpiry: exp in ms when signed; nothing for an unsigned path or a bad exp', () => {
  assert.equal(signedExpiry(SIGNED1), 1796544493000);
  assert.equal(signedExpiry(`/v1/attachments/${ID1}`), undefined);
  assert.equal(signedExpiry(`/v1/attachments/${ID1}?exp=12`), undefined, 'no sig');
  assert.equal(signedExpiry(`/v1/attachments/${ID1}?exp=-1&sig=ab`), undefined);
});

test('isImageType: the four image types the server makes thumbnails of, any case', () => {
  for (const t of ['image/png', 'IMAGE/JPEG', 'image/gif', 'image/webp']) assert.equal(isImageType(t), true, t);
  for (const t of ['image/svg+xml', 'application/pdf', 'text/plain']) assert.equal(isImageType(t), false, t);
});

test('attachmentFields: the ids in order (repeats kept for the server to refuse), nothing for none', () => {
  assert.deepEqual(attachmentFields({ attachments: [{ attachmentId: 'a' }, { attachmentId: 'b' }, { attachmentId: 'a' }] }), { attachments: ['a', 'b', 'a'] });
  assert.deepEqual(attachmentFields({ attachments: [] }), {});
  assert.deepEqual(attachmentFields({}), {});
});

/** A WebSocket that never opens: the client keeps its connection attempt's token. */
class SilentSocket implements WebSocketLike {
  readonly readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  send(): void {
    /* never open */
  }
  close(): void {
    /* never open */
  }
}
