/**
 * The composer: the textarea and Send button under the messages. Enter sends (Shift+Enter
 * makes a new line); typing sends TYPING; Edit on a message puts it here to be changed
 * (Enter saves, Escape cancels and gives back the draft); Reply on a message makes the next
 * send quote it (shown above the composer; Escape cancels). A send that fails is shown on
 * the message itself (failed, with Retry), not here. Typing `@` offers the channel's
 * members (chat-mentions.ts); a send mentions the members it names. Files picked with 📎,
 * pasted or dropped go into the tray above it (chat-attach.ts), uploaded at once, and are
 * sent with the next message (whose text may then be empty); Send waits for the uploads.
 */
import { cutUtf8, type Message } from '../../clients/typescript/src/index.js';
import { AttachmentTray } from './chat-attach.js';
import { MentionPicker, mentionsOf } from './chat-mentions.js';
import { quoteElement } from './chat-quote.js';
import type { ChatState } from './chat-state.js';
import { h } from './dom.js';

/** What the composer needs from the view. */
export interface ComposerHooks {
  /** Saves an edit of the user's message. */
  edit(channelId: string, messageId: string, body: string): void;
  /** A while after typing: the client may have learned that TYPING is not supported, so redraw the notice. */
  typed(): void;
}

/** The composer of the selected channel. */
export class Composer {
  private readonly state: ChatState;
  private readonly hooks: ComposerHooks;
  private textarea: HTMLTextAreaElement | undefined;
  private sendBtn: HTMLButtonElement | undefined;
  private editingEl: HTMLElement | undefined;
  /** The message being edited, and the draft the composer held before. */
  private editing: { channelId: string; messageId: string; draft: string } | undefined;
  /** The message the next send quotes (Reply on it), until sent or cancelled. */
  private replying: Message | undefined;
  private replyingEl: HTMLElement | undefined;
  /** The `@` autocomplete under the textarea. */
  private readonly picker: MentionPicker;
  /** The files to send with the next message. */
  private readonly tray: AttachmentTray;

  constructor(state: ChatState, hooks: ComposerHooks) {
    this.state = state;
    this.hooks = hooks;
    this.picker = new MentionPicker(state);
    this.tray = new AttachmentTray(state.client, () => {
      this.updateSend();
    });
  }

  /** Makes the tray of files to send of a newly built pane (above the composer). */
  trayElement(): HTMLElement {
    return this.tray.element();
  }

  /** Files pasted or dropped on `el` (the message list) go into the tray too. */
  acceptFiles(el: HTMLElement): void {
    this.tray.acceptFrom(el);
  }

  /** Send waits while a file is uploading. */
  private updateSend(): void {
    if (this.sendBtn === undefined || this.textarea?.disabled === true) return;
    const busy = this.tray.busy();
    this.sendBtn.disabled = busy;
    this.sendBtn.title = busy ? 'Waiting for the files to upload' : '';
  }

  /** Makes the "Editing a message" line of a newly built pane. */
  editingElement(): HTMLElement {
    this.editingEl = h('div', { class: 'editing', id: 'editing', 'aria-live': 'polite' });
    return this.editingEl;
  }

  /** Makes the "Replying to" line of a newly built pane (the quote, and a button that cancels). */
  replyingElement(): HTMLElement {
    this.replyingEl = h('div', { class: 'replying', id: 'replying', hidden: true });
    this.renderReplying();
    return this.replyingEl;
  }

  /** Makes the next send a reply quoting `m` (shown above the composer; Escape or ✕ cancels). */
  startReply(m: Message): void {
    if (this.editing !== undefined) this.endEdit();
    this.replying = m;
    this.renderReplying();
    this.textarea?.focus();
  }

  private cancelReply(): void {
    this.replying = undefined;
    this.renderReplying();
  }

  private renderReplying(): void {
    const el = this.replyingEl;
    if (el === undefined) return;
    const m = this.replying;
    el.hidden = m === undefined;
    if (m === undefined) {
      el.replaceChildren();
      return;
    }
    el.dataset.replyTo = m.messageId;
    el.replaceChildren(
      h('span', {}, 'Replying to '),
      quoteElement({ senderId: m.senderId, body: cutUtf8(m.body) }, m.messageId),
      h(
        'button',
        {
          type: 'button',
          id: 'reply-cancel',
          'aria-label': 'Cancel the reply',
          onclick: () => {
            this.cancelReply();
          },
        },
        '✕',
      ),
    );
  }

