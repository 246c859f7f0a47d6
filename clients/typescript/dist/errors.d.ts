/** Error codes of the spec (section 5 and 1.1), plus the client's own. */
export type ErrorCode = 'bad_frame' | 'unknown_type' | 'invalid_field' | 'body_too_large' | 'forbidden' | 'not_found' | 'idempotency_conflict' | 'rate_limited' | 'unavailable' | 'internal'
/** Client side: the operation was aborted through its AbortSignal. */
 | 'aborted'
/** Client side: the client was closed. */
 | 'closed'
/** Client side: the message was discarded from the outbox. */
 | 'discarded'
/** Client side: the server does not support this version 1.1 frame (it answered `unknown_type`). */
 | 'unsupported';
/** Codes the spec marks retryable. */
export declare const RETRYABLE_CODES: ReadonlySet<string>;
/** A typed error carrying a spec error code. Every rejection of this package is a ChatdError. */
export declare class ChatdError extends Error {
    /** The spec's error code (or a client-side one). Unknown server codes are passed through. */
    readonly code: ErrorCode | (string & Record<never, never>);
    /** True when the same frame may be sent again later. */
    readonly retryable: boolean;
    /** The field at fault, when the server named one. */
    readonly field: string | undefined;
    /**
     * How long to wait (ms): with `rate_limited` (also slow mode's, `reason: "slow_mode"`:
     * exact to the ms the next message is allowed), and with `reason: "muted"` until the
     * mute ends.
     */
    readonly retryAfterMs: number | undefined;
    /**
     * A word telling refusals of one code apart, when the server gave one (version 1.2, the
     * HTTP error body's `reason`): e.g. `dm_policy` for a direct channel that `dm_policy`
     * refuses, `banned` for a join refused to a banned user; moderation's (§17) `muted`,
     * `read_only`, `slow_mode` and `blocked` in `ERROR` frames; `too_many_reactions` for a
     * reaction refused because its message holds `max_reactions_per_message` distinct emoji
     * (§8). Unknown reasons are passed through.
     */
    readonly reason: string | undefined;
    /** Creates an error; `retryable` defaults to the spec's classification of `code`. */
    constructor(code: ErrorCode | (string & Record<never, never>), message: string, options?: {
        retryable?: boolean;
        field?: string;
        retryAfterMs?: number;
        reason?: string;
    });
    /** Builds a ChatdError from an `ERROR` frame. */
    static fromFrame(frame: {
        code: string;
        message: string;
        retryable: boolean;
        field?: string;
        retryAfterMs?: number;
        reason?: string;
    }): ChatdError;
    /** A plain, structured-clone-safe copy (for storage and BroadcastChannel); `reason` and `retryAfterMs` when set. */
    toJSON(): SerializedError;
}
/** A ChatdError as stored in the outbox. */
export interface SerializedError {
    /** The error code. */
    readonly code: string;
    /** The message. */
    readonly message: string;
    /** Whether it was retryable. */
    readonly retryable: boolean;
    /** The refusal's `reason` (e.g. `muted`, `read_only`), when it had one. */
    readonly reason?: string;
    /** Its `retryAfterMs`, when it had one. */
    readonly retryAfterMs?: number;
}
//# sourceMappingURL=errors.d.ts.map