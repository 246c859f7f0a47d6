// The console reloaded in the middle of a burst of Enter sends and of uploads (a file ready and
// sent with Enter just before the reload; a big file still uploading at the reload). Every
// message whose Enter was pressed must be stored exactly once (with its attachment when it had
// one) and shown once; a file whose upload the reload cut is never part of a message.
// usage (a server running, e.g. by tools/breaker11/serve.sh):
//   NODE_PATH=<worktree>/console/node_modules node console11.mjs [URL [ADMIN_TOKEN [ROUNDS]]]
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const [urlArg, adminArg, roundsArg] = process.argv.slice(2);
const url = urlArg ?? process.env.CHATD_URL ?? 'http://127.0.0.1:19300';
const admin = adminArg ?? process.env.CHATD_ADMIN_TOKEN ?? 'breaker11-admin-token-0123456789';
const rounds = Number(roundsArg ?? 3);
const run = Math.random().toString(16).slice(2, 8);
const H = { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' };
const alice = `alice-${run}`, chan = `reload11-${run}`;
await fetch(`${url}/v1/channels`, { method: 'POST', headers: H, body: JSON.stringify({ channelId: chan, members: [alice, `bob-${run}`] }) });
const tok = (await (await fetch(`${url}/v1/tokens`, { method: 'POST', headers: H, body: JSON.stringify({ userId: alice, ttlSeconds: 3600 }) })).json()).token;

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const ctx = await browser.newContext();
const page = await ctx.newPage();
const problems = [];
page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
// a slow network for the big files: their upload is held 4 s before it goes out
await page.route((u) => u.pathname.endsWith('/attachments') && (u.searchParams.get('filename') ?? '').startsWith('big-'), async (route) => {
  await new Promise((r) => setTimeout(r, 4000));
  await route.continue().catch(() => undefined);
});
await page.goto(`${url}/console#token=${tok}`);
await page.locator('#conn[data-state="connected"]').waitFor({ timeout: 30000 });
await page.locator(`button.channel[data-channel="${chan}"]`).click();

async function reopen() {
  await page.locator('#conn').waitFor({ timeout: 30000 });
  await page.locator('#composer').waitFor({ timeout: 30000 });
  const title = await page.locator('#channel-title').textContent().catch(() => '');
  if (!(title ?? '').includes(chan)) await page.locator(`button.channel[data-channel="${chan}"]`).click();
  await page.locator('#composer').waitFor({ timeout: 30000 });
}

const typed = [];
const withFile = [];
const cutFiles = [];
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < 10; i++) {
    const body = `r${r} m${i} ${run}`;
    const c = page.locator('#composer');
    if (i === 3) {
      // a small file, ready, sent with Enter, then an immediate reload
      const name = `note-${r}-${run}.txt`;
      await page.locator('#attach-input').setInputFiles([{ name, mimeType: 'text/plain', buffer: Buffer.from(`file of round ${r}\n`.repeat(50)) }]);
      await page.locator(`#tray li.tray-item[data-name="${name}"][data-state="ready"]`).waitFor({ timeout: 20000 });
      const fbody = `with file r${r} ${run}`;
      await c.fill(fbody);
      await c.press('Enter');
      withFile.push({ body: fbody, name });
      typed.push(fbody);
      await page.reload();
      await reopen();
      continue;
    }
    if (i === 6) {
      // a big file still uploading at the reload
      const name = `big-${r}-${run}.bin`;
      cutFiles.push(name);
      await page.locator('#attach-input').setInputFiles([{ name, mimeType: 'application/octet-stream', buffer: Buffer.alloc(20 * 1024 * 1024, 7) }]);
      await page.locator(`#tray li.tray-item[data-name="${name}"]`).waitFor({ timeout: 20000 });
      await c.fill(body);
      await c.press('Enter'); // Send waits for the upload: this Enter may do nothing
      const state = await page.locator(`#tray li.tray-item[data-name="${name}"]`).getAttribute('data-state').catch(() => 'gone');
      console.log(`     round ${r}: big file ${state} at the reload`);
      if (state !== 'uploading') {
        typed.push(body);
        withFile.push({ body, name });
        cutFiles.pop();
      }
      await page.reload();
      await reopen();
      continue; // not counted as typed: the composer's text is not a promise
    }
    await c.fill(body);
    await c.press('Enter');
    typed.push(body);
    if (i === 8) {
      await page.reload(); // right after an Enter of a burst
      await reopen();
    }
  }
}
await new Promise((r) => setTimeout(r, 10000));
await page.reload();
await page.locator('#conn[data-state="connected"]').waitFor({ timeout: 30000 });
await reopen();
await new Promise((r) => setTimeout(r, 4000));
const hist = await (await fetch(`${url}/v1/channels/${chan}/messages?afterSeq=0&limit=500`, { headers: H })).json();
const msgs = hist.messages.filter((m) => m.kind === 'message' || m.kind === undefined);
const stored = msgs.map((m) => m.body);
const count = (b) => stored.filter((x) => x === b).length;
const missing = typed.filter((b) => count(b) === 0);
const doubled = typed.filter((b) => count(b) > 1);
const shown = await page.locator('#messages li.msg .body').allTextContents();
const shownTwice = typed.filter((b) => shown.filter((x) => x === b).length > 1);
const notShown = typed.filter((b) => !shown.includes(b));
const badFile = withFile.filter(({ body, name }) => {
  const m = msgs.filter((x) => x.body === body);
  return m.length !== 1 || (m[0].attachments ?? []).length !== 1 || m[0].attachments[0].filename !== name;
});
const cutSent = msgs.filter((m) => (m.attachments ?? []).some((a) => cutFiles.includes(a.filename))).map((m) => m.body);
const pending = await page.locator('#messages [data-state="pending"], #messages [data-state="failed"]').count();
const ok = (c) => (c ? 'ok  ' : 'FAIL');
console.log(`typed ${typed.length}, stored ${stored.length} (${hist.messages.length} entries)`);
console.log(`${ok(missing.length === 0)}  missing after reloads: ${JSON.stringify(missing)}`);
console.log(`${ok(doubled.length === 0)}  stored twice: ${JSON.stringify(doubled)}`);
console.log(`${ok(shownTwice.length === 0)}  shown twice: ${JSON.stringify(shownTwice)}`);
console.log(`${ok(notShown.length === 0)}  not shown after the last reload: ${JSON.stringify(notShown)}`);
console.log(`${ok(badFile.length === 0)}  sent-with-file messages not stored once with their file: ${JSON.stringify(badFile)}`);
console.log(`${ok(cutSent.length === 0)}  messages carrying a file whose upload was cut: ${JSON.stringify(cutSent)}`);
console.log(`${ok(problems.length === 0)}  page errors: ${JSON.stringify(problems)}`);
console.log(`     still pending/failed in the page: ${pending}`);
await browser.close();
