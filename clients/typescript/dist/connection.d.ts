import { Features } from './features.js';
import type { ClientFrame } from './protocol.js';
import { LazyStore } from './store.js';
import type { ConnectionSnapshot, ConnectionState } from './snapshot-types.js';
import type { ClientContext } from './types.js';
/** Reads the `sub` claim of a JWT without verifying it (the server does that). */
export declare function jwtSubject(token: string): string | undefined;
/** @internal What the connection asks of the rest of the client. */
export interface ConnectionHooks {
    /** A text frame arrived on the socket of connection number `gen`. */
    frame(text: string, gen: number): void;
    /** The socket dropped: forget what was in flight on it (it is sent again after the next HELLO). */
    dropped(): void;
    /** Whether a request sent on the open connection has waited for its answer longer than `limitMs`. */
    stale(now: number, limitMs: number): boolean;
}
/** @internal The WebSocket session, reconnecting by itself until closed. */
export declare class Connection {
    /** The connection's store (state, session, unsupported features). */
    readonly store: LazyStore<ConnectionSnapshot>;
    /** What the server is known to support. */
    readonly features: Features;
    private readonly c;
    private readonly hooks;
    private stateValue;
    private ws;
    /** Number of the latest socket; a socket's handlers act only while theirs is the latest. */
    private connGen;
    /** Number of the socket whose HELLO arrived; 0 while not open. */
    private openConn;
    private sessionId;
    private frameNo;
    private reconnectAttempt;
    private reconnectTimer;
    private watchdog;
    private onlineHandler;
    private onlineSource;
    private lastTokenValue;
    /** Nothing connects until {@link Connection.start}. */
    constructor(c: ClientContext, hooks: ConnectionHooks);
    /** Where the connection is. */
    get state(): ConnectionState;
    /** Number of the open connection (its HELLO arrived); 0 while not open. */
    get openGen(): number;
    /** The token of the latest connection attempt. */
    get lastToken(): string | undefined;
    /** Moves to state `s` and emits `state`; nothing moves a closed connection. */
    setState(s: ConnectionState): void;
    /** Resolves when a session is open (HELLO received); rejects on abort or close. */
    whenOpen(signal?: AbortSignal): Promise<void>;
    /** The token option's value: the string, or what its function returns now. */
    getToken(): Promise<string>;
    /** Listens to the `online` event, starts the reply watchdog, and connects. */
    start(): void;
    /** A HELLO arrived on socket `gen`: that connection is the open one now. */
    opened(gen: number, sessionId: string): void;
    /**
     * Sends a frame on the open connection. Returns its number on the connection, or 0 when
     * it was not sent (not open, or the socket refused it).
     */
    send(frame: ClientFrame): number;
    /** Drops the current connection at once (as a network failure would); it reconnects. */
    reconnect(): void;
    /** Closes for good: state `closed`, no more reconnects, the socket closed. */
    close(): void;
    private connectNow;
    /** Forget the socket; every in-flight request will be resent after the next HELLO. */
    private drop;
    private scheduleReconnect;
    /** A send, SYNC or edit with no answer for `replyTimeoutMs`: the connection is taken to be dead. */
    private checkReplies;
}
//# sourceMappingURL=connection.d.ts.map