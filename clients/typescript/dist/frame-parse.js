/**
 * Parsing one text frame from the server into a {@link ServerFrame}: the frames of versions 1
 * and 1.1 as they come, the membership frames of version 1.2 checked
 * ({@link decodeMembershipFrame}).
 *
 * @module
 */
import { decodeMembershipFrame } from './membership-frames.js';
/**
 * Parses one text frame; returns undefined for anything that is not an object with a string
 * `type`, and for a `MEMBER`, `CHANNEL_ADDED` or `CHANNEL_REMOVED` that lacks a field it
 * needs (see {@link decodeMembershipFrame}: unknown ops and reasons are kept).
 */
export function parseServerFrame(text) {
    let value;
    try {
        value = JSON.parse(text);
    }
    catch {
        return undefined;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
        return undefined;
    const type = value.type;
    if (typeof type !== 'string')
        return undefined;
    if (type === 'MEMBER' || type === 'CHANNEL_ADDED' || type === 'CHANNEL_REMOVED') {
        return decodeMembershipFrame(value);
    }
    return value;
}
//# sourceMappingURL=frame-parse.js.map