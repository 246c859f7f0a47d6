/**
 * The thread panel (protocol §14): a root message and its replies beside the selected
 * channel's messages, from the client's thread store (each reply once and in order, the
 * user's unsent replies pending, then sent), with "Load older replies", its own composer
 * (Enter sends into the thread) and Close. Opened from a root's "N replies" button or its
 * "Thread" action; closed when another channel is selected.
 */
import { attachmentsElement } from './chat-attach.js';
import type { Message, OutgoingMessage, ThreadSnapshot, ThreadStore } from '../../clients/typescript/src/index.js';
import { deleteControl } from './chat-delete.js';
import { quoteElement } from './chat-quote.js';
import type { ChatState } from './chat-state.js';
import { clock, h } from './dom.js';
import { errorText, errorWords } from './words.js';

/** The thread panel of the selected channel. */
export class ThreadPanel {
  private readonly state: ChatState;
  private open: { channelId: string; rootId: string; store: ThreadStore; unsub: () => void } | undefined;
  private panelEl: HTMLElement | undefined;
  private listEl: HTMLOListElement | undefined;
  private rootEl: HTMLElement | undefined;
  private olderBtn: HTMLButtonElement | undefined;
  private statusEl: HTMLElement | undefined;
  private textarea: HTMLTextAreaElement | undefined;

  constructor(state: ChatState) {
    this.state = state;
  }

  /** The thread shown, if any. */
  get rootId(): string | undefined {
    return this.open?.rootId;
  }

  /** Opens the thread of `root` (in the selected channel): the panel shows it at once. */
  show(root: Message): void {
    if (this.open?.rootId === root.messageId) {
      this.textarea?.focus();
      return;
    }
    this.hide();
    const store = this.state.client.thread(root.channelId, root.messageId);
    const unsub = store.subscribe(() => {
      this.render();
    });
    this.open = { channelId: root.channelId, rootId: root.messageId, store, unsub };
    this.build();
    this.render();
    this.textarea?.focus();
  }

  /** Closes the panel. */
  hide(): void {
    this.open?.unsub();
    this.open = undefined;
    this.panelEl?.remove();
    this.panelEl = undefined;
    this.listEl = undefined;
  }

  /** The pane was built anew: the panel (when a thread of this channel is open) goes back into it. */
  attach(pane: HTMLElement): void {
    if (this.open === undefined) return;
    if (this.open.channelId !== this.state.current) {
      this.hide();
      return;
    }
    this.build(pane);
    this.render();
  }

