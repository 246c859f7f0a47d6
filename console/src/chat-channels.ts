/**
 * The channel list in the sidebar: one button per channel of the client's `channelList`
 * (HELLO's `unread`, live messages, `GET /v1/me/channels`) with its unread count, and
 * screen-reader announcements of the channels where unread messages arrived.
 */
import type { ChannelSummary } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { announce, h } from './dom.js';

/** The sidebar's channel list. */
export class ChannelList {
  private readonly state: ChatState;
  private readonly select: (id: string) => void;
  /** Unread counts last shown, to announce the channels where they grew. */
  private readonly shownUnread = new Map<string, number>();
  private mounted = false;

  /** `select` is called with the channel the user clicks. */
  constructor(state: ChatState, select: (id: string) => void) {
    this.state = state;
    this.select = select;
  }

  /** Makes the sidebar (its list is filled by `render`). */
  sidebar(): HTMLElement {
    this.mounted = true;
    return h(
      'nav',
      { class: 'sidebar', 'aria-label': 'Channels' },
      h('h2', { id: 'channels-title' }, 'Channels'),
      h('ul', { class: 'channels', id: 'channels', 'aria-labelledby': 'channels-title' }),
    );
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
        const unread = id === current ? 0 : c.unread;
        const label = unread > 0 ? `${id}, ${unread} unread` : id;
        return h(
          'li',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'channel',
              'data-channel': id,
              'aria-current': id === current ? 'true' : 'false',
              'aria-label': label,
              onclick: () => {
                this.select(id);
              },
            },
            h('span', {}, `# ${id}`),
            h('span', { class: 'badge', 'data-count': String(unread), 'aria-hidden': 'true' }, String(unread)),
          ),
        );
      }),
    );
  }
}
