/**
 * Entry point of the console: the sign-in form, the chat view (`/console`, signed in
 * with a user token pasted or given as `#token=…`) and the admin view (`/console#admin`).
 *
 * The user token is moved out of the URL at once (into this tab's sessionStorage, so a
 * reload stays signed in); the admin token is never stored (see admin.ts). Run as the
 * service worker instead of in the page, this script keeps the page's files for a reload
 * while the server is down (offline.ts).
 */
import { jwtSubject } from '../../clients/typescript/src/index.js';
import { ensureRandomUUID } from './adapter.js';
import { adminHeader, renderAdmin } from './admin.js';
import { ChatView } from './chat.js';
import { banner, byId, h, withCode } from './dom.js';
import { inWorker, registerShell, serveShell, type ShellWorkerScope } from './offline.js';
import { tokenWords } from './words.js';

const TOKEN_KEY = 'chatd-console-token';

let chat: ChatView | undefined;

function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

function storeToken(token: string | undefined): void {
  try {
    if (token === undefined) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    /* storage off: the session lasts until reload */
  }
}

/** Reads `#token=…` into storage and takes it out of the address bar. */
function takeTokenFromHash(): void {
  const m = /^#token=([^&]+)/.exec(location.hash);
  if (m === null || m[1] === undefined) return;
  const token = decodeURIComponent(m[1]);
  history.replaceState(null, '', location.pathname + location.search);
  if (chat !== undefined && chat.client.connection.getSnapshot().userId !== jwtSubject(token)) signOut();
  storeToken(token);
}

function signOut(reason?: string): void {
  chat?.close();
  chat = undefined;
  storeToken(undefined);
  byId('me').textContent = '';
  byId('signout').hidden = true;
  route();
  if (reason !== undefined) banner(reason);
}

function renderSignIn(root: HTMLElement, problem?: string): void {
  document.title = 'Sign in · chatd console';
  const input = h('textarea', { id: 'token', spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'token-hint' });
  const out = h('p', { class: 'result', id: 'signin-result', role: 'status', 'data-ok': problem === undefined ? 'true' : 'false' }, problem ?? '');
  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'signin-title',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        const t = input.value.trim();
        if (jwtSubject(t) === undefined) {
          out.dataset.ok = 'false';
          out.textContent = 'This does not look like a chatd user token (a JWT: three parts separated by dots).';
          return;
        }
        void (async () => {
          try {
            const r = await fetch('/v1/me/channels', {
              cache: 'no-store',
              headers: { authorization: `Bearer ${t}` },
            });
            if (r.status === 401) {
              const body = (await r.json().catch(() => ({}))) as { error?: { message?: string } };
              out.dataset.ok = 'false';
              out.replaceChildren(...withCode(tokenWords(body.error?.message ?? 'unauthorized')));
              return;
            }
          } catch {
            out.dataset.ok = 'false';
            out.textContent = 'The chat server cannot be reached (is chatd running?).';
            return;
          }
          storeToken(t);
          route();
        })();
      },
    },
    h('h2', { id: 'signin-title' }, 'Sign in'),
    h(
      'p',
      { class: 'hint', id: 'token-hint' },
      'Paste your user token: run ',
      h('code', {}, 'chatd token alice'),
      ' on the server, or ask an admin for a sign-in link (admin view). A link ',
      h('code', {}, '/console#token=…'),
      ' signs you in directly.',
    ),
    h('label', { for: 'token' }, 'User token'),
    input,
    h('p', {}, h('button', { type: 'submit', class: 'primary', id: 'signin' }, 'Sign in')),
    out,
    h('p', { class: 'hint' }, 'Setting up? The ', h('a', { href: '#admin' }, 'admin view'), ' creates channels and mints tokens with the admin token.'),
  );
  root.replaceChildren(h('div', { class: 'admin' }, form));
}

function startChat(token: string): ChatView | undefined {
  if (jwtSubject(token) === undefined) {
    storeToken(undefined);
    return undefined;
  }
  const view = new ChatView(token, {
    signedOut: (reason) => {
      signOut(reason);
    },
  });
  byId('me').textContent = `signed in as ${view.userId}`;
  byId('signout').hidden = false;
  view.start().catch((e: unknown) => {
    signOut(`Could not start: ${String(e)}`);
  });
  return view;
}

function route(): void {
  takeTokenFromHash();
  const root = byId('app');
  byId('nav-admin').setAttribute('aria-current', location.hash === '#admin' ? 'page' : 'false');
  byId('nav-chat').setAttribute('aria-current', location.hash === '#admin' ? 'false' : 'page');
  if (location.hash === '#admin') {
    renderAdmin(root);
    return;
  }
  adminHeader();
  const token = storedToken();
  if (token === undefined) {
    renderSignIn(root);
    return;
  }
  chat ??= startChat(token);
  if (chat === undefined) renderSignIn(root, 'That token could not be read; paste it again.');
  else chat.mount(root);
}

function boot(): void {
  ensureRandomUUID();
  registerShell();
  byId('signout').addEventListener('click', () => {
    signOut();
  });
  window.addEventListener('hashchange', () => {
    banner('');
    route();
  });
  route();
}

// This script is also the console's service worker (offline.ts): there it serves the shell.
if (inWorker()) serveShell(self as unknown as ShellWorkerScope);
else if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
