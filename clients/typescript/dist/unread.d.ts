/**
 * A channel's unread count: exact from its log when the log holds everything after the
 * read watermark, else from HELLO and what arrived since. Pure.
 *
 * @module
 */
/** Inputs of {@link computeUnread}. */
export interface UnreadInputs {
    /** The user's current read watermark. */
    readonly readSeq: number;
    /** The read watermark HELLO gave. */
    readonly helloReadSeq: number;
    /** HELLO's lastSeq. */
    readonly helloLastSeq: number;
    /** HELLO's unread (version 1.1), if sent. */
    readonly helloUnread: number | undefined;
    /** Whether the channel's log is open. */
    readonly logStarted: boolean;
    /** The log window's low seq. */
    readonly logLow: number;
    /** The log window's high seq. */
    readonly logHigh: number;
    /** Highest seq known. */
    readonly knownLastSeq: number;
    /** Unread messages held in the log above a seq. */
    readonly countHeldAbove: (seq: number) => number;
    /** Messages of others counted live in a channel that is not open. */
    readonly liveUnread: number;
}
/**
 * Unread count of a channel: exact from the log when it holds everything after the read
 * watermark; otherwise HELLO's `unread` (or, from a version 1 server, `lastSeq − readSeq`,
 * an upper bound) plus what arrived since.
 */
export declare function computeUnread(i: UnreadInputs): number;
//# sourceMappingURL=unread.d.ts.map