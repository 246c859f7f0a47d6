/**
 * Mentions (protocol §16): whether an entry mentions a user, the fields a send adds, and a
 * channel's unread mention count, exact from its log when the log holds everything after
 * the read watermark, else from `HELLO`'s `unreadMentions` and what arrived since. Pure.
 *
 * @module
 */
/** True when the entry mentions `userId`: `mentions` holds it, or `mentionAll` is true. */
export function mentionsUser(e, userId) {
    if (e.mentionAll === true)
        return true;
    // a wire entry is not checked field by field: only an array counts
    const ids = e.mentions;
    return Array.isArray(ids) && ids.includes(userId);
}
/**
 * The mention fields of a send, only those set (an empty `mentions` and a false
 * `mentionAll` are left out: the same frame as a plain send). `mentions` is sorted and
 * without repeats, so a retry of the same set is the same frame.
 */
export function mentionFields(o) {
    const ids = o.mentions === undefined ? [] : [...new Set(o.mentions)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return {
        ...(ids.length > 0 ? { mentions: ids } : {}),
        ...(o.mentionAll === true ? { mentionAll: true } : {}),
    };
}
/**
 * Unread mentions of a channel: exact from the log when it holds everything after the read
 * watermark; otherwise HELLO's `unreadMentions` (0 once the watermark passed HELLO's
 * `lastSeq`; at most `lastSeq − readSeq` when it moved but not that far, an upper bound
 * since HELLO does not say where the mentions are) plus those arrived since.
 */
export function computeUnreadMentions(i) {
    if (i.logStarted && i.logLow <= i.readSeq + 1)
        return i.countHeldAbove(i.readSeq);
    let base;
    const hello = i.helloUnreadMentions ?? 0;
    if (i.readSeq >= i.helloLastSeq)
        base = 0;
    else if (i.readSeq === i.helloReadSeq)
        base = hello;
    else
        base = Math.min(hello, i.helloLastSeq - i.readSeq);
    const since = i.logStarted ? i.countHeldAbove(Math.max(i.helloLastSeq, i.readSeq)) : i.liveMentions;
    return base + since;
}
//# sourceMappingURL=mentions.js.map