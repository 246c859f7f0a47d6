/**
 * Checking and typing the membership frames of version 1.2 (§13.3): `MEMBER`,
 * `CHANNEL_ADDED` and `CHANNEL_REMOVED`. Forward-compatible: an op or reason this client
 * does not know, and fields it does not know, are no error; a frame that lacks what the
 * client needs to act on it (a channel id, a seq) is dropped (undefined), never thrown.
 *
 * @module
 */
import type { ChannelAddedFrame, ChannelRemovedFrame, HelloChannel, MemberFrame } from './protocol.js';
/**
 * A `MEMBER` frame, typed: `channelId`, `userId`, `op` (any string) and `afterSeq` are
 * needed (`ts` is 0 when missing); `role` and `actorId` are kept when strings,
 * `mutedUntil` when a number or `null`. Undefined when a needed field is missing or of
 * another type.
 */
export declare function decodeMemberFrame(v: Readonly<Record<string, unknown>>): MemberFrame | undefined;
/**
 * A `HELLO` channel entry (also `CHANNEL_ADDED`'s `channel`), typed: `channelId` and
 * `lastSeq` are needed; missing watermarks are 0; the other fields this client knows are
 * kept when of their type, those it does not know are dropped.
 */
export declare function decodeHelloChannel(v: unknown): HelloChannel | undefined;
/** A `CHANNEL_ADDED` frame, typed; undefined when its `channel` is not a channel entry. */
export declare function decodeChannelAddedFrame(v: Readonly<Record<string, unknown>>): ChannelAddedFrame | undefined;
/** A `CHANNEL_REMOVED` frame, typed: `channelId` needed; `reason` (any string) kept when there is one. */
export declare function decodeChannelRemovedFrame(v: Readonly<Record<string, unknown>>): ChannelRemovedFrame | undefined;
/** One of the three membership frames by its `type`, checked as above (undefined for any other type). */
export declare function decodeMembershipFrame(v: Readonly<Record<string, unknown>>): MemberFrame | ChannelAddedFrame | ChannelRemovedFrame | undefined;
//# sourceMappingURL=membership-frames.d.ts.map