/**
 * {@link ChatClient}, the client's public face, and {@link ChannelStore}: they make the
 * parts (connection, channels, sync, send path, tab outbox, receipts, typing, presence,
 * channel refresh, members, directory, new channels) and route each server frame to the
 * part that handles it.
 *
 * @module
 */
import { outboxAttachments } from './attachment-types.js';
import { Attachments } from './attachments.js';
import { NewChannels } from './channel-create.js';
import { ChannelRefresh } from './channel-refresh.js';
import { Channels } from './channels.js';
import { Connection, jwtSubject } from './connection.js';
import { Directory } from './directory.js';
import { ChatdError } from './errors.js';
import { MemberLists } from './member-lists.js';
import { Members } from './members.js';
import { Moderation } from './moderation.js';
import { TabOutbox } from './outbox-tabs.js';
import type { OutboxRecord } from './outbox.js';
import { PresenceSubscription } from './presence.js';
import { parseServerFrame } from './frame-parse.js';
import type { ChannelAddedFrame, ChannelSettingsFrame, ErrorFrame, HelloFrame } from './protocol.js';
import { mentionFields } from './mentions.js';
import { parseNotifySettings, setNotifySettings, type NotifySettingsChange } from './notify-settings.js';
import type { Message } from './log.js';
import { Receipts } from './receipts.js';
import { Search, type SearchOptions, type SearchPage } from './search.js';
import { Sender } from './send.js';
import { Emitter, type ExternalStore } from './store.js';
import { Sync } from './sync.js';
import { newThread } from './threads.js';
import type {
  AddMemberOptions,
  AllMembersOptions,
  ChannelInfo,
  CreateChannelOptions,
  DirectResult,
  DirectoryOptions,
  DirectoryPage,
  MemberList,
  MemberListStore,
  MemberRole,
  MembershipOptions,
  MembersOptions,
  MembersPage,
} from './member-types.js';
import type {
  ChannelSnapshot,
  ChannelSummary,
  ConnectionSnapshot,
  Presence,
  MessageSendOptions,
  NotifySettings,
  SendOptions,
  ThreadStore,
  SentEntry,
} from './snapshot-types.js';
import type { ChatClientEvents, ChatClientOptions, ClientContext } from './types.js';
import { TypingIndicators } from './typing-indicators.js';

/**
 * The chatd client: one WebSocket session that reconnects by itself, a durable outbox,
 * and a store per channel.
 *
 * @example
 * ```ts
 * const client = new ChatClient({ url: 'wss://chat.example.com/v1/ws', token });
 * await client.start();
 * const room = client.channel('room1');
 * room.subscribe(() => render(room.getSnapshot()));
 * await client.send('room1', 'hello');
 * ```
 */
export class ChatClient {
  /** Typed events. */
  readonly events = new Emitter<ChatClientEvents>();
  /** The connection's store (state, session, unsupported features). */
  readonly connection: ExternalStore<ConnectionSnapshot>;
  /** Presence of the users of {@link ChatClient.subscribePresence}; keyed by user id. */
  readonly presence: ExternalStore<Readonly<Record<string, Presence>>>;
  /**
   * The user's channels ({@link ChatClient.channelIds}) sorted by id, each with its unread
   * count, without opening any of them: a channel list for the app's sidebar. The same
   * array until a summary changed.
   */
  readonly channelList: ExternalStore<readonly ChannelSummary[]>;
  /**
   * Moderation (protocol §17): an owner's or moderator's `mute`, `ban`, `liftBan`, `bans`,
   * `setChannelSettings` and `deleteAnyMessage`, and any user's `block`, `unblock`,
   * `blocks` and `flag`. See {@link Moderation}.
   */
  readonly moderation: Moderation;
  /** Attachments (protocol §15): `upload`, `sendFiles`, `url` and `download`. See {@link Attachments}. */
  readonly attachments: Attachments;

  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly channels: Channels;
  private readonly receipts: Receipts;
  private readonly sync: Sync;
  private readonly tabOutbox: TabOutbox;
  private readonly sender: Sender;
  private readonly typingIndicators: TypingIndicators;
  private readonly presenceSub: PresenceSubscription;
  private readonly refresher: ChannelRefresh;
  private readonly memberRoutes: Members;
  private readonly memberLists: MemberLists;
  private readonly dir: Directory;
  private readonly newChannels: NewChannels;
  private readonly finder: Search;
  private started = false;

