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
import { parseAttachment, parseMessageAttachments, type Attachment, type MessageAttachment } from './attachment-types.js';
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { httpBase, httpError, requestJson } from './http.js';
import type { Message } from './message-states.js';
import type { SentWithAttachments } from './send.js';
import type { MessageSendOptions, SentEntry } from './snapshot-types.js';
import type { ClientContext } from './types.js';
import { DEFAULT_UPLOAD_RETRY_BACKOFF, isUploadsInFlight, maxUploadsInFlight, sleep, UPLOAD_IN_FLIGHT_RETRIES, UploadSlots } from './upload-queue.js';
import { backoffDelay } from './backoff.js';

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
  readonly onProgress?: (progress: UploadProgress & { readonly index: number }) => void;
}

/** How many times the sender's own entry is read for its signed URLs before giving up. */
const SIGNED_READ_TRIES = 3;

/**
 * Attachments (`ChatClient.attachments`): upload, send, show and read files and images.
 * Every call rejects with a {@link ChatdError} as the other HTTP calls do (`unavailable`,
 * `aborted`, `closed`, and the route's codes).
 */
export class Attachments implements SentWithAttachments {
  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly channels: Channels;
  private readonly send: (channelId: string, body: string, options: MessageSendOptions) => Promise<SentEntry>;
  /** The client's uploads in progress (`maxUploadsInFlight`) and those waiting their turn. */
  private readonly slots: UploadSlots;

  /** @internal */
  constructor(
    c: ClientContext,
    conn: Connection,
    channels: Channels,
    send: (channelId: string, body: string, options: MessageSendOptions) => Promise<SentEntry>,
  ) {
    this.c = c;
    this.conn = conn;
    this.channels = channels;
    this.send = send;
    this.slots = new UploadSlots(maxUploadsInFlight(c.opts.maxUploadsInFlight));
  }

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
  async upload(channelId: string, data: AttachmentData, options: UploadOptions = {}): Promise<Attachment> {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
    const { signal } = options;
    if (signal?.aborted === true) throw new ChatdError('aborted', 'aborted');
    const filename = options.filename ?? fileName(data);
    const contentType = options.contentType ?? (data instanceof Blob && data.type !== '' ? data.type : 'application/octet-stream');
    const query = filename !== undefined ? `?${new URLSearchParams({ filename }).toString()}` : '';
    const url = `${httpBase(this.c.opts)}/v1/channels/${encodeURIComponent(channelId)}/attachments${query}`;
    const body = data instanceof Blob ? data : new Blob([bytesOf(data)]);
    const what = 'POST /v1/channels/{channelId}/attachments';
    const post = (token: string): Promise<Answer> => postBody(url, token, contentType, body, what, options);
    const release = await this.slots.acquire(signal);
    try {
      for (let retry = 0; ; retry++) {
        if (isClosed(this.conn)) throw new ChatdError('closed', 'client closed');
        if (isAborted(signal)) throw new ChatdError('aborted', 'aborted');
        const last = this.conn.lastToken;
        let answer = await post(last ?? (await this.conn.getToken()));
        if (answer.status === 401 && last !== undefined && typeof this.c.opts.token === 'function') {
          const fresh = await this.conn.getToken();
          if (fresh !== last) answer = await post(fresh);
        }
        if (answer.status < 200 || answer.status >= 300) {
          const err = httpError(answer.status, answer.body, what);
          if (!isUploadsInFlight(err) || retry >= UPLOAD_IN_FLIGHT_RETRIES) throw err;
          await sleep(backoffDelay(retry, this.c.opts.uploadRetryBackoff ?? DEFAULT_UPLOAD_RETRY_BACKOFF), signal);
          continue;
        }
        const stored = parseAttachment(answer.body);
        if (stored === undefined) throw new ChatdError('internal', `${what}: an answer of another shape`);
        return stored;
      }
    } finally {
      release();
    }
  }

  /**
   * Uploads `files` into the channel one after the other, then sends them with `body` (which
   * may be `""`) in one message, in the order given: {@link Attachments.upload} and the
   * client's `send` with `attachments`. Resolves on the message's `MSG_ACK`. Rejects as
   * those do; when an upload fails nothing is sent (the uploads made are deleted by the
   * server after `attachment_orphan_ttl_secs`). The send is durable once the uploads are
   * done (the outbox keeps it); an upload interrupted by a reload is not resumed: call again.
   */
  async sendFiles(channelId: string, body: string, files: readonly FileToSend[], options: SendFilesOptions = {}): Promise<SentEntry> {
    const uploaded: Attachment[] = [];
    for (const [index, f] of files.entries()) {
      const on = options.onProgress;
      uploaded.push(
        await this.upload(channelId, f.data, {
          ...(f.filename !== undefined ? { filename: f.filename } : {}),
          ...(f.contentType !== undefined ? { contentType: f.contentType } : {}),
          ...(on !== undefined
            ? {
                onProgress: (p: UploadProgress) => {
                  on({ ...p, index });
                },
              }
            : {}),
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
        }),
      );
    }
    const sendOptions: MessageSendOptions & { onProgress?: unknown } = { ...options, attachments: uploaded };
    delete sendOptions.onProgress;
    return this.send(channelId, body, sendOptions);
  }

