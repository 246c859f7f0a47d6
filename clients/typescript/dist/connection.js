/**
 * The transport: one WebSocket at a time, its token, the connection state (and waiting
 * for it to be open), reconnects with backoff (sooner on the `online` event), the reply
 * watchdog, and numbering the frames sent on a connection.
 *
 * @module
 */
import { backoffDelay } from './backoff.js';
import { ChatdError } from './errors.js';
import { Features } from './features.js';
import { LazyStore } from './store.js';
/** Reads the `sub` claim of a JWT without verifying it (the server does that). */
export function jwtSubject(token) {
    const part = token.split('.')[1];
    if (part === undefined)
        return undefined;
    try {
        const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
        const json = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
        const claims = JSON.parse(json);
        return typeof claims.sub === 'string' ? claims.sub : undefined;
    }
    catch {
        return undefined;
    }
}
/** @internal The WebSocket session, reconnecting by itself until closed. */
export class Connection {
    /** The connection's store (state, session, unsupported features). */
    store;
    /** What the server is known to support. */
    features;
    c;
    hooks;
    stateValue = 'idle';
    ws;
    /** Number of the latest socket; a socket's handlers act only while theirs is the latest. */
    connGen = 0;
    /** Number of the socket whose HELLO arrived; 0 while not open. */
    openConn = 0;
    sessionId;
    frameNo = 0;
    reconnectAttempt = 0;
    reconnectTimer;
    watchdog;
    onlineHandler;
    onlineSource;
    lastTokenValue;
    /** Nothing connects until {@link Connection.start}. */
    constructor(c, hooks) {
        this.c = c;
        this.hooks = hooks;
        this.features = new Features(() => {
            this.store.invalidate();
        });
        this.store = new LazyStore(() => Object.freeze({
            state: this.stateValue,
            userId: this.c.userId,
            sessionId: this.sessionId,
            unsupported: Object.freeze([...this.features.unsupported].sort()),
        }));
    }
    /** Where the connection is. */
    get state() {
        return this.stateValue;
    }
    /** Number of the open connection (its HELLO arrived); 0 while not open. */
    get openGen() {
        return this.openConn;
    }
    /** The token of the latest connection attempt. */
    get lastToken() {
        return this.lastTokenValue;
    }
    /** Moves to state `s` and emits `state`; nothing moves a closed connection. */
    setState(s) {
        if (this.stateValue === s || this.stateValue === 'closed')
            return;
        this.stateValue = s;
        this.store.invalidate();
        this.c.events.emit('state', s);
    }
    /** Resolves when a session is open (HELLO received); rejects on abort or close. */
    whenOpen(signal) {
        const state = this.stateValue;
        if (state === 'open')
            return Promise.resolve();
        if (signal?.aborted === true)
            return Promise.reject(new ChatdError('aborted', 'aborted'));
        if (state === 'closed')
            return Promise.reject(new ChatdError('closed', 'client closed'));
        return new Promise((resolve, reject) => {
            const onAbort = () => {
                off();
                reject(new ChatdError('aborted', 'aborted'));
            };
            const off = this.c.events.on('state', (s) => {
                if (s === 'open') {
                    off();
                    signal?.removeEventListener('abort', onAbort);
                    resolve();
                }
                else if (s === 'closed') {
                    off();
                    signal?.removeEventListener('abort', onAbort);
                    reject(new ChatdError('closed', 'client closed'));
                }
            });
            signal?.addEventListener('abort', onAbort, { once: true });
        });
    }
    /** The token option's value: the string, or what its function returns now. */
    async getToken() {
        const t = this.c.opts.token;
        return typeof t === 'string' ? t : await t();
    }
    /** Listens to the `online` event, starts the reply watchdog, and connects. */
    start() {
        const opts = this.c.opts;
        const source = opts.onlineEvents === undefined ? globalOnlineSource() : (opts.onlineEvents ?? undefined);
        if (source !== undefined) {
            this.onlineHandler = () => {
                if (this.stateValue !== 'open' && this.stateValue !== 'closed')
                    this.connectNow();
            };
            this.onlineSource = source;
            source.addEventListener('online', this.onlineHandler);
        }
        this.watchdog = setInterval(() => {
            this.checkReplies();
        }, 1000);
        this.connectNow();
    }
    /** A HELLO arrived on socket `gen`: that connection is the open one now. */
    opened(gen, sessionId) {
        this.openConn = gen;
        this.sessionId = sessionId;
        this.reconnectAttempt = 0;
    }
    /**
     * Sends a frame on the open connection. Returns its number on the connection, or 0 when
     * it was not sent (not open, or the socket refused it).
     */
    send(frame) {
        const ws = this.ws;
        if (ws === undefined || this.openConn === 0 || ws.readyState !== 1)
            return 0;
        const no = ++this.frameNo;
        this.features.sent(frame, no);
        try {
            ws.send(JSON.stringify(frame));
        }
        catch {
            return 0;
        }
        return no;
    }
    /** Drops the current connection at once (as a network failure would); it reconnects. */
    reconnect() {
        if (this.stateValue === 'closed')
            return;
        const ws = this.ws;
        this.drop();
        try {
            ws?.close(4000, 'reconnect');
        }
        catch {
            /* already closed */
        }
    }
    /** Closes for good: state `closed`, no more reconnects, the socket closed. */
    close() {
        this.setState('closed');
        clearTimeout(this.reconnectTimer);
        clearInterval(this.watchdog);
        if (this.onlineHandler !== undefined)
            this.onlineSource?.removeEventListener('online', this.onlineHandler);
        const ws = this.ws;
        this.ws = undefined;
        this.connGen++;
        if (ws !== undefined)
            ws.close(1000, 'client closed');
    }
    connectNow() {
        if (this.stateValue === 'closed')
            return;
        clearTimeout(this.reconnectTimer);
        this.reconnectTimer = undefined;
        if (this.ws !== undefined)
            return;
        const gen = ++this.connGen;
        this.setState(this.reconnectAttempt === 0 && this.openConn === 0 ? 'connecting' : 'reconnecting');
        const opts = this.c.opts;
        void this.getToken().then((token) => {
            if (gen !== this.connGen || this.stateValue === 'closed')
                return;
            this.lastTokenValue = token;
            const Ctor = opts.WebSocket ?? globalThis.WebSocket;
            if (Ctor === undefined)
                throw new Error('no WebSocket: pass the WebSocket option (the ws package in Node)');
            const sep = opts.url.includes('?') ? '&' : '?';
            let ws;
            try {
                ws = new Ctor(`${opts.url}${sep}access_token=${encodeURIComponent(token)}`);
            }
            catch {
                this.scheduleReconnect();
                return;
            }
            this.ws = ws;
            ws.onmessage = (ev) => {
                if (gen !== this.connGen)
                    return;
                const text = typeof ev.data === 'string' ? ev.data : String(ev.data);
                this.hooks.frame(text, gen);
            };
            ws.onclose = () => {
                if (gen !== this.connGen)
                    return;
                this.drop();
            };
            ws.onerror = () => {
                /* onclose follows */
            };
        }, () => {
            if (gen === this.connGen)
                this.scheduleReconnect();
        });
    }
    /** Forget the socket; every in-flight request will be resent after the next HELLO. */
    drop() {
        this.ws = undefined;
        this.connGen++;
        this.openConn = 0;
        this.sessionId = undefined;
        this.features.dropped();
        this.hooks.dropped();
        if (this.stateValue !== 'closed') {
            this.setState('reconnecting');
            this.scheduleReconnect();
        }
    }
    scheduleReconnect() {
        if (this.stateValue === 'closed' || this.reconnectTimer !== undefined)
            return;
        const delay = backoffDelay(this.reconnectAttempt++, {
            baseMs: 250,
            maxMs: 10_000,
            ...this.c.opts.reconnectBackoff,
        });
        this.reconnectTimer = setTimeout(() => {
            this.reconnectTimer = undefined;
            this.connectNow();
        }, delay);
    }
    /** A send, SYNC or edit with no answer for `replyTimeoutMs`: the connection is taken to be dead. */
    checkReplies() {
        if (this.stateValue !== 'open')
            return;
        if (this.hooks.stale(this.c.now(), this.c.opts.replyTimeoutMs ?? 15_000))
            this.reconnect();
    }
}
/** The global object as an {@link OnlineEventSource}, when it is one (a browser's `window`). */
function globalOnlineSource() {
    const g = globalThis;
    return typeof g.addEventListener === 'function' && typeof g.removeEventListener === 'function'
        ? g
        : undefined;
}
//# sourceMappingURL=connection.js.map