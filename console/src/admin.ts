/**
 * The admin view (`/console#admin`): create channels, add and remove members, mint user
 * tokens (shown as sign-in links, one per user, kept while the page is open), list, rename
 * and delete channels and see their members (admin-channels.ts), and export or erase a
 * user (admin-export.ts, admin-erase.ts). The
 * admin token lives in admin-api.ts's memory only: never in storage, never in a URL;
 * reloading the page forgets it.
 */
import { api, apiError, currentAdminToken, field, guarded, result, setAdminToken } from './admin-api.js';
import { channelsCard } from './admin-channels.js';
import { eraseCard } from './admin-erase.js';
import { exportCard } from './admin-export.js';
import { h } from './dom.js';

function splitUsers(s: string): string[] {
  return s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/**
 * The header's sign-in state when no user is signed in (`#conn` idle): "Admin token in
 * use" while this page holds the admin token, else "Not signed in". A user's chat
 * connection, when there is one, is left as it is.
 */
export function adminHeader(): void {
  const el = document.getElementById('conn');
  if (el === null || (el.dataset.state !== 'idle' && el.dataset.state !== 'admin')) return;
  const admin = currentAdminToken() !== undefined;
  el.dataset.state = admin ? 'admin' : 'idle';
  el.textContent = admin ? 'Admin token in use' : 'Not signed in';
}

/** Renders the admin view into `root`. */
export function renderAdmin(root: HTMLElement): void {
  document.title = 'Admin · chatd console';
  adminHeader();
  if (currentAdminToken() === undefined) {
    renderAdminSignIn(root);
    return;
  }
  renderAdminTools(root);
}

/**
 * The sign-in's words when its request (an admin route) gets 404: the admin API is not
 * served where this page was loaded, as on `listen` with `admin_listen` set, or through
 * a reverse proxy that keeps the admin routes for the private network (docs/security.md).
 */
const ADMIN_NOT_HERE =
  'The admin API is not served at this address (HTTP 404): open /console#admin on chatd’s admin address (admin_listen, or the private network), not through the public address or its proxy.';

function renderAdminSignIn(root: HTMLElement): void {
  const input = h('input', {
    id: 'admin-token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'admin-token-hint',
  });
  const out = h('p', { class: 'result', role: 'status', 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'admin-title',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        const t = input.value.trim();
        if (t === '') {
          result(out, false, 'Enter the admin token.');
          return;
        }
        void guarded(out, async () => {
          setAdminToken(t);
          // Any admin route checks the token: the first channel of the list answers 200 to the admin, 401/403 otherwise.
          const r = await api('GET', '/v1/channels?limit=1');
          if (r.status === 200) {
            renderAdmin(root);
          } else {
            setAdminToken(undefined);
            result(out, false, r.status === 404 ? ADMIN_NOT_HERE : apiError(r));
          }
        });
      },
    },
    h('h2', { id: 'admin-title' }, 'Admin view'),
    h(
      'p',
      { class: 'hint', id: 'admin-token-hint' },
      'The admin token is kept in this page’s memory only: it is never stored, and reloading the page forgets it. ',
      'It is CHATD_ADMIN_TOKEN, or admin_token in <data_dir>/secrets.toml when chatd generated it.',
    ),
    h('label', { for: 'admin-token' }, 'Admin token'),
    input,
    h('p', {}, h('button', { type: 'submit', class: 'primary', id: 'admin-open' }, 'Open admin view')),
    out,
  );
  root.replaceChildren(h('div', { class: 'admin' }, form));
  input.focus();
}

function renderAdminTools(root: HTMLElement): void {
  const log = h('ul', { class: 'log', id: 'admin-log', 'aria-live': 'polite' });
  const note = (s: string): void => {
    log.prepend(h('li', {}, `${new Date().toLocaleTimeString()} ${s}`));
  };
  const channels = channelsCard(note);

  // create a channel
  const [lc, chId] = field('new-channel-id', 'Channel id', 'e.g. general (empty: the server picks one)');
  const [lm, chMembers] = field('new-channel-members', 'Members', 'user ids, e.g. alice, bob');
  const createOut = h('p', { class: 'result', id: 'create-result', role: 'status' });
  const create = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'create-title',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        void guarded(createOut, async () => {
          const body: { channelId?: string; members: string[] } = { members: splitUsers(chMembers.value) };
          if (chId.value.trim() !== '') body.channelId = chId.value.trim();
          const r = await api('POST', '/v1/channels', body);
          if (r.status === 201) {
            const c = r.json as { channelId: string; members: string[] };
            result(createOut, true, `Created channel ${c.channelId} with ${c.members.length === 0 ? 'no members' : c.members.join(', ')}.`);
            note(`created ${c.channelId}`);
            memberChannel.value = c.channelId;
            channels.refresh();
          } else result(createOut, false, apiError(r));
        });
      },
    },
    h('h2', { id: 'create-title' }, 'Create a channel'),
    lc,
    chId,
    lm,
    chMembers,
    h('p', {}, h('button', { type: 'submit', class: 'primary', id: 'create-channel' }, 'Create channel')),
    createOut,
  );

  // members
  const [lmc, memberChannel] = field('member-channel', 'Channel id', 'general');
  const [lmu, memberUser] = field('member-user', 'User id', 'carol');
  const memberOut = h('p', { class: 'result', id: 'member-result', role: 'status' });
  const setMember = (add: boolean): void => {
    void guarded(memberOut, async () => {
      const c = memberChannel.value.trim();
      const u = memberUser.value.trim();
      if (c === '' || u === '') {
        result(memberOut, false, 'Enter a channel id and a user id.');
        return;
      }
      const r = await api(add ? 'PUT' : 'DELETE', `/v1/channels/${encodeURIComponent(c)}/members/${encodeURIComponent(u)}`);
      if (r.status === 204) {
        const info = await api('GET', `/v1/channels/${encodeURIComponent(c)}`);
        const members = info.status === 200 ? (info.json as { members: string[] }).members.join(', ') : '?';
        result(memberOut, true, `${add ? 'Added' : 'Removed'} ${u} ${add ? 'to' : 'from'} ${c}. Members now: ${members || 'none'}.`);
        note(`${add ? 'added' : 'removed'} ${u} ${add ? 'to' : 'from'} ${c}`);
        channels.refresh();
      } else result(memberOut, false, apiError(r));
    });
  };
  const members = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'members-title',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        setMember(true);
      },
    },
    h('h2', { id: 'members-title' }, 'Members'),
    lmc,
    memberChannel,
    lmu,
    memberUser,
    h(
      'p',
      { class: 'row' },
      h('button', { type: 'submit', class: 'primary', id: 'add-member' }, 'Add member'),
      h(
        'button',
        {
          type: 'button',
          id: 'remove-member',
          onclick: () => {
            setMember(false);
          },
        },
        'Remove member',
      ),
    ),
    memberOut,
  );

  // tokens
  const [lt, tokenUser] = field('token-user', 'User id', 'alice');
  const [lttl, tokenTtl] = field('token-ttl', 'Lifetime, seconds (empty: the server default)', '86400');
  tokenTtl.inputMode = 'numeric';
  const tokenOut = h('div', { class: 'result', id: 'token-result', role: 'status' });
  // every link minted in this page, the newest first, one per user (a new token replaces the user's older link)
  const tokenLinks = h('ul', { class: 'signin-links', id: 'signin-links', 'aria-label': 'Sign-in links' });
  let linksMinted = 0;
  const tokens = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'token-title',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        void guarded(tokenOut, async () => {
          const userId = tokenUser.value.trim();
          const body: { userId: string; ttlSeconds?: number } = { userId };
          if (tokenTtl.value.trim() !== '') body.ttlSeconds = Number(tokenTtl.value.trim());
          const r = await api('POST', '/v1/tokens', body);
          if (r.status !== 201) {
            result(tokenOut, false, apiError(r));
            return;
          }
          const t = r.json as { token: string; expiresAt: number };
          const link = `${location.origin}/console#token=${t.token}`;
          result(tokenOut, true, `Token for ${userId}, valid until ${new Date(t.expiresAt).toLocaleString()}. Open its link in another browser (or a private window) to sign in as ${userId}.`);
          for (const old of tokenLinks.querySelectorAll('li')) if (old.dataset.user === userId) old.remove();
          const inputId = `signin-link-${++linksMinted}`;
          tokenLinks.prepend(
            h(
              'li',
              { class: 'signin-entry', 'data-user': userId },
              h('a', { href: link, class: 'signin-link', 'data-user': userId, target: '_blank', rel: 'noreferrer noopener' }, `Sign in as ${userId}`),
              h('span', { class: 'hint' }, ` (until ${new Date(t.expiresAt).toLocaleString()})`),
              h('label', { for: inputId, class: 'sr-only' }, `Sign-in link of ${userId}`),
              h('input', { id: inputId, class: 'signin-url', readonly: true, value: link }),
            ),
          );
          note(`minted a token for ${userId}`);
        });
      },
    },
    h('h2', { id: 'token-title' }, 'Mint a user token'),
    lt,
    tokenUser,
    lttl,
    tokenTtl,
    h('p', {}, h('button', { type: 'submit', class: 'primary', id: 'mint-token' }, 'Mint token')),
    tokenOut,
    tokenLinks,
  );

  const leave = h(
    'button',
    {
      type: 'button',
      id: 'admin-forget',
      onclick: () => {
        setAdminToken(undefined);
        renderAdmin(root);
      },
    },
    'Forget the admin token',
  );
  root.replaceChildren(
    h(
      'div',
      { class: 'admin' },
      h(
        'div',
        { class: 'card' },
        h('h2', {}, 'Admin view'),
        h('p', { class: 'hint' }, 'Set up a chat: create a channel with its members, then mint a token for each member and send them their sign-in link. A person’s data: export it, or erase them (a GDPR request). '),
        leave,
      ),
      h('div', { class: 'admin-grid' }, create, members, tokens),
      channels.el,
      h('div', { class: 'admin-grid' }, exportCard(note), eraseCard(note)),
      h('div', { class: 'card' }, h('h2', {}, 'Done in this page'), log),
    ),
  );
  chId.focus();
}
