/**
 * The console's shell offline: a service worker keeps the page, its script, style sheet
 * and icon in a cache, so a reload while the server cannot be reached still shows the
 * console, which then loads its outbox from IndexedDB and sends it once the server is
 * back (instead of the browser's error page).
 *
 * chatd serves no file of its own for the worker: the worker is `console.js` itself (this
 * bundle), which sees it runs in a worker (no `document`) and calls {@link serveShell}
 * instead of drawing the page. Its scope is `/console/`, the directory of the script,
 * which `/console` is not in: {@link registerShell} moves the address to `/console/` (the
 * same page, which chatd serves at both) before registering.
 *
 * Every file is asked of the network first (they change with the binary, and chatd sends
 * them with `Cache-Control: no-cache`); the cached copy answers only when that fails. No
 * API request, WebSocket or upload goes near the cache.
 */

/** The cache's name; another version of the list of files would take another name. */
const CACHE = 'chatd-console-shell-v1';

/** The page's path inside the worker's scope. */
const PAGE = '/console/';

/** The worker's scope (the directory of its script). */
const SCOPE = '/console/';

/** The worker's script: this bundle. */
const SCRIPT = '/console/console.js';

/** The shell's files by the paths they are asked by; `/console` and `/console/` are the same page. */
const SHELL: ReadonlyMap<string, string> = new Map([
  ['/console', PAGE],
  ['/console/', PAGE],
  ['/console/console.js', '/console/console.js'],
  ['/console/console.css', '/console/console.css'],
  ['/console/favicon.svg', '/console/favicon.svg'],
]);

/** The events of a service worker this module uses (the DOM library has no worker types). */
interface ExtendableEvent extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(r: Promise<Response>): void;
}
/** What a service worker's global scope offers that this module uses. */
export interface ShellWorkerScope {
  readonly location: { readonly origin: string };
  readonly clients: { claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install' | 'activate', f: (e: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', f: (e: FetchEvent) => void): void;
}

/** Whether this script runs as the service worker (no document), not in the page. */
export function inWorker(): boolean {
  return typeof document === 'undefined';
}

/**
 * In the page: moves the address from `/console` to `/console/` (keeping the query and
 * the fragment, without a reload) and registers the worker. Does nothing where the
 * browser has no service workers (a page not from a secure context: plain HTTP to
 * another host than localhost); a failed registration is ignored (the console works
 * online as before).
 */
export function registerShell(): void {
  if (!('serviceWorker' in navigator)) return;
  if (location.pathname === '/console') history.replaceState(history.state, '', `${PAGE}${location.search}${location.hash}`);
  navigator.serviceWorker.register(SCRIPT, { scope: SCOPE }).catch(() => undefined);
}

/** Fetches `request` from the network, keeping a copy of a 200 under `key`; the cached copy when the network fails. */
async function networkFirst(e: FetchEvent, key: string): Promise<Response> {
  try {
    const r = await fetch(e.request);
    if (r.status === 200) {
      const copy = r.clone();
      e.waitUntil(caches.open(CACHE).then((c) => c.put(key, copy)));
    }
    return r;
  } catch (err) {
    const cached = await caches.match(key, { cacheName: CACHE });
    if (cached !== undefined) return cached;
    throw err;
  }
}

/** In the worker: caches the shell on install, takes over open pages at once, answers the shell's requests. */
export function serveShell(sw: ShellWorkerScope): void {
  sw.addEventListener('install', (e) => {
    e.waitUntil(
      caches
        .open(CACHE)
        .then((c) => c.addAll([...new Set(SHELL.values())]))
        .then(() => sw.skipWaiting()),
    );
  });
  sw.addEventListener('activate', (e) => {
    e.waitUntil(
      caches
        .keys()
        .then((names) => Promise.all(names.filter((n) => n.startsWith('chatd-console-shell-') && n !== CACHE).map((n) => caches.delete(n))))
        .then(() => sw.clients.claim()),
    );
  });
  sw.addEventListener('fetch', (e) => {
    if (e.request.method !== 'GET') return;
    const url = new URL(e.request.url);
    if (url.origin !== sw.location.origin) return;
    const key = SHELL.get(url.pathname);
    if (key === undefined) return;
    e.respondWith(networkFirst(e, key));
  });
}