  /**
   * The absolute URL of an attachment of a message (its signed `url`, or with `thumbnail`
   * its `thumbnailUrl`, joined to the server's HTTP base): what an `<img src>` or a download
   * link takes, without a token, until `urlExpiresAt`. `undefined` with `thumbnail` for an
   * attachment that has no thumbnail (not an image).
   */
  url(attachment: MessageAttachment, options: AttachmentUrlOptions = {}): string | undefined {
    const path = options.thumbnail === true ? attachment.thumbnailUrl : attachment.url;
    if (path === undefined) return undefined;
    return /^https?:\/\//i.test(path) ? path : `${httpBase(this.c.opts)}${path.startsWith('/') ? '' : '/'}${path}`;
  }

  /**
   * The bytes of an attachment (`GET /v1/attachments/{attachmentId}`, or its thumbnail) read
   * with the user's token: for when a signed URL expired, or to hand the bytes to the app.
   * Rejects with `not_found` for an unknown or deleted attachment and for one the user may
   * not read (the server does not tell them apart), `unavailable`, `aborted`, `closed`.
   */
  async download(attachmentId: string, options: DownloadOptions = {}): Promise<Blob> {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
    const { signal } = options;
    if (signal?.aborted === true) throw new ChatdError('aborted', 'aborted');
    const f = (globalThis as { fetch?: typeof fetch }).fetch;
    if (f === undefined) throw new ChatdError('unavailable', 'no fetch in this environment');
    const path = `/v1/attachments/${encodeURIComponent(attachmentId)}${options.thumbnail === true ? '/thumbnail' : ''}`;
    const what = `GET /v1/attachments/{attachmentId}${options.thumbnail === true ? '/thumbnail' : ''}`;
    const get = async (token: string): Promise<Response> => {
      try {
        const init: RequestInit = { headers: { authorization: `Bearer ${token}` }, cache: 'no-store' };
        if (signal !== undefined) init.signal = signal;
        return await f(`${httpBase(this.c.opts)}${path}`, init);
      } catch (e) {
        if (isAborted(signal)) throw new ChatdError('aborted', 'aborted');
        throw new ChatdError('unavailable', `${what}: ${String(e)}`);
      }
    };
    const last = this.conn.lastToken;
    let res = await get(last ?? (await this.conn.getToken()));
    if (res.status === 401 && last !== undefined && typeof this.c.opts.token === 'function') {
      const fresh = await this.conn.getToken();
      if (fresh !== last) {
        await res.body?.cancel().catch(() => undefined);
        res = await get(fresh);
      }
    }
    if (!res.ok) throw httpError(res.status, await res.json().catch(() => undefined), what);
    try {
      return await res.blob();
    } catch (e) {
      if (isAborted(signal)) throw new ChatdError('aborted', 'aborted');
      throw new ChatdError('unavailable', `${what}: ${String(e)}`);
    }
  }

  /**
   * @internal The sender's own message with attachments was stored and shown from its ACK
   * (unsigned URLs): reads the stored entry (the history route, `afterSeq` just below it)
   * and puts its attachments, with signed URLs, into the channel's log and its thread's.
   * Tried a few times; when it never works the message keeps the unsigned paths (they need
   * the token: {@link Attachments.download}).
   */
  sentWithAttachments(sent: SentEntry): void {
    void this.readSigned(sent);
  }

  private async readSigned(sent: SentEntry): Promise<void> {
    for (let attempt = 0; attempt < SIGNED_READ_TRIES; attempt++) {
      if (this.conn.state === 'closed') return;
      try {
        await this.readStored(sent);
        return;
      } catch (err) {
        if (!(err instanceof ChatdError) || !err.retryable) return;
        await new Promise((r) => setTimeout(r, 250 * (attempt + 1)));
      }
    }
  }

  /**
   * Reads a message's stored entry again for fresh signed URLs (they stop working
   * `attachment_url_ttl_secs`, default an hour, after the frame or page that carried them:
   * {@link MessageAttachment.urlExpiresAt}) and puts them into the channel's snapshot (and
   * its open thread's); resolves to them (`[]` for a message without attachments, or one
   * deleted since). One `GET /v1/channels/{channelId}/messages?afterSeq=…&limit=1`. Rejects
   * with a ChatdError: `forbidden` (the user is not a member any more), `unavailable`,
   * `aborted`, `closed`.
   */
  async refreshUrls(message: Pick<Message, 'channelId' | 'messageId' | 'seq'>, signal?: AbortSignal): Promise<readonly MessageAttachment[]> {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
    return this.readStored(message, signal);
  }

  /** Reads entry `seq` of the channel and, when it is `messageId`, puts its attachments into the stores. */
  private async readStored(m: Pick<Message, 'channelId' | 'messageId' | 'seq'>, signal?: AbortSignal): Promise<readonly MessageAttachment[]> {
    const path = `/v1/channels/${encodeURIComponent(m.channelId)}/messages?afterSeq=${m.seq - 1}&limit=1`;
    const page = (await requestJson(this.c.opts, this.conn, 'GET', path, signal)) as { messages?: unknown } | undefined;
    const entry = Array.isArray(page?.messages) ? (page.messages as unknown[])[0] : undefined;
    const e = entry as { messageId?: unknown; attachments?: unknown; deleted?: unknown } | undefined;
    if (e?.messageId !== m.messageId) return parseMessageAttachments(undefined);
    const list = e.deleted === true ? undefined : e.attachments;
    const ch = this.channels.get(m.channelId);
    if (ch !== undefined) {
      if (ch.log.setAttachments(m.messageId, list)) ch.store.invalidate();
      for (const t of ch.threads.values()) if (t.log.setAttachments(m.messageId, list)) t.store.invalidate();
    }
    return parseMessageAttachments(list);
  }
}

/** A 2xx or error answer of the upload: its status and parsed JSON body. */
interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** The name of a `File` (a Blob with a string `name`), else undefined. */
function fileName(data: AttachmentData): string | undefined {
  const name = (data as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Raw bytes as a Uint8Array over an ArrayBuffer (what `Blob` takes). */
function bytesOf(data: ArrayBuffer | Uint8Array): Uint8Array<ArrayBuffer> {
  return data instanceof Uint8Array ? new Uint8Array(data) : new Uint8Array(data.slice(0));
}

/** Whether the client was closed (a call, so that TypeScript does not narrow the state once and for all). */
function isClosed(conn: Connection): boolean {
  return conn.state === 'closed';
}

/** Whether the signal aborted (a call, so that TypeScript does not narrow it once and for all). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * POSTs `body` with the token and type: by `XMLHttpRequest` where there is one (its upload
 * progress events), else by `fetch`. Resolves to the status and parsed JSON body of any
 * answer; rejects with `aborted` or `unavailable` (no answer).
 */
function postBody(url: string, token: string, contentType: string, body: Blob, what: string, options: UploadOptions): Promise<Answer> {
  const Xhr = (globalThis as { XMLHttpRequest?: typeof XMLHttpRequest }).XMLHttpRequest;
  return Xhr !== undefined ? postByXhr(Xhr, url, token, contentType, body, what, options) : postByFetch(url, token, contentType, body, what, options);
}

function postByXhr(
  Xhr: typeof XMLHttpRequest,
  url: string,
  token: string,
  contentType: string,
  body: Blob,
  what: string,
  options: UploadOptions,
): Promise<Answer> {
  const { signal, onProgress } = options;
  return new Promise<Answer>((resolve, reject) => {
    if (isAborted(signal)) {
      reject(new ChatdError('aborted', 'aborted'));
      return;
    }
    const xhr = new Xhr();
    const onAbort = (): void => {
      xhr.abort();
    };
    const done = (): void => {
      signal?.removeEventListener('abort', onAbort);
    };
    xhr.open('POST', url);
    xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.setRequestHeader('content-type', contentType);
    xhr.responseType = 'text';
    if (onProgress !== undefined) {
      xhr.upload.onprogress = (ev) => {
        onProgress({ loaded: ev.loaded, total: ev.lengthComputable ? ev.total : body.size });
      };
    }
    xhr.onload = () => {
      done();
      let parsed: unknown;
      try {
        parsed = JSON.parse(xhr.responseText) as unknown;
      } catch {
        parsed = undefined;
      }
      if (xhr.status === 0) {
        reject(new ChatdError('unavailable', `${what}: no answer`));
        return;
      }
      if (xhr.status >= 200 && xhr.status < 300) onProgress?.({ loaded: body.size, total: body.size });
      resolve({ status: xhr.status, body: parsed });
    };
    xhr.onerror = () => {
      done();
      reject(new ChatdError('unavailable', `${what}: the connection failed`));
    };
    xhr.onabort = () => {
      done();
      reject(new ChatdError('aborted', 'aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    xhr.send(body);
  });
}

async function postByFetch(url: string, token: string, contentType: string, body: Blob, what: string, options: UploadOptions): Promise<Answer> {
  const { signal, onProgress } = options;
  const f = (globalThis as { fetch?: typeof fetch }).fetch;
  if (f === undefined) throw new ChatdError('unavailable', 'no fetch in this environment');
  onProgress?.({ loaded: 0, total: body.size });
  let res: Response;
  try {
    const init: RequestInit = { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body, cache: 'no-store' };
    if (signal !== undefined) init.signal = signal;
    res = await f(url, init);
  } catch (e) {
    if (isAborted(signal)) throw new ChatdError('aborted', 'aborted');
    throw new ChatdError('unavailable', `${what}: ${String(e)}`);
  }
  let parsed: unknown;
  try {
    parsed = await res.json();
  } catch {
    if (isAborted(signal)) throw new ChatdError('aborted', 'aborted');
    parsed = undefined;
  }
  if (res.ok) onProgress?.({ loaded: body.size, total: body.size });
  return { status: res.status, body: parsed };
}
