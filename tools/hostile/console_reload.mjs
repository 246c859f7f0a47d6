// The web console reloaded in the middle of sending: every message whose Enter was pressed
// must be stored exactly once and shown once. usage (a server already running, e.g. by a
// breaker's serve.sh):
//   NODE_PATH=/work/main/console/node_modules node console_reload.mjs [URL [ADMIN_TOKEN [ROUNDS]]]
// URL and ADMIN_TOKEN default to CHATD_URL and CHATD_ADMIN_TOKEN (as tools/hostile/chatd_lib.py).
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const [urlArg, adminArg, roundsArg] = process.argv.slice(2);
const url = urlArg ?? process.env.CHATD_URL;
const admin = adminArg ?? process.env.CHATD_ADMIN_TOKEN;
if (!url || !admin) {
  console.error('usage: console_reload.mjs [URL [ADMIN_TOKEN [ROUNDS]]] (or CHATD_URL, CHATD_ADMIN_TOKEN)');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 3);
const run = Math.random().toString(16).slice(2, 8);
const H = { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' };
const alice = `alice-${run}`, chan = `reload-${run}`;
await fetch(`${url}/v1/channels`, { method: 'POST', headers: H, body: JSON.stringify({ channelId: chan, members: [alice, `bob-${run}`] }) });
const tok = (await (await fetch(`${url}/v1/tokens`, { method: 'POST', headers: H, body: JSON.stringify({ userId: alice, ttlSeconds: 3600 }) })).json()).token;

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const ctx = await browser.newContext();
const page = await ctx.newPage();
await page.goto(`${url}/console#token=${tok}`);
await page.locator('#conn[data-state="connected"]').waitFor({ timeout: 20000 });
await page.locator(`button.channel[data-channel="${chan}"]`).click();
const typed = [];
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < 12; i++) {
    const body = `r${r} m${i} ${run}`;
    const c = page.locator('#composer');
    await c.fill(body);
    await c.press('Enter');
    typed.push(body);
    if (i === 6 + r) {
      // reload right after an Enter, without waiting for anything
      await page.reload();
      await page.locator('#conn').waitFor({ timeout: 20000 });
      await page.locator('#composer').waitFor({ timeout: 20000 });
      const title = await page.locator('#channel-title').textContent().catch(() => '');
      if (!title.includes(chan)) await page.locator(`button.channel[data-channel="${chan}"]`).click();
    }
  }
}
// let the outbox drain
await new Promise((r) => setTimeout(r, 8000));
await page.reload();
await page.locator('#conn[data-state="connected"]').waitFor({ timeout: 20000 });
await new Promise((r) => setTimeout(r, 4000));
const hist = await (await fetch(`${url}/v1/channels/${chan}/messages?afterSeq=0&limit=500`, { headers: H })).json();
const stored = hist.messages.map((m) => m.body);
const count = (b) => stored.filter((x) => x === b).length;
const missing = typed.filter((b) => count(b) === 0);
const doubled = typed.filter((b) => count(b) > 1);
const shown = await page.locator('#messages li.msg .body').allTextContents();
const shownTwice = typed.filter((b) => shown.filter((x) => x === b).length > 1);
const pending = await page.locator('#messages [data-state="pending"], #messages [data-state="failed"]').count();
console.log(`typed ${typed.length}, stored ${stored.length}`);
console.log(`${missing.length === 0 ? 'ok  ' : 'FAIL'}  missing after reloads: ${JSON.stringify(missing)}`);
console.log(`${doubled.length === 0 ? 'ok  ' : 'FAIL'}  stored twice: ${JSON.stringify(doubled)}`);
console.log(`${shownTwice.length === 0 ? 'ok  ' : 'FAIL'}  shown twice: ${JSON.stringify(shownTwice)}`);
console.log(`     still pending/failed in the page: ${pending}`);
await browser.close();
