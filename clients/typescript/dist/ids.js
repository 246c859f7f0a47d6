/**
 * Idempotency keys (`clientMsgId`) that sort by creation time: UUIDv7
 * (RFC 9562, §5.7), 48 bits of Unix time in milliseconds, then 74 random
 * bits. The server indexes keys per user; keys made in time order land at
 * the index's right edge, where random (version 4) keys scatter over a
 * growing index (issue 28: writes slowed down as history grew). Needs only
 * `crypto.getRandomValues`, which browsers offer outside secure contexts
 * too (unlike `crypto.randomUUID`).
 */
/** The last millisecond an id was made in, and its 12-bit counter. */
let last = { ms: -1, counter: 0 };
/**
 * A new UUIDv7 in its canonical text form (36 characters, lower case).
 * Ids made by this function within one millisecond count up in their
 * 12-bit `rand_a` field (RFC 9562 §6.2, method 1, started at a random
 * value), so they also sort in the order they were made (past 2,048 ids in
 * one millisecond the counter starts again at random); `nowMs` is for tests.
 */
export function uuidv7(nowMs = Date.now()) {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    const ms = Math.max(0, Math.floor(nowMs));
    let counter;
    if (ms === last.ms && last.counter < 0xfff) {
        counter = last.counter + 1;
    }
    else {
        // A fresh start below the middle leaves room to count up within the millisecond.
        counter = (((bytes[6] ?? 0) << 4) | ((bytes[7] ?? 0) >> 4)) & 0x7ff;
    }
    last = { ms, counter };
    // 48-bit big-endian milliseconds (Number is exact to 2^53).
    const high = Math.floor(ms / 2 ** 16);
    bytes[0] = (high >>> 24) & 0xff;
    bytes[1] = (high >>> 16) & 0xff;
    bytes[2] = (high >>> 8) & 0xff;
    bytes[3] = high & 0xff;
    bytes[4] = (ms >>> 8) & 0xff;
    bytes[5] = ms & 0xff;
    bytes[6] = 0x70 | (counter >>> 8); // version 7
    bytes[7] = counter & 0xff;
    bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f); // variant 10
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
//# sourceMappingURL=ids.js.map