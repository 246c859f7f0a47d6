/**
 * The channel list in the sidebar: one button per channel of the client's `channelList`
 * (HELLO, the server's `CHANNEL_ADDED` and `CHANNEL_REMOVED`, live messages) with its
 * unread count, its count of unread mentions of the user (`@2`), a mark when its
 * notifications are off or snoozed, screen-reader announcements of the channels where unread messages
 * arrived, and under the list a notice saying why a channel went (left, removed, deleted). A group shows
 * its name (else its id), a direct channel the other user (`@ bob`), read from its members
 * the first time the list shows a direct channel whose other user is not known yet.
 */
import type { ChannelSummary } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { announce, h } from './dom.js';

/** The sidebar's channel list. */
export class ChannelList {
  private readonly state: ChatState;
  private readonly select: (id: string) => void;
  private readonly renamed: (id: string) => void;
  /** Unread counts last shown, to announce the channels where they grew. */
  private readonly shownUnread = new Map<string, number>();
  /** Direct channels whose members were asked for (once each). */
  private readonly askedPeer = new Set<string>();
  private mounted = false;
  /** The notice under the list, and the channel it is about. */
  private noticeEl: HTMLElement | undefined;
  private noticeFor: string | undefined;

  /**
   * `select` is called with the channel the user clicks; `renamed` when a direct channel's
   * other user became known (its label changed).
   */
  constructor(state: ChatState, select: (id: string) => void, renamed: (id: string) => void) {
    this.state = state;
    this.select = select;
    this.renamed = renamed;
  }

  /** Makes the sidebar (its list is filled by `render`). */
  sidebar(): HTMLElement {
    this.mounted = true;
    this.noticeEl = h('p', { class: 'hint channel-notice', id: 'channel-notice', role: 'status', hidden: true });
    return h(
      'nav',
      { class: 'sidebar', 'aria-label': 'Channels' },
      h('h2', { id: 'channels-title' }, 'Channels'),
      h('ul', { class: 'channels', id: 'channels', 'aria-labelledby': 'channels-title' }),
      this.noticeEl,
    );
  }

  /** Says under the list why channel `id` went; `undefined` text: clears it when it is about `id` (the user is back in it). */
  notice(id: string, text: string | undefined): void {
    const el = this.noticeEl;
    if (el === undefined) return;
    if (text === undefined) {
      if (this.noticeFor !== id) return;
      this.noticeFor = undefined;
      el.textContent = '';
      el.hidden = true;
      return;
    }
    this.noticeFor = id;
    el.dataset.channel = id;
    el.textContent = text;
    el.hidden = false;
  }

  /** The channel list changed: redraw it, and tell screen readers where unread messages arrived. */
  changed(): void {
    const list = this.state.client.channelList.getSnapshot();
    for (const s of list) {
      const before = this.shownUnread.get(s.channelId);
      if (s.channelId !== this.state.current && before !== undefined && s.unread > before) {
        announce(`${s.unread} unread in ${s.channelId}.`);
      }
      this.shownUnread.set(s.channelId, s.unread);
    }
    this.render();
  }

  /** Redraws the list (the selected channel shows no unread count). */
  render(): void {
    if (!this.mounted) return;
    const ul = document.getElementById('channels');
    if (ul === null) return;
    const current = this.state.current;
    ul.replaceChildren(
      ...this.state.client.channelList.getSnapshot().map((c: ChannelSummary) => {
        const id = c.channelId;
        if (c.kind === 'direct') this.askPeer(id);
        const unread = id === current ? 0 : c.unread;
        const shown = this.state.label(id);
        const name = c.kind === 'direct' ? `direct message ${shown.slice(2)}` : shown.slice(2);
        const mentions = id === current ? 0 : c.unreadMentions;
        const muted = c.notify === 'none' || (c.snoozeUntil !== null && c.snoozeUntil > Date.now());
        const label = `${unread > 0 ? `${name}, ${unread} unread` : name}${mentions > 0 ? `, ${mentions} mentioning you` : ''}${muted ? ', notifications off' : ''}`;
        return h(
          'li',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'channel',
              'data-channel': id,
              'data-kind': c.kind,
              'aria-current': id === current ? 'true' : 'false',
              'aria-label': label,
              title: id,
              onclick: () => {
                this.select(id);
              },
            },
            h('span', { class: 'channel-label' }, shown),
            muted ? h('span', { class: 'muted-mark', 'aria-hidden': 'true', title: 'Notifications off' }, '🔕') : null,
            h('span', { class: 'mention-badge', 'data-count': String(mentions), 'aria-hidden': 'true', title: 'Mentions of you' }, `@${mentions}`),
            h('span', { class: 'badge', 'data-count': String(unread), 'aria-hidden': 'true' }, String(unread)),
          ),
        );
      }),
    );
  }

  /** Reads the members of a direct channel whose other user is not known yet (once). */
  private askPeer(id: string): void {
    if (this.state.peers.has(id) || this.askedPeer.has(id)) return;
    this.askedPeer.add(id);
    this.state.client.members(id, { limit: 3 }).then(
      (page) => {
        if (this.state.closed) return;
        const me = this.state.userId;
        const peer = page.members.find((m) => m.userId !== me)?.userId ?? (page.members.length > 0 ? me : undefined);
        if (peer === undefined) return;
        this.state.peers.set(id, peer);
        this.render();
        this.renamed(id);
      },
      () => {
        // the label stays `@ …`; the next view (a reload) asks again
      },
    );
  }
}