  /** Creates a client; nothing happens until {@link ChatClient.start}. */
  constructor(options: ChatClientOptions) {
    const uid = options.userId ?? (typeof options.token === 'string' ? jwtSubject(options.token) : undefined);
    const c: ClientContext = {
      opts: options,
      now: options.now ?? Date.now,
      tabId: crypto.randomUUID(),
      events: this.events,
      userId: uid ?? '',
    };
    this.c = c;
    const conn = new Connection(c, {
      frame: (text, gen) => {
        this.onFrame(text, gen);
      },
      dropped: () => {
        this.sync.dropped();
        this.presenceSub.dropped();
        this.typingIndicators.dropped();
        this.sender.dropped();
      },
      stale: (now, limitMs) => this.sender.stale(now, limitMs) || this.sync.stale(now, limitMs),
    });
    this.conn = conn;
    const channels = new Channels(c, () => this.tabOutbox.records());
    this.channels = channels;
    this.tabOutbox = new TabOutbox(c, conn, channels, {
      acked: (p, ack) => {
        this.sender.completed(p, ack);
      },
      adopted: () => {
        void this.sender.resendAll();
      },
    });
    this.receipts = new Receipts(c, conn, channels);
    this.sync = new Sync(c, conn, channels, this.receipts);
    this.attachments = new Attachments(c, conn, channels, (id, body, o) => this.send(id, body, o));
    this.sender = new Sender(c, conn, channels, this.sync, this.tabOutbox, this.attachments);
    this.typingIndicators = new TypingIndicators(c, conn, channels);
    this.presenceSub = new PresenceSubscription(c, conn);
    this.refresher = new ChannelRefresh(c, conn, channels, this.sync);
    this.memberRoutes = new Members(c, conn, channels);
    this.memberLists = new MemberLists(c, {
      readAll: (channelId, signal) => this.memberRoutes.all(channelId, { signal }),
      openConn: () => conn.openGen,
      closed: () => conn.state === 'closed',
    });
    this.dir = new Directory(c, conn, channels, this.refresher);
    this.newChannels = new NewChannels(c, conn, this.refresher);
    this.finder = new Search(c, conn);
    this.moderation = new Moderation(c, conn, channels.moderation);
    this.connection = conn.store;
    this.presence = this.presenceSub.store;
    this.channelList = channels.list;
  }

  /** The user id. */
  get userId(): string {
    return this.c.userId;
  }

