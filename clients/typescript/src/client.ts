import { backoffDelay } from './backoff.js';
import { ChatdError } from './errors.js';
import { ChannelLog, entryKind } from './log.js';
import {
  IndexedDBOutboxStorage,
  MemoryOutboxStorage,
  sendOrder,
  type OutboxOp,
  type OutboxRecord,
  type OutboxStorage,
} from './outbox.js';
import {
  parseServerFrame,
  type AckFrame,
  type ClientFrame,
  type ErrorFrame,
  type HelloChannel,
  type HelloFrame,
  type ReceiptFrame,
  type SyncBatchFrame,
  type TypingFrame,
  type WireEntry,
} from './protocol.js';
import { Emitter, LazyStore, type ExternalStore } from './store.js';
import { TypingThrottle, TypingTracker } from './typing.js';
import type {
  ChannelSnapshot,
  ChannelSummary,
  ChatClientEvents,
  ChatClientOptions,
  ConnectionSnapshot,
  ConnectionState,
  OnlineEventSource,
  OutgoingMessage,
  Presence,
  SendOptions,
  SentEntry,
  Watermarks,
  WebSocketConstructor,
  WebSocketLike,
} from './types.js';
import { computeUnread } from './unread.js';

interface Waiter {
  resolve: (v: SentEntry) => void;
  reject: (e: ChatdError) => void;
}

interface Pending {
  record: OutboxRecord;
  /** true when another live tab is responsible for sending it */
  foreign: boolean;
  attempt: number;
  inflightConn: number;
  frameNo: number;
  sentAt?: number;
  retryTimer: ReturnType<typeof setTimeout> | undefined;
  waiters: Waiter[];
}

interface SyncReq {
  kind: 'open' | 'forward' | 'older';
  frameNo: number;
  sentAt: number;
  afterSeq: number;
  done?: (err?: ChatdError) => void;
}

interface ChannelCtx {
  id: string;
  log: ChannelLog;
  opened: boolean;
  removed: boolean;
  hello: HelloChannel | undefined;
  helloLastSeq: number;
  /** others' `message` entries received while not opened, after `helloLastSeq`: messageId → seq */
  liveUnread: Map<string, number>;
  /** `epoch` when the channel was last listed / last removed (see refreshChannels) */
  listedEpoch: number;
  removedEpoch: number;
  readSeq: number;
  deliveredSeq: number;
  deliveredSent: number;
  receipts: Map<string, Watermarks>;
  typing: TypingTracker;
  typingTimer: ReturnType<typeof setTimeout> | undefined;
  throttle: TypingThrottle;
  sent: Map<string, OutgoingMessage>;
  store: LazyStore<ChannelSnapshot>;
  olderWaiters: ((err?: ChatdError) => void)[];
  loadingOlder: boolean;
}

type BroadcastMsg =
  | { t: 'put'; record: OutboxRecord }
  | { t: 'acked'; clientMsgId: string; ack: SentEntry }
  | { t: 'deleted'; clientMsgId: string };

interface BroadcastChannelLike {
  postMessage(m: unknown): void;
  onmessage: ((ev: { data: unknown }) => void) | null;
  close(): void;
}
interface LockManagerLike {
  request(name: string, opts: { ifAvailable?: boolean }, cb: (lock: unknown) => Promise<void> | void): Promise<void>;
  request(name: string, cb: (lock: unknown) => Promise<void> | void): Promise<void>;
  query(): Promise<{ held?: { name?: string }[] }>;
}

const V11_TYPES: ReadonlySet<string> = new Set(['MSG_EDIT', 'MSG_DELETE', 'MSG_REACT', 'TYPING', 'PRESENCE_SUB']);

