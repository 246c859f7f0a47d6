// Attachments through the SDK against the real chatd (protocol §15), on SQLite and on
// PostgreSQL (CHATD_TEST_DATABASE_URL), with the server's file store: alice uploads a PNG
// and a text file (progress, width/height, sha256), sends both in one message with an empty
// body; bob's store shows the message with both, in order, with signed URLs that work
// without a token (the bytes, the image's JPEG thumbnail, nosniff) and alice's own message
// gets signed URLs too; refreshUrls reads them anew; download reads the bytes with the token; the refusals arrive as
// typed errors (a type not allowed, over max_attachment_bytes, a PNG that is not one, a
// pixel bomb, a bad filename, someone else's upload on a send); deleting the message
// leaves it with no attachments and its URLs answer 404. sendFiles does it in one call.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ChatdError, type ChatClient, type Message, type UploadProgress } from '../../src/index.js';
import { ChatdServer, storeKinds, waitFor } from '../helpers/server.js';
import { makeClient } from '../helpers/clients.js';
import { png, pngBomb } from '../helpers/png.js';

/** The server's upload limit in these tests (bytes). */
const MAX_BYTES = 200_000;

async function rejectsWith(p: Promise<unknown>, code: string, field?: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ChatdError, `a ChatdError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (field !== undefined) assert.equal(e.field, field, e.message);
    return true;
  });
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

for (const store of storeKinds()) {
  describe(`attachments through the SDK (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const track = (c: ChatClient): ChatClient => {
      clients.push(c);
      return c;
    };
    before(async () => {
      server = await ChatdServer.start({ store, env: { CHATD_MAX_ATTACHMENT_BYTES: String(MAX_BYTES) } });
      for (const id of ['at-room', 'at-other']) {
        const r = await server.admin('POST', '/v1/channels', { channelId: id, members: ['alice', 'bob'] });
        assert.equal(r.status, 201, JSON.stringify(r.json));
      }
    });
    after(async () => {
      for (const c of clients) c.close();
      await server.dispose();
    });

    /** The message `messageId` in `c`'s store of `channelId`, once it satisfies `ok`. */
    async function shown(c: ChatClient, channelId: string, messageId: string, ok: (m: Message) => boolean): Promise<Message> {
      const s = c.channel(channelId);
      let found: Message | undefined;
      await waitFor(
        () => {
          found = s.getSnapshot().messages.find((m) => m.messageId === messageId);
          return found !== undefined && ok(found);
        },
        () => `message ${messageId} in ${channelId}: ${JSON.stringify(found)}`,
      );
      assert.ok(found !== undefined);
      return found;
    }

    test('upload an image and a file, send both with an empty body: bob sees them in order with signed URLs that work without a token; alice’s own message gets them too', async () => {
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      bob.channel('at-room');
      alice.channel('at-room');
      const image = png(400, 200);
      const progress: UploadProgress[] = [];
      const up1 = await alice.attachments.upload('at-room', new Blob([image], { type: 'image/png' }), { filename: 'gradient.png', onProgress: (p) => progress.push(p) });
      assert.deepEqual(
        [up1.channelId, up1.contentType, up1.size, up1.sha256, up1.filename, up1.width, up1.height],
        ['at-room', 'image/png', image.length, sha256(image), 'gradient.png', 400, 200],
      );
      assert.ok(up1.createdAt > 1_600_000_000_000);
      assert.deepEqual(progress.at(-1), { loaded: image.length, total: image.length });
      const text = new TextEncoder().encode('the plan, in words');
      const up2 = await alice.attachments.upload('at-room', text, { contentType: 'text/plain; charset=utf-8', filename: 'plan 1.txt' });
      assert.deepEqual([up2.contentType, up2.size, up2.filename, up2.width], ['text/plain', text.length, 'plan 1.txt', undefined]);

      const sent = await alice.send('at-room', '', { attachments: [up1, up2] });
      const atBob = await shown(bob, 'at-room', sent.messageId, (m) => m.attachments.length === 2);
      assert.equal(atBob.body, '');
      const [a1, a2] = atBob.attachments;
      assert.ok(a1 !== undefined && a2 !== undefined);
      assert.deepEqual(
        [a1.attachmentId, a1.contentType, a1.size, a1.filename, a1.width, a1.height, a1.thumbnailUrl !== undefined],
        [up1.attachmentId, 'image/png', image.length, 'gradient.png', 400, 200, true],
      );
      assert.deepEqual([a2.attachmentId, a2.contentType, a2.size, a2.filename, a2.thumbnailUrl], [up2.attachmentId, 'text/plain', text.length, 'plan 1.txt', undefined]);
      assert.ok((a1.urlExpiresAt ?? 0) > Date.now() + 50 * 60_000, 'signed for about an hour');

      // the signed URLs work without a token: the bytes, the thumbnail
      const bytes = await fetch(bob.attachments.url(a1) ?? '');
      assert.equal(bytes.status, 200);
      assert.equal(bytes.headers.get('content-type'), 'image/png');
      assert.equal(bytes.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(sha256(new Uint8Array(await bytes.arrayBuffer())), sha256(image));
      const thumb = await fetch(bob.attachments.url(a1, { thumbnail: true }) ?? '');
      assert.equal(thumb.status, 200);
      assert.match(thumb.headers.get('content-type') ?? '', /^image\/(jpeg|webp)$/);
      assert.ok((await thumb.arrayBuffer()).byteLength > 0);
      const file = await fetch(bob.attachments.url(a2) ?? '');
      assert.equal(await file.text(), 'the plan, in words');
      assert.match(file.headers.get('content-disposition') ?? '', /^attachment/);
      // an altered signature: 404, as an unknown id
      const altered = (bob.attachments.url(a2) ?? '').replace(/sig=[0-9a-f]/, (s) => (s.endsWith('0') ? 'sig=1' : 'sig=0'));
      assert.equal((await fetch(altered)).status, 404);

      // alice's own message: made from the ACK, then read once for its signed URLs
      const mine = await shown(alice, 'at-room', sent.messageId, (m) => m.attachments.length === 2 && m.attachments.every((a) => a.urlExpiresAt !== undefined));
      assert.deepEqual(
        mine.attachments.map((a) => a.attachmentId),
        [up1.attachmentId, up2.attachmentId],
      );
      assert.equal((await fetch(alice.attachments.url(mine.attachments[1] ?? a2) ?? '')).status, 200);

      // refreshUrls: the entry read again, its URLs signed anew (and working)
      const again = await bob.attachments.refreshUrls(atBob);
      assert.deepEqual(
        again.map((a) => a.attachmentId),
        [up1.attachmentId, up2.attachmentId],
      );
      assert.ok(again.every((a) => a.urlExpiresAt !== undefined));
      assert.equal(await (await fetch(bob.attachments.url(again[1] ?? a2) ?? '')).text(), 'the plan, in words');

      // download with the token
      const blob = await bob.attachments.download(up2.attachmentId);
      assert.equal(await blob.text(), 'the plan, in words');
      const tb = await bob.attachments.download(up1.attachmentId, { thumbnail: true });
      assert.ok(tb.size > 0);
      await rejectsWith(bob.attachments.download(up2.attachmentId, { thumbnail: true }), 'not_found');
    });

    test('refusals are typed: a type not allowed, over max_attachment_bytes, a PNG that is not one, a pixel bomb, a bad filename, a non-member', async () => {
      const alice = track(await makeClient(server, 'alice'));
      const carol = track(await makeClient(server, 'carol'));
      await Promise.all([alice.whenOpen(), carol.whenOpen()]);
      const up = (data: Uint8Array, contentType: string, filename?: string): Promise<unknown> =>
        alice.attachments.upload('at-room', data, { contentType, ...(filename !== undefined ? { filename } : {}) });
      await rejectsWith(up(new TextEncoder().encode('<svg/>'), 'image/svg+xml'), 'unsupported_media_type');
      await rejectsWith(up(new TextEncoder().encode('<p>'), 'text/html'), 'unsupported_media_type');
      await rejectsWith(up(new Uint8Array(MAX_BYTES + 1), 'application/pdf'), 'body_too_large');
      await rejectsWith(up(new TextEncoder().encode('not a png'), 'image/png'), 'invalid_field', 'body');
      await rejectsWith(up(pngBomb(), 'image/png'), 'invalid_field', 'body');
      await rejectsWith(up(new TextEncoder().encode('x'), 'text/plain', 'a/b.txt'), 'invalid_field', 'filename');
      await rejectsWith(carol.attachments.upload('at-room', new Blob(['x'], { type: 'text/plain' })), 'forbidden');
      // exactly the limit is taken
      const atLimit = await alice.attachments.upload('at-room', new Uint8Array(MAX_BYTES), { contentType: 'application/pdf' });
      assert.equal(atLimit.size, MAX_BYTES);
    });

    test('a send naming someone else’s upload, another channel’s, or one already sent fails with invalid_field (attachments); the same key sends once', async () => {
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      const hers = await alice.attachments.upload('at-room', new Blob(['hers'], { type: 'text/plain' }));
      await rejectsWith(bob.send('at-room', 'mine now', { attachments: [hers] }), 'invalid_field', 'attachments');
      await rejectsWith(alice.send('at-other', 'wrong room', { attachments: [hers] }), 'invalid_field', 'attachments');
      const key = crypto.randomUUID();
      const first = await alice.send('at-room', 'once', { attachments: [hers], clientMsgId: key });
      assert.equal(first.duplicate, false);
      const again = await alice.send('at-room', 'once', { attachments: [hers], clientMsgId: key });
      assert.deepEqual([again.duplicate, again.messageId], [true, first.messageId]);
      await rejectsWith(alice.send('at-room', 'twice', { attachments: [hers.attachmentId] }), 'invalid_field', 'attachments');
      const history = await server.history('at-room');
      assert.equal(history.filter((m) => m.body === 'once').length, 1);
    });

    test('sendFiles uploads and sends in one call; deleting the message leaves it with no attachments and its URLs answer 404', async () => {
      const alice = track(await makeClient(server, 'alice'));
      const bob = track(await makeClient(server, 'bob'));
      await Promise.all([alice.whenOpen(), bob.whenOpen()]);
      bob.channel('at-other');
      const indexes = new Set<number>();
      const sent = await alice.attachments.sendFiles(
        'at-other',
        'two files',
        [
          { data: new Blob([png(32, 32)], { type: 'image/png' }), filename: 'small.png' },
          { data: new Blob(['zip?'], { type: 'application/octet-stream' }), filename: 'data.bin' },
        ],
        { onProgress: (p) => indexes.add(p.index) },
      );
      assert.deepEqual([...indexes].sort(), [0, 1]);
      const m = await shown(bob, 'at-other', sent.messageId, (x) => x.attachments.length === 2);
      assert.deepEqual(
        m.attachments.map((a) => [a.filename, a.contentType]),
        [
          ['small.png', 'image/png'],
          ['data.bin', 'application/octet-stream'],
        ],
      );
      const [img] = m.attachments;
      assert.ok(img !== undefined);
      const urls = [bob.attachments.url(img) ?? '', bob.attachments.url(img, { thumbnail: true }) ?? ''];
      for (const u of urls) assert.equal((await fetch(u)).status, 200, u);
      await alice.deleteMessage('at-other', sent.messageId);
      const gone = await shown(bob, 'at-other', sent.messageId, (x) => x.deleted);
      assert.deepEqual(gone.attachments, []);
      for (const u of urls) assert.equal((await fetch(u)).status, 404, u);
      await rejectsWith(bob.attachments.download(img.attachmentId), 'not_found');
    });
  });
}