  private build(pane: HTMLElement | null = document.getElementById('pane')): void {
    const open = this.open;
    if (open === undefined) return;
    this.panelEl?.remove();
    this.rootEl = h('div', { class: 'thread-root', id: 'thread-root' });
    this.olderBtn = h(
      'button',
      {
        type: 'button',
        class: 'older',
        id: 'thread-older',
        hidden: true,
        onclick: () => {
          open.store.loadOlder().catch((e: unknown) => {
            if (this.statusEl !== undefined) this.statusEl.textContent = errorText(e);
          });
        },
      },
      'Load older replies',
    );
    this.listEl = h('ol', { class: 'messages thread-messages', id: 'thread-messages', role: 'log', 'aria-label': 'Replies in this thread' });
    this.statusEl = h('div', { class: 'thread-status', id: 'thread-status', 'aria-live': 'polite' });
    const textarea = h('textarea', { id: 'thread-composer', rows: 1, 'aria-label': 'Reply in this thread', placeholder: 'Reply in thread (Enter sends)' });
    textarea.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        this.submit();
      } else if (ev.key === 'Escape') {
        ev.preventDefault();
        this.hide();
      }
    });
    this.textarea = textarea;
    this.panelEl = h(
      'aside',
      { class: 'thread-panel', id: 'thread', 'data-root': open.rootId, 'aria-label': 'Thread' },
      h(
        'div',
        { class: 'thread-head' },
        h('h3', {}, 'Thread'),
        h(
          'button',
          {
            type: 'button',
            id: 'thread-close',
            'aria-label': 'Close the thread',
            onclick: () => {
              this.hide();
            },
          },
          '✕',
        ),
      ),
      this.rootEl,
      this.olderBtn,
      this.listEl,
      this.statusEl,
      h(
        'div',
        { class: 'composer' },
        textarea,
        h(
          'button',
          {
            type: 'button',
            class: 'primary',
            id: 'thread-send',
            onclick: () => {
              this.submit();
            },
          },
          'Reply',
        ),
      ),
    );
    pane?.append(this.panelEl);
  }

  /** Draws the root, the replies and the user's unsent replies. */
  render(): void {
    const open = this.open;
    const list = this.listEl;
    if (open === undefined || list === undefined) return;
    const snap = open.store.getSnapshot();
    if (this.rootEl !== undefined) this.rootEl.replaceChildren(...(snap.root === undefined ? [] : [this.item(snap.root)]));
    const items: HTMLElement[] = snap.messages.map((m) => this.item(m));
    for (const o of snap.outgoing) items.push(this.outgoingItem(o));
    if (snap.status === 'ready' && items.length === 0) items.push(h('li', { class: 'empty' }, 'No replies yet.'));
    list.replaceChildren(...items);
    list.scrollTop = list.scrollHeight;
    if (this.olderBtn !== undefined) this.olderBtn.hidden = !snap.hasOlder;
    if (this.statusEl !== undefined) this.statusEl.textContent = statusWords(snap);
    if (this.panelEl !== undefined) this.panelEl.dataset.status = snap.status;
    if (snap.status === 'removed' || snap.status === 'failed') {
      if (this.textarea !== undefined) this.textarea.disabled = true;
    }
  }

  private submit(): void {
    const open = this.open;
    const c = this.textarea;
    if (open === undefined || c === undefined) return;
    const body = c.value;
    if (body.trim() === '') return;
    c.value = '';
    open.store.send(body).catch(() => {
      /* shown on the reply itself: failed, with Retry */
    });
  }

  /** A stored message of the thread (or its root). */
  private item(m: Message): HTMLElement {
    const mine = m.senderId === this.state.userId;
    const li = h(
      'li',
      {
        class: 'msg',
        'data-message-id': m.messageId,
        'data-seq': m.seq,
        'data-sender': m.senderId,
        'data-mine': String(mine),
        'data-state': 'sent',
        'data-deleted': String(m.deleted),
        'data-expired': String(m.expired),
      },
      h('div', { class: 'msg-head' }, h('span', { class: 'sender' }, mine ? `${m.senderId} (you)` : m.senderId)),
      m.replyPreview !== undefined && !m.deleted ? quoteElement(m.replyPreview, m.replyTo) : null,
      h('div', { class: 'body' }, m.expired ? 'This message expired.' : m.deleted ? 'This message was deleted.' : m.body),
      m.attachments.length > 0 ? attachmentsElement(this.state.client, m) : null,
      h('div', { class: 'meta' }, h('time', { datetime: new Date(m.ts).toISOString() }, clock(m.ts)), m.editedAt !== undefined && !m.deleted ? h('span', { class: 'edited' }, '(edited)') : null),
    );
    if (!m.deleted && this.state.client.mayDelete(m) && this.state.supports('MSG_DELETE')) {
      li.append(
        h(
          'div',
          { class: 'actions' },
          deleteControl(m.messageId, mine ? 'Delete this reply' : `Delete ${m.senderId}’s reply (as moderator)`, !mine, () => {
            this.state.client.deleteMessage(m.channelId, m.messageId).catch((e: unknown) => {
              if (this.statusEl !== undefined) this.statusEl.textContent = errorText(e);
            });
          }),
        ),
      );
    }
    return li;
  }

  /** One of the user's replies not yet stored: pending, sent, or failed with Retry. */
  private outgoingItem(o: OutgoingMessage): HTMLElement {
    const me = this.state.userId;
    const words = o.state === 'pending' ? '⏳ pending' : o.state === 'sent' ? '✓ sent' : '⚠ failed';
    const li = h(
      'li',
      { class: 'msg', 'data-client-msg-id': o.clientMsgId, 'data-mine': 'true', 'data-sender': me, 'data-state': o.state },
      h('div', { class: 'msg-head' }, h('span', { class: 'sender' }, `${me} (you)`)),
      h('div', { class: 'body' }, o.body),
      h('div', { class: 'meta' }, h('span', { class: 'state', 'data-state': o.state }, words)),
    );
    if (o.state === 'failed') {
      li.append(
        h('div', { class: 'meta error' }, errorWords(o.error?.code ?? 'internal', o.error?.message ?? 'failed', o.error?.reason)),
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              class: 'retry',
              onclick: () => {
                this.state.client.retry(o.clientMsgId).catch(() => undefined);
              },
            },
            'Retry',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'discard',
              onclick: () => {
                void this.state.client.discard(o.clientMsgId);
              },
            },
            'Discard',
          ),
        ),
      );
    }
    return li;
  }
}

/** What the panel says under the replies. */
function statusWords(s: ThreadSnapshot): string {
  switch (s.status) {
    case 'loading':
      return 'Loading replies…';
    case 'failed':
      return `This thread cannot be shown: ${errorWords(s.error?.code ?? 'internal', s.error?.message ?? 'refused')}`;
    case 'removed':
      return 'You are no longer in this channel.';
    case 'ready':
      return '';
  }
}