  /**
   * Loads the outbox, joins the other tabs and connects. Resolves once the outbox is
   * loaded (not when connected: see {@link ChatClient.whenOpen}).
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (this.c.userId === '') {
      const t = await this.conn.getToken();
      this.c.userId = jwtSubject(t) ?? '';
      if (this.c.userId === '') throw new ChatdError('invalid_field', 'userId: not given and not in the token');
    }
    if (this.c.opts.tabSync !== false) this.tabOutbox.joinTabs();
    await this.tabOutbox.load();
    this.conn.start();
  }

  /** Resolves when a session is open (HELLO received); rejects on abort or close. */
  whenOpen(signal?: AbortSignal): Promise<void> {
    const state = this.conn.state;
    if (state === 'open') return Promise.resolve();
    if (signal?.aborted === true) return Promise.reject(new ChatdError('aborted', 'aborted'));
    if (state === 'closed') return Promise.reject(new ChatdError('closed', 'client closed'));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        off();
        reject(new ChatdError('aborted', 'aborted'));
      };
      const off = this.events.on('state', (s) => {
        if (s === 'open') {
          off();
          signal?.removeEventListener('abort', onAbort);
          resolve();
        } else if (s === 'closed') {
          off();
          signal?.removeEventListener('abort', onAbort);
          reject(new ChatdError('closed', 'client closed'));
        }
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Closes the connection for good. Outbox records stay in storage for the next start. */
  close(): void {
    this.conn.close();
    this.presenceSub.close();
    this.receipts.close();
    this.sender.close();
    this.typingIndicators.close();
    this.memberLists.close();
    this.channels.moderation.close();
    this.tabOutbox.close();
  }

  /** Drops the current connection at once (as a network failure would); the client reconnects. */
  reconnect(): void {
    this.conn.reconnect();
  }

  // ---------------------------------------------------------------- channels

  /** The store of one channel (opened on its newest entries when first asked for). */
  channel(channelId: string): ChannelStore {
    const ch = this.channels.ctx(channelId);
    if (!ch.opened) {
      ch.opened = true;
      this.sync.openChannel(ch);
    }
    return new ChannelStore(this, channelId, ch.store);
  }

  /**
   * The store of one thread (protocol §14): the replies of root `rootId` in `channelId`,
   * each once and in seq order, with the user's unsent replies in `outgoing` and the root
   * (with its `thread` summary) when the channel's window holds it. Opens the channel too
   * (the thread takes its live replies, and the edits, deletes and reactions of its
   * replies, from the channel's gapless log), then reads the thread's newest page (`SYNC`
   * with `threadId` and `latest`); `loadOlder` reads the page below. The same store for the
   * same thread. A root the server refuses (`not_found`, `invalid_field`) makes the
   * snapshot `failed` with the error. Send into it with
   * `send(channelId, body, { threadId: rootId })` (or the store's `send`).
   */
  thread(channelId: string, rootId: string): ThreadStore {
    this.channel(channelId);
    const ch = this.channels.ctx(channelId);
    let t = ch.threads.get(rootId);
    if (t === undefined) {
      t = newThread(ch, rootId, this.userId, () => this.tabOutbox.records());
      ch.threads.set(rootId, t);
      this.sync.openThread(ch, t);
    }
    const ctx = t;
    return {
      subscribe: ctx.store.subscribe,
      getSnapshot: ctx.store.getSnapshot,
      loadOlder: (signal?: AbortSignal) => this.sync.threadOlder(ch, ctx, signal),
      send: (body: string, options: Omit<MessageSendOptions, 'threadId'> = {}) => this.send(channelId, body, { ...options, threadId: rootId }),
    };
  }

  /**
   * Channel ids from the last HELLO, and the `CHANNEL_ADDED`s, `CHANNEL_REMOVED`s, live
   * messages and {@link ChatClient.refreshChannels} since.
   */
  channelIds(): string[] {
    return this.channels.ids();
  }

  /**
   * Reads the user's channels (`GET /v1/me/channels`, with the connection's token) and
   * brings the list up to date: adds the channels the user is in and the list lacks,
   * marks removed those it is no longer in, refreshes unread counts. Not needed to follow
   * membership with a server of version 1.2, which says so on the connection
   * (`CHANNEL_ADDED`, `CHANNEL_REMOVED`; the client never reads this by itself but once
   * after a join, a new channel or direct channel whose `CHANNEL_ADDED` has not come by
   * its answer); for a server before it, or an app's own "reload" button. Resolves to
   * {@link ChatClient.channelList}'s new snapshot; rejects with a ChatdError
   * (`unavailable` when the server cannot be reached, `aborted`, or the route's error
   * code).
   */
  refreshChannels(signal?: AbortSignal): Promise<readonly ChannelSummary[]> {
    return this.refresher.refresh(signal);
  }

  /**
   * Reads one page of a channel's members (`GET /v1/channels/{channelId}/members`, with
   * the connection's token, like {@link ChatClient.refreshChannels}): up to `limit`
   * members (1 to 500; default 100) whose user id comes after `after`, in byte order of
   * the user id, each with its `role` and its `deliveredSeq` and `readSeq` watermarks, so
   * that "read by" can be shown on opening a channel without waiting for live
   * `RECEIPT`s. `hasMore`: ask again with `after` set to the last `userId`; `atSeq`: the
   * channel's last seq when the page was read. Needs no open connection (only the token).
   *
   * Rejects with a ChatdError: `forbidden` when the user is not a member of the channel
   * (or it does not exist), `invalid_field` for a bad `after` or `limit` (`field` names
   * it), `not_found` from a server without the route (before protocol 1.2), `unavailable`
   * when the server cannot be reached, `aborted`, `closed` after {@link ChatClient.close}.
   *
   * @example
   * ```ts
   * const { members, hasMore } = await client.members('room1', { limit: 50 });
   * for (const m of members) console.log(m.userId, m.role, `read up to ${m.readSeq}`);
   * ```
   */
  members(channelId: string, options: MembersOptions = {}): Promise<MembersPage> {
    return this.memberRoutes.page(channelId, options);
  }

  /**
   * Reads every member of a channel: {@link ChatClient.members} page after page
   * (`pageSize` per request, default 500) until `hasMore` is false. The list is in byte
   * order of the user id; its `atSeq` is the lowest of the pages' (membership changes
   * made while paging may show in later pages only). Rejects as `members` does.
   */
  allMembers(channelId: string, options: AllMembersOptions = {}): Promise<MemberList> {
    return this.memberRoutes.all(channelId, options);
  }

  /**
   * A channel's member list kept live (protocol 1.2 §13.3): {@link ChatClient.allMembers}
   * read when first asked for, with every `MEMBER` frame received since folded onto it
   * (joins, leaves, removals, bans, roles) and the members' watermarks moved by
   * `RECEIPT`s. Frames the read already shows (`afterSeq` below its `atSeq`) are not
   * folded again. Read again after every reconnect (frames sent while away are lost; a
   * list nobody subscribes to then is read on its next subscribe or call) and when the
   * user is added back to the channel; `removed` (and empty) while the user is not in it.
   * One store per channel: the same object for every call.
   *
   * @example
   * ```ts
   * const list = client.memberList('room1');
   * list.subscribe(() => {
   *   const { status, members } = list.getSnapshot();
   *   if (status === 'ready') render(members.map((m) => `${m.userId} (${m.role})`));
   * });
   * ```
   */
  memberList(channelId: string): MemberListStore {
    return this.memberLists.get(channelId);
  }

  /**
   * Reads one page of the directory of public channels (`GET /v1/directory`, protocol
   * §13.2, with the connection's token like {@link ChatClient.refreshChannels}): up to
   * `limit` (1 to 500; default 100) public group channels whose id comes after `after`,
   * in byte order of the channel id, each with its `name`, `memberCount` and `lastSeq`;
   * with `q`, only those whose id or name holds it, case-insensitively. Private and direct
   * channels never appear. `hasMore`: ask again with `after` set to the last `channelId`.
   * Needs no open connection (only the token).
   *
   * Rejects with a ChatdError: `invalid_field` for a bad `q`, `after` or `limit` (`field`
   * names it), `not_found` from a server without the route (before protocol 1.2),
   * `unavailable`, `aborted`, `closed` after {@link ChatClient.close}.
   *
   * @example
   * ```ts
   * const { channels, hasMore } = await client.directory({ q: 'help', limit: 20 });
   * for (const c of channels) console.log(c.name ?? c.channelId, `${c.memberCount} members`);
   * ```
   */
  directory(options: DirectoryOptions = {}): Promise<DirectoryPage> {
    return this.dir.page(options);
  }

  /**
   * One page of search results (`GET /v1/me/search`, protocol §18): the messages of the
   * user's channels (or of `channelId`) holding every term of `q`, newest first, as
   * render-ready {@link Message}s; `next` is the `before` of the page after. Errors and
   * details: {@link Search.page}.
   */
  search(q: string, options: SearchOptions = {}): Promise<SearchPage> {
    return this.finder.page(q, options);
  }

  /** Every page of a search, read as the loop asks, following `next` ({@link Search.pages}). */
  searchPages(q: string, options: SearchOptions = {}): AsyncGenerator<SearchPage, void, undefined> {
    return this.finder.pages(q, options);
  }

  /**
   * Joins a public channel (`PUT /v1/me/channels/{channelId}`, protocol §13.2; also when
   * the user is a member already), then reads the channel list at once (as
   * {@link ChatClient.refreshChannels} does), so that the channel is in
   * {@link ChatClient.channelList} (`channelAdded`) when this resolves. Its messages
   * arrive from then on: live ones on this connection (counted as unread until the
   * channel is opened), and an opened channel (one {@link ChatClient.channel} was called
   * for, before or after) reads its newest page. When the list cannot be read, the channel
   * is listed all the same (a public group, the user a `member`) until its `CHANNEL_ADDED`
   * or the next `HELLO`. (With a server of version 1.2 the list is read only when its
   * `CHANNEL_ADDED` has not come by the join's answer.)
   *
   * Rejects with a ChatdError: `forbidden` for a private or direct channel (or one that
   * does not exist: the same answer), `invalid_field` for a bad channel id, `not_found`
   * from a server before protocol 1.2, `unavailable`, `aborted`, `closed`.
   */
  join(channelId: string, options: MembershipOptions = {}): Promise<void> {
    return this.dir.join(channelId, options);
  }

  /**
   * Leaves a channel (`DELETE /v1/me/channels/{channelId}`, protocol §13.2; also when the
   * user is not a member, or the channel does not exist): the channel leaves
   * {@link ChatClient.channelList} at once (`channelRemoved` with reason `left`; an opened
   * channel's snapshot becomes `removed`). A send to it after this is refused with
   * `forbidden`.
   *
   * Rejects with a ChatdError: `forbidden` for a direct channel (it cannot be left),
   * `invalid_field` for a bad channel id, `not_found` from a server before protocol 1.2,
   * `unavailable`, `aborted`, `closed`.
   */
  leave(channelId: string, options: MembershipOptions = {}): Promise<void> {
    return this.dir.leave(channelId, options);
  }

  /**
   * Opens the one direct channel of the user and `userId` (`PUT /v1/me/direct/{userId}`,
   * protocol §13.2): made by this call when there is none (`created: true`, HTTP 201),
   * else the same channel as before, whoever of the two made it (`created: false`, 200).
   * Its id is the server's; it is `direct` and private, its members the two users (the
   * user alone when `userId` is the user's own id); it cannot be left and no one is added
   * to it. The channel list is read at once after it (as {@link ChatClient.join} does), so
   * that the channel is in {@link ChatClient.channelList} when this resolves; open it with
   * {@link ChatClient.channel}.
   *
   * Rejects with a ChatdError: `forbidden` with `reason` `dm_policy` when the server's
   * `dm_policy` does not allow a new direct channel with this user, `invalid_field` for a
   * bad user id, `not_found` from a server before protocol 1.2, `unavailable`, `aborted`,
   * `closed`.
   *
   * @example
   * ```ts
   * const { channel } = await client.direct('bob');
   * const room = client.channel(channel.channelId);
   * await room.send('hi bob');
   * ```
   */
  direct(userId: string, options: MembershipOptions = {}): Promise<DirectResult> {
    return this.newChannels.direct(userId, options);
  }

  /**
   * Creates a group channel with the user as its `owner` and `members` as `member`s (`POST
   * /v1/me/channels`, protocol §13.2), `private` unless `visibility` says `public`, with
   * the id given or one the server chooses. Resolves to its channel object (HTTP 201) once
   * the channel list has been read again, so that it is in {@link ChatClient.channelList}
   * (the user's `role` `owner`).
   *
   * Rejects with a ChatdError: `conflict` when the id is taken, `forbidden` when the server
   * does not let users create channels (`user_channel_creation` off), `invalid_field` for a
   * bad id, name, visibility or member (`field` names it), `not_found` from a server
   * before protocol 1.2, `unavailable`, `aborted`, `closed`.
   */
  createChannel(options: CreateChannelOptions = {}): Promise<ChannelInfo> {
    return this.newChannels.create(options);
  }

  /**
   * Adds `userId` to a channel (`PUT /v1/channels/{channelId}/members/{userId}`, protocol
   * §13.1), with the user's token: the user must be an `owner` or `moderator` of it. A new
   * member is a `member` unless `role` says otherwise; an existing one keeps its role
   * unless `role` is given (also fine when it is a member already). A moderator may add
   * `member`s only; any other role, or changing an existing member's, needs an owner (see
   * {@link ChatClient.setMemberRole}). The server's `MEMBER` frame brings the change to
   * the channel list (member count) and to {@link ChatClient.memberList}.
   *
   * Rejects with a ChatdError: `forbidden` when the user's role does not allow it, the user
   * is not a member of the channel (or it does not exist), or it is a direct channel;
   * `invalid_field` for a bad id or role; `unavailable`, `aborted`, `closed`.
   */
  addMember(channelId: string, userId: string, options: AddMemberOptions = {}): Promise<void> {
    return this.memberRoutes.put(channelId, userId, options.role, options);
  }

  /**
   * Sets the role of a member of a channel (`member`, `moderator` or `owner`; `PUT
   * /v1/channels/{channelId}/members/{userId}` with `{"role"}`): only an `owner` of the
   * channel may. A user who is not a member yet is added with that role. Rejects as
   * {@link ChatClient.addMember} does.
   */
  setMemberRole(channelId: string, userId: string, role: MemberRole, options: MembershipOptions = {}): Promise<void> {
    return this.memberRoutes.put(channelId, userId, role, options);
  }

  /**
   * Removes `userId` from a channel (`DELETE /v1/channels/{channelId}/members/{userId}`;
   * also fine when it is not a member): an `owner` may remove anyone, a `moderator` only
   * `member`s. The user's own removal takes the channel from
   * {@link ChatClient.channelList} at once, as {@link ChatClient.leave} does (reason
   * `removed`). Rejects as {@link ChatClient.addMember} does.
   */
  removeMember(channelId: string, userId: string, options: MembershipOptions = {}): Promise<void> {
    return this.memberRoutes.remove(channelId, userId, options);
  }

  /**
   * Loads the page of entries just below the oldest held one. Resolves to whether even
   * older entries exist.
   */
  loadOlder(channelId: string, signal?: AbortSignal): Promise<boolean> {
    const ch = this.channels.ctx(channelId);
    if (!ch.opened) this.channel(channelId);
    return this.sync.loadOlder(ch, signal);
  }

  /**
   * Reads the channel's held window again so that messages the retention sweep erased
   * since they were read (protocol §19: no entry tells of an expiry; clients learn of it
   * at their next read) show `deleted` and `expired` in its snapshot and open threads.
   * Resolves to how many held messages became expired; rejects with a ChatdError
   * (`unavailable` when the connection is not open or drops meanwhile, or the SYNC's error).
   */
  recheckExpired(channelId: string): Promise<number> {
    const ch = this.channels.ctx(channelId);
    if (!ch.opened) this.channel(channelId);
    return this.sync.recheck(ch);
  }

  /** Marks the channel read up to its newest held entry (monotonic: never moves back). */
  markRead(channelId: string): void {
    this.receipts.markRead(channelId);
  }

  // ---------------------------------------------------------------- sending

  /**
   * Sends a message. Resolves on its MSG_ACK (also `duplicate: true`); rejects with a
   * ChatdError when it failed. `options.replyTo` quotes a message and `options.threadId`
   * puts it in a thread (protocol §14); both are kept in the durable outbox record with
   * the body, so a retry (after a reload or crash too) sends the same frame with the same
   * clientMsgId. A refused reply fails like any send: `not_found` (the quoted message or
   * root is unknown or deleted), `invalid_field` naming the field (another channel's
   * message, or a root that is itself in a thread).
   *
   * `options.mentions` and `options.mentionAll` (protocol §16) are kept in the outbox
   * record too (`mentions` sorted, repeats dropped); a refused one fails the send:
   * `invalid_field` (`field` `mentions`: more than 50, a bad id), `forbidden` (`field`
   * `mentionAll`: the user is a `member`).
   *
   * `options.attachments` (protocol §15): uploads ({@link Attachments.upload}) the message
   * carries, kept in the outbox record too; refused: `invalid_field` (`field` `attachments`).
   */
  send(channelId: string, body: string, options: MessageSendOptions = {}): Promise<SentEntry> {
    this.typingIndicators.messageSent(channelId);
    const { replyTo, threadId } = options;
    return this.sender.enqueue(
      {
        type: 'MSG_SEND',
        channelId,
        body,
        ...(replyTo !== undefined ? { replyTo } : {}),
        ...(threadId !== undefined ? { threadId } : {}),
        ...mentionFields(options),
        ...(options.attachments !== undefined ? { attachments: outboxAttachments(options.attachments) } : {}),
      },
      options,
    );
  }

  /**
   * Changes the user's notification settings of a channel (protocol §16.3, `PUT
   * /v1/me/channels/{channelId}/settings`): `notify` (`all`, `mentions`, `none`) and
   * `snoozeUntil` (ms, `null` ends a snooze); a field left out keeps its value. Resolves to
   * the settings now, which the channel list shows at once (the user's other sessions get
   * them by `CHANNEL_SETTINGS`). Rejects with a ChatdError: `invalid_field`, `forbidden`
   * (not a member), `unavailable`, `aborted`, `closed`.
   */
  async setNotifySettings(channelId: string, change: NotifySettingsChange, signal?: AbortSignal): Promise<NotifySettings> {
    const s = await setNotifySettings(this.c, this.conn, channelId, change, signal);
    this.channels.applySettings(channelId, s);
    return s;
  }

  /** Edits one of the user's messages (version 1.1). */
  edit(channelId: string, messageId: string, body: string, options: SendOptions = {}): Promise<SentEntry> {
    return this.sender.enqueue({ type: 'MSG_EDIT', channelId, messageId, body }, options);
  }

  /**
   * Deletes a message (version 1.1): one of the user's own, or, for a `moderator` or
   * `owner` of its channel, anyone's (protocol §13.1, §17; the delete entry's `senderId`
   * is then the moderator). The client does not judge: the server answers `forbidden`
   * to a delete the user's role does not allow. {@link mayDelete} says whether to offer it.
   */
  deleteMessage(channelId: string, messageId: string, options: SendOptions = {}): Promise<SentEntry> {
    return this.sender.enqueue({ type: 'MSG_DELETE', channelId, messageId }, options);
  }

  /**
   * Whether the user may delete `message` as far as this client knows: it is not deleted,
   * and it is the user's own or the user is a `moderator` or `owner` of its channel (the
   * role of the channel list, which HELLO, CHANNEL_ADDED and the user's MEMBER frames keep
   * current). The server still judges (a role changed a moment ago may not be known here).
   */
  mayDelete(message: Pick<Message, 'channelId' | 'senderId' | 'deleted'>): boolean {
    if (message.deleted) return false;
    if (message.senderId === this.userId) return true;
    const role = this.channelList.getSnapshot().find((c) => c.channelId === message.channelId)?.role;
    return role === 'moderator' || role === 'owner';
  }

  /** Adds or removes a reaction (version 1.1). */
  react(
    channelId: string,
    messageId: string,
    emoji: string,
    op: 'add' | 'remove' = 'add',
    options: SendOptions = {},
  ): Promise<SentEntry> {
    return this.sender.enqueue({ type: 'MSG_REACT', channelId, messageId, emoji, op }, options);
  }

  /** Sends a failed outbox record again, with its same clientMsgId. */
  retry(clientMsgId: string): Promise<SentEntry> {
    return this.sender.retry(clientMsgId);
  }

  /** Removes an outbox record (normally a failed one); its waiters reject with `discarded`. */
  discard(clientMsgId: string): Promise<void> {
    return this.sender.discard(clientMsgId);
  }

  /** The outbox records in send order (this tab's and other tabs'). */
  outbox(): OutboxRecord[] {
    return this.sender.records();
  }

  /**
   * Resolves when an outbox record is ACKed (also one loaded from storage after a reload).
   * Rejects when it fails or is discarded, and with `aborted` when `signal` aborts (that
   * stops this wait only: the record stays in the outbox and is still sent).
   */
  whenSent(clientMsgId: string, signal?: AbortSignal): Promise<SentEntry> {
    return this.sender.whenSent(clientMsgId, signal);
  }

  // ---------------------------------------------------------------- typing & presence

  /** The user is typing in the channel: sends `start` at most once per throttle period. */
  typing(channelId: string): void {
    this.typingIndicators.typing(channelId);
  }

  /** The user stopped typing (cleared the input): sends `stop` if a `start` is live. */
  stopTyping(channelId: string): void {
    this.typingIndicators.stopTyping(channelId);
  }

  /**
   * Replaces the presence subscription (kept across reconnects). An empty list ends it.
   *
   * The subscription is *pending* from its PRESENCE_SUB until a PRESENCE has arrived for
   * every listed id. While it is pending, a retryable ERROR (`unavailable`, `internal`,
   * `rate_limited`) that names no clientMsgId, channelId or messageId is taken to be the
   * server refusing it (spec §9: such an ERROR cannot say which frame it answers), and the
   * same PRESENCE_SUB is sent again after a backoff (`retryBackoff`, and at least the
   * ERROR's `retryAfterMs`), until the snapshot completes, this is called again, or the
   * connection drops (the reconnect sends it anyway). Such an ERROR is still emitted as
   * `error`. An empty subscription is never pending.
   */
  subscribePresence(userIds: readonly string[]): void {
    this.presenceSub.subscribe(userIds);
  }

  // ================================================================ frames

  /** A server frame arrived on connection `gen`: to the part that handles it. */
  private onFrame(text: string, gen: number): void {
    const f = parseServerFrame(text);
    if (f === undefined) return;
    switch (f.type) {
      case 'HELLO':
        this.onHello(f, gen);
        break;
      case 'MSG_ACK':
        if (this.sender.onAck(f)) this.typingIndicators.messageStored(f.channelId);
        break;
      case 'MSG_RECV':
        // fan-out reaches current members only
        this.channels.memberNow(this.channels.ctx(f.channelId));
        this.sync.ingest(f.channelId, [f], false);
        break;
      case 'SYNC_BATCH':
        this.sync.onBatch(f);
        break;
      case 'RECEIPT':
        this.receipts.onReceipt(f);
        this.memberLists.onReceipt(f);
        break;
      case 'ERROR':
        this.onError(f);
        break;
      case 'TYPING':
        this.typingIndicators.onTyping(f);
        break;
      case 'PRESENCE':
        this.presenceSub.onPresence(f);
        break;
      case 'CHANNEL_ADDED':
        this.onChannelAdded(f);
        break;
      case 'CHANNEL_REMOVED':
        // (no reason from a version 1.1 server: the channel was deleted)
        this.channels.markRemoved(this.channels.ctx(f.channelId), f.reason ?? 'deleted');
        break;
      case 'CHANNEL_SETTINGS':
        this.onSettings(f);
        break;
      case 'CHANNEL_UPDATED':
        if (typeof f.channelId === 'string') this.channels.moderation.stated(f.channelId, f.postingRole, f.slowModeMs, f.retentionSecs);
        this.events.emit('channelUpdated', f);
        break;
      case 'MEMBER':
        this.channels.applyMember(f);
        this.channels.moderation.onMember(f);
        this.memberLists.onMember(f);
        this.events.emit('member', f);
        break;
      default:
        break; // unknown frame types are ignored
    }
  }

  /** `CHANNEL_SETTINGS`: the user changed a channel's settings (on any session). */
  private onSettings(f: ChannelSettingsFrame): void {
    let s: NotifySettings;
    try {
      s = parseNotifySettings(f);
    } catch {
      return; // a malformed frame changes nothing
    }
    if (typeof f.channelId === 'string') this.channels.applySettings(f.channelId, s);
  }

  /** A session opened: take its channels, then read, subscribe and send what waits. */
  private onHello(h: HelloFrame, gen: number): void {
    this.conn.opened(gen, h.sessionId);
    const listed = this.channels.applyHello(h);
    for (const c of h.channels) this.channels.moderation.stated(c.channelId, c.postingRole, c.slowModeMs, c.retentionSecs);
    this.conn.setState('open');
    this.conn.store.invalidate();
    this.events.emit('hello', h);
    for (const id of listed) {
      const ch = this.channels.get(id);
      if (ch !== undefined) this.channels.markListed(ch);
    }
    for (const ch of this.channels.all()) {
      if (!ch.opened || ch.removed) continue;
      this.sync.resume(ch);
      if (ch.olderWaiters.length > 0) this.sync.pumpOlder(ch);
    }
    // MEMBER frames sent while away are lost: the member lists are read again
    this.memberLists.opened();
    this.presenceSub.opened();
    void this.sender.resendAll();
  }

  /**
   * `CHANNEL_ADDED`: the user is in the channel now; it is tracked as a `HELLO` channel
   * from then on (listed, and an opened one reads what it lacks from the entry's `lastSeq`).
   */
  private onChannelAdded(f: ChannelAddedFrame): void {
    const ch = this.channels.ctx(f.channel.channelId);
    this.channels.added(ch, f.channel);
    this.channels.moderation.stated(ch.id, f.channel.postingRole, f.channel.slowModeMs, f.channel.retentionSecs);
    if (ch.opened) {
      this.sync.resume(ch);
      if (ch.olderWaiters.length > 0) this.sync.pumpOlder(ch);
    }
  }

  /**
   * An ERROR: a record's (by clientMsgId), the refusal of an unknown frame type, a SYNC's
   * (by channelId), a `forbidden` naming a channel the user is known to be out of (a
   * frame sent before its removal was heard of: dropped), or, naming nothing, maybe the
   * presence subscription's; else `error`.
   */
  private onError(e: ErrorFrame): void {
    const err = ChatdError.fromFrame(e);
    // a moderation refusal (muted, read_only, slow_mode) tells the channel's snapshot
    const refusedIn = e.channelId ?? (e.clientMsgId !== undefined ? this.sender.channelOf(e.clientMsgId) : undefined);
    if (err.reason !== undefined && refusedIn !== undefined) this.channels.moderation.onRefusal(refusedIn, err);
    if (e.clientMsgId !== undefined && this.sender.onError(e.clientMsgId, err)) return;
    if (e.code === 'unknown_type') {
      const u = this.conn.features.refuseOldest();
      if (u !== undefined) {
        if (u.clientMsgId !== undefined) this.sender.unsupported(u.clientMsgId, err);
        return;
      }
    }
    if (e.channelId !== undefined && e.clientMsgId === undefined && this.sync.onError(e.channelId, err)) return;
    // a thread's read refused naming only its root (`not_found`)
    if (e.channelId === undefined && e.clientMsgId === undefined && e.messageId !== undefined && this.sync.onThreadError(e.messageId, err)) return;
    // a frame (TYPING, a receipt) that crossed the channel's CHANNEL_REMOVED: expected, not news
    if (e.code === 'forbidden' && e.channelId !== undefined && e.clientMsgId === undefined && this.channels.get(e.channelId)?.removed === true) return;
    if (err.retryable && e.clientMsgId === undefined && e.channelId === undefined && e.messageId === undefined) {
      this.presenceSub.refused(err);
    }
    this.events.emit('error', err, e);
  }
}

/**
 * One channel's store, for `useSyncExternalStore(store.subscribe, store.getSnapshot)`, with
 * the channel's actions.
 */
export class ChannelStore implements ExternalStore<ChannelSnapshot> {
  /** The channel. */
  readonly channelId: string;
  /** {@inheritDoc ExternalStore.subscribe} */
  readonly subscribe: (listener: () => void) => () => void;
  /** {@inheritDoc ExternalStore.getSnapshot} */
  readonly getSnapshot: () => ChannelSnapshot;
  private readonly client: ChatClient;

  /** @internal Use {@link ChatClient.channel}. */
  constructor(client: ChatClient, channelId: string, store: ExternalStore<ChannelSnapshot>) {
    this.client = client;
    this.channelId = channelId;
    this.subscribe = store.subscribe;
    this.getSnapshot = store.getSnapshot;
  }

  /** Sends a message to this channel (a reply or a thread reply with `options`, see {@link ChatClient.send}). */
  send(body: string, options?: MessageSendOptions): Promise<SentEntry> {
    return this.client.send(this.channelId, body, options);
  }
  /** Loads older entries; resolves to whether more exist. */
  loadOlder(signal?: AbortSignal): Promise<boolean> {
    return this.client.loadOlder(this.channelId, signal);
  }
  /** Marks everything held as read. */
  markRead(): void {
    this.client.markRead(this.channelId);
  }
  /** The user is typing. */
  typing(): void {
    this.client.typing(this.channelId);
  }
  /** The user stopped typing. */
  stopTyping(): void {
    this.client.stopTyping(this.channelId);
  }
}
