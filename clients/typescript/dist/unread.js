/**
 * A channel's unread count: exact from its log when the log holds everything after the
 * read watermark, else from HELLO and what arrived since. Pure.
 *
 * @module
 */
/**
 * Unread count of a channel: exact from the log when it holds everything after the read
 * watermark; otherwise HELLO's `unread` (or, from a version 1 server, `lastSeq − readSeq`,
 * an upper bound) plus what arrived since.
 */
export function computeUnread(i) {
    if (i.logStarted && i.logLow <= i.readSeq + 1) {
        return i.countHeldAbove(i.readSeq) + Math.max(0, i.knownLastSeq - i.logHigh);
    }
    let base;
    if (i.readSeq >= i.helloLastSeq)
        base = 0;
    else if (i.helloUnread !== undefined && i.readSeq === i.helloReadSeq)
        base = i.helloUnread;
    else
        base = i.helloLastSeq - i.readSeq;
    const since = i.logStarted ? i.countHeldAbove(Math.max(i.helloLastSeq, i.readSeq)) : i.liveUnread;
    return base + since;
}
//# sourceMappingURL=unread.js.map