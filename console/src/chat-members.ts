/**
 * The member list of the selected channel (a column beside the messages): every member
 * with their role and how far they have read ("read up to seq N"), read with the client's
 * `allMembers` (`GET /v1/channels/{channelId}/members`, with the user's token) when the
 * channel is opened, after a reconnect, when the user is added back, and when an entry
 * arrives from a sender the list does not have (someone joined since it was read). Read
 * watermarks move live in between: a member's `RECEIPT`s and the user's own reads are
 * taken over the list's `readSeq`.
 */
import { ChatdError, type Member, type MemberList, type WireEntry } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { h } from './dom.js';

/** What the list of one channel is: not read yet, read, or refused (with the reason in words). */
type Loaded = { readonly kind: 'list'; readonly list: MemberList } | { readonly kind: 'error'; readonly text: string };

/** The member column and the reads behind it. */
export class ChannelMembers {
  private readonly state: ChatState;
  private el: HTMLElement | undefined;
  /** The last answer per channel (shown again at once when the user comes back to it). */
  private readonly loaded = new Map<string, Loaded>();
  /** Channels being read now, and those asked to be read again when that read is done. */
  private readonly reading = new Set<string>();
  private readonly again = new Set<string>();

  constructor(state: ChatState) {
    this.state = state;
  }

  /** Makes the column (filled by `render`). */
  element(): HTMLElement {
    this.el = h('aside', { class: 'members', id: 'members', 'aria-labelledby': 'members-title' });
    return this.el;
  }

  /** Reads the selected channel's members again (opened, reconnected, added back). */
  refresh(): void {
    const id = this.state.current;
    if (id !== undefined) this.load(id);
    this.render();
  }

  /**
   * New entries in a channel: one from a sender the list does not have, newer than the
   * list (`atSeq`), means someone joined since it was read. Older ones (history from
   * members who left) change nothing.
   */
  entries(channelId: string, entries: readonly WireEntry[]): void {
    if (channelId !== this.state.current) return;
    const l = this.loaded.get(channelId);
    if (l?.kind !== 'list') return;
    const known = new Set(l.list.members.map((m) => m.userId));
    if (entries.some((e) => e.seq > l.list.atSeq && !known.has(e.senderId))) this.load(channelId);
  }

  /** Redraws the column for the selected channel. */
  render(): void {
    const el = this.el;
    if (el === undefined) return;
    const id = this.state.current;
    el.hidden = id === undefined;
    if (id === undefined) {
      el.replaceChildren();
      return;
    }
    const l = this.loaded.get(id);
    const title = h('h2', { id: 'members-title' }, l?.kind === 'list' ? `Members (${l.list.members.length})` : 'Members');
    if (l === undefined) {
      el.replaceChildren(title, h('p', { class: 'hint', id: 'members-status' }, 'Loading members…'));
      return;
    }
    if (l.kind === 'error') {
      el.replaceChildren(title, h('p', { class: 'hint', id: 'members-status' }, l.text));
      return;
    }
    el.replaceChildren(
      title,
      h('ul', { class: 'member-list', id: 'member-list', 'aria-labelledby': 'members-title' }, ...l.list.members.map((m) => this.row(m))),
    );
  }

  /** One member: name, role, and how far they read (the list's watermark or a newer one seen since). */
  private row(m: Member): HTMLElement {
    const me = m.userId === this.state.userId;
    const snap = this.state.snapshot();
    const live = me ? snap?.readSeq : snap?.receipts[m.userId]?.readSeq;
    const readSeq = Math.max(m.readSeq, live ?? 0);
    const read = readSeq > 0 ? `read up to seq ${readSeq}` : 'read nothing yet';
    return h(
      'li',
      { class: 'member', 'data-user': m.userId, 'data-role': m.role, 'data-read-seq': String(readSeq) },
      h('span', { class: 'member-name' }, me ? `${m.userId} (you)` : m.userId),
      ' ',
      h('span', { class: 'role', 'data-role': m.role }, m.role),
      h('span', { class: 'sr-only' }, ', '),
      h('span', { class: 'member-read' }, read),
    );
  }

  /** Reads a channel's members (once at a time per channel; a request meanwhile reads again after). */
  private load(id: string): void {
    if (this.reading.has(id)) {
      this.again.add(id);
      return;
    }
    this.reading.add(id);
    this.state.client.allMembers(id).then(
      (list) => {
        this.done(id, { kind: 'list', list });
      },
      (e: unknown) => {
        this.done(id, { kind: 'error', text: failureWords(e) });
      },
    );
  }

  private done(id: string, l: Loaded): void {
    this.reading.delete(id);
    if (this.state.closed) return;
    // a failure keeps a list already shown (a reconnect's read that failed tells nothing new)
    if (l.kind === 'list' || this.loaded.get(id)?.kind !== 'list' || isForbidden(l)) this.loaded.set(id, l);
    if (this.again.delete(id)) this.load(id);
    if (id === this.state.current) this.render();
  }
}

/** Whether `l` says the user is not (or no longer) a member. */
function isForbidden(l: Loaded): boolean {
  return l.kind === 'error' && l.text === FORBIDDEN;
}

const FORBIDDEN = 'You are not a member of this channel, so its members are not shown.';

/** Why the list could not be read, in words. */
function failureWords(e: unknown): string {
  if (!(e instanceof ChatdError)) return `The member list could not be read: ${e instanceof Error ? e.message : String(e)}.`;
  switch (e.code) {
    case 'forbidden':
      return FORBIDDEN;
    case 'not_found':
      return 'This server has no member list for users (it speaks a chatd protocol before 1.2).';
    case 'unavailable':
      return 'The member list could not be read (the server or its database cannot be reached); it is read again on reconnect.';
    default:
      return `The member list could not be read: ${e.message} [${e.code}].`;
  }
}
