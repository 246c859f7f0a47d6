/**
 * The member list of the selected channel (a column beside the messages): every member
 * with their role and how far they have read ("read up to seq N"), read with the client's
 * `allMembers` (`GET /v1/channels/{channelId}/members`, with the user's token) when the
 * channel is opened, after a reconnect, when the user is added back, after the user's own
 * member changes, and when an entry arrives from a sender the list does not have (someone
 * joined since it was read). Read watermarks move live in between: a member's `RECEIPT`s
 * and the user's own reads are taken over the list's `readSeq`.
 *
 * An owner or moderator of a group channel also gets controls (protocol §13.1): a form to
 * add a member (an owner picks the role), a Remove button on each member the user may
 * remove (a moderator: `member`s only; an owner: anyone else), and, for an owner, a role
 * picker on each other member (`addMember`, `removeMember`, `setMemberRole`: `PUT` and
 * `DELETE /v1/channels/{channelId}/members/{userId}`). The server judges every change; a
 * refusal is shown under the list in its words, with its code and reason.
 */
import { ChatdError, type Member, type MemberList, type MemberRole, type WireEntry } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { announce, h } from './dom.js';
import { refusalWords } from './words.js';

/** The roles, lowest first (protocol §13.1). */
const ROLES: readonly MemberRole[] = ['member', 'moderator', 'owner'];

/** What the list of one channel is: not read yet, read, or refused (with the reason in words). */
type Loaded = { readonly kind: 'list'; readonly list: MemberList } | { readonly kind: 'error'; readonly text: string };

/** The member column, its controls and the requests behind them. */
export class ChannelMembers {
  private readonly state: ChatState;
  private el: HTMLElement | undefined;
  /** The column's parts, made once: the title, the list (or why there is none), the add form, the action line. */
  private titleEl: HTMLElement | undefined;
  private bodyEl: HTMLElement | undefined;
  private manageEl: HTMLElement | undefined;
  private addRole: HTMLSelectElement | undefined;
  private actionEl: HTMLElement | undefined;
  /** What the list shows now (channel, members, roles, reads, controls), to skip redrawing the same. */
  private shownKey = '';
  /** The last member change's outcome per channel, in words. */
  private readonly actionText = new Map<string, string>();
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
    this.titleEl = h('h2', { id: 'members-title' }, 'Members');
    this.bodyEl = h('div', { id: 'members-body' });
    const user = h('input', { id: 'member-add-user', type: 'text', autocomplete: 'off', placeholder: 'user id', 'aria-label': 'User id to add' });
    this.addRole = h(
      'select',
      { id: 'member-add-role', 'aria-label': 'Role of the new member' },
      ...ROLES.map((r) => h('option', { value: r }, r)),
    );
    const form = h(
      'form',
      { class: 'member-add', id: 'member-add-form', 'aria-label': 'Add a member' },
      user,
      this.addRole,
      h('button', { type: 'submit', id: 'member-add' }, 'Add'),
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.add(user);
    });
    this.manageEl = h('div', { class: 'member-manage', id: 'member-manage', hidden: true }, h('h3', {}, 'Add a member'), form);
    this.actionEl = h('p', { class: 'hint', id: 'member-action-status', role: 'status' });
    this.el = h('aside', { class: 'members', id: 'members', 'aria-labelledby': 'members-title' }, this.titleEl, this.bodyEl, this.manageEl, this.actionEl);
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

  /** Redraws the column for the selected channel (the add form keeps what is typed in it). */
  render(): void {
    const el = this.el;
    if (el === undefined || this.titleEl === undefined || this.bodyEl === undefined || this.manageEl === undefined) return;
    const id = this.state.current;
    el.hidden = id === undefined;
    if (id === undefined) {
      this.bodyEl.replaceChildren();
      this.shownKey = '';
      return;
    }
    const l = this.loaded.get(id);
    const role = l?.kind === 'list' ? this.myRole(id, l.list) : undefined;
    const manage = role === 'owner' || role === 'moderator';
    this.titleEl.textContent = l?.kind === 'list' ? `Members (${l.list.members.length})` : 'Members';
    this.manageEl.hidden = !manage;
    if (this.addRole !== undefined) {
      // a moderator adds members only
      this.addRole.hidden = role !== 'owner';
      if (role !== 'owner') this.addRole.value = 'member';
    }
    if (this.actionEl !== undefined) this.actionEl.textContent = this.actionText.get(id) ?? '';
    if (l === undefined || l.kind === 'error') {
      this.shownKey = '';
      this.bodyEl.replaceChildren(h('p', { class: 'hint', id: 'members-status' }, l === undefined ? 'Loading members…' : l.text));
      return;
    }
    const rows = l.list.members.map((m) => ({ m, readSeq: this.readSeqOf(m) }));
    const key = JSON.stringify([id, role, rows.map((r) => [r.m.userId, r.m.role, r.readSeq])]);
    if (key === this.shownKey) return;
    this.shownKey = key;
    this.bodyEl.replaceChildren(
      h('ul', { class: 'member-list', id: 'member-list', 'aria-labelledby': 'members-title' }, ...rows.map((r) => this.row(id, r.m, r.readSeq, role))),
    );
  }

  /** The user's role in channel `id`: its entry in the list read, else the channel list's; none in a direct channel's controls. */
  private myRole(id: string, list: MemberList): MemberRole | undefined {
    const s = this.state.summary(id);
    if (s?.kind === 'direct') return undefined;
    return list.members.find((m) => m.userId === this.state.userId)?.role ?? s?.role;
  }

  /** How far a member read: the list's watermark or a newer one seen since. */
  private readSeqOf(m: Member): number {
    const snap = this.state.snapshot();
    const live = m.userId === this.state.userId ? snap?.readSeq : snap?.receipts[m.userId]?.readSeq;
    return Math.max(m.readSeq, live ?? 0);
  }

  /** One member: name, role, how far they read, and the controls the user's role allows. */
  private row(channelId: string, m: Member, readSeq: number, myRole: MemberRole | undefined): HTMLElement {
    const me = m.userId === this.state.userId;
    const read = readSeq > 0 ? `read up to seq ${readSeq}` : 'read nothing yet';
    const owner = myRole === 'owner';
    const mayRemove = !me && (owner || (myRole === 'moderator' && m.role === 'member'));
    let roleControl: HTMLElement | null = null;
    if (owner && !me) {
      const select = h(
        'select',
        { class: 'member-role-select', 'aria-label': `Role of ${m.userId}` },
        ...ROLES.map((r) => h('option', { value: r, selected: r === m.role }, r)),
      );
      select.addEventListener('change', () => {
        this.setRole(channelId, m.userId, select.value);
      });
      roleControl = select;
    }
    const remove = (): void => {
      this.remove(channelId, m.userId);
    };
    return h(
      'li',
      { class: 'member', 'data-user': m.userId, 'data-role': m.role, 'data-read-seq': String(readSeq) },
      h('span', { class: 'member-name' }, me ? `${m.userId} (you)` : m.userId),
      ' ',
      h('span', { class: 'role', 'data-role': m.role }, m.role),
      h('span', { class: 'sr-only' }, ', '),
      h('span', { class: 'member-read' }, read),
      roleControl !== null || mayRemove
        ? h(
            'span',
            { class: 'member-controls' },
            roleControl,
            mayRemove ? h('button', { type: 'button', class: 'member-remove', 'aria-label': `Remove ${m.userId}`, onclick: remove }, 'Remove') : null,
          )
        : null,
    );
  }

  /** Add: the user typed, with the role picked (an owner's), to the selected channel. */
  private add(input: HTMLInputElement): void {
    const id = this.state.current;
    const user = input.value.trim();
    if (id === undefined) return;
    if (user === '') {
      this.say(id, 'Type the user id of the member to add.');
      return;
    }
    // (an owner's pick; `member` is the default, and keeps the role of one who is a member already)
    const picked = this.addRole?.hidden === false ? this.addRole.value : 'member';
    const options = picked === 'member' ? {} : { role: picked };
    const done = `${user} was added${picked === 'member' ? '' : ` as ${picked}`}.`;
    this.change(id, this.state.client.addMember(id, user, options), done, `${user} was not added`, () => {
      input.value = '';
    });
  }

  private setRole(channelId: string, user: string, role: MemberRole): void {
    this.change(channelId, this.state.client.setMemberRole(channelId, user, role), `${user} is now ${role}.`, `The role of ${user} was not changed`);
  }

  private remove(channelId: string, user: string): void {
    this.change(channelId, this.state.client.removeMember(channelId, user), `${user} was removed.`, `${user} was not removed`);
  }

  /** A member change in flight: its outcome in words under the list, and the list read again either way. */
  private change(channelId: string, p: Promise<void>, done: string, refused: string, onDone?: () => void): void {
    this.say(channelId, 'Saving…');
    p.then(
      () => {
        if (this.state.closed) return;
        onDone?.();
        this.say(channelId, done);
        announce(done);
        this.load(channelId);
      },
      (e: unknown) => {
        if (this.state.closed) return;
        this.say(channelId, refusalWords(refused, e));
        // a refused role picker goes back to the role the member has
        this.shownKey = '';
        this.load(channelId);
      },
    );
  }

  /** Sets the action line of a channel (shown when it is the selected one). */
  private say(channelId: string, text: string): void {
    this.actionText.set(channelId, text);
    if (channelId === this.state.current && this.actionEl !== undefined) this.actionEl.textContent = text;
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
