/**
 * Mentions (protocol §16): whether an entry mentions a user, the fields a send adds, and a
 * channel's unread mention count, exact from its log when the log holds everything after
 * the read watermark, else from `HELLO`'s `unreadMentions` and what arrived since. Pure.
 *
 * @module
 */
/** The mention fields of an entry or a send. */
export interface MentionFields {
    /** The users mentioned. */
    readonly mentions?: readonly string[] | undefined;
    /** Mentions every member. */
    readonly mentionAll?: boolean | undefined;
}
/** True when the entry mentions `userId`: `mentions` holds it, or `mentionAll` is true. */
export declare function mentionsUser(e: MentionFields, userId: string): boolean;
/**
 * The mention fields of a send, only those set (an empty `mentions` and a false
 * `mentionAll` are left out: the same frame as a plain send). `mentions` is sorted and
 * without repeats, so a retry of the same set is the same frame.
 */
export declare function mentionFields(o: MentionFields): {
    mentions?: readonly string[];
    mentionAll?: boolean;
};
/** Inputs of {@link computeUnreadMentions}. */
export interface UnreadMentionInputs {
    /** The user's current read watermark. */
    readonly readSeq: number;
    /** The read watermark HELLO gave. */
    readonly helloReadSeq: number;
    /** HELLO's lastSeq. */
    readonly helloLastSeq: number;
    /** HELLO's `unreadMentions`, if sent. */
    readonly helloUnreadMentions: number | undefined;
    /** Whether the channel's log is open. */
    readonly logStarted: boolean;
    /** The log window's low seq. */
    readonly logLow: number;
    /** Messages of others that mention the user, held in the log above a seq. */
    readonly countHeldAbove: (seq: number) => number;
    /** Such messages counted live in a channel that is not open (above the read watermark). */
    readonly liveMentions: number;
}
/**
 * Unread mentions of a channel: exact from the log when it holds everything after the read
 * watermark; otherwise HELLO's `unreadMentions` (0 once the watermark passed HELLO's
 * `lastSeq`; at most `lastSeq − readSeq` when it moved but not that far, an upper bound
 * since HELLO does not say where the mentions are) plus those arrived since.
 */
export declare function computeUnreadMentions(i: UnreadMentionInputs): number;
//# sourceMappingURL=mentions.d.ts.map