/** Reads the `sub` claim of a JWT without verifying it (the server does that). */
export function jwtSubject(token: string): string | undefined {
  const part = token.split('.')[1];
  if (part === undefined) return undefined;
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const json = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const claims = JSON.parse(json) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

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

  private readonly opts: ChatClientOptions;
  private readonly storage: OutboxStorage;
  private readonly now: () => number;
  private readonly tabId: string;
  private userIdValue: string;
  private state: ConnectionState = 'idle';
  private ws: WebSocketLike | undefined;
  private connGen = 0;
  private openConn = 0;
  private sessionId: string | undefined;
  private reconnectAttempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private readonly channels = new Map<string, ChannelCtx>();
  private readonly pending = new Map<string, Pending>();
  private readonly syncs = new Map<string, SyncReq[]>();
  private frameNo = 0;
  private orderCounter = 0;
  private putChain: Promise<void> = Promise.resolve();
  private readonly unsupported = new Set<string>();
  private readonly supported = new Set<string>();
  private v11Unconfirmed: { type: string; frameNo: number; clientMsgId?: string }[] = [];
  /** The presence subscription: the ids of the last `subscribePresence`, without repeats. */
  private presenceIds: ReadonlySet<string> = new Set();
  /**
   * Ids of the pending PRESENCE_SUB whose PRESENCE has not arrived since it was sent;
   * undefined when no subscription is pending (snapshot complete, empty, or not sent).
   */
  private presenceWaiting: Set<string> | undefined;
  /** Retries of the pending PRESENCE_SUB so far (the backoff's attempt number). */
  private presenceAttempt = 0;
  private presenceTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly presenceMap = new Map<string, Presence>();
  private readonly connStore: LazyStore<ConnectionSnapshot>;
  private readonly presenceStore: LazyStore<Readonly<Record<string, Presence>>>;
  private bc: BroadcastChannelLike | undefined;
  private readonly locks: LockManagerLike | undefined;
  private releaseTabLock: (() => void) | undefined;
  private readonly watchedOwners = new Set<string>();
  private onlineHandler: (() => void) | undefined;
  private onlineSource: OnlineEventSource | undefined;
  private readonly listStore: LazyStore<readonly ChannelSummary[]>;
  private listValue: readonly ChannelSummary[] = Object.freeze([]);
  /** ids emitted by `channelAdded` and not removed since */
  private readonly listed = new Set<string>();
  /** counts channel listings and removals, to order them against a refresh in flight */
  private epoch = 0;
  private refreshTimer: ReturnType<typeof setInterval> | undefined;
  private lastToken: string | undefined;
  private deliveredTimer: ReturnType<typeof setTimeout> | undefined;
  private started = false;

  /** Creates a client; nothing happens until {@link ChatClient.start}. */
  constructor(options: ChatClientOptions) {
    this.opts = options;
    this.now = options.now ?? Date.now;
    this.tabId = crypto.randomUUID();
    const uid = options.userId ?? (typeof options.token === 'string' ? jwtSubject(options.token) : undefined);
    this.userIdValue = uid ?? '';
    this.storage =
      options.storage ??
      ((globalThis as { indexedDB?: unknown }).indexedDB !== undefined
        ? new IndexedDBOutboxStorage()
        : new MemoryOutboxStorage());
    const nav = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator;
    this.locks = options.tabSync === false ? undefined : nav?.locks;
    this.connStore = new LazyStore(() =>
      Object.freeze({
        state: this.state,
        userId: this.userIdValue,
        sessionId: this.sessionId,
        unsupported: Object.freeze([...this.unsupported].sort()),
      }),
    );
    this.presenceStore = new LazyStore(() => Object.freeze(Object.fromEntries(this.presenceMap)));
    this.listStore = new LazyStore(() => this.buildList());
    this.connection = this.connStore;
    this.presence = this.presenceStore;
    this.channelList = this.listStore;
  }

  /** The user id. */
  get userId(): string {
    return this.userIdValue;
  }

  /**
   * Loads the outbox, joins the other tabs and connects. Resolves once the outbox is
   * loaded (not when connected: see {@link ChatClient.whenOpen}).
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (this.userIdValue === '') {
      const t = await this.getToken();
      this.userIdValue = jwtSubject(t) ?? '';
      if (this.userIdValue === '') throw new ChatdError('invalid_field', 'userId: not given and not in the token');
    }
    if (this.opts.tabSync !== false) this.joinTabs();
    await this.loadOutbox();
    const source = this.opts.onlineEvents === undefined ? globalOnlineSource() : (this.opts.onlineEvents ?? undefined);
    if (source !== undefined) {
      this.onlineHandler = () => {
        if (this.state !== 'open' && this.state !== 'closed') this.connectNow();
      };
      this.onlineSource = source;
      source.addEventListener('online', this.onlineHandler);
    }
    this.watchdog = setInterval(() => {
      this.checkReplies();
    }, 1000);
    this.connectNow();
  }

  /** Resolves when a session is open (HELLO received); rejects on abort or close. */
  whenOpen(signal?: AbortSignal): Promise<void> {
    if (this.state === 'open') return Promise.resolve();
    if (signal?.aborted === true) return Promise.reject(new ChatdError('aborted', 'aborted'));
    if (this.state === 'closed') return Promise.reject(new ChatdError('closed', 'client closed'));
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
    this.setState('closed');
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.presenceTimer);
    this.presenceWaiting = undefined;
    clearInterval(this.watchdog);
    clearTimeout(this.deliveredTimer);
    for (const p of this.pending.values()) {
      clearTimeout(p.retryTimer);
      for (const w of p.waiters) w.reject(new ChatdError('closed', 'client closed'));
      p.waiters = [];
    }
    for (const ch of this.channels.values()) clearTimeout(ch.typingTimer);
    clearInterval(this.refreshTimer);
    if (this.onlineHandler !== undefined) this.onlineSource?.removeEventListener('online', this.onlineHandler);
    this.bc?.close();
    this.releaseTabLock?.();
    const ws = this.ws;
    this.ws = undefined;
    this.connGen++;
    if (ws !== undefined) ws.close(1000, 'client closed');
  }

  /** Drops the current connection at once (as a network failure would); the client reconnects. */
  reconnect(): void {
    if (this.state === 'closed') return;
    const ws = this.ws;
    this.dropConnection();
    try {
      ws?.close(4000, 'reconnect');
    } catch {
      /* already closed */
    }
  }

  // ---------------------------------------------------------------- channels

  /** The store of one channel (opened on its newest entries when first asked for). */
  channel(channelId: string): ChannelStore {
    const ch = this.ctx(channelId);
    if (!ch.opened) {
      ch.opened = true;
      this.openChannel(ch);
    }
    return new ChannelStore(this, channelId, ch.store);
  }

  /** Channel ids from the last HELLO (and live messages and {@link ChatClient.refreshChannels} since). */
  channelIds(): string[] {
    return [...this.channels.values()].filter((c) => !c.removed && c.hello !== undefined).map((c) => c.id);
  }

  /**
   * Reads the user's channels (`GET /v1/me/channels`, with the connection's token) and
   * brings the list up to date: adds the channels the user was added to since `HELLO`
   * (the server sends no frame for that), marks removed those the user left, refreshes
   * unread counts. The client does this by itself every `channelRefreshMs` while
   * connected. Resolves to {@link ChatClient.channelList}'s new snapshot; rejects with a
   * ChatdError (`unavailable` when the server cannot be reached, `aborted`, or the
   * route's error code).
   */
  async refreshChannels(signal?: AbortSignal): Promise<readonly ChannelSummary[]> {
    if (signal?.aborted === true) throw new ChatdError('aborted', 'aborted');
    const f = (globalThis as { fetch?: typeof fetch }).fetch;
    if (f === undefined) throw new ChatdError('unavailable', 'no fetch in this environment');
    const startEpoch = this.epoch;
    const token = this.lastToken ?? (await this.getToken());
    let res: Response;
    try {
      const init: RequestInit = { headers: { authorization: `Bearer ${token}` }, cache: 'no-store' };
      if (signal !== undefined) init.signal = signal;
      res = await f(`${this.httpBase()}/v1/me/channels`, init);
    } catch (e) {
      if (isAborted(signal)) throw new ChatdError('aborted', 'aborted');
      throw new ChatdError('unavailable', `GET /v1/me/channels: ${String(e)}`);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const err = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
      throw new ChatdError(
        typeof err?.code === 'string' ? err.code : res.status >= 500 ? 'unavailable' : 'internal',
        typeof err?.message === 'string' ? err.message : `GET /v1/me/channels: HTTP ${res.status}`,
      );
    }
    const list = (body as { channels?: unknown } | undefined)?.channels;
    if (!Array.isArray(list)) throw new ChatdError('internal', 'GET /v1/me/channels: no channels list');
    if (this.state !== 'closed') this.applyChannelList(list as HelloChannel[], startEpoch);
    return this.listStore.getSnapshot();
  }

  /**
   * Loads the page of entries just below the oldest held one. Resolves to whether even
   * older entries exist.
   */
  loadOlder(channelId: string, signal?: AbortSignal): Promise<boolean> {
    const ch = this.ctx(channelId);
    if (!ch.opened) this.channel(channelId);
    return new Promise<boolean>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(new ChatdError('aborted', 'aborted'));
        return;
      }
      const onAbort = (): void => {
        const i = ch.olderWaiters.indexOf(done);
        if (i >= 0) ch.olderWaiters.splice(i, 1);
        reject(new ChatdError('aborted', 'aborted'));
      };
      const done = (err?: ChatdError): void => {
        signal?.removeEventListener('abort', onAbort);
        if (err !== undefined) reject(err);
        else resolve(ch.log.hasOlder);
      };
      if (ch.log.isStarted && !ch.log.hasOlder) {
        resolve(false);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      ch.olderWaiters.push(done);
      this.pumpOlder(ch);
    });
  }

  /** Marks the channel read up to its newest held entry (monotonic: never moves back). */
  markRead(channelId: string): void {
    const ch = this.ctx(channelId);
    const id = ch.log.highEntryId();
    const seq = ch.log.high;
    if (id === undefined || seq <= ch.readSeq) return;
    ch.readSeq = seq;
    ch.deliveredSeq = Math.max(ch.deliveredSeq, seq);
    ch.deliveredSent = Math.max(ch.deliveredSent, seq);
    ch.store.invalidate();
    this.sendFrame({ type: 'MSG_READ', messageId: id });
  }

  // ---------------------------------------------------------------- sending

  /** Sends a message. Resolves on its MSG_ACK (also `duplicate: true`); rejects with a ChatdError when it failed. */
  send(channelId: string, body: string, options: SendOptions = {}): Promise<SentEntry> {
    const ch = this.ctx(channelId);
    if (ch.throttle.onStop()) {
      /* the server stops the indicator when the message is stored */
    }
    return this.enqueue({ type: 'MSG_SEND', channelId, body }, options);
  }

  /** Edits one of the user's messages (version 1.1). */
  edit(channelId: string, messageId: string, body: string, options: SendOptions = {}): Promise<SentEntry> {
    return this.enqueue({ type: 'MSG_EDIT', channelId, messageId, body }, options);
  }

  /** Deletes one of the user's messages (version 1.1). */
  deleteMessage(channelId: string, messageId: string, options: SendOptions = {}): Promise<SentEntry> {
    return this.enqueue({ type: 'MSG_DELETE', channelId, messageId }, options);
  }

  /** Adds or removes a reaction (version 1.1). */
  react(
    channelId: string,
    messageId: string,
    emoji: string,
    op: 'add' | 'remove' = 'add',
    options: SendOptions = {},
  ): Promise<SentEntry> {
    return this.enqueue({ type: 'MSG_REACT', channelId, messageId, emoji, op }, options);
  }

  /** Sends a failed outbox record again, with its same clientMsgId. */
  async retry(clientMsgId: string): Promise<SentEntry> {
    const p = this.pending.get(clientMsgId);
    if (p === undefined) throw new ChatdError('not_found', 'no such outbox record');
    const record: OutboxRecord = { ...p.record, state: 'pending', owner: this.tabId };
    delete (record as { error?: unknown }).error;
    p.record = record;
    p.foreign = false;
    p.attempt = 0;
    await this.storage.put(record);
    this.broadcast({ t: 'put', record });
    this.channelChanged(record.op.channelId);
    const promise = new Promise<SentEntry>((resolve, reject) => p.waiters.push({ resolve, reject }));
    this.transmit(p);
    return promise;
  }

  /** Removes an outbox record (normally a failed one); its waiters reject with `discarded`. */
  async discard(clientMsgId: string): Promise<void> {
    const p = this.pending.get(clientMsgId);
    if (p === undefined) return;
    this.pending.delete(clientMsgId);
    clearTimeout(p.retryTimer);
    for (const w of p.waiters) w.reject(new ChatdError('discarded', 'discarded'));
    await this.storage.delete(this.userIdValue, clientMsgId);
    this.broadcast({ t: 'deleted', clientMsgId });
    this.channelChanged(p.record.op.channelId);
  }

  /** The outbox records in send order (this tab's and other tabs'). */
  outbox(): OutboxRecord[] {
    return sendOrder([...this.pending.values()].map((p) => p.record));
  }

  // ---------------------------------------------------------------- typing & presence

  /** The user is typing in the channel: sends `start` at most once per throttle period. */
  typing(channelId: string): void {
    const ch = this.ctx(channelId);
    if (this.unsupported.has('TYPING')) return;
    if (ch.throttle.onInput(this.now())) this.sendFrame({ type: 'TYPING', channelId, state: 'start' });
  }

  /** The user stopped typing (cleared the input): sends `stop` if a `start` is live. */
  stopTyping(channelId: string): void {
    const ch = this.ctx(channelId);
    if (this.unsupported.has('TYPING')) return;
    if (ch.throttle.onStop()) this.sendFrame({ type: 'TYPING', channelId, state: 'stop' });
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
    this.presenceIds = new Set(userIds);
    for (const id of [...this.presenceMap.keys()]) if (!this.presenceIds.has(id)) this.presenceMap.delete(id);
    this.presenceStore.invalidate();
    this.presenceAttempt = 0;
    this.sendPresenceSub();
  }

  // ================================================================ internals

  /** Sends the current PRESENCE_SUB (if open) and makes it the pending one. */
  private sendPresenceSub(): void {
    clearTimeout(this.presenceTimer);
    this.presenceTimer = undefined;
    this.presenceWaiting = undefined;
    if (this.state !== 'open' || this.unsupported.has('PRESENCE_SUB')) return;
    if (this.sendFrame({ type: 'PRESENCE_SUB', userIds: [...this.presenceIds] }) === 0) return;
    if (this.presenceIds.size > 0) this.presenceWaiting = new Set(this.presenceIds);
  }

  /** A PRESENCE arrived: one id fewer to wait for; the snapshot may be complete. */
  private presenceArrived(userId: string): void {
    const w = this.presenceWaiting;
    if (w === undefined) return;
    w.delete(userId);
    if (w.size > 0) return;
    this.presenceWaiting = undefined;
    this.presenceAttempt = 0;
    clearTimeout(this.presenceTimer);
    this.presenceTimer = undefined;
  }

  /**
   * A retryable ERROR naming no frame arrived while the subscription is pending: send it
   * again after a backoff. Misattributing another frame's ERROR (a MSG_READ's, say) costs
   * one redundant PRESENCE_SUB only: it is idempotent (it replaces the subscription and
   * the server sends the snapshot again). One retry is scheduled at a time, so a burst of
   * ERRORs cannot make a tight loop.
   */
  private presenceRefused(err: ChatdError): void {
    if (this.presenceWaiting === undefined || this.presenceTimer !== undefined) return;
    const delay = Math.max(
      backoffDelay(this.presenceAttempt++, { baseMs: 250, maxMs: 30_000, ...this.opts.retryBackoff }),
      err.retryAfterMs ?? 0,
    );
    const gen = this.openConn;
    this.presenceTimer = setTimeout(() => {
      this.presenceTimer = undefined;
      if (this.presenceWaiting === undefined || this.openConn !== gen) return;
      this.sendPresenceSub();
    }, delay);
  }

  private ctx(channelId: string): ChannelCtx {
    let ch = this.channels.get(channelId);
    if (ch !== undefined) return ch;
    const created: ChannelCtx = {
      id: channelId,
      log: new ChannelLog(channelId, this.userIdValue),
      opened: false,
      removed: false,
      hello: undefined,
      helloLastSeq: 0,
      liveUnread: new Map(),
      listedEpoch: 0,
      removedEpoch: 0,
      readSeq: 0,
      deliveredSeq: 0,
      deliveredSent: 0,
      receipts: new Map(),
      typing: new TypingTracker(),
      typingTimer: undefined,
      throttle: new TypingThrottle(this.opts.typingThrottleMs ?? 2000),
      sent: new Map(),
      store: new LazyStore(
        () => this.buildSnapshot(created),
        () => {
          this.listStore.invalidate();
        },
      ),
      olderWaiters: [],
      loadingOlder: false,
    };
    ch = created;
    this.channels.set(channelId, ch);
    return ch;
  }

  private buildSnapshot(ch: ChannelCtx): ChannelSnapshot {
    const messages = ch.log.messages();
    const mine = new Set<string>();
    for (const m of messages) if (m.senderId === this.userIdValue) mine.add(m.clientMsgId);
    const outgoing: OutgoingMessage[] = [];
    for (const [k, s] of ch.sent) {
      if (mine.has(k) || (s.seq !== undefined && ch.log.isStarted && s.seq < ch.log.low)) ch.sent.delete(k);
    }
    const seen = new Set<string>();
    for (const p of this.pending.values()) {
      const r = p.record;
      if (r.op.type !== 'MSG_SEND' || r.op.channelId !== ch.id || mine.has(r.clientMsgId)) continue;
      seen.add(r.clientMsgId);
      const sent = ch.sent.get(r.clientMsgId);
      outgoing.push(
        Object.freeze({
          clientMsgId: r.clientMsgId,
          channelId: ch.id,
          body: r.op.body,
          state: sent !== undefined ? 'sent' : r.state,
          seq: sent?.seq,
          messageId: sent?.messageId,
          error: r.error,
          createdAt: r.createdAt,
        }),
      );
    }
    for (const s of ch.sent.values()) if (!seen.has(s.clientMsgId)) outgoing.push(s);
    outgoing.sort((a, b) => a.createdAt - b.createdAt);
    return Object.freeze({
      channelId: ch.id,
      status: ch.removed ? 'removed' : ch.log.isStarted ? 'ready' : 'loading',
      messages,
      outgoing: Object.freeze(outgoing),
      hasOlder: ch.log.hasOlder,
      unread: this.unreadOf(ch),
      lastSeq: ch.log.knownLastSeq,
      deliveredSeq: ch.deliveredSeq,
      readSeq: ch.readSeq,
      receipts: Object.freeze(Object.fromEntries(ch.receipts)),
      typing: ch.typing.list(),
    });
  }

  private unreadOf(ch: ChannelCtx): number {
    return computeUnread({
      readSeq: ch.readSeq,
      helloReadSeq: ch.hello?.readSeq ?? 0,
      helloLastSeq: ch.helloLastSeq,
      helloUnread: ch.hello?.unread,
      logStarted: ch.log.isStarted,
      logLow: ch.log.low,
      logHigh: ch.log.high,
      knownLastSeq: ch.log.knownLastSeq,
      countHeldAbove: (s) => ch.log.countUnreadAbove(s),
      liveUnread: countAbove(ch.liveUnread, ch.readSeq),
    });
  }

  /** The channel list's snapshot: the previous array (and summaries) when nothing changed. */
  private buildList(): readonly ChannelSummary[] {
    const prev = new Map(this.listValue.map((c) => [c.channelId, c]));
    const next: ChannelSummary[] = [];
    let changed = false;
    const chans = [...this.channels.values()].filter((c) => !c.removed && c.hello !== undefined);
    chans.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const ch of chans) {
      const s: ChannelSummary = {
        channelId: ch.id,
        name: ch.hello?.name,
        metadata: ch.hello?.metadata,
        lastSeq: ch.log.knownLastSeq,
        unread: this.unreadOf(ch),
        readSeq: ch.readSeq,
        opened: ch.opened,
      };
      const old = prev.get(ch.id);
      if (
        old !== undefined &&
        old.name === s.name &&
        old.metadata === s.metadata &&
        old.lastSeq === s.lastSeq &&
        old.unread === s.unread &&
        old.readSeq === s.readSeq &&
        old.opened === s.opened
      ) {
        next.push(old);
      } else {
        next.push(Object.freeze(s));
        changed = true;
      }
    }
    if (!changed && next.length === this.listValue.length && next.every((c, i) => c === this.listValue[i])) {
      return this.listValue;
    }
    this.listValue = Object.freeze(next);
    return this.listValue;
  }

  /** Takes a channel's entry of HELLO (or of `GET /v1/me/channels`): its seqs, watermarks, unread base. */
  private takeChannelState(ch: ChannelCtx, c: HelloChannel): void {
    ch.hello = c;
    ch.helloLastSeq = c.lastSeq;
    for (const [id, seq] of ch.liveUnread) if (seq <= c.lastSeq) ch.liveUnread.delete(id);
    ch.log.noteLastSeq(c.lastSeq);
    ch.readSeq = Math.max(ch.readSeq, c.readSeq);
    ch.deliveredSeq = Math.max(ch.deliveredSeq, c.deliveredSeq, ch.readSeq);
    ch.deliveredSent = Math.max(ch.deliveredSent, ch.deliveredSeq);
    ch.store.invalidate();
  }

  /**
   * A live frame shows the user is a member now (added while connected, or again): a
   * `MSG_RECV`, or the ACK of a new (not duplicate) entry. A duplicate ACK proves nothing:
   * the server gives it also after the sender left the channel.
   */
  private memberNow(ch: ChannelCtx): void {
    if (ch.hello === undefined) ch.hello = { channelId: ch.id, lastSeq: 0, deliveredSeq: 0, readSeq: 0 };
    if (ch.removed) {
      ch.removed = false;
      ch.store.invalidate();
    }
    this.markListed(ch);
  }

  /** The channel is (again) in the list: `channelAdded` when it was not. */
  private markListed(ch: ChannelCtx): void {
    ch.listedEpoch = ++this.epoch;
    if (ch.removed || ch.hello === undefined || this.listed.has(ch.id)) return;
    this.listed.add(ch.id);
    this.listStore.invalidate();
    this.events.emit('channelAdded', ch.id);
  }

  /** The channel was deleted or the user left it: `channelRemoved` once. */
  private markRemoved(ch: ChannelCtx): void {
    ch.removedEpoch = ++this.epoch;
    if (ch.removed) return;
    ch.removed = true;
    this.listed.delete(ch.id);
    ch.store.invalidate();
    this.events.emit('channelRemoved', ch.id);
  }

  /**
   * Brings the list up to date with `GET /v1/me/channels`, read after `epoch` was
   * `startEpoch`: a listing or removal seen since (a live frame) is newer than the read
   * and wins over it.
   */
  private applyChannelList(list: readonly HelloChannel[], startEpoch: number): void {
    const inList = new Set<string>();
    for (const c of list) {
      if (typeof c.channelId !== 'string' || typeof c.lastSeq !== 'number') continue;
      inList.add(c.channelId);
      const ch = this.ctx(c.channelId);
      if (ch.removed || ch.hello === undefined) {
        if (ch.removedEpoch > startEpoch) continue;
        ch.removed = false;
        this.takeChannelState(ch, c);
      } else if (c.readSeq >= ch.readSeq) {
        this.takeChannelState(ch, c);
      } else {
        // our MSG_READ is newer than this read: keep the unread base, take the rest
        ch.hello = { ...ch.hello, name: c.name, metadata: c.metadata };
        ch.log.noteLastSeq(c.lastSeq);
        ch.store.invalidate();
      }
      this.markListed(ch);
      if (ch.opened) {
        if (ch.log.isStarted) this.catchUp(ch);
        else this.openChannel(ch);
      }
    }
    for (const ch of [...this.channels.values()]) {
      if (inList.has(ch.id) || ch.removed || ch.hello === undefined || ch.listedEpoch > startEpoch) continue;
      this.markRemoved(ch);
    }
  }

  private refreshing = false;

  /** While open, {@link ChatClient.refreshChannels} every `channelRefreshMs`. */
  private startChannelRefresh(): void {
    const every = this.opts.channelRefreshMs ?? 30_000;
    if (every <= 0 || this.refreshTimer !== undefined) return;
    this.refreshTimer = setInterval(() => {
      if (this.state !== 'open' || this.refreshing) return;
      this.refreshing = true;
      this.refreshChannels().then(
        () => {
          this.refreshing = false;
        },
        (e: unknown) => {
          this.refreshing = false;
          // a server without the route (version 1): stop asking
          if (e instanceof ChatdError && e.code === 'not_found') {
            clearInterval(this.refreshTimer);
          }
        },
      );
    }, every);
  }

  /** Base URL of the user HTTP routes. */
  private httpBase(): string {
    if (this.opts.httpUrl !== undefined) return this.opts.httpUrl.replace(/\/+$/, '');
    const u = new URL(this.opts.url);
    const scheme = u.protocol === 'wss:' ? 'https:' : u.protocol === 'ws:' ? 'http:' : u.protocol;
    let path = u.pathname.replace(/\/+$/, '');
    if (path.endsWith('/v1/ws')) path = path.slice(0, -'/v1/ws'.length);
    return `${scheme}//${u.host}${path}`;
  }

  private channelChanged(channelId: string): void {
    this.channels.get(channelId)?.store.invalidate();
  }

  private setState(s: ConnectionState): void {
    if (this.state === s || this.state === 'closed') return;
    this.state = s;
    this.connStore.invalidate();
    this.events.emit('state', s);
  }

  private async getToken(): Promise<string> {
    const t = this.opts.token;
    return typeof t === 'string' ? t : await t();
  }

  private connectNow(): void {
    if (this.state === 'closed') return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    if (this.ws !== undefined) return;
    const gen = ++this.connGen;
    this.setState(this.reconnectAttempt === 0 && this.openConn === 0 ? 'connecting' : 'reconnecting');
    void this.getToken().then(
      (token) => {
        if (gen !== this.connGen || this.state === 'closed') return;
        this.lastToken = token;
        const Ctor =
          this.opts.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
        if (Ctor === undefined) throw new Error('no WebSocket: pass the WebSocket option (the ws package in Node)');
        const sep = this.opts.url.includes('?') ? '&' : '?';
        let ws: WebSocketLike;
        try {
          ws = new Ctor(`${this.opts.url}${sep}access_token=${encodeURIComponent(token)}`);
        } catch {
          this.scheduleReconnect();
          return;
        }
        this.ws = ws;
        ws.onmessage = (ev) => {
          if (gen !== this.connGen) return;
          const text = typeof ev.data === 'string' ? ev.data : String(ev.data);
          this.onFrame(text, gen);
        };
        ws.onclose = () => {
          if (gen !== this.connGen) return;
          this.dropConnection();
        };
        ws.onerror = () => {
          /* onclose follows */
        };
      },
      () => {
        if (gen === this.connGen) this.scheduleReconnect();
      },
    );
  }

  /** Forget the socket; every in-flight request will be resent after the next HELLO. */
  private dropConnection(): void {
    this.ws = undefined;
    this.connGen++;
    this.openConn = 0;
    this.sessionId = undefined;
    this.syncs.clear();
    this.v11Unconfirmed = [];
    clearTimeout(this.presenceTimer);
    this.presenceTimer = undefined;
    this.presenceWaiting = undefined;
    for (const ch of this.channels.values()) {
      ch.loadingOlder = false;
      ch.typing.expire(Number.POSITIVE_INFINITY);
      ch.store.invalidate();
    }
    for (const p of this.pending.values()) p.inflightConn = 0;
    if (this.state !== 'closed') {
      this.setState('reconnecting');
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.state === 'closed' || this.reconnectTimer !== undefined) return;
    const delay = backoffDelay(this.reconnectAttempt++, { baseMs: 250, maxMs: 10_000, ...this.opts.reconnectBackoff });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connectNow();
    }, delay);
  }

  private sendFrame(frame: ClientFrame): number {
    const ws = this.ws;
    if (ws === undefined || this.openConn === 0 || ws.readyState !== 1) return 0;
    const no = ++this.frameNo;
    if (V11_TYPES.has(frame.type) && !this.supported.has(frame.type)) {
      const entry: { type: string; frameNo: number; clientMsgId?: string } = { type: frame.type, frameNo: no };
      if ('clientMsgId' in frame) entry.clientMsgId = frame.clientMsgId;
      this.v11Unconfirmed.push(entry);
    }
    try {
      ws.send(JSON.stringify(frame));
    } catch {
      return 0;
    }
    return no;
  }

  /** A reply to frame `no` arrived: every earlier v1.1 frame was understood. */
  private confirmUpTo(no: number): void {
    if (this.v11Unconfirmed.length === 0) return;
    this.v11Unconfirmed = this.v11Unconfirmed.filter((u) => {
      if (u.frameNo < no) {
        this.supported.add(u.type);
        return false;
      }
      return true;
    });
  }

  private onFrame(text: string, gen: number): void {
    const f = parseServerFrame(text);
    if (f === undefined) return;
    switch (f.type) {
      case 'HELLO':
        this.onHello(f, gen);
        break;
      case 'MSG_ACK':
        this.onAck(f);
        break;
      case 'MSG_RECV':
        // fan-out reaches current members only
        this.memberNow(this.ctx(f.channelId));
        this.onEntries(f.channelId, [f], false);
        break;
      case 'SYNC_BATCH':
        this.onBatch(f);
        break;
      case 'RECEIPT':
        this.onReceipt(f);
        break;
      case 'ERROR':
        this.onError(f);
        break;
      case 'TYPING':
        this.onTyping(f);
        break;
      case 'PRESENCE':
        this.supported.add('PRESENCE_SUB');
        // A PRESENCE for an id no longer subscribed is a late frame of a replaced
        // subscription (its snapshot was still on the wire): dropped, so the store
        // holds the current subscription's ids only.
        if (!this.presenceIds.has(f.userId)) break;
        this.presenceMap.set(f.userId, Object.freeze({ status: f.status, lastSeenAt: f.lastSeenAt }));
        this.presenceStore.invalidate();
        this.presenceArrived(f.userId);
        this.events.emit('presence', f);
        break;
      case 'CHANNEL_REMOVED':
        this.markRemoved(this.ctx(f.channelId));
        break;
      default:
        break; // unknown frame types are ignored
    }
  }

  private onHello(h: HelloFrame, gen: number): void {
    this.openConn = gen;
    this.sessionId = h.sessionId;
    this.reconnectAttempt = 0;
    const listed = new Set<string>();
    for (const c of h.channels) {
      listed.add(c.channelId);
      const ch = this.ctx(c.channelId);
      ch.removed = false;
      this.takeChannelState(ch, c);
    }
    for (const ch of this.channels.values()) {
      if (!listed.has(ch.id) && ch.hello !== undefined && !ch.removed) this.markRemoved(ch);
    }
    this.setState('open');
    this.connStore.invalidate();
    this.events.emit('hello', h);
    for (const id of listed) {
      const ch = this.channels.get(id);
      if (ch !== undefined) this.markListed(ch);
    }
    this.startChannelRefresh();
    for (const ch of this.channels.values()) {
      if (!ch.opened) continue;
      if (ch.log.isStarted) this.catchUp(ch);
      else this.openChannel(ch);
      if (ch.olderWaiters.length > 0) this.pumpOlder(ch);
    }
    this.presenceAttempt = 0;
    if (this.presenceIds.size > 0) this.sendPresenceSub();
    void this.resendAll();
  }

  private async resendAll(): Promise<void> {
    // ours first, at once and in order; then records other tabs left behind (reload, crash)
    this.pump();
    await this.loadOutbox();
    this.pump();
  }

  private syncQueue(channelId: string): SyncReq[] {
    let q = this.syncs.get(channelId);
    if (q === undefined) {
      q = [];
      this.syncs.set(channelId, q);
    }
    return q;
  }

  private sendSync(ch: ChannelCtx, req: Omit<SyncReq, 'frameNo' | 'sentAt'>, frame: ClientFrame): boolean {
    const no = this.sendFrame(frame);
    if (no === 0) return false;
    this.syncQueue(ch.id).push({ ...req, frameNo: no, sentAt: this.now() });
    return true;
  }

  private pageSize(): number {
    return Math.min(500, Math.max(1, this.opts.pageSize ?? 50));
  }

  private openChannel(ch: ChannelCtx): void {
    if (this.state !== 'open' || ch.log.isStarted) return;
    if (this.syncQueue(ch.id).some((r) => r.kind === 'open')) return;
    const limit = this.pageSize();
    const afterSeq = Math.max(0, ch.log.knownLastSeq - limit);
    // `latest` for version 1.1; afterSeq gives the same page on a version 1 server (seqs are gapless)
    this.sendSync(ch, { kind: 'open', afterSeq }, { type: 'SYNC', channelId: ch.id, afterSeq, limit, latest: true });
  }

  private catchUp(ch: ChannelCtx): void {
    if (this.state !== 'open' || !ch.log.isStarted) return;
    if (ch.log.knownLastSeq <= ch.log.high) return;
    if (this.syncQueue(ch.id).some((r) => r.kind === 'forward' || r.kind === 'open')) return;
    const afterSeq = ch.log.high;
    this.sendSync(ch, { kind: 'forward', afterSeq }, { type: 'SYNC', channelId: ch.id, afterSeq, limit: 500 });
  }

  private pumpOlder(ch: ChannelCtx, fromSeq?: number): void {
    if (this.state !== 'open') return;
    if (!ch.log.isStarted) {
      this.openChannel(ch);
      return;
    }
    if (!ch.log.hasOlder) {
      const ws = ch.olderWaiters.splice(0);
      for (const w of ws) w();
      return;
    }
    if (ch.loadingOlder) return;
    const low = ch.log.low;
    const limit = Math.min(this.pageSize(), low - 1);
    const afterSeq = fromSeq ?? Math.max(0, low - 1 - limit);
    ch.loadingOlder = true;
    const sent = this.sendSync(
      ch,
      { kind: 'older', afterSeq },
      { type: 'SYNC', channelId: ch.id, afterSeq, beforeSeq: low, limit },
    );
    if (!sent) ch.loadingOlder = false;
  }

  private onBatch(b: SyncBatchFrame): void {
    const ch = this.ctx(b.channelId);
    const req = this.syncs.get(b.channelId)?.shift();
    if (req !== undefined) this.confirmUpTo(req.frameNo);
    const kind = req?.kind ?? 'forward';
    if (kind === 'older') {
      ch.loadingOlder = false;
      const lowBefore = ch.log.low;
      const added = ch.log.prepend(b.messages, b.lastSeq);
      if (added.length > 0) this.events.emit('older', ch.id, added);
      ch.store.invalidate();
      const top = b.messages.length > 0 ? b.messages[b.messages.length - 1] : undefined;
      if (ch.log.low === lowBefore && top !== undefined && top.seq < lowBefore - 1) {
        // a version 1 page that stopped early (max_page_bytes): read on towards the window
        this.pumpOlder(ch, top.seq);
        return;
      }
      const ws = ch.olderWaiters.splice(0);
      for (const w of ws) w();
      return;
    }
    if (kind === 'open' && !ch.log.isStarted) {
      const first = b.messages[0];
      ch.log.start(first !== undefined ? first.seq - 1 : (req?.afterSeq ?? 0));
      ch.store.invalidate();
    }
    this.onEntries(ch.id, b.messages, true, b.lastSeq);
    if (ch.olderWaiters.length > 0) this.pumpOlder(ch);
  }

  private onEntries(channelId: string, entries: readonly WireEntry[], fromRead: boolean, readLastSeq?: number): void {
    const ch = this.ctx(channelId);
    if (!ch.opened) {
      // not displayed: only count (others' messages above what HELLO counted, less deleted ones)
      for (const e of entries) {
        const kind = entryKind(e);
        if (kind === 'delete' && e.targetId !== undefined) ch.liveUnread.delete(e.targetId);
        if (e.seq > ch.log.knownLastSeq) {
          ch.log.noteLastSeq(e.seq);
          if (kind === 'message' && e.senderId !== this.userIdValue) ch.liveUnread.set(e.messageId, e.seq);
        }
      }
      ch.store.invalidate();
      return;
    }
    const r = ch.log.ingest(entries, fromRead, readLastSeq);
    if (r.appended.length > 0) {
      for (const e of r.appended) {
        if (entryKind(e) === 'message' && ch.typing.remove(e.senderId)) ch.store.invalidate();
      }
      this.events.emit('entries', ch.id, r.appended);
      this.scheduleDelivered();
    }
    ch.store.invalidate();
    if (r.gapAfter !== undefined) this.catchUp(ch);
  }

  private scheduleDelivered(): void {
    if (this.opts.autoDelivered === false || this.deliveredTimer !== undefined) return;
    this.deliveredTimer = setTimeout(() => {
      this.deliveredTimer = undefined;
      for (const ch of this.channels.values()) {
        const id = ch.log.highEntryId();
        if (!ch.opened || id === undefined || ch.log.high <= ch.deliveredSent) continue;
        if (this.sendFrame({ type: 'MSG_DELIVERED', messageId: id }) !== 0) {
          ch.deliveredSent = ch.log.high;
          ch.deliveredSeq = Math.max(ch.deliveredSeq, ch.log.high);
          ch.store.invalidate();
        }
      }
    }, 100);
  }

  private onReceipt(r: ReceiptFrame): void {
    const ch = this.ctx(r.channelId);
    if (r.userId === this.userIdValue) {
      if (r.kind === 'read') ch.readSeq = Math.max(ch.readSeq, r.seq);
      ch.deliveredSeq = Math.max(ch.deliveredSeq, r.seq);
      ch.store.invalidate();
      return;
    }
    const prev = ch.receipts.get(r.userId) ?? { deliveredSeq: 0, readSeq: 0 };
    const next = applyReceipt(prev, r.kind, r.seq);
    if (next !== prev) {
      ch.receipts.set(r.userId, next);
      ch.store.invalidate();
      this.events.emit('receipt', r);
    }
  }

  private onTyping(t: TypingFrame): void {
    this.supported.add('TYPING');
    if (t.userId === this.userIdValue) return;
    const ch = this.ctx(t.channelId);
    if (ch.typing.apply(t, this.now())) ch.store.invalidate();
    this.scheduleTypingExpiry(ch);
  }

  private scheduleTypingExpiry(ch: ChannelCtx): void {
    clearTimeout(ch.typingTimer);
    const next = ch.typing.nextExpiry();
    if (next === undefined) return;
    ch.typingTimer = setTimeout(
      () => {
        if (ch.typing.expire(this.now())) ch.store.invalidate();
        this.scheduleTypingExpiry(ch);
      },
      Math.max(0, next - this.now()) + 5,
    );
  }

  // ---------------------------------------------------------------- outbox internals

  private nextOrder(): number {
    const base = this.now() * 1000;
    this.orderCounter = Math.max(this.orderCounter + 1, base);
    return this.orderCounter;
  }

  private enqueue(op: OutboxOp, options: SendOptions): Promise<SentEntry> {
    if (options.signal?.aborted === true) return Promise.reject(new ChatdError('aborted', 'aborted'));
    if (op.type !== 'MSG_SEND' && this.unsupported.has(op.type)) {
      return Promise.reject(new ChatdError('unknown_type', `the server does not support ${op.type}`));
    }
    const record: OutboxRecord = {
      userId: this.userIdValue,
      clientMsgId: options.clientMsgId ?? crypto.randomUUID(),
      op,
      createdAt: this.now(),
      order: this.nextOrder(),
      state: 'pending',
      owner: this.tabId,
    };
    const p: Pending = {
      record,
      foreign: false,
      attempt: 0,
      inflightConn: 0,
      frameNo: 0,
      retryTimer: undefined,
      waiters: [],
    };
    const promise = new Promise<SentEntry>((resolve, reject) => p.waiters.push({ resolve, reject }));
    const signal = options.signal;
    const onAbort = (): void => {
      for (const w of p.waiters) w.reject(new ChatdError('aborted', 'aborted'));
      p.waiters = [];
      // still waiting for its ACK: out of the outbox (storage too), so nothing resends it
      if (this.pending.get(record.clientMsgId) === p) void this.discard(record.clientMsgId);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const settled = (): void => {
      signal?.removeEventListener('abort', onAbort);
    };
    promise.then(settled, settled);
    // durable before the first try; puts are chained so sends go out in the order they were made
    const put = this.putChain.then(() => this.storage.put(record));
    this.putChain = put.catch(() => undefined);
    put.then(
      () => {
        if (signal?.aborted === true) {
          // aborted while being written: the record must not stay behind to be sent by a later load
          void this.storage.delete(this.userIdValue, record.clientMsgId);
          return;
        }
        if (this.pending.has(record.clientMsgId)) return;
        this.pending.set(record.clientMsgId, p);
        this.broadcast({ t: 'put', record });
        this.channelChanged(op.channelId);
        this.transmit(p);
      },
      (e: unknown) => {
        for (const w of p.waiters) w.reject(new ChatdError('internal', `outbox storage failed: ${String(e)}`));
        p.waiters = [];
      },
    );
    return promise;
  }

  private frameOf(r: OutboxRecord): ClientFrame {
    const op = r.op;
    switch (op.type) {
      case 'MSG_SEND':
        return { type: 'MSG_SEND', channelId: op.channelId, clientMsgId: r.clientMsgId, body: op.body };
      case 'MSG_EDIT':
        return { type: 'MSG_EDIT', clientMsgId: r.clientMsgId, messageId: op.messageId, body: op.body };
      case 'MSG_DELETE':
        return { type: 'MSG_DELETE', clientMsgId: r.clientMsgId, messageId: op.messageId };
      case 'MSG_REACT':
        return { type: 'MSG_REACT', clientMsgId: r.clientMsgId, messageId: op.messageId, emoji: op.emoji, op: op.op };
    }
  }

  private transmit(p: Pending): void {
    clearTimeout(p.retryTimer);
    p.retryTimer = undefined;
    this.pump();
  }

  /**
   * Sends every pending record of this tab that is not in flight on the current
   * connection, in send order; a channel's later records wait behind one that waits for
   * its retry, so a channel's messages are stored in the order they were sent.
   */
  private pump(): void {
    if (this.openConn === 0) return;
    const blocked = new Set<string>();
    for (const r of sendOrder([...this.pending.values()].map((x) => x.record))) {
      const p = this.pending.get(r.clientMsgId);
      if (p === undefined || p.foreign || p.record.state !== 'pending') continue;
      const ch = p.record.op.channelId;
      if (blocked.has(ch)) continue;
      if (p.retryTimer !== undefined) {
        blocked.add(ch);
        continue;
      }
      if (p.inflightConn === this.openConn) continue;
      const no = this.sendFrame(this.frameOf(p.record));
      if (no === 0) return;
      p.inflightConn = this.openConn;
      p.frameNo = no;
      p.sentAt = this.now();
    }
  }

  private checkReplies(): void {
    if (this.state !== 'open') return;
    const limit = this.opts.replyTimeoutMs ?? 15_000;
    const now = this.now();
    let stale = false;
    for (const p of this.pending.values()) {
      if (p.inflightConn !== 0 && p.inflightConn === this.openConn && now - (p.sentAt ?? now) > limit) stale = true;
    }
    for (const q of this.syncs.values()) for (const r of q) if (now - r.sentAt > limit) stale = true;
    if (stale) this.reconnect();
  }

  private onAck(a: AckFrame): void {
    const p = this.pending.get(a.clientMsgId);
    if (p === undefined) {
      // a send aborted or discarded while on its way was stored after all: read it, so it shows
      const ch = this.channels.get(a.channelId);
      if (ch?.opened === true) {
        ch.log.noteLastSeq(a.seq);
        this.catchUp(ch);
      }
      return;
    }
    this.confirmUpTo(p.frameNo);
    if (p.record.op.type !== 'MSG_SEND') this.supported.add(p.record.op.type);
    const sent: SentEntry = {
      clientMsgId: a.clientMsgId,
      messageId: a.messageId,
      channelId: a.channelId,
      seq: a.seq,
      ts: a.ts,
      duplicate: a.duplicate,
    };
    this.completed(p, sent);
    void this.storage.delete(this.userIdValue, a.clientMsgId);
    this.broadcast({ t: 'acked', clientMsgId: a.clientMsgId, ack: sent });
  }

  /** An outbox record was ACKed (here or in another tab). */
  private completed(p: Pending, sent: SentEntry): void {
    this.pending.delete(p.record.clientMsgId);
    clearTimeout(p.retryTimer);
    const op = p.record.op;
    const ch = this.ctx(sent.channelId);
    if (!sent.duplicate) this.memberNow(ch);
    if (op.type === 'MSG_SEND') {
      ch.sent.set(sent.clientMsgId, {
        clientMsgId: sent.clientMsgId,
        channelId: sent.channelId,
        body: op.body,
        state: 'sent',
        seq: sent.seq,
        messageId: sent.messageId,
        error: undefined,
        createdAt: p.record.createdAt,
      });
    }
    // the sending session gets no MSG_RECV for its own entry: make it from the ACK
    const entry: WireEntry = {
      type: 'MSG_RECV',
      messageId: sent.messageId,
      channelId: sent.channelId,
      senderId: this.userIdValue,
      seq: sent.seq,
      ts: sent.ts,
      clientMsgId: sent.clientMsgId,
      ...(op.type === 'MSG_SEND'
        ? { kind: 'message' as const, body: op.body }
        : op.type === 'MSG_EDIT'
          ? { kind: 'edit' as const, body: op.body, targetId: op.messageId }
          : op.type === 'MSG_DELETE'
            ? { kind: 'delete' as const, body: '', targetId: op.messageId }
            : { kind: 'reaction' as const, body: '', targetId: op.messageId, emoji: op.emoji, op: op.op }),
    };
    if (sent.duplicate && !ch.log.has(sent.messageId)) {
      // a duplicate's original may already have been edited: learn its state by reading, not from here
      ch.log.noteLastSeq(sent.seq);
      if (ch.opened && ch.log.isStarted && sent.seq <= ch.log.high) {
        /* already in the window under another path: nothing to do */
      } else if (ch.opened) {
        this.onEntries(ch.id, op.type === 'MSG_SEND' ? [entry] : [], false);
        this.catchUp(ch);
      }
    } else {
      this.onEntries(ch.id, [entry], false);
    }
    ch.store.invalidate();
    for (const w of p.waiters) w.resolve(sent);
    p.waiters = [];
  }

  private onError(e: ErrorFrame): void {
    const err = ChatdError.fromFrame(e);
    if (e.clientMsgId !== undefined) {
      const p = this.pending.get(e.clientMsgId);
      if (p !== undefined) {
        this.confirmUpTo(p.frameNo);
        this.sendFailed(p, err);
        return;
      }
    }
    if (e.code === 'unknown_type') {
      const u = this.v11Unconfirmed.shift();
      if (u !== undefined) {
        this.unsupported.add(u.type);
        this.connStore.invalidate();
        const p = u.clientMsgId !== undefined ? this.pending.get(u.clientMsgId) : undefined;
        if (p !== undefined) this.fail(p, err);
        return;
      }
    }
    if (e.channelId !== undefined && e.clientMsgId === undefined) {
      const q = this.syncs.get(e.channelId);
      const req = q?.shift();
      if (req !== undefined) {
        const ch = this.ctx(e.channelId);
        if (req.kind === 'older') {
          ch.loadingOlder = false;
          for (const w of ch.olderWaiters.splice(0)) w(err);
        }
        if (e.code === 'forbidden') this.markRemoved(ch);
        ch.store.invalidate();
        return;
      }
    }
    if (err.retryable && e.clientMsgId === undefined && e.channelId === undefined && e.messageId === undefined) {
      this.presenceRefused(err);
    }
    this.events.emit('error', err, e);
  }

  private sendFailed(p: Pending, err: ChatdError): void {
    if (err.retryable) {
      p.inflightConn = 0;
      const delay = Math.max(
        backoffDelay(p.attempt++, { baseMs: 250, maxMs: 30_000, ...this.opts.retryBackoff }),
        err.retryAfterMs ?? 0,
      );
      clearTimeout(p.retryTimer);
      p.retryTimer = setTimeout(() => {
        p.retryTimer = undefined;
        this.pump();
      }, delay);
      return;
    }
    this.fail(p, err);
  }

  private fail(p: Pending, err: ChatdError): void {
    p.inflightConn = 0;
    const record: OutboxRecord = { ...p.record, state: 'failed', error: err.toJSON() };
    p.record = record;
    void this.storage.put(record);
    this.broadcast({ t: 'put', record });
    this.channelChanged(record.op.channelId);
    for (const w of p.waiters) w.reject(err);
    p.waiters = [];
    this.events.emit('failed', record.clientMsgId, err);
  }

  // ---------------------------------------------------------------- tabs

  private joinTabs(): void {
    const BC = (globalThis as { BroadcastChannel?: new (name: string) => BroadcastChannelLike }).BroadcastChannel;
    const inBrowser = typeof (globalThis as { document?: unknown }).document !== 'undefined';
    if (BC !== undefined && inBrowser) {
      this.bc = new BC(`chatd-outbox:${this.userIdValue}`);
      this.bc.onmessage = (ev) => {
        this.onBroadcast(ev.data as BroadcastMsg);
      };
    }
    if (this.locks !== undefined) {
      // held for this tab's life: other tabs see it alive and leave its records to it
      void this.locks.request(`chatd-tab:${this.tabId}`, () => {
        return new Promise<void>((resolve) => {
          this.releaseTabLock = resolve;
        });
      });
    }
  }

  private broadcast(m: BroadcastMsg): void {
    try {
      this.bc?.postMessage(m);
    } catch {
      /* closed */
    }
  }

  private onBroadcast(m: BroadcastMsg): void {
    if (m.t === 'put') {
      const r = m.record;
      const p = this.pending.get(r.clientMsgId);
      if (p === undefined) {
        this.pending.set(r.clientMsgId, {
          record: r,
          foreign: r.owner !== this.tabId,
          attempt: 0,
          inflightConn: 0,
          frameNo: 0,
          retryTimer: undefined,
          waiters: [],
        });
        if (r.owner !== this.tabId) this.watchOwner(r.owner);
      } else {
        p.record = r;
        if (r.owner !== this.tabId) {
          p.foreign = true;
          clearTimeout(p.retryTimer);
          p.retryTimer = undefined;
          this.watchOwner(r.owner);
        }
        if (r.state === 'failed') {
          const err = new ChatdError(r.error?.code ?? 'internal', r.error?.message ?? 'failed', { retryable: false });
          for (const w of p.waiters) w.reject(err);
          p.waiters = [];
        }
      }
      this.channelChanged(r.op.channelId);
    } else if (m.t === 'acked') {
      const p = this.pending.get(m.clientMsgId);
      if (p !== undefined) this.completed(p, m.ack);
    } else {
      const p = this.pending.get(m.clientMsgId);
      if (p !== undefined) {
        this.pending.delete(m.clientMsgId);
        clearTimeout(p.retryTimer);
        for (const w of p.waiters) w.reject(new ChatdError('discarded', 'discarded'));
        this.channelChanged(p.record.op.channelId);
      }
    }
  }

  /** When another tab dies, its lock is released: adopt its records then. */
  private watchOwner(owner: string): void {
    if (this.locks === undefined || this.watchedOwners.has(owner) || owner === this.tabId) return;
    this.watchedOwners.add(owner);
    void this.locks.request(`chatd-tab:${owner}`, async () => {
      this.watchedOwners.delete(owner);
      if (this.state === 'closed') return;
      await this.loadOutbox();
      if (this.state === 'open') void this.resendAll();
    });
  }

  private async liveOwners(): Promise<Set<string>> {
    const live = new Set<string>([this.tabId]);
    if (this.locks === undefined) return live;
    try {
      const q = await this.locks.query();
      for (const l of q.held ?? []) if (l.name?.startsWith('chatd-tab:') === true) live.add(l.name.slice(10));
    } catch {
      /* no query: treat others as gone */
    }
    return live;
  }

  private loadChain: Promise<void> = Promise.resolve();

  /**
   * Reads the outbox from storage: adopts records of dead tabs, mirrors those of live
   * ones. One tab at a time (a Web Lock), so a dead tab's records get one new owner.
   */
  private loadOutbox(): Promise<void> {
    const run = (): Promise<void> =>
      this.locks !== undefined
        ? this.locks.request(`chatd-adopt:${this.userIdValue}`, () => this.loadOutboxLocked())
        : this.loadOutboxLocked();
    const next = this.loadChain.then(run, run);
    this.loadChain = next.catch(() => undefined);
    return next;
  }

  private async loadOutboxLocked(): Promise<void> {
    const records = await this.storage.load(this.userIdValue);
    const live = await this.liveOwners();
    for (const r0 of sendOrder(records)) {
      const existing = this.pending.get(r0.clientMsgId);
      if (existing !== undefined && (!existing.foreign || live.has(existing.record.owner))) continue;
      let r = r0;
      const foreign = r.owner !== this.tabId && live.has(r.owner);
      if (!foreign && r.owner !== this.tabId) {
        r = { ...r, owner: this.tabId };
        await this.storage.put(r);
        this.broadcast({ t: 'put', record: r });
      }
      if (foreign) this.watchOwner(r.owner);
      this.orderCounter = Math.max(this.orderCounter, r.order);
      if (existing !== undefined) {
        existing.record = r;
        existing.foreign = foreign;
      } else {
        this.pending.set(r.clientMsgId, {
          record: r,
          foreign,
          attempt: 0,
          inflightConn: 0,
          frameNo: 0,
          retryTimer: undefined,
          waiters: [],
        });
      }
      this.channelChanged(r.op.channelId);
    }
  }

  /**
   * Resolves when an outbox record is ACKed (also one loaded from storage after a reload).
   * Rejects when it fails or is discarded, and with `aborted` when `signal` aborts (that
   * stops this wait only: the record stays in the outbox and is still sent).
   */
  whenSent(clientMsgId: string, signal?: AbortSignal): Promise<SentEntry> {
    const p = this.pending.get(clientMsgId);
    if (p === undefined) return Promise.reject(new ChatdError('not_found', 'no such outbox record'));
    if (signal?.aborted === true) return Promise.reject(new ChatdError('aborted', 'aborted'));
    return new Promise((resolve, reject) => {
      // aborting stops this wait only: the record stays in the outbox and is still sent
      const waiter: Waiter = {
        resolve: (v) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(v);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      const onAbort = (): void => {
        const i = p.waiters.indexOf(waiter);
        if (i >= 0) p.waiters.splice(i, 1);
        reject(new ChatdError('aborted', 'aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      p.waiters.push(waiter);
    });
  }
}

/** The global object as an {@link OnlineEventSource}, when it is one (a browser's `window`). */
function globalOnlineSource(): OnlineEventSource | undefined {
  const g = globalThis as Partial<OnlineEventSource>;
  return typeof g.addEventListener === 'function' && typeof g.removeEventListener === 'function'
    ? (g as OnlineEventSource)
    : undefined;
}

/** Whether the signal aborted (a call, so that TypeScript does not narrow it once and for all). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** How many of the map's seqs are above `seq`. */
function countAbove(seqs: ReadonlyMap<string, number>, seq: number): number {
  let n = 0;
  for (const s of seqs.values()) if (s > seq) n++;
  return n;
}

/** Applies a receipt to a user's watermarks: never backwards; read implies delivered. Returns `prev` when nothing moved. */
export function applyReceipt(prev: Watermarks, kind: 'delivered' | 'read', seq: number): Watermarks {
  const readSeq = kind === 'read' ? Math.max(prev.readSeq, seq) : prev.readSeq;
  const deliveredSeq = Math.max(prev.deliveredSeq, readSeq, kind === 'delivered' ? seq : 0);
  if (readSeq === prev.readSeq && deliveredSeq === prev.deliveredSeq) return prev;
  return Object.freeze({ deliveredSeq, readSeq });
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

  /** Sends a message to this channel. */
  send(body: string, options?: SendOptions): Promise<SentEntry> {
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
