/**
 * Who is around in the selected channel: the people seen in it with presence dots (the
 * pane's header), the "… is typing" line, and the presence subscription (PRESENCE_SUB)
 * for everyone seen in any opened channel.
 *
 * "People" are the senders, readers and typers seen here (the members themselves, with
 * their roles, are chat-members.ts's list).
 */
import type { ChannelSnapshot, Presence } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { h } from './dom.js';

/** A user's presence dot (online, offline or unknown), named for screen readers. */
export function presenceDot(user: string, presence: Readonly<Record<string, Presence>>): HTMLElement {
  const p = presence[user];
  const status = p?.status ?? 'unknown';
  const words = status === 'online' ? 'online' : status === 'offline' ? 'offline' : 'presence unknown';
  return h('span', { class: 'dot', 'data-status': status, 'data-user': user, role: 'img', 'aria-label': `${user} is ${words}`, title: words });
}

/**
 * The presence to show: the server's, with the user's own status from the connection
 * (online while the session is open, offline while the server cannot be reached: the
 * server never sends users their own presence).
 */
export function presenceWithMe(state: ChatState): Readonly<Record<string, Presence>> {
  const open = state.client.connection.getSnapshot().state === 'open';
  return { ...state.client.presence.getSnapshot(), [state.userId]: { status: open ? 'online' : 'offline', lastSeenAt: undefined } };
}

/** The people header, the typing line and the presence subscription. */
export class People {
  private readonly state: ChatState;
  private peopleEl: HTMLElement | undefined;
  private typingEl: HTMLElement | undefined;
  /** The users last subscribed to, joined (to skip a subscription that changes nothing). */
  private presenceIds = '';

  constructor(state: ChatState) {
    this.state = state;
  }

  /** Makes the people header of a newly built pane. */
  peopleElement(): HTMLElement {
    this.peopleEl = h('div', {
      class: 'people',
      id: 'people',
      'aria-label': 'People seen in this channel',
      title: 'People seen in this channel (who sent, read or typed here), with their presence',
    });
    return this.peopleEl;
  }

  /** Makes the typing line of a newly built pane. */
  typingElement(): HTMLElement {
    this.typingEl = h('div', { class: 'typing', id: 'typing', 'aria-live': 'polite' });
    return this.typingEl;
  }

  /** Shows who is typing in the selected channel. */
  renderTyping(): void {
    const el = this.typingEl;
    const snap = this.state.snapshot();
    if (el === undefined || snap === undefined) return;
    const t = snap.typing;
    el.textContent =
      t.length === 0 ? '' : t.length === 1 ? `${t[0] ?? ''} is typing…` : `${t.slice(0, -1).join(', ')} and ${t[t.length - 1] ?? ''} are typing…`;
  }

  /** Shows the user and the others seen in the selected channel, each with a presence dot. */
  renderPeople(): void {
    const el = this.peopleEl;
    const snap = this.state.snapshot();
    if (el === undefined || snap === undefined) return;
    const me = this.state.userId;
    const presence = presenceWithMe(this.state);
    el.replaceChildren(
      ...[me, ...this.othersIn(snap)].map((u) =>
        h('span', { class: 'person', 'data-user': u }, presenceDot(u, presence), u === me ? `${u} (you)` : u),
      ),
    );
  }

  /** Subscribes to the presence of everyone seen in the opened channels (when it changed and the server supports it). */
  updateSubscription(): void {
    if (!this.state.supports('PRESENCE_SUB')) return;
    const all = new Set<string>();
    for (const st of this.state.stores.values()) for (const u of this.othersIn(st.getSnapshot())) all.add(u);
    const key = [...all].sort().join(',');
    if (key === this.presenceIds) return;
    this.presenceIds = key;
    this.state.client.subscribePresence([...all].sort());
  }

  /** The other users this channel shows: senders, readers, typers. */
  private othersIn(snap: ChannelSnapshot): string[] {
    const s = new Set<string>();
    for (const m of snap.messages) s.add(m.senderId);
    for (const u of Object.keys(snap.receipts)) s.add(u);
    for (const u of snap.typing) s.add(u);
    s.delete(this.state.userId);
    return [...s].sort();
  }
}
