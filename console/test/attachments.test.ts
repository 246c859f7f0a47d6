// Browser tests of the console's attachments (protocol §15): Debian's Chromium driven by
// playwright-core, alice and bob in their own browser contexts, against the real chatd
// (max_attachment_bytes lowered to 100 KB). alice picks an image and a text file with 📎
// (each shown uploading, then ready), and one file the server refuses for its type and one
// for its size (each shown with why); she sends them with a line of text; bob sees the
// message with the image as a thumbnail that opens the full image in a lightbox, and the
// file as a download link with its name and size whose URL gives its bytes; alice's own
// message shows them too. A file dropped on the message list goes into the tray and is sent
// with an empty text; one pasted into the composer too (and one taken out of the tray with
// ✕ is not sent). With signed URLs that live 2 s, the lightbox and a download opened
// after they expired read the message again and use fresh ones.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page, Route } from 'playwright-core';
import { holdUploadSlots } from '../../clients/typescript/test/helpers/held-uploads.js';
import { png } from '../../clients/typescript/test/helpers/png.js';
import { Browsers, CHAT_VIEWPORT, ChatdServer, openChannel, sleep, until } from './harness.js';

const MAX_BYTES = 100_000;

describe('console attachments in a real browser (alice and bob)', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();
  let alice: Page;
  let bob: Page;
  const image = png(400, 300);
  const notes = 'meeting notes: bring the plan';

  function signIn(user: string): Promise<Page> {
    return browsers.signInAs(chatd, user, { viewport: CHAT_VIEWPORT });
  }

  before(async () => {
    chatd = await ChatdServer.start({ env: { CHATD_MAX_ATTACHMENT_BYTES: String(MAX_BYTES) } });
    await browsers.launch();
    const r = await chatd.admin('POST', '/v1/channels', { channelId: 'files', members: ['alice', 'bob'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    alice = await signIn('alice');
    bob = await signIn('bob');
    await openChannel(alice, 'files');
    await openChannel(bob, 'files');
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('files picked with 📎 upload with progress; refusals say why; sent with the text, bob sees a thumbnail that opens the full image and a download link with name and size', async () => {
    // hold the image's upload until its "uploading" state (with a progress bar) was seen
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    await alice.route(
      (url) => url.pathname === '/v1/channels/files/attachments' && url.searchParams.get('filename') === 'photo.png',
      async (route: Route) => {
        await held;
        await route.continue();
      },
    );
    await alice.locator('#attach-input').setInputFiles([
      { name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from(image) },
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(notes) },
      { name: 'page.html', mimeType: 'text/html', buffer: Buffer.from('<p>hi</p>') },
      { name: 'big.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(MAX_BYTES + 1, 97) },
    ]);
    const item = (name: string): ReturnType<Page['locator']> => alice.locator(`#tray li.tray-item[data-name="${name}"]`);
    await item('photo.png').locator('progress.tray-progress').waitFor();
    assert.equal(await item('photo.png').getAttribute('data-state'), 'uploading');
    assert.equal(await alice.locator('#send').isDisabled(), true, 'Send waits for the uploads');
    release();
    const settled = async (name: string, state: string): Promise<void> => {
      await until(async () => (await item(name).getAttribute('data-state')) === state, `${name} ${state}: ${(await alice.locator('#tray').textContent()) ?? ''}`);
    };
    await settled('photo.png', 'ready');
    await settled('notes.txt', 'ready');
    await settled('page.html', 'failed');
    await settled('big.pdf', 'failed');
    assert.equal(await item('page.html').locator('.tray-error').textContent(), 'page.html: this server does not take files of this type.');
    assert.equal(await item('big.pdf').locator('.tray-error').textContent(), 'big.pdf is too large for this server.');
    assert.equal(await item('notes.txt').locator('.att-size').textContent(), `${notes.length} B`);
    assert.equal(await alice.locator('#send').isDisabled(), false);

    await alice.locator('#composer').fill('here are the files');
    await alice.locator('#composer').press('Enter');
    await alice.locator('#tray').waitFor({ state: 'hidden' });

    // bob: the message with its thumbnail and its file link
    const msg = bob.locator('#messages li.msg', { hasText: 'here are the files' });
    await msg.waitFor();
    const thumb = msg.locator('button.att-image img');
    await thumb.waitFor();
    await until(async () => (await thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)), 'the thumbnail loaded');
    const [tw, th] = await thumb.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]);
    assert.ok(tw !== undefined && th !== undefined && Math.max(tw, th) <= 320 && tw > th, `a thumbnail ${tw}×${th} of the 400×300 image`);
    assert.equal(await thumb.getAttribute('alt'), 'photo.png');
    const link = msg.locator('a.att-file');
    assert.equal(await link.locator('.att-name').textContent(), 'notes.txt');
    assert.equal(await link.locator('.att-size').textContent(), `${notes.length} B`);
    assert.equal(await link.getAttribute('download'), 'notes.txt');
    const href = (await link.getAttribute('href')) ?? '';
    assert.match(href, /\/v1\/attachments\/[0-9a-f-]+\?exp=\d+&sig=[0-9a-f]+$/);
    const got = await fetch(href);
    assert.equal(got.status, 200);
    assert.equal(await got.text(), notes);
    assert.equal(await msg.locator('.attachments > *').count(), 2, 'the refused files were not sent');

    // the lightbox: the full image
    await msg.locator('button.att-image').click();
    const full = bob.locator('#lightbox img.lightbox-img');
    await full.waitFor();
    await until(async () => (await full.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)), 'the full image loaded');
    assert.deepEqual(await full.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]), [400, 300]);
    assert.match((await bob.locator('#lightbox .lightbox-caption').textContent()) ?? '', /photo\.png · .* · 400 × 300/);
    await bob.keyboard.press('Escape');
    await bob.locator('#lightbox').waitFor({ state: 'detached' });

    // alice's own message shows them too (its signed URLs read after the ACK)
    const mine = alice.locator('#messages li.msg[data-mine="true"]', { hasText: 'here are the files' });
    await mine.locator('button.att-image img').waitFor();
    await mine.locator('a.att-file', { hasText: 'notes.txt' }).waitFor();
  });

  test('a file dropped on the message list goes into the tray and is sent with no text', async () => {
    await alice.locator('#scroller').evaluate((el) => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped bytes'], 'dropped.txt', { type: 'text/plain' }));
      el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await alice.locator('#tray li.tray-item[data-name="dropped.txt"][data-state="ready"]').waitFor();
    await alice.locator('#send').click();
    const link = bob.locator('#messages li.msg a.att-file', { hasText: 'dropped.txt' });
    await link.waitFor();
    assert.equal(await link.locator('.att-size').textContent(), '13 B');
    const body = await bob.locator('#messages li.msg', { has: bob.locator('a.att-file', { hasText: 'dropped.txt' }) }).locator('.body').textContent();
    assert.equal(body, '');
    assert.equal(await (await fetch((await link.getAttribute('href')) ?? '')).text(), 'dropped bytes');
  });

  test('a file pasted into the composer goes into the tray; ✕ takes one out before sending', async () => {
    await alice.locator('#composer').evaluate((el) => {
      const dt = new DataTransfer();
      dt.items.add(new File(['pasted bytes!'], 'pasted.txt', { type: 'text/plain' }));
      dt.items.add(new File(['not this one'], 'unwanted.txt', { type: 'text/plain' }));
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    });
    await alice.locator('#tray li.tray-item[data-name="pasted.txt"][data-state="ready"]').waitFor();
    await alice.locator('#tray li.tray-item[data-name="unwanted.txt"][data-state="ready"]').waitFor();
    await alice.locator('#tray li.tray-item[data-name="unwanted.txt"] button.tray-remove').click();
    await alice.locator('#tray li.tray-item[data-name="unwanted.txt"]').waitFor({ state: 'detached' });
    await alice.locator('#composer').fill('pasted it');
    await alice.locator('#composer').press('Enter');
    const msg = bob.locator('#messages li.msg', { hasText: 'pasted it' });
    await msg.locator('a.att-file', { hasText: 'pasted.txt' }).waitFor();
    assert.deepEqual(await msg.locator('.att-name').allTextContents(), ['pasted.txt']);
  });
});