  /** Makes the composer (textarea and Send) of a newly built pane for channel `id`. */
  element(id: string): HTMLElement {
    const textarea = h('textarea', {
      id: 'composer',
      rows: 1,
      'aria-label': `Message to ${this.state.label(id).slice(2)}`,
      placeholder: `Message ${this.state.label(id)} (Enter sends, Shift+Enter for a new line)`,
    });
    textarea.addEventListener('keydown', (ev) => {
      this.onKey(ev);
    });
    textarea.addEventListener('input', () => {
      this.onInput();
    });
    this.textarea = textarea;
    this.sendBtn = h(
      'button',
      {
        type: 'button',
        class: 'primary',
        id: 'send',
        onclick: () => {
          this.submit();
        },
      },
      'Send',
    );
    const options = this.picker.attach(textarea);
    const el = h('div', { class: 'composer' }, this.tray.button(id), textarea, this.sendBtn, options);
    this.tray.acceptFrom(el);
    this.updateSend();
    return el;
  }

  /** Puts the cursor in the composer. */
  focus(): void {
    this.textarea?.focus();
  }

  /** Another channel is selected: no edit or reply goes on (its pane is built anew). */
  forgetEdit(): void {
    this.editing = undefined;
    this.replying = undefined;
  }

  /** No more sending in this channel (the user is not a member any more). */
  disable(): void {
    if (this.textarea !== undefined) this.textarea.disabled = true;
    if (this.sendBtn !== undefined) this.sendBtn.disabled = true;
    this.tray.disable();
  }

  /** Puts `m` into the composer to edit it (the draft is kept for later). */
  startEdit(m: Message): void {
    const c = this.textarea;
    if (c === undefined) return;
    this.editing = { channelId: m.channelId, messageId: m.messageId, draft: this.editing?.draft ?? c.value };
    c.value = m.body;
    c.setAttribute('aria-label', 'Edit your message');
    if (this.editingEl !== undefined) this.editingEl.textContent = 'Editing a message: Enter saves, Escape cancels.';
    if (this.sendBtn !== undefined) this.sendBtn.textContent = 'Save';
    c.focus();
  }

  /** The channel's name on screen changed (a direct channel's other user became known): say it in the composer too. */
  relabel(): void {
    const c = this.textarea;
    const id = this.state.current;
    if (c === undefined || id === undefined) return;
    const label = this.state.label(id);
    c.placeholder = `Message ${label} (Enter sends, Shift+Enter for a new line)`;
    if (this.editing === undefined) c.setAttribute('aria-label', `Message to ${label.slice(2)}`);
  }

  /** Ends an edit and gives back the draft. */
  private endEdit(): void {
    const c = this.textarea;
    const draft = this.editing?.draft ?? '';
    this.editing = undefined;
    if (c !== undefined) {
      c.value = draft;
      c.setAttribute('aria-label', `Message to ${this.state.current === undefined ? '' : this.state.label(this.state.current).slice(2)}`);
    }
    if (this.editingEl !== undefined) this.editingEl.textContent = '';
    if (this.sendBtn !== undefined) this.sendBtn.textContent = 'Send';
  }

  private onKey(ev: KeyboardEvent): void {
    if (this.picker.onKey(ev)) return;
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      this.submit();
    } else if (ev.key === 'Escape' && this.editing !== undefined) {
      ev.preventDefault();
      this.endEdit();
    } else if (ev.key === 'Escape' && this.replying !== undefined) {
      ev.preventDefault();
      this.cancelReply();
    }
  }

  private onInput(): void {
    this.picker.update();
    const store = this.state.currentStore();
    if (store === undefined || this.editing !== undefined || !this.state.supports('TYPING')) return;
    if (this.textarea?.value === '') store.stopTyping();
    else store.typing();
    // the client learns from the server's answer whether TYPING is known
    setTimeout(() => {
      this.hooks.typed();
    }, 300);
  }

  /** Sends the composer's text (or saves the edit). */
  private submit(): void {
    const c = this.textarea;
    const id = this.state.current;
    if (c === undefined || id === undefined) return;
    const body = c.value;
    const editing = this.editing;
    const files = editing === undefined ? this.tray.ready() : [];
    if (body.trim() === '' && files.length === 0) return;
    if (editing === undefined && this.tray.busy()) return;
    if (editing !== undefined) {
      this.endEdit();
      c.value = '';
      this.hooks.edit(editing.channelId, editing.messageId, body);
      return;
    }
    c.value = '';
    this.picker.hide();
    const replyTo = this.replying?.channelId === id ? this.replying.messageId : undefined;
    this.cancelReply();
    this.tray.clear();
    this.state.stores
      .get(id)
      ?.send(body.trim() === '' ? '' : body, {
        ...(replyTo === undefined ? {} : { replyTo }),
        ...mentionsOf(this.state, id, body),
        ...(files.length > 0 ? { attachments: files } : {}),
      })
      .catch(() => {
        /* shown on the message itself: failed, with Retry */
      });
  }
}
