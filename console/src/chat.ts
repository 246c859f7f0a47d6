/**
 * The chat view: channels with unread counts, the message list of the selected channel
 * (newest first loaded, older pages on scroll), each of the user's messages with its
 * state, edits, deletions, reactions, read receipts, typing and presence, and the
 * connection indicator. Everything it shows comes from the chatd-client stores.
 *
 * The channel list and its unread counts come from the client's `channelList` (HELLO's
 * `unread`, live messages, and the server's `CHANNEL_ADDED` and `CHANNEL_REMOVED`: a
 * channel the user is added to shows at once, one it is removed from goes, with a notice
 * saying why; nothing is read periodically): a channel is opened (its entries read) only
 * when the user selects it. The server's `MEMBER` frames update the member list and show
 * as lines in the timeline.
 *
 * This file wires the client's events to the parts and lays out the pane; each part is
 * its own module: chat-state.ts (what they share), chat-connection.ts (indicator and
 * diagnosis), chat-channels.ts (sidebar), chat-messages.ts (message list),
 * chat-actions.ts (reactions, edits, deletions, Reply and Thread), chat-composer.ts,
 * chat-thread.ts (the thread panel), chat-quote.ts (a reply's quote), chat-people.ts
 * (people, typing, presence), chat-members.ts (the member list with roles),
 * chat-directory.ts (browsing, joining and leaving public channels), chat-create.ts (New
 * message and New channel), chat-notice.ts, and moderation's: chat-moderation.ts (the
 * moderator menu and Block on members), chat-bans.ts (the bans list), chat-report.ts
 * (Report and Block on messages), chat-rules.ts (an owner's posting rules) and
 * chat-posting.ts (muted, read-only and slow mode above the composer), and chat-search.ts
 * (the search box atop the sidebar: a result opens its channel at the message). The parts do not
 * import one another except for types, chat-messages.ts using chat-people.ts's presence
 * dot, chat-members.ts holding the member column's moderation parts (chat-moderation.ts,
 * chat-bans.ts, chat-rules.ts) and chat-actions.ts holding chat-report.ts; what one needs
 * from another goes through the hooks given here.
 */
import { ChatClient } from '../../clients/typescript/src/index.js';
import { MessageActions } from './chat-actions.js';
import { ChannelList } from './chat-channels.js';
import { Composer } from './chat-composer.js';
import { ConnectionIndicator } from './chat-connection.js';
import { NewChats } from './chat-create.js';
import { ChannelDirectory } from './chat-directory.js';
import { ChannelMembers } from './chat-members.js';
import { MessageList } from './chat-messages.js';
import { Notices } from './chat-notice.js';
import { People } from './chat-people.js';
import { NotifyMenu } from './chat-notify.js';
import { PostingState } from './chat-posting.js';
import { MessageSearch } from './chat-search.js';
import { ChatState } from './chat-state.js';
import { ThreadPanel } from './chat-thread.js';
import { announce, banner, h } from './dom.js';
import { errorWords, removalWords } from './words.js';

/** The sessionStorage key of the channel a user had open in this tab (reopened after a reload). */
function channelKey(userId: string): string {
  return `chatd-console-channel:${userId}`;
}