describe('console attachments whose signed URLs expired (attachment_url_ttl_secs = 2)', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();

  function signIn(user: string): Promise<Page> {
    return browsers.signInAs(chatd, user, { viewport: CHAT_VIEWPORT, acceptDownloads: true });
  }

  before(async () => {
    chatd = await ChatdServer.start({ env: { CHATD_ATTACHMENT_URL_TTL_SECS: '2' } });
    await browsers.launch();
    const r = await chatd.admin('POST', '/v1/channels', { channelId: 'brief', members: ['alice', 'bob'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('the lightbox and a download opened after the URLs expired get fresh ones', async () => {
    const alice = await signIn('alice');
    const bob = await signIn('bob');
    await openChannel(alice, 'brief');
    await openChannel(bob, 'brief');
    await alice.locator('#attach-input').setInputFiles([
      { name: 'wide.png', mimeType: 'image/png', buffer: Buffer.from(png(400, 300)) },
      { name: 'later.txt', mimeType: 'text/plain', buffer: Buffer.from('read later') },
    ]);
    await alice.locator('#tray li.tray-item[data-name="wide.png"][data-state="ready"]').waitFor();
    await alice.locator('#tray li.tray-item[data-name="later.txt"][data-state="ready"]').waitFor();
    await alice.locator('#send').click();
    const msg = bob.locator('#messages li.msg', { has: bob.locator('a.att-file', { hasText: 'later.txt' }) });
    await msg.waitFor();
    const oldHref = (await msg.locator('a.att-file').getAttribute('href')) ?? '';
    await sleep(3_000);
    assert.equal((await fetch(oldHref)).status, 404, 'the first URL expired');

    await msg.locator('button.att-image').click();
    const full = bob.locator('#lightbox img.lightbox-img');
    await full.waitFor();
    await until(async () => full.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the full image loaded from a fresh URL');
    assert.equal(await full.evaluate((img: HTMLImageElement) => img.naturalWidth), 400);
    await bob.keyboard.press('Escape');

    await sleep(3_000);
    const [download] = await Promise.all([bob.waitForEvent('download'), msg.locator('a.att-file').click()]);
    assert.equal(download.suggestedFilename(), 'later.txt');
    const path = await download.path();
    const { readFileSync } = await import('node:fs');
    assert.equal(readFileSync(path, 'utf8'), 'read later');
    assert.notEqual(download.url(), oldHref, 'a fresh URL');
  });
});

describe('console attachments with the server bounding uploads in progress (max_uploads_in_flight_per_user = 2)', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();

  before(async () => {
    chatd = await ChatdServer.start({ env: { CHATD_MAX_UPLOADS_IN_FLIGHT_PER_USER: '2' } });
    await browsers.launch();
    const r = await chatd.admin('POST', '/v1/channels', { channelId: 'many', members: ['alice', 'bob'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('six files dropped at once, another tab of alice holding the two slots a while: all six in the tray, all become ready, sent in one message in order', async (t) => {
    const alice = await browsers.signInAs(chatd, 'alice', { viewport: CHAT_VIEWPORT });
    await openChannel(alice, 'many');
    const answers: number[] = [];
    alice.on('response', (res) => {
      if (res.request().method() === 'POST' && new URL(res.url()).pathname === '/v1/channels/many/attachments') answers.push(res.status());
    });
    // another tab of alice: two uploads whose bodies stay open, holding both of the server's
    // slots until the console has been refused, then one of them a while longer
    const other = await holdUploadSlots(chatd, 'alice', 'many', 2);
    t.after(() => {
      other.endAll();
    });

    const names = ['one.txt', 'two.txt', 'three.txt', 'four.txt', 'five.txt', 'six.txt'];
    await alice.locator('#scroller').evaluate((el, list) => {
      const dt = new DataTransfer();
      for (const n of list) dt.items.add(new File([`bytes of ${n} `.repeat(100)], n, { type: 'text/plain' }));
      el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, names);
    const tray = alice.locator('#tray li.tray-item');
    await until(async () => (await tray.count()) === 6, 'all six in the tray');
    assert.deepEqual(await tray.evaluateAll((els) => els.map((e) => e.getAttribute('data-name'))), names);
    await until(() => Promise.resolve(answers.includes(429)), 'a refusal of the console while the other tab holds both slots');
    assert.equal((await other.release(0)).status, 201);
    await sleep(1_500);
    assert.ok(
      (await tray.evaluateAll((els) => els.map((e) => e.getAttribute('data-state')))).every((s) => s !== 'failed'),
      'none failed while waiting',
    );
    assert.equal((await other.release(1)).status, 201);
    await until(
      async () => (await tray.evaluateAll((els) => els.map((e) => e.getAttribute('data-state')))).every((s) => s === 'ready'),
      `all six ready: ${(await alice.locator('#tray').textContent()) ?? ''}`,
    );
    assert.equal(answers.filter((s) => s === 201).length, 6, JSON.stringify(answers));
    await alice.locator('#composer').fill('six files');
    await alice.locator('#composer').press('Enter');
    const msg = alice.locator('#messages li.msg', { hasText: 'six files' });
    await until(async () => (await msg.locator('.att-name').count()) === 6, 'the message with its six files');
    assert.deepEqual(await msg.locator('.att-name').allTextContents(), names);
  });
});
