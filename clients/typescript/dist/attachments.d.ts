/**
 * Attachments (protocol §15; the repository's docs/protocol.md §18) over HTTP with the
 * connection's token: uploading a file into a channel (`POST
 * /v1/channels/{channelId}/attachments`, with upload progress where the platform has it),
 * sending uploads with a message, an attachment's URL to show or download, and its bytes
 * read with the token (`GET /v1/attachments/{attachmentId}` and `…/thumbnail`). The sender's
 * own message, made from its `MSG_ACK` (which carries no URLs), gets its signed URLs here by
 * reading the stored entry once.
 *
 * @module
 */
import { type Attachment, type MessageAttachment } from './attachment-types.js';
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import type { Message } from './message-states.js';
import type { SentWithAttachments } from './send.js';
import type { MessageSendOptions, SentEntry } from './snapshot-types.js';
import type { ClientContext } from './types.js';
/** The bytes of an upload: a `Blob` (a browser's `File` too) or raw bytes. */
export type AttachmentData = Blob | ArrayBuffer | Uint8Array;
/** How far an upload is: bytes of the body sent so far, and in all. */
export interface UploadProgress {
    /** Bytes sent so far. */
    readonly loaded: number;
    /** The body's length in bytes. */
    readonly total: number;
}
/** Options of {@link Attachments.upload}. */
export interface UploadOptions {
    /**
     * The file name to store (the `filename` query parameter): 1 to 255 bytes of UTF-8, no
     * `/`, `\` or control characters, not `.` or `..`. Default: a `File`'s `name`, else none.
     */
    readonly filename?: string;
    /**
     * The type (`Content-Type`): one of the server's `attachment_types` (default list:
     * {@link DEFAULT_ATTACHMENT_TYPES}). Default: a Blob's `type`, else
     * `application/octet-stream`.
     */
    readonly contentType?: string;
    /**
     * Called as the body goes out. In browsers (`XMLHttpRequest`) as the bytes are sent; where
     * there is only `fetch` (Node) once with `loaded: 0` before and once with `loaded ===
     * total` after the server stored it. Not while the upload waits its turn (the client's
     * `maxUploadsInFlight`); from `loaded: 0` again when it is tried again.
     */
    readonly onProgress?: (progress: UploadProgress) => void;
    /**
     * Stops the upload (the call rejects with `aborted`; the server keeps nothing of it),
     * also while it waits its turn (nothing was sent) or to be tried again.
     */
    readonly signal?: AbortSignal;
}
/** Options of {@link Attachments.url}. */
export interface AttachmentUrlOptions {
    /** The thumbnail's URL (images only: `undefined` when the attachment has none). */
    readonly thumbnail?: boolean;
}
/** Options of {@link Attachments.download}. */
export interface DownloadOptions {
    /** The thumbnail (images only; `not_found` for other types). */
    readonly thumbnail?: boolean;
    /** Stops the read (the call rejects with `aborted`). */
    readonly signal?: AbortSignal;
}
/** One file of {@link Attachments.sendFiles}. */
export interface FileToSend {
    /** Its bytes. */
    readonly data: AttachmentData;
    /** Its name (default: a `File`'s `name`). */
    readonly filename?: string;
    /** Its type (default: the Blob's `type`, else `application/octet-stream`). */
    readonly contentType?: string;
}
/** Options of {@link Attachments.sendFiles}: a send's, and the uploads' progress. */
export interface SendFilesOptions extends Omit<MessageSendOptions, 'attachments'> {
    /** Progress of the uploads: `index` is the file's place in the list. */
    readonly onProgress?: (progress: UploadProgress & {
        readonly index: number;
    }) => void;
}
/**
 * Attachments (`ChatClient.attachments`): upload, send, show and read files and images.
 * Every call rejects with a {@link ChatdError} as the other HTTP calls do (`unavailable`,
 * `aborted`, `closed`, and the route's codes).
 */
