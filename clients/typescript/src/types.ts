/**
 * What an app passes in ({@link ChatClientOptions}, the WebSocket and `online` sources),
 * the client's events ({@link ChatClientEvents}), and the context the client's parts share
 * (internal). What the stores hold is in `snapshot-types.ts`; the members, directory and
 * channel routes' types in `member-types.ts`.
 *
 * @module
 */
import type { BackoffOptions } from './backoff.js';
import type { ChatdError } from './errors.js';
import type { OutboxRecord, OutboxStorage } from './outbox.js';
import type { WriteAheadStore } from './outbox-wal.js';
import type {
  ChannelRemovedReason,
  ErrorFrame,
  HelloFrame,
  ChannelUpdatedFrame,
  MemberFrame,
  PresenceFrame,
  ReceiptFrame,
  WireEntry,
} from './protocol.js';
import type { ConnectionState, SentEntry } from './snapshot-types.js';
import type { Emitter } from './store.js';


/**
 * An event handler property of {@link WebSocketLike}. Declared as a method's type, so that
 * TypeScript compares its parameter both ways: a socket whose handlers take a richer event
 * (the browser's `MessageEvent`, `ws`'s `WebSocket.MessageEvent`) fits, as the client only
 * reads the fields named here.
 */
export type WebSocketHandler<E> = { bivarianceHack(ev: E): void }['bivarianceHack'];

/**
 * The subset of the WebSocket API the client uses: the browser's `WebSocket`, or the `ws`
 * package's (Node), both fit as they are (no cast).
 */
export interface WebSocketLike {
  /** 0 connecting, 1 open, 2 closing, 3 closed. */
  readonly readyState: number;
  /** Sends a text frame. */
  send(data: string): void;
  /** Closes the socket. */
  close(code?: number, reason?: string): void;
  /** Open handler. */
  onopen: WebSocketHandler<unknown> | null;
  /** Message handler; `data` is the text of a text frame (a `Buffer` with `ws`: read with `String`). */
  onmessage: WebSocketHandler<{ data: unknown }> | null;
  /** Close handler. */
  onclose: WebSocketHandler<{ code: number; reason: string }> | null;
  /** Error handler. */
  onerror: WebSocketHandler<unknown> | null;
}

/**
 * A WebSocket constructor: `globalThis.WebSocket`, or `ws`'s default export
 * (`import WebSocket from 'ws'`, passed as it is). Only the URL is passed.
 */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/**
 * Where the browser's `online` event comes from: `window` (the default, when the global
 * object has `addEventListener`), or any `EventTarget` the app dispatches `online` on
 * (React Native's NetInfo, a test).
 */
export interface OnlineEventSource {
  /** Registers the client's `online` listener (called once, by `start`). */
  addEventListener(type: 'online', listener: () => void): void;
  /** Removes it (called by `close`). */
  removeEventListener(type: 'online', listener: () => void): void;
}

/** Options of {@link ChatClient}. */
export interface ChatClientOptions {
  /** WebSocket URL of the server, e.g. `wss://chat.example.com/v1/ws`. The token goes in `access_token`. */
  readonly url: string;
  /** The user's JWT, or a function returning a fresh one (called before every connection). */
  readonly token: string | (() => string | Promise<string>);
  /** The user id (the token's `sub`); read from the token when absent. Keys the outbox. */
  readonly userId?: string;
  /** WebSocket constructor; default `globalThis.WebSocket` (required in Node 20: pass `ws`). */
  readonly WebSocket?: WebSocketConstructor;
  /** Outbox storage; default IndexedDB when present, else memory. */
  readonly storage?: OutboxStorage;
  /**
   * Where a new outbox record is written synchronously at `send`, before `storage.put`
   * resolves, so that a page reloaded or closed at once keeps it (the next load moves it
   * into `storage`). Default: the browser's `localStorage` when `storage` is the default
   * (IndexedDB); none in Node or with a `storage` given. `null`: none.
   */
  readonly writeAhead?: WriteAheadStore | null;
  /**
   * Backoff of send retries, and of a channel's opening or catch-up read (or a thread's
   * first read) asked again after a retryable refusal (default 250 ms doubling to 30 s,
   * with jitter).
   */
  readonly retryBackoff?: BackoffOptions;
  /** Backoff of reconnects (default 250 ms doubling to 10 s, with jitter). */
  readonly reconnectBackoff?: BackoffOptions;
  /** A send, SYNC or edit with no answer for this long makes the client reconnect (default 15 000 ms). */
  readonly replyTimeoutMs?: number;
  /** Entries read when a channel opens, and per older page (default 50, at most 500). */
  readonly pageSize?: number;
  /** Send `MSG_DELIVERED` for the newest entry of opened channels (default true). */
  readonly autoDelivered?: boolean;
  /** Minimum time between two typing `start`s (default 2000 ms). */
  readonly typingThrottleMs?: number;
  /** Coordinate tabs of one user with BroadcastChannel and Web Locks when present (default true). */
  readonly tabSync?: boolean;
  /**
   * Its `online` event makes a reconnecting client try at once instead of waiting out its
   * backoff. Default: the global object when it has `addEventListener` (`window` in a
   * browser; nothing in Node); `null`: none.
   */
  readonly onlineEvents?: OnlineEventSource | null;
  /**
   * Base URL of the server's user HTTP routes (`GET /v1/me/channels`), e.g.
   * `https://chat.example.com`. Default: `url` with `ws:`/`wss:` turned into
   * `http:`/`https:` and a final `/v1/ws` removed.
   */
  readonly httpUrl?: string;
  /**
   * @deprecated Ignored: the client no longer reads `GET /v1/me/channels` periodically.
   * The server announces every channel the user is added to or removed from while
   * connected (`CHANNEL_ADDED`, `CHANNEL_REMOVED`, protocol 1.2 §13.3), and `HELLO` lists
   * them after a reconnect. {@link ChatClient.refreshChannels} still reads the list on
   * demand. Kept so that code which sets it still compiles.
   */
  readonly channelRefreshMs?: number;
  /**
   * Uploads (`attachments.upload`, `attachments.sendFiles`) this client runs at once; the others
   * wait in the order they were called (a whole number of at least 1; default
   * `DEFAULT_MAX_UPLOADS_IN_FLIGHT`, 3). Keep it below the server's
   * `max_uploads_in_flight_per_user` (default 4), which counts all the user's tabs and
   * devices on a node.
   */
  readonly maxUploadsInFlight?: number;
  /**
   * Backoff before trying again an upload the server refused because the user has
   * `max_uploads_in_flight_per_user` uploads in progress (429 `rate_limited`, `reason`
   * `uploads_in_flight`): default `DEFAULT_UPLOAD_RETRY_BACKOFF`, 500 ms doubling to
   * 10 s with jitter, `UPLOAD_IN_FLIGHT_RETRIES` times; an abort stops the wait.
   */
  readonly uploadRetryBackoff?: BackoffOptions;
  /** Clock (default Date.now). */
  readonly now?: () => number;
}

