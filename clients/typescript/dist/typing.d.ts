import type { TypingFrame } from './protocol.js';
/**
 * Who is typing in one channel: each `start` lasts until its `expiresAt` (or `ttlMs`
 * when the server sent none), a `stop` or a message from that user ends it. Pure: the
 * caller passes the time.
 */
export declare class TypingTracker {
    private readonly typers;
    private cache;
    private readonly ttlMs;
    /** @param ttlMs - lifetime of a `start` without `expiresAt` (default 6000 ms, the server's default) */
    constructor(ttlMs?: number);
    /** Applies a server TYPING frame; returns true when the list changed. */
    apply(frame: Pick<TypingFrame, 'userId' | 'state' | 'expiresAt'>, now: number): boolean;
    /** Ends a user's indicator (a stop, or a message from them); returns true when it changed. */
    remove(userId: string): boolean;
    /** Drops expired indicators; returns true when the list changed. */
    expire(now: number): boolean;
    /** The earliest expiry, for scheduling a timer. */
    nextExpiry(): number | undefined;
    /** Users typing now, sorted; the same array until it changes. */
    list(): readonly string[];
}
/**
 * Client-side throttle of the user's own typing: at most one `start` per `throttleMs`
 * while typing goes on, one `stop` when it ends. Pure: the caller passes the time.
 */
export declare class TypingThrottle {
    private lastStart;
    private readonly throttleMs;
    /** @param throttleMs - minimum time between two `start` frames (default 2000 ms) */
    constructor(throttleMs?: number);
    /** The user typed: returns true when a `start` should be sent now. */
    onInput(now: number): boolean;
    /** The user stopped typing: returns true when a `stop` should be sent. */
    onStop(): boolean;
    /** A message was sent: the server stops the indicator itself, so no `stop` is needed. */
    onSent(): void;
    /**
     * A message of the user was stored (its ACK arrived): the server ended the typing with
     * it, and a `start` sent since the send may have reached it before the message was
     * stored, so the stop ended it too. Returns true when the user has typed since the send:
     * a `start` should be sent again now (the server's throttle ended with the message).
     */
    onStored(now: number): boolean;
}
//# sourceMappingURL=typing.d.ts.map