/** The channel `userId` last opened in this tab, if stored. */
function lastChannel(userId: string): string | undefined {
  try {
    return sessionStorage.getItem(channelKey(userId)) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Stores the channel `userId` opened, for {@link lastChannel} after a reload. */
function rememberChannel(userId: string, channelId: string): void {
  try {
    sessionStorage.setItem(channelKey(userId), channelId);
  } catch {
    /* storage off: a reload opens the first channel */
  }
}

/** What the view needs from its host page. */
export interface ChatHost {
  /** The token was refused for good: sign out and show the sign-in form with this text. */
  signedOut(reason: string): void;
}

/** One signed-in user's chat view. */
export class ChatView {
  /** The user's chatd client. */
  readonly client: ChatClient;
  private readonly state: ChatState;
  private readonly notices: Notices;
  private readonly connection: ConnectionIndicator;
  private readonly channels: ChannelList;
  private readonly people: People;
  private readonly members: ChannelMembers;
  private readonly directory: ChannelDirectory;
  private readonly newChats: NewChats;
  private readonly actions: MessageActions;
  private readonly messages: MessageList;
  private readonly composer: Composer;
  private readonly posting: PostingState;
  private readonly notify: NotifyMenu;
  private readonly thread: ThreadPanel;
  private readonly search: MessageSearch;
  private readonly unsubs: (() => void)[] = [];
  /** The channels of the last HELLO (not announced as new). */
  private helloIds = new Set<string>();
  /** A HELLO came on this page (the channels are known from the server). */
  private sawHello = false;

  constructor(token: string, host: ChatHost) {
    const wsUrl = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/v1/ws`;
    this.client = new ChatClient({ url: wsUrl, token });
    const state = new ChatState(this.client);
    this.state = state;
    this.notices = new Notices(state);
    this.connection = new ConnectionIndicator(state, token, {
      signedOut: (reason) => {
        host.signedOut(reason);
      },
      opened: () => {
        this.notices.render();
      },
    });
    this.channels = new ChannelList(
      state,
      (id) => {
        this.select(id);
      },
      () => {
        this.retitle();
      },
    );
    this.people = new People(state);
    this.members = new ChannelMembers(state, () => {
      this.messages.render();
    });
    this.posting = new PostingState(state);
    this.notify = new NotifyMenu(state);
    this.directory = new ChannelDirectory(state, {
      select: (id) => {
        this.select(id ?? this.client.channelIds()[0]);
      },
      notice: (text) => {
        this.notices.set(text);
      },
    });
    this.newChats = new NewChats(state, {
      select: (id) => {
        this.select(id);
      },
    });
    this.composer = new Composer(state, {
      edit: (channelId, messageId, body) => {
        this.actions.edit(channelId, messageId, body);
      },
      typed: () => {
        this.notices.render();
      },
    });
    this.actions = new MessageActions(state, {
      notice: (text) => {
        this.notices.set(text);
      },
      redraw: () => {
        this.messages.render();
      },
      startEdit: (m) => {
        this.composer.startEdit(m);
      },
      startReply: (m) => {
        this.composer.startReply(m);
      },
      openThread: (m) => {
        this.thread.show(m);
      },
      blocked: () => {
        this.messages.render();
        this.members.render();
      },
    });
    this.thread = new ThreadPanel(state);
    this.search = new MessageSearch(state, {
      open: (m) => {
        if (m.channelId !== this.state.current) this.select(m.channelId);
        this.messages.reveal(m.channelId, m.messageId);
      },
    });
    this.messages = new MessageList(state, this.actions, {
      notice: (text) => {
        this.notices.set(text);
      },
      readOnly: () => {
        this.composer.disable();
      },
      openThread: (m) => {
        this.thread.show(m);
      },
    });
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
        this.connection.update();
        this.openBeforeHello();
        // the user's own presence dots follow the connection
        this.people.renderPeople();
        this.messages.render();
      }),
      c.presence.subscribe(() => {
        this.people.renderPeople();
        this.messages.render();
      }),
      c.channelList.subscribe(() => {
        this.channels.changed();
        this.notify.render();
        this.directory.render();
        this.retitle();
        // the user's own role may have changed (a member change's list read)
        this.members.render();
      }),
      c.events.on('hello', (hello) => {
        this.sawHello = true;
        this.helloIds = new Set(hello.channels.map((x) => x.channelId));
        this.channels.render();
        if (this.state.current === undefined || !c.channelIds().includes(this.state.current)) {
          // after a reload: the channel this tab had open, while the user is still in it
          const last = lastChannel(this.userId);
          this.select(last !== undefined && c.channelIds().includes(last) ? last : c.channelIds()[0]);
        }
        // (re)connected: members may have come or gone while away
        else this.members.refresh();
      }),
      c.events.on('channelAdded', (id) => {
        this.channels.notice(id, undefined);
        this.state.removedBy.delete(id);
        this.channels.render();
        if (this.state.current === undefined) this.select(id);
        else if (this.state.current === id) {
          // back in a channel the user had left: its "not a member" notice goes, the composer comes back
          this.notices.forget(id);
          this.renderPane();
          this.members.refresh();
        }
        if (!this.helloIds.has(id) && !this.directory.isJoining(id)) announce(`You were added to channel ${id}.`);
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
      c.events.on('member', (f) => {
        // the user's own leave or ban comes just before CHANNEL_REMOVED: who did it
        if (f.userId === this.userId && (f.op === 'leave' || f.op === 'ban')) {
          this.state.removedBy.set(f.channelId, f.actorId === this.userId ? undefined : f.actorId);
        }
        this.messages.memberChange(f);
      }),
      c.events.on('channelRemoved', (id, reason) => {
        const why = removalWords(this.state.label(id), reason, this.state.removedBy.get(id));
        this.channels.notice(id, why);
        announce(why);
        this.channels.render();
        this.renderPane();
        if (id === this.state.current) this.members.refresh();
      }),
      c.events.on('error', (err) => {
        banner(errorWords(err.code, err.message, err.reason));
      }),
    );
    const goOffline = (): void => {
      this.connection.offline();
    };
    window.addEventListener('offline', goOffline);
    this.unsubs.push(() => {
      window.removeEventListener('offline', goOffline);
    });
    await c.start();
    this.connection.update();
    // the users this user blocks: their messages are hidden (a server before moderation has no list: none)
    c.moderation.blocks().then(
      (list) => {
        if (this.state.closed) return;
        for (const u of list) this.state.blocked.add(u);
        this.messages.render();
        this.members.render();
      },
      () => undefined,
    );
  }

  /** Closes the client for good. */
  close(): void {
    this.state.closed = true;
    this.connection.stop();
    this.members.close();
    this.posting.close();
    for (const u of this.unsubs.splice(0)) u();
    this.client.close();
    this.connection.idle();
  }

  /** Shows the view in `root`. */
  mount(root: HTMLElement): void {
    document.title = `${this.userId} · chatd console`;
    const sidebar = this.channels.sidebar();
    sidebar.prepend(this.search.element());
    sidebar.append(this.newChats.element(), this.directory.element());
    root.replaceChildren(h('div', { class: 'chat' }, sidebar, h('section', { class: 'pane', id: 'pane', 'aria-label': 'Messages' }), this.members.element()));
    this.channels.render();
    this.renderPane();
    this.members.render();
  }

  /** Opens a channel (reads its newest entries) the first time the user selects it. */
  private open(id: string): void {
    if (this.state.stores.has(id)) return;
    const store = this.client.channel(id);
    this.state.stores.set(id, store);
    this.unsubs.push(
      store.subscribe(() => {
        this.onChannelChange(id);
      }),
    );
  }

  /** An opened channel changed: mark it read when it is on screen, and redraw it. */
  private onChannelChange(id: string): void {
    if (id !== this.state.current) return;
    const snap = this.state.stores.get(id)?.getSnapshot();
    if (snap !== undefined && document.visibilityState === 'visible' && snap.status === 'ready') {
      this.state.stores.get(id)?.markRead();
    }
    this.messages.render();
    this.members.channelChanged();
    this.people.renderTyping();
    this.people.renderPeople();
    this.people.updateSubscription();
    this.members.render();
    this.posting.render();
  }

  /** Selects a channel (or none), opens it and builds its pane. */
  /**
   * The server cannot be reached before any HELLO (a reload while it is down: the page came
   * from the service worker's cache, offline.ts): opens the channel this tab had open, so
   * its messages still in the outbox show, pending. HELLO then keeps it (or picks another
   * when the user is no longer in it).
   */
  private openBeforeHello(): void {
    if (this.sawHello || this.state.current !== undefined || this.client.connection.getSnapshot().state !== 'reconnecting') return;
    const last = lastChannel(this.userId);
    if (last !== undefined) this.select(last);
  }

  private select(id: string | undefined): void {
    if (id !== this.state.current) this.thread.hide();
    this.state.current = id;
    if (id !== undefined) rememberChannel(this.userId, id);
    this.composer.forgetEdit();
    this.messages.reset();
    if (id !== undefined) this.open(id);
    this.channels.render();
    this.renderPane();
    this.members.refresh();
    if (id !== undefined) this.state.stores.get(id)?.markRead();
  }

  /** The selected channel's title, again (its name, or a direct channel's other user, became known). */
  private retitle(): void {
    const title = document.getElementById('channel-title');
    const id = this.state.current;
    if (title === null || id === undefined) return;
    const text = this.state.label(id);
    if (title.textContent === text) return;
    title.textContent = text;
    this.composer.relabel();
  }

  /** Builds the pane of the selected channel from its parts (or says why there is none). */
  private renderPane(): void {
    const pane = document.getElementById('pane');
    if (pane === null) return;
    const id = this.state.current;
    if (id === undefined) {
      this.messages.detach();
      pane.replaceChildren(
        h(
          'div',
          { class: 'empty', id: 'no-channels' },
          this.client.connection.getSnapshot().state === 'open'
            ? `You (${this.userId}) are not a member of any channel yet. Join a public one with “Browse channels”, or an admin adds you in the admin view (/console#admin); the channel shows up here when they do.`
            : 'Connecting…',
        ),
      );
      return;
    }
    pane.replaceChildren(
      h(
        'div',
        { class: 'pane-head' },
        h('h2', { id: 'channel-title', 'data-channel': id, title: id }, this.state.label(id)),
        this.people.peopleElement(),
        this.notify.element(),
        this.directory.leaveButton(id),
      ),
      this.messages.element(id),
      this.people.typingElement(),
      this.notices.element(),
      this.composer.editingElement(),
      this.composer.replyingElement(),
      this.posting.element(),
      this.composer.trayElement(),
      this.composer.element(id),
    );
    const scroller = pane.querySelector('#scroller');
    if (scroller instanceof HTMLElement) this.composer.acceptFiles(scroller);
    this.posting.render();
    this.thread.attach(pane);
    this.messages.render();
    this.people.renderTyping();
    this.people.renderPeople();
    this.notices.render();
    this.people.updateSubscription();
    this.composer.focus();
  }
}
