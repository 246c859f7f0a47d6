/**
 * Mentions in the chat view (protocol §16): the `@` autocomplete under the composer (the
 * selected channel's members whose id starts with what follows `@`; a click, Tab or Enter
 * puts `@id ` in), the `mentions`/`mentionAll` a send carries (the members named `@id` in
 * its text; `@channel` or `@all` from a moderator or owner), and a message body with its
 * mentions highlighted (built of text nodes only).
 */
import type { ChatState } from './chat-state.js';
import { h } from './dom.js';

/** The most members the autocomplete offers at once. */
const MAX_OPTIONS = 8;

/** The words that mention every member (for a moderator or owner). */
const ALL_WORDS = new Set(['channel', 'all']);

/** `@word` tokens of a text: the word after each `@` that starts the text or follows a space. */
export function atWords(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(^|\s)@([^\s@]+)/g)) {
    const w = (m[2] ?? '').replace(/[.,;:!?)]+$/, '');
    if (w !== '') out.push(w);
  }
  return out;
}

/** The channel members' ids the console knows (its member list, once read). */
function memberIds(state: ChatState, channelId: string): string[] {
  return state.client
    .memberList(channelId)
    .getSnapshot()
    .members.map((m) => m.userId);
}

/** The mention fields of a send of `body` in `channelId`: members named `@id`; `@channel`/`@all` from a moderator or owner. */
export function mentionsOf(state: ChatState, channelId: string, body: string): { mentions?: string[]; mentionAll?: boolean } {
  const words = atWords(body);
  const members = new Set(memberIds(state, channelId));
  const mentions = [...new Set(words.filter((w) => members.has(w)))];
  const role = state.summary(channelId)?.role ?? 'member';
  const all = role !== 'member' && words.some((w) => ALL_WORDS.has(w) && !members.has(w));
  return { ...(mentions.length > 0 ? { mentions } : {}), ...(all ? { mentionAll: true } : {}) };
}

/**
 * A message body with each `@word` that names a member in `mentions` (or `@channel`/`@all`
 * of a message that mentions all) in a `.mention` span; `.mention-me` for the user's own id.
 */
export function bodyWithMentions(body: string, mentions: readonly string[], mentionAll: boolean, me: string): (string | HTMLElement)[] {
  const out: (string | HTMLElement)[] = [];
  let last = 0;
  for (const m of body.matchAll(/(^|\s)@([^\s@]+)/g)) {
    const raw = m[2] ?? '';
    const word = raw.replace(/[.,;:!?)]+$/, '');
    const named = mentions.includes(word) || (mentionAll && ALL_WORDS.has(word));
    if (!named) continue;
    const start = m.index + (m[1] ?? '').length;
    if (start > last) out.push(body.slice(last, start));
    const mine = word === me || (mentionAll && ALL_WORDS.has(word));
    out.push(h('span', { class: mine ? 'mention mention-me' : 'mention', 'data-user': word }, `@${word}`));
    last = start + 1 + word.length;
  }
  if (last < body.length) out.push(body.slice(last));
  return out;
}

/** The `@` autocomplete of the composer's textarea. */
export class MentionPicker {
  private readonly state: ChatState;
  private textarea: HTMLTextAreaElement | undefined;
  private listEl: HTMLElement | undefined;
  /** The options shown, and the one Tab or Enter picks. */
  private options: string[] = [];
  private active = 0;

  constructor(state: ChatState) {
    this.state = state;
  }

  /** Attaches to the composer's textarea; returns the (hidden) list of options to put under it. */
  attach(textarea: HTMLTextAreaElement): HTMLElement {
    this.textarea = textarea;
    this.options = [];
    textarea.setAttribute('aria-autocomplete', 'list');
    textarea.setAttribute('aria-controls', 'mention-options');
    this.listEl = h('ul', { class: 'mention-options', id: 'mention-options', role: 'listbox', 'aria-label': 'Members to mention', hidden: true });
    return this.listEl;
  }

  /** The `@prefix` being typed just before the cursor, if any. */
  private prefix(): { start: number; text: string } | undefined {
    const c = this.textarea;
    if (c === undefined) return undefined;
    const before = c.value.slice(0, c.selectionStart);
    const m = /(^|\s)@([^\s@]*)$/.exec(before);
    if (m === null) return undefined;
    return { start: before.length - (m[2] ?? '').length - 1, text: m[2] ?? '' };
  }

  /** The text changed: shows the members matching the `@prefix` at the cursor (or hides the list). */
  update(): void {
    const id = this.state.current;
    const p = this.prefix();
    if (id === undefined || p === undefined) {
      this.hide();
      return;
    }
    const me = this.state.userId;
    const role = this.state.summary(id)?.role ?? 'member';
    const ids = memberIds(this.state, id).filter((u) => u !== me);
    if (role !== 'member') ids.push('channel');
    this.options = ids.filter((u) => u.toLowerCase().startsWith(p.text.toLowerCase())).slice(0, MAX_OPTIONS);
    this.active = 0;
    this.render();
  }

  /** Keys while the list shows: arrows move, Tab or Enter picks, Escape hides. True when the key was taken. */
  onKey(ev: KeyboardEvent): boolean {
    if (this.options.length === 0) return false;
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      this.active = (this.active + (ev.key === 'ArrowDown' ? 1 : this.options.length - 1)) % this.options.length;
      this.render();
    } else if (ev.key === 'Tab' || (ev.key === 'Enter' && !ev.shiftKey)) {
      this.pick(this.options[this.active] ?? '');
    } else if (ev.key === 'Escape') {
      this.hide();
    } else {
      return false;
    }
    ev.preventDefault();
    return true;
  }

  /** Hides the list. */
  hide(): void {
    this.options = [];
    this.render();
  }

  /** Replaces the `@prefix` at the cursor with `@userId `. */
  private pick(userId: string): void {
    const c = this.textarea;
    const p = this.prefix();
    if (c === undefined || p === undefined || userId === '') return;
    const after = c.value.slice(c.selectionStart);
    const head = `${c.value.slice(0, p.start)}@${userId} `;
    c.value = head + after;
    c.setSelectionRange(head.length, head.length);
    this.hide();
    c.focus();
  }

  private render(): void {
    const el = this.listEl;
    if (el === undefined) return;
    el.hidden = this.options.length === 0;
    el.replaceChildren(
      ...this.options.map((u, i) =>
        h(
          'li',
          {
            role: 'option',
            class: 'mention-option',
            'data-user': u,
            'aria-selected': String(i === this.active),
            onmousedown: (ev: Event) => {
              // before the textarea loses focus
              ev.preventDefault();
              this.pick(u);
            },
          },
          u === 'channel' ? '@channel (everyone here)' : `@${u}`,
        ),
      ),
    );
  }
}
