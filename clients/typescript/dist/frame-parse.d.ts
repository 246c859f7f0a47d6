import type { ServerFrame } from './protocol.js';
/**
 * Parses one text frame; returns undefined for anything that is not an object with a string
 * `type`, and for a `MEMBER`, `CHANNEL_ADDED` or `CHANNEL_REMOVED` that lacks a field it
 * needs (see {@link decodeMembershipFrame}: unknown ops and reasons are kept).
 */
export declare function parseServerFrame(text: string): ServerFrame | undefined;
//# sourceMappingURL=frame-parse.d.ts.map