export declare class Attachments implements SentWithAttachments {
    private readonly c;
    private readonly conn;
    private readonly channels;
    private readonly send;
    /** The client's uploads in progress (`maxUploadsInFlight`) and those waiting their turn. */
    private readonly slots;
    /** @internal */
    constructor(c: ClientContext, conn: Connection, channels: Channels, send: (channelId: string, body: string, options: MessageSendOptions) => Promise<SentEntry>);
    /**
     * Uploads a file into a channel (`POST /v1/channels/{channelId}/attachments`): the raw
     * bytes as the body, streamed by the server to its storage. Resolves to the stored
     * upload (with `width` and `height` for images); send it with a message by passing it in
     * `attachments` of `send` (within the server's `attachment_orphan_ttl_secs`, default a
     * day, or it is deleted).
     *
     * Rejects with a ChatdError: `body_too_large` (over the server's `max_attachment_bytes`,
     * default 25 MiB), `unsupported_media_type` (a type not in `attachment_types`),
     * `invalid_field` with `field` `body` (an image that does not decode as its type, or has
     * more than `max_image_pixels`) or `filename`, `forbidden` (not a member, or an unknown
     * channel), `unavailable` (the server cannot be reached or its storage failed: retry),
     * `aborted`, `closed`. A browser may see a refusal the server sent before it read a large
     * body as a broken connection: `unavailable`. `rate_limited`: past the server's
     * `max_unclaimed_upload_bytes` (no `reason`: at once, not tried again; send the uploads
     * or wait for them to expire), or with `reason` `uploads_in_flight` when the server still
     * counted `max_uploads_in_flight_per_user` uploads of the user in progress (their other
     * tabs and devices) after `UPLOAD_IN_FLIGHT_RETRIES` (10) tries again.
     *
     * At most the client's `maxUploadsInFlight` (default `DEFAULT_MAX_UPLOADS_IN_FLIGHT`,
     * 3) uploads run at once; later calls wait in the
     * order they were made (nothing sent, no progress, until their turn; `signal` stops the
     * wait). An upload the server refuses with `reason` `uploads_in_flight` is tried again
     * after a backoff (`uploadRetryBackoff`, default 500 ms doubling to 10 s with jitter),
     * keeping its turn.
     *
     * @example
     * ```ts
     * const up = await client.attachments.upload('room', fileInput.files[0], {
     *   onProgress: ({ loaded, total }) => (bar.value = loaded / total),
     * });
     * await client.send('room', 'the plan', { attachments: [up] });
     * ```
     */
    upload(channelId: string, data: AttachmentData, options?: UploadOptions): Promise<Attachment>;
    /**
     * Uploads `files` into the channel one after the other, then sends them with `body` (which
     * may be `""`) in one message, in the order given: {@link Attachments.upload} and the
     * client's `send` with `attachments`. Resolves on the message's `MSG_ACK`. Rejects as
     * those do; when an upload fails nothing is sent (the uploads made are deleted by the
     * server after `attachment_orphan_ttl_secs`). The send is durable once the uploads are
     * done (the outbox keeps it); an upload interrupted by a reload is not resumed: call again.
     */
    sendFiles(channelId: string, body: string, files: readonly FileToSend[], options?: SendFilesOptions): Promise<SentEntry>;
    /**
     * The absolute URL of an attachment of a message (its signed `url`, or with `thumbnail`
     * its `thumbnailUrl`, joined to the server's HTTP base): what an `<img src>` or a download
     * link takes, without a token, until `urlExpiresAt`. `undefined` with `thumbnail` for an
     * attachment that has no thumbnail (not an image).
     */
    url(attachment: MessageAttachment, options?: AttachmentUrlOptions): string | undefined;
    /**
     * The bytes of an attachment (`GET /v1/attachments/{attachmentId}`, or its thumbnail) read
     * with the user's token: for when a signed URL expired, or to hand the bytes to the app.
     * Rejects with `not_found` for an unknown or deleted attachment and for one the user may
     * not read (the server does not tell them apart), `unavailable`, `aborted`, `closed`.
     */
    download(attachmentId: string, options?: DownloadOptions): Promise<Blob>;
    /**
     * @internal The sender's own message with attachments was stored and shown from its ACK
     * (unsigned URLs): reads the stored entry (the history route, `afterSeq` just below it)
     * and puts its attachments, with signed URLs, into the channel's log and its thread's.
     * Tried a few times; when it never works the message keeps the unsigned paths (they need
     * the token: {@link Attachments.download}).
     */
    sentWithAttachments(sent: SentEntry): void;
    private readSigned;
    /**
     * Reads a message's stored entry again for fresh signed URLs (they stop working
     * `attachment_url_ttl_secs`, default an hour, after the frame or page that carried them:
     * {@link MessageAttachment.urlExpiresAt}) and puts them into the channel's snapshot (and
     * its open thread's); resolves to them (`[]` for a message without attachments, or one
     * deleted since). One `GET /v1/channels/{channelId}/messages?afterSeq=…&limit=1`. Rejects
     * with a ChatdError: `forbidden` (the user is not a member any more), `unavailable`,
     * `aborted`, `closed`.
     */
    refreshUrls(message: Pick<Message, 'channelId' | 'messageId' | 'seq'>, signal?: AbortSignal): Promise<readonly MessageAttachment[]>;
    /** Reads entry `seq` of the channel and, when it is `messageId`, puts its attachments into the stores. */
    private readStored;
}
//# sourceMappingURL=attachments.d.ts.map