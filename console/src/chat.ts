/**
 * The chat view: channels with unread counts, the message list of the selected channel
 * (newest first loaded, older pages on scroll), each of the user's messages with its
 * state, edits, deletions, reactions, read receipts, typing and presence, and the
 * connection indicator. Everything it shows comes from the chatd-client stores.
 *
 * The channel list and its unread counts come from the client's `channelList` (HELLO's
 * `unread`, live messages, `GET /v1/me/channels`): a channel is opened (its entries
 * read) only when the user selects it.
 */
import {
  ChatClient,
  type ChannelSummary,
  type ChannelSnapshot,
  type ChannelStore,
  type Message,
  type OutgoingMessage,
  type Presence,
} from '../../clients/typescript/src/index.js';
import { diagnose } from './adapter.js';
import { announce, banner, byId, clock, h } from './dom.js';
import { errorText, errorWords, isUnknownType, tokenWords } from './words.js';

/** The reactions offered on every message. */
const QUICK_REACTIONS: readonly { emoji: string; name: string }[] = [
  { emoji: '👍', name: 'thumbs up' },
  { emoji: '❤️', name: 'heart' },
  { emoji: '😂', name: 'laughing' },
];

/**
 * How often the console reads `GET /v1/me/channels` while connected (ms): the server
 * sends no frame when the user is added to a channel, so a new channel with no message
 * yet shows up within this time (one with a message shows up with it, at once).
 */
const CHANNEL_REFRESH_MS = 5000;

/** Version 1.1 operations, as the connection snapshot names them. */
type V11Op = 'MSG_EDIT' | 'MSG_DELETE' | 'MSG_REACT' | 'TYPING' | 'PRESENCE_SUB';

/** The features the notice names for each version 1.1 operation (the server may name others: shown as they are). */
const OP_NAMES: ReadonlyMap<string, string> = new Map([
  ['MSG_EDIT', 'editing'],
  ['MSG_DELETE', 'deleting'],
  ['MSG_REACT', 'reactions'],
  ['TYPING', 'typing indicators'],
  ['PRESENCE_SUB', 'presence'],
]);

type ConnShown = 'connected' | 'reconnecting' | 'offline' | 'idle';

/** What the view needs from its host page. */
export interface ChatHost {
  /** The token was refused for good: sign out and show the sign-in form with this text. */
  signedOut(reason: string): void;
}

/** One signed-in user's chat view. */
export class ChatView {
  readonly client: ChatClient;
  private readonly token: string;
  private readonly host: ChatHost;
  private root: HTMLElement | undefined;
  private readonly stores = new Map<string, ChannelStore>();
  private readonly unsubs: (() => void)[] = [];
  private current: string | undefined;
  private editing: { channelId: string; messageId: string; draft: string } | undefined;
  private readonly localUnsupported = new Set<V11Op>();
  private readonly notices = new Map<string, string>();
  private presenceIds = '';
  private diagnoseTimer: ReturnType<typeof setTimeout> | undefined;
  private connBanner = false;
  private loadingOlder = false;
  private lastRendered: { channelId: string; firstSeq: number; count: number } | undefined;
  /** Unread counts last shown, to announce the channels where they grew. */
  private readonly shownUnread = new Map<string, number>();
  /** The channels of the last HELLO (not announced as new). */
  private helloIds = new Set<string>();
  private closed = false;
  // pane elements (rebuilt on mount and on channel switch)
  private listEl: HTMLOListElement | undefined;
  private scrollerEl: HTMLElement | undefined;
  private olderBtn: HTMLButtonElement | undefined;
  private typingEl: HTMLElement | undefined;
  private editingEl: HTMLElement | undefined;
  private noticeEl: HTMLElement | undefined;
  private peopleEl: HTMLElement | undefined;
  private composer: HTMLTextAreaElement | undefined;
  private sendBtn: HTMLButtonElement | undefined;

