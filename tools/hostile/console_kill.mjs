// The console in two tabs of one user while chatd is killed (-9) in the middle of sending and
// started again; both tabs reloaded while it is down. Every message whose Enter was pressed
// must be stored once and shown once in each tab. The script starts (and kills) its own server
// with a breaker's serve.sh, which prints the server's PID. usage:
//   CHATD_SERVE=tools/breaker8/serve.sh CHATD_ADMIN_TOKEN=breaker8-admin-token-0123456789 \
//   CHATD_BIN=... NODE_PATH=/work/main/console/node_modules node console_kill.mjs PORT [STORE]
// PORT defaults to CHATD_PORT; STORE (sqlite or pg, serve.sh's first argument) to sqlite.
// CHATD_ADMIN_TOKEN must be the one that serve.sh gives the server.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const port = process.argv[2] ?? process.env.CHATD_PORT;
const store = process.argv[3] ?? 'sqlite';
const admin = process.env.CHATD_ADMIN_TOKEN;
const serve = process.env.CHATD_SERVE;
if (!port || !admin || !serve) {
  console.error('usage: CHATD_SERVE=.../serve.sh CHATD_ADMIN_TOKEN=... console_kill.mjs PORT [STORE]');
  process.exit(2);
}
const url = `http://127.0.0.1:${port}`;
const start = () => Number(execFileSync('bash', [path.resolve(serve), store, port]).toString().trim().split('\n')[0]);
let pid = start();
const run = Math.random().toString(16).slice(2, 8);
const H = { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' };
const alice = `alice-${run}`, chan = `kill-${run}`;
await fetch(`${url}/v1/channels`, { method: 'POST', headers: H, body: JSON.stringify({ channelId: chan, members: [alice] }) });
const tok = (await (await fetch(`${url}/v1/tokens`, { method: 'POST', headers: H, body: JSON.stringify({ userId: alice, ttlSeconds: 3600 }) })).json()).token;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const ctx = await browser.newContext();
const tabs = [await ctx.newPage(), await ctx.newPage()];
for (const p of tabs) {
  await p.goto(`${url}/console#token=${tok}`);
  await p.locator('#conn[data-state="connected"]').waitFor({ timeout: 20000 });
  await p.locator(`button.channel[data-channel="${chan}"]`).click();
}
const typed = [];
const type = async (p, body) => { const c = p.locator('#composer'); await c.fill(body); await c.press('Enter'); typed.push(body); };
for (let i = 0; i < 8; i++) await type(tabs[i % 2], `before ${i} ${run}`);
process.kill(pid, 'SIGKILL');
for (let i = 0; i < 8; i++) await type(tabs[i % 2], `during ${i} ${run}`);
for (const p of tabs) await p.reload().catch((e) => console.log('reload while down:', String(e).slice(0, 80)));
await new Promise((r) => setTimeout(r, 1500));
pid = start();
for (const p of tabs) {
  await p.locator('#conn[data-state="connected"]').waitFor({ timeout: 30000 }).catch(() => console.log('tab not connected'));
  const title = await p.locator('#channel-title').textContent().catch(() => '');
  if (!title.includes(chan)) await p.locator(`button.channel[data-channel="${chan}"]`).click().catch(() => undefined);
}
for (let i = 0; i < 4; i++) await type(tabs[i % 2], `after ${i} ${run}`);
await new Promise((r) => setTimeout(r, 10000));
const hist = await (await fetch(`${url}/v1/channels/${chan}/messages?afterSeq=0&limit=500`, { headers: H })).json();
const stored = hist.messages.map((m) => m.body);
const n = (list, b) => list.filter((x) => x === b).length;
console.log(`typed ${typed.length}, stored ${stored.length}`);
const missing = typed.filter((b) => n(stored, b) === 0), doubled = typed.filter((b) => n(stored, b) > 1);
console.log(`${missing.length ? 'FAIL' : 'ok  '}  missing: ${JSON.stringify(missing)}`);
console.log(`${doubled.length ? 'FAIL' : 'ok  '}  stored twice: ${JSON.stringify(doubled)}`);
for (const [i, p] of tabs.entries()) {
  const shown = await p.locator('#messages li.msg .body').allTextContents();
  const twice = typed.filter((b) => n(shown, b) > 1), absent = typed.filter((b) => n(shown, b) === 0);
  const pend = await p.locator('#messages [data-state="pending"], #messages [data-state="failed"]').count();
  console.log(`${twice.length || absent.length ? 'FAIL' : 'ok  '}  tab ${i}: shown twice ${JSON.stringify(twice)}, not shown ${JSON.stringify(absent)}, pending/failed ${pend}`);
}
await browser.close();
process.kill(pid, 'SIGTERM');
