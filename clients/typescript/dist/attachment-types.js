/**
 * Attachments' wire shapes (protocol §15; the repository's docs/protocol.md §18): what the
 * upload route answers ({@link Attachment}), what a message entry carries
 * ({@link MessageAttachment}), and their checks. Pure: no network, no state.
 *
 * @module
 */
/** The types the server takes by default (`attachment_types`); a server may be configured otherwise. */
export const DEFAULT_ATTACHMENT_TYPES = Object.freeze([
    'image/png',
    'image/jpeg',
    'image/gif',
    'image/webp',
    'application/pdf',
    'text/plain',
    'audio/mpeg',
    'audio/ogg',
    'video/mp4',
    'application/zip',
    'application/octet-stream',
]);
/** The image types the server decodes, measures and makes thumbnails of. */
export const IMAGE_TYPES = Object.freeze(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** True when `contentType` is one the server makes a thumbnail of (`thumbnailUrl` is then set). */
export function isImageType(contentType) {
    return IMAGE_TYPES.includes(contentType.toLowerCase());
}
/**
 * The outbox form of a send's `attachments` (in the order given; the idempotency key
 * covers the list in order, so it is kept as given). A repeated id is kept too: the server
 * refuses it (`invalid_field`, field `attachments`).
 */
export function outboxAttachments(refs) {
    return refs.map((r) => {
        if (typeof r === 'string')
            return { attachmentId: r };
        return {
            attachmentId: r.attachmentId,
            contentType: r.contentType,
            size: r.size,
            ...(r.filename !== undefined ? { filename: r.filename } : {}),
            ...(r.width !== undefined ? { width: r.width } : {}),
            ...(r.height !== undefined ? { height: r.height } : {}),
        };
    });
}
/** The `attachments` field of a send's frame: the ids, only when there are some (a plain send's frame is unchanged). */
export function attachmentFields(o) {
    const list = o.attachments ?? [];
    return list.length > 0 ? { attachments: list.map((a) => a.attachmentId) } : {};
}
/** The `attachments` of an outgoing message (only when the send has some). */
export function outgoingAttachments(o) {
    return o.attachments !== undefined && o.attachments.length > 0 ? { attachments: o.attachments } : {};
}
/**
 * The attachments an entry made from the sender's own `MSG_ACK` shows: those whose type
 * and size the send was given, with the unsigned path as `url` (see
 * {@link MessageAttachment.url}); an id given alone shows once the entry is read.
 */
export function ackedAttachments(list) {
    if (list === undefined || list.length === 0)
        return undefined;
    const out = [];
    for (const a of list) {
        if (a.contentType === undefined || a.size === undefined)
            continue;
        out.push({
            attachmentId: a.attachmentId,
            contentType: a.contentType,
            size: a.size,
            ...(a.filename !== undefined ? { filename: a.filename } : {}),
            ...(a.width !== undefined ? { width: a.width } : {}),
            ...(a.height !== undefined ? { height: a.height } : {}),
            url: `/v1/attachments/${encodeURIComponent(a.attachmentId)}`,
        });
    }
    return out;
}
/**
 * A message entry's `attachments` as the client shows them: each object of the wire shape
 * checked and frozen, with `urlExpiresAt` read from the signature's `exp`; anything of
 * another shape (or no list) is left out, never thrown on.
 */
export function parseMessageAttachments(x) {
    if (!Array.isArray(x))
        return EMPTY;
    const out = [];
    for (const item of x) {
        const a = parseMessageAttachment(item);
        if (a !== undefined)
            out.push(a);
    }
    return out.length === 0 ? EMPTY : Object.freeze(out);
}
const EMPTY = Object.freeze([]);
function parseMessageAttachment(x) {
    if (typeof x !== 'object' || x === null)
        return undefined;
    const r = x;
    if (typeof r.attachmentId !== 'string' || typeof r.contentType !== 'string' || typeof r.size !== 'number' || typeof r.url !== 'string') {
        return undefined;
    }
    const exp = signedExpiry(r.url);
    return Object.freeze({
        attachmentId: r.attachmentId,
        contentType: r.contentType,
        size: r.size,
        ...(typeof r.filename === 'string' ? { filename: r.filename } : {}),
        ...(typeof r.width === 'number' ? { width: r.width } : {}),
        ...(typeof r.height === 'number' ? { height: r.height } : {}),
        url: r.url,
        ...(typeof r.thumbnailUrl === 'string' ? { thumbnailUrl: r.thumbnailUrl } : {}),
        ...(exp !== undefined ? { urlExpiresAt: exp } : {}),
    });
}
/** The `exp` (Unix seconds) of a signed attachment path, in ms; undefined when it has none. */
export function signedExpiry(url) {
    const q = url.indexOf('?');
    if (q < 0)
        return undefined;
    const params = new URLSearchParams(url.slice(q + 1));
    const exp = params.get('exp');
    if (exp === null || params.get('sig') === null || !/^\d{1,15}$/.test(exp))
        return undefined;
    return Number(exp) * 1000;
}
/**
 * Checks and types the 201 body of the upload route; `undefined` for a body of another
 * shape (the caller rejects with `internal`).
 */
export function parseAttachment(x) {
    if (typeof x !== 'object' || x === null)
        return undefined;
    const r = x;
    if (typeof r.attachmentId !== 'string' ||
        typeof r.channelId !== 'string' ||
        typeof r.contentType !== 'string' ||
        typeof r.size !== 'number' ||
        typeof r.sha256 !== 'string' ||
        typeof r.createdAt !== 'number') {
        return undefined;
    }
    return Object.freeze({
        attachmentId: r.attachmentId,
        channelId: r.channelId,
        contentType: r.contentType,
        size: r.size,
        sha256: r.sha256,
        ...(typeof r.filename === 'string' ? { filename: r.filename } : {}),
        ...(typeof r.width === 'number' ? { width: r.width } : {}),
        ...(typeof r.height === 'number' ? { height: r.height } : {}),
        createdAt: r.createdAt,
    });
}
//# sourceMappingURL=attachment-types.js.map