/** Events of {@link ChatClient}. */
export interface ChatClientEvents {
  /** New entries of a channel's log, each once, in seq order (live, catch-up and gap fills). */
  entries: (channelId: string, entries: readonly WireEntry[]) => void;
  /** Older entries added below the window by `loadOlder`, in seq order. */
  older: (channelId: string, entries: readonly WireEntry[]) => void;
  /** Another user's watermark moved. */
  receipt: (receipt: ReceiptFrame) => void;
  /**
   * A subscribed user's presence changed. A PRESENCE for an id the current subscription
   * does not list (a late frame of a replaced one) is dropped and not emitted.
   */
  presence: (frame: PresenceFrame) => void;
  /**
   * A channel was removed (deleted, or the user is no longer a member), once. `reason`:
   * `CHANNEL_REMOVED`'s (version 1.2: `left`, `removed`, `banned`, `deleted`, or one this
   * client does not know), `left` after {@link ChatClient.leave}, `removed` after the
   * user's own {@link ChatClient.removeMember}; undefined when the client learned it
   * otherwise (a `HELLO` or channel list without it, a refused read).
   */
  channelRemoved: (channelId: string, reason: ChannelRemovedReason | undefined) => void;
  /**
   * A channel joined {@link ChatClient.channelIds}: listed by a `HELLO` (each channel on
   * the first one), by `CHANNEL_ADDED` (the user was added while connected: version 1.2),
   * by `GET /v1/me/channels`, or first seen in a live `MSG_RECV`.
   */
  channelAdded: (channelId: string) => void;
  /**
   * A `MEMBER` frame (version 1.2 §13.3): a membership of a channel of the user changed
   * (someone joined, left, was removed or banned, got a role, was muted). Emitted for every
   * frame, ops this client does not know included, after the channel list and the
   * channel's {@link ChatClient.memberList} took it.
   */
  member: (frame: MemberFrame) => void;
  /**
   * `CHANNEL_UPDATED` (this server's frame): a channel's name, metadata, visibility,
   * `postingRole` or `slowModeMs` changed; its snapshot's `moderation` already shows the
   * rules.
   */
  channelUpdated: (frame: ChannelUpdatedFrame) => void;
  /** Connection state changed. */
  state: (state: ConnectionState) => void;
  /** A HELLO arrived (each connection). */
  hello: (hello: HelloFrame) => void;
  /**
   * An outbox record was ACKed (`MSG_ACK`): the send, edit, delete or reaction `record`
   * asked for is stored, as `ack` says (its `seq`, `messageId`). `ack.duplicate` is true
   * when the server had stored that `clientMsgId` before: a retry whose first ACK was lost,
   * or a record sent again after a restart because it was still in the outbox storage
   * (records are deleted after their ACK: see the README's "Outbox storage"); a success
   * all the same, shown once. Emitted once per record, for records this client sent and
   * (in a browser) those another tab of the user sent, after the channel's snapshot shows
   * the result (a sent message is in `messages`, no longer in `outgoing`) and before the
   * `send`, `retry` or `whenSent` promise resolves. Not emitted for a send that was aborted
   * or discarded before its ACK came.
   */
  acked: (ack: SentEntry, record: OutboxRecord) => void;
  /** An outbox record failed (non-retryable error). */
  failed: (clientMsgId: string, error: ChatdError) => void;
  /** An ERROR the client could not tie to a request. */
  error: (error: ChatdError, frame: ErrorFrame) => void;
}

/**
 * @internal What every part of the client shares: its options, clock, tab id, events,
 * and the user id (empty until `start` read it from the token when it was not given).
 */
export interface ClientContext {
  /** The options the client was made with. */
  readonly opts: ChatClientOptions;
  /** The clock (`opts.now`, or `Date.now`). */
  readonly now: () => number;
  /** This tab's id: owner of the outbox records it sends. */
  readonly tabId: string;
  /** The client's typed events. */
  readonly events: Emitter<ChatClientEvents>;
  /** The user id. */
  userId: string;
}
