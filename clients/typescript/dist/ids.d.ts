/**
 * Idempotency keys (`clientMsgId`) that sort by creation time: UUIDv7
 * (RFC 9562, §5.7), 48 bits of Unix time in milliseconds, then 74 random
 * bits. The server indexes keys per user; keys made in time order land at
 * the index's right edge, where random (version 4) keys scatter over a
 * growing index (issue 28: writes slowed down as history grew). Needs only
 * `crypto.getRandomValues`, which browsers offer outside secure contexts
 * too (unlike `crypto.randomUUID`).
 */
/**
 * A new UUIDv7 in its canonical text form (36 characters, lower case).
 * Ids made by this function within one millisecond count up in their
 * 12-bit `rand_a` field (RFC 9562 §6.2, method 1, started at a random
 * value), so they also sort in the order they were made (past 2,048 ids in
 * one millisecond the counter starts again at random); `nowMs` is for tests.
 */
export declare function uuidv7(nowMs?: number): string;
//# sourceMappingURL=ids.d.ts.map