// The console reloaded at once after Enter, N times: how many typed messages are neither
// stored on the server nor pending in the page after the reloads (the send path writes the
// outbox record to IndexedDB before the first try, and the composer is cleared at Enter, so a
// reload inside the write loses the message).
// usage: NODE_PATH=/work/main/console/node_modules node console_enter_reload.mjs http://127.0.0.1:PORT ADMIN_TOKEN [ROUNDS] [BURST]
// (each round: BURST messages typed and sent with Enter, then a reload at once)
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const [url, admin, nArg] = process.argv.slice(2);
const n = Number(nArg ?? 10);
const burst = Number(process.argv[5] ?? 6);
const run = Math.random().toString(16).slice(2, 8);
const H = { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' };
const alice = `alice-${run}`, chan = `enter-${run}`;
await fetch(`${url}/v1/channels`, { method: 'POST', headers: H, body: JSON.stringify({ channelId: chan, members: [alice] }) });
const tok = (await (await fetch(`${url}/v1/tokens`, { method: 'POST', headers: H, body: JSON.stringify({ userId: alice, ttlSeconds: 3600 }) })).json()).token;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await (await browser.newContext()).newPage();
await page.goto(`${url}/console#token=${tok}`);
await page.locator('#conn[data-state="connected"]').waitFor({ timeout: 20000 });
const typed = [];
for (let i = 0; i < n; i++) {
  const title = await page.locator('#channel-title').textContent().catch(() => '');
  if (!title.includes(chan)) await page.locator(`button.channel[data-channel="${chan}"]`).click();
  const c = page.locator('#composer');
  await c.waitFor({ timeout: 20000 });
  // a burst of `burst` messages, the reload right after the last Enter
  for (let k = 0; k < burst; k++) {
    const body = `enter ${i}.${k} ${run}`;
    await c.fill(body);
    await c.press('Enter');
    typed.push(body);
  }
  await page.reload();
  await page.locator('#conn[data-state="connected"]').waitFor({ timeout: 20000 });
}
await new Promise((r) => setTimeout(r, 6000));
const hist = await (await fetch(`${url}/v1/channels/${chan}/messages?afterSeq=0&limit=500`, { headers: H })).json();
const stored = hist.messages.map((m) => m.body);
const missing = typed.filter((b) => !stored.includes(b));
const doubled = typed.filter((b) => stored.filter((x) => x === b).length > 1);
console.log(`typed ${typed.length} in ${n} bursts of ${burst}, each burst followed at once by a reload; stored ${stored.length}`);
console.log(`${missing.length === 0 ? 'ok  ' : 'FAIL'}  lost (neither stored nor pending): ${missing.length}: ${JSON.stringify(missing.slice(0, 5))}`);
console.log(`${doubled.length === 0 ? 'ok  ' : 'FAIL'}  stored twice: ${JSON.stringify(doubled)}`);
await browser.close();