  constructor(token: string, host: ChatHost) {
    this.token = token;
    this.host = host;
    const wsUrl = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/v1/ws`;
    this.client = new ChatClient({ url: wsUrl, token, channelRefreshMs: CHANNEL_REFRESH_MS });
  }

  /** The user id (the token's subject). */
  get userId(): string {
    return this.client.userId;
  }

  /** Starts the client (loads the outbox from IndexedDB, connects). */
  async start(): Promise<void> {
    const c = this.client;
    this.unsubs.push(
      c.connection.subscribe(() => {
        this.onConnection();
      }),
      c.presence.subscribe(() => {
        this.renderPeople();
        this.renderMessages();
      }),
      c.channelList.subscribe(() => {
        this.onChannelList();
      }),
      c.events.on('hello', (hello) => {
        this.helloIds = new Set(hello.channels.map((x) => x.channelId));
        this.renderChannels();
        if (this.current === undefined || !c.channelIds().includes(this.current)) this.select(c.channelIds()[0]);
      }),
      c.events.on('channelAdded', (id) => {
        this.renderChannels();
        if (this.current === undefined) this.select(id);
        else if (this.current === id) {
          // back in a channel the user had left: its "not a member" notice goes, the composer comes back
          this.notices.delete(id);
          this.renderPane();
        }
        if (!this.helloIds.has(id)) announce(`You were added to channel ${id}.`);
      }),
      c.events.on('entries', (channelId, entries) => {
        // Live messages only: a page of history read on opening a channel is not read out.
        const recent = Date.now() - 15_000;
        for (const e of entries) {
          if ((e.kind ?? 'message') === 'message' && e.senderId !== this.userId && e.ts >= recent) {
            announce(`New message from ${e.senderId} in ${channelId}: ${e.body}`);
          }
        }
      }),
      c.events.on('channelRemoved', () => {
        this.renderChannels();
        this.renderPane();
      }),
      c.events.on('error', (err) => {
        banner(errorWords(err.code, err.message));
      }),
    );
    const goOffline = (): void => {
      this.showConn('offline', 'Offline (no network)');
    };
    window.addEventListener('offline', goOffline);
    this.unsubs.push(() => {
      window.removeEventListener('offline', goOffline);
    });
    await c.start();
    this.onConnection();
  }

  /** Closes the client for good. */
  close(): void {
    this.closed = true;
    clearTimeout(this.diagnoseTimer);
    for (const u of this.unsubs.splice(0)) u();
    this.client.close();
    this.showConn('idle', 'Not signed in');
  }

  /** Shows the view in `root`. */
  mount(root: HTMLElement): void {
    this.root = root;
    document.title = `${this.userId} · chatd console`;
    root.replaceChildren(
      h(
        'div',
        { class: 'chat' },
        h(
          'nav',
          { class: 'sidebar', 'aria-label': 'Channels' },
          h('h2', { id: 'channels-title' }, 'Channels'),
          h('ul', { class: 'channels', id: 'channels', 'aria-labelledby': 'channels-title' }),
        ),
        h('section', { class: 'pane', id: 'pane', 'aria-label': 'Messages' }),
      ),
    );
    this.renderChannels();
    this.renderPane();
  }

  // ------------------------------------------------------------ connection

  private onConnection(): void {
    if (this.closed) return;
    const s = this.client.connection.getSnapshot();
    document.body.dataset.unsupported = this.unsupported().join(' ');
    if (s.state === 'open') {
      clearTimeout(this.diagnoseTimer);
      this.diagnoseTimer = undefined;
      this.showConn('connected', 'Connected');
      if (this.connBanner) {
        banner('');
        this.connBanner = false;
      }
      this.renderNotice();
      return;
    }
    if (s.state === 'closed') return;
    if (!navigator.onLine) this.showConn('offline', 'Offline (no network)');
    else if (s.state === 'connecting') this.showConn('reconnecting', 'Connecting…');
    else if (byId('conn').dataset.state !== 'offline') this.showConn('reconnecting', 'Reconnecting…');
    this.diagnoseTimer ??= setTimeout(() => void this.runDiagnosis(), 1200);
  }

  /** Asks the server why no session opens, says it in words, and asks again while it lasts. */
  private async runDiagnosis(): Promise<void> {
    const d = await diagnose(this.token);
    this.diagnoseTimer = undefined;
    if (this.closed || this.client.connection.getSnapshot().state === 'open') return;
    switch (d.kind) {
      case 'server_down':
        this.showConn('offline', 'Offline: server unreachable');
        banner(
          'The chat server cannot be reached (it may be down or restarting). Messages you send now are kept in this browser and go out, once each, when it is back.',
          'info',
        );
        this.connBanner = true;
        break;
      case 'database_down':
        this.showConn('reconnecting', 'Reconnecting…');
        banner('The chat server is up but cannot reach its database; retrying. Your unsent messages are kept.', 'info');
        this.connBanner = true;
        break;
      case 'token':
        this.host.signedOut(tokenWords(d.message));
        return;
      case 'unknown':
        this.showConn('reconnecting', 'Reconnecting…');
        break;
    }
    this.diagnoseTimer = setTimeout(() => void this.runDiagnosis(), 2500);
  }

  private showConn(state: ConnShown, text: string): void {
    const el = byId('conn');
    el.dataset.state = state;
    el.textContent = text;
  }

  /** The operations this server does not support, sorted: those the client learned of and those refused here. */
  private unsupported(): string[] {
    const all = new Set<string>([...this.client.connection.getSnapshot().unsupported, ...this.localUnsupported]);
    return [...all].sort();
  }

  private supports(op: V11Op): boolean {
    return !this.unsupported().includes(op);
  }

  // ------------------------------------------------------------ channels

  /** Opens a channel (reads its newest entries) the first time the user selects it. */
  private open(id: string): ChannelStore {
    let store = this.stores.get(id);
    if (store !== undefined) return store;
    store = this.client.channel(id);
    this.stores.set(id, store);
    this.unsubs.push(
      store.subscribe(() => {
        this.onChannelChange(id);
      }),
    );
    return store;
  }

  /** The channel list changed: redraw it, and tell screen readers where unread messages arrived. */
  private onChannelList(): void {
    const list = this.client.channelList.getSnapshot();
    for (const s of list) {
      const before = this.shownUnread.get(s.channelId);
      if (s.channelId !== this.current && before !== undefined && s.unread > before) {
        announce(`${s.unread} unread in ${s.channelId}.`);
      }
      this.shownUnread.set(s.channelId, s.unread);
    }
    this.renderChannels();
  }

  private onChannelChange(id: string): void {
    if (id !== this.current) return;
    const snap = this.stores.get(id)?.getSnapshot();
    if (snap !== undefined && document.visibilityState === 'visible' && snap.status === 'ready') {
      this.stores.get(id)?.markRead();
    }
    this.renderMessages();
    this.renderTyping();
    this.renderPeople();
    this.updatePresenceSubscription();
  }

  private select(id: string | undefined): void {
    this.current = id;
    this.editing = undefined;
    this.lastRendered = undefined;
    if (id !== undefined) this.open(id);
    this.renderChannels();
    this.renderPane();
    if (id !== undefined) this.stores.get(id)?.markRead();
  }

  private renderChannels(): void {
    if (this.root === undefined) return;
    const ul = document.getElementById('channels');
    if (ul === null) return;
    ul.replaceChildren(
      ...this.client.channelList.getSnapshot().map((c: ChannelSummary) => {
        const id = c.channelId;
        const unread = id === this.current ? 0 : c.unread;
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
              'aria-current': id === this.current ? 'true' : 'false',
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

  // ------------------------------------------------------------ pane

  private renderPane(): void {
    const pane = document.getElementById('pane');
    if (pane === null) return;
    const id = this.current;
    if (id === undefined) {
      this.listEl = undefined;
      pane.replaceChildren(
        h(
          'div',
          { class: 'empty', id: 'no-channels' },
          this.client.connection.getSnapshot().state === 'open'
            ? `You (${this.userId}) are not a member of any channel yet. An admin adds you in the admin view (/console#admin); the channel shows up here when they do.`
            : 'Connecting…',
        ),
      );
      return;
    }
    // chatd tells a user who is in a channel only through what they do (no member list on
    // the user routes): the header shows the people seen here, each with a presence dot.
    this.peopleEl = h('div', {
      class: 'people',
      id: 'people',
      'aria-label': 'People seen in this channel',
      title: 'People seen in this channel (who sent, read or typed here), with their presence',
    });
    this.olderBtn = h(
      'button',
      {
        type: 'button',
        class: 'older',
        id: 'load-older',
        hidden: true,
        onclick: () => {
          this.loadOlder();
        },
      },
      'Load older messages',
    );
    this.listEl = h('ol', { class: 'messages', id: 'messages', role: 'log', 'aria-label': `Messages in ${id}` });
    this.scrollerEl = h('div', { class: 'scroller', id: 'scroller' }, this.olderBtn, this.listEl);
    this.scrollerEl.addEventListener('scroll', () => {
      if (this.scrollerEl !== undefined && this.scrollerEl.scrollTop < 24) this.loadOlder();
    });
    this.typingEl = h('div', { class: 'typing', id: 'typing', 'aria-live': 'polite' });
    this.editingEl = h('div', { class: 'editing', id: 'editing', 'aria-live': 'polite' });
    this.noticeEl = h('div', { class: 'notice', id: 'notice', 'aria-live': 'polite' });
    this.composer = h('textarea', {
      id: 'composer',
      rows: 1,
      'aria-label': `Message to ${id}`,
      placeholder: `Message #${id} (Enter sends, Shift+Enter for a new line)`,
    });
    this.composer.addEventListener('keydown', (ev) => {
      this.onComposerKey(ev);
    });
    this.composer.addEventListener('input', () => {
      this.onComposerInput();
    });
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
    pane.replaceChildren(
      h('div', { class: 'pane-head' }, h('h2', { id: 'channel-title' }, `# ${id}`), this.peopleEl),
      this.scrollerEl,
      this.typingEl,
      this.noticeEl,
      this.editingEl,
      h('div', { class: 'composer' }, this.composer, this.sendBtn),
    );
    this.renderMessages();
    this.renderTyping();
    this.renderPeople();
    this.renderNotice();
    this.updatePresenceSubscription();
    this.composer.focus();
  }

  private snapshot(): ChannelSnapshot | undefined {
    return this.current === undefined ? undefined : this.stores.get(this.current)?.getSnapshot();
  }

  private loadOlder(): void {
    const store = this.current === undefined ? undefined : this.stores.get(this.current);
    const snap = store?.getSnapshot();
    if (store === undefined || snap === undefined || !snap.hasOlder || this.loadingOlder) return;
    this.loadingOlder = true;
    if (this.olderBtn !== undefined) this.olderBtn.textContent = 'Loading older messages…';
    store.loadOlder().then(
      () => {
        this.loadingOlder = false;
        this.renderMessages();
      },
      (e: unknown) => {
        this.loadingOlder = false;
        this.setNotice(errorText(e));
        this.renderMessages();
      },
    );
  }

  /** Where each other member's read watermark lands: the user's newest message at or below it. */
  private receiptLabels(snap: ChannelSnapshot): Map<number, string[]> {
    const mine = snap.messages.filter((m) => m.senderId === this.userId).map((m) => m.seq);
    const out = new Map<number, string[]>();
    for (const [user, w] of Object.entries(snap.receipts)) {
      let best: number | undefined;
      for (const s of mine) if (s <= w.readSeq) best = s;
      if (best === undefined) continue;
      out.set(best, [...(out.get(best) ?? []), user]);
    }
    return out;
  }

  private renderMessages(): void {
    const list = this.listEl;
    const scroller = this.scrollerEl;
    const snap = this.snapshot();
    if (list === undefined || scroller === undefined || snap === undefined || this.current === undefined) return;
    const fromBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
    const atBottom = fromBottom < 48;
    const receipts = this.receiptLabels(snap);
    const presence = this.client.presence.getSnapshot();
    const items: HTMLElement[] = snap.messages.map((m) => this.messageItem(m, receipts.get(m.seq) ?? [], presence));
    for (const o of snap.outgoing) items.push(this.outgoingItem(o));
    if (snap.status === 'loading') items.unshift(h('li', { class: 'empty' }, 'Loading messages…'));
    if (snap.status === 'ready' && items.length === 0) items.push(h('li', { class: 'empty' }, 'No messages yet. Say hello!'));
    list.replaceChildren(...items);
    if (this.olderBtn !== undefined) {
      this.olderBtn.hidden = !snap.hasOlder;
      this.olderBtn.textContent = this.loadingOlder ? 'Loading older messages…' : 'Load older messages';
    }
    const first = snap.messages[0]?.seq ?? 0;
    const prev = this.lastRendered;
    const opened = prev === undefined || prev.channelId !== this.current;
    if (opened || atBottom) scroller.scrollTop = scroller.scrollHeight;
    else if (first < prev.firstSeq) scroller.scrollTop = scroller.scrollHeight - scroller.clientHeight - fromBottom;
    this.lastRendered = { channelId: this.current, firstSeq: first, count: snap.messages.length };
    if (snap.status === 'removed') {
      this.setNotice(`You are not a member of ${this.current} any more (removed, or the channel was deleted): you can read what is shown but not send.`);
      if (this.composer !== undefined) this.composer.disabled = true;
      if (this.sendBtn !== undefined) this.sendBtn.disabled = true;
    }
  }

  private dot(user: string, presence: Readonly<Record<string, Presence>>): HTMLElement {
    const p = presence[user];
    const status = p?.status ?? 'unknown';
    const words = status === 'online' ? 'online' : status === 'offline' ? 'offline' : 'presence unknown';
    return h('span', { class: 'dot', 'data-status': status, 'data-user': user, role: 'img', 'aria-label': `${user} is ${words}`, title: words });
  }

  private messageItem(m: Message, readers: readonly string[], presence: Readonly<Record<string, Presence>>): HTMLElement {
    const mine = m.senderId === this.userId;
    const channelId = m.channelId;
    const meta = h('div', { class: 'meta' }, h('time', { datetime: new Date(m.ts).toISOString() }, clock(m.ts)));
    if (m.editedAt !== undefined && !m.deleted) meta.append(h('span', { class: 'edited' }, '(edited)'));
    if (mine) meta.append(h('span', { class: 'state', 'data-state': 'sent' }, '✓ sent'));
    if (readers.length > 0) meta.append(h('span', { class: 'receipt' }, `read by ${readers.join(', ')}`));
    const li = h(
      'li',
      {
        class: 'msg',
        'data-message-id': m.messageId,
        'data-client-msg-id': m.clientMsgId,
        'data-seq': m.seq,
        'data-sender': m.senderId,
        'data-mine': String(mine),
        'data-state': 'sent',
        'data-deleted': String(m.deleted),
        'aria-label': `${m.senderId}${m.deleted ? ', deleted message' : `: ${m.body}`}`,
      },
      h('div', { class: 'msg-head' }, this.dot(m.senderId, presence), h('span', { class: 'sender' }, mine ? `${m.senderId} (you)` : m.senderId)),
      h('div', { class: 'body' }, m.deleted ? 'This message was deleted.' : m.body),
      meta,
    );
    if (m.deleted) return li;
    const reactions = h('div', { class: 'reactions' });
    for (const r of m.reactions) {
      reactions.append(
        h(
          'button',
          {
            type: 'button',
            class: 'reaction',
            'data-emoji': r.emoji,
            'aria-pressed': String(r.me),
            'aria-label': `${r.emoji} ${r.count}${r.me ? ', yours: click to remove' : ': click to add yours'}`,
            onclick: () => {
              this.react(channelId, m.messageId, r.emoji, r.me ? 'remove' : 'add');
            },
          },
          `${r.emoji} ${r.count}`,
        ),
      );
    }
    const actions = h('div', { class: 'actions' });
    if (this.supports('MSG_REACT')) {
      for (const q of QUICK_REACTIONS) {
        if (m.reactions.some((r) => r.emoji === q.emoji && r.me)) continue;
        actions.append(
          h(
            'button',
            {
              type: 'button',
              class: 'react',
              'data-emoji': q.emoji,
              'aria-label': `React with ${q.name}`,
              onclick: () => {
                this.react(channelId, m.messageId, q.emoji, 'add');
              },
            },
            q.emoji,
          ),
        );
      }
    }
    if (mine && this.supports('MSG_EDIT')) {
      actions.append(
        h(
          'button',
          {
            type: 'button',
            class: 'edit',
            'aria-label': 'Edit this message',
            onclick: () => {
              this.startEdit(m);
            },
          },
          'Edit',
        ),
      );
    }
    if (mine && this.supports('MSG_DELETE')) {
      actions.append(
        h(
          'button',
          {
            type: 'button',
            class: 'delete',
            'aria-label': 'Delete this message',
            onclick: () => {
              this.remove(channelId, m.messageId);
            },
          },
          'Delete',
        ),
      );
    }
    if (reactions.childElementCount > 0) li.append(reactions);
    li.append(actions);
    return li;
  }

  private outgoingItem(o: OutgoingMessage): HTMLElement {
    const words = o.state === 'pending' ? '⏳ pending' : o.state === 'sent' ? '✓ sent' : '⚠ failed';
    const meta = h('div', { class: 'meta' }, h('span', { class: 'state', 'data-state': o.state }, words));
    if (o.state === 'pending') meta.append(h('span', {}, 'kept in this browser until the server stores it'));
    const li = h(
      'li',
      {
        class: 'msg',
        'data-client-msg-id': o.clientMsgId,
        'data-mine': 'true',
        'data-sender': this.userId,
        'data-state': o.state,
        'aria-label': `${this.userId}: ${o.body}, ${o.state}`,
      },
      h('div', { class: 'msg-head' }, h('span', { class: 'sender' }, `${this.userId} (you)`)),
      h('div', { class: 'body' }, o.body),
      meta,
    );
    if (o.state === 'failed') {
      li.append(
        h('div', { class: 'meta error' }, errorWords(o.error?.code ?? 'internal', o.error?.message ?? 'failed')),
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              class: 'retry',
              'aria-label': 'Retry sending this message',
              onclick: () => {
                this.client.retry(o.clientMsgId).catch((e: unknown) => {
                  this.setNotice(errorText(e));
                });
              },
            },
            'Retry',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'discard',
              'aria-label': 'Discard this message',
              onclick: () => {
                void this.client.discard(o.clientMsgId);
              },
            },
            'Discard',
          ),
        ),
      );
    }
    return li;
  }

  private renderTyping(): void {
    const el = this.typingEl;
    const snap = this.snapshot();
    if (el === undefined || snap === undefined) return;
    const t = snap.typing;
    el.textContent =
      t.length === 0 ? '' : t.length === 1 ? `${t[0] ?? ''} is typing…` : `${t.slice(0, -1).join(', ')} and ${t[t.length - 1] ?? ''} are typing…`;
  }

  /** The other users this channel shows: senders, readers, typers. */
  private othersIn(snap: ChannelSnapshot): string[] {
    const s = new Set<string>();
    for (const m of snap.messages) s.add(m.senderId);
    for (const u of Object.keys(snap.receipts)) s.add(u);
    for (const u of snap.typing) s.add(u);
    s.delete(this.userId);
    return [...s].sort();
  }

  private renderPeople(): void {
    const el = this.peopleEl;
    const snap = this.snapshot();
    if (el === undefined || snap === undefined) return;
    const presence = this.client.presence.getSnapshot();
    el.replaceChildren(
      ...[this.userId, ...this.othersIn(snap)].map((u) =>
        h('span', { class: 'person', 'data-user': u }, this.dot(u, u === this.userId ? { [u]: { status: 'online', lastSeenAt: undefined } } : presence), u === this.userId ? `${u} (you)` : u),
      ),
    );
  }

  private updatePresenceSubscription(): void {
    if (!this.supports('PRESENCE_SUB')) return;
    const all = new Set<string>();
    for (const st of this.stores.values()) for (const u of this.othersIn(st.getSnapshot())) all.add(u);
    const key = [...all].sort().join(',');
    if (key === this.presenceIds) return;
    this.presenceIds = key;
    this.client.subscribePresence([...all].sort());
  }

  private renderNotice(): void {
    const el = this.noticeEl;
    if (el === undefined) return;
    const custom = this.current === undefined ? undefined : this.notices.get(this.current);
    const missing = this.unsupported();
    const parts: string[] = [];
    if (custom !== undefined) parts.push(custom);
    if (missing.length > 0) {
      parts.push(`This server does not support ${missing.map((m) => OP_NAMES.get(m) ?? m).join(', ')} (chatd protocol 1.1); they are off.`);
    }
    el.textContent = parts.join(' ');
    document.body.dataset.unsupported = missing.join(' ');
  }

  private setNotice(text: string): void {
    if (this.current !== undefined) this.notices.set(this.current, text);
    this.renderNotice();
  }

  // ------------------------------------------------------------ actions

  /** A version 1.1 operation: its ERROR `unknown_type` marks it unsupported, and its outbox record is dropped. */
  private v11(op: V11Op, run: (clientMsgId: string) => Promise<unknown>): void {
    const clientMsgId = crypto.randomUUID();
    run(clientMsgId).then(
      () => {
        this.setNotice('');
      },
      (e: unknown) => {
        if (isUnknownType(e)) {
          this.localUnsupported.add(op);
          void this.client.discard(clientMsgId);
          this.setNotice('');
          this.renderMessages();
        } else {
          this.setNotice(errorText(e));
        }
        document.body.dataset.unsupported = this.unsupported().join(' ');
      },
    );
  }

  private react(channelId: string, messageId: string, emoji: string, op: 'add' | 'remove'): void {
    this.v11('MSG_REACT', (clientMsgId) => this.client.react(channelId, messageId, emoji, op, { clientMsgId }));
  }

  private remove(channelId: string, messageId: string): void {
    this.v11('MSG_DELETE', (clientMsgId) => this.client.deleteMessage(channelId, messageId, { clientMsgId }));
  }

  private startEdit(m: Message): void {
    const c = this.composer;
    if (c === undefined) return;
    this.editing = { channelId: m.channelId, messageId: m.messageId, draft: this.editing?.draft ?? c.value };
    c.value = m.body;
    c.setAttribute('aria-label', 'Edit your message');
    if (this.editingEl !== undefined) this.editingEl.textContent = 'Editing a message: Enter saves, Escape cancels.';
    if (this.sendBtn !== undefined) this.sendBtn.textContent = 'Save';
    c.focus();
  }

  private endEdit(): void {
    const c = this.composer;
    const draft = this.editing?.draft ?? '';
    this.editing = undefined;
    if (c !== undefined) {
      c.value = draft;
      c.setAttribute('aria-label', `Message to ${this.current ?? ''}`);
    }
    if (this.editingEl !== undefined) this.editingEl.textContent = '';
    if (this.sendBtn !== undefined) this.sendBtn.textContent = 'Send';
  }

  private onComposerKey(ev: KeyboardEvent): void {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      this.submit();
    } else if (ev.key === 'Escape' && this.editing !== undefined) {
      ev.preventDefault();
      this.endEdit();
    }
  }

  private onComposerInput(): void {
    const store = this.current === undefined ? undefined : this.stores.get(this.current);
    if (store === undefined || this.editing !== undefined || !this.supports('TYPING')) return;
    if (this.composer?.value === '') store.stopTyping();
    else store.typing();
    // the client learns from the server's answer whether TYPING is known
    setTimeout(() => {
      this.renderNotice();
    }, 300);
  }

  private submit(): void {
    const c = this.composer;
    const id = this.current;
    if (c === undefined || id === undefined) return;
    const body = c.value;
    if (body.trim() === '') return;
    const editing = this.editing;
    if (editing !== undefined) {
      this.endEdit();
      c.value = '';
      this.v11('MSG_EDIT', (clientMsgId) => this.client.edit(editing.channelId, editing.messageId, body, { clientMsgId }));
      return;
    }
    c.value = '';
    this.stores
      .get(id)
      ?.send(body)
      .catch(() => {
        /* shown on the message itself: failed, with Retry */
      });
  }
}
