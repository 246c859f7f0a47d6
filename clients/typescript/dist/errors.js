/** Codes the spec marks retryable. */
export const RETRYABLE_CODES = new Set(['rate_limited', 'unavailable', 'internal']);
/** A typed error carrying a spec error code. Every rejection of this package is a ChatdError. */
export class ChatdError extends Error {
    /** The spec's error code (or a client-side one). Unknown server codes are passed through. */
    code;
    /** True when the same frame may be sent again later. */
    retryable;
    /** The field at fault, when the server named one. */
    field;
    /**
     * How long to wait (ms): with `rate_limited` (also slow mode's, `reason: "slow_mode"`:
     * exact to the ms the next message is allowed), and with `reason: "muted"` until the
     * mute ends.
     */
    retryAfterMs;
    /**
     * A word telling refusals of one code apart, when the server gave one (version 1.2, the
     * HTTP error body's `reason`): e.g. `dm_policy` for a direct channel that `dm_policy`
     * refuses, `banned` for a join refused to a banned user; moderation's (§17) `muted`,
     * `read_only`, `slow_mode` and `blocked` in `ERROR` frames; `too_many_reactions` for a
     * reaction refused because its message holds `max_reactions_per_message` distinct emoji
     * (§8). Unknown reasons are passed through.
     */
    reason;
    /** Creates an error; `retryable` defaults to the spec's classification of `code`. */
    constructor(code, message, options = {}) {
        super(message);
        this.name = 'ChatdError';
        this.code = code;
        this.retryable = options.retryable ?? RETRYABLE_CODES.has(code);
        this.field = options.field;
        this.retryAfterMs = options.retryAfterMs;
        this.reason = options.reason;
    }
    /** Builds a ChatdError from an `ERROR` frame. */
    static fromFrame(frame) {
        const opts = { retryable: frame.retryable };
        if (frame.field !== undefined)
            opts.field = frame.field;
        if (typeof frame.retryAfterMs === 'number')
            opts.retryAfterMs = frame.retryAfterMs;
        if (typeof frame.reason === 'string')
            opts.reason = frame.reason;
        return new ChatdError(frame.code, frame.message, opts);
    }
    /** A plain, structured-clone-safe copy (for storage and BroadcastChannel); `reason` and `retryAfterMs` when set. */
    toJSON() {
        return {
            code: this.code,
            message: this.message,
            retryable: this.retryable,
            ...(this.reason !== undefined ? { reason: this.reason } : {}),
            ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
        };
    }
}
//# sourceMappingURL=errors.js.map