/**
 * The member list of the selected channel (a column beside the messages): every member
 * with their role and how far they have read ("read up to seq N"), from the client's live
 * `memberList` (`GET /v1/channels/{channelId}/members` read when the channel is first
 * shown, after a reconnect and when the user is added back, with the server's `MEMBER`
 * frames folded onto it: joins, leaves, removals and roles show at once). Read watermarks
 * move live too: the members' `RECEIPT`s and the user's own reads are taken over the
 * list's `readSeq`.
 *
 * An owner or moderator of a group channel also gets controls (protocol §13.1): a form to
 * add a member (an owner picks the role), a Remove button on each member the user may
 * remove (a moderator: `member`s only; an owner: anyone else), and, for an owner, a role
 * picker on each other member (`addMember`, `removeMember`, `setMemberRole`: `PUT` and
 * `DELETE /v1/channels/{channelId}/members/{userId}`), and the moderator menu and bans list
 * of moderation (chat-moderation.ts, chat-bans.ts: mute for a time, unmute, ban, lift a
 * ban), and for an owner the channel's rules (chat-rules.ts: who posts, slow mode); every user gets Block / Unblock on the others. The server judges every change; a
 * refusal is shown under the list in its words, with its code and reason.
 */
import { ChatdError, type Member, type MemberListSnapshot, type MemberListStore, type MemberRole } from '../../clients/typescript/src/index.js';
import { BansList } from './chat-bans.js';
import { ModeratorMenu } from './chat-moderation.js';
import { ChannelRulesForm } from './chat-rules.js';
import type { ChatState } from './chat-state.js';
import { announce, h } from './dom.js';
import { refusalWords } from './words.js';

/** The roles, lowest first (protocol §13.1). */
const ROLES: readonly MemberRole[] = ['member', 'moderator', 'owner'];

/** The member column, its controls and the requests behind them. */
export class ChannelMembers {
  private readonly state: ChatState;
  private readonly menu: ModeratorMenu;
  private readonly bans: BansList;
  private readonly rules: ChannelRulesForm;
  private readonly changed: () => void;
  /** Redraws the list when the earliest mute shown ends. */
  private muteTimer: ReturnType<typeof setTimeout> | undefined;
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
  /** The selected channel's live list, and the end of its subscription. */
  private store: MemberListStore | undefined;
  private unsubscribe: (() => void) | undefined;

  /**
   * `changed` is called when the selected channel's list changed or the user blocked or
   * unblocked someone here (the messages' moderator menu and hidden messages follow both).
   */
  constructor(state: ChatState, changed: () => void) {
    this.changed = changed;
    this.state = state;
    this.bans = new BansList(state);
    this.rules = new ChannelRulesForm(state);
    this.menu = new ModeratorMenu(state, {
      run: (channelId, p, done, refused) => {
        this.change(channelId, p, done, refused);
      },
      blocksChanged: () => {
        this.shownKey = '';
        this.render();
        changed();
      },
    });
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
    this.el = h(
      'aside',
      { class: 'members', id: 'members', 'aria-labelledby': 'members-title' },
      this.titleEl,
      this.bodyEl,
      this.manageEl,
      this.actionEl,
      this.rules.element(),
      this.bans.element(),
    );
    return this.el;
  }

