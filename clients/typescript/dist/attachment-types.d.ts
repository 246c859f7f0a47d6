/**
 * Attachments' wire shapes (protocol §15; the repository's docs/protocol.md §18): what the
 * upload route answers ({@link Attachment}), what a message entry carries
 * ({@link MessageAttachment}), and their checks. Pure: no network, no state.
 *
 * @module
 */
/**
 * An upload as `POST /v1/channels/{channelId}/attachments` answers it (201): stored in the
 * channel, not yet part of a message. Pass it (or its `attachmentId`) in a send's
 * `attachments` to send it; an upload no message carries is deleted by the server after
 * `attachment_orphan_ttl_secs` (default a day).
 */
export interface Attachment {
    /** The upload's id (UUIDv7): what `MSG_SEND`'s `attachments` names. */
    readonly attachmentId: string;
    /** The channel it was uploaded into (it can be sent in this channel only). */
    readonly channelId: string;
    /** Its type as stored: the upload's `Content-Type` without parameters (e.g. `image/png`). */
    readonly contentType: string;
    /** Its length in bytes. */
    readonly size: number;
    /** SHA-256 of its bytes, lower-case hex (also its `ETag`). */
    readonly sha256: string;
    /** Its file name, when the upload gave one. */
    readonly filename?: string;
    /** Images: width in pixels. */
    readonly width?: number;
    /** Images: height in pixels. */
    readonly height?: number;
    /** When it was stored (ms since the epoch). */
    readonly createdAt: number;
}
/**
 * An attachment of a message (`attachments` of `MSG_RECV`, `SYNC_BATCH` and reads, in the
 * order sent). `url` and `thumbnailUrl` are paths on the server signed for
 * `attachment_url_ttl_secs` (default an hour) from when the frame or page was made: an
 * `<img src>` works without a token (make them absolute with
 * {@link Attachments.url}); after `urlExpiresAt` they get 404 (read the bytes with the
 * token instead: {@link Attachments.download}).
 */
export interface MessageAttachment {
    /** The attachment's id. */
    readonly attachmentId: string;
    /** Its stored type (`image/png`, `application/pdf`, …). */
    readonly contentType: string;
    /** Its length in bytes. */
    readonly size: number;
    /** Its file name, when the upload gave one. */
    readonly filename?: string;
    /** Images: width in pixels. */
    readonly width?: number;
    /** Images: height in pixels. */
    readonly height?: number;
    /**
     * The bytes: a signed path (`/v1/attachments/{id}?exp=…&sig=…`). On the sender's own
     * message, made from its `MSG_ACK` (which carries no URLs), it is the unsigned path
     * `/v1/attachments/{id}` (it needs the token) until the client has read the stored entry
     * a moment later; `urlExpiresAt` is then absent.
     */
    readonly url: string;
    /** Images: the thumbnail's signed path (at most `attachment_thumbnail_px`, default 320, on the longer side). */
    readonly thumbnailUrl?: string;
    /** When `url` (and `thumbnailUrl`) stop working, ms since the epoch (the signature's `exp`); absent when unsigned. */
    readonly urlExpiresAt?: number;
}
/** What a send's `attachments` may name: an upload (as {@link Attachments.upload} returns it) or its id. */
export type AttachmentRef = Attachment | string;
/**
 * What the outbox keeps of a send's attachments: the ids (the frame's
 * `attachments`) and, when the send was given the uploads, what the message shows of them
 * before its stored entry is read.
 */
export interface OutboxAttachment {
    /** The upload's id. */
    readonly attachmentId: string;
    /** Its type, when known. */
    readonly contentType?: string;
    /** Its size, when known. */
    readonly size?: number;
    /** Its file name, when known. */
    readonly filename?: string;
    /** Images: width, when known. */
    readonly width?: number;
    /** Images: height, when known. */
    readonly height?: number;
}
/** The types the server takes by default (`attachment_types`); a server may be configured otherwise. */
export declare const DEFAULT_ATTACHMENT_TYPES: readonly string[];
/** The image types the server decodes, measures and makes thumbnails of. */
export declare const IMAGE_TYPES: readonly string[];
/** True when `contentType` is one the server makes a thumbnail of (`thumbnailUrl` is then set). */
export declare function isImageType(contentType: string): boolean;
/**
 * The outbox form of a send's `attachments` (in the order given; the idempotency key
 * covers the list in order, so it is kept as given). A repeated id is kept too: the server
 * refuses it (`invalid_field`, field `attachments`).
 */
export declare function outboxAttachments(refs: readonly AttachmentRef[]): OutboxAttachment[];
/** The `attachments` field of a send's frame: the ids, only when there are some (a plain send's frame is unchanged). */
export declare function attachmentFields(o: {
    readonly attachments?: readonly OutboxAttachment[] | undefined;
}): {
    attachments?: string[];
};
/** The `attachments` of an outgoing message (only when the send has some). */
export declare function outgoingAttachments(o: {
    readonly attachments?: readonly OutboxAttachment[] | undefined;
}): {
    attachments?: readonly OutboxAttachment[];
};
/**
 * The attachments an entry made from the sender's own `MSG_ACK` shows: those whose type
 * and size the send was given, with the unsigned path as `url` (see
 * {@link MessageAttachment.url}); an id given alone shows once the entry is read.
 */
export declare function ackedAttachments(list: readonly OutboxAttachment[] | undefined): MessageAttachment[] | undefined;
/**
 * A message entry's `attachments` as the client shows them: each object of the wire shape
 * checked and frozen, with `urlExpiresAt` read from the signature's `exp`; anything of
 * another shape (or no list) is left out, never thrown on.
 */
export declare function parseMessageAttachments(x: unknown): readonly MessageAttachment[];
/** The `exp` (Unix seconds) of a signed attachment path, in ms; undefined when it has none. */
export declare function signedExpiry(url: string): number | undefined;
/**
 * Checks and types the 201 body of the upload route; `undefined` for a body of another
 * shape (the caller rejects with `internal`).
 */
export declare function parseAttachment(x: unknown): Attachment | undefined;
//# sourceMappingURL=attachment-types.d.ts.map