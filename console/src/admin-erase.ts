/**
 * The admin view's "Erase a user" card (protocol §19, `DELETE /v1/users/{userId}`): a GDPR
 * erasure. Erasing is for good, so the card asks first, naming the user, and its Erase
 * button stays off until the admin has typed that user id again. A large user may take
 * longer than one request may: the server then answers 202 `{"userId","status":"pending"}`
 * and the card asks again (each call waits for the same erasure) until 204, showing
 * "Still erasing…" meanwhile.
 */
import { api, apiError, errorMessage, field, result, type ApiResult } from './admin-api.js';
import { h } from './dom.js';

/** Pause between two calls when the server answered 202 (each call itself waits up to `handshake_timeout_ms` less a second). */
const PENDING_PAUSE_MS = 250;

/** The words for a refused erasure of `userId`. */
function eraseError(userId: string, r: ApiResult): string {
  switch (r.status) {
    case 400:
      return `“${userId}” is not a user id chatd accepts (${errorMessage(r) ?? 'invalid_field'}); nothing was erased.`;
    case 404:
      return 'This chatd has no erase route (it is older than protocol 1.2); nothing was erased.';
    case 503:
      return `The server could not finish erasing ${userId} now (its database is unavailable or it is shutting down). The erasure goes on, or resumes when the server is back: erase ${userId} again to wait for it.`;
    default:
      return apiError(r);
  }
}

/** What an erasure did, for the admin (the effects of protocol §19). */
function erasedWords(userId: string): (Node | string)[] {
  return [
    h('p', {}, `Erased ${userId}.`),
    h(
      'ul',
      { class: 'erase-effects' },
      h('li', {}, `Every message ${userId} sent is deleted for everyone (its text, edits, quotes of it, search entries and files are gone; members see “This message was deleted.”).`),
      h('li', {}, `Their reactions are removed and their memberships ended: ${userId} has left every channel, direct ones too.`),
      h('li', {}, `Their live sessions are closed, and every token issued to ${userId} before now is refused.`),
      h('li', {}, `Their read marks, settings, blocks, flags, mutes and last-seen time are gone. Channels that banned ${userId} keep the ban.`),
    ),
    h('p', { class: 'hint' }, `A user chatd never saw is answered the same way: there was nothing to erase. Should ${userId} come back, mint a new token (a second from now at the earliest).`),
  ];
}

/** The "Erase a user" card; `note` adds a line to the page's log. */
export function eraseCard(note: (s: string) => void): HTMLElement {
  const [lu, user] = field('erase-user', 'User id', 'e.g. alice');
  const out = h('div', { class: 'result', id: 'erase-result', role: 'status', 'aria-live': 'polite' });
  const question = h('p', { id: 'erase-question' });
  const confirmLabel = h('label', { for: 'erase-confirm' });
  const confirm = h('input', { id: 'erase-confirm', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'erase-question' });
  const go = h('button', { type: 'button', class: 'danger', id: 'erase-confirm-button', disabled: true });
  const cancel = h('button', { type: 'button', id: 'erase-cancel' }, 'Cancel');
  const ask = h('button', { type: 'submit', class: 'primary', id: 'erase-ask' }, 'Erase user…');
  const box = h('div', { class: 'erase-confirm', id: 'erase-confirm-box', hidden: true }, question, confirmLabel, confirm, h('p', { class: 'row' }, go, cancel));
  /** The user the open question names (`undefined`: no question open). */
  let target: string | undefined;
  let busy = false;

  const close = (): void => {
    target = undefined;
    box.hidden = true;
    confirm.value = '';
    go.disabled = true;
  };
  const setBusy = (on: boolean): void => {
    busy = on;
    for (const el of [user, confirm, cancel, ask]) el.disabled = on;
    go.disabled = on || target === undefined || confirm.value !== target;
  };

  const erase = async (userId: string): Promise<void> => {
    const started = Date.now();
    out.dataset.state = 'erasing';
    result(out, true, `Erasing ${userId}…`);
    for (;;) {
      const r = await api('DELETE', `/v1/users/${encodeURIComponent(userId)}`);
      if (r.status === 204) {
        out.dataset.state = 'done';
        result(out, true, ...erasedWords(userId));
        note(`erased ${userId}`);
        return;
      }
      if (r.status !== 202) {
        out.dataset.state = 'failed';
        result(out, false, eraseError(userId, r));
        return;
      }
      out.dataset.state = 'pending';
      const secs = Math.round((Date.now() - started) / 1000);
      result(out, true, `Still erasing ${userId}… (${secs} s so far: a user with many messages takes a while; the erasure goes on even if this page closes).`);
      await new Promise((r) => setTimeout(r, PENDING_PAUSE_MS));
    }
  };

  confirm.addEventListener('input', () => {
    go.disabled = busy || target === undefined || confirm.value !== target;
  });
  confirm.addEventListener('keydown', (ev: KeyboardEvent) => {
    // Enter here erases only when the Erase button is on (never re-asks through the form).
    if (ev.key !== 'Enter') return;
    ev.preventDefault();
    if (!go.disabled) go.click();
  });
  user.addEventListener('input', () => {
    if (target !== undefined && user.value.trim() !== target) close();
  });
  cancel.addEventListener('click', () => {
    close();
    user.focus();
  });
  go.addEventListener('click', () => {
    const userId = target;
    if (userId === undefined || confirm.value !== userId || busy) return;
    setBusy(true);
    void erase(userId)
      .catch(() => {
        out.dataset.state = 'failed';
        result(out, false, `The server cannot be reached (is chatd running?). If the erasure of ${userId} began, it goes on: erase ${userId} again to wait for it.`);
      })
      .finally(() => {
        setBusy(false);
        close();
      });
  });

  return h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'erase-title',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        if (busy) return;
        const userId = user.value.trim();
        if (userId === '') {
          result(out, false, 'Enter the id of the user to erase.');
          return;
        }
        target = userId;
        question.textContent = `Erase ${userId} for good? Every message ${userId} sent is deleted for everyone, their reactions are removed, they leave every channel, their live sessions close and their tokens stop working. This cannot be undone.`;
        confirmLabel.textContent = `Type ${userId} to confirm`;
        go.textContent = `Erase ${userId}`;
        confirm.value = '';
        go.disabled = true;
        box.hidden = false;
        result(out, true, '');
        confirm.focus();
      },
    },
    h('h2', { id: 'erase-title' }, 'Erase a user'),
    h('p', { class: 'hint' }, 'For an erasure request (GDPR Article 17): deletes everything the user left behind. Export their data first if they asked for it.'),
    lu,
    user,
    h('p', {}, ask),
    box,
    out,
  );
}