  /**
   * Shows the selected channel's live list (another channel was selected, or the user is in
   * it again, or no longer): the client keeps it current, read again after a reconnect.
   */
  refresh(): void {
    const id = this.state.current;
    if (this.store?.channelId !== id) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      this.store = undefined;
      if (id !== undefined) {
        const store = this.state.client.memberList(id);
        this.store = store;
        this.unsubscribe = store.subscribe(() => {
          if (this.state.closed || this.store !== store) return;
          this.render();
          this.changed();
        });
      }
    }
    this.render();
  }

  /** The view is closing: no more updates. */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.muteTimer);
  }

  /** The selected channel's snapshot changed: the rules form shows the retention now in force. */
  channelChanged(): void {
    this.rules.showRetention();
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
    const l = this.store?.channelId === id ? this.store.getSnapshot() : undefined;
    const shown = l !== undefined && (l.status === 'ready' || (l.status === 'error' && l.members.length > 0));
    const role = shown ? this.myRole(id, l) : undefined;
    const manage = role === 'owner' || role === 'moderator';
    this.titleEl.textContent = shown ? `Members (${l.members.length})` : 'Members';
    this.manageEl.hidden = !manage;
    this.bans.show(manage);
    this.rules.show(role === 'owner');
    if (this.addRole !== undefined) {
      // a moderator adds members only
      this.addRole.hidden = role !== 'owner';
      if (role !== 'owner') this.addRole.value = 'member';
    }
    if (this.actionEl !== undefined) this.actionEl.textContent = this.actionText.get(id) ?? '';
    if (!shown) {
      this.shownKey = '';
      this.bodyEl.replaceChildren(h('p', { class: 'hint', id: 'members-status' }, statusWords(l)));
      return;
    }
    const rows = l.members.map((m) => ({ m, readSeq: this.readSeqOf(m) }));
    const now = Date.now();
    const inForce = (m: Member): boolean => m.mutedUntil !== undefined && m.mutedUntil > now;
    this.redrawWhenMutesEnd(l.members, now);
    const key = JSON.stringify([id, role, rows.map((r) => [r.m.userId, r.m.role, r.readSeq, inForce(r.m) ? r.m.mutedUntil : 0, this.state.blocked.has(r.m.userId)])]);
    if (key === this.shownKey) return;
    this.shownKey = key;
    this.bodyEl.replaceChildren(
      h('ul', { class: 'member-list', id: 'member-list', 'aria-labelledby': 'members-title' }, ...rows.map((r) => this.row(id, r.m, r.readSeq, role))),
    );
  }

  /** A mute that ends takes its mark and Unmute away then: one timer for the earliest end shown. */
  private redrawWhenMutesEnd(members: readonly Member[], now: number): void {
    clearTimeout(this.muteTimer);
    this.muteTimer = undefined;
    const ends = members.map((m) => m.mutedUntil ?? 0).filter((t) => t > now);
    if (ends.length === 0 || this.state.closed) return;
    // (setTimeout's limit: a later end is checked again then)
    const wait = Math.min(Math.min(...ends) - now + 50, 2_147_483_647);
    this.muteTimer = setTimeout(() => {
      this.muteTimer = undefined;
      this.render();
    }, wait);
  }

  /** The user's role in channel `id`: its entry in the list read, else the channel list's; none in a direct channel's controls. */
  private myRole(id: string, list: MemberListSnapshot): MemberRole | undefined {
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
    const moderate = ModeratorMenu.mayModerate(myRole, m, this.state.userId) ? this.menu.moderatorControls(channelId, m) : [];
    const block = this.menu.blockControl(channelId, m.userId);
    return h(
      'li',
      { class: 'member', 'data-user': m.userId, 'data-role': m.role, 'data-read-seq': String(readSeq) },
      h('span', { class: 'member-name' }, me ? `${m.userId} (you)` : m.userId),
      ' ',
      h('span', { class: 'role', 'data-role': m.role }, m.role),
      h('span', { class: 'sr-only' }, ', '),
      h('span', { class: 'member-read' }, read),
      this.menu.mutedMark(m),
      roleControl !== null || mayRemove || moderate.length > 0 || block !== null
        ? h(
            'span',
            { class: 'member-controls' },
            roleControl,
            ...moderate,
            mayRemove ? h('button', { type: 'button', class: 'member-remove', 'aria-label': `Remove ${m.userId}`, onclick: remove }, 'Remove') : null,
            block,
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

  /**
   * A member change in flight: its outcome in words under the list. The list itself follows
   * the server's `MEMBER` frame; after a refusal it is read again (what the user saw may be
   * out of date), and a refused role picker goes back to the role the member has.
   */
  private change(channelId: string, p: Promise<void>, done: string, refused: string, onDone?: () => void): void {
    this.say(channelId, 'Saving…');
    p.then(
      () => {
        if (this.state.closed) return;
        onDone?.();
        this.say(channelId, done);
        announce(done);
        this.bans.changed(channelId);
      },
      (e: unknown) => {
        if (this.state.closed) return;
        this.say(channelId, refusalWords(refused, e));
        this.shownKey = '';
        this.state.client.memberList(channelId).refresh();
        this.render();
      },
    );
  }

  /** Sets the action line of a channel (shown when it is the selected one). */
  private say(channelId: string, text: string): void {
    this.actionText.set(channelId, text);
    if (channelId === this.state.current && this.actionEl !== undefined) this.actionEl.textContent = text;
  }
}

/** What the column says while it shows no list: loading, the user not in the channel, or why the read failed. */
function statusWords(l: MemberListSnapshot | undefined): string {
  if (l === undefined || l.status === 'loading' || l.status === 'ready') return 'Loading members…';
  if (l.status === 'removed') return FORBIDDEN;
  return failureWords(l.error);
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
