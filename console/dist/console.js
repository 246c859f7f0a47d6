"use strict";
(() => {
  // ../clients/typescript/src/channel-store.ts
  var ChannelStore = class {
    /** The channel. */
    channelId;
    /** {@inheritDoc ExternalStore.subscribe} */
    subscribe;
    /** {@inheritDoc ExternalStore.getSnapshot} */
    getSnapshot;
    client;
    /** @internal Use {@link ChatClient.channel}. */
    constructor(client, channelId, store) {
      this.client = client;
      this.channelId = channelId;
      this.subscribe = store.subscribe;
      this.getSnapshot = store.getSnapshot;
    }
    /** Sends a message to this channel (a reply or a thread reply with `options`, see {@link ChatClient.send}). */
    send(body, options) {
      return this.client.send(this.channelId, body, options);
    }
    /** Loads older entries; resolves to whether more exist. */
    loadOlder(signal) {
      return this.client.loadOlder(this.channelId, signal);
    }
    /** Marks everything held as read. */
    markRead() {
      this.client.markRead(this.channelId);
    }
    /** The user is typing. */
    typing() {
      this.client.typing(this.channelId);
    }
    /** The user stopped typing. */
    stopTyping() {
      this.client.stopTyping(this.channelId);
    }
  };

  // ../clients/typescript/src/attachment-types.ts
  var DEFAULT_ATTACHMENT_TYPES = Object.freeze([
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
    "audio/mpeg",
    "audio/ogg",
    "video/mp4",
    "application/zip",
    "application/octet-stream"
  ]);
  var IMAGE_TYPES = Object.freeze(["image/png", "image/jpeg", "image/gif", "image/webp"]);
  function outboxAttachments(refs) {
    return refs.map((r) => {
      if (typeof r === "string") return { attachmentId: r };
      return {
        attachmentId: r.attachmentId,
        contentType: r.contentType,
        size: r.size,
        ...r.filename !== void 0 ? { filename: r.filename } : {},
        ...r.width !== void 0 ? { width: r.width } : {},
        ...r.height !== void 0 ? { height: r.height } : {}
      };
    });
  }
  function attachmentFields(o) {
    const list = o.attachments ?? [];
    return list.length > 0 ? { attachments: list.map((a) => a.attachmentId) } : {};
  }
  function outgoingAttachments(o) {
    return o.attachments !== void 0 && o.attachments.length > 0 ? { attachments: o.attachments } : {};
  }
  function ackedAttachments(list) {
    if (list === void 0 || list.length === 0) return void 0;
    const out = [];
    for (const a of list) {
      if (a.contentType === void 0 || a.size === void 0) continue;
      out.push({
        attachmentId: a.attachmentId,
        contentType: a.contentType,
        size: a.size,
        ...a.filename !== void 0 ? { filename: a.filename } : {},
        ...a.width !== void 0 ? { width: a.width } : {},
        ...a.height !== void 0 ? { height: a.height } : {},
        url: `/v1/attachments/${encodeURIComponent(a.attachmentId)}`
      });
    }
    return out;
  }
  function parseMessageAttachments(x) {
    if (!Array.isArray(x)) return EMPTY;
    const out = [];
    for (const item of x) {
      const a = parseMessageAttachment(item);
      if (a !== void 0) out.push(a);
    }
    return out.length === 0 ? EMPTY : Object.freeze(out);
  }
  var EMPTY = Object.freeze([]);
  function parseMessageAttachment(x) {
    if (typeof x !== "object" || x === null) return void 0;
    const r = x;
    if (typeof r.attachmentId !== "string" || typeof r.contentType !== "string" || typeof r.size !== "number" || typeof r.url !== "string") {
      return void 0;
    }
    const exp = signedExpiry(r.url);
    return Object.freeze({
      attachmentId: r.attachmentId,
      contentType: r.contentType,
      size: r.size,
      ...typeof r.filename === "string" ? { filename: r.filename } : {},
      ...typeof r.width === "number" ? { width: r.width } : {},
      ...typeof r.height === "number" ? { height: r.height } : {},
      url: r.url,
      ...typeof r.thumbnailUrl === "string" ? { thumbnailUrl: r.thumbnailUrl } : {},
      ...exp !== void 0 ? { urlExpiresAt: exp } : {}
    });
  }
  function signedExpiry(url) {
    const q = url.indexOf("?");
    if (q < 0) return void 0;
    const params = new URLSearchParams(url.slice(q + 1));
    const exp = params.get("exp");
    if (exp === null || params.get("sig") === null || !/^\d{1,15}$/.test(exp)) return void 0;
    return Number(exp) * 1e3;
  }
  function parseAttachment(x) {
    if (typeof x !== "object" || x === null) return void 0;
    const r = x;
    if (typeof r.attachmentId !== "string" || typeof r.channelId !== "string" || typeof r.contentType !== "string" || typeof r.size !== "number" || typeof r.sha256 !== "string" || typeof r.createdAt !== "number") {
      return void 0;
    }
    return Object.freeze({
      attachmentId: r.attachmentId,
      channelId: r.channelId,
      contentType: r.contentType,
      size: r.size,
      sha256: r.sha256,
      ...typeof r.filename === "string" ? { filename: r.filename } : {},
      ...typeof r.width === "number" ? { width: r.width } : {},
      ...typeof r.height === "number" ? { height: r.height } : {},
      createdAt: r.createdAt
    });
  }

  // ../clients/typescript/src/errors.ts
  var RETRYABLE_CODES = /* @__PURE__ */ new Set(["rate_limited", "unavailable", "internal"]);
  var ChatdError = class _ChatdError extends Error {
    /** The spec's error code (or a client-side one). Unknown server codes are passed through. */
    code;
    /** True when the same frame may be sent again later. */
    retryable;
    /** The field at fault, when the server named one. */
    field;
    /**
     * How long to wait (ms): with `rate_limited` (also slow mode's, `reason: "slow_mode"`:
     * exact to the ms the next message is allowed), and with `reason: "muted"` until the
     * mute ends.
     */
    retryAfterMs;
    /**
     * A word telling refusals of one code apart, when the server gave one (version 1.2, the
     * HTTP error body's `reason`): e.g. `dm_policy` for a direct channel that `dm_policy`
     * refuses, `banned` for a join refused to a banned user; moderation's (§17) `muted`,
     * `read_only`, `slow_mode` and `blocked` in `ERROR` frames; `too_many_reactions` for a
     * reaction refused because its message holds `max_reactions_per_message` distinct emoji
     * (§8). Unknown reasons are passed through.
     */
    reason;
    /** Creates an error; `retryable` defaults to the spec's classification of `code`. */
    constructor(code, message, options = {}) {
      super(message);
      this.name = "ChatdError";
      this.code = code;
      this.retryable = options.retryable ?? RETRYABLE_CODES.has(code);
      this.field = options.field;
      this.retryAfterMs = options.retryAfterMs;
      this.reason = options.reason;
    }
    /** Builds a ChatdError from an `ERROR` frame. */
    static fromFrame(frame) {
      const opts = { retryable: frame.retryable };
      if (frame.field !== void 0) opts.field = frame.field;
      if (typeof frame.retryAfterMs === "number") opts.retryAfterMs = frame.retryAfterMs;
      if (typeof frame.reason === "string") opts.reason = frame.reason;
      return new _ChatdError(frame.code, frame.message, opts);
    }
    /** A plain, structured-clone-safe copy (for storage and BroadcastChannel); `reason` and `retryAfterMs` when set. */
    toJSON() {
      return {
        code: this.code,
        message: this.message,
        retryable: this.retryable,
        ...this.reason !== void 0 ? { reason: this.reason } : {},
        ...this.retryAfterMs !== void 0 ? { retryAfterMs: this.retryAfterMs } : {}
      };
    }
  };

  // ../clients/typescript/src/http.ts
  function getJson(opts, conn, path, signal) {
    return requestJson(opts, conn, "GET", path, signal);
  }
  async function requestJson(opts, conn, method, path, signal) {
    return (await request(opts, conn, method, path, { signal })).body;
  }
  async function request(opts, conn, method, path, options = {}) {
    const { signal } = options;
    if (signal?.aborted === true) throw new ChatdError("aborted", "aborted");
    const f = globalThis.fetch;
    if (f === void 0) throw new ChatdError("unavailable", "no fetch in this environment");
    const what = `${method} ${path.split("?")[0] ?? path}`;
    const json = options.body === void 0 ? void 0 : JSON.stringify(options.body);
    const last2 = conn.lastToken;
    let res = await fetchOnce(f, method, `${httpBase(opts)}${path}`, last2 ?? await conn.getToken(), json, what, signal);
    if (res.status === 401 && last2 !== void 0 && typeof opts.token === "function") {
      const fresh = await conn.getToken();
      if (fresh !== last2) {
        await res.body?.cancel().catch(() => void 0);
        res = await fetchOnce(f, method, `${httpBase(opts)}${path}`, fresh, json, what, signal);
      }
    }
    let body;
    try {
      body = res.status === 204 ? void 0 : await res.json();
    } catch {
      body = void 0;
    }
    if (!res.ok) throw httpError(res.status, body, what);
    return { status: res.status, body };
  }
  function httpError(status, body, what) {
    const err = body?.error;
    const code = typeof err?.code === "string" ? err.code : status >= 500 ? "unavailable" : "internal";
    const message = typeof err?.message === "string" ? err.message : `${what}: HTTP ${status}`;
    const named = typeof err?.field === "string" ? err.field : void 0;
    const field2 = code === "invalid_field" ? named ?? /^([A-Za-z_][A-Za-z0-9_]*):/.exec(message)?.[1] : void 0;
    const details = {};
    if (field2 !== void 0) details.field = field2;
    if (typeof err?.reason === "string") details.reason = err.reason;
    const after = err?.retryAfterMs;
    if (typeof after === "number") details.retryAfterMs = after;
    return new ChatdError(code, message, details);
  }
  async function fetchOnce(f, method, url, token, json, what, signal) {
    try {
      const headers = { authorization: `Bearer ${token}` };
      if (json !== void 0) headers["content-type"] = "application/json";
      const init = { method, headers, cache: "no-store" };
      if (json !== void 0) init.body = json;
      if (signal !== void 0) init.signal = signal;
      return await f(url, init);
    } catch (e) {
      if (isAborted(signal)) throw new ChatdError("aborted", "aborted");
      throw new ChatdError("unavailable", `${what}: ${String(e)}`);
    }
  }
  function httpBase(opts) {
    if (opts.httpUrl !== void 0) return opts.httpUrl.replace(/\/+$/, "");
    const u = new URL(opts.url);
    const scheme = u.protocol === "wss:" ? "https:" : u.protocol === "ws:" ? "http:" : u.protocol;
    let path = u.pathname.replace(/\/+$/, "");
    if (path.endsWith("/v1/ws")) path = path.slice(0, -"/v1/ws".length);
    return `${scheme}//${u.host}${path}`;
  }
  function isAborted(signal) {
    return signal?.aborted === true;
  }

  // ../clients/typescript/src/upload-queue.ts
  var DEFAULT_MAX_UPLOADS_IN_FLIGHT = 3;
  var UPLOAD_IN_FLIGHT_RETRIES = 10;
  var DEFAULT_UPLOAD_RETRY_BACKOFF = { baseMs: 500, maxMs: 1e4 };
  function maxUploadsInFlight(value) {
    return value !== void 0 && Number.isInteger(value) && value >= 1 ? value : DEFAULT_MAX_UPLOADS_IN_FLIGHT;
  }
  function isUploadsInFlight(e) {
    return e.code === "rate_limited" && e.reason === "uploads_in_flight";
  }
  var UploadSlots = class {
    max;
    running = 0;
    waiting = [];
    constructor(max) {
      this.max = max;
    }
    /** Slots taken now. */
    get inFlight() {
      return this.running;
    }
    /** Calls waiting for a slot now. */
    get queued() {
      return this.waiting.length;
    }
    /**
     * Resolves, once a slot is free and every earlier caller had one, to the function that
     * gives it back (once; later calls do nothing). Rejects with `aborted` when `signal`
     * aborts first.
     */
    acquire(signal) {
      if (signal?.aborted === true) return Promise.reject(new ChatdError("aborted", "aborted"));
      if (this.running < this.max && this.waiting.length === 0) {
        this.running++;
        return Promise.resolve(this.releaser());
      }
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const i = this.waiting.indexOf(waiter);
          if (i < 0) return;
          this.waiting.splice(i, 1);
          reject(new ChatdError("aborted", "aborted"));
        };
        const waiter = {
          start: () => {
            signal?.removeEventListener("abort", onAbort);
            this.running++;
            resolve(this.releaser());
          }
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        this.waiting.push(waiter);
      });
    }
    releaser() {
      let given = false;
      return () => {
        if (given) return;
        given = true;
        this.running--;
        while (this.running < this.max) {
          const next = this.waiting.shift();
          if (next === void 0) return;
          next.start();
        }
      };
    }
  };
  function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(new ChatdError("aborted", "aborted"));
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(new ChatdError("aborted", "aborted"));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  // ../clients/typescript/src/backoff.ts
  function backoffDelay(attempt, options = {}) {
    const base = options.baseMs ?? 250;
    const max = options.maxMs ?? 3e4;
    const random = options.random ?? Math.random;
    const exp = Math.min(max, base * 2 ** Math.min(Math.max(0, attempt), 30));
    const half = exp / 2;
    return Math.round(half + random() * half);
  }

  // ../clients/typescript/src/attachments.ts
  var SIGNED_READ_TRIES = 3;
  var Attachments = class {
    c;
    conn;
    channels;
    send;
    /** The client's uploads in progress (`maxUploadsInFlight`) and those waiting their turn. */
    slots;
    /** @internal */
    constructor(c, conn, channels, send) {
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
    async upload(channelId, data, options = {}) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      const { signal } = options;
      if (signal?.aborted === true) throw new ChatdError("aborted", "aborted");
      const filename = options.filename ?? fileName(data);
      const contentType = options.contentType ?? (data instanceof Blob && data.type !== "" ? data.type : "application/octet-stream");
      const query = filename !== void 0 ? `?${new URLSearchParams({ filename }).toString()}` : "";
      const url = `${httpBase(this.c.opts)}/v1/channels/${encodeURIComponent(channelId)}/attachments${query}`;
      const body = data instanceof Blob ? data : new Blob([bytesOf(data)]);
      const what = "POST /v1/channels/{channelId}/attachments";
      const post = (token) => postBody(url, token, contentType, body, what, options);
      const release = await this.slots.acquire(signal);
      try {
        for (let retry = 0; ; retry++) {
          if (isClosed(this.conn)) throw new ChatdError("closed", "client closed");
          if (isAborted2(signal)) throw new ChatdError("aborted", "aborted");
          const last2 = this.conn.lastToken;
          let answer = await post(last2 ?? await this.conn.getToken());
          if (answer.status === 401 && last2 !== void 0 && typeof this.c.opts.token === "function") {
            const fresh = await this.conn.getToken();
            if (fresh !== last2) answer = await post(fresh);
          }
          if (answer.status < 200 || answer.status >= 300) {
            const err = httpError(answer.status, answer.body, what);
            if (!isUploadsInFlight(err) || retry >= UPLOAD_IN_FLIGHT_RETRIES) throw err;
            await sleep(backoffDelay(retry, this.c.opts.uploadRetryBackoff ?? DEFAULT_UPLOAD_RETRY_BACKOFF), signal);
            continue;
          }
          const stored = parseAttachment(answer.body);
          if (stored === void 0) throw new ChatdError("internal", `${what}: an answer of another shape`);
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
    async sendFiles(channelId, body, files, options = {}) {
      const uploaded = [];
      for (const [index, f] of files.entries()) {
        const on = options.onProgress;
        uploaded.push(
          await this.upload(channelId, f.data, {
            ...f.filename !== void 0 ? { filename: f.filename } : {},
            ...f.contentType !== void 0 ? { contentType: f.contentType } : {},
            ...on !== void 0 ? {
              onProgress: (p) => {
                on({ ...p, index });
              }
            } : {},
            ...options.signal !== void 0 ? { signal: options.signal } : {}
          })
        );
      }
      const sendOptions = { ...options, attachments: uploaded };
      delete sendOptions.onProgress;
      return this.send(channelId, body, sendOptions);
    }
    /**
     * The absolute URL of an attachment of a message (its signed `url`, or with `thumbnail`
     * its `thumbnailUrl`, joined to the server's HTTP base): what an `<img src>` or a download
     * link takes, without a token, until `urlExpiresAt`. `undefined` with `thumbnail` for an
     * attachment that has no thumbnail (not an image).
     */
    url(attachment, options = {}) {
      const path = options.thumbnail === true ? attachment.thumbnailUrl : attachment.url;
      if (path === void 0) return void 0;
      return /^https?:\/\//i.test(path) ? path : `${httpBase(this.c.opts)}${path.startsWith("/") ? "" : "/"}${path}`;
    }
    /**
     * The bytes of an attachment (`GET /v1/attachments/{attachmentId}`, or its thumbnail) read
     * with the user's token: for when a signed URL expired, or to hand the bytes to the app.
     * Rejects with `not_found` for an unknown or deleted attachment and for one the user may
     * not read (the server does not tell them apart), `unavailable`, `aborted`, `closed`.
     */
    async download(attachmentId, options = {}) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      const { signal } = options;
      if (signal?.aborted === true) throw new ChatdError("aborted", "aborted");
      const f = globalThis.fetch;
      if (f === void 0) throw new ChatdError("unavailable", "no fetch in this environment");
      const path = `/v1/attachments/${encodeURIComponent(attachmentId)}${options.thumbnail === true ? "/thumbnail" : ""}`;
      const what = `GET /v1/attachments/{attachmentId}${options.thumbnail === true ? "/thumbnail" : ""}`;
      const get = async (token) => {
        try {
          const init = { headers: { authorization: `Bearer ${token}` }, cache: "no-store" };
          if (signal !== void 0) init.signal = signal;
          return await f(`${httpBase(this.c.opts)}${path}`, init);
        } catch (e) {
          if (isAborted2(signal)) throw new ChatdError("aborted", "aborted");
          throw new ChatdError("unavailable", `${what}: ${String(e)}`);
        }
      };
      const last2 = this.conn.lastToken;
      let res = await get(last2 ?? await this.conn.getToken());
      if (res.status === 401 && last2 !== void 0 && typeof this.c.opts.token === "function") {
        const fresh = await this.conn.getToken();
        if (fresh !== last2) {
          await res.body?.cancel().catch(() => void 0);
          res = await get(fresh);
        }
      }
      if (!res.ok) throw httpError(res.status, await res.json().catch(() => void 0), what);
      try {
        return await res.blob();
      } catch (e) {
        if (isAborted2(signal)) throw new ChatdError("aborted", "aborted");
        throw new ChatdError("unavailable", `${what}: ${String(e)}`);
      }
    }
    /**
     * @internal The sender's own message with attachments was stored and shown from its ACK
     * (unsigned URLs): reads the stored entry (the history route, `afterSeq` just below it)
     * and puts its attachments, with signed URLs, into the channel's log and its thread's.
     * Tried a few times; when it never works the message keeps the unsigned paths (they need
     * the token: {@link Attachments.download}).
     */
    sentWithAttachments(sent) {
      void this.readSigned(sent);
    }
    async readSigned(sent) {
      for (let attempt = 0; attempt < SIGNED_READ_TRIES; attempt++) {
        if (this.conn.state === "closed") return;
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
    async refreshUrls(message, signal) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      return this.readStored(message, signal);
    }
    /** Reads entry `seq` of the channel and, when it is `messageId`, puts its attachments into the stores. */
    async readStored(m, signal) {
      const path = `/v1/channels/${encodeURIComponent(m.channelId)}/messages?afterSeq=${m.seq - 1}&limit=1`;
      const page = await requestJson(this.c.opts, this.conn, "GET", path, signal);
      const entry = Array.isArray(page?.messages) ? page.messages[0] : void 0;
      const e = entry;
      if (e?.messageId !== m.messageId) return parseMessageAttachments(void 0);
      const list = e.deleted === true ? void 0 : e.attachments;
      const ch = this.channels.get(m.channelId);
      if (ch !== void 0) {
        if (ch.log.setAttachments(m.messageId, list)) ch.store.invalidate();
        for (const t of ch.threads.values()) if (t.log.setAttachments(m.messageId, list)) t.store.invalidate();
      }
      return parseMessageAttachments(list);
    }
  };
  function fileName(data) {
    const name = data.name;
    return typeof name === "string" && name !== "" ? name : void 0;
  }
  function bytesOf(data) {
    return data instanceof Uint8Array ? new Uint8Array(data) : new Uint8Array(data.slice(0));
  }
  function isClosed(conn) {
    return conn.state === "closed";
  }
  function isAborted2(signal) {
    return signal?.aborted === true;
  }
  function postBody(url, token, contentType, body, what, options) {
    const Xhr = globalThis.XMLHttpRequest;
    return Xhr !== void 0 ? postByXhr(Xhr, url, token, contentType, body, what, options) : postByFetch(url, token, contentType, body, what, options);
  }
  function postByXhr(Xhr, url, token, contentType, body, what, options) {
    const { signal, onProgress } = options;
    return new Promise((resolve, reject) => {
      if (isAborted2(signal)) {
        reject(new ChatdError("aborted", "aborted"));
        return;
      }
      const xhr = new Xhr();
      const onAbort = () => {
        xhr.abort();
      };
      const done = () => {
        signal?.removeEventListener("abort", onAbort);
      };
      xhr.open("POST", url);
      xhr.setRequestHeader("authorization", `Bearer ${token}`);
      xhr.setRequestHeader("content-type", contentType);
      xhr.responseType = "text";
      if (onProgress !== void 0) {
        xhr.upload.onprogress = (ev) => {
          onProgress({ loaded: ev.loaded, total: ev.lengthComputable ? ev.total : body.size });
        };
      }
      xhr.onload = () => {
        done();
        let parsed;
        try {
          parsed = JSON.parse(xhr.responseText);
        } catch {
          parsed = void 0;
        }
        if (xhr.status === 0) {
          reject(new ChatdError("unavailable", `${what}: no answer`));
          return;
        }
        if (xhr.status >= 200 && xhr.status < 300) onProgress?.({ loaded: body.size, total: body.size });
        resolve({ status: xhr.status, body: parsed });
      };
      xhr.onerror = () => {
        done();
        reject(new ChatdError("unavailable", `${what}: the connection failed`));
      };
      xhr.onabort = () => {
        done();
        reject(new ChatdError("aborted", "aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      xhr.send(body);
    });
  }
  async function postByFetch(url, token, contentType, body, what, options) {
    const { signal, onProgress } = options;
    const f = globalThis.fetch;
    if (f === void 0) throw new ChatdError("unavailable", "no fetch in this environment");
    onProgress?.({ loaded: 0, total: body.size });
    let res;
    try {
      const init = { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": contentType }, body, cache: "no-store" };
      if (signal !== void 0) init.signal = signal;
      res = await f(url, init);
    } catch (e) {
      if (isAborted2(signal)) throw new ChatdError("aborted", "aborted");
      throw new ChatdError("unavailable", `${what}: ${String(e)}`);
    }
    let parsed;
    try {
      parsed = await res.json();
    } catch {
      if (isAborted2(signal)) throw new ChatdError("aborted", "aborted");
      parsed = void 0;
    }
    if (res.ok) onProgress?.({ loaded: body.size, total: body.size });
    return { status: res.status, body: parsed };
  }

  // ../clients/typescript/src/channel-create.ts
  var NewChannels = class {
    c;
    conn;
    refresher;
    /** Requests with the connection's token; the channel list is brought up to date through `refresher`. */
    constructor(c, conn, refresher) {
      this.c = c;
      this.conn = conn;
      this.refresher = refresher;
    }
    /** The direct channel with `userId`, made when there is none (see `ChatClient.direct`). */
    async direct(userId, options = {}) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      const path = `/v1/me/direct/${encodeURIComponent(userId)}`;
      const answer = await request(this.c.opts, this.conn, "PUT", path, { signal: options.signal });
      const channel = parseChannelInfo(answer.body, "PUT /v1/me/direct/{userId}");
      await this.listed(channel, "member", options.signal);
      return { channel, created: answer.status === 201 };
    }
    /** A group channel with the user as its owner (see `ChatClient.createChannel`). */
    async create(options = {}) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      const body = {};
      if (options.channelId !== void 0) body.channelId = options.channelId;
      if (options.name !== void 0) body.name = options.name;
      if (options.visibility !== void 0) body.visibility = options.visibility;
      if (options.members !== void 0) body.members = [...options.members];
      const answer = await request(this.c.opts, this.conn, "POST", "/v1/me/channels", { body, signal: options.signal });
      const channel = parseChannelInfo(answer.body, "POST /v1/me/channels");
      await this.listed(channel, "owner", options.signal);
      return channel;
    }
    /** Reads the channel list; when that fails, lists `channel` from its object, the user's role `role`. */
    async listed(channel, role, signal) {
      await this.refresher.listAfter(
        channel.channelId,
        (ch) => ({
          channelId: channel.channelId,
          lastSeq: Math.max(channel.lastSeq, ch.log.knownLastSeq),
          deliveredSeq: ch.deliveredSeq,
          readSeq: ch.readSeq,
          name: channel.name,
          metadata: channel.metadata,
          kind: channel.kind,
          visibility: channel.visibility,
          memberCount: channel.memberCount,
          role
        }),
        signal
      );
    }
  };
  function parseChannelInfo(body, what) {
    const bad = (why) => new ChatdError("internal", `${what}: ${why}`);
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw bad("not a JSON object");
    const b = body;
    const { channelId, members, lastSeq, createdAt } = b;
    const name = b.name ?? null;
    const metadata = b.metadata ?? null;
    const kind = b.kind ?? "group";
    const visibility = b.visibility ?? "private";
    if (typeof channelId !== "string") throw bad("no channelId");
    if (!Array.isArray(members) || !members.every((m) => typeof m === "string")) throw bad("no members list");
    if (typeof lastSeq !== "number" || typeof createdAt !== "number") throw bad("no lastSeq or createdAt");
    if (name !== null && typeof name !== "string") throw bad("a name that is not a string");
    if (metadata !== null && (typeof metadata !== "object" || Array.isArray(metadata))) throw bad("metadata that is not an object");
    if (typeof kind !== "string" || typeof visibility !== "string") throw bad("a kind or visibility that is not a string");
    const memberCount = b.memberCount ?? members.length;
    if (typeof memberCount !== "number") throw bad("a memberCount that is not a number");
    return {
      channelId,
      members,
      lastSeq,
      createdAt,
      name,
      metadata,
      kind,
      visibility,
      memberCount
    };
  }

  // ../clients/typescript/src/channel-refresh.ts
  var ChannelRefresh = class {
    c;
    conn;
    channels;
    sync;
    /** Refreshes the channels with the connection's token; opened channels catch up through `sync`. */
    constructor(c, conn, channels, sync) {
      this.c = c;
      this.conn = conn;
      this.channels = channels;
      this.sync = sync;
    }
    /** Reads `GET /v1/me/channels` and brings the channels up to date (see `ChatClient.refreshChannels`). */
    async refresh(signal) {
      const startEpoch = this.channels.epoch;
      const body = await getJson(this.c.opts, this.conn, "/v1/me/channels", signal);
      const list = body?.channels;
      if (!Array.isArray(list)) throw new ChatdError("internal", "GET /v1/me/channels: no channels list");
      if (this.conn.state !== "closed") this.apply(list, startEpoch);
      return this.channels.list.getSnapshot();
    }
    /**
     * After a change of the user's own that put it in `channelId` (a join, a new group or
     * direct channel): when the channel is listed already (the server's `CHANNEL_ADDED`
     * came before the change's answer, or the user was in it before), nothing more; else
     * reads the list at once, so that the channel is listed (`channelAdded`) when the
     * caller resolves. When that read fails, a channel not listed yet is listed from
     * `entry(ch)` (what the change's answer says of it) until its `CHANNEL_ADDED`, the next
     * `HELLO` or read; an `aborted` read still rejects (the change was made all the same).
     */
    async listAfter(channelId, entry, signal) {
      const known = this.channels.get(channelId);
      if (known !== void 0 && !known.removed && known.hello !== void 0 && this.conn.state !== "closed") return;
      try {
        await this.refresh(signal);
      } catch (e) {
        if (this.conn.state === "closed") return;
        const ch = this.channels.ctx(channelId);
        if (ch.removed || ch.hello === void 0) {
          ch.removed = false;
          this.channels.takeChannelState(ch, entry(ch));
          this.channels.markListed(ch);
          if (ch.opened) this.sync.resume(ch);
        }
        if (e instanceof ChatdError && e.code === "aborted") throw e;
      }
    }
    /**
     * Brings the list up to date with `GET /v1/me/channels`, read after `epoch` was
     * `startEpoch`: a listing or removal seen since (a live frame) is newer than the read
     * and wins over it.
     */
    apply(list, startEpoch) {
      const inList = /* @__PURE__ */ new Set();
      for (const c of list) {
        if (typeof c.channelId !== "string" || typeof c.lastSeq !== "number") continue;
        inList.add(c.channelId);
        const ch = this.channels.ctx(c.channelId);
        this.channels.moderation.stated(c.channelId, c.postingRole, c.slowModeMs, c.retentionSecs);
        if (ch.removed || ch.hello === void 0) {
          if (ch.removedEpoch > startEpoch) continue;
          ch.removed = false;
          this.channels.takeChannelState(ch, c);
        } else if (c.readSeq >= ch.readSeq) {
          this.channels.takeChannelState(ch, c);
        } else {
          const { name, metadata, kind, visibility, memberCount, role, notify, snoozeUntil } = c;
          ch.hello = { ...ch.hello, name, metadata, kind, visibility, memberCount, role, notify, snoozeUntil };
          ch.log.noteLastSeq(c.lastSeq);
          ch.store.invalidate();
        }
        this.channels.markListed(ch);
        if (ch.opened) this.sync.resume(ch);
      }
      for (const ch of [...this.channels.all()]) {
        if (inList.has(ch.id) || ch.removed || ch.hello === void 0 || ch.listedEpoch > startEpoch) continue;
        this.channels.markRemoved(ch);
      }
    }
  };

  // ../clients/typescript/src/mentions.ts
  function mentionsUser(e, userId) {
    if (e.mentionAll === true) return true;
    const ids = e.mentions;
    return Array.isArray(ids) && ids.includes(userId);
  }
  function mentionFields(o) {
    const ids = o.mentions === void 0 ? [] : [...new Set(o.mentions)].sort((a, b) => a < b ? -1 : a > b ? 1 : 0);
    return {
      ...ids.length > 0 ? { mentions: ids } : {},
      ...o.mentionAll === true ? { mentionAll: true } : {}
    };
  }
  function computeUnreadMentions(i) {
    if (i.logStarted && i.logLow <= i.readSeq + 1) return i.countHeldAbove(i.readSeq);
    let base;
    const hello = i.helloUnreadMentions ?? 0;
    if (i.readSeq >= i.helloLastSeq) base = 0;
    else if (i.readSeq === i.helloReadSeq) base = hello;
    else base = Math.min(hello, i.helloLastSeq - i.readSeq);
    const since = i.logStarted ? i.countHeldAbove(Math.max(i.helloLastSeq, i.readSeq)) : i.liveMentions;
    return base + since;
  }

  // ../clients/typescript/src/message-states.ts
  function entryKind(e) {
    return e.kind ?? "message";
  }
  var PREVIEW_MAX_BYTES = 200;
  function cutUtf8(text, maxBytes = PREVIEW_MAX_BYTES) {
    let bytes = 0;
    let out = "";
    for (const ch of text) {
      const cp = ch.codePointAt(0) ?? 0;
      const n = cp < 128 ? 1 : cp < 2048 ? 2 : cp < 65536 ? 3 : 4;
      if (bytes + n > maxBytes) break;
      bytes += n;
      out += ch;
    }
    return out;
  }
  var MAX_PARTICIPANTS = 10;
  var MessageStates = class {
    /** The current user (for reaction `me`). */
    me;
    /** Whether modifications of messages not held are kept until their message comes (a channel's log: yes). */
    keepOrphans;
    states = /* @__PURE__ */ new Map();
    /** message ids in seq order */
    order = [];
    /** modifications whose target is not (yet) held */
    orphanMods = /* @__PURE__ */ new Map();
    /** The held messages that quote each message id. */
    quoting = /* @__PURE__ */ new Map();
    cache;
    constructor(me, keepOrphans) {
      this.me = me;
      this.keepOrphans = keepOrphans;
    }
    /** Whether the message is held. */
    has(messageId) {
      return this.states.has(messageId);
    }
    /** How many messages are held. */
    get size() {
      return this.order.length;
    }
    /**
     * Adds a `message` entry whose state is as of `asOf` (see the module doc); `exactIfNoReactions`:
     * the reaction holders are known from its creation on when the entry lists none. `atEnd`: it
     * is above every held message (else it is put in seq order). Its root's summary counts it
     * when the root's state is older than it.
     */
    addMessage(e, asOf, exactIfNoReactions, atEnd) {
      const st = this.newState(e, asOf, exactIfNoReactions);
      this.states.set(e.messageId, st);
      if (atEnd || this.order.length === 0) this.order.push(e.messageId);
      else this.insertOrdered(e.messageId, e.seq);
      this.cache = void 0;
      if (e.replyTo !== void 0) {
        let set = this.quoting.get(e.replyTo);
        if (set === void 0) {
          set = /* @__PURE__ */ new Set();
          this.quoting.set(e.replyTo, set);
        }
        set.add(e.messageId);
      }
      if (e.threadId !== void 0) {
        const root = this.states.get(e.threadId);
        if (root !== void 0 && e.seq > root.asOfSeq) this.replyAdded(root, e, !st.deleted);
      }
      const list = this.orphanMods.get(e.messageId);
      if (list !== void 0) {
        this.orphanMods.delete(e.messageId);
        for (const m of list) if (m.seq > st.asOfSeq) this.fold(st, m);
      }
    }
    /**
     * Folds an `edit`, `delete` or `reaction` entry into its target (when the target's state is
     * older than it), and an edit's or delete's into the previews of the messages quoting the
     * target. A target not held: kept for it when orphans are kept, else dropped.
     */
    modify(e) {
      const id = e.targetId;
      if (id === void 0) return;
      const kind = entryKind(e);
      if (kind === "edit" || kind === "delete") this.foldPreviews(id, e, kind);
      const target = this.states.get(id);
      if (target !== void 0) {
        if (e.seq > target.asOfSeq) this.fold(target, e);
        return;
      }
      if (!this.keepOrphans) return;
      const list = this.orphanMods.get(id) ?? [];
      list.push(e);
      list.sort((a, b) => a.seq - b.seq);
      this.orphanMods.set(id, list);
    }
    /** The held messages in seq order, folded. The same array until something changes. */
    messages() {
      if (this.cache !== void 0) return this.cache;
      const out = [];
      for (const id of this.order) {
        const st = this.states.get(id);
        if (st === void 0) continue;
        st.view ??= this.view(st);
        out.push(st.view);
      }
      this.cache = out;
      return out;
    }
    /** The folded state of one message, if held. */
    message(messageId) {
      const st = this.states.get(messageId);
      if (st === void 0) return void 0;
      st.view ??= this.view(st);
      return st.view;
    }
    /**
     * Replaces a held message's attachments with those of a read of its stored entry (fresh
     * signed URLs; the sender's own entry made from its ACK had none). Nothing for a message
     * not held or deleted. Returns whether it changed anything.
     */
    setAttachments(messageId, attachments) {
      const st = this.states.get(messageId);
      if (st === void 0 || st.deleted) return false;
      st.attachments = parseMessageAttachments(attachments);
      st.view = void 0;
      this.cache = void 0;
      return true;
    }
    /**
     * A read shows a held message expired (§19: the retention sweep erased it, with no
     * entry): it is deleted and expired from now on, as a delete makes it (no text,
     * reactions, mentions or attachments; the messages quoting it preview it deleted; its
     * root counts one reply fewer). Nothing for a message not held, or an entry not
     * `expired`. Returns whether it changed anything.
     */
    expire(e) {
      if (e.expired !== true) return false;
      const st = this.states.get(e.messageId);
      if (st === void 0 || st.expired) return false;
      const was = st.deleted;
      st.expired = true;
      st.deleted = true;
      st.body = "";
      st.editedAt = void 0;
      st.reactions = [];
      st.attachments = parseMessageAttachments(void 0);
      st.view = void 0;
      this.cache = void 0;
      for (const id of this.quoting.get(e.messageId) ?? []) {
        const q = this.states.get(id);
        if (q === void 0) continue;
        q.preview = { senderId: q.preview?.senderId ?? st.entry.senderId, body: "", deleted: true };
        q.view = void 0;
      }
      const rootId = st.entry.threadId;
      const root = rootId === void 0 ? void 0 : this.states.get(rootId);
      if (!was && root?.thread !== void 0) {
        root.thread = { ...root.thread, replyCount: Math.max(0, root.thread.replyCount - 1) };
        root.view = void 0;
      }
      return true;
    }
    /** Counts held messages above `afterSeq` that are not deleted and not sent by the user. */
    countUnreadAbove(afterSeq) {
      let n = 0;
      for (const id of this.order) {
        const st = this.states.get(id);
        if (st === void 0 || st.entry.seq <= afterSeq) continue;
        if (!st.deleted && st.entry.senderId !== this.me) n++;
      }
      return n;
    }
    /** Messages of others, not deleted, above `afterSeq` that mention the user (protocol §16). */
    countMentionsAbove(afterSeq) {
      let n = 0;
      for (const id of this.order) {
        const st = this.states.get(id);
        if (st === void 0 || st.entry.seq <= afterSeq) continue;
        if (!st.deleted && st.entry.senderId !== this.me && mentionsUser(st.entry, this.me)) n++;
      }
      return n;
    }
    insertOrdered(id, seq) {
      let i = 0;
      while (i < this.order.length) {
        const other = this.states.get(this.order[i] ?? "");
        if (other !== void 0 && other.entry.seq > seq) break;
        i++;
      }
      this.order.splice(i, 0, id);
    }
    newState(e, asOf, exactIfNoReactions) {
      const reactions = (e.reactions ?? []).map((r) => {
        const holders = /* @__PURE__ */ new Map();
        holders.set(this.me, r.me);
        return { emoji: r.emoji, count: r.count, holders };
      });
      const expired2 = e.expired === true;
      const deleted = e.deleted === true || expired2;
      return {
        entry: e,
        body: deleted ? "" : e.body,
        editedAt: e.editedAt,
        deleted,
        expired: expired2,
        reactions,
        preview: e.replyTo === void 0 ? void 0 : e.replyPreview ?? void 0,
        thread: e.thread,
        attachments: deleted ? parseMessageAttachments(void 0) : parseMessageAttachments(e.attachments),
        asOfSeq: e.reactions === void 0 && e.editedAt === void 0 && !deleted && e.thread === void 0 ? e.seq : asOf,
        exact: e.reactions === void 0 && exactIfNoReactions,
        view: void 0
      };
    }
    fold(st, m) {
      st.view = void 0;
      this.cache = void 0;
      switch (entryKind(m)) {
        case "edit":
          if (!st.deleted) {
            st.body = m.body;
            st.editedAt = m.ts;
          }
          break;
        case "delete": {
          const was = st.deleted;
          st.deleted = true;
          st.body = "";
          st.editedAt = void 0;
          st.reactions = [];
          st.attachments = parseMessageAttachments(void 0);
          const rootId = st.entry.threadId;
          const root = rootId === void 0 ? void 0 : this.states.get(rootId);
          if (!was && root?.thread !== void 0 && m.seq > root.asOfSeq) {
            root.thread = { ...root.thread, replyCount: Math.max(0, root.thread.replyCount - 1) };
            root.view = void 0;
          }
          break;
        }
        case "reaction": {
          if (st.deleted || m.emoji === void 0) break;
          foldReaction(st, m.senderId, m.emoji, m.op ?? "add", m.noop === true);
          break;
        }
        case "message":
          break;
      }
    }
    /** An edit or delete of `targetId`: the previews of the held messages quoting it follow. */
    foldPreviews(targetId, m, kind) {
      const ids = this.quoting.get(targetId);
      if (ids === void 0) return;
      for (const id of ids) {
        const st = this.states.get(id);
        if (st === void 0 || m.seq <= st.asOfSeq) continue;
        const senderId = st.preview?.senderId ?? this.states.get(targetId)?.entry.senderId ?? "";
        if (kind === "delete") st.preview = { senderId, body: "", deleted: true };
        else if (st.preview?.deleted !== true) st.preview = { senderId, body: cutUtf8(m.body) };
        st.view = void 0;
        this.cache = void 0;
      }
    }
    /**
     * A reply newer than the root's state: the root's summary names it as the last reply and its
     * sender as a participant, and counts it when `counts` (a reply read already deleted has its
     * delete in its state, which will not be folded again: the server's `replyCount` leaves it out).
     */
    replyAdded(root, reply, counts) {
      const t = root.thread;
      const participants = t === void 0 ? [] : [...t.participants];
      if (participants.length < MAX_PARTICIPANTS && !participants.includes(reply.senderId)) participants.push(reply.senderId);
      root.thread = {
        replyCount: (t?.replyCount ?? 0) + (counts ? 1 : 0),
        lastReplyAt: Math.max(t?.lastReplyAt ?? 0, reply.ts),
        lastReplySeq: Math.max(t?.lastReplySeq ?? 0, reply.seq),
        participants
      };
      root.view = void 0;
      this.cache = void 0;
    }
    view(st) {
      const e = st.entry;
      return Object.freeze({
        messageId: e.messageId,
        channelId: e.channelId,
        senderId: e.senderId,
        seq: e.seq,
        ts: e.ts,
        ...e.clientMsgId !== void 0 ? { clientMsgId: e.clientMsgId } : {},
        byAdmin: e.byAdmin === true,
        body: st.body,
        editedAt: st.editedAt,
        deleted: st.deleted,
        expired: st.expired,
        reactions: Object.freeze(
          st.reactions.filter((r) => r.count > 0).map((r) => Object.freeze({ emoji: r.emoji, count: r.count, me: r.holders.get(this.me) === true }))
        ),
        ...e.replyTo !== void 0 ? { replyTo: e.replyTo } : {},
        ...st.preview !== void 0 ? { replyPreview: Object.freeze({ ...st.preview }) } : {},
        ...e.threadId !== void 0 ? { threadId: e.threadId } : {},
        ...st.thread !== void 0 ? { thread: Object.freeze({ ...st.thread, participants: Object.freeze([...st.thread.participants]) }) } : {},
        // a deleted message mentions no one any more (its mentions go with its text)
        mentions: Object.freeze(st.deleted || !Array.isArray(e.mentions) ? [] : e.mentions.filter((id) => typeof id === "string")),
        mentionAll: !st.deleted && e.mentionAll === true,
        mentionsMe: !st.deleted && mentionsUser(e, this.me),
        attachments: st.attachments
      });
    }
  };
  function foldReaction(st, userId, emoji, op, noop) {
    let r = st.reactions.find((x) => x.emoji === emoji);
    if (noop) {
      r?.holders.set(userId, op === "add");
      return;
    }
    if (r === void 0) {
      if (op === "remove") return;
      r = { emoji, count: 0, holders: /* @__PURE__ */ new Map() };
      st.reactions.push(r);
    }
    const known = r.holders.get(userId);
    const holds = known ?? (st.exact ? false : op === "remove" && r.count > 0);
    if (op === "add" && !holds) r.count++;
    if (op === "remove" && holds) r.count = Math.max(0, r.count - 1);
    r.holders.set(userId, op === "add");
    if (r.count === 0) st.reactions.splice(st.reactions.indexOf(r), 1);
  }

  // ../clients/typescript/src/log.ts
  var ChannelLog = class {
    /** The channel. */
    channelId;
    /** The current user (for reaction `me`). */
    me;
    lowSeq = 1;
    highSeq = 0;
    started = false;
    ids = /* @__PURE__ */ new Set();
    held = /* @__PURE__ */ new Map();
    msgs;
    known = 0;
    /** Creates an empty, not yet started log. */
    constructor(channelId, me) {
      this.channelId = channelId;
      this.me = me;
      this.msgs = new MessageStates(me, true);
    }
    /** True once the window has been placed (first page read). */
    get isStarted() {
      return this.started;
    }
    /** Lowest seq of the window (window is empty when low > high). */
    get low() {
      return this.lowSeq;
    }
    /** Highest contiguous seq held. */
    get high() {
      return this.highSeq;
    }
    /** Highest seq known to exist (HELLO lastSeq, live entries, ACKs). */
    get knownLastSeq() {
      return Math.max(this.known, this.highSeq);
    }
    /** True while entries older than the window exist. */
    get hasOlder() {
      return this.started && this.lowSeq > 1;
    }
    /** Records that entries up to `seq` exist. */
    noteLastSeq(seq) {
      if (seq > this.known) this.known = seq;
    }
    /** Places an empty window just above `seq` (entries seq+1... come next). Only before the log started. */
    start(afterSeq) {
      if (this.started) return;
      this.started = true;
      this.lowSeq = afterSeq + 1;
      this.highSeq = afterSeq;
    }
    /** True when the entry is already part of the log. */
    has(messageId) {
      return this.ids.has(messageId);
    }
    /**
     * Adds entries at or above the window (live `MSG_RECV`, forward `SYNC_BATCH`).
     * `fromRead` marks entries of a read, whose message state is as of the read: as of
     * `readLastSeq` (the `SYNC_BATCH`'s `lastSeq`) when given, else of the highest seq known.
     */
    ingest(entries, fromRead, readLastSeq) {
      const appended = [];
      let batchMax = 0;
      for (const e of entries) {
        if (e.seq > batchMax) batchMax = e.seq;
        this.noteLastSeq(e.seq);
      }
      if (readLastSeq !== void 0) this.noteLastSeq(readLastSeq);
      const asOf = fromRead ? Math.max(readLastSeq ?? this.knownLastSeq, batchMax) : 0;
      for (const e of entries) {
        if (!this.started) {
          this.held.set(e.seq, e);
          continue;
        }
        if (this.ids.has(e.messageId) || e.seq <= this.highSeq) {
          if (fromRead) this.msgs.expire(e);
          continue;
        }
        if (e.seq === this.highSeq + 1) {
          this.append(e, fromRead ? Math.max(asOf, e.seq) : e.seq);
          appended.push(e);
          this.drain(appended);
        } else {
          if (!this.held.has(e.seq)) this.held.set(e.seq, e);
          if (fromRead) this.readAsOf.set(e.seq, asOf);
        }
      }
      if (this.started) this.drain(appended);
      return { appended, gapAfter: this.started && this.knownLastSeq > this.highSeq ? this.highSeq : void 0 };
    }
    readAsOf = /* @__PURE__ */ new Map();
    drain(appended) {
      for (const seq of [...this.held.keys()]) if (seq <= this.highSeq) this.held.delete(seq);
      for (; ; ) {
        const next = this.held.get(this.highSeq + 1);
        if (next === void 0) return;
        this.held.delete(next.seq);
        const asOf = this.readAsOf.get(next.seq);
        this.readAsOf.delete(next.seq);
        if (this.ids.has(next.messageId)) {
          this.highSeq = next.seq;
          this.lastAppendedId = next.messageId;
          continue;
        }
        this.append(next, asOf ?? next.seq);
        appended.push(next);
      }
    }
    /**
     * Adds an older page (entries below the window, from a backward read), in seq order.
     * Only entries that are contiguous with the window's bottom are taken; returns them.
     * If the log had not started, the page places the window.
     */
    prepend(entries, readLastSeq) {
      const sorted = [...entries].sort((a, b) => a.seq - b.seq);
      for (const e of sorted) this.noteLastSeq(e.seq);
      if (readLastSeq !== void 0) this.noteLastSeq(readLastSeq);
      const pageTop = sorted[sorted.length - 1]?.seq ?? 0;
      const asOf = Math.max(readLastSeq ?? this.knownLastSeq, pageTop);
      if (!this.started) {
        const first = sorted[0];
        if (first === void 0) {
          this.start(this.knownLastSeq);
          return [];
        }
        this.start(first.seq - 1);
        const r = this.ingest(sorted, true, readLastSeq);
        return r.appended;
      }
      const run = [];
      let expect = this.lowSeq - 1;
      for (let i = sorted.length - 1; i >= 0; i--) {
        const e = sorted[i];
        if (e === void 0 || e.seq > expect) continue;
        if (e.seq < expect) break;
        run.unshift(e);
        expect--;
      }
      const added = [];
      for (const e of run) {
        this.lowSeq = Math.min(this.lowSeq, e.seq);
        if (this.ids.has(e.messageId)) {
          this.msgs.expire(e);
          continue;
        }
        this.ids.add(e.messageId);
        added.push(e);
        if (entryKind(e) === "message") this.msgs.addMessage(e, asOf, true, false);
        else this.msgs.modify(e);
      }
      const top = run[run.length - 1];
      if (top !== void 0 && top.seq === this.highSeq && this.lastAppendedId === void 0) {
        this.lastAppendedId = top.messageId;
      }
      return added;
    }
    append(e, asOf) {
      this.highSeq = e.seq;
      this.lastAppendedId = e.messageId;
      this.ids.add(e.messageId);
      if (entryKind(e) === "message") this.msgs.addMessage(e, asOf, e.reactions === void 0, true);
      else this.msgs.modify(e);
    }
    /** The messages of the window, in seq order, folded. The same array until something changes. */
    messages() {
      return this.msgs.messages();
    }
    /** The folded state of one message, if held. */
    message(messageId) {
      return this.msgs.message(messageId);
    }
    /**
     * Entries of a read of the window again: the held messages it shows expired (§19)
     * become so (see {@link MessageStates.expire}). Returns how many changed.
     */
    reread(entries) {
      let n = 0;
      for (const e of entries) if (entryKind(e) === "message" && this.ids.has(e.messageId) && this.msgs.expire(e)) n++;
      return n;
    }
    /** Replaces a held message's attachments with a read's (see {@link MessageStates.setAttachments}). */
    setAttachments(messageId, attachments) {
      return this.msgs.setAttachments(messageId, attachments);
    }
    /** Counts held `message` entries above `afterSeq` that are not deleted and not sent by the user. */
    countUnreadAbove(afterSeq) {
      return this.msgs.countUnreadAbove(afterSeq);
    }
    /** Messages of others held above `afterSeq` that mention the user (protocol §16), not deleted. */
    countMentionsAbove(afterSeq) {
      return this.msgs.countMentionsAbove(afterSeq);
    }
    /** The entry id at the highest contiguous seq (undefined when the window is empty). */
    highEntryId() {
      return this.lastAppendedId;
    }
    lastAppendedId;
  };

  // ../clients/typescript/src/moderation-state.ts
  var MAX_TIMER_MS = 2147483647;
  var NOTHING = Object.freeze({ postingRole: void 0, slowModeMs: void 0, retentionSecs: void 0, mutedUntil: void 0, nextSendAt: void 0 });
  var ModerationState = class {
    byId = /* @__PURE__ */ new Map();
    now;
    userId;
    changed;
    closed = false;
    /** `now` is the client's clock, `userId` the user's id. */
    constructor(now, userId, changed) {
      this.now = now;
      this.userId = userId;
      this.changed = changed;
    }
    /** The channel's moderation as the snapshot shows it (the same object until something changes). */
    snapshot(channelId) {
      const k = this.byId.get(channelId);
      if (k === void 0) return NOTHING;
      const now = this.now();
      k.snapshot ??= Object.freeze({
        postingRole: k.postingRole,
        slowModeMs: k.slowModeMs,
        retentionSecs: k.retentionSecs,
        mutedUntil: k.mutedUntil !== void 0 && k.mutedUntil > now ? k.mutedUntil : void 0,
        nextSendAt: k.nextSendAt !== void 0 && k.nextSendAt > now ? k.nextSendAt : void 0
      });
      return k.snapshot;
    }
    /** A `MEMBER` frame: the user's own `mute` sets (or, `null`, ends) its mute. */
    onMember(f) {
      if (f.op !== "mute" || f.userId !== this.userId() || f.mutedUntil === void 0) return;
      this.update(f.channelId, (k) => {
        k.mutedUntil = f.mutedUntil ?? void 0;
        k.muteFrameSeq = Math.max(k.muteFrameSeq, f.afterSeq);
      });
    }
    /**
     * A members read at `atSeq` showed the user (its `mutedUntil`, or none: not muted); a
     * read that does not show the last mute frame folded (its `afterSeq` not below `atSeq`,
     * as for the member lists) is older than it and changes nothing.
     */
    onMemberRead(channelId, mutedUntil, atSeq) {
      const k = this.byId.get(channelId);
      if (k !== void 0 && !(k.muteFrameSeq < atSeq)) return;
      this.update(channelId, (known) => {
        known.mutedUntil = mutedUntil;
      });
    }
    /** A refusal of one of the user's frames in `channelId`: what its `reason` tells. */
    onRefusal(channelId, err) {
      const now = this.now();
      switch (err.reason) {
        case "muted":
          this.update(channelId, (k) => {
            if (err.retryAfterMs !== void 0) k.mutedUntil = now + err.retryAfterMs;
          });
          break;
        case "read_only":
          this.update(channelId, (k) => {
            k.postingRole = "moderator";
          });
          break;
        case "slow_mode":
          this.update(channelId, (k) => {
            if (err.retryAfterMs !== void 0) k.nextSendAt = now + err.retryAfterMs;
          });
          break;
        default:
          break;
      }
    }
    /**
     * The channel's rules as the server states them (a `HELLO` or `CHANNEL_ADDED` entry, a
     * `CHANNEL_UPDATED` frame, a `GET /v1/me/channels` entry); values of the wrong type (an
     * older server's absent ones) are left as known. `retentionSecs` (§19) is absent when
     * the server's retention applies: a statement that carries rules sets it, absent or not.
     */
    stated(channelId, postingRole, slowModeMs, retentionSecs) {
      const role = postingRole === "member" || postingRole === "moderator" ? postingRole : void 0;
      const slow = typeof slowModeMs === "number" && Number.isFinite(slowModeMs) && slowModeMs >= 0 ? slowModeMs : void 0;
      if (role === void 0 && slow === void 0) return;
      const retention = typeof retentionSecs === "number" && Number.isInteger(retentionSecs) && retentionSecs >= 0 ? retentionSecs : void 0;
      this.update(channelId, (k) => {
        k.retentionSecs = retention;
        if (role !== void 0) k.postingRole = role;
        if (slow !== void 0) {
          k.slowModeMs = slow;
          if (slow === 0) k.nextSendAt = void 0;
        }
      });
    }
    /** The answer of the user's own settings change. */
    settings(rules) {
      this.update(rules.channelId, (k) => {
        k.postingRole = rules.postingRole;
        k.slowModeMs = rules.slowModeMs;
        k.retentionSecs = rules.retentionSecs;
        if (rules.slowModeMs === 0) k.nextSendAt = void 0;
      });
    }
    /** The client closed: no more timers. */
    close() {
      this.closed = true;
      for (const k of this.byId.values()) clearTimeout(k.timer);
    }
    update(channelId, fn) {
      let k = this.byId.get(channelId);
      if (k === void 0) {
        k = { postingRole: void 0, slowModeMs: void 0, retentionSecs: void 0, mutedUntil: void 0, nextSendAt: void 0, muteFrameSeq: -1, timer: void 0, snapshot: void 0 };
        this.byId.set(channelId, k);
      }
      fn(k);
      this.refresh(channelId, k);
    }
    /** The snapshot is made again; a timer waits for the earliest end still ahead. */
    refresh(channelId, k) {
      const before = k.snapshot;
      k.snapshot = void 0;
      clearTimeout(k.timer);
      k.timer = void 0;
      const now = this.now();
      const ends = [k.mutedUntil, k.nextSendAt].filter((t) => t !== void 0 && t > now);
      if (ends.length > 0 && !this.closed) {
        const wait = Math.min(Math.min(...ends) - now, MAX_TIMER_MS);
        k.timer = setTimeout(() => {
          k.timer = void 0;
          this.refresh(channelId, k);
        }, wait);
      }
      const after = this.snapshot(channelId);
      if (before === void 0 || !sameModeration(before, after)) this.changed(channelId);
      else k.snapshot = before;
    }
  };
  function sameModeration(a, b) {
    return a.postingRole === b.postingRole && a.slowModeMs === b.slowModeMs && a.retentionSecs === b.retentionSecs && a.mutedUntil === b.mutedUntil && a.nextSendAt === b.nextSendAt;
  }

  // ../clients/typescript/src/store.ts
  var LazyStore = class {
    listeners = /* @__PURE__ */ new Set();
    value;
    build;
    scheduled = false;
    onInvalidate;
    /** `onInvalidate` runs on every `invalidate()` (a store derived from this one goes stale too). */
    constructor(build, onInvalidate) {
      this.build = build;
      this.onInvalidate = onInvalidate;
    }
    subscribe = (listener) => {
      this.listeners.add(listener);
      return () => {
        this.listeners.delete(listener);
      };
    };
    getSnapshot = () => {
      this.value ??= this.build();
      return this.value;
    };
    /** Marks the snapshot stale and notifies listeners (once per microtask). */
    invalidate() {
      this.value = void 0;
      this.onInvalidate?.();
      if (this.scheduled) return;
      this.scheduled = true;
      queueMicrotask(() => {
        this.scheduled = false;
        for (const l of [...this.listeners]) l();
      });
    }
  };
  var Emitter = class {
    handlers = /* @__PURE__ */ new Map();
    /** Adds a handler; returns the function that removes it. */
    on(event, handler) {
      let set = this.handlers.get(event);
      if (set === void 0) {
        set = /* @__PURE__ */ new Set();
        this.handlers.set(event, set);
      }
      set.add(handler);
      return () => {
        set.delete(handler);
      };
    }
    /** @internal Calls every handler of `event`. */
    emit(event, ...args) {
      const set = this.handlers.get(event);
      if (set === void 0) return;
      for (const h2 of [...set]) {
        try {
          h2(...args);
        } catch (e) {
          queueMicrotask(() => {
            throw e;
          });
        }
      }
    }
  };

  // ../clients/typescript/src/typing.ts
  var TypingTracker = class {
    typers = /* @__PURE__ */ new Map();
    cache = [];
    ttlMs;
    /** @param ttlMs - lifetime of a `start` without `expiresAt` (default 6000 ms, the server's default) */
    constructor(ttlMs = 6e3) {
      this.ttlMs = ttlMs;
    }
    /** Applies a server TYPING frame; returns true when the list changed. */
    apply(frame, now) {
      if (frame.state === "stop") return this.remove(frame.userId);
      const until2 = frame.expiresAt ?? now + this.ttlMs;
      if (until2 <= now) return this.remove(frame.userId);
      const had = this.typers.has(frame.userId);
      this.typers.set(frame.userId, until2);
      if (!had) this.cache = void 0;
      return !had;
    }
    /** Ends a user's indicator (a stop, or a message from them); returns true when it changed. */
    remove(userId) {
      const had = this.typers.delete(userId);
      if (had) this.cache = void 0;
      return had;
    }
    /** Drops expired indicators; returns true when the list changed. */
    expire(now) {
      let changed = false;
      for (const [u, until2] of this.typers) {
        if (until2 <= now) {
          this.typers.delete(u);
          changed = true;
        }
      }
      if (changed) this.cache = void 0;
      return changed;
    }
    /** The earliest expiry, for scheduling a timer. */
    nextExpiry() {
      let min;
      for (const until2 of this.typers.values()) if (min === void 0 || until2 < min) min = until2;
      return min;
    }
    /** Users typing now, sorted; the same array until it changes. */
    list() {
      this.cache ??= Object.freeze([...this.typers.keys()].sort());
      return this.cache;
    }
  };
  var TypingThrottle = class {
    lastStart;
    throttleMs;
    /** @param throttleMs - minimum time between two `start` frames (default 2000 ms) */
    constructor(throttleMs = 2e3) {
      this.throttleMs = throttleMs;
    }
    /** The user typed: returns true when a `start` should be sent now. */
    onInput(now) {
      if (this.lastStart !== void 0 && now - this.lastStart < this.throttleMs) return false;
      this.lastStart = now;
      return true;
    }
    /** The user stopped typing: returns true when a `stop` should be sent. */
    onStop() {
      const active = this.lastStart !== void 0;
      this.lastStart = void 0;
      return active;
    }
    /** A message was sent: the server stops the indicator itself, so no `stop` is needed. */
    onSent() {
      this.lastStart = void 0;
    }
    /**
     * A message of the user was stored (its ACK arrived): the server ended the typing with
     * it, and a `start` sent since the send may have reached it before the message was
     * stored, so the stop ended it too. Returns true when the user has typed since the send:
     * a `start` should be sent again now (the server's throttle ended with the message).
     */
    onStored(now) {
      if (this.lastStart === void 0) return false;
      this.lastStart = now;
      return true;
    }
  };

  // ../clients/typescript/src/unread.ts
  function computeUnread(i) {
    if (i.logStarted && i.logLow <= i.readSeq + 1) {
      return i.countHeldAbove(i.readSeq) + Math.max(0, i.knownLastSeq - i.logHigh);
    }
    let base;
    if (i.readSeq >= i.helloLastSeq) base = 0;
    else if (i.helloUnread !== void 0 && i.readSeq === i.helloReadSeq) base = i.helloUnread;
    else base = i.helloLastSeq - i.readSeq;
    const since = i.logStarted ? i.countHeldAbove(Math.max(i.helloLastSeq, i.readSeq)) : i.liveUnread;
    return base + since;
  }

  // ../clients/typescript/src/channels.ts
  var Channels = class {
    /** The channel list's store. */
    list;
    /** The channels' posting rules and the user's mutes (`ChannelSnapshot.moderation`). */
    moderation;
    c;
    byId = /* @__PURE__ */ new Map();
    /** The user's outbox records (this tab's and other tabs'), for the channels' `outgoing`. */
    outbox;
    listValue = Object.freeze([]);
    /** ids emitted by `channelAdded` and not removed since */
    listed = /* @__PURE__ */ new Set();
    /** counts channel listings and removals, to order them against a refresh in flight */
    epochValue = 0;
    /** `outbox` lists the user's outbox records in the order they were made. */
    constructor(c, outbox) {
      this.c = c;
      this.outbox = outbox;
      this.list = new LazyStore(() => this.buildList());
      this.moderation = new ModerationState(c.now, () => c.userId, (id) => this.byId.get(id)?.store.invalidate());
    }
    /** The count of listings and removals so far. */
    get epoch() {
      return this.epochValue;
    }
    /** Every channel the client knows of, listed or not, removed or not. */
    all() {
      return this.byId.values();
    }
    /** A channel, if known. */
    get(channelId) {
      return this.byId.get(channelId);
    }
    /** A channel, created (not opened, not listed) when first asked for. */
    ctx(channelId) {
      let ch = this.byId.get(channelId);
      if (ch !== void 0) return ch;
      const created = {
        id: channelId,
        log: new ChannelLog(channelId, this.c.userId),
        opened: false,
        removed: false,
        removedReason: void 0,
        hello: void 0,
        helloLastSeq: 0,
        liveUnread: /* @__PURE__ */ new Map(),
        liveMentions: /* @__PURE__ */ new Map(),
        listedEpoch: 0,
        removedEpoch: 0,
        readSeq: 0,
        deliveredSeq: 0,
        deliveredSent: 0,
        receipts: /* @__PURE__ */ new Map(),
        typing: new TypingTracker(),
        typingTimer: void 0,
        throttle: new TypingThrottle(this.c.opts.typingThrottleMs ?? 2e3),
        sent: /* @__PURE__ */ new Map(),
        store: new LazyStore(
          () => this.buildSnapshot(created),
          () => {
            this.list.invalidate();
            for (const t of created.threads.values()) t.store.invalidate();
          }
        ),
        olderWaiters: [],
        loadingOlder: false,
        threads: /* @__PURE__ */ new Map()
      };
      ch = created;
      this.byId.set(channelId, ch);
      return ch;
    }
    /** The listed channels that are not removed (`ChatClient.channelIds`). */
    ids() {
      return [...this.byId.values()].filter((c) => !c.removed && c.hello !== void 0).map((c) => c.id);
    }
    /** Something shown in the channel changed (its outbox records): a new snapshot. */
    changed(channelId) {
      this.byId.get(channelId)?.store.invalidate();
    }
    /**
     * Takes a HELLO's channels; those it no longer lists are removed (`channelRemoved`).
     * Returns the ids it lists, for {@link Channels.markListed} once the state is `open`.
     */
    applyHello(h2) {
      const listed = /* @__PURE__ */ new Set();
      for (const c of h2.channels) {
        listed.add(c.channelId);
        const ch = this.ctx(c.channelId);
        ch.removed = false;
        this.takeChannelState(ch, c);
      }
      for (const ch of this.byId.values()) {
        if (!listed.has(ch.id) && ch.hello !== void 0 && !ch.removed) this.markRemoved(ch);
      }
      return listed;
    }
    /** Takes a channel's entry of HELLO (or of `GET /v1/me/channels`): its seqs, watermarks, unread base. */
    takeChannelState(ch, c) {
      ch.hello = c;
      ch.helloLastSeq = c.lastSeq;
      for (const [id, seq] of ch.liveUnread) if (seq <= c.lastSeq) ch.liveUnread.delete(id);
      for (const [id, seq] of ch.liveMentions) if (seq <= c.lastSeq) ch.liveMentions.delete(id);
      ch.log.noteLastSeq(c.lastSeq);
      ch.readSeq = Math.max(ch.readSeq, c.readSeq);
      ch.deliveredSeq = Math.max(ch.deliveredSeq, c.deliveredSeq, ch.readSeq);
      ch.deliveredSent = Math.max(ch.deliveredSent, ch.deliveredSeq);
      ch.store.invalidate();
    }
    /**
     * A live frame shows the user is a member now (added while connected, or again): a
     * `MSG_RECV`, or the ACK of a new (not duplicate) entry. A duplicate ACK proves nothing:
     * the server gives it also after the sender left the channel.
     */
    memberNow(ch) {
      if (ch.hello === void 0) ch.hello = { channelId: ch.id, lastSeq: 0, deliveredSeq: 0, readSeq: 0 };
      if (ch.removed) {
        ch.removed = false;
        ch.removedReason = void 0;
        ch.store.invalidate();
      }
      this.markListed(ch);
    }
    /**
     * `CHANNEL_ADDED`: the user is in the channel now, as its entry says (taken as a `HELLO`
     * channel's); listed (`channelAdded`) when it was not.
     */
    added(ch, entry) {
      if (ch.removed) {
        ch.removed = false;
        ch.removedReason = void 0;
      }
      this.takeChannelState(ch, entry);
      this.markListed(ch);
    }
    /**
     * A `MEMBER` frame of a listed channel: the user's own role (`join`, `role`), and the
     * member count for others' `join`, `leave` and `ban` (the user's own are in its
     * `CHANNEL_ADDED`, and its channel is removed after its own leave).
     */
    applyMember(f) {
      const ch = this.byId.get(f.channelId);
      const hello = ch?.hello;
      if (ch === void 0 || hello === void 0 || ch.removed) return;
      let next = hello;
      if (f.userId === this.c.userId) {
        if ((f.op === "join" || f.op === "role") && f.role !== void 0 && f.role !== hello.role) next = { ...hello, role: f.role };
      } else if (hello.memberCount !== void 0) {
        if (f.op === "join") next = { ...hello, memberCount: hello.memberCount + 1 };
        else if (f.op === "leave" || f.op === "ban") next = { ...hello, memberCount: Math.max(1, hello.memberCount - 1) };
      }
      if (next === hello) return;
      ch.hello = next;
      ch.store.invalidate();
    }
    /** The channel is (again) in the list: `channelAdded` when it was not. */
    markListed(ch) {
      ch.listedEpoch = ++this.epochValue;
      if (ch.removed || ch.hello === void 0 || this.listed.has(ch.id)) return;
      this.listed.add(ch.id);
      this.list.invalidate();
      this.c.events.emit("channelAdded", ch.id);
    }
    /** The channel was deleted or the user left it (`reason`, when known): `channelRemoved` once. */
    markRemoved(ch, reason) {
      ch.removedEpoch = ++this.epochValue;
      if (ch.removed) return;
      ch.removed = true;
      ch.removedReason = reason;
      this.listed.delete(ch.id);
      ch.store.invalidate();
      this.c.events.emit("channelRemoved", ch.id, reason);
    }
    buildSnapshot(ch) {
      const messages = ch.log.messages();
      const mine = /* @__PURE__ */ new Set();
      for (const m of messages) if (m.senderId === this.c.userId && m.clientMsgId !== void 0) mine.add(m.clientMsgId);
      const outgoing = [];
      for (const [k, s] of ch.sent) {
        if (mine.has(k) || s.seq !== void 0 && ch.log.isStarted && s.seq < ch.log.low) ch.sent.delete(k);
      }
      const seen = /* @__PURE__ */ new Set();
      for (const r of this.outbox()) {
        if (r.op.type !== "MSG_SEND" || r.op.channelId !== ch.id || mine.has(r.clientMsgId)) continue;
        seen.add(r.clientMsgId);
        const sent = ch.sent.get(r.clientMsgId);
        outgoing.push(
          Object.freeze({
            clientMsgId: r.clientMsgId,
            channelId: ch.id,
            body: r.op.body,
            state: sent !== void 0 ? "sent" : r.state,
            seq: sent?.seq,
            messageId: sent?.messageId,
            error: r.error,
            createdAt: r.createdAt,
            ...r.op.replyTo !== void 0 ? { replyTo: r.op.replyTo } : {},
            ...r.op.threadId !== void 0 ? { threadId: r.op.threadId } : {},
            ...mentionFields(r.op),
            ...outgoingAttachments(r.op)
          })
        );
      }
      for (const s of ch.sent.values()) if (!seen.has(s.clientMsgId)) outgoing.push(s);
      outgoing.sort((a, b) => a.createdAt - b.createdAt);
      return Object.freeze({
        channelId: ch.id,
        status: ch.removed ? "removed" : ch.log.isStarted ? "ready" : "loading",
        removedReason: ch.removed ? ch.removedReason : void 0,
        messages,
        outgoing: Object.freeze(outgoing),
        hasOlder: ch.log.hasOlder,
        unread: this.unreadOf(ch),
        unreadMentions: this.unreadMentionsOf(ch),
        lastSeq: ch.log.knownLastSeq,
        deliveredSeq: ch.deliveredSeq,
        readSeq: ch.readSeq,
        receipts: Object.freeze(Object.fromEntries(ch.receipts)),
        typing: ch.typing.list(),
        moderation: this.moderation.snapshot(ch.id)
      });
    }
    unreadOf(ch) {
      return computeUnread({
        readSeq: ch.readSeq,
        helloReadSeq: ch.hello?.readSeq ?? 0,
        helloLastSeq: ch.helloLastSeq,
        helloUnread: ch.hello?.unread,
        logStarted: ch.log.isStarted,
        logLow: ch.log.low,
        logHigh: ch.log.high,
        knownLastSeq: ch.log.knownLastSeq,
        countHeldAbove: (s) => ch.log.countUnreadAbove(s),
        liveUnread: countAbove(ch.liveUnread, ch.readSeq)
      });
    }
    unreadMentionsOf(ch) {
      return computeUnreadMentions({
        readSeq: ch.readSeq,
        helloReadSeq: ch.hello?.readSeq ?? 0,
        helloLastSeq: ch.helloLastSeq,
        helloUnreadMentions: typeof ch.hello?.unreadMentions === "number" ? ch.hello.unreadMentions : void 0,
        logStarted: ch.log.isStarted,
        logLow: ch.log.low,
        countHeldAbove: (s) => ch.log.countMentionsAbove(s),
        liveMentions: countAbove(ch.liveMentions, ch.readSeq)
      });
    }
    /**
     * `CHANNEL_SETTINGS`, or the answer of the user's own settings call: the channel's
     * `notify` and `snoozeUntil` now (a channel not listed is left alone: its `HELLO` or
     * `CHANNEL_ADDED` entry will carry them).
     */
    applySettings(channelId, settings) {
      const ch = this.byId.get(channelId);
      const hello = ch?.hello;
      if (ch === void 0 || hello === void 0) return;
      if (hello.notify === settings.notify && hello.snoozeUntil === settings.snoozeUntil) return;
      ch.hello = { ...hello, notify: settings.notify, snoozeUntil: settings.snoozeUntil };
      ch.store.invalidate();
    }
    /** The channel list's snapshot: the previous array (and summaries) when nothing changed. */
    buildList() {
      const prev = new Map(this.listValue.map((c) => [c.channelId, c]));
      const next = [];
      let changed = false;
      const chans = [...this.byId.values()].filter((c) => !c.removed && c.hello !== void 0);
      chans.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      for (const ch of chans) {
        const s = {
          channelId: ch.id,
          name: ch.hello?.name,
          metadata: ch.hello?.metadata,
          lastSeq: ch.log.knownLastSeq,
          unread: this.unreadOf(ch),
          readSeq: ch.readSeq,
          opened: ch.opened,
          // the contract's defaults for what a server before version 1.2 does not send
          kind: ch.hello?.kind ?? "group",
          visibility: ch.hello?.visibility ?? "private",
          role: ch.hello?.role ?? "member",
          memberCount: ch.hello?.memberCount,
          unreadMentions: this.unreadMentionsOf(ch),
          ...settingsOf(ch.hello)
        };
        const old = prev.get(ch.id);
        if (old !== void 0 && old.name === s.name && old.metadata === s.metadata && old.lastSeq === s.lastSeq && old.unread === s.unread && old.readSeq === s.readSeq && old.opened === s.opened && old.kind === s.kind && old.visibility === s.visibility && old.role === s.role && old.memberCount === s.memberCount && old.unreadMentions === s.unreadMentions && old.notify === s.notify && old.snoozeUntil === s.snoozeUntil) {
          next.push(old);
        } else {
          next.push(Object.freeze(s));
          changed = true;
        }
      }
      if (!changed && next.length === this.listValue.length && next.every((c, i) => c === this.listValue[i])) {
        return this.listValue;
      }
      this.listValue = Object.freeze(next);
      return this.listValue;
    }
  };
  function settingsOf(h2) {
    return {
      notify: typeof h2?.notify === "string" ? h2.notify : "all",
      snoozeUntil: typeof h2?.snoozeUntil === "number" ? h2.snoozeUntil : null
    };
  }
  function countAbove(seqs, seq) {
    let n = 0;
    for (const s of seqs.values()) if (s > seq) n++;
    return n;
  }

  // ../clients/typescript/src/features.ts
  var V11_TYPES = /* @__PURE__ */ new Set(["MSG_EDIT", "MSG_DELETE", "MSG_REACT", "TYPING", "PRESENCE_SUB"]);
  var Features = class {
    /** Types the server answered `unknown_type` to. */
    unsupported = /* @__PURE__ */ new Set();
    /** Types the server is known to understand. */
    supported = /* @__PURE__ */ new Set();
    unconfirmed = [];
    onUnsupported;
    /** `onUnsupported` runs when a type joins {@link Features.unsupported}. */
    constructor(onUnsupported) {
      this.onUnsupported = onUnsupported;
    }
    /** Frame number `no` was sent on the current connection: remember it if its support is unknown. */
    sent(frame, no) {
      if (!V11_TYPES.has(frame.type) || this.supported.has(frame.type)) return;
      const entry = { type: frame.type, frameNo: no };
      if ("clientMsgId" in frame) entry.clientMsgId = frame.clientMsgId;
      this.unconfirmed.push(entry);
    }
    /** A reply to frame `no` arrived: every earlier v1.1 frame was understood. */
    confirmUpTo(no) {
      if (this.unconfirmed.length === 0) return;
      this.unconfirmed = this.unconfirmed.filter((u) => {
        if (u.frameNo < no) {
          this.supported.add(u.type);
          return false;
        }
        return true;
      });
    }
    /** A frame of this type was answered in kind (a TYPING, a PRESENCE, an ACK): understood. */
    confirm(type) {
      this.supported.add(type);
    }
    /**
     * An `unknown_type` ERROR arrived: it answers the oldest unconfirmed frame, whose type
     * is then unsupported. Returns that frame, or undefined when none was waiting.
     */
    refuseOldest() {
      const u = this.unconfirmed.shift();
      if (u === void 0) return void 0;
      this.unsupported.add(u.type);
      this.onUnsupported();
      return u;
    }
    /** The connection dropped: what was sent on it will never be answered. */
    dropped() {
      this.unconfirmed = [];
    }
  };

  // ../clients/typescript/src/connection.ts
  function jwtSubject(token) {
    const part = token.split(".")[1];
    if (part === void 0) return void 0;
    try {
      const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
      const json = atob(b64 + "=".repeat((4 - b64.length % 4) % 4));
      const claims = JSON.parse(json);
      return typeof claims.sub === "string" ? claims.sub : void 0;
    } catch {
      return void 0;
    }
  }
  var Connection = class {
    /** The connection's store (state, session, unsupported features). */
    store;
    /** What the server is known to support. */
    features;
    c;
    hooks;
    stateValue = "idle";
    ws;
    /** Number of the latest socket; a socket's handlers act only while theirs is the latest. */
    connGen = 0;
    /** Number of the socket whose HELLO arrived; 0 while not open. */
    openConn = 0;
    sessionId;
    frameNo = 0;
    reconnectAttempt = 0;
    reconnectTimer;
    watchdog;
    onlineHandler;
    onlineSource;
    lastTokenValue;
    /** Nothing connects until {@link Connection.start}. */
    constructor(c, hooks) {
      this.c = c;
      this.hooks = hooks;
      this.features = new Features(() => {
        this.store.invalidate();
      });
      this.store = new LazyStore(
        () => Object.freeze({
          state: this.stateValue,
          userId: this.c.userId,
          sessionId: this.sessionId,
          unsupported: Object.freeze([...this.features.unsupported].sort())
        })
      );
    }
    /** Where the connection is. */
    get state() {
      return this.stateValue;
    }
    /** Number of the open connection (its HELLO arrived); 0 while not open. */
    get openGen() {
      return this.openConn;
    }
    /** The token of the latest connection attempt. */
    get lastToken() {
      return this.lastTokenValue;
    }
    /** Moves to state `s` and emits `state`; nothing moves a closed connection. */
    setState(s) {
      if (this.stateValue === s || this.stateValue === "closed") return;
      this.stateValue = s;
      this.store.invalidate();
      this.c.events.emit("state", s);
    }
    /** Resolves when a session is open (HELLO received); rejects on abort or close. */
    whenOpen(signal) {
      const state = this.stateValue;
      if (state === "open") return Promise.resolve();
      if (signal?.aborted === true) return Promise.reject(new ChatdError("aborted", "aborted"));
      if (state === "closed") return Promise.reject(new ChatdError("closed", "client closed"));
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          off();
          reject(new ChatdError("aborted", "aborted"));
        };
        const off = this.c.events.on("state", (s) => {
          if (s === "open") {
            off();
            signal?.removeEventListener("abort", onAbort);
            resolve();
          } else if (s === "closed") {
            off();
            signal?.removeEventListener("abort", onAbort);
            reject(new ChatdError("closed", "client closed"));
          }
        });
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    /** The token option's value: the string, or what its function returns now. */
    async getToken() {
      const t = this.c.opts.token;
      return typeof t === "string" ? t : await t();
    }
    /** Listens to the `online` event, starts the reply watchdog, and connects. */
    start() {
      const opts = this.c.opts;
      const source = opts.onlineEvents === void 0 ? globalOnlineSource() : opts.onlineEvents ?? void 0;
      if (source !== void 0) {
        this.onlineHandler = () => {
          if (this.stateValue !== "open" && this.stateValue !== "closed") this.connectNow();
        };
        this.onlineSource = source;
        source.addEventListener("online", this.onlineHandler);
      }
      this.watchdog = setInterval(() => {
        this.checkReplies();
      }, 1e3);
      this.connectNow();
    }
    /** A HELLO arrived on socket `gen`: that connection is the open one now. */
    opened(gen, sessionId) {
      this.openConn = gen;
      this.sessionId = sessionId;
      this.reconnectAttempt = 0;
    }
    /**
     * Sends a frame on the open connection. Returns its number on the connection, or 0 when
     * it was not sent (not open, or the socket refused it).
     */
    send(frame) {
      const ws = this.ws;
      if (ws === void 0 || this.openConn === 0 || ws.readyState !== 1) return 0;
      const no = ++this.frameNo;
      this.features.sent(frame, no);
      try {
        ws.send(JSON.stringify(frame));
      } catch {
        return 0;
      }
      return no;
    }
    /** Drops the current connection at once (as a network failure would); it reconnects. */
    reconnect() {
      if (this.stateValue === "closed") return;
      const ws = this.ws;
      this.drop();
      try {
        ws?.close(4e3, "reconnect");
      } catch {
      }
    }
    /** Closes for good: state `closed`, no more reconnects, the socket closed. */
    close() {
      this.setState("closed");
      clearTimeout(this.reconnectTimer);
      clearInterval(this.watchdog);
      if (this.onlineHandler !== void 0) this.onlineSource?.removeEventListener("online", this.onlineHandler);
      const ws = this.ws;
      this.ws = void 0;
      this.connGen++;
      if (ws !== void 0) ws.close(1e3, "client closed");
    }
    connectNow() {
      if (this.stateValue === "closed") return;
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = void 0;
      if (this.ws !== void 0) return;
      const gen = ++this.connGen;
      this.setState(this.reconnectAttempt === 0 && this.openConn === 0 ? "connecting" : "reconnecting");
      const opts = this.c.opts;
      void this.getToken().then(
        (token) => {
          if (gen !== this.connGen || this.stateValue === "closed") return;
          this.lastTokenValue = token;
          const Ctor = opts.WebSocket ?? globalThis.WebSocket;
          if (Ctor === void 0) throw new Error("no WebSocket: pass the WebSocket option (the ws package in Node)");
          const sep = opts.url.includes("?") ? "&" : "?";
          let ws;
          try {
            ws = new Ctor(`${opts.url}${sep}access_token=${encodeURIComponent(token)}`);
          } catch {
            this.scheduleReconnect();
            return;
          }
          this.ws = ws;
          ws.onmessage = (ev) => {
            if (gen !== this.connGen) return;
            const text = typeof ev.data === "string" ? ev.data : String(ev.data);
            this.hooks.frame(text, gen);
          };
          ws.onclose = () => {
            if (gen !== this.connGen) return;
            this.drop();
          };
          ws.onerror = () => {
          };
        },
        () => {
          if (gen === this.connGen) this.scheduleReconnect();
        }
      );
    }
    /** Forget the socket; every in-flight request will be resent after the next HELLO. */
    drop() {
      this.ws = void 0;
      this.connGen++;
      this.openConn = 0;
      this.sessionId = void 0;
      this.features.dropped();
      this.hooks.dropped();
      if (this.stateValue !== "closed") {
        this.setState("reconnecting");
        this.scheduleReconnect();
      }
    }
    scheduleReconnect() {
      if (this.stateValue === "closed" || this.reconnectTimer !== void 0) return;
      const delay = backoffDelay(this.reconnectAttempt++, {
        baseMs: 250,
        maxMs: 1e4,
        ...this.c.opts.reconnectBackoff
      });
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = void 0;
        this.connectNow();
      }, delay);
    }
    /** A send, SYNC or edit with no answer for `replyTimeoutMs`: the connection is taken to be dead. */
    checkReplies() {
      if (this.stateValue !== "open") return;
      if (this.hooks.stale(this.c.now(), this.c.opts.replyTimeoutMs ?? 15e3)) this.reconnect();
    }
  };
  function globalOnlineSource() {
    const g = globalThis;
    return typeof g.addEventListener === "function" && typeof g.removeEventListener === "function" ? g : void 0;
  }

  // ../clients/typescript/src/directory.ts
  var Directory = class {
    c;
    conn;
    channels;
    refresher;
    /** Requests with the connection's token; the channel list is brought up to date through `refresher`. */
    constructor(c, conn, channels, refresher) {
      this.c = c;
      this.conn = conn;
      this.channels = channels;
      this.refresher = refresher;
    }
    /** One page of public channels (see `ChatClient.directory`). */
    async page(options = {}) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      const q = new URLSearchParams();
      if (options.q !== void 0 && options.q !== "") q.set("q", options.q);
      if (options.after !== void 0) q.set("after", options.after);
      if (options.limit !== void 0) q.set("limit", String(options.limit));
      const query = q.toString() === "" ? "" : `?${q.toString()}`;
      const body = await requestJson(this.c.opts, this.conn, "GET", `/v1/directory${query}`, options.signal);
      return parseDirectoryPage(body);
    }
    /**
     * Joins a public channel, then reads the channel list (see `ChatClient.join`). When that
     * read fails, the channel is listed from what the join says (a public group, the user a
     * `member`) until the next read.
     */
    async join(channelId, options = {}) {
      await this.membership("PUT", channelId, options.signal);
      await this.refresher.listAfter(
        channelId,
        (ch) => ({
          channelId,
          lastSeq: ch.log.knownLastSeq,
          deliveredSeq: ch.deliveredSeq,
          readSeq: ch.readSeq,
          kind: "group",
          visibility: "public",
          role: "member"
        }),
        options.signal
      );
    }
    /**
     * Leaves a channel: the channel is removed from the list at once (`channelRemoved`,
     * reason `left`; see `ChatClient.leave`). The server's `CHANNEL_REMOVED` says the same.
     */
    async leave(channelId, options = {}) {
      await this.membership("DELETE", channelId, options.signal);
      if (this.conn.state === "closed") return;
      const ch = this.channels.get(channelId);
      if (ch !== void 0) this.channels.markRemoved(ch, "left");
    }
    /** `PUT` or `DELETE /v1/me/channels/{channelId}`: resolves on the 204. */
    async membership(method, channelId, signal) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      await requestJson(this.c.opts, this.conn, method, `/v1/me/channels/${encodeURIComponent(channelId)}`, signal);
    }
  };
  function parseDirectoryPage(body) {
    const bad = (what) => new ChatdError("internal", `GET /v1/directory: ${what}`);
    if (typeof body !== "object" || body === null) throw bad("not a JSON object");
    const b = body;
    if (!Array.isArray(b.channels)) throw bad("no channels list");
    if (typeof b.hasMore !== "boolean") throw bad("no hasMore");
    const channels = b.channels.map((x) => {
      const r = typeof x === "object" && x !== null ? x : {};
      const { channelId, memberCount, lastSeq } = r;
      const name = r.name ?? null;
      if (typeof channelId !== "string" || typeof memberCount !== "number" || typeof lastSeq !== "number" || name !== null && typeof name !== "string") {
        throw bad(`a channel of another shape: ${JSON.stringify(x)}`);
      }
      return { channelId, name, memberCount, lastSeq };
    });
    return { channels, hasMore: b.hasMore };
  }

  // ../clients/typescript/src/membership-frames.ts
  function num(v) {
    return typeof v === "number" && Number.isFinite(v) ? v : void 0;
  }
  function str(v) {
    return typeof v === "string" ? v : void 0;
  }
  function decodeMemberFrame(v) {
    const channelId = str(v.channelId);
    const userId = str(v.userId);
    const op = str(v.op);
    const afterSeq = num(v.afterSeq);
    const ts = num(v.ts) ?? 0;
    if (channelId === void 0 || userId === void 0 || op === void 0 || afterSeq === void 0) return void 0;
    const f = { type: "MEMBER", channelId, userId, op, afterSeq, ts };
    const role = str(v.role);
    if (role !== void 0) f.role = role;
    if (v.mutedUntil === null || num(v.mutedUntil) !== void 0) f.mutedUntil = v.mutedUntil;
    const actorId = str(v.actorId);
    if (actorId !== void 0) f.actorId = actorId;
    return f;
  }
  function decodeHelloChannel(v) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return void 0;
    const r = v;
    const channelId = str(r.channelId);
    const lastSeq = num(r.lastSeq);
    if (channelId === void 0 || lastSeq === void 0) return void 0;
    const out = {
      channelId,
      lastSeq,
      deliveredSeq: num(r.deliveredSeq) ?? 0,
      readSeq: num(r.readSeq) ?? 0
    };
    const unread = num(r.unread);
    if (unread !== void 0) out.unread = unread;
    const memberCount = num(r.memberCount);
    if (memberCount !== void 0) out.memberCount = memberCount;
    const kind = str(r.kind);
    if (kind !== void 0) out.kind = kind;
    const visibility = str(r.visibility);
    if (visibility !== void 0) out.visibility = visibility;
    const role = str(r.role);
    if (role !== void 0) out.role = role;
    const unreadMentions = num(r.unreadMentions);
    if (unreadMentions !== void 0) out.unreadMentions = unreadMentions;
    const notify = str(r.notify);
    if (notify !== void 0) out.notify = notify;
    const postingRole = str(r.postingRole);
    if (postingRole !== void 0) out.postingRole = postingRole;
    const slowModeMs = num(r.slowModeMs);
    if (slowModeMs !== void 0) out.slowModeMs = slowModeMs;
    const retentionSecs = num(r.retentionSecs);
    if (retentionSecs !== void 0) out.retentionSecs = retentionSecs;
    if (r.snoozeUntil === null) out.snoozeUntil = null;
    else if (num(r.snoozeUntil) !== void 0) out.snoozeUntil = num(r.snoozeUntil);
    if (r.name === null || typeof r.name === "string") out.name = r.name;
    if (r.metadata === null) out.metadata = null;
    else if (typeof r.metadata === "object" && !Array.isArray(r.metadata)) out.metadata = r.metadata;
    return out;
  }
  function decodeChannelAddedFrame(v) {
    const channel = decodeHelloChannel(v.channel);
    return channel === void 0 ? void 0 : { type: "CHANNEL_ADDED", channel };
  }
  function decodeChannelRemovedFrame(v) {
    const channelId = str(v.channelId);
    if (channelId === void 0) return void 0;
    const reason = str(v.reason);
    return reason === void 0 ? { type: "CHANNEL_REMOVED", channelId } : { type: "CHANNEL_REMOVED", channelId, reason };
  }
  function decodeMembershipFrame(v) {
    switch (v.type) {
      case "MEMBER":
        return decodeMemberFrame(v);
      case "CHANNEL_ADDED":
        return decodeChannelAddedFrame(v);
      case "CHANNEL_REMOVED":
        return decodeChannelRemovedFrame(v);
      default:
        return void 0;
    }
  }

  // ../clients/typescript/src/frame-parse.ts
  function parseServerFrame(text) {
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      return void 0;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) return void 0;
    const type = value.type;
    if (typeof type !== "string") return void 0;
    if (type === "MEMBER" || type === "CHANNEL_ADDED" || type === "CHANNEL_REMOVED") {
      return decodeMembershipFrame(value);
    }
    return value;
  }

  // ../clients/typescript/src/notify-settings.ts
  async function setNotifySettings(c, conn, channelId, change, signal) {
    if (conn.state === "closed") throw new ChatdError("closed", "client closed");
    const body = {};
    if (change.notify !== void 0) body.notify = change.notify;
    if (change.snoozeUntil !== void 0) body.snoozeUntil = change.snoozeUntil;
    const path = `/v1/me/channels/${encodeURIComponent(channelId)}/settings`;
    const answer = await request(c.opts, conn, "PUT", path, { body, signal });
    return parseNotifySettings(answer.body);
  }
  function parseNotifySettings(v) {
    const r = typeof v === "object" && v !== null ? v : {};
    const { notify, snoozeUntil } = r;
    if (typeof notify !== "string" || snoozeUntil !== null && typeof snoozeUntil !== "number") {
      throw new ChatdError("internal", "PUT /v1/me/channels/{channelId}/settings: malformed answer");
    }
    return { notify, snoozeUntil };
  }

  // ../clients/typescript/src/frame-router.ts
  var FrameRouter = class {
    p;
    /** Frames go to the parts of `targets`. */
    constructor(targets) {
      this.p = targets;
    }
    /** A server frame arrived on connection `gen`: to the part that handles it. */
    onFrame(text, gen) {
      const f = parseServerFrame(text);
      if (f === void 0) return;
      switch (f.type) {
        case "HELLO":
          this.onHello(f, gen);
          break;
        case "MSG_ACK":
          if (this.p.sender.onAck(f)) this.p.typingIndicators.messageStored(f.channelId);
          break;
        case "MSG_RECV":
          this.p.channels.memberNow(this.p.channels.ctx(f.channelId));
          this.p.sync.ingest(f.channelId, [f], false);
          break;
        case "SYNC_BATCH":
          this.p.sync.onBatch(f);
          break;
        case "RECEIPT":
          this.p.receipts.onReceipt(f);
          this.p.memberLists.onReceipt(f);
          break;
        case "ERROR":
          this.onError(f);
          break;
        case "TYPING":
          this.p.typingIndicators.onTyping(f);
          break;
        case "PRESENCE":
          this.p.presenceSub.onPresence(f);
          break;
        case "CHANNEL_ADDED":
          this.onChannelAdded(f);
          break;
        case "CHANNEL_REMOVED":
          this.p.channels.markRemoved(this.p.channels.ctx(f.channelId), f.reason ?? "deleted");
          break;
        case "CHANNEL_SETTINGS":
          this.onSettings(f);
          break;
        case "CHANNEL_UPDATED":
          if (typeof f.channelId === "string") this.p.channels.moderation.stated(f.channelId, f.postingRole, f.slowModeMs, f.retentionSecs);
          this.p.c.events.emit("channelUpdated", f);
          break;
        case "MEMBER":
          this.p.channels.applyMember(f);
          this.p.channels.moderation.onMember(f);
          this.p.memberLists.onMember(f);
          this.p.c.events.emit("member", f);
          break;
        default:
          break;
      }
    }
    /** `CHANNEL_SETTINGS`: the user changed a channel's settings (on any session). */
    onSettings(f) {
      let s;
      try {
        s = parseNotifySettings(f);
      } catch {
        return;
      }
      if (typeof f.channelId === "string") this.p.channels.applySettings(f.channelId, s);
    }
    /** A session opened: take its channels, then read, subscribe and send what waits. */
    onHello(h2, gen) {
      this.p.conn.opened(gen, h2.sessionId);
      const listed = this.p.channels.applyHello(h2);
      for (const c of h2.channels) this.p.channels.moderation.stated(c.channelId, c.postingRole, c.slowModeMs, c.retentionSecs);
      this.p.conn.setState("open");
      this.p.conn.store.invalidate();
      this.p.c.events.emit("hello", h2);
      for (const id of listed) {
        const ch = this.p.channels.get(id);
        if (ch !== void 0) this.p.channels.markListed(ch);
      }
      for (const ch of this.p.channels.all()) {
        if (!ch.opened || ch.removed) continue;
        this.p.sync.resume(ch);
        if (ch.olderWaiters.length > 0) this.p.sync.pumpOlder(ch);
      }
      this.p.memberLists.opened();
      this.p.presenceSub.opened();
      void this.p.sender.resendAll();
    }
    /**
     * `CHANNEL_ADDED`: the user is in the channel now; it is tracked as a `HELLO` channel
     * from then on (listed, and an opened one reads what it lacks from the entry's `lastSeq`).
     */
    onChannelAdded(f) {
      const ch = this.p.channels.ctx(f.channel.channelId);
      this.p.channels.added(ch, f.channel);
      this.p.channels.moderation.stated(ch.id, f.channel.postingRole, f.channel.slowModeMs, f.channel.retentionSecs);
      if (ch.opened) {
        this.p.sync.resume(ch);
        if (ch.olderWaiters.length > 0) this.p.sync.pumpOlder(ch);
      }
    }
    /**
     * An ERROR: a record's (by clientMsgId), the refusal of an unknown frame type, a SYNC's
     * (by channelId), a `forbidden` naming a channel the user is known to be out of (a
     * frame sent before its removal was heard of: dropped), or, naming nothing, maybe the
     * presence subscription's; else `error`.
     */
    onError(e) {
      const err = ChatdError.fromFrame(e);
      const refusedIn = e.channelId ?? (e.clientMsgId !== void 0 ? this.p.sender.channelOf(e.clientMsgId) : void 0);
      if (err.reason !== void 0 && refusedIn !== void 0) this.p.channels.moderation.onRefusal(refusedIn, err);
      if (e.clientMsgId !== void 0 && this.p.sender.onError(e.clientMsgId, err)) return;
      if (e.code === "unknown_type") {
        const u = this.p.conn.features.refuseOldest();
        if (u !== void 0) {
          if (u.clientMsgId !== void 0) this.p.sender.unsupported(u.clientMsgId, err);
          return;
        }
      }
      if (e.channelId !== void 0 && e.clientMsgId === void 0 && this.p.sync.onError(e.channelId, err)) return;
      if (e.channelId === void 0 && e.clientMsgId === void 0 && e.messageId !== void 0 && this.p.sync.onThreadError(e.messageId, err)) return;
      if (e.code === "forbidden" && e.channelId !== void 0 && e.clientMsgId === void 0 && this.p.channels.get(e.channelId)?.removed === true) return;
      if (err.retryable && e.clientMsgId === void 0 && e.channelId === void 0 && e.messageId === void 0) {
        this.p.presenceSub.refused(err);
      }
      this.p.c.events.emit("error", err, e);
    }
  };

  // ../clients/typescript/src/receipts.ts
  function applyReceipt(prev, kind, seq) {
    const readSeq = kind === "read" ? Math.max(prev.readSeq, seq) : prev.readSeq;
    const deliveredSeq = Math.max(prev.deliveredSeq, readSeq, kind === "delivered" ? seq : 0);
    if (readSeq === prev.readSeq && deliveredSeq === prev.deliveredSeq) return prev;
    return Object.freeze({ deliveredSeq, readSeq });
  }
  var Receipts = class {
    c;
    conn;
    channels;
    deliveredTimer;
    /** Receipts over the connection, for the channels. */
    constructor(c, conn, channels) {
      this.c = c;
      this.conn = conn;
      this.channels = channels;
    }
    /** Marks the channel read up to its newest held entry (monotonic: never moves back). */
    markRead(channelId) {
      const ch = this.channels.ctx(channelId);
      const id = ch.log.highEntryId();
      const seq = ch.log.high;
      if (id === void 0 || seq <= ch.readSeq) return;
      ch.readSeq = seq;
      ch.deliveredSeq = Math.max(ch.deliveredSeq, seq);
      ch.deliveredSent = Math.max(ch.deliveredSent, seq);
      ch.store.invalidate();
      this.conn.send({ type: "MSG_READ", messageId: id });
    }
    /**
     * New entries were appended to an opened channel: soon (100 ms, for all channels at
     * once) send `MSG_DELIVERED` for the newest entry of each opened channel that moved,
     * unless `autoDelivered` is off.
     */
    scheduleDelivered() {
      if (this.c.opts.autoDelivered === false || this.deliveredTimer !== void 0) return;
      this.deliveredTimer = setTimeout(() => {
        this.deliveredTimer = void 0;
        for (const ch of this.channels.all()) {
          const id = ch.log.highEntryId();
          if (!ch.opened || id === void 0 || ch.log.high <= ch.deliveredSent) continue;
          if (this.conn.send({ type: "MSG_DELIVERED", messageId: id }) !== 0) {
            ch.deliveredSent = ch.log.high;
            ch.deliveredSeq = Math.max(ch.deliveredSeq, ch.log.high);
            ch.store.invalidate();
          }
        }
      }, 100);
    }
    /** A RECEIPT arrived: the user's own (another session's) or another member's watermark moved. */
    onReceipt(r) {
      const ch = this.channels.ctx(r.channelId);
      if (r.userId === this.c.userId) {
        if (r.kind === "read") ch.readSeq = Math.max(ch.readSeq, r.seq);
        ch.deliveredSeq = Math.max(ch.deliveredSeq, r.seq);
        ch.store.invalidate();
        return;
      }
      const prev = ch.receipts.get(r.userId) ?? { deliveredSeq: 0, readSeq: 0 };
      const next = applyReceipt(prev, r.kind, r.seq);
      if (next !== prev) {
        ch.receipts.set(r.userId, next);
        ch.store.invalidate();
        this.c.events.emit("receipt", r);
      }
    }
    /** The client closed: no more `MSG_DELIVERED`. */
    close() {
      clearTimeout(this.deliveredTimer);
    }
  };

  // ../clients/typescript/src/member-lists.ts
  function memberFrameShown(afterSeq, atSeq) {
    return afterSeq < atSeq;
  }
  function foldMemberFrame(members, f) {
    const i = members.findIndex((m) => m.userId === f.userId);
    const cur = i >= 0 ? members[i] : void 0;
    switch (f.op) {
      case "join":
      case "role": {
        const role = f.role ?? cur?.role ?? "member";
        if (cur !== void 0) {
          if (cur.role === role) return members;
          const next2 = [...members];
          next2[i] = Object.freeze({ ...cur, role });
          return Object.freeze(next2);
        }
        const added = Object.freeze({ userId: f.userId, role, joinedAt: f.ts, deliveredSeq: 0, readSeq: 0 });
        const at = members.findIndex((m) => m.userId > f.userId);
        const next = [...members];
        next.splice(at < 0 ? next.length : at, 0, added);
        return Object.freeze(next);
      }
      case "leave":
      case "ban":
        return i < 0 ? members : Object.freeze(members.filter((_, j) => j !== i));
      case "mute": {
        if (cur === void 0 || f.mutedUntil === void 0 || cur.mutedUntil === (f.mutedUntil ?? void 0)) return members;
        const rest = { userId: cur.userId, role: cur.role, joinedAt: cur.joinedAt, deliveredSeq: cur.deliveredSeq, readSeq: cur.readSeq };
        const next = [...members];
        next[i] = Object.freeze(f.mutedUntil === null ? rest : { ...rest, mutedUntil: f.mutedUntil });
        return Object.freeze(next);
      }
      default:
        return members;
    }
  }
  function foldReceipt(members, r) {
    const i = members.findIndex((m) => m.userId === r.userId);
    const cur = members[i];
    if (cur === void 0) return members;
    const w = applyReceipt(cur, r.kind, r.seq);
    if (w === cur) return members;
    const next = [...members];
    next[i] = Object.freeze({ ...cur, deliveredSeq: w.deliveredSeq, readSeq: w.readSeq });
    return Object.freeze(next);
  }
  var MemberLists = class {
    c;
    deps;
    lists = /* @__PURE__ */ new Map();
    aborts = /* @__PURE__ */ new Set();
    /** Reads with `deps`; listens to the client's `channelAdded` and `channelRemoved`. */
    constructor(c, deps) {
      this.c = c;
      this.deps = deps;
      c.events.on("channelRemoved", (id) => {
        this.removed(id);
      });
      c.events.on("channelAdded", (id) => {
        this.added(id);
      });
    }
    /** The list of a channel (read when first asked for, and when it went stale). */
    get(channelId) {
      const l = this.ctx(channelId);
      if (!l.started || l.stale) this.read(l);
      return l.handle;
    }
    /** A `MEMBER` frame: folded onto its channel's list (and kept for the read in flight). */
    onMember(f) {
      const l = this.lists.get(f.channelId);
      if (l === void 0 || l.status === "removed") return;
      l.buffer?.push(f);
      if (l.status === "loading" || memberFrameShown(f.afterSeq, l.atSeq)) return;
      const next = foldMemberFrame(l.members, f);
      if (next === l.members) return;
      l.members = next;
      l.store.invalidate();
    }
    /** A `RECEIPT`: the member's watermark moves in its channel's list. */
    onReceipt(r) {
      const l = this.lists.get(r.channelId);
      if (l === void 0 || l.status === "removed") return;
      const next = foldReceipt(l.members, r);
      if (next === l.members) return;
      l.members = next;
      l.store.invalidate();
    }
    /** A session opened (`HELLO`): frames may have been missed since the lists were read; read them again. */
    opened() {
      const conn = this.deps.openConn();
      for (const l of this.lists.values()) {
        if (!l.started || l.status === "removed" || l.readConn === conn) continue;
        if (l.listeners > 0) this.read(l);
        else l.stale = true;
      }
    }
    /** The client closed: reads in flight are stopped. */
    close() {
      for (const a of this.aborts) a.abort();
      this.aborts.clear();
    }
    /** The user is no longer in the channel: its list is empty and `removed`. */
    removed(id) {
      const l = this.lists.get(id);
      if (l === void 0 || l.status === "removed") return;
      l.gen++;
      l.status = "removed";
      l.members = Object.freeze([]);
      l.error = void 0;
      l.buffer = void 0;
      l.again = false;
      l.store.invalidate();
    }
    /** The user is in the channel (again): a removed list is read again. */
    added(id) {
      const l = this.lists.get(id);
      if (l === void 0 || l.status !== "removed") return;
      l.status = "loading";
      l.atSeq = 0;
      l.store.invalidate();
      this.read(l);
    }
    ctx(channelId) {
      const known = this.lists.get(channelId);
      if (known !== void 0) return known;
      const store = new LazyStore(
        () => Object.freeze({ channelId, status: l.status, members: l.members, atSeq: l.atSeq, error: l.error })
      );
      const handle = {
        channelId,
        subscribe: (listener) => {
          const off = store.subscribe(listener);
          l.listeners++;
          if (l.stale) this.read(l);
          let on = true;
          return () => {
            if (!on) return;
            on = false;
            l.listeners--;
            off();
          };
        },
        getSnapshot: store.getSnapshot,
        refresh: () => {
          this.read(l);
        }
      };
      const l = {
        id: channelId,
        members: Object.freeze([]),
        atSeq: 0,
        status: "loading",
        error: void 0,
        buffer: void 0,
        reading: false,
        again: false,
        gen: 0,
        readConn: 0,
        stale: false,
        started: false,
        listeners: 0,
        store,
        handle
      };
      this.lists.set(channelId, l);
      return l;
    }
    /** Reads the list (once at a time: a read asked for meanwhile follows it). */
    read(l) {
      if (this.deps.closed()) return;
      l.started = true;
      l.stale = false;
      if (l.reading) {
        l.again = true;
        return;
      }
      l.reading = true;
      l.buffer = [];
      l.readConn = this.deps.openConn();
      const gen = l.gen;
      const abort = new AbortController();
      this.aborts.add(abort);
      const done = () => {
        this.aborts.delete(abort);
        l.reading = false;
        l.buffer = void 0;
        if (l.again && !this.deps.closed()) {
          l.again = false;
          this.read(l);
        }
      };
      this.deps.readAll(l.id, abort.signal).then(
        (list) => {
          if (gen === l.gen && !this.deps.closed()) {
            let members = Object.freeze(list.members.map((m) => Object.freeze({ ...m })));
            for (const f of l.buffer ?? []) if (!memberFrameShown(f.afterSeq, list.atSeq)) members = foldMemberFrame(members, f);
            l.members = members;
            l.atSeq = list.atSeq;
            l.status = "ready";
            l.error = void 0;
            l.store.invalidate();
          }
          done();
        },
        (e) => {
          if (gen === l.gen && !this.deps.closed()) {
            l.status = "error";
            l.error = e;
            l.store.invalidate();
          }
          done();
        }
      );
    }
  };

  // ../clients/typescript/src/members.ts
  var MAX_PAGE = 500;
  var Members = class {
    c;
    conn;
    channels;
    /** Requests with the connection's token. */
    constructor(c, conn, channels) {
      this.c = c;
      this.conn = conn;
      this.channels = channels;
    }
    /**
     * `PUT /v1/channels/{channelId}/members/{userId}`, with `{"role"}` when `role` is given
     * (see `ChatClient.addMember` and `setMemberRole`).
     */
    async put(channelId, userId, role, options = {}) {
      this.notClosed();
      const body = role === void 0 ? void 0 : { role };
      await request(this.c.opts, this.conn, "PUT", memberPath(channelId, userId), { body, signal: options.signal });
    }
    /**
     * `DELETE /v1/channels/{channelId}/members/{userId}` (see `ChatClient.removeMember`); the
     * user's own removal takes the channel from the list at once (reason `removed`), as a
     * leave does.
     */
    async remove(channelId, userId, options = {}) {
      this.notClosed();
      await request(this.c.opts, this.conn, "DELETE", memberPath(channelId, userId), { signal: options.signal });
      if (this.conn.state === "closed") return;
      if (userId === this.c.userId) {
        const ch = this.channels.get(channelId);
        if (ch !== void 0) this.channels.markRemoved(ch, "removed");
      }
    }
    /** Rejects with `closed` after `ChatClient.close`. */
    notClosed() {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
    }
    /** One page (see `ChatClient.members`). */
    async page(channelId, options = {}) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      const q = new URLSearchParams();
      if (options.after !== void 0) q.set("after", options.after);
      if (options.limit !== void 0) q.set("limit", String(options.limit));
      const query = q.toString() === "" ? "" : `?${q.toString()}`;
      const path = `/v1/channels/${encodeURIComponent(channelId)}/members`;
      const body = await getJson(this.c.opts, this.conn, path + query, options.signal);
      const page = parseMembersPage(body);
      const me = page.members.find((m) => m.userId === this.c.userId);
      if (me !== void 0) this.channels.moderation.onMemberRead(channelId, me.mutedUntil, page.atSeq);
      return page;
    }
    /** Every member, page after page (see `ChatClient.allMembers`). */
    async all(channelId, options = {}) {
      const limit = options.pageSize ?? MAX_PAGE;
      const members = [];
      let atSeq = Number.POSITIVE_INFINITY;
      let after;
      for (; ; ) {
        const opts = { limit };
        if (after !== void 0) opts.after = after;
        if (options.signal !== void 0) opts.signal = options.signal;
        const page = await this.page(channelId, opts);
        members.push(...page.members);
        atSeq = Math.min(atSeq, page.atSeq);
        const last2 = page.members[page.members.length - 1];
        if (!page.hasMore) break;
        if (last2 === void 0 || after !== void 0 && !(last2.userId > after)) {
          throw new ChatdError("internal", "GET /v1/channels/{channelId}/members: hasMore without a later member");
        }
        after = last2.userId;
      }
      return { members, atSeq: Number.isFinite(atSeq) ? atSeq : 0 };
    }
  };
  function memberPath(channelId, userId) {
    return `/v1/channels/${encodeURIComponent(channelId)}/members/${encodeURIComponent(userId)}`;
  }
  function parseMembersPage(body) {
    const bad = (what) => new ChatdError("internal", `GET /v1/channels/{channelId}/members: ${what}`);
    if (typeof body !== "object" || body === null) throw bad("not a JSON object");
    const b = body;
    if (!Array.isArray(b.members)) throw bad("no members list");
    if (typeof b.hasMore !== "boolean") throw bad("no hasMore");
    if (typeof b.atSeq !== "number") throw bad("no atSeq");
    const members = b.members.map((m) => {
      const r = typeof m === "object" && m !== null ? m : {};
      const { userId, role, joinedAt, deliveredSeq, readSeq, mutedUntil } = r;
      if (typeof userId !== "string" || typeof role !== "string" || typeof joinedAt !== "number" || typeof deliveredSeq !== "number" || typeof readSeq !== "number") {
        throw bad(`a member of another shape: ${JSON.stringify(m)}`);
      }
      const member = { userId, role, joinedAt, deliveredSeq, readSeq };
      return typeof mutedUntil === "number" ? { ...member, mutedUntil } : member;
    });
    return { members, hasMore: b.hasMore, atSeq: b.atSeq };
  }

  // ../clients/typescript/src/moderation.ts
  var Moderation = class {
    c;
    conn;
    state;
    /** @internal Requests with the connection's token; answers that tell posting rules go to `state`. */
    constructor(c, conn, state) {
      this.c = c;
      this.conn = conn;
      this.state = state;
    }
    /**
     * Mutes `userId` in a channel until `until` (ms since the epoch; `null`, or a time
     * already past, unmutes): `PUT /v1/channels/{channelId}/members/{userId}`
     * `{"mutedUntil"}`. An owner mutes anyone, a moderator `member`s only; not in a direct
     * channel. A user who is not a member is added first (as `addMember`). Until then its
     * sends, edits, reactions and typing in the channel are refused with `reason: "muted"`.
     */
    async mute(channelId, userId, until2, options = {}) {
      await this.call("PUT", memberPath2(channelId, userId), { mutedUntil: until2 }, options);
    }
    /** Lifts a mute ({@link Moderation.mute} with `null`); fine when there was none. */
    unmute(channelId, userId, options = {}) {
      return this.mute(channelId, userId, null, options);
    }
    /**
     * Removes `userId` from a channel and bans it (`DELETE
     * /v1/channels/{channelId}/members/{userId}?ban=true`): joining again is refused with
     * `reason: "banned"` until {@link Moderation.liftBan} or a moderator adds it back. A
     * user who is not a member is banned too; banning again changes nothing.
     */
    async ban(channelId, userId, options = {}) {
      await this.call("DELETE", `${memberPath2(channelId, userId)}?ban=true`, void 0, options);
    }
    /** Lifts a ban (`DELETE /v1/channels/{channelId}/bans/{userId}`; fine when there was none). */
    async liftBan(channelId, userId, options = {}) {
      await this.call("DELETE", `${channelPath(channelId)}/bans/${encodeURIComponent(userId)}`, void 0, options);
    }
    /**
     * One page of a channel's bans (`GET /v1/channels/{channelId}/bans?after&limit`), in byte
     * order of `userId`; with `hasMore`, ask again with `after` the last one's `userId`. An
     * owner or moderator only (a member gets `forbidden`).
     */
    async bans(channelId, options = {}) {
      const q = new URLSearchParams();
      if (options.after !== void 0) q.set("after", options.after);
      if (options.limit !== void 0) q.set("limit", String(options.limit));
      const query = q.toString() === "" ? "" : `?${q.toString()}`;
      const body = await this.call("GET", `${channelPath(channelId)}/bans${query}`, void 0, options);
      return parseBansPage(body);
    }
    /**
     * Changes a channel's posting rules (`PATCH /v1/channels/{channelId}` with the fields
     * given): `postingRole` `moderator` makes it an announcement channel, `slowModeMs` (0 to
     * 3600000) slows `member`s down, `retentionSecs` (§19: 0 forever to 3155760000, `null`
     * back to the server's `retention_secs`) sets how long its messages are kept (a bad
     * value: `invalid_field`, `field` `retentionSecs`). An owner only; a direct channel has
     * no posting rules. Resolves
     * to the rules now in force (also shown in the channel's `snapshot.moderation`).
     */
    async setChannelSettings(channelId, settings, options = {}) {
      const body = {};
      if (settings.postingRole !== void 0) body.postingRole = settings.postingRole;
      if (settings.slowModeMs !== void 0) body.slowModeMs = settings.slowModeMs;
      if (settings.retentionSecs !== void 0) body.retentionSecs = settings.retentionSecs;
      const answer = await this.call("PATCH", channelPath(channelId), body, options);
      const rules = parseRules(answer);
      this.state.settings(rules);
      return rules;
    }
    /**
     * Deletes any message of a channel without a frame (`DELETE
     * /v1/channels/{channelId}/messages/{messageId}`): an owner's or moderator's token (or
     * the admin's). The `delete` entry (its `senderId` the moderator) comes to every member,
     * this user too, as a `MSG_RECV`. `not_found` when the message is unknown, not a
     * message, already deleted or of another channel. (`ChatClient.deleteMessage` does the
     * same by `MSG_DELETE`, through the outbox.)
     */
    async deleteAnyMessage(channelId, messageId, options = {}) {
      await this.call("DELETE", `${channelPath(channelId)}/messages/${encodeURIComponent(messageId)}`, void 0, options);
    }
    /**
     * Blocks `userId` (`PUT /v1/me/blocks/{userId}`; fine when blocked already): no direct
     * channel between the two, its sends into an existing one refused, the user shown
     * offline to it. In group channels the server still delivers its messages: an app
     * hides them (see {@link Moderation.blocks}). Blocking oneself is `invalid_field`.
     */
    async block(userId, options = {}) {
      await this.call("PUT", blockPath(userId), void 0, options);
    }
    /** Unblocks `userId` (`DELETE /v1/me/blocks/{userId}`; fine when not blocked). */
    async unblock(userId, options = {}) {
      await this.call("DELETE", blockPath(userId), void 0, options);
    }
    /** The users this user blocks (`GET /v1/me/blocks`), in byte order. */
    async blocks(options = {}) {
      const body = await this.call("GET", "/v1/me/blocks", void 0, options);
      const list = body?.blocks;
      if (!Array.isArray(list) || !list.every((u) => typeof u === "string")) {
        throw new ChatdError("internal", "GET /v1/me/blocks: no blocks list");
      }
      return Object.freeze([...list]);
    }
    /**
     * Reports a message (`POST /v1/messages/{messageId}/flags` `{"reason","note"?}`; a member
     * of its channel; `note` at most 1000 bytes). The same user reporting the same message
     * again gets its first flag (`created: false`). `not_found` for an unknown or deleted
     * message.
     */
    async flag(messageId, reason, options = {}) {
      const body = options.note === void 0 ? { reason } : { reason, note: options.note };
      const answer = await request(this.c.opts, this.conn, "POST", `/v1/messages/${encodeURIComponent(messageId)}/flags`, {
        body,
        ...this.signal(options)
      });
      return parseFlag(answer.body, answer.status === 201);
    }
    async call(method, path, body, options) {
      const answer = await request(this.c.opts, this.conn, method, path, { body, ...this.signal(options) });
      return answer.body;
    }
    /** Rejects with `closed` after `ChatClient.close`; the options' signal. */
    signal(options) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      return options.signal === void 0 ? {} : { signal: options.signal };
    }
  };
  function channelPath(channelId) {
    return `/v1/channels/${encodeURIComponent(channelId)}`;
  }
  function memberPath2(channelId, userId) {
    return `${channelPath(channelId)}/members/${encodeURIComponent(userId)}`;
  }
  function blockPath(userId) {
    return `/v1/me/blocks/${encodeURIComponent(userId)}`;
  }
  function parseBansPage(body) {
    const bad = (why) => new ChatdError("internal", `GET /v1/channels/{channelId}/bans: ${why}`);
    const b = typeof body === "object" && body !== null ? body : {};
    if (!Array.isArray(b.bans) || typeof b.hasMore !== "boolean") throw bad("not a bans page");
    const bans = b.bans.map((x) => {
      const r = typeof x === "object" && x !== null ? x : {};
      if (typeof r.userId !== "string" || typeof r.bannedAt !== "number") throw bad(`a ban of another shape: ${JSON.stringify(x)}`);
      const ban = { userId: r.userId, bannedAt: r.bannedAt };
      return Object.freeze(typeof r.actorId === "string" ? { ...ban, actorId: r.actorId } : ban);
    });
    return { bans: Object.freeze(bans), hasMore: b.hasMore };
  }
  function parseRules(body) {
    const r = typeof body === "object" && body !== null ? body : {};
    if (typeof r.channelId !== "string") throw new ChatdError("internal", "PATCH /v1/channels/{channelId}: no channelId");
    const rules = {
      channelId: r.channelId,
      postingRole: typeof r.postingRole === "string" ? r.postingRole : "member",
      slowModeMs: typeof r.slowModeMs === "number" ? r.slowModeMs : 0
    };
    return typeof r.retentionSecs === "number" ? { ...rules, retentionSecs: r.retentionSecs } : rules;
  }
  function parseFlag(body, created) {
    const r = typeof body === "object" && body !== null ? body : {};
    const { flagId, messageId, channelId, reporterId, reason, createdAt, note } = r;
    if (typeof flagId !== "string" || typeof messageId !== "string" || typeof channelId !== "string" || typeof reporterId !== "string" || typeof reason !== "string" || typeof createdAt !== "number") {
      throw new ChatdError("internal", `POST /v1/messages/{messageId}/flags: a flag of another shape: ${JSON.stringify(body)}`);
    }
    const flag = { flagId, messageId, channelId, reporterId, reason, createdAt, created };
    return Object.freeze(typeof note === "string" ? { ...flag, note } : flag);
  }

  // ../clients/typescript/src/outbox.ts
  function messageOp(channelId, body, options) {
    const { replyTo, threadId } = options;
    return {
      type: "MSG_SEND",
      channelId,
      body,
      ...replyTo !== void 0 ? { replyTo } : {},
      ...threadId !== void 0 ? { threadId } : {},
      ...mentionFields(options),
      ...options.attachments !== void 0 ? { attachments: outboxAttachments(options.attachments) } : {}
    };
  }
  var MemoryOutboxStorage = class {
    records = /* @__PURE__ */ new Map();
    /** {@inheritDoc OutboxStorage.load} */
    load(userId) {
      return Promise.resolve([...this.records.values()].filter((r) => r.userId === userId).map((r) => ({ ...r })));
    }
    /** {@inheritDoc OutboxStorage.put} */
    put(record) {
      this.records.set(key(record.userId, record.clientMsgId), { ...record });
      return Promise.resolve();
    }
    /** {@inheritDoc OutboxStorage.delete} */
    delete(userId, clientMsgId) {
      this.records.delete(key(userId, clientMsgId));
      return Promise.resolve();
    }
  };
  function key(userId, clientMsgId) {
    return `${userId}\0${clientMsgId}`;
  }
  var STORE = "outbox";
  var IndexedDBOutboxStorage = class {
    db;
    factory;
    name;
    /**
     * @param name - database name (default `chatd-outbox`)
     * @param factory - the IndexedDB factory (default `globalThis.indexedDB`)
     */
    constructor(name = "chatd-outbox", factory) {
      const f = factory ?? globalThis.indexedDB;
      if (f === void 0) throw new Error("IndexedDB is not available: pass a factory or use MemoryOutboxStorage");
      this.factory = f;
      this.name = name;
    }
    open() {
      this.db ??= new Promise((resolve, reject) => {
        const req = this.factory.open(this.name, 1);
        req.onupgradeneeded = () => {
          const db = req.result;
          if (!db.objectStoreNames.contains(STORE)) {
            const store = db.createObjectStore(STORE, { keyPath: ["userId", "clientMsgId"] });
            store.createIndex("userId", "userId");
          }
        };
        req.onsuccess = () => {
          resolve(req.result);
        };
        req.onerror = () => {
          reject(toError(req.error));
        };
      });
      return this.db;
    }
    async tx(mode, fn) {
      const db = await this.open();
      await new Promise((resolve, reject) => {
        const t = db.transaction(STORE, mode, { durability: "strict" });
        t.oncomplete = () => {
          resolve();
        };
        t.onerror = () => {
          reject(toError(t.error));
        };
        t.onabort = () => {
          reject(toError(t.error));
        };
        fn(t.objectStore(STORE));
      });
    }
    /** {@inheritDoc OutboxStorage.load} */
    async load(userId) {
      let out = [];
      await this.tx("readonly", (s) => {
        const req = s.index("userId").getAll(userId);
        req.onsuccess = () => {
          out = req.result;
        };
      });
      return out;
    }
    /** {@inheritDoc OutboxStorage.put} */
    put(record) {
      return this.tx("readwrite", (s) => {
        s.put(JSON.parse(JSON.stringify(record)));
      });
    }
    /** {@inheritDoc OutboxStorage.delete} */
    delete(userId, clientMsgId) {
      return this.tx("readwrite", (s) => {
        s.delete([userId, clientMsgId]);
      });
    }
    /** Closes the database connection. */
    async close() {
      if (this.db !== void 0) (await this.db).close();
      this.db = void 0;
    }
  };
  function toError(e) {
    return e instanceof Error ? e : new Error(String(e));
  }
  function sendOrder(records) {
    return [...records].sort((a, b) => a.order - b.order || (a.clientMsgId < b.clientMsgId ? -1 : 1));
  }
  function sameOp(a, b) {
    return sameValue(a, b);
  }
  function sameValue(a, b) {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
    const ra = a;
    const rb = b;
    const keys = (r) => Object.keys(r).filter((k) => r[k] !== void 0);
    const ka = keys(ra);
    return ka.length === keys(rb).length && ka.every((k) => sameValue(ra[k], rb[k]));
  }

  // ../clients/typescript/src/outbox-wal.ts
  var PREFIX = "chatd-outbox-wal:";
  function platformWriteAheadStore() {
    if (typeof globalThis.document === "undefined") return void 0;
    try {
      return globalThis.localStorage;
    } catch {
      return void 0;
    }
  }
  var WriteAhead = class {
    store;
    /** `store`: where entries are written (undefined: the write-ahead does nothing). */
    constructor(store) {
      this.store = store;
    }
    /** Writes `record` synchronously; false when there is no store or it refused (quota, blocked). */
    add(record) {
      if (this.store === void 0) return false;
      try {
        this.store.setItem(keyOf(record.userId, record.clientMsgId), JSON.stringify(record));
        return true;
      } catch {
        return false;
      }
    }
    /** Removes the entry of (userId, clientMsgId) if any. */
    remove(userId, clientMsgId) {
      try {
        this.store?.removeItem(keyOf(userId, clientMsgId));
      } catch {
      }
    }
    /** The user's entries (unreadable ones are removed: nothing can be sent from them). */
    list(userId) {
      const s = this.store;
      if (s === void 0) return [];
      const prefix = `${PREFIX}${encodeURIComponent(userId)}:`;
      const out = [];
      try {
        const keys = [];
        for (let i = 0; i < s.length; i++) {
          const k = s.key(i);
          if (k?.startsWith(prefix) === true) keys.push(k);
        }
        for (const k of keys) {
          const r = parseRecord(s.getItem(k), userId);
          if (r === void 0) s.removeItem(k);
          else out.push(r);
        }
      } catch {
      }
      return out;
    }
  };
  function keyOf(userId, clientMsgId) {
    return `${PREFIX}${encodeURIComponent(userId)}:${clientMsgId}`;
  }
  function parseRecord(text, userId) {
    if (text === null) return void 0;
    let v;
    try {
      v = JSON.parse(text);
    } catch {
      return void 0;
    }
    if (typeof v !== "object" || v === null) return void 0;
    const r = v;
    const op = r.op;
    const ok = r.userId === userId && typeof r.clientMsgId === "string" && typeof r.createdAt === "number" && typeof r.order === "number" && typeof r.owner === "string" && (r.state === "pending" || r.state === "failed") && typeof op === "object" && op !== null && typeof op.type === "string" && typeof op.channelId === "string";
    return ok ? v : void 0;
  }

  // ../clients/typescript/src/outbox-tabs.ts
  var TabOutbox = class {
    /** The records by clientMsgId. */
    pending = /* @__PURE__ */ new Map();
    /** Where the records are kept across reloads. */
    storage;
    /** Where a new record is written synchronously until `storage.put` resolved (see outbox-wal.ts). */
    writeAhead;
    /**
     * This tab's new records whose `storage.put` the send path has not taken yet (by
     * clientMsgId). A load leaves them to it: it holds them once their put resolved, with the
     * caller's waiters (the put starts in the `send` call, so a load running then may read them).
     * A send with the same clientMsgId made meanwhile waits on the one held here.
     */
    writing = /* @__PURE__ */ new Map();
    c;
    conn;
    channels;
    hooks;
    locks;
    bc;
    releaseTabLock;
    watchedOwners = /* @__PURE__ */ new Set();
    loadChain = Promise.resolve();
    orderCounter = 0;
    /**
     * Storage: the `storage` option, else IndexedDB when present, else memory. Write-ahead:
     * the `writeAhead` option, else `localStorage` in a browser with the default IndexedDB
     * storage (a memory storage, given or default, is not meant to outlive the page).
     */
    constructor(c, conn, channels, hooks) {
      this.c = c;
      this.conn = conn;
      this.channels = channels;
      this.hooks = hooks;
      const idb = c.opts.storage === void 0 && globalThis.indexedDB !== void 0;
      this.storage = c.opts.storage ?? (idb ? new IndexedDBOutboxStorage() : new MemoryOutboxStorage());
      const wal = c.opts.writeAhead;
      this.writeAhead = new WriteAhead(wal === null ? void 0 : wal ?? (idb ? platformWriteAheadStore() : void 0));
      const nav = globalThis.navigator;
      this.locks = c.opts.tabSync === false ? void 0 : nav?.locks;
    }
    /** The records, in the order they were added (for the channels' `outgoing`). */
    *records() {
      for (const p of this.pending.values()) yield p.record;
    }
    /** The `order` of a new record: after every record made or loaded so far (microseconds of the clock, or more). */
    nextOrder() {
      const base = this.c.now() * 1e3;
      this.orderCounter = Math.max(this.orderCounter + 1, base);
      return this.orderCounter;
    }
    /** Joins the other tabs: their broadcasts, and a lock held for this tab's life. */
    joinTabs() {
      const BC = globalThis.BroadcastChannel;
      const inBrowser = typeof globalThis.document !== "undefined";
      if (BC !== void 0 && inBrowser) {
        this.bc = new BC(`chatd-outbox:${this.c.userId}`);
        this.bc.onmessage = (ev) => {
          this.onBroadcast(ev.data);
        };
      }
      if (this.locks !== void 0) {
        void this.locks.request(`chatd-tab:${this.c.tabId}`, () => {
          return new Promise((resolve) => {
            this.releaseTabLock = resolve;
          });
        });
      }
    }
    /** Tells the other tabs a record was written, ACKed or deleted. */
    broadcast(m) {
      try {
        this.bc?.postMessage(m);
      } catch {
      }
    }
    /**
     * Reads the outbox from storage: adopts records of dead tabs, mirrors those of live
     * ones. One tab at a time (a Web Lock), so a dead tab's records get one new owner.
     */
    load() {
      const run = () => this.locks !== void 0 ? this.locks.request(`chatd-adopt:${this.c.userId}`, () => this.loadLocked()) : this.loadLocked();
      const next = this.loadChain.then(run, run);
      this.loadChain = next.catch(() => void 0);
      return next;
    }
    /** The client closed: leaves the other tabs (its records are adopted by one of them). */
    close() {
      this.bc?.close();
      this.releaseTabLock?.();
    }
    onBroadcast(m) {
      const held = this.pending.get(m.t === "put" ? m.record.clientMsgId : m.clientMsgId);
      const op = m.t === "put" ? m.record.op : m.op;
      if (held !== void 0 && !held.foreign && op !== void 0 && !sameOp(held.record.op, op)) return;
      if (m.t === "put" && held !== void 0 && !held.foreign && held.record.state === "pending" && m.record.state === "pending" && m.record.owner !== this.c.tabId && this.c.tabId < m.record.owner) {
        return;
      }
      if (m.t === "put") {
        const r = m.record;
        const p = this.pending.get(r.clientMsgId);
        if (p === void 0) {
          this.pending.set(r.clientMsgId, newPending(r, r.owner !== this.c.tabId));
          if (r.owner !== this.c.tabId) this.watchOwner(r.owner);
        } else {
          p.record = r;
          if (r.owner !== this.c.tabId) {
            p.foreign = true;
            clearTimeout(p.retryTimer);
            p.retryTimer = void 0;
            this.watchOwner(r.owner);
          }
          if (r.state === "failed") {
            const err = new ChatdError(r.error?.code ?? "internal", r.error?.message ?? "failed", { retryable: false });
            for (const w of p.waiters) w.reject(err);
            p.waiters = [];
          }
        }
        this.channels.changed(r.op.channelId);
      } else if (m.t === "acked") {
        const p = this.pending.get(m.clientMsgId);
        if (p !== void 0) this.hooks.acked(p, m.ack);
      } else {
        const p = this.pending.get(m.clientMsgId);
        if (p !== void 0) {
          this.pending.delete(m.clientMsgId);
          clearTimeout(p.retryTimer);
          for (const w of p.waiters) w.reject(new ChatdError("discarded", "discarded"));
          this.channels.changed(p.record.op.channelId);
        }
      }
    }
    /** When another tab dies, its lock is released: adopt its records then. */
    watchOwner(owner) {
      if (this.locks === void 0 || this.watchedOwners.has(owner) || owner === this.c.tabId) return;
      this.watchedOwners.add(owner);
      void this.locks.request(`chatd-tab:${owner}`, async () => {
        this.watchedOwners.delete(owner);
        if (this.conn.state === "closed") return;
        try {
          await this.load();
        } catch {
          return;
        }
        if (this.conn.state === "open") this.hooks.adopted();
      });
    }
    async liveOwners() {
      const live = /* @__PURE__ */ new Set([this.c.tabId]);
      if (this.locks === void 0) return live;
      try {
        const q = await this.locks.query();
        for (const l of q.held ?? []) if (l.name?.startsWith("chatd-tab:") === true) live.add(l.name.slice(10));
      } catch {
      }
      return live;
    }
    /**
     * Moves the write-ahead entries of tabs that are gone (reloaded, closed, crashed) into
     * the storage, unchanged (same key: a record already there is only written again), so the
     * load that follows adopts them. A live tab's entries are left to it: it removes them once
     * its own `put` resolved. An entry is removed only after its `put` resolved.
     */
    async absorbWriteAhead(live) {
      for (const r of this.writeAhead.list(this.c.userId)) {
        if (live.has(r.owner)) continue;
        await this.storage.put(r);
        this.writeAhead.remove(r.userId, r.clientMsgId);
      }
    }
    async loadLocked() {
      const live = await this.liveOwners();
      await this.absorbWriteAhead(live);
      const records = await this.storage.load(this.c.userId);
      for (const r0 of sendOrder(records)) {
        if (r0.owner === this.c.tabId && this.writing.has(r0.clientMsgId)) continue;
        const existing = this.pending.get(r0.clientMsgId);
        if (existing !== void 0 && (!existing.foreign || live.has(existing.record.owner))) continue;
        let r = r0;
        const foreign = r.owner !== this.c.tabId && live.has(r.owner);
        if (!foreign && r.owner !== this.c.tabId) {
          r = { ...r, owner: this.c.tabId };
          await this.storage.put(r);
          this.broadcast({ t: "put", record: r });
        }
        if (foreign) this.watchOwner(r.owner);
        this.orderCounter = Math.max(this.orderCounter, r.order);
        if (existing !== void 0) {
          existing.record = r;
          existing.foreign = foreign;
        } else {
          this.pending.set(r.clientMsgId, newPending(r, foreign));
        }
        this.channels.changed(r.op.channelId);
      }
    }
  };
  function newPending(record, foreign) {
    return { record, foreign, attempt: 0, inflightConn: 0, frameNo: 0, retryTimer: void 0, waiters: [] };
  }

  // ../clients/typescript/src/presence.ts
  var PresenceSubscription = class {
    /** Presence of the subscribed users; keyed by user id. */
    store;
    c;
    conn;
    /** The ids of the last `subscribePresence`, without repeats. */
    ids = /* @__PURE__ */ new Set();
    /**
     * Ids of the pending PRESENCE_SUB whose PRESENCE has not arrived since it was sent;
     * undefined when no subscription is pending (snapshot complete, empty, or not sent).
     */
    waiting;
    /** Retries of the pending PRESENCE_SUB so far (the backoff's attempt number). */
    attempt = 0;
    timer;
    map = /* @__PURE__ */ new Map();
    /** An empty subscription on the connection. */
    constructor(c, conn) {
      this.c = c;
      this.conn = conn;
      this.store = new LazyStore(() => Object.freeze(Object.fromEntries(this.map)));
    }
    /** Replaces the subscription (see `ChatClient.subscribePresence`). */
    subscribe(userIds) {
      this.ids = new Set(userIds);
      for (const id of [...this.map.keys()]) if (!this.ids.has(id)) this.map.delete(id);
      this.store.invalidate();
      this.attempt = 0;
      this.send();
    }
    /** A connection opened: subscribe on it. */
    opened() {
      this.attempt = 0;
      if (this.ids.size > 0) this.send();
    }
    /**
     * A PRESENCE arrived. One for an id no longer subscribed is a late frame of a replaced
     * subscription (its snapshot was still on the wire): dropped, so the store holds the
     * current subscription's ids only.
     */
    onPresence(f) {
      this.conn.features.confirm("PRESENCE_SUB");
      if (!this.ids.has(f.userId)) return;
      this.map.set(f.userId, Object.freeze({ status: f.status, lastSeenAt: f.lastSeenAt }));
      this.store.invalidate();
      this.arrived(f.userId);
      this.c.events.emit("presence", f);
    }
    /**
     * A retryable ERROR naming no frame arrived: while the subscription is pending, send it
     * again after a backoff. Misattributing another frame's ERROR (a MSG_READ's, say) costs
     * one redundant PRESENCE_SUB only: it is idempotent (it replaces the subscription and
     * the server sends the snapshot again). One retry is scheduled at a time, so a burst of
     * ERRORs cannot make a tight loop.
     */
    refused(err) {
      if (this.waiting === void 0 || this.timer !== void 0) return;
      const delay = Math.max(
        backoffDelay(this.attempt++, { baseMs: 250, maxMs: 3e4, ...this.c.opts.retryBackoff }),
        err.retryAfterMs ?? 0
      );
      const gen = this.conn.openGen;
      this.timer = setTimeout(() => {
        this.timer = void 0;
        if (this.waiting === void 0 || this.conn.openGen !== gen) return;
        this.send();
      }, delay);
    }
    /** The connection dropped: nothing is pending on it (the next HELLO subscribes again). */
    dropped() {
      clearTimeout(this.timer);
      this.timer = void 0;
      this.waiting = void 0;
    }
    /** The client closed: no more retries. */
    close() {
      clearTimeout(this.timer);
      this.waiting = void 0;
    }
    /** Sends the current PRESENCE_SUB (if open) and makes it the pending one. */
    send() {
      clearTimeout(this.timer);
      this.timer = void 0;
      this.waiting = void 0;
      if (this.conn.state !== "open" || this.conn.features.unsupported.has("PRESENCE_SUB")) return;
      if (this.conn.send({ type: "PRESENCE_SUB", userIds: [...this.ids] }) === 0) return;
      if (this.ids.size > 0) this.waiting = new Set(this.ids);
    }
    /** A PRESENCE arrived: one id fewer to wait for; the snapshot may be complete. */
    arrived(userId) {
      const w = this.waiting;
      if (w === void 0) return;
      w.delete(userId);
      if (w.size > 0) return;
      this.waiting = void 0;
      this.attempt = 0;
      clearTimeout(this.timer);
      this.timer = void 0;
    }
  };

  // ../clients/typescript/src/search.ts
  var SEARCH_Q_MAX_BYTES = 256;
  var Search = class {
    c;
    conn;
    constructor(c, conn) {
      this.c = c;
      this.conn = conn;
    }
    /**
     * One page (`ChatClient.search`): the messages of the user's current channels (or of
     * `channelId` alone) whose current text holds every white-space separated term of `q`
     * as a case-insensitive substring, in any script, newest first, each a render-ready
     * {@link Message} with its `channelId`. A deleted message, or the text an edit replaced,
     * is never found; a channel the user left is not searched.
     *
     * Rejects with a ChatdError: `invalid_field` (its `field` says which) for an empty `q` or
     * one over 256 bytes of UTF-8 (before any request), a `q` of white space only or with a
     * control character, a `limit` not in 1..100, a `before` that is no cursor of this
     * server, a bad `channelId`; `forbidden` for a `channelId` the user is not a member of
     * (or that does not exist: the same answer); `not_found` from a server without search;
     * `unavailable`, `aborted`, `closed`.
     *
     * @example
     * ```ts
     * const { results, next } = await client.search('ärger', { limit: 20 });
     * for (const m of results) console.log(m.channelId, m.senderId, m.body);
     * if (next !== undefined) await client.search('ärger', { limit: 20, before: next });
     * ```
     */
    async page(q, options = {}) {
      if (this.conn.state === "closed") throw new ChatdError("closed", "client closed");
      checkQuery(q);
      const params = new URLSearchParams({ q });
      if (options.channelId !== void 0) params.set("channelId", options.channelId);
      if (options.before !== void 0) params.set("before", options.before);
      if (options.limit !== void 0) params.set("limit", String(options.limit));
      const body = await requestJson(this.c.opts, this.conn, "GET", `/v1/me/search?${params.toString()}`, options.signal);
      return parseSearchPage(body, this.c.userId);
    }
    /**
     * Every page (`ChatClient.searchPages`) from the newest (or from `options.before`), each
     * read when the loop asks for it, following `next` until the last page (a page may be
     * empty and not the last). `break` out of the loop to read no more. Throws as
     * {@link Search.page} rejects.
     *
     * @example
     * ```ts
     * for await (const page of client.searchPages('build-42')) {
     *   show(page.results);
     *   if (enough()) break;
     * }
     * ```
     */
    async *pages(q, options = {}) {
      let opts = options;
      for (; ; ) {
        const page = await this.page(q, opts);
        yield page;
        if (page.next === void 0) return;
        opts = { ...options, before: page.next };
      }
    }
  };
  function checkQuery(q) {
    if (q === "") throw new ChatdError("invalid_field", "q: must hold at least one term", { field: "q" });
    const bytes = new TextEncoder().encode(q).length;
    if (bytes > SEARCH_Q_MAX_BYTES) {
      throw new ChatdError("invalid_field", `q: ${bytes} bytes, at most ${SEARCH_Q_MAX_BYTES}`, { field: "q" });
    }
  }
  function parseSearchPage(body, me) {
    const bad = (what) => new ChatdError("internal", `GET /v1/me/search: ${what}`);
    if (typeof body !== "object" || body === null) throw bad("not a JSON object");
    const b = body;
    if (!Array.isArray(b.results)) throw bad("no results list");
    if (b.next !== void 0 && b.next !== null && typeof b.next !== "string") throw bad("a next that is no string");
    const results = b.results.map((x) => {
      if (!isMessageEntry(x)) throw bad(`a result of another shape: ${JSON.stringify(x)}`);
      const states = new MessageStates(me, false);
      states.addMessage(x, x.seq, false, true);
      const m = states.message(x.messageId);
      if (m === void 0) throw bad("a result not folded");
      return m;
    });
    return typeof b.next === "string" ? { results, next: b.next } : { results };
  }
  function isMessageEntry(x) {
    if (typeof x !== "object" || x === null) return false;
    const r = x;
    return typeof r.messageId === "string" && typeof r.channelId === "string" && typeof r.senderId === "string" && typeof r.seq === "number" && typeof r.ts === "number" && typeof r.body === "string" && // absent on an entry made through an HTTP route (version 1.2 common rules)
    (r.clientMsgId === void 0 || typeof r.clientMsgId === "string") && (r.kind === void 0 || r.kind === "message") && (r.reactions === void 0 || Array.isArray(r.reactions));
  }

  // ../clients/typescript/src/ids.ts
  var last = { ms: -1, counter: 0 };
  function uuidv7(nowMs = Date.now()) {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    const ms = Math.max(0, Math.floor(nowMs));
    let counter;
    if (ms === last.ms && last.counter < 4095) {
      counter = last.counter + 1;
    } else {
      counter = ((bytes[6] ?? 0) << 4 | (bytes[7] ?? 0) >> 4) & 2047;
    }
    last = { ms, counter };
    const high = Math.floor(ms / 2 ** 16);
    bytes[0] = high >>> 24 & 255;
    bytes[1] = high >>> 16 & 255;
    bytes[2] = high >>> 8 & 255;
    bytes[3] = high & 255;
    bytes[4] = ms >>> 8 & 255;
    bytes[5] = ms & 255;
    bytes[6] = 112 | counter >>> 8;
    bytes[7] = counter & 255;
    bytes[8] = 128 | (bytes[8] ?? 0) & 63;
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  // ../clients/typescript/src/send.ts
  var Sender = class {
    c;
    conn;
    channels;
    sync;
    outbox;
    attached;
    putChain = Promise.resolve();
    /** Sends the outbox's records on the connection; ACKed entries go into the channels through `sync`. */
    constructor(c, conn, channels, sync, outbox, attached) {
      this.attached = attached;
      this.c = c;
      this.conn = conn;
      this.channels = channels;
      this.sync = sync;
      this.outbox = outbox;
    }
    /**
     * Makes `op` an outbox record and sends it; resolves on its ACK (see `ChatClient.send`).
     * With the clientMsgId of a record this tab holds (being written, waiting for its ACK, or
     * failed; its own or another tab's), no second record is made: the call waits for that
     * one's outcome, and a failed one is sent again (as `retry` does), when `op` is the same;
     * else it rejects with `idempotency_conflict`, as the server would answer, and the held
     * record goes on unchanged.
     */
    enqueue(op, options) {
      if (options.signal?.aborted === true) return Promise.reject(new ChatdError("aborted", "aborted"));
      if (op.type !== "MSG_SEND" && this.conn.features.unsupported.has(op.type)) {
        return Promise.reject(new ChatdError("unknown_type", `the server does not support ${op.type}`));
      }
      const clientMsgId = options.clientMsgId ?? uuidv7();
      const held = this.outbox.writing.get(clientMsgId) ?? this.outbox.pending.get(clientMsgId);
      if (held?.deleting !== void 0) {
        return held.deleting.then(() => this.enqueue(op, { ...options, clientMsgId }));
      }
      if (held !== void 0) return this.again(held, op, options.signal);
      const record = {
        userId: this.c.userId,
        clientMsgId,
        op,
        createdAt: this.c.now(),
        order: this.outbox.nextOrder(),
        state: "pending",
        owner: this.c.tabId
      };
      const p = newPending(record, false);
      const promise = this.claim(p, options.signal);
      this.outbox.writeAhead.add(record);
      this.outbox.writing.set(clientMsgId, p);
      const put = this.outbox.storage.put(record);
      put.catch(() => void 0);
      const ready = this.putChain.then(() => put);
      this.putChain = ready.catch(() => void 0);
      ready.then(
        () => {
          this.outbox.writeAhead.remove(record.userId, clientMsgId);
          const existing = this.outbox.pending.get(clientMsgId);
          if (existing !== void 0) {
            this.outbox.writing.delete(clientMsgId);
            void this.outbox.storage.put(existing.record).catch(() => void 0);
            const waiters = p.waiters;
            p.waiters = [];
            if (!sameOp(existing.record.op, op)) {
              for (const w of waiters) w.reject(conflict(clientMsgId));
              return;
            }
            existing.waiters.push(...waiters);
            if (existing.record.state === "failed" && waiters.some((w) => w.claim === true)) this.revive(existing);
            return;
          }
          if (!p.waiters.some((w) => w.claim === true)) {
            const deleted = () => {
              this.outbox.writing.delete(clientMsgId);
            };
            p.deleting = this.outbox.storage.delete(this.c.userId, clientMsgId).then(deleted, deleted);
            return;
          }
          this.outbox.writing.delete(clientMsgId);
          this.outbox.pending.set(clientMsgId, p);
          this.outbox.broadcast({ t: "put", record });
          this.channels.changed(op.channelId);
          this.transmit(p);
        },
        (e) => {
          this.outbox.writing.delete(clientMsgId);
          this.outbox.writeAhead.remove(record.userId, clientMsgId);
          for (const w of p.waiters) w.reject(new ChatdError("internal", `outbox storage failed: ${String(e)}`));
          p.waiters = [];
        }
      );
      return promise;
    }
    /**
     * A send with the clientMsgId of the held record `p`: waits for its outcome when `op` is
     * the same (a failed record is sent again), else rejects with `idempotency_conflict`.
     */
    again(p, op, signal) {
      if (!sameOp(p.record.op, op)) return Promise.reject(conflict(p.record.clientMsgId));
      const promise = this.claim(p, signal);
      if (p.record.state === "failed") this.revive(p);
      return promise;
    }
    /**
     * A waiter of a send call on `p`. Its `signal` rejects it with `aborted`; when no other
     * send call of this tab then waits for the record, and the record is this tab's, it
     * leaves the outbox (and the storage), so nothing resends it; one being written is
     * deleted once its put is done.
     */
    claim(p, signal) {
      const promise = this.wait(p, signal, true, (cur) => {
        if (cur.waiters.some((w) => w.claim === true)) return;
        if (this.outbox.pending.get(cur.record.clientMsgId) === cur && !cur.foreign) void this.discard(cur.record.clientMsgId);
      });
      promise.catch(() => void 0);
      return promise;
    }
    /**
     * Waits for the outcome of the record `p` (a send call's wait when `claim`, else a
     * `whenSent`). When `signal` aborts first, the wait rejects with `aborted` and leaves the
     * record that holds it then (a waiter moves when another tab's record with the same key is
     * taken), and `aborted` is called with that record; a wait already settled is left alone.
     */
    wait(p, signal, claim, aborted) {
      const clientMsgId = p.record.clientMsgId;
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const cur = this.outbox.writing.get(clientMsgId) ?? this.outbox.pending.get(clientMsgId);
          const i = cur?.waiters.indexOf(waiter) ?? -1;
          if (cur === void 0 || i < 0) return;
          cur.waiters.splice(i, 1);
          reject(new ChatdError("aborted", "aborted"));
          aborted?.(cur);
        };
        const waiter = {
          resolve: (v) => {
            signal?.removeEventListener("abort", onAbort);
            resolve(v);
          },
          reject: (e) => {
            signal?.removeEventListener("abort", onAbort);
            reject(e);
          }
        };
        if (claim) waiter.claim = true;
        signal?.addEventListener("abort", onAbort, { once: true });
        p.waiters.push(waiter);
      });
    }
    /** Sends a failed outbox record again, with its same clientMsgId. */
    async retry(clientMsgId) {
      const p = this.outbox.pending.get(clientMsgId);
      if (p === void 0) throw new ChatdError("not_found", "no such outbox record");
      await this.takeOver(p);
      const promise = new Promise((resolve, reject) => p.waiters.push({ resolve, reject }));
      this.transmit(p);
      return promise;
    }
    /** Makes `p` this tab's pending record again (durably, other tabs told). */
    async takeOver(p) {
      const record = { ...p.record, state: "pending", owner: this.c.tabId };
      delete record.error;
      p.record = record;
      p.foreign = false;
      p.attempt = 0;
      await this.outbox.storage.put(record);
      this.outbox.broadcast({ t: "put", record });
      this.channels.changed(record.op.channelId);
    }
    /** A send made with the key of the failed record `p`: it is sent again, as by `retry` (a failed put fails it again). */
    revive(p) {
      this.takeOver(p).then(
        () => {
          this.transmit(p);
        },
        (e) => {
          this.fail(p, new ChatdError("internal", `outbox storage failed: ${String(e)}`));
        }
      );
    }
    /** Removes an outbox record; its waiters reject with `discarded`. */
    async discard(clientMsgId) {
      const p = this.outbox.pending.get(clientMsgId);
      if (p === void 0) return;
      this.outbox.pending.delete(clientMsgId);
      clearTimeout(p.retryTimer);
      for (const w of p.waiters) w.reject(new ChatdError("discarded", "discarded"));
      p.waiters = [];
      await this.outbox.storage.delete(this.c.userId, clientMsgId);
      this.outbox.broadcast({ t: "deleted", clientMsgId, op: p.record.op });
      this.channels.changed(p.record.op.channelId);
    }
    /** The outbox records in send order (this tab's and other tabs'). */
    records() {
      return sendOrder([...this.outbox.pending.values()].map((p) => p.record));
    }
    /** Waits for a record's outcome (see `ChatClient.whenSent`). */
    whenSent(clientMsgId, signal) {
      const p = this.outbox.pending.get(clientMsgId);
      if (p === void 0) return Promise.reject(new ChatdError("not_found", "no such outbox record"));
      if (signal?.aborted === true) return Promise.reject(new ChatdError("aborted", "aborted"));
      return this.wait(p, signal, false);
    }
    /**
     * A connection opened: send this tab's records, then those other tabs left behind
     * (reload, crash). Never rejects: a storage `load` that fails is tried again on the next
     * connection.
     */
    async resendAll() {
      this.pump();
      try {
        await this.outbox.load();
      } catch {
        return;
      }
      this.pump();
    }
    /**
     * A MSG_ACK arrived: its record is settled (or, not held any more, its entry is read).
     * Returns true when it stored a new message of this tab (a `MSG_SEND`, not a duplicate).
     */
    onAck(a) {
      const p = this.outbox.pending.get(a.clientMsgId);
      if (p === void 0) {
        const ch = this.channels.get(a.channelId);
        if (ch?.opened === true) {
          ch.log.noteLastSeq(a.seq);
          this.sync.catchUp(ch);
        }
        return false;
      }
      this.conn.features.confirmUpTo(p.frameNo);
      if (p.record.op.type !== "MSG_SEND") this.conn.features.confirm(p.record.op.type);
      const sent = {
        clientMsgId: a.clientMsgId,
        messageId: a.messageId,
        channelId: a.channelId,
        seq: a.seq,
        ts: a.ts,
        duplicate: a.duplicate
      };
      this.completed(p, sent);
      void this.outbox.storage.delete(this.c.userId, a.clientMsgId);
      this.outbox.broadcast({ t: "acked", clientMsgId: a.clientMsgId, ack: sent, op: p.record.op });
      return p.record.op.type === "MSG_SEND" && !a.duplicate;
    }
    /** An outbox record was ACKed (here or in another tab). */
    completed(p, sent) {
      this.outbox.pending.delete(p.record.clientMsgId);
      clearTimeout(p.retryTimer);
      const op = p.record.op;
      const ch = this.channels.ctx(sent.channelId);
      if (!sent.duplicate) this.channels.memberNow(ch);
      if (op.type === "MSG_SEND") {
        ch.sent.set(sent.clientMsgId, {
          clientMsgId: sent.clientMsgId,
          channelId: sent.channelId,
          body: op.body,
          state: "sent",
          seq: sent.seq,
          messageId: sent.messageId,
          error: void 0,
          createdAt: p.record.createdAt,
          ...op.replyTo !== void 0 ? { replyTo: op.replyTo } : {},
          ...op.threadId !== void 0 ? { threadId: op.threadId } : {},
          ...mentionFields(op),
          ...outgoingAttachments(op)
        });
      }
      const entry = {
        type: "MSG_RECV",
        messageId: sent.messageId,
        channelId: sent.channelId,
        senderId: this.c.userId,
        seq: sent.seq,
        ts: sent.ts,
        clientMsgId: sent.clientMsgId,
        ...op.type === "MSG_SEND" ? { kind: "message", body: op.body, ...replyFields(op, ch.log) } : op.type === "MSG_EDIT" ? { kind: "edit", body: op.body, targetId: op.messageId } : op.type === "MSG_DELETE" ? { kind: "delete", body: "", targetId: op.messageId } : { kind: "reaction", body: "", targetId: op.messageId, emoji: op.emoji, op: op.op }
      };
      if (sent.duplicate && !ch.log.has(sent.messageId)) {
        ch.log.noteLastSeq(sent.seq);
        if (ch.opened && ch.log.isStarted && sent.seq <= ch.log.high) {
        } else if (ch.opened) {
          this.sync.ingest(ch.id, op.type === "MSG_SEND" ? [entry] : [], false);
          this.sync.catchUp(ch);
        }
      } else {
        this.sync.ingest(ch.id, [entry], false);
        if (op.type === "MSG_SEND" && (op.attachments?.length ?? 0) > 0) this.attached?.sentWithAttachments(sent);
      }
      ch.store.invalidate();
      this.c.events.emit("acked", sent, p.record);
      for (const w of p.waiters) w.resolve(sent);
      p.waiters = [];
    }
    /**
     * An ERROR naming a clientMsgId arrived: when it is a held record's, it is retried
     * (retryable) or failed. Returns whether it was one.
     */
    onError(clientMsgId, err) {
      const p = this.outbox.pending.get(clientMsgId);
      if (p === void 0) return false;
      this.conn.features.confirmUpTo(p.frameNo);
      this.sendFailed(p, err);
      return true;
    }
    /** The channel of a held record (undefined when none is held under `clientMsgId`). */
    channelOf(clientMsgId) {
      return this.outbox.pending.get(clientMsgId)?.record.op.channelId;
    }
    /** The server does not know the frame type of record `clientMsgId` (`unknown_type`): it fails. */
    unsupported(clientMsgId, err) {
      const p = this.outbox.pending.get(clientMsgId);
      if (p !== void 0) this.fail(p, err);
    }
    /** Whether a record sent on the open connection has waited for its answer longer than `limitMs`. */
    stale(now, limitMs) {
      const open = this.conn.openGen;
      for (const p of this.outbox.pending.values()) {
        if (p.inflightConn !== 0 && p.inflightConn === open && now - (p.sentAt ?? now) > limitMs) return true;
      }
      return false;
    }
    /** The connection dropped: nothing is in flight (all is sent again after the next HELLO). */
    dropped() {
      for (const p of this.outbox.pending.values()) p.inflightConn = 0;
    }
    /** The client closed: no more retries; waiters reject with `closed` (the records stay stored). */
    close() {
      for (const p of this.outbox.pending.values()) {
        clearTimeout(p.retryTimer);
        for (const w of p.waiters) w.reject(new ChatdError("closed", "client closed"));
        p.waiters = [];
      }
    }
    transmit(p) {
      clearTimeout(p.retryTimer);
      p.retryTimer = void 0;
      this.pump();
    }
    /**
     * Sends every pending record of this tab that is not in flight on the current
     * connection, in send order; a channel's later records wait behind one that waits for
     * its retry, so a channel's messages are stored in the order they were sent.
     */
    pump() {
      if (this.conn.openGen === 0) return;
      const pending = this.outbox.pending;
      const blocked = /* @__PURE__ */ new Set();
      for (const r of sendOrder([...pending.values()].map((x) => x.record))) {
        const p = pending.get(r.clientMsgId);
        if (p === void 0 || p.foreign || p.record.state !== "pending") continue;
        const ch = p.record.op.channelId;
        if (blocked.has(ch)) continue;
        if (p.retryTimer !== void 0) {
          blocked.add(ch);
          continue;
        }
        if (p.inflightConn === this.conn.openGen) continue;
        const no = this.conn.send(frameOf(p.record));
        if (no === 0) return;
        p.inflightConn = this.conn.openGen;
        p.frameNo = no;
        p.sentAt = this.c.now();
      }
    }
    /**
     * A refusal of a record: retryable ones wait and go again with the same clientMsgId (slow
     * mode's, `reason: "slow_mode"`, exactly its `retryAfterMs`, without growing the backoff:
     * the server's time is exact); others (`muted`, `read_only`, `blocked`, …) fail it for good.
     */
    sendFailed(p, err) {
      if (err.retryable && err.reason === "slow_mode" && err.retryAfterMs !== void 0) {
        p.inflightConn = 0;
        clearTimeout(p.retryTimer);
        p.retryTimer = setTimeout(() => {
          p.retryTimer = void 0;
          this.pump();
        }, Math.max(1, err.retryAfterMs));
        return;
      }
      if (err.retryable) {
        p.inflightConn = 0;
        const delay = Math.max(
          backoffDelay(p.attempt++, { baseMs: 250, maxMs: 3e4, ...this.c.opts.retryBackoff }),
          err.retryAfterMs ?? 0
        );
        clearTimeout(p.retryTimer);
        p.retryTimer = setTimeout(() => {
          p.retryTimer = void 0;
          this.pump();
        }, delay);
        return;
      }
      this.fail(p, err);
    }
    fail(p, err) {
      p.inflightConn = 0;
      const record = { ...p.record, state: "failed", error: err.toJSON() };
      p.record = record;
      void this.outbox.storage.put(record);
      this.outbox.broadcast({ t: "put", record });
      this.channels.changed(record.op.channelId);
      for (const w of p.waiters) w.reject(err);
      p.waiters = [];
      this.c.events.emit("failed", record.clientMsgId, err);
    }
  };
  function replyFields(op, log) {
    const quoted = op.replyTo === void 0 ? void 0 : log.message(op.replyTo);
    return {
      ...op.replyTo !== void 0 ? { replyTo: op.replyTo } : {},
      ...quoted !== void 0 ? { replyPreview: quoted.deleted ? { senderId: quoted.senderId, body: "", deleted: true } : { senderId: quoted.senderId, body: cutUtf8(quoted.body) } } : {},
      ...op.threadId !== void 0 ? { threadId: op.threadId } : {},
      // as asked: the server keeps those who are members, which the ACK does not say; a read
      // of the entry has the mentions kept
      ...mentionFields(op),
      // without signed URLs (the ACK has none): the attachments module reads them next
      ...op.attachments !== void 0 && op.attachments.length > 0 ? { attachments: ackedAttachments(op.attachments) } : {}
    };
  }
  function conflict(clientMsgId) {
    return new ChatdError(
      "idempotency_conflict",
      `clientMsgId ${clientMsgId} is already in the outbox with another channel, body or option; nothing was sent`,
      { retryable: false }
    );
  }
  function frameOf(r) {
    const op = r.op;
    switch (op.type) {
      case "MSG_SEND":
        return {
          type: "MSG_SEND",
          channelId: op.channelId,
          clientMsgId: r.clientMsgId,
          body: op.body,
          ...op.replyTo !== void 0 ? { replyTo: op.replyTo } : {},
          ...op.threadId !== void 0 ? { threadId: op.threadId } : {},
          ...mentionFields(op),
          ...attachmentFields(op)
        };
      case "MSG_EDIT":
        return { type: "MSG_EDIT", clientMsgId: r.clientMsgId, messageId: op.messageId, body: op.body };
      case "MSG_DELETE":
        return { type: "MSG_DELETE", clientMsgId: r.clientMsgId, messageId: op.messageId };
      case "MSG_REACT":
        return { type: "MSG_REACT", clientMsgId: r.clientMsgId, messageId: op.messageId, emoji: op.emoji, op: op.op };
    }
  }

  // ../clients/typescript/src/sync.ts
  var Sync = class {
    c;
    conn;
    channels;
    receipts;
    syncs = /* @__PURE__ */ new Map();
    /** A channel's opening or catch-up read (or a thread's first read, keyed channel NUL root) refused with a retryable error: the timer that asks again. */
    retryTimers = /* @__PURE__ */ new Map();
    /** How many such refusals in a row, per key (the backoff's attempt). */
    retryAttempts = /* @__PURE__ */ new Map();
    /** Reads over the connection into the channels; appended entries are delivered receipts to be. */
    constructor(c, conn, channels, receipts) {
      this.c = c;
      this.conn = conn;
      this.channels = channels;
      this.receipts = receipts;
    }
    /** An opened channel after a (re)connection or a listing: open it, or catch it up; then its threads. */
    resume(ch) {
      if (ch.log.isStarted) this.catchUp(ch);
      else this.openChannel(ch);
      for (const t of ch.threads.values()) {
        this.openThread(ch, t);
        if (t.olderWaiters.length > 0) this.pumpThreadOlder(ch, t);
      }
    }
    /** Reads the newest replies of a thread not read yet (after its channel's reads, so as of a later seq). */
    openThread(ch, t) {
      if (this.conn.state !== "open" || t.log.isStarted || t.error !== void 0) return;
      if (this.syncQueue(ch.id).some((r) => r.kind === "thread" && r.thread === t)) return;
      const frame = { type: "SYNC", channelId: ch.id, threadId: t.log.rootId, afterSeq: 0, latest: true, limit: this.pageSize() };
      this.sendSync(ch, { kind: "thread", afterSeq: 0, thread: t }, frame);
    }
    /** Loads the page of a thread's replies below its oldest held one; resolves to whether even older ones exist. */
    threadOlder(ch, t, signal) {
      return new Promise((resolve, reject) => {
        if (signal?.aborted === true) {
          reject(new ChatdError("aborted", "aborted"));
          return;
        }
        if (t.log.isStarted && !t.log.hasOlder) {
          resolve(false);
          return;
        }
        const onAbort = () => {
          const i = t.olderWaiters.indexOf(done);
          if (i >= 0) t.olderWaiters.splice(i, 1);
          reject(new ChatdError("aborted", "aborted"));
        };
        const done = (err) => {
          signal?.removeEventListener("abort", onAbort);
          if (err !== void 0) reject(err);
          else resolve(t.log.hasOlder);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        t.olderWaiters.push(done);
        this.pumpThreadOlder(ch, t);
      });
    }
    pumpThreadOlder(ch, t) {
      if (this.conn.state !== "open" || t.loadingOlder) return;
      if (!t.log.isStarted) {
        this.openThread(ch, t);
        return;
      }
      const below = t.log.oldestSeq;
      if (!t.log.hasOlder || below === void 0) {
        for (const w of t.olderWaiters.splice(0)) w();
        return;
      }
      t.loadingOlder = true;
      const frame = { type: "SYNC", channelId: ch.id, threadId: t.log.rootId, afterSeq: 0, beforeSeq: below, limit: this.pageSize() };
      if (!this.sendSync(ch, { kind: "threadOlder", afterSeq: 0, thread: t }, frame)) t.loadingOlder = false;
    }
    /** The answer to a thread's read. */
    onThreadBatch(ch, req, b) {
      const t = req.thread;
      if (req.kind === "threadOlder") {
        t.loadingOlder = false;
        t.log.prepend(b.messages, b.lastSeq, b.hasMore);
        t.store.invalidate();
        for (const w of t.olderWaiters.splice(0)) w();
        return;
      }
      this.retryAttempts.delete(`${ch.id}\0${t.log.rootId}`);
      if (!t.log.start(b.messages, b.lastSeq, b.hasMore)) this.openThread(ch, t);
      t.store.invalidate();
      if (t.log.isStarted && t.olderWaiters.length > 0) this.pumpThreadOlder(ch, t);
    }
    /** Reads the newest page of an opened channel whose window is not placed yet. */
    openChannel(ch) {
      if (this.conn.state !== "open" || ch.log.isStarted) return;
      if (this.syncQueue(ch.id).some((r) => r.kind === "open")) return;
      const limit = this.pageSize();
      const afterSeq = Math.max(0, ch.log.knownLastSeq - limit);
      this.sendSync(ch, { kind: "open", afterSeq }, { type: "SYNC", channelId: ch.id, afterSeq, limit, latest: true });
    }
    /** Reads what is known to exist above the window (a gap, or what came while away). */
    catchUp(ch) {
      if (this.conn.state !== "open" || !ch.log.isStarted) return;
      if (ch.log.knownLastSeq <= ch.log.high) return;
      if (this.syncQueue(ch.id).some((r) => r.kind === "forward" || r.kind === "open")) return;
      const afterSeq = ch.log.high;
      this.sendSync(ch, { kind: "forward", afterSeq }, { type: "SYNC", channelId: ch.id, afterSeq, limit: 500 });
    }
    /**
     * Loads the page just below the window for `ch`'s `loadOlder` waiters. Resolves to
     * whether even older entries exist.
     */
    loadOlder(ch, signal) {
      return new Promise((resolve, reject) => {
        if (signal?.aborted === true) {
          reject(new ChatdError("aborted", "aborted"));
          return;
        }
        const onAbort = () => {
          const i = ch.olderWaiters.indexOf(done);
          if (i >= 0) ch.olderWaiters.splice(i, 1);
          reject(new ChatdError("aborted", "aborted"));
        };
        const done = (err) => {
          signal?.removeEventListener("abort", onAbort);
          if (err !== void 0) reject(err);
          else resolve(ch.log.hasOlder);
        };
        if (ch.log.isStarted && !ch.log.hasOlder) {
          resolve(false);
          return;
        }
        signal?.addEventListener("abort", onAbort, { once: true });
        ch.olderWaiters.push(done);
        this.pumpOlder(ch);
      });
    }
    /**
     * Reads the held window again (pages of SYNC from its bottom to its top), so that the
     * held messages the retention sweep has erased since (§19; no entry tells of it) show
     * `expired`. Resolves to how many became expired; rejects with `unavailable` when the
     * connection is not open or drops, or the SYNC's error.
     */
    recheck(ch) {
      return new Promise((resolve, reject) => {
        if (!ch.log.isStarted || ch.log.low > ch.log.high) {
          resolve(0);
          return;
        }
        const done = (err, n) => {
          if (err !== void 0) reject(err);
          else resolve(n ?? 0);
        };
        if (!this.recheckPage(ch, ch.log.low - 1, ch.log.high, 0, done)) reject(new ChatdError("unavailable", "not connected"));
      });
    }
    recheckPage(ch, afterSeq, through, expired2, done) {
      const limit = Math.min(500, Math.max(1, through - afterSeq));
      return this.sendSync(
        ch,
        { kind: "recheck", afterSeq, through, expired: expired2, done },
        { type: "SYNC", channelId: ch.id, afterSeq, beforeSeq: through + 1, limit }
      );
    }
    onRecheckBatch(ch, req, b) {
      const done = req.done;
      const n = (req.expired ?? 0) + ch.log.reread(b.messages);
      for (const t of ch.threads.values()) {
        if (t.log.reread(b.messages) > 0) t.store.invalidate();
      }
      if (n > 0) ch.store.invalidate();
      const through = req.through ?? 0;
      const last2 = b.messages.length > 0 ? b.messages[b.messages.length - 1] : void 0;
      if (last2 !== void 0 && last2.seq < through) {
        if (!this.recheckPage(ch, last2.seq, through, n, (err, m) => done?.(err, m))) done?.(new ChatdError("unavailable", "connection lost"));
        return;
      }
      done?.(void 0, n);
    }
    /** Reads the next older page when `loadOlder` calls wait for one (the window placed first). */
    pumpOlder(ch, fromSeq) {
      if (this.conn.state !== "open") return;
      if (!ch.log.isStarted) {
        this.openChannel(ch);
        return;
      }
      if (!ch.log.hasOlder) {
        const ws = ch.olderWaiters.splice(0);
        for (const w of ws) w();
        return;
      }
      if (ch.loadingOlder) return;
      const low = ch.log.low;
      const limit = Math.min(this.pageSize(), low - 1);
      const afterSeq = fromSeq ?? Math.max(0, low - 1 - limit);
      ch.loadingOlder = true;
      const sent = this.sendSync(
        ch,
        { kind: "older", afterSeq },
        { type: "SYNC", channelId: ch.id, afterSeq, beforeSeq: low, limit }
      );
      if (!sent) ch.loadingOlder = false;
    }
    /** A SYNC_BATCH arrived: the answer to the channel's oldest SYNC. */
    onBatch(b) {
      const ch = this.channels.ctx(b.channelId);
      const req = this.syncs.get(b.channelId)?.shift();
      if (req !== void 0) this.conn.features.confirmUpTo(req.frameNo);
      const kind = req?.kind ?? "forward";
      if (kind === "recheck" && req !== void 0) {
        this.onRecheckBatch(ch, req, b);
        return;
      }
      if (req?.thread !== void 0) {
        this.onThreadBatch(ch, { ...req, thread: req.thread }, b);
        return;
      }
      if (kind === "older") {
        ch.loadingOlder = false;
        const lowBefore = ch.log.low;
        const added = ch.log.prepend(b.messages, b.lastSeq);
        if (added.length > 0) this.c.events.emit("older", ch.id, added);
        ch.store.invalidate();
        const top = b.messages.length > 0 ? b.messages[b.messages.length - 1] : void 0;
        if (ch.log.low === lowBefore && top !== void 0 && top.seq < lowBefore - 1) {
          this.pumpOlder(ch, top.seq);
          return;
        }
        const ws = ch.olderWaiters.splice(0);
        for (const w of ws) w();
        return;
      }
      this.retryAttempts.delete(ch.id);
      if (kind === "open" && !ch.log.isStarted) {
        const first = b.messages[0];
        ch.log.start(first !== void 0 ? first.seq - 1 : req?.afterSeq ?? 0);
        ch.store.invalidate();
      }
      this.ingest(ch.id, b.messages, true, b.lastSeq);
      if (ch.olderWaiters.length > 0) this.pumpOlder(ch);
    }
    /**
     * Takes entries into a channel: an opened one's log (emitting `entries` for those
     * appended, catching up on a gap); a channel not opened only counts them (its last seq,
     * others' messages for the unread count). `fromRead`: they come from a SYNC_BATCH whose
     * `lastSeq` is `readLastSeq`.
     */
    ingest(channelId, entries, fromRead, readLastSeq) {
      const ch = this.channels.ctx(channelId);
      if (!ch.opened) {
        for (const e of entries) {
          const kind = entryKind(e);
          if (kind === "delete" && e.targetId !== void 0) {
            ch.liveUnread.delete(e.targetId);
            ch.liveMentions.delete(e.targetId);
          }
          if (e.seq > ch.log.knownLastSeq) {
            ch.log.noteLastSeq(e.seq);
            if (kind === "message" && e.senderId !== this.c.userId) {
              ch.liveUnread.set(e.messageId, e.seq);
              if (mentionsUser(e, this.c.userId)) ch.liveMentions.set(e.messageId, e.seq);
            }
          }
        }
        ch.store.invalidate();
        return;
      }
      const r = ch.log.ingest(entries, fromRead, readLastSeq);
      if (r.appended.length > 0) {
        for (const e of r.appended) {
          if (entryKind(e) === "message" && ch.typing.remove(e.senderId)) ch.store.invalidate();
        }
        const readAsOf = fromRead ? Math.max(readLastSeq ?? ch.log.knownLastSeq, 0) : void 0;
        for (const t of ch.threads.values()) {
          t.log.channelAppended(r.appended, readAsOf);
          t.store.invalidate();
        }
        this.c.events.emit("entries", ch.id, r.appended);
        this.receipts.scheduleDelivered();
      }
      ch.store.invalidate();
      if (r.gapAfter !== void 0) this.catchUp(ch);
    }
    /**
     * An ERROR naming the channel and no clientMsgId: the answer to its oldest SYNC, if one
     * waits (`forbidden`: the channel is gone for the user). Returns whether it was one.
     */
    onError(channelId, err) {
      const req = this.syncs.get(channelId)?.shift();
      if (req === void 0) return false;
      const ch = this.channels.ctx(channelId);
      if (req.kind === "recheck") req.done?.(err);
      if (req.kind === "older") {
        ch.loadingOlder = false;
        for (const w of ch.olderWaiters.splice(0)) w(err);
      }
      if ((req.kind === "open" || req.kind === "forward") && err.retryable) this.retryRead(ch, err);
      const t = req.thread;
      if (t !== void 0) {
        t.loadingOlder = false;
        if (req.kind === "thread" && err.retryable) this.retryRead(ch, err, t);
        else if (req.kind === "thread") t.error = err.toJSON();
        for (const w of t.olderWaiters.splice(0)) w(err);
        t.store.invalidate();
      }
      if (err.code === "forbidden") this.channels.markRemoved(ch);
      ch.store.invalidate();
      return true;
    }
    /**
     * An ERROR naming only a message (no channel, no clientMsgId): the answer to a thread's
     * read of that root, when one is the oldest SYNC of its channel. Returns whether it was one.
     */
    onThreadError(messageId, err) {
      for (const [channelId, q] of this.syncs) {
        const head = q[0];
        if (head?.thread !== void 0 && head.thread.log.rootId === messageId) return this.onError(channelId, err);
      }
      return false;
    }
    /** Whether a SYNC has waited for its answer longer than `limitMs`. */
    stale(now, limitMs) {
      for (const q of this.syncs.values()) for (const r of q) if (now - r.sentAt > limitMs) return true;
      return false;
    }
    /**
     * Asks a channel's refused opening or catch-up read (with `thread`: that thread's first
     * read) again after a backoff
     * (`retryBackoff`, at least the ERROR's `retryAfterMs`), on the same connection; one
     * timer per channel. A reconnect meanwhile asks by itself (HELLO resumes the channel).
     */
    retryRead(ch, err, thread) {
      const key2 = thread === void 0 ? ch.id : `${ch.id}\0${thread.log.rootId}`;
      if (this.retryTimers.has(key2)) return;
      const attempt = this.retryAttempts.get(key2) ?? 0;
      this.retryAttempts.set(key2, attempt + 1);
      const delay = Math.max(backoffDelay(attempt, { baseMs: 250, maxMs: 3e4, ...this.c.opts.retryBackoff }), err.retryAfterMs ?? 0);
      const gen = this.conn.openGen;
      const timer = setTimeout(() => {
        this.retryTimers.delete(key2);
        if (this.conn.openGen !== gen || !ch.opened || ch.removed) return;
        if (thread !== void 0) this.openThread(ch, thread);
        else if (ch.log.isStarted) this.catchUp(ch);
        else this.openChannel(ch);
      }, delay);
      this.retryTimers.set(key2, timer);
    }
    /** The client closed: no read is asked again. */
    close() {
      for (const t of this.retryTimers.values()) clearTimeout(t);
      this.retryTimers.clear();
    }
    /** The connection dropped: no SYNC on it will be answered (they are sent again after HELLO). */
    dropped() {
      for (const t of this.retryTimers.values()) clearTimeout(t);
      this.retryTimers.clear();
      const lost = [...this.syncs.values()].flat().filter((r) => r.kind === "recheck");
      this.syncs.clear();
      for (const r of lost) r.done?.(new ChatdError("unavailable", "connection lost"));
      for (const ch of this.channels.all()) {
        ch.loadingOlder = false;
        for (const t of ch.threads.values()) t.loadingOlder = false;
      }
    }
    syncQueue(channelId) {
      let q = this.syncs.get(channelId);
      if (q === void 0) {
        q = [];
        this.syncs.set(channelId, q);
      }
      return q;
    }
    sendSync(ch, req, frame) {
      const no = this.conn.send(frame);
      if (no === 0) return false;
      this.syncQueue(ch.id).push({ ...req, frameNo: no, sentAt: this.c.now() });
      return true;
    }
    pageSize() {
      return Math.min(500, Math.max(1, this.c.opts.pageSize ?? 50));
    }
  };

  // ../clients/typescript/src/typing-indicators.ts
  var TypingIndicators = class {
    c;
    conn;
    channels;
    /** Indicators of the channels, sent and received on the connection. */
    constructor(c, conn, channels) {
      this.c = c;
      this.conn = conn;
      this.channels = channels;
    }
    /** The user is typing in the channel: sends `start` at most once per throttle period (none in a removed channel). */
    typing(channelId) {
      const ch = this.channels.ctx(channelId);
      if (this.conn.features.unsupported.has("TYPING") || ch.removed) return;
      if (ch.throttle.onInput(this.c.now())) this.conn.send({ type: "TYPING", channelId, state: "start" });
    }
    /** The user stopped typing (cleared the input): sends `stop` if a `start` is live. */
    stopTyping(channelId) {
      const ch = this.channels.ctx(channelId);
      if (this.conn.features.unsupported.has("TYPING") || ch.removed) return;
      if (ch.throttle.onStop()) this.conn.send({ type: "TYPING", channelId, state: "stop" });
    }
    /** The user sends a message to the channel: the server stops the indicator when it is stored. */
    messageSent(channelId) {
      this.channels.ctx(channelId).throttle.onSent();
    }
    /**
     * A message of the user was stored in the channel (its ACK): if the user typed since
     * sending, `start` goes out again, since the server's `stop` for the message ends a
     * `start` that reached it before the message was stored.
     */
    messageStored(channelId) {
      const ch = this.channels.ctx(channelId);
      if (this.conn.features.unsupported.has("TYPING") || ch.removed) return;
      if (ch.throttle.onStored(this.c.now())) this.conn.send({ type: "TYPING", channelId, state: "start" });
    }
    /** A TYPING arrived: another member's indicator starts or stops. */
    onTyping(t) {
      this.conn.features.confirm("TYPING");
      if (t.userId === this.c.userId) return;
      const ch = this.channels.ctx(t.channelId);
      if (ch.typing.apply(t, this.c.now())) ch.store.invalidate();
      this.scheduleExpiry(ch);
    }
    /** The connection dropped: no indicator is known to be live any more. */
    dropped() {
      for (const ch of this.channels.all()) {
        ch.typing.expire(Number.POSITIVE_INFINITY);
        ch.store.invalidate();
      }
    }
    /** The client closed: no more expiry timers. */
    close() {
      for (const ch of this.channels.all()) clearTimeout(ch.typingTimer);
    }
    scheduleExpiry(ch) {
      clearTimeout(ch.typingTimer);
      const next = ch.typing.nextExpiry();
      if (next === void 0) return;
      ch.typingTimer = setTimeout(
        () => {
          if (ch.typing.expire(this.c.now())) ch.store.invalidate();
          this.scheduleExpiry(ch);
        },
        Math.max(0, next - this.c.now()) + 5
      );
    }
  };

  // ../clients/typescript/src/client-parts.ts
  var ClientParts = class {
    /** The client's context. */
    c;
    /** The WebSocket session. */
    conn;
    /** Per-channel state, snapshots, membership, the channel list. */
    channels;
    /** `MSG_READ` and `MSG_DELIVERED` out, `RECEIPT` in. */
    receipts;
    /** `SYNC`: channels' and threads' reads. */
    sync;
    /** The outbox records this tab holds. */
    tabOutbox;
    /** The send path. */
    sender;
    /** Typing both ways. */
    typingIndicators;
    /** The presence subscription. */
    presenceSub;
    /** `GET /v1/me/channels`. */
    refresher;
    /** The members routes. */
    memberRoutes;
    /** The live member lists. */
    memberLists;
    /** The directory, joining and leaving. */
    dir;
    /** New group and direct channels. */
    newChannels;
    /** Search. */
    finder;
    /** Moderation's routes. */
    moderation;
    /** Attachments' routes. */
    attachments;
    router;
    /**
     * Makes the context (the user id from the options or the token, when there) and the
     * parts; `send` is the client's (attachments' `sendFiles` sends through it).
     */
    constructor(options, events, send) {
      const uid = options.userId ?? (typeof options.token === "string" ? jwtSubject(options.token) : void 0);
      const c = {
        opts: options,
        now: options.now ?? Date.now,
        tabId: crypto.randomUUID(),
        events,
        userId: uid ?? ""
      };
      this.c = c;
      const conn = new Connection(c, {
        frame: (text, gen) => {
          this.router.onFrame(text, gen);
        },
        dropped: () => {
          this.sync.dropped();
          this.presenceSub.dropped();
          this.typingIndicators.dropped();
          this.sender.dropped();
        },
        stale: (now, limitMs) => this.sender.stale(now, limitMs) || this.sync.stale(now, limitMs)
      });
      this.conn = conn;
      const channels = new Channels(c, () => this.tabOutbox.records());
      this.channels = channels;
      this.tabOutbox = new TabOutbox(c, conn, channels, {
        acked: (p, ack) => {
          this.sender.completed(p, ack);
        },
        adopted: () => {
          void this.sender.resendAll();
        }
      });
      this.receipts = new Receipts(c, conn, channels);
      this.sync = new Sync(c, conn, channels, this.receipts);
      this.attachments = new Attachments(c, conn, channels, send);
      this.sender = new Sender(c, conn, channels, this.sync, this.tabOutbox, this.attachments);
      this.typingIndicators = new TypingIndicators(c, conn, channels);
      this.presenceSub = new PresenceSubscription(c, conn);
      this.refresher = new ChannelRefresh(c, conn, channels, this.sync);
      this.memberRoutes = new Members(c, conn, channels);
      this.memberLists = new MemberLists(c, {
        readAll: (channelId, signal) => this.memberRoutes.all(channelId, { signal }),
        openConn: () => conn.openGen,
        closed: () => conn.state === "closed"
      });
      this.dir = new Directory(c, conn, channels, this.refresher);
      this.newChannels = new NewChannels(c, conn, this.refresher);
      this.finder = new Search(c, conn);
      this.moderation = new Moderation(c, conn, channels.moderation);
      this.router = new FrameRouter(this);
    }
    /**
     * Reads the user id from the token when it is not known yet, loads the outbox, joins the
     * other tabs and connects.
     */
    async start() {
      if (this.c.userId === "") {
        const t = await this.conn.getToken();
        this.c.userId = jwtSubject(t) ?? "";
        if (this.c.userId === "") throw new ChatdError("invalid_field", "userId: not given and not in the token");
      }
      if (this.c.opts.tabSync !== false) this.tabOutbox.joinTabs();
      await this.tabOutbox.load();
      this.conn.start();
    }
    /** Closes the connection and every part that holds timers, listeners or waiters. */
    close() {
      this.conn.close();
      this.sync.close();
      this.presenceSub.close();
      this.receipts.close();
      this.sender.close();
      this.typingIndicators.close();
      this.memberLists.close();
      this.channels.moderation.close();
      this.tabOutbox.close();
    }
  };

  // ../clients/typescript/src/threads.ts
  var ThreadLog = class {
    /** The channel. */
    channelId;
    /** The root's message id. */
    rootId;
    msgs;
    /** The channel's entries up to this seq are in the states (once started). */
    through = 0;
    /** The first read must be as of this seq at least: the channel's log held up to it when the thread was opened. */
    minThrough;
    started = false;
    older = false;
    oldest = Number.POSITIVE_INFINITY;
    /** The channel's entries appended before the first read came, with the seq their state is as of. */
    buffer = [];
    /** A thread whose first read must be as of `minThrough` or later. */
    constructor(channelId, rootId, me, minThrough) {
      this.channelId = channelId;
      this.rootId = rootId;
      this.minThrough = minThrough;
      this.msgs = new MessageStates(me, false);
    }
    /** True once the first read was taken. */
    get isStarted() {
      return this.started;
    }
    /** True while older replies can be read. */
    get hasOlder() {
      return this.started && this.older;
    }
    /** The seq of the oldest reply held (for reading the page below it); undefined when none. */
    get oldestSeq() {
      return Number.isFinite(this.oldest) ? this.oldest : void 0;
    }
    /** The replies held, in seq order, folded. The same array until something changes. */
    messages() {
      return this.msgs.messages();
    }
    /** Replaces a held reply's attachments with a read's (see {@link MessageStates.setAttachments}). */
    setAttachments(messageId, attachments) {
      return this.msgs.setAttachments(messageId, attachments);
    }
    /**
     * The first read (`latest`): its replies, as of `lastSeq`; `hasMore`: older ones exist.
     * Returns false, taking nothing, when the read is older than what the channel held when
     * the thread was opened: it must be made again.
     */
    start(entries, lastSeq, hasMore) {
      if (this.started) return true;
      const asOf = lastSeq ?? Math.max(0, ...entries.map((e) => e.seq));
      if (asOf < this.minThrough) return false;
      this.started = true;
      this.through = asOf;
      this.older = hasMore;
      this.take(entries, asOf);
      const waiting = this.buffer;
      this.buffer = [];
      this.channelAppended(waiting.map(([e]) => e), void 0, waiting.map(([, a]) => a));
      return true;
    }
    /** An older page (`beforeSeq`): its replies below the oldest held, as of `lastSeq`. Returns those taken. */
    prepend(entries, lastSeq, hasMore) {
      this.older = hasMore;
      const asOf = lastSeq ?? this.through;
      return this.take(
        entries.filter((e) => e.seq < this.oldest),
        asOf
      );
    }
    /**
     * Entries the channel's log appended, in seq order (each once). `readAsOf`: they came from
     * a read whose states are as of that seq (undefined: live). `asOfs`: per entry instead.
     */
    channelAppended(entries, readAsOf, asOfs) {
      entries.forEach((e, i) => {
        const asOf = asOfs === void 0 ? readAsOf : asOfs[i];
        if (!this.started) {
          this.buffer.push([e, asOf]);
          return;
        }
        if (e.seq <= this.through) return;
        this.through = e.seq;
        if (entryKind(e) === "message") {
          if (e.threadId !== this.rootId || this.msgs.has(e.messageId)) return;
          this.msgs.addMessage(e, Math.max(asOf ?? e.seq, e.seq), e.reactions === void 0, true);
          if (e.seq < this.oldest) this.oldest = e.seq;
        } else {
          this.msgs.modify(e);
        }
      });
    }
    /** Held replies that a read of the channel shows expired (§19) become so; returns how many. */
    reread(entries) {
      let n = 0;
      for (const e of entries) if (entryKind(e) === "message" && this.msgs.expire(e)) n++;
      return n;
    }
    /** Takes a read's replies of this thread not held yet, as of `asOf`. */
    take(entries, asOf) {
      const taken = [];
      for (const e of [...entries].sort((a, b) => a.seq - b.seq)) {
        if (entryKind(e) !== "message") continue;
        if (this.msgs.has(e.messageId)) {
          this.msgs.expire(e);
          continue;
        }
        if (e.threadId !== this.rootId) continue;
        this.msgs.addMessage(e, Math.max(asOf, e.seq), false, false);
        if (e.seq < this.oldest) this.oldest = e.seq;
        taken.push(e);
      }
      return taken;
    }
  };
  function newThread(ch, rootId, me, outbox) {
    const log = new ThreadLog(ch.log.channelId, rootId, me, ch.log.isStarted ? ch.log.high : 0);
    let last2;
    const t = {
      log,
      error: void 0,
      olderWaiters: [],
      loadingOlder: false,
      store: new LazyStore(() => {
        const next = buildThreadSnapshot(t, ch, me, outbox());
        if (last2 !== void 0 && sameSnapshot(last2, next)) return last2;
        last2 = next;
        return next;
      })
    };
    return t;
  }
  function buildThreadSnapshot(t, ch, me, records) {
    const messages = t.log.messages();
    const rootId = t.log.rootId;
    const mine = /* @__PURE__ */ new Set();
    for (const m of messages) if (m.senderId === me && m.clientMsgId !== void 0) mine.add(m.clientMsgId);
    const outgoing = [];
    const seen = /* @__PURE__ */ new Set();
    for (const r of records) {
      if (r.op.type !== "MSG_SEND" || r.op.channelId !== ch.log.channelId || r.op.threadId !== rootId || mine.has(r.clientMsgId)) continue;
      seen.add(r.clientMsgId);
      const sent = ch.sent.get(r.clientMsgId);
      outgoing.push(
        Object.freeze({
          clientMsgId: r.clientMsgId,
          channelId: ch.log.channelId,
          body: r.op.body,
          state: sent !== void 0 ? "sent" : r.state,
          seq: sent?.seq,
          messageId: sent?.messageId,
          error: r.error,
          createdAt: r.createdAt,
          threadId: rootId,
          ...r.op.replyTo !== void 0 ? { replyTo: r.op.replyTo } : {},
          ...mentionFields(r.op),
          ...outgoingAttachments(r.op)
        })
      );
    }
    for (const s of ch.sent.values()) {
      if (s.threadId === rootId && !seen.has(s.clientMsgId) && !mine.has(s.clientMsgId)) outgoing.push(s);
    }
    outgoing.sort((a, b) => a.createdAt - b.createdAt);
    const status = ch.removed ? "removed" : t.error !== void 0 ? "failed" : t.log.isStarted ? "ready" : "loading";
    return Object.freeze({
      channelId: ch.log.channelId,
      rootId,
      status,
      error: t.error,
      root: ch.log.message(rootId),
      messages,
      outgoing: Object.freeze(outgoing),
      hasOlder: t.log.hasOlder
    });
  }
  function sameSnapshot(a, b) {
    return a.status === b.status && a.error === b.error && a.root === b.root && a.messages === b.messages && a.hasOlder === b.hasOlder && a.outgoing.length === b.outgoing.length && a.outgoing.every((o, i) => {
      const p = b.outgoing[i];
      return p !== void 0 && o.clientMsgId === p.clientMsgId && o.state === p.state && o.seq === p.seq && o.error === p.error;
    });
  }

  // ../clients/typescript/src/client.ts
  var ChatClient = class {
    /** Typed events. */
    events = new Emitter();
    /** The connection's store (state, session, unsupported features). */
    connection;
    /** Presence of the users of {@link ChatClient.subscribePresence}; keyed by user id. */
    presence;
    /**
     * The user's channels ({@link ChatClient.channelIds}) sorted by id, each with its unread
     * count, without opening any of them: a channel list for the app's sidebar. The same
     * array until a summary changed.
     */
    channelList;
    /**
     * Moderation (protocol §17): an owner's or moderator's `mute`, `ban`, `liftBan`, `bans`,
     * `setChannelSettings` and `deleteAnyMessage`, and any user's `block`, `unblock`,
     * `blocks` and `flag`. See {@link Moderation}.
     */
    moderation;
    /** Attachments (protocol §15): `upload`, `sendFiles`, `url` and `download`. See {@link Attachments}. */
    attachments;
    p;
    started = false;
    /** Creates a client; nothing happens until {@link ChatClient.start}. */
    constructor(options) {
      this.p = new ClientParts(options, this.events, (id, body, o) => this.send(id, body, o));
      this.moderation = this.p.moderation;
      this.attachments = this.p.attachments;
      this.connection = this.p.conn.store;
      this.presence = this.p.presenceSub.store;
      this.channelList = this.p.channels.list;
    }
    /** The user id. */
    get userId() {
      return this.p.c.userId;
    }
    /**
     * Loads the outbox, joins the other tabs and connects. Resolves once the outbox is
     * loaded (not when connected: see {@link ChatClient.whenOpen}).
     */
    async start() {
      if (this.started) return;
      this.started = true;
      await this.p.start();
    }
    /** Resolves when a session is open (HELLO received); rejects on abort or close. */
    whenOpen(signal) {
      return this.p.conn.whenOpen(signal);
    }
    /** Closes the connection for good. Outbox records stay in storage for the next start. */
    close() {
      this.p.close();
    }
    /** Drops the current connection at once (as a network failure would); the client reconnects. */
    reconnect() {
      this.p.conn.reconnect();
    }
    // ---------------------------------------------------------------- channels
    /** The store of one channel (opened on its newest entries when first asked for). */
    channel(channelId) {
      const ch = this.p.channels.ctx(channelId);
      if (!ch.opened) {
        ch.opened = true;
        this.p.sync.openChannel(ch);
      }
      return new ChannelStore(this, channelId, ch.store);
    }
    /**
     * The store of one thread (protocol §14): the replies of root `rootId` in `channelId`,
     * each once and in seq order, with the user's unsent replies in `outgoing` and the root
     * (with its `thread` summary) when the channel's window holds it. Opens the channel too
     * (the thread takes its live replies, and the edits, deletes and reactions of its
     * replies, from the channel's gapless log), then reads the thread's newest page (`SYNC`
     * with `threadId` and `latest`); `loadOlder` reads the page below. The same store for the
     * same thread. A root the server refuses (`not_found`, `invalid_field`) makes the
     * snapshot `failed` with the error. Send into it with
     * `send(channelId, body, { threadId: rootId })` (or the store's `send`).
     */
    thread(channelId, rootId) {
      this.channel(channelId);
      const ch = this.p.channels.ctx(channelId);
      let t = ch.threads.get(rootId);
      if (t === void 0) {
        t = newThread(ch, rootId, this.userId, () => this.p.tabOutbox.records());
        ch.threads.set(rootId, t);
        this.p.sync.openThread(ch, t);
      }
      const ctx = t;
      return {
        subscribe: ctx.store.subscribe,
        getSnapshot: ctx.store.getSnapshot,
        loadOlder: (signal) => this.p.sync.threadOlder(ch, ctx, signal),
        send: (body, options = {}) => this.send(channelId, body, { ...options, threadId: rootId })
      };
    }
    /**
     * Channel ids from the last HELLO, and the `CHANNEL_ADDED`s, `CHANNEL_REMOVED`s, live
     * messages and {@link ChatClient.refreshChannels} since.
     */
    channelIds() {
      return this.p.channels.ids();
    }
    /**
     * Reads the user's channels (`GET /v1/me/channels`, with the connection's token) and
     * brings the list up to date: adds the channels the user is in and the list lacks,
     * marks removed those it is no longer in, refreshes unread counts. Not needed to follow
     * membership with a server of version 1.2, which says so on the connection
     * (`CHANNEL_ADDED`, `CHANNEL_REMOVED`; the client never reads this by itself but once
     * after a join, a new channel or direct channel whose `CHANNEL_ADDED` has not come by
     * its answer); for a server before it, or an app's own "reload" button. Resolves to
     * {@link ChatClient.channelList}'s new snapshot; rejects with a ChatdError
     * (`unavailable` when the server cannot be reached, `aborted`, or the route's error
     * code).
     */
    refreshChannels(signal) {
      return this.p.refresher.refresh(signal);
    }
    /**
     * Reads one page of a channel's members (`GET /v1/channels/{channelId}/members`, with
     * the connection's token, like {@link ChatClient.refreshChannels}): up to `limit`
     * members (1 to 500; default 100) whose user id comes after `after`, in byte order of
     * the user id, each with its `role` and its `deliveredSeq` and `readSeq` watermarks, so
     * that "read by" can be shown on opening a channel without waiting for live
     * `RECEIPT`s. `hasMore`: ask again with `after` set to the last `userId`; `atSeq`: the
     * channel's last seq when the page was read. Needs no open connection (only the token).
     *
     * Rejects with a ChatdError: `forbidden` when the user is not a member of the channel
     * (or it does not exist), `invalid_field` for a bad `after` or `limit` (`field` names
     * it), `not_found` from a server without the route (before protocol 1.2), `unavailable`
     * when the server cannot be reached, `aborted`, `closed` after {@link ChatClient.close}.
     *
     * @example
     * ```ts
     * const { members, hasMore } = await client.members('room1', { limit: 50 });
     * for (const m of members) console.log(m.userId, m.role, `read up to ${m.readSeq}`);
     * ```
     */
    members(channelId, options = {}) {
      return this.p.memberRoutes.page(channelId, options);
    }
    /**
     * Reads every member of a channel: {@link ChatClient.members} page after page
     * (`pageSize` per request, default 500) until `hasMore` is false. The list is in byte
     * order of the user id; its `atSeq` is the lowest of the pages' (membership changes
     * made while paging may show in later pages only). Rejects as `members` does.
     */
    allMembers(channelId, options = {}) {
      return this.p.memberRoutes.all(channelId, options);
    }
    /**
     * A channel's member list kept live (protocol 1.2 §13.3): {@link ChatClient.allMembers}
     * read when first asked for, with every `MEMBER` frame received since folded onto it
     * (joins, leaves, removals, bans, roles) and the members' watermarks moved by
     * `RECEIPT`s. Frames the read already shows (`afterSeq` below its `atSeq`) are not
     * folded again. Read again after every reconnect (frames sent while away are lost; a
     * list nobody subscribes to then is read on its next subscribe or call) and when the
     * user is added back to the channel; `removed` (and empty) while the user is not in it.
     * One store per channel: the same object for every call.
     *
     * @example
     * ```ts
     * const list = client.memberList('room1');
     * list.subscribe(() => {
     *   const { status, members } = list.getSnapshot();
     *   if (status === 'ready') render(members.map((m) => `${m.userId} (${m.role})`));
     * });
     * ```
     */
    memberList(channelId) {
      return this.p.memberLists.get(channelId);
    }
    /**
     * Reads one page of the directory of public channels (`GET /v1/directory`, protocol
     * §13.2, with the connection's token like {@link ChatClient.refreshChannels}): up to
     * `limit` (1 to 500; default 100) public group channels whose id comes after `after`,
     * in byte order of the channel id, each with its `name`, `memberCount` and `lastSeq`;
     * with `q`, only those whose id or name holds it, case-insensitively. Private and direct
     * channels never appear. `hasMore`: ask again with `after` set to the last `channelId`.
     * Needs no open connection (only the token).
     *
     * Rejects with a ChatdError: `invalid_field` for a bad `q`, `after` or `limit` (`field`
     * names it), `not_found` from a server without the route (before protocol 1.2),
     * `unavailable`, `aborted`, `closed` after {@link ChatClient.close}.
     *
     * @example
     * ```ts
     * const { channels, hasMore } = await client.directory({ q: 'help', limit: 20 });
     * for (const c of channels) console.log(c.name ?? c.channelId, `${c.memberCount} members`);
     * ```
     */
    directory(options = {}) {
      return this.p.dir.page(options);
    }
    /**
     * One page of search results (`GET /v1/me/search`, protocol §18): the messages of the
     * user's channels (or of `channelId`) holding every term of `q`, newest first, as
     * render-ready {@link Message}s; `next` is the `before` of the page after. Errors and
     * details: {@link Search.page}.
     */
    search(q, options = {}) {
      return this.p.finder.page(q, options);
    }
    /** Every page of a search, read as the loop asks, following `next` ({@link Search.pages}). */
    searchPages(q, options = {}) {
      return this.p.finder.pages(q, options);
    }
    /**
     * Joins a public channel (`PUT /v1/me/channels/{channelId}`, protocol §13.2; also when
     * the user is a member already), then reads the channel list at once (as
     * {@link ChatClient.refreshChannels} does), so that the channel is in
     * {@link ChatClient.channelList} (`channelAdded`) when this resolves. Its messages
     * arrive from then on: live ones on this connection (counted as unread until the
     * channel is opened), and an opened channel (one {@link ChatClient.channel} was called
     * for, before or after) reads its newest page. When the list cannot be read, the channel
     * is listed all the same (a public group, the user a `member`) until its `CHANNEL_ADDED`
     * or the next `HELLO`. (With a server of version 1.2 the list is read only when its
     * `CHANNEL_ADDED` has not come by the join's answer.)
     *
     * Rejects with a ChatdError: `forbidden` for a private or direct channel (or one that
     * does not exist: the same answer), `invalid_field` for a bad channel id, `not_found`
     * from a server before protocol 1.2, `unavailable`, `aborted`, `closed`.
     */
    join(channelId, options = {}) {
      return this.p.dir.join(channelId, options);
    }
    /**
     * Leaves a channel (`DELETE /v1/me/channels/{channelId}`, protocol §13.2; also when the
     * user is not a member, or the channel does not exist): the channel leaves
     * {@link ChatClient.channelList} at once (`channelRemoved` with reason `left`; an opened
     * channel's snapshot becomes `removed`). A send to it after this is refused with
     * `forbidden`.
     *
     * Rejects with a ChatdError: `forbidden` for a direct channel (it cannot be left),
     * `invalid_field` for a bad channel id, `not_found` from a server before protocol 1.2,
     * `unavailable`, `aborted`, `closed`.
     */
    leave(channelId, options = {}) {
      return this.p.dir.leave(channelId, options);
    }
    /**
     * Opens the one direct channel of the user and `userId` (`PUT /v1/me/direct/{userId}`,
     * protocol §13.2): made by this call when there is none (`created: true`, HTTP 201),
     * else the same channel as before, whoever of the two made it (`created: false`, 200).
     * Its id is the server's; it is `direct` and private, its members the two users (the
     * user alone when `userId` is the user's own id); it cannot be left and no one is added
     * to it. The channel list is read at once after it (as {@link ChatClient.join} does), so
     * that the channel is in {@link ChatClient.channelList} when this resolves; open it with
     * {@link ChatClient.channel}.
     *
     * Rejects with a ChatdError: `forbidden` with `reason` `dm_policy` when the server's
     * `dm_policy` does not allow a new direct channel with this user, `invalid_field` for a
     * bad user id, `not_found` from a server before protocol 1.2, `unavailable`, `aborted`,
     * `closed`.
     *
     * @example
     * ```ts
     * const { channel } = await client.direct('bob');
     * const room = client.channel(channel.channelId);
     * await room.send('hi bob');
     * ```
     */
    direct(userId, options = {}) {
      return this.p.newChannels.direct(userId, options);
    }
    /**
     * Creates a group channel with the user as its `owner` and `members` as `member`s (`POST
     * /v1/me/channels`, protocol §13.2), `private` unless `visibility` says `public`, with
     * the id given or one the server chooses. Resolves to its channel object (HTTP 201) once
     * the channel list has been read again, so that it is in {@link ChatClient.channelList}
     * (the user's `role` `owner`).
     *
     * Rejects with a ChatdError: `conflict` when the id is taken, `forbidden` when the server
     * does not let users create channels (`user_channel_creation` off), `invalid_field` for a
     * bad id, name, visibility or member (`field` names it), `not_found` from a server
     * before protocol 1.2, `unavailable`, `aborted`, `closed`.
     */
    createChannel(options = {}) {
      return this.p.newChannels.create(options);
    }
    /**
     * Adds `userId` to a channel (`PUT /v1/channels/{channelId}/members/{userId}`, protocol
     * §13.1), with the user's token: the user must be an `owner` or `moderator` of it. A new
     * member is a `member` unless `role` says otherwise; an existing one keeps its role
     * unless `role` is given (also fine when it is a member already). A moderator may add
     * `member`s only; any other role, or changing an existing member's, needs an owner (see
     * {@link ChatClient.setMemberRole}). The server's `MEMBER` frame brings the change to
     * the channel list (member count) and to {@link ChatClient.memberList}.
     *
     * Rejects with a ChatdError: `forbidden` when the user's role does not allow it, the user
     * is not a member of the channel (or it does not exist), or it is a direct channel;
     * `invalid_field` for a bad id or role; `unavailable`, `aborted`, `closed`.
     */
    addMember(channelId, userId, options = {}) {
      return this.p.memberRoutes.put(channelId, userId, options.role, options);
    }
    /**
     * Sets the role of a member of a channel (`member`, `moderator` or `owner`; `PUT
     * /v1/channels/{channelId}/members/{userId}` with `{"role"}`): only an `owner` of the
     * channel may. A user who is not a member yet is added with that role. Rejects as
     * {@link ChatClient.addMember} does.
     */
    setMemberRole(channelId, userId, role, options = {}) {
      return this.p.memberRoutes.put(channelId, userId, role, options);
    }
    /**
     * Removes `userId` from a channel (`DELETE /v1/channels/{channelId}/members/{userId}`;
     * also fine when it is not a member): an `owner` may remove anyone, a `moderator` only
     * `member`s. The user's own removal takes the channel from
     * {@link ChatClient.channelList} at once, as {@link ChatClient.leave} does (reason
     * `removed`). Rejects as {@link ChatClient.addMember} does.
     */
    removeMember(channelId, userId, options = {}) {
      return this.p.memberRoutes.remove(channelId, userId, options);
    }
    /**
     * Loads the page of entries just below the oldest held one. Resolves to whether even
     * older entries exist.
     */
    loadOlder(channelId, signal) {
      const ch = this.p.channels.ctx(channelId);
      if (!ch.opened) this.channel(channelId);
      return this.p.sync.loadOlder(ch, signal);
    }
    /**
     * Reads the channel's held window again so that messages the retention sweep erased
     * since they were read (protocol §19: no entry tells of an expiry; clients learn of it
     * at their next read) show `deleted` and `expired` in its snapshot and open threads.
     * Resolves to how many held messages became expired; rejects with a ChatdError
     * (`unavailable` when the connection is not open or drops meanwhile, or the SYNC's error).
     */
    recheckExpired(channelId) {
      const ch = this.p.channels.ctx(channelId);
      if (!ch.opened) this.channel(channelId);
      return this.p.sync.recheck(ch);
    }
    /** Marks the channel read up to its newest held entry (monotonic: never moves back). */
    markRead(channelId) {
      this.p.receipts.markRead(channelId);
    }
    // ---------------------------------------------------------------- sending
    /**
     * Sends a message. Resolves on its MSG_ACK (also `duplicate: true`); rejects with a
     * ChatdError when it failed. `options.replyTo` quotes a message and `options.threadId`
     * puts it in a thread (protocol §14); both are kept in the durable outbox record with
     * the body, so a retry (after a reload or crash too) sends the same frame with the same
     * clientMsgId. A refused reply fails like any send: `not_found` (the quoted message or
     * root is unknown or deleted), `invalid_field` naming the field (another channel's
     * message, or a root that is itself in a thread).
     *
     * `options.mentions` and `options.mentionAll` (protocol §16) are kept in the outbox
     * record too (`mentions` sorted, repeats dropped); a refused one fails the send:
     * `invalid_field` (`field` `mentions`: more than 50, a bad id), `forbidden` (`field`
     * `mentionAll`: the user is a `member`).
     *
     * `options.attachments` (protocol §15): uploads ({@link Attachments.upload}) the message
     * carries, kept in the outbox record too; refused: `invalid_field` (`field` `attachments`).
     *
     * `options.clientMsgId` of a record the outbox holds (this tab's or another tab's): the
     * call settles with that record, on its one ACK (a failed record is sent again, as by
     * `retry`); with another channel, body or option it rejects at once with
     * `idempotency_conflict`, as the server would, and the held record goes on unchanged.
     */
    send(channelId, body, options = {}) {
      this.p.typingIndicators.messageSent(channelId);
      return this.p.sender.enqueue(messageOp(channelId, body, options), options);
    }
    /**
     * Changes the user's notification settings of a channel (protocol §16.3, `PUT
     * /v1/me/channels/{channelId}/settings`): `notify` (`all`, `mentions`, `none`) and
     * `snoozeUntil` (ms, `null` ends a snooze); a field left out keeps its value. Resolves to
     * the settings now, which the channel list shows at once (the user's other sessions get
     * them by `CHANNEL_SETTINGS`). Rejects with a ChatdError: `invalid_field`, `forbidden`
     * (not a member), `unavailable`, `aborted`, `closed`.
     */
    async setNotifySettings(channelId, change, signal) {
      const s = await setNotifySettings(this.p.c, this.p.conn, channelId, change, signal);
      this.p.channels.applySettings(channelId, s);
      return s;
    }
    /** Edits one of the user's messages (version 1.1). */
    edit(channelId, messageId, body, options = {}) {
      return this.p.sender.enqueue({ type: "MSG_EDIT", channelId, messageId, body }, options);
    }
    /**
     * Deletes a message (version 1.1): one of the user's own, or, for a `moderator` or
     * `owner` of its channel, anyone's (protocol §13.1, §17; the delete entry's `senderId`
     * is then the moderator). The client does not judge: the server answers `forbidden`
     * to a delete the user's role does not allow. {@link mayDelete} says whether to offer it.
     */
    deleteMessage(channelId, messageId, options = {}) {
      return this.p.sender.enqueue({ type: "MSG_DELETE", channelId, messageId }, options);
    }
    /**
     * Whether the user may delete `message` as far as this client knows: it is not deleted,
     * and it is the user's own or the user is a `moderator` or `owner` of its channel (the
     * role of the channel list, which HELLO, CHANNEL_ADDED and the user's MEMBER frames keep
     * current). The server still judges (a role changed a moment ago may not be known here).
     */
    mayDelete(message) {
      if (message.deleted) return false;
      if (message.senderId === this.userId) return true;
      const role = this.channelList.getSnapshot().find((c) => c.channelId === message.channelId)?.role;
      return role === "moderator" || role === "owner";
    }
    /** Adds or removes a reaction (version 1.1). */
    react(channelId, messageId, emoji, op = "add", options = {}) {
      return this.p.sender.enqueue({ type: "MSG_REACT", channelId, messageId, emoji, op }, options);
    }
    /** Sends a failed outbox record again, with its same clientMsgId. */
    retry(clientMsgId) {
      return this.p.sender.retry(clientMsgId);
    }
    /** Removes an outbox record (normally a failed one); its waiters reject with `discarded`. */
    discard(clientMsgId) {
      return this.p.sender.discard(clientMsgId);
    }
    /** The outbox records in send order (this tab's and other tabs'). */
    outbox() {
      return this.p.sender.records();
    }
    /**
     * Resolves when an outbox record is ACKed (also one loaded from storage after a reload).
     * Rejects when it fails or is discarded, and with `aborted` when `signal` aborts (that
     * stops this wait only: the record stays in the outbox and is still sent).
     */
    whenSent(clientMsgId, signal) {
      return this.p.sender.whenSent(clientMsgId, signal);
    }
    // ---------------------------------------------------------------- typing & presence
    /** The user is typing in the channel: sends `start` at most once per throttle period. */
    typing(channelId) {
      this.p.typingIndicators.typing(channelId);
    }
    /** The user stopped typing (cleared the input): sends `stop` if a `start` is live. */
    stopTyping(channelId) {
      this.p.typingIndicators.stopTyping(channelId);
    }
    /**
     * Replaces the presence subscription (kept across reconnects). An empty list ends it.
     *
     * The subscription is *pending* from its PRESENCE_SUB until a PRESENCE has arrived for
     * every listed id. While it is pending, a retryable ERROR (`unavailable`, `internal`,
     * `rate_limited`) that names no clientMsgId, channelId or messageId is taken to be the
     * server refusing it (spec §9: such an ERROR cannot say which frame it answers), and the
     * same PRESENCE_SUB is sent again after a backoff (`retryBackoff`, and at least the
     * ERROR's `retryAfterMs`), until the snapshot completes, this is called again, or the
     * connection drops (the reconnect sends it anyway). Such an ERROR is still emitted as
     * `error`. An empty subscription is never pending.
     */
    subscribePresence(userIds) {
      this.p.presenceSub.subscribe(userIds);
    }
  };

  // src/adapter.ts
  function ensureRandomUUID() {
    const c = globalThis.crypto;
    if (typeof c.randomUUID === "function") return;
    const uuid = () => {
      const b = c.getRandomValues(new Uint8Array(16));
      b[6] = (b[6] ?? 0) & 15 | 64;
      b[8] = (b[8] ?? 0) & 63 | 128;
      const x = [...b].map((v) => v.toString(16).padStart(2, "0")).join("");
      return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
    };
    Object.defineProperty(c, "randomUUID", { value: uuid, configurable: true });
  }
  async function diagnose(token) {
    let ready;
    try {
      ready = await fetch("/readyz", { cache: "no-store" });
    } catch {
      return { kind: "server_down" };
    }
    if (ready.status === 503) return { kind: "database_down" };
    try {
      const r = await fetch("/v1/me/channels", {
        cache: "no-store",
        headers: { authorization: `Bearer ${token}` }
      });
      if (r.status === 401) {
        const body = await r.json().catch(() => ({}));
        return { kind: "token", message: body.error?.message ?? "unauthorized" };
      }
      if (r.status === 502 || r.status === 504) return { kind: "server_down" };
    } catch {
      return { kind: "server_down" };
    }
    return { kind: "unknown" };
  }

  // src/dom.ts
  function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === void 0 || v === false) continue;
      if (typeof v === "function") el.addEventListener(k.slice(2).toLowerCase(), v);
      else if (k === "value" && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) el.value = String(v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) if (c !== null && c !== void 0 && c !== false) el.append(c);
    return el;
  }
  function byId(id) {
    const el = document.getElementById(id);
    if (el === null) throw new Error(`#${id} missing from the page`);
    return el;
  }
  function withCode(text) {
    return text.split("`").map((part, i) => i % 2 === 1 ? h("code", {}, part) : part);
  }
  function banner(text, kind = "error") {
    const el = byId("banner");
    el.replaceChildren(...withCode(text));
    el.dataset.kind = kind;
    el.hidden = text === "";
  }
  function announce(text) {
    const el = byId("announcer");
    el.append(h("p", {}, text));
    while (el.childElementCount > 5) el.firstElementChild?.remove();
  }
  function clock(ts) {
    return new Date(ts).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }
  function until(ts) {
    const d = new Date(ts);
    if (d.toDateString() === (/* @__PURE__ */ new Date()).toDateString()) return clock(ts);
    return `${d.toLocaleDateString([], { month: "short", day: "numeric" })}, ${clock(ts)}`;
  }

  // src/admin-api.ts
  var adminToken;
  function currentAdminToken() {
    return adminToken;
  }
  function setAdminToken(token) {
    adminToken = token;
  }
  function adminInit(method) {
    return { method, cache: "no-store", headers: { authorization: `Bearer ${adminToken ?? ""}` } };
  }
  async function api(method, path, body) {
    const init = adminInit(method);
    if (body !== void 0) {
      init.body = JSON.stringify(body);
      init.headers["content-type"] = "application/json";
    }
    const r = await fetch(path, init);
    return { status: r.status, json: await parsedBody(r) };
  }
  async function parsedBody(r) {
    const text = await r.text();
    try {
      return text === "" ? void 0 : JSON.parse(text);
    } catch {
      return text;
    }
  }
  function errorMessage(r) {
    return r.json?.error?.message;
  }
  function apiError(r) {
    const msg = errorMessage(r) ?? `HTTP ${r.status}`;
    switch (r.status) {
      case 401:
        return "The admin token was refused: check it (CHATD_ADMIN_TOKEN, or admin_token in <data_dir>/secrets.toml).";
      case 403:
        return "This is a user token, not the admin token.";
      case 404:
        return `No such channel (${msg}).`;
      case 409:
        return "A channel with this id already exists.";
      case 400:
        return `The server refused this: ${msg}.`;
      case 503:
        return "The server cannot reach its database right now; try again.";
      default:
        return `Failed: ${msg} [${r.status}].`;
    }
  }
  function result(el, ok, ...content) {
    el.dataset.ok = String(ok);
    el.replaceChildren(...content);
  }
  async function guarded(out, f) {
    try {
      await f();
    } catch {
      result(out, false, "The server cannot be reached (is chatd running?).");
    }
  }
  function field(id, label, placeholder) {
    return [h("label", { for: id }, label), h("input", { id, placeholder, autocomplete: "off", spellcheck: "false" })];
  }

  // src/admin-channels.ts
  var CHANNELS_PAGE = 50;
  var MEMBERS_PAGE = 500;
  function describe(c) {
    const count = c.memberCount ?? c.members.length;
    const parts = [c.kind ?? "group", c.visibility ?? "private", `${count} ${count === 1 ? "member" : "members"}`, c.lastSeq === 0 ? "no messages" : `last seq ${c.lastSeq}`];
    return parts.join(" · ");
  }
  function channelsCard(note) {
    const list = h("ul", { class: "admin-channels", id: "admin-channel-list", "aria-label": "Channels" });
    const out = h("p", { class: "result", id: "channels-result", role: "status", "aria-live": "polite" });
    const more = h("button", { type: "button", id: "channels-more", hidden: true }, "More channels");
    let last2;
    let generation = 0;
    const load = (after) => {
      const gen = after === void 0 ? ++generation : generation;
      void guarded(out, async () => {
        const q = `limit=${CHANNELS_PAGE}${after === void 0 ? "" : `&after=${encodeURIComponent(after)}`}`;
        const r = await api("GET", `/v1/channels?${q}`);
        if (gen !== generation) return;
        if (r.status !== 200) {
          result(out, false, apiError(r));
          return;
        }
        const page = r.json;
        if (after === void 0) list.replaceChildren();
        for (const c of page.channels) list.append(row(c));
        last2 = page.channels[page.channels.length - 1]?.channelId ?? last2;
        more.hidden = !page.hasMore;
        const n = list.childElementCount;
        result(out, true, n === 0 ? "No channels yet." : `${n} ${n === 1 ? "channel" : "channels"}${page.hasMore ? " shown, more follow" : ""}.`);
      });
    };
    const row = (c) => {
      const id = c.channelId;
      const path = `/v1/channels/${encodeURIComponent(id)}`;
      const nameEl = h("span", { class: "admin-channel-name" }, c.name ?? "");
      const meta = h("span", { class: "admin-channel-meta" }, describe(c));
      const status = h("p", { class: "result admin-channel-result", role: "status" });
      const members = h("ul", { class: "admin-member-list", hidden: true, "aria-label": `Members of ${id}` });
      const tools = h("div", { class: "admin-channel-tools" });
      const li = h(
        "li",
        { class: "admin-channel", "data-channel": id },
        h("div", { class: "admin-channel-head" }, h("strong", { class: "admin-channel-id" }, id), nameEl),
        meta,
        tools,
        members,
        status
      );
      const showMembers = h("button", { type: "button", class: "admin-members", "aria-expanded": "false" }, "Members");
      showMembers.addEventListener("click", () => {
        if (!members.hidden) {
          members.hidden = true;
          showMembers.setAttribute("aria-expanded", "false");
          return;
        }
        void guarded(status, async () => {
          const all = [];
          let after;
          for (; ; ) {
            const r = await api("GET", `${path}/members?limit=${MEMBERS_PAGE}${after === void 0 ? "" : `&after=${encodeURIComponent(after)}`}`);
            if (r.status !== 200) {
              result(status, false, apiError(r));
              return;
            }
            const page = r.json;
            all.push(...page.members);
            after = page.members[page.members.length - 1]?.userId;
            if (!page.hasMore || after === void 0) break;
          }
          members.replaceChildren(
            ...all.length === 0 ? [h("li", { class: "hint" }, "No members.")] : all.map(
              (m) => h(
                "li",
                { class: "admin-member", "data-user": m.userId },
                h("span", { class: "admin-member-id" }, m.userId),
                " ",
                h("span", { class: "role", "data-role": m.role }, m.role),
                " ",
                h("span", { class: "member-read" }, m.readSeq === 0 ? "has read nothing" : `read up to seq ${m.readSeq}`)
              )
            )
          );
          members.hidden = false;
          showMembers.setAttribute("aria-expanded", "true");
          status.replaceChildren();
        });
      });
      const renameInput = h("input", { class: "admin-rename-input", "aria-label": `New name of ${id}`, maxlength: 200, autocomplete: "off" });
      const renameForm = h(
        "form",
        {
          class: "admin-rename-form",
          hidden: true,
          onsubmit: (ev) => {
            ev.preventDefault();
            const name = renameInput.value.trim();
            void guarded(status, async () => {
              const r = await api("PATCH", path, { name: name === "" ? null : name });
              if (r.status !== 200) {
                result(status, false, apiError(r));
                return;
              }
              const changed = r.json;
              nameEl.textContent = changed.name ?? "";
              renameForm.hidden = true;
              result(status, true, changed.name === null ? `${id} has no name now.` : `Renamed ${id} to “${changed.name}”.`);
              note(changed.name === null ? `cleared the name of ${id}` : `renamed ${id} to “${changed.name}”`);
            });
          }
        },
        renameInput,
        h("button", { type: "submit", class: "primary admin-rename-save" }, "Save name"),
        h(
          "button",
          {
            type: "button",
            class: "admin-rename-cancel",
            onclick: () => {
              renameForm.hidden = true;
            }
          },
          "Cancel"
        )
      );
      const rename = h(
        "button",
        {
          type: "button",
          class: "admin-rename",
          onclick: () => {
            renameInput.value = nameEl.textContent;
            renameForm.hidden = false;
            renameInput.focus();
          }
        },
        "Rename"
      );
      const deleteBox = h(
        "div",
        { class: "admin-delete-box", hidden: true },
        h("span", { class: "delete-question" }, `Delete ${id} for everyone, with all its messages? This cannot be undone.`),
        h(
          "button",
          {
            type: "button",
            class: "danger admin-delete-confirm",
            onclick: () => {
              void guarded(status, async () => {
                const r = await api("DELETE", path);
                if (r.status !== 204) {
                  result(status, false, apiError(r));
                  return;
                }
                li.remove();
                result(out, true, `Deleted ${id}.`);
                note(`deleted ${id}`);
              });
            }
          },
          "Delete channel"
        ),
        h(
          "button",
          {
            type: "button",
            class: "admin-delete-cancel",
            onclick: () => {
              deleteBox.hidden = true;
            }
          },
          "Cancel"
        )
      );
      const del = h(
        "button",
        {
          type: "button",
          class: "admin-delete",
          onclick: () => {
            deleteBox.hidden = false;
          }
        },
        "Delete…"
      );
      tools.append(showMembers, rename, del, renameForm, deleteBox);
      return li;
    };
    more.addEventListener("click", () => {
      load(last2);
    });
    const refresh2 = h(
      "button",
      {
        type: "button",
        id: "channels-refresh",
        onclick: () => {
          load(void 0);
        }
      },
      "Refresh"
    );
    const el = h(
      "section",
      { class: "card admin-channels-card", id: "admin-channels", "aria-labelledby": "channels-title" },
      h("div", { class: "admin-channels-title" }, h("h2", { id: "channels-title" }, "Channels"), refresh2),
      out,
      list,
      more
    );
    load(void 0);
    return {
      el,
      refresh: () => {
        load(void 0);
      }
    };
  }

  // src/admin-erase.ts
  var PENDING_PAUSE_MS = 250;
  function eraseError(userId, r) {
    switch (r.status) {
      case 400:
        return `“${userId}” is not a user id chatd accepts (${errorMessage(r) ?? "invalid_field"}); nothing was erased.`;
      case 404:
        return "This chatd has no erase route (it is older than protocol 1.2); nothing was erased.";
      case 503:
        return `The server could not finish erasing ${userId} now (its database is unavailable or it is shutting down). The erasure goes on, or resumes when the server is back: erase ${userId} again to wait for it.`;
      default:
        return apiError(r);
    }
  }
  function erasedWords(userId) {
    return [
      h("p", {}, `Erased ${userId}.`),
      h(
        "ul",
        { class: "erase-effects" },
        h("li", {}, `Every message ${userId} sent is deleted for everyone (its text, edits, quotes of it, search entries and files are gone; members see “This message was deleted.”).`),
        h("li", {}, `Their reactions are removed and their memberships ended: ${userId} has left every channel, direct ones too.`),
        h("li", {}, `Their live sessions are closed, and every token issued to ${userId} before now is refused.`),
        h("li", {}, `Their read marks, settings, blocks, flags, mutes and last-seen time are gone. Channels that banned ${userId} keep the ban.`)
      ),
      h("p", { class: "hint" }, `A user chatd never saw is answered the same way: there was nothing to erase. Should ${userId} come back, mint a new token (a second from now at the earliest).`)
    ];
  }
  function eraseCard(note) {
    const [lu, user] = field("erase-user", "User id", "e.g. alice");
    const out = h("div", { class: "result", id: "erase-result", role: "status", "aria-live": "polite" });
    const question = h("p", { id: "erase-question" });
    const confirmLabel = h("label", { for: "erase-confirm" });
    const confirm = h("input", { id: "erase-confirm", autocomplete: "off", spellcheck: "false", "aria-describedby": "erase-question" });
    const go = h("button", { type: "button", class: "danger", id: "erase-confirm-button", disabled: true });
    const cancel = h("button", { type: "button", id: "erase-cancel" }, "Cancel");
    const ask = h("button", { type: "submit", class: "primary", id: "erase-ask" }, "Erase user…");
    const box = h("div", { class: "erase-confirm", id: "erase-confirm-box", hidden: true }, question, confirmLabel, confirm, h("p", { class: "row" }, go, cancel));
    let target;
    let busy = false;
    const close = () => {
      target = void 0;
      box.hidden = true;
      confirm.value = "";
      go.disabled = true;
    };
    const setBusy = (on) => {
      busy = on;
      for (const el of [user, confirm, cancel, ask]) el.disabled = on;
      go.disabled = on || target === void 0 || confirm.value !== target;
    };
    const erase = async (userId) => {
      const started = Date.now();
      out.dataset.state = "erasing";
      result(out, true, `Erasing ${userId}…`);
      for (; ; ) {
        const r = await api("DELETE", `/v1/users/${encodeURIComponent(userId)}`);
        if (r.status === 204) {
          out.dataset.state = "done";
          result(out, true, ...erasedWords(userId));
          note(`erased ${userId}`);
          return;
        }
        if (r.status !== 202) {
          out.dataset.state = "failed";
          result(out, false, eraseError(userId, r));
          return;
        }
        out.dataset.state = "pending";
        const secs = Math.round((Date.now() - started) / 1e3);
        result(out, true, `Still erasing ${userId}… (${secs} s so far: a user with many messages takes a while; the erasure goes on even if this page closes).`);
        await new Promise((r2) => setTimeout(r2, PENDING_PAUSE_MS));
      }
    };
    confirm.addEventListener("input", () => {
      go.disabled = busy || target === void 0 || confirm.value !== target;
    });
    confirm.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter") return;
      ev.preventDefault();
      if (!go.disabled) go.click();
    });
    user.addEventListener("input", () => {
      if (target !== void 0 && user.value.trim() !== target) close();
    });
    cancel.addEventListener("click", () => {
      close();
      user.focus();
    });
    go.addEventListener("click", () => {
      const userId = target;
      if (userId === void 0 || confirm.value !== userId || busy) return;
      setBusy(true);
      void erase(userId).catch(() => {
        out.dataset.state = "failed";
        result(out, false, `The server cannot be reached (is chatd running?). If the erasure of ${userId} began, it goes on: erase ${userId} again to wait for it.`);
      }).finally(() => {
        setBusy(false);
        close();
      });
    });
    return h(
      "form",
      {
        class: "card",
        "aria-labelledby": "erase-title",
        onsubmit: (ev) => {
          ev.preventDefault();
          if (busy) return;
          const userId = user.value.trim();
          if (userId === "") {
            result(out, false, "Enter the id of the user to erase.");
            return;
          }
          target = userId;
          question.textContent = `Erase ${userId} for good? Every message ${userId} sent is deleted for everyone, their reactions are removed, they leave every channel, their live sessions close and their tokens stop working. This cannot be undone.`;
          confirmLabel.textContent = `Type ${userId} to confirm`;
          go.textContent = `Erase ${userId}`;
          confirm.value = "";
          go.disabled = true;
          box.hidden = false;
          result(out, true, "");
          confirm.focus();
        }
      },
      h("h2", { id: "erase-title" }, "Erase a user"),
      h("p", { class: "hint" }, "For an erasure request (GDPR Article 17): deletes everything the user left behind. Export their data first if they asked for it."),
      lu,
      user,
      h("p", {}, ask),
      box,
      out
    );
  }

  // src/admin-export.ts
  var KINDS = ["message", "membership", "reaction", "attachment"];
  var ExportTally = class {
    /** Lines of each kind before the end line. */
    counts = { message: 0, membership: 0, reaction: 0, attachment: 0 };
    /** Lines before the end line (all kinds, unknown ones too). */
    lines = 0;
    /** The end line's `count`, once it has come. */
    end;
    /** Lines that are not a JSON object with a `type`, or that come after the end line. */
    bad = 0;
    partial = "";
    /** Takes the next piece of the body's text. */
    feed(text) {
      const parts = (this.partial + text).split("\n");
      this.partial = parts.pop() ?? "";
      for (const line of parts) this.line(line);
    }
    /** The body has ended: a last line without its newline counts too. */
    finish() {
      if (this.partial !== "") this.line(this.partial);
      this.partial = "";
    }
    /** The export is whole: it ends with its end line, which counts every line before it. */
    get complete() {
      return this.end !== void 0 && this.end === this.lines && this.bad === 0;
    }
    line(raw) {
      if (raw.trim() === "") return;
      if (this.end !== void 0) {
        this.bad += 1;
        return;
      }
      let v;
      try {
        v = JSON.parse(raw);
      } catch {
        this.bad += 1;
        return;
      }
      const type = typeof v === "object" && v !== null ? v.type : void 0;
      if (typeof type !== "string") {
        this.bad += 1;
        return;
      }
      if (type === "end") {
        const n = v.count;
        this.end = typeof n === "number" ? n : -1;
        return;
      }
      this.lines += 1;
      if (KINDS.includes(type)) this.counts[type] += 1;
    }
  };
  function plural(n, one) {
    return `${n} ${one}${n === 1 ? "" : "s"}`;
  }
  function kindsWords(t) {
    return KINDS.map((k) => plural(t.counts[k], k)).join(", ");
  }
  function exportError(userId, r) {
    switch (r.status) {
      case 400:
        return `“${userId}” is not a user id chatd accepts (${errorMessage(r) ?? "invalid_field"}).`;
      case 404:
        return "This chatd has no export route (it is older than protocol 1.2).";
      default:
        return apiError(r);
    }
  }
  function exportFileName(userId) {
    return `chatd-export-${userId}.ndjson`;
  }
  function exportCard(note) {
    const [lu, user] = field("export-user", "User id", "e.g. alice");
    const button = h("button", { type: "submit", class: "primary", id: "export-start" }, "Export data");
    const out = h("div", { class: "result", id: "export-result", role: "status", "aria-live": "polite" });
    let fileUrl;
    const run = async (userId) => {
      out.dataset.state = "downloading";
      result(out, true, `Exporting ${userId}…`);
      const r = await fetch(`/v1/users/${encodeURIComponent(userId)}/export`, adminInit("GET"));
      if (r.status !== 200 || r.body === null) {
        const answer = { status: r.status, json: await parsedBody(r) };
        out.dataset.state = "failed";
        result(out, false, exportError(userId, answer));
        return;
      }
      const tally = new ExportTally();
      const parts = [];
      const decoder = new TextDecoder();
      const reader = r.body.getReader();
      let broke = false;
      let shown = 0;
      try {
        for (; ; ) {
          const { done, value } = await reader.read();
          if (done) break;
          parts.push(value);
          tally.feed(decoder.decode(value, { stream: true }));
          if (Date.now() - shown > 250) {
            shown = Date.now();
            result(out, true, `Exporting ${userId}… ${plural(tally.lines, "line")} so far.`);
          }
        }
      } catch {
        broke = true;
      }
      tally.feed(decoder.decode());
      tally.finish();
      const file = new Blob(parts, { type: "application/x-ndjson" });
      if (fileUrl !== void 0) URL.revokeObjectURL(fileUrl);
      fileUrl = URL.createObjectURL(file);
      if (!tally.complete) {
        const why = tally.end === void 0 ? `it has no end line, so it was cut off${broke ? " (the connection broke)" : " (the server stopped partway)"} after ${plural(tally.lines, "line")}` : tally.bad > 0 ? `${plural(tally.bad, "line")} in it could not be read` : `its end line counts ${tally.end} lines but ${tally.lines} came`;
        out.dataset.state = "incomplete";
        result(
          out,
          false,
          h("p", {}, `The export of ${userId} is not complete: ${why}. Export again.`),
          h("p", {}, h("a", { href: fileUrl, download: exportFileName(userId).replace(/\.ndjson$/, ".partial.ndjson"), class: "export-partial" }, "Save what arrived anyway"))
        );
        note(`export of ${userId} cut off`);
        return;
      }
      const link = h("a", { href: fileUrl, download: exportFileName(userId), class: "export-link", id: "export-link", "data-count": tally.lines }, `Save ${exportFileName(userId)} again`);
      out.dataset.state = "done";
      result(
        out,
        true,
        h(
          "p",
          {},
          tally.lines === 0 ? `Exported ${userId}: chatd holds nothing for this user (the file has only its end line, count 0).` : `Exported ${userId}: ${plural(tally.lines, "line")} (${kindsWords(tally)}), and the end line counts ${tally.end ?? 0}: the file is complete.`
        ),
        h("p", {}, link),
        h("p", { class: "hint" }, "Attachment links in the file work without a token until they expire (attachment_url_ttl_secs).")
      );
      link.click();
      note(`exported ${userId} (${plural(tally.lines, "line")})`);
    };
    return h(
      "form",
      {
        class: "card",
        "aria-labelledby": "export-title",
        onsubmit: (ev) => {
          ev.preventDefault();
          const userId = user.value.trim();
          if (userId === "") {
            result(out, false, "Enter the id of the user whose data to export.");
            return;
          }
          button.disabled = true;
          void run(userId).catch(() => {
            out.dataset.state = "failed";
            result(out, false, "The server cannot be reached (is chatd running?).");
          }).finally(() => {
            button.disabled = false;
          });
        }
      },
      h("h2", { id: "export-title" }, "Export a user’s data"),
      h("p", { class: "hint" }, "For an access or portability request (GDPR Articles 15 and 20): every message the user sent, their memberships, reactions and files, as one JSON object a line."),
      lu,
      user,
      h("p", {}, button),
      out
    );
  }

  // src/admin.ts
  function splitUsers(s) {
    return s.split(/[\s,]+/).map((x) => x.trim()).filter((x) => x !== "");
  }
  function adminHeader() {
    const el = document.getElementById("conn");
    if (el === null || el.dataset.state !== "idle" && el.dataset.state !== "admin") return;
    const admin = currentAdminToken() !== void 0;
    el.dataset.state = admin ? "admin" : "idle";
    el.textContent = admin ? "Admin token in use" : "Not signed in";
  }
  function renderAdmin(root) {
    document.title = "Admin · chatd console";
    adminHeader();
    if (currentAdminToken() === void 0) {
      renderAdminSignIn(root);
      return;
    }
    renderAdminTools(root);
  }
  var ADMIN_NOT_HERE = "The admin API is not served at this address (HTTP 404): open /console#admin on chatd’s admin address (admin_listen, or the private network), not through the public address or its proxy.";
  function renderAdminSignIn(root) {
    const input = h("input", {
      id: "admin-token",
      type: "password",
      autocomplete: "off",
      spellcheck: "false",
      "aria-describedby": "admin-token-hint"
    });
    const out = h("p", { class: "result", role: "status", "aria-live": "polite" });
    const form = h(
      "form",
      {
        class: "card",
        "aria-labelledby": "admin-title",
        onsubmit: (ev) => {
          ev.preventDefault();
          const t = input.value.trim();
          if (t === "") {
            result(out, false, "Enter the admin token.");
            return;
          }
          void guarded(out, async () => {
            setAdminToken(t);
            const r = await api("GET", "/v1/channels?limit=1");
            if (r.status === 200) {
              renderAdmin(root);
            } else {
              setAdminToken(void 0);
              result(out, false, r.status === 404 ? ADMIN_NOT_HERE : apiError(r));
            }
          });
        }
      },
      h("h2", { id: "admin-title" }, "Admin view"),
      h(
        "p",
        { class: "hint", id: "admin-token-hint" },
        "The admin token is kept in this page’s memory only: it is never stored, and reloading the page forgets it. ",
        "It is CHATD_ADMIN_TOKEN, or admin_token in <data_dir>/secrets.toml when chatd generated it."
      ),
      h("label", { for: "admin-token" }, "Admin token"),
      input,
      h("p", {}, h("button", { type: "submit", class: "primary", id: "admin-open" }, "Open admin view")),
      out
    );
    root.replaceChildren(h("div", { class: "admin" }, form));
    input.focus();
  }
  function renderAdminTools(root) {
    const log = h("ul", { class: "log", id: "admin-log", "aria-live": "polite" });
    const note = (s) => {
      log.prepend(h("li", {}, `${(/* @__PURE__ */ new Date()).toLocaleTimeString()} ${s}`));
    };
    const channels = channelsCard(note);
    const [lc, chId] = field("new-channel-id", "Channel id", "e.g. general (empty: the server picks one)");
    const [lm, chMembers] = field("new-channel-members", "Members", "user ids, e.g. alice, bob");
    const createOut = h("p", { class: "result", id: "create-result", role: "status" });
    const create = h(
      "form",
      {
        class: "card",
        "aria-labelledby": "create-title",
        onsubmit: (ev) => {
          ev.preventDefault();
          void guarded(createOut, async () => {
            const body = { members: splitUsers(chMembers.value) };
            if (chId.value.trim() !== "") body.channelId = chId.value.trim();
            const r = await api("POST", "/v1/channels", body);
            if (r.status === 201) {
              const c = r.json;
              result(createOut, true, `Created channel ${c.channelId} with ${c.members.length === 0 ? "no members" : c.members.join(", ")}.`);
              note(`created ${c.channelId}`);
              memberChannel.value = c.channelId;
              channels.refresh();
            } else result(createOut, false, apiError(r));
          });
        }
      },
      h("h2", { id: "create-title" }, "Create a channel"),
      lc,
      chId,
      lm,
      chMembers,
      h("p", {}, h("button", { type: "submit", class: "primary", id: "create-channel" }, "Create channel")),
      createOut
    );
    const [lmc, memberChannel] = field("member-channel", "Channel id", "general");
    const [lmu, memberUser] = field("member-user", "User id", "carol");
    const memberOut = h("p", { class: "result", id: "member-result", role: "status" });
    const setMember = (add) => {
      void guarded(memberOut, async () => {
        const c = memberChannel.value.trim();
        const u = memberUser.value.trim();
        if (c === "" || u === "") {
          result(memberOut, false, "Enter a channel id and a user id.");
          return;
        }
        const r = await api(add ? "PUT" : "DELETE", `/v1/channels/${encodeURIComponent(c)}/members/${encodeURIComponent(u)}`);
        if (r.status === 204) {
          const info = await api("GET", `/v1/channels/${encodeURIComponent(c)}`);
          const members2 = info.status === 200 ? info.json.members.join(", ") : "?";
          result(memberOut, true, `${add ? "Added" : "Removed"} ${u} ${add ? "to" : "from"} ${c}. Members now: ${members2 || "none"}.`);
          note(`${add ? "added" : "removed"} ${u} ${add ? "to" : "from"} ${c}`);
          channels.refresh();
        } else result(memberOut, false, apiError(r));
      });
    };
    const members = h(
      "form",
      {
        class: "card",
        "aria-labelledby": "members-title",
        onsubmit: (ev) => {
          ev.preventDefault();
          setMember(true);
        }
      },
      h("h2", { id: "members-title" }, "Members"),
      lmc,
      memberChannel,
      lmu,
      memberUser,
      h(
        "p",
        { class: "row" },
        h("button", { type: "submit", class: "primary", id: "add-member" }, "Add member"),
        h(
          "button",
          {
            type: "button",
            id: "remove-member",
            onclick: () => {
              setMember(false);
            }
          },
          "Remove member"
        )
      ),
      memberOut
    );
    const [lt, tokenUser] = field("token-user", "User id", "alice");
    const [lttl, tokenTtl] = field("token-ttl", "Lifetime, seconds (empty: the server default)", "86400");
    tokenTtl.inputMode = "numeric";
    const tokenOut = h("div", { class: "result", id: "token-result", role: "status" });
    const tokenLinks = h("ul", { class: "signin-links", id: "signin-links", "aria-label": "Sign-in links" });
    let linksMinted = 0;
    const tokens = h(
      "form",
      {
        class: "card",
        "aria-labelledby": "token-title",
        onsubmit: (ev) => {
          ev.preventDefault();
          void guarded(tokenOut, async () => {
            const userId = tokenUser.value.trim();
            const body = { userId };
            if (tokenTtl.value.trim() !== "") body.ttlSeconds = Number(tokenTtl.value.trim());
            const r = await api("POST", "/v1/tokens", body);
            if (r.status !== 201) {
              result(tokenOut, false, apiError(r));
              return;
            }
            const t = r.json;
            const link = `${location.origin}/console#token=${t.token}`;
            result(tokenOut, true, `Token for ${userId}, valid until ${new Date(t.expiresAt).toLocaleString()}. Open its link in another browser (or a private window) to sign in as ${userId}.`);
            for (const old of tokenLinks.querySelectorAll("li")) if (old.dataset.user === userId) old.remove();
            const inputId = `signin-link-${++linksMinted}`;
            tokenLinks.prepend(
              h(
                "li",
                { class: "signin-entry", "data-user": userId },
                h("a", { href: link, class: "signin-link", "data-user": userId, target: "_blank", rel: "noreferrer noopener" }, `Sign in as ${userId}`),
                h("span", { class: "hint" }, ` (until ${new Date(t.expiresAt).toLocaleString()})`),
                h("label", { for: inputId, class: "sr-only" }, `Sign-in link of ${userId}`),
                h("input", { id: inputId, class: "signin-url", readonly: true, value: link })
              )
            );
            note(`minted a token for ${userId}`);
          });
        }
      },
      h("h2", { id: "token-title" }, "Mint a user token"),
      lt,
      tokenUser,
      lttl,
      tokenTtl,
      h("p", {}, h("button", { type: "submit", class: "primary", id: "mint-token" }, "Mint token")),
      tokenOut,
      tokenLinks
    );
    const leave = h(
      "button",
      {
        type: "button",
        id: "admin-forget",
        onclick: () => {
          setAdminToken(void 0);
          renderAdmin(root);
        }
      },
      "Forget the admin token"
    );
    root.replaceChildren(
      h(
        "div",
        { class: "admin" },
        h(
          "div",
          { class: "card" },
          h("h2", {}, "Admin view"),
          h("p", { class: "hint" }, "Set up a chat: create a channel with its members, then mint a token for each member and send them their sign-in link. A person’s data: export it, or erase them (a GDPR request). "),
          leave
        ),
        h("div", { class: "admin-grid" }, create, members, tokens),
        channels.el,
        h("div", { class: "admin-grid" }, exportCard(note), eraseCard(note)),
        h("div", { class: "card" }, h("h2", {}, "Done in this page"), log)
      )
    );
    chId.focus();
  }

  // src/chat-delete.ts
  var asking = /* @__PURE__ */ new Set();
  function deleteControl(messageId, label, moderation, remove) {
    const slot = h("span", { class: "delete-slot", "data-message-id": messageId });
    const show = () => {
      if (!asking.has(messageId)) {
        slot.replaceChildren(
          h(
            "button",
            {
              type: "button",
              class: "delete",
              "data-moderation": String(moderation),
              "aria-label": label,
              onclick: () => {
                asking.add(messageId);
                show();
                slot.querySelector("button.delete-cancel")?.focus();
              }
            },
            "Delete"
          )
        );
        return;
      }
      slot.replaceChildren(
        h(
          "span",
          { class: "delete-confirm-row", role: "group", "aria-label": "Confirm the deletion" },
          h("span", { class: "delete-question" }, "Delete for everyone?"),
          h(
            "button",
            {
              type: "button",
              class: "delete-confirm",
              "aria-label": `${label}: confirm`,
              onclick: () => {
                asking.delete(messageId);
                remove();
              }
            },
            "Delete"
          ),
          h(
            "button",
            {
              type: "button",
              class: "delete-cancel",
              onclick: () => {
                asking.delete(messageId);
                show();
              }
            },
            "Cancel"
          )
        )
      );
    };
    show();
    return slot;
  }

  // src/chat-moderation.ts
  var DURATIONS = [
    { minutes: 10, label: "10 minutes" },
    { minutes: 60, label: "1 hour" },
    { minutes: 24 * 60, label: "1 day" },
    { minutes: 7 * 24 * 60, label: "1 week" }
  ];
  var ModeratorMenu = class {
    state;
    hooks;
    /** The duration last picked per channel and user: a redraw of the list keeps it. */
    picked = /* @__PURE__ */ new Map();
    constructor(state, hooks) {
      this.state = state;
      this.hooks = hooks;
    }
    /** Whether a user of role `mine` may mute and ban member `m` (an owner: anyone else; a moderator: `member`s). */
    static mayModerate(mine, m, me) {
      if (m.userId === me) return false;
      return mine === "owner" || mine === "moderator" && m.role === "member";
    }
    /** The muted mark of a member whose mute is in force ("muted until 14:05"), or nothing. */
    mutedMark(m) {
      if (m.mutedUntil === void 0 || m.mutedUntil <= Date.now()) return null;
      return h("span", { class: "muted-mark", "data-muted-until": m.mutedUntil }, `muted until ${until(m.mutedUntil)}`);
    }
    /**
     * Mute (with its duration) or, while `m` is muted and `unmute` is set, Unmute; and Ban,
     * for member `m` of `channelId` (on a message, `unmute` is off: a mute is lifted from the
     * member list).
     */
    moderatorControls(channelId, m, unmute = true) {
      const client = this.state.client;
      const muted = unmute && m.mutedUntil !== void 0 && m.mutedUntil > Date.now();
      const out = [];
      if (muted) {
        out.push(
          h(
            "button",
            {
              type: "button",
              class: "member-unmute",
              "aria-label": `Unmute ${m.userId}`,
              onclick: () => {
                this.hooks.run(channelId, client.moderation.unmute(channelId, m.userId), `${m.userId} is no longer muted.`, `${m.userId} was not unmuted`);
              }
            },
            "Unmute"
          )
        );
      } else {
        const pick = h(
          "select",
          { class: "member-mute-for", "aria-label": `Mute ${m.userId} for` },
          ...DURATIONS.map((d) => h("option", { value: d.minutes }, d.label))
        );
        const key2 = `${channelId}\0${m.userId}`;
        pick.value = this.picked.get(key2) ?? String(DURATIONS[0]?.minutes ?? 10);
        pick.addEventListener("change", () => {
          this.picked.set(key2, pick.value);
        });
        const mute = () => {
          const minutes = Number(pick.value);
          const until2 = Date.now() + minutes * 6e4;
          const label = DURATIONS.find((d) => d.minutes === minutes)?.label ?? `${minutes} minutes`;
          this.hooks.run(channelId, client.moderation.mute(channelId, m.userId, until2), `${m.userId} is muted for ${label}.`, `${m.userId} was not muted`);
        };
        out.push(pick, h("button", { type: "button", class: "member-mute", "aria-label": `Mute ${m.userId}`, onclick: mute }, "Mute"));
      }
      out.push(
        h(
          "button",
          {
            type: "button",
            class: "member-ban",
            "aria-label": `Ban ${m.userId}`,
            onclick: () => {
              this.hooks.run(channelId, client.moderation.ban(channelId, m.userId), `${m.userId} was banned.`, `${m.userId} was not banned`);
            }
          },
          "Ban"
        )
      );
      return out;
    }
    /** Block or Unblock another user (any user may); nothing for the user itself. */
    blockControl(channelId, userId) {
      if (userId === this.state.userId) return null;
      const blocked = this.state.blocked.has(userId);
      const client = this.state.client;
      const toggle = () => {
        const p = blocked ? client.moderation.unblock(userId) : client.moderation.block(userId);
        const change = p.then(() => {
          if (blocked) this.state.blocked.delete(userId);
          else this.state.blocked.add(userId);
          this.hooks.blocksChanged();
        });
        this.hooks.run(
          channelId,
          change,
          blocked ? `You no longer block ${userId}.` : `You block ${userId}: their messages are hidden.`,
          blocked ? `${userId} was not unblocked` : `${userId} was not blocked`
        );
      };
      return h(
        "button",
        { type: "button", class: blocked ? "member-unblock" : "member-block", "aria-label": `${blocked ? "Unblock" : "Block"} ${userId}`, onclick: toggle },
        blocked ? "Unblock" : "Block"
      );
    }
  };

  // src/words.ts
  function errorWords(code, message, reason) {
    switch (reason) {
      case "muted":
        return "You are muted in this channel, so this was not sent.";
      case "read_only":
        return "Only moderators post in this channel (it is read-only for members), so this was not sent.";
      case "slow_mode":
        return "Slow mode: wait a moment before sending again.";
      case "blocked":
        return "The other member blocks you, so this was not sent.";
      case "banned":
        return "You are banned from this channel.";
      case "too_many_reactions":
        return "This message already has as many different reactions as the server allows; add one of those it has.";
      default:
        break;
    }
    switch (code) {
      case "forbidden":
        return "You are not a member of this channel (or it no longer exists), so this was not sent.";
      case "not_found":
        return "That message no longer exists (it may have been deleted).";
      case "body_too_large":
        return "The message is too long for this server.";
      case "invalid_field":
        return `The server refused this message: ${message}.`;
      case "idempotency_conflict":
        return "The server already has a different message under the same id; send it again as a new message.";
      case "rate_limited":
        return "You are sending too fast; slow down a little.";
      case "unavailable":
        return "The server cannot store messages right now (its database is down); it will be retried.";
      case "unknown_type":
      case "unsupported":
        return "This server does not support that yet (it speaks chatd protocol 1.0; edits, deletions, reactions, typing and presence need 1.1).";
      case "closed":
      case "aborted":
        return "You signed out before this was sent.";
      default:
        return `Something went wrong: ${message} [${code}].`;
    }
  }
  function errorText(e) {
    if (e instanceof ChatdError) return errorWords(e.code, e.message, e.reason);
    return errorWords("internal", e instanceof Error ? e.message : String(e));
  }
  function isUnknownType(e) {
    return e instanceof ChatdError && e.code === "unknown_type";
  }
  function tokenWords(message) {
    if (message.includes("expired")) {
      return "Your sign-in token has expired. Get a new one (run `chatd token <your user id>`, or ask an admin to mint one in the admin view) and sign in again.";
    }
    if (message.includes("bad signature")) {
      return "This token was not issued by this server (its signature does not match). Use a token from this server’s `chatd token` or admin view.";
    }
    if (message.includes("user was erased")) {
      return "An admin erased this user (their messages and memberships are gone), so tokens issued before that are refused. If you should still have access, ask an admin for a new sign-in link.";
    }
    if (message.includes("not yet valid")) return "This token is not valid yet: check the clock of the machine that made it.";
    if (message.includes("missing bearer")) return "No token was given. Paste your user token to sign in.";
    return `This server does not accept this token (${message}). Sign in again with a new token.`;
  }
  function refusalWords(what, e) {
    if (!(e instanceof ChatdError)) return `${what}: ${e instanceof Error ? e.message : String(e)}.`;
    switch (e.code) {
      case "unavailable":
        return `${what}: the server or its database cannot be reached; try again.`;
      case "not_found":
        return `${what}: this server does not support it (it speaks a chatd protocol before 1.2).`;
      default:
        return `${what}: ${e.message} [${e.reason === void 0 ? e.code : `${e.code}, ${e.reason}`}].`;
    }
  }
  function removalWords(label, reason, by) {
    const byWhom = by === void 0 ? "" : ` by ${by}`;
    switch (reason) {
      case "left":
        return `You left ${label}.`;
      case "removed":
        return `You were removed from ${label}${byWhom}.`;
      case "banned":
        return `You were banned from ${label}${byWhom}.`;
      case "deleted":
        return `${label} was deleted.`;
      case void 0:
        return `You are no longer a member of ${label}.`;
      default:
        return `You are no longer a member of ${label} [${reason}].`;
    }
  }
  function memberChangeWords(f, me) {
    const self2 = f.userId === me;
    const who = self2 ? "You" : f.userId;
    const by = f.actorId === void 0 || f.actorId === f.userId ? void 0 : f.actorId === me ? "you" : f.actorId;
    switch (f.op) {
      case "join":
        return by === void 0 ? `${who} joined` : `${who} joined, added by ${by}`;
      case "leave":
        if (f.actorId === f.userId) return `${who} left`;
        return by === void 0 ? `${who} ${self2 ? "were" : "was"} removed` : `${who} ${self2 ? "were" : "was"} removed by ${by}`;
      case "ban":
        return by === void 0 ? `${who} ${self2 ? "were" : "was"} banned` : `${who} ${self2 ? "were" : "was"} banned by ${by}`;
      case "role":
        return f.role === void 0 ? void 0 : `${who} ${self2 ? "are" : "is"} now ${f.role}`;
      case "mute":
        if (typeof f.mutedUntil === "number") return `${who} ${self2 ? "are" : "is"} muted until ${until(f.mutedUntil)}`;
        return `${who} ${self2 ? "are" : "is"} no longer muted`;
      default:
        return void 0;
    }
  }

  // src/chat-report.ts
  var MessageReports = class {
    state;
    hooks;
    /** The report forms open, by message id: a redraw of the list puts the same form (what is typed in it) back. */
    open = /* @__PURE__ */ new Map();
    constructor(state, hooks) {
      this.state = state;
      this.hooks = hooks;
    }
    /** Report and Block for message `m` (another user's). */
    buttons(m) {
      const report = h("button", { type: "button", class: "report", "aria-label": `Report ${m.senderId}’s message` }, "Report");
      report.addEventListener("click", () => {
        const form = this.form(m, report);
        this.open.set(m.messageId, form);
        report.replaceWith(form);
      });
      const open = this.open.get(m.messageId);
      const block = h(
        "button",
        {
          type: "button",
          class: "block",
          "aria-label": `Block ${m.senderId}`,
          onclick: () => {
            this.block(m.senderId);
          }
        },
        "Block"
      );
      return [open ?? report, block];
    }
    /** The report form that takes the Report button's place until sent or cancelled. */
    form(m, button) {
      const reason = h(
        "select",
        { class: "report-reason", "aria-label": "Why you report this message" },
        h("option", { value: "spam" }, "spam"),
        h("option", { value: "abuse" }, "abuse"),
        h("option", { value: "other" }, "other")
      );
      const note = h("input", { type: "text", class: "report-note", maxlength: 1e3, placeholder: "note (optional)", "aria-label": "A note for the moderators" });
      const form = h(
        "form",
        { class: "report-form", "aria-label": "Report this message" },
        reason,
        note,
        h("button", { type: "submit", class: "report-send" }, "Send report"),
        h(
          "button",
          {
            type: "button",
            class: "report-cancel",
            onclick: () => {
              this.open.delete(m.messageId);
              form.replaceWith(button);
            }
          },
          "Cancel"
        )
      );
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        const why = reason.value === "abuse" ? "abuse" : reason.value === "other" ? "other" : "spam";
        const text = note.value.trim();
        this.state.client.moderation.flag(m.messageId, why, text === "" ? {} : { note: text }).then(
          (flag) => {
            this.open.delete(m.messageId);
            if (this.state.closed) return;
            const said = flag.created ? `You reported ${m.senderId}’s message (${why}); the moderators were told.` : `You had reported this message already.`;
            form.replaceWith(h("span", { class: "reported", "data-flag-id": flag.flagId }, "Reported"));
            this.hooks.notice(said);
            announce(said);
          },
          (e) => {
            if (!this.state.closed) this.hooks.notice(refusalWords("The report was not sent", e));
          }
        );
      });
      return form;
    }
    block(userId) {
      this.state.client.moderation.block(userId).then(
        () => {
          if (this.state.closed) return;
          this.state.blocked.add(userId);
          const said = `You block ${userId}: their messages are hidden.`;
          this.hooks.notice(said);
          announce(said);
          this.hooks.blocked();
        },
        (e) => {
          if (!this.state.closed) this.hooks.notice(refusalWords(`${userId} was not blocked`, e));
        }
      );
    }
  };

  // src/chat-actions.ts
  var QUICK_REACTIONS = [
    { emoji: "👍", name: "thumbs up" },
    { emoji: "❤️", name: "heart" },
    { emoji: "😂", name: "laughing" }
  ];
  var MessageActions = class {
    state;
    hooks;
    reports;
    menu;
    constructor(state, hooks) {
      this.state = state;
      this.hooks = hooks;
      this.reports = new MessageReports(state, hooks);
      this.menu = new ModeratorMenu(state, {
        run: (_channelId, p, done, refused) => {
          p.then(
            () => {
              if (!this.state.closed) this.hooks.notice(done);
            },
            (e) => {
              if (!this.state.closed) this.hooks.notice(refusalWords(refused, e));
            }
          );
        },
        blocksChanged: () => {
          this.hooks.blocked();
        }
      });
    }
    /** The reactions on `m`, one button each (pressed when one is the user's: a click takes it back). */
    reactions(m) {
      const reactions = h("div", { class: "reactions" });
      for (const r of m.reactions) {
        reactions.append(
          h(
            "button",
            {
              type: "button",
              class: "reaction",
              "data-emoji": r.emoji,
              "aria-pressed": String(r.me),
              "aria-label": `${r.emoji} ${r.count}${r.me ? ", yours: click to remove" : ": click to add yours"}`,
              onclick: () => {
                this.react(m.channelId, m.messageId, r.emoji, r.me ? "remove" : "add");
              }
            },
            `${r.emoji} ${r.count}`
          )
        );
      }
      return reactions;
    }
    /**
     * The actions row under `m`: quick reactions the user has not made, Edit on the user's
     * own messages, and Delete on them and, for a moderator or owner of the channel, on
     * anyone's.
     */
    actions(m, mine) {
      const channelId = m.channelId;
      const actions = h("div", { class: "actions" });
      if (this.state.supports("MSG_REACT")) {
        for (const q of QUICK_REACTIONS) {
          if (m.reactions.some((r) => r.emoji === q.emoji && r.me)) continue;
          actions.append(
            h(
              "button",
              {
                type: "button",
                class: "react",
                "data-emoji": q.emoji,
                "aria-label": `React with ${q.name}`,
                onclick: () => {
                  this.react(channelId, m.messageId, q.emoji, "add");
                }
              },
              q.emoji
            )
          );
        }
      }
      actions.append(
        h(
          "button",
          {
            type: "button",
            class: "reply",
            "aria-label": `Reply to ${m.senderId}’s message`,
            onclick: () => {
              this.hooks.startReply(m);
            }
          },
          "Reply"
        )
      );
      if (m.threadId === void 0) {
        actions.append(
          h(
            "button",
            {
              type: "button",
              class: "thread",
              "aria-label": "Reply in a thread",
              onclick: () => {
                this.hooks.openThread(m);
              }
            },
            "Thread"
          )
        );
      }
      if (mine && this.state.supports("MSG_EDIT")) {
        actions.append(
          h(
            "button",
            {
              type: "button",
              class: "edit",
              "aria-label": "Edit this message",
              onclick: () => {
                this.hooks.startEdit(m);
              }
            },
            "Edit"
          )
        );
      }
      if (this.state.client.mayDelete(m) && this.state.supports("MSG_DELETE")) {
        actions.append(
          deleteControl(m.messageId, mine ? "Delete this message" : `Delete ${m.senderId}’s message (as moderator)`, !mine, () => {
            this.remove(channelId, m.messageId);
          })
        );
      }
      if (!mine) actions.append(...this.moderation(m), ...this.reports.buttons(m));
      return actions;
    }
    /** Mute and Ban of `m`'s sender, when the user's role allows them (its member list tells the sender's role). */
    moderation(m) {
      const s = this.state.summary(m.channelId);
      if (s === void 0 || s.kind === "direct") return [];
      const sender = this.state.client.memberList(m.channelId).getSnapshot().members.find((x) => x.userId === m.senderId);
      if (sender === void 0 || !ModeratorMenu.mayModerate(s.role, sender, this.state.userId)) return [];
      return this.menu.moderatorControls(m.channelId, sender, false);
    }
    /** Adds or removes the user's reaction. */
    react(channelId, messageId, emoji, op) {
      this.v11("MSG_REACT", (clientMsgId) => this.state.client.react(channelId, messageId, emoji, op, { clientMsgId }));
    }
    /** Deletes a message (the user's, or anyone's as a moderator or owner). */
    remove(channelId, messageId) {
      this.v11("MSG_DELETE", (clientMsgId) => this.state.client.deleteMessage(channelId, messageId, { clientMsgId }));
    }
    /** Replaces the body of the user's message. */
    edit(channelId, messageId, body) {
      this.v11("MSG_EDIT", (clientMsgId) => this.state.client.edit(channelId, messageId, body, { clientMsgId }));
    }
    /** A version 1.1 operation: its ERROR `unknown_type` marks it unsupported, and its outbox record is dropped. */
    v11(op, run) {
      const clientMsgId = uuidv7();
      run(clientMsgId).then(
        () => {
          this.hooks.notice("");
        },
        (e) => {
          if (isUnknownType(e)) {
            this.state.localUnsupported.add(op);
            void this.state.client.discard(clientMsgId);
            this.hooks.notice("");
            this.hooks.redraw();
          } else {
            this.hooks.notice(errorText(e));
          }
          document.body.dataset.unsupported = this.state.unsupported().join(" ");
        }
      );
    }
  };

  // src/chat-channels.ts
  var ChannelList = class {
    state;
    select;
    renamed;
    /** Unread counts last shown, to announce the channels where they grew. */
    shownUnread = /* @__PURE__ */ new Map();
    /** Direct channels whose members were asked for (once each). */
    askedPeer = /* @__PURE__ */ new Set();
    mounted = false;
    /** The notice under the list, and the channel it is about. */
    noticeEl;
    noticeFor;
    /**
     * `select` is called with the channel the user clicks; `renamed` when a direct channel's
     * other user became known (its label changed).
     */
    constructor(state, select, renamed) {
      this.state = state;
      this.select = select;
      this.renamed = renamed;
    }
    /** Makes the sidebar (its list is filled by `render`). */
    sidebar() {
      this.mounted = true;
      this.noticeEl = h("p", { class: "hint channel-notice", id: "channel-notice", role: "status", hidden: true });
      return h(
        "nav",
        { class: "sidebar", "aria-label": "Channels" },
        h("h2", { id: "channels-title" }, "Channels"),
        h("ul", { class: "channels", id: "channels", "aria-labelledby": "channels-title" }),
        this.noticeEl
      );
    }
    /** Says under the list why channel `id` went; `undefined` text: clears it when it is about `id` (the user is back in it). */
    notice(id, text) {
      const el = this.noticeEl;
      if (el === void 0) return;
      if (text === void 0) {
        if (this.noticeFor !== id) return;
        this.noticeFor = void 0;
        el.textContent = "";
        el.hidden = true;
        return;
      }
      this.noticeFor = id;
      el.dataset.channel = id;
      el.textContent = text;
      el.hidden = false;
    }
    /** The channel list changed: redraw it, and tell screen readers where unread messages arrived. */
    changed() {
      const list = this.state.client.channelList.getSnapshot();
      for (const s of list) {
        const before = this.shownUnread.get(s.channelId);
        if (s.channelId !== this.state.current && before !== void 0 && s.unread > before) {
          announce(`${s.unread} unread in ${s.channelId}.`);
        }
        this.shownUnread.set(s.channelId, s.unread);
      }
      this.render();
    }
    /** Redraws the list (the selected channel shows no unread count). */
    render() {
      if (!this.mounted) return;
      const ul = document.getElementById("channels");
      if (ul === null) return;
      const current = this.state.current;
      ul.replaceChildren(
        ...this.state.client.channelList.getSnapshot().map((c) => {
          const id = c.channelId;
          if (c.kind === "direct") this.askPeer(id);
          const unread = id === current ? 0 : c.unread;
          const shown = this.state.label(id);
          const name = c.kind === "direct" ? `direct message ${shown.slice(2)}` : shown.slice(2);
          const mentions = id === current ? 0 : c.unreadMentions;
          const muted = c.notify === "none" || c.snoozeUntil !== null && c.snoozeUntil > Date.now();
          const label = `${unread > 0 ? `${name}, ${unread} unread` : name}${mentions > 0 ? `, ${mentions} mentioning you` : ""}${muted ? ", notifications off" : ""}`;
          return h(
            "li",
            {},
            h(
              "button",
              {
                type: "button",
                class: "channel",
                "data-channel": id,
                "data-kind": c.kind,
                "aria-current": id === current ? "true" : "false",
                "aria-label": label,
                title: id,
                onclick: () => {
                  this.select(id);
                }
              },
              h("span", { class: "channel-label" }, shown),
              muted ? h("span", { class: "muted-mark", "aria-hidden": "true", title: "Notifications off" }, "🔕") : null,
              h("span", { class: "mention-badge", "data-count": String(mentions), "aria-hidden": "true", title: "Mentions of you" }, `@${mentions}`),
              h("span", { class: "badge", "data-count": String(unread), "aria-hidden": "true" }, String(unread))
            )
          );
        })
      );
    }
    /** Reads the members of a direct channel whose other user is not known yet (once). */
    askPeer(id) {
      if (this.state.peers.has(id) || this.askedPeer.has(id)) return;
      this.askedPeer.add(id);
      this.state.client.members(id, { limit: 3 }).then(
        (page) => {
          if (this.state.closed) return;
          const me = this.state.userId;
          const peer = page.members.find((m) => m.userId !== me)?.userId ?? (page.members.length > 0 ? me : void 0);
          if (peer === void 0) return;
          this.state.peers.set(id, peer);
          this.render();
          this.renamed(id);
        },
        () => {
        }
      );
    }
  };

  // src/chat-attach.ts
  function formatBytes(n) {
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
    if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
    return `${(n / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
  }
  function uploadErrorWords(e, name) {
    if (!(e instanceof ChatdError)) return `${name} could not be uploaded: ${String(e)}.`;
    switch (e.code) {
      case "body_too_large":
        return `${name} is too large for this server.`;
      case "unsupported_media_type":
        return `${name}: this server does not take files of this type.`;
      case "invalid_field":
        return e.field === "filename" ? `${name}: the server does not take this file name.` : `${name} is not a valid image of its type (or has too many pixels).`;
      case "forbidden":
        return `${name} could not be uploaded: you are not a member of this channel.`;
      case "aborted":
        return `${name}: upload cancelled.`;
      case "unavailable":
        return `${name} could not be uploaded: the server could not be reached or refused it (it may be too large). Try again.`;
      default:
        return `${name} could not be uploaded: ${e.message} [${e.code}].`;
    }
  }
  var AttachmentTray = class {
    client;
    changed;
    items = [];
    nextId = 1;
    channelId;
    listEl;
    input;
    /** `changed`: the tray's files changed (the composer may enable Send). */
    constructor(client, changed) {
      this.client = client;
      this.changed = changed;
    }
    /** The 📎 button (and its hidden file input) of a newly built composer for channel `channelId`. */
    button(channelId) {
      if (this.channelId !== channelId) this.clear();
      this.channelId = channelId;
      const input = h("input", { type: "file", id: "attach-input", multiple: true, hidden: true, "aria-hidden": "true", tabindex: -1 });
      input.addEventListener("change", () => {
        this.addFiles([...input.files ?? []]);
        input.value = "";
      });
      this.input = input;
      const btn = h(
        "button",
        {
          type: "button",
          id: "attach",
          class: "attach",
          title: "Attach files (or paste or drop them here)",
          "aria-label": "Attach files",
          onclick: () => {
            this.input?.click();
          }
        },
        "📎"
      );
      return h("span", { class: "attach-wrap" }, btn, input);
    }
    /** The list of files of a newly built pane (above the composer). */
    element() {
      this.listEl = h("ul", { class: "tray", id: "tray", "aria-label": "Files to send", "aria-live": "polite" });
      this.render();
      return this.listEl;
    }
    /** Makes `target` take pasted and dropped files (the pane): each goes into the tray. */
    acceptFrom(target) {
      target.addEventListener("paste", (ev) => {
        const files = [...ev.clipboardData?.files ?? []];
        if (files.length === 0) return;
        ev.preventDefault();
        this.addFiles(files);
      });
      target.addEventListener("dragover", (ev) => {
        if (!ev.dataTransfer?.types.includes("Files")) return;
        ev.preventDefault();
        target.dataset.dropping = "true";
      });
      target.addEventListener("dragleave", () => {
        delete target.dataset.dropping;
      });
      target.addEventListener("drop", (ev) => {
        delete target.dataset.dropping;
        const files = [...ev.dataTransfer?.files ?? []];
        if (files.length === 0) return;
        ev.preventDefault();
        this.addFiles(files);
      });
    }
    /** Uploads `files` into the selected channel, each shown in the tray with its progress. */
    addFiles(files) {
      const channelId = this.channelId;
      if (channelId === void 0) return;
      for (const file of files) {
        const item = {
          id: this.nextId++,
          name: file.name === "" ? "pasted file" : file.name,
          size: file.size,
          loaded: 0,
          state: "uploading",
          uploaded: void 0,
          error: void 0,
          abort: new AbortController()
        };
        this.items.push(item);
        this.client.attachments.upload(channelId, file, {
          ...file.name === "" ? { filename: item.name } : {},
          signal: item.abort.signal,
          onProgress: (p) => {
            item.loaded = p.loaded;
            this.render();
          }
        }).then(
          (a) => {
            item.state = "ready";
            item.uploaded = a;
            item.loaded = item.size;
            this.render();
            this.changed();
          },
          (e) => {
            if (!this.items.includes(item)) return;
            item.state = "failed";
            item.error = uploadErrorWords(e, item.name);
            this.render();
            this.changed();
          }
        );
      }
      this.render();
      this.changed();
    }
    /** No more sending in this channel: the 📎 button is disabled and the tray emptied. */
    disable() {
      const btn = this.input?.parentElement?.querySelector("button");
      if (btn !== void 0 && btn !== null) btn.disabled = true;
      this.clear();
    }
    /** Whether a file is still uploading. */
    busy() {
      return this.items.some((i) => i.state === "uploading");
    }
    /** The uploads ready to send, in the order added. */
    ready() {
      return this.items.flatMap((i) => i.state === "ready" && i.uploaded !== void 0 ? [i.uploaded] : []);
    }
    /** Empties the tray (after a send, or another channel); uploads still going are stopped. */
    clear() {
      for (const i of this.items) if (i.state === "uploading") i.abort.abort();
      this.items = [];
      this.render();
    }
    remove(item) {
      if (item.state === "uploading") item.abort.abort();
      this.items = this.items.filter((i) => i !== item);
      this.render();
      this.changed();
    }
    render() {
      const el = this.listEl;
      if (el === void 0) return;
      el.hidden = this.items.length === 0;
      el.replaceChildren(
        ...this.items.map((i) => {
          const pct = i.size === 0 ? 100 : Math.min(100, Math.round(i.loaded / i.size * 100));
          return h(
            "li",
            { class: "tray-item", "data-state": i.state, "data-name": i.name },
            h("span", { class: "tray-name" }, i.name),
            h("span", { class: "att-size" }, formatBytes(i.size)),
            i.state === "uploading" ? h("progress", { class: "tray-progress", max: 100, value: pct, "aria-label": `Uploading ${i.name}` }) : null,
            i.state === "ready" ? h("span", { class: "tray-ok" }, "✓") : null,
            i.state === "failed" ? h("span", { class: "tray-error", role: "alert" }, i.error ?? "failed") : null,
            h(
              "button",
              {
                type: "button",
                class: "tray-remove",
                "aria-label": `Remove ${i.name}`,
                onclick: () => {
                  this.remove(i);
                }
              },
              "✕"
            )
          );
        })
      );
    }
  };
  var inflight = /* @__PURE__ */ new Map();
  var lastRead = /* @__PURE__ */ new Map();
  function refresh(client, m, auto = false) {
    const going = inflight.get(m.messageId);
    if (going !== void 0) return going;
    if (auto && Date.now() - (lastRead.get(m.messageId) ?? 0) < 1e4) return Promise.resolve(void 0);
    lastRead.set(m.messageId, Date.now());
    const p = client.attachments.refreshUrls(m).then(
      (list) => list,
      () => void 0
    );
    inflight.set(m.messageId, p);
    void p.finally(() => inflight.delete(m.messageId));
    return p;
  }
  function expired(a) {
    return a.urlExpiresAt !== void 0 && a.urlExpiresAt <= Date.now() + 2e3;
  }
  function openLightbox(client, m, a) {
    if (expired(a)) {
      void refresh(client, m).then((fresh) => {
        const now = fresh?.find((x) => x.attachmentId === a.attachmentId);
        if (now !== void 0) showLightbox(client.attachments.url(now) ?? "", now);
      });
      return;
    }
    showLightbox(client.attachments.url(a) ?? "", a);
  }
  function showLightbox(src, a) {
    document.getElementById("lightbox")?.remove();
    const close = () => {
      box.remove();
      document.removeEventListener("keydown", onKey);
    };
    const onKey = (ev) => {
      if (ev.key === "Escape") close();
    };
    const name = a.filename ?? "image";
    const box = h(
      "div",
      { class: "lightbox", id: "lightbox", role: "dialog", "aria-modal": "true", "aria-label": name, onclick: close },
      h("img", { src, alt: name, class: "lightbox-img" }),
      h("div", { class: "lightbox-caption" }, `${name} · ${formatBytes(a.size)}${a.width !== void 0 && a.height !== void 0 ? ` · ${a.width} × ${a.height}` : ""}`),
      h("button", { type: "button", class: "lightbox-close", "aria-label": "Close", onclick: close }, "✕")
    );
    document.addEventListener("keydown", onKey);
    document.body.append(box);
    box.querySelector("button")?.focus();
  }
  function attachmentsElement(client, m) {
    return h(
      "div",
      { class: "attachments" },
      ...m.attachments.map((a) => {
        const name = a.filename ?? "file";
        const signed = a.urlExpiresAt !== void 0;
        const full = client.attachments.url(a);
        const thumb = client.attachments.url(a, { thumbnail: true });
        if (signed && thumb !== void 0 && full !== void 0) {
          return h(
            "button",
            {
              type: "button",
              class: "att-image",
              "data-attachment-id": a.attachmentId,
              "aria-label": `Open the image ${name}`,
              onclick: () => {
                openLightbox(client, m, a);
              }
            },
            h("img", {
              src: thumb,
              alt: name,
              ...a.width !== void 0 && a.height !== void 0 ? { "data-width": a.width, "data-height": a.height } : {},
              // an expired URL: read the message again (its new URLs are drawn)
              onerror: () => {
                void refresh(client, m, true);
              }
            })
          );
        }
        const label = [h("span", { class: "att-name" }, name), " ", h("span", { class: "att-size" }, formatBytes(a.size))];
        if (!signed || full === void 0) return h("span", { class: "att-file", "data-attachment-id": a.attachmentId }, "📄 ", ...label);
        return h(
          "a",
          {
            class: "att-file",
            href: full,
            download: name,
            "data-attachment-id": a.attachmentId,
            onclick: (ev) => {
              if (!expired(a)) return;
              ev.preventDefault();
              void refresh(client, m).then((fresh) => {
                const now = fresh?.find((x) => x.attachmentId === a.attachmentId);
                const href = now === void 0 ? void 0 : client.attachments.url(now);
                if (href !== void 0) h("a", { href, download: name }).click();
              });
            }
          },
          "📄 ",
          ...label
        );
      })
    );
  }
  function outgoingAttachmentsElement(list) {
    return h(
      "div",
      { class: "attachments" },
      ...list.map(
        (a) => h(
          "span",
          { class: "att-file", "data-attachment-id": a.attachmentId },
          "📄 ",
          h("span", { class: "att-name" }, a.filename ?? "file"),
          a.size !== void 0 ? " " : null,
          a.size !== void 0 ? h("span", { class: "att-size" }, formatBytes(a.size)) : null
        )
      )
    );
  }

  // src/chat-mentions.ts
  var MAX_OPTIONS = 8;
  var ALL_WORDS = /* @__PURE__ */ new Set(["channel", "all"]);
  function atWords(text) {
    const out = [];
    for (const m of text.matchAll(/(^|\s)@([^\s@]+)/g)) {
      const w = (m[2] ?? "").replace(/[.,;:!?)]+$/, "");
      if (w !== "") out.push(w);
    }
    return out;
  }
  function memberIds(state, channelId) {
    return state.client.memberList(channelId).getSnapshot().members.map((m) => m.userId);
  }
  function mentionsOf(state, channelId, body) {
    const words2 = atWords(body);
    const members = new Set(memberIds(state, channelId));
    const mentions = [...new Set(words2.filter((w) => members.has(w)))];
    const role = state.summary(channelId)?.role ?? "member";
    const all = role !== "member" && words2.some((w) => ALL_WORDS.has(w) && !members.has(w));
    return { ...mentions.length > 0 ? { mentions } : {}, ...all ? { mentionAll: true } : {} };
  }
  function bodyWithMentions(body, mentions, mentionAll, me) {
    const out = [];
    let last2 = 0;
    for (const m of body.matchAll(/(^|\s)@([^\s@]+)/g)) {
      const raw = m[2] ?? "";
      const word = raw.replace(/[.,;:!?)]+$/, "");
      const named = mentions.includes(word) || mentionAll && ALL_WORDS.has(word);
      if (!named) continue;
      const start = m.index + (m[1] ?? "").length;
      if (start > last2) out.push(body.slice(last2, start));
      const mine = word === me || mentionAll && ALL_WORDS.has(word);
      out.push(h("span", { class: mine ? "mention mention-me" : "mention", "data-user": word }, `@${word}`));
      last2 = start + 1 + word.length;
    }
    if (last2 < body.length) out.push(body.slice(last2));
    return out;
  }
  var MentionPicker = class {
    state;
    textarea;
    listEl;
    /** The options shown, and the one Tab or Enter picks. */
    options = [];
    active = 0;
    constructor(state) {
      this.state = state;
    }
    /** Attaches to the composer's textarea; returns the (hidden) list of options to put under it. */
    attach(textarea) {
      this.textarea = textarea;
      this.options = [];
      textarea.setAttribute("aria-autocomplete", "list");
      textarea.setAttribute("aria-controls", "mention-options");
      this.listEl = h("ul", { class: "mention-options", id: "mention-options", role: "listbox", "aria-label": "Members to mention", hidden: true });
      return this.listEl;
    }
    /** The `@prefix` being typed just before the cursor, if any. */
    prefix() {
      const c = this.textarea;
      if (c === void 0) return void 0;
      const before = c.value.slice(0, c.selectionStart);
      const m = /(^|\s)@([^\s@]*)$/.exec(before);
      if (m === null) return void 0;
      return { start: before.length - (m[2] ?? "").length - 1, text: m[2] ?? "" };
    }
    /** The text changed: shows the members matching the `@prefix` at the cursor (or hides the list). */
    update() {
      const id = this.state.current;
      const p = this.prefix();
      if (id === void 0 || p === void 0) {
        this.hide();
        return;
      }
      const me = this.state.userId;
      const role = this.state.summary(id)?.role ?? "member";
      const ids = memberIds(this.state, id).filter((u) => u !== me);
      if (role !== "member") ids.push("channel");
      this.options = ids.filter((u) => u.toLowerCase().startsWith(p.text.toLowerCase())).slice(0, MAX_OPTIONS);
      this.active = 0;
      this.render();
    }
    /** Keys while the list shows: arrows move, Tab or Enter picks, Escape hides. True when the key was taken. */
    onKey(ev) {
      if (this.options.length === 0) return false;
      if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        this.active = (this.active + (ev.key === "ArrowDown" ? 1 : this.options.length - 1)) % this.options.length;
        this.render();
      } else if (ev.key === "Tab" || ev.key === "Enter" && !ev.shiftKey) {
        this.pick(this.options[this.active] ?? "");
      } else if (ev.key === "Escape") {
        this.hide();
      } else {
        return false;
      }
      ev.preventDefault();
      return true;
    }
    /** Hides the list. */
    hide() {
      this.options = [];
      this.render();
    }
    /** Replaces the `@prefix` at the cursor with `@userId `. */
    pick(userId) {
      const c = this.textarea;
      const p = this.prefix();
      if (c === void 0 || p === void 0 || userId === "") return;
      const after = c.value.slice(c.selectionStart);
      const head = `${c.value.slice(0, p.start)}@${userId} `;
      c.value = head + after;
      c.setSelectionRange(head.length, head.length);
      this.hide();
      c.focus();
    }
    render() {
      const el = this.listEl;
      if (el === void 0) return;
      el.hidden = this.options.length === 0;
      el.replaceChildren(
        ...this.options.map(
          (u, i) => h(
            "li",
            {
              role: "option",
              class: "mention-option",
              "data-user": u,
              "aria-selected": String(i === this.active),
              onmousedown: (ev) => {
                ev.preventDefault();
                this.pick(u);
              }
            },
            u === "channel" ? "@channel (everyone here)" : `@${u}`
          )
        )
      );
    }
  };

  // src/chat-quote.ts
  function quoteElement(preview, replyTo) {
    return h(
      "blockquote",
      { class: "quote", "data-reply-to": replyTo, "data-deleted": String(preview.deleted === true) },
      h("span", { class: "quote-sender" }, preview.senderId),
      " ",
      h("span", { class: "quote-body" }, preview.deleted === true ? "deleted message" : preview.body)
    );
  }

  // src/chat-composer.ts
  var Composer = class {
    state;
    hooks;
    textarea;
    sendBtn;
    editingEl;
    /** The message being edited, and the draft the composer held before. */
    editing;
    /** The message the next send quotes (Reply on it), until sent or cancelled. */
    replying;
    replyingEl;
    /** The `@` autocomplete under the textarea. */
    picker;
    /** The files to send with the next message. */
    tray;
    constructor(state, hooks) {
      this.state = state;
      this.hooks = hooks;
      this.picker = new MentionPicker(state);
      this.tray = new AttachmentTray(state.client, () => {
        this.updateSend();
      });
    }
    /** Makes the tray of files to send of a newly built pane (above the composer). */
    trayElement() {
      return this.tray.element();
    }
    /** Files pasted or dropped on `el` (the message list) go into the tray too. */
    acceptFiles(el) {
      this.tray.acceptFrom(el);
    }
    /** Send waits while a file is uploading. */
    updateSend() {
      if (this.sendBtn === void 0 || this.textarea?.disabled === true) return;
      const busy = this.tray.busy();
      this.sendBtn.disabled = busy;
      this.sendBtn.title = busy ? "Waiting for the files to upload" : "";
    }
    /** Makes the "Editing a message" line of a newly built pane. */
    editingElement() {
      this.editingEl = h("div", { class: "editing", id: "editing", "aria-live": "polite" });
      return this.editingEl;
    }
    /** Makes the "Replying to" line of a newly built pane (the quote, and a button that cancels). */
    replyingElement() {
      this.replyingEl = h("div", { class: "replying", id: "replying", hidden: true });
      this.renderReplying();
      return this.replyingEl;
    }
    /** Makes the next send a reply quoting `m` (shown above the composer; Escape or ✕ cancels). */
    startReply(m) {
      if (this.editing !== void 0) this.endEdit();
      this.replying = m;
      this.renderReplying();
      this.textarea?.focus();
    }
    cancelReply() {
      this.replying = void 0;
      this.renderReplying();
    }
    renderReplying() {
      const el = this.replyingEl;
      if (el === void 0) return;
      const m = this.replying;
      el.hidden = m === void 0;
      if (m === void 0) {
        el.replaceChildren();
        return;
      }
      el.dataset.replyTo = m.messageId;
      el.replaceChildren(
        h("span", {}, "Replying to "),
        quoteElement({ senderId: m.senderId, body: cutUtf8(m.body) }, m.messageId),
        h(
          "button",
          {
            type: "button",
            id: "reply-cancel",
            "aria-label": "Cancel the reply",
            onclick: () => {
              this.cancelReply();
            }
          },
          "✕"
        )
      );
    }
    /** Makes the composer (textarea and Send) of a newly built pane for channel `id`. */
    element(id) {
      const textarea = h("textarea", {
        id: "composer",
        rows: 1,
        "aria-label": `Message to ${this.state.label(id).slice(2)}`,
        placeholder: `Message ${this.state.label(id)} (Enter sends, Shift+Enter for a new line)`
      });
      textarea.addEventListener("keydown", (ev) => {
        this.onKey(ev);
      });
      textarea.addEventListener("input", () => {
        this.onInput();
      });
      this.textarea = textarea;
      this.sendBtn = h(
        "button",
        {
          type: "button",
          class: "primary",
          id: "send",
          onclick: () => {
            this.submit();
          }
        },
        "Send"
      );
      const options = this.picker.attach(textarea);
      const el = h("div", { class: "composer" }, this.tray.button(id), textarea, this.sendBtn, options);
      this.tray.acceptFrom(el);
      this.updateSend();
      return el;
    }
    /** Puts the cursor in the composer. */
    focus() {
      this.textarea?.focus();
    }
    /** Another channel is selected: no edit or reply goes on (its pane is built anew). */
    forgetEdit() {
      this.editing = void 0;
      this.replying = void 0;
    }
    /** No more sending in this channel (the user is not a member any more). */
    disable() {
      if (this.textarea !== void 0) this.textarea.disabled = true;
      if (this.sendBtn !== void 0) this.sendBtn.disabled = true;
      this.tray.disable();
    }
    /** Puts `m` into the composer to edit it (the draft is kept for later). */
    startEdit(m) {
      const c = this.textarea;
      if (c === void 0) return;
      this.editing = { channelId: m.channelId, messageId: m.messageId, draft: this.editing?.draft ?? c.value };
      c.value = m.body;
      c.setAttribute("aria-label", "Edit your message");
      if (this.editingEl !== void 0) this.editingEl.textContent = "Editing a message: Enter saves, Escape cancels.";
      if (this.sendBtn !== void 0) this.sendBtn.textContent = "Save";
      c.focus();
    }
    /** The channel's name on screen changed (a direct channel's other user became known): say it in the composer too. */
    relabel() {
      const c = this.textarea;
      const id = this.state.current;
      if (c === void 0 || id === void 0) return;
      const label = this.state.label(id);
      c.placeholder = `Message ${label} (Enter sends, Shift+Enter for a new line)`;
      if (this.editing === void 0) c.setAttribute("aria-label", `Message to ${label.slice(2)}`);
    }
    /** Ends an edit and gives back the draft. */
    endEdit() {
      const c = this.textarea;
      const draft = this.editing?.draft ?? "";
      this.editing = void 0;
      if (c !== void 0) {
        c.value = draft;
        c.setAttribute("aria-label", `Message to ${this.state.current === void 0 ? "" : this.state.label(this.state.current).slice(2)}`);
      }
      if (this.editingEl !== void 0) this.editingEl.textContent = "";
      if (this.sendBtn !== void 0) this.sendBtn.textContent = "Send";
    }
    onKey(ev) {
      if (this.picker.onKey(ev)) return;
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        this.submit();
      } else if (ev.key === "Escape" && this.editing !== void 0) {
        ev.preventDefault();
        this.endEdit();
      } else if (ev.key === "Escape" && this.replying !== void 0) {
        ev.preventDefault();
        this.cancelReply();
      }
    }
    onInput() {
      this.picker.update();
      const store = this.state.currentStore();
      if (store === void 0 || this.editing !== void 0 || !this.state.supports("TYPING")) return;
      if (this.textarea?.value === "") store.stopTyping();
      else store.typing();
      setTimeout(() => {
        this.hooks.typed();
      }, 300);
    }
    /** Sends the composer's text (or saves the edit). */
    submit() {
      const c = this.textarea;
      const id = this.state.current;
      if (c === void 0 || id === void 0) return;
      const body = c.value;
      const editing = this.editing;
      const files = editing === void 0 ? this.tray.ready() : [];
      if (body.trim() === "" && files.length === 0) return;
      if (editing === void 0 && this.tray.busy()) return;
      if (editing !== void 0) {
        this.endEdit();
        c.value = "";
        this.hooks.edit(editing.channelId, editing.messageId, body);
        return;
      }
      c.value = "";
      this.picker.hide();
      const replyTo = this.replying?.channelId === id ? this.replying.messageId : void 0;
      this.cancelReply();
      this.tray.clear();
      this.state.stores.get(id)?.send(body.trim() === "" ? "" : body, {
        ...replyTo === void 0 ? {} : { replyTo },
        ...mentionsOf(this.state, id, body),
        ...files.length > 0 ? { attachments: files } : {}
      }).catch(() => {
      });
    }
  };

  // src/chat-connection.ts
  var ConnectionIndicator = class {
    state;
    token;
    hooks;
    diagnoseTimer;
    /** True while the banner shows a diagnosis (cleared when the session opens). */
    connBanner = false;
    constructor(state, token, hooks) {
      this.state = state;
      this.token = token;
      this.hooks = hooks;
    }
    /** The connection changed: show its state, and diagnose after a while when it does not open. */
    update() {
      if (this.state.closed) return;
      const s = this.state.client.connection.getSnapshot();
      document.body.dataset.unsupported = this.state.unsupported().join(" ");
      if (s.state === "open") {
        clearTimeout(this.diagnoseTimer);
        this.diagnoseTimer = void 0;
        this.show("connected", "Connected");
        if (this.connBanner) {
          banner("");
          this.connBanner = false;
        }
        this.hooks.opened();
        return;
      }
      if (s.state === "closed") return;
      if (!navigator.onLine) this.show("offline", "Offline (no network)");
      else if (s.state === "connecting") this.show("reconnecting", "Connecting…");
      else if (byId("conn").dataset.state !== "offline") this.show("reconnecting", "Reconnecting…");
      this.diagnoseTimer ??= setTimeout(() => void this.runDiagnosis(), 1200);
    }
    /** The browser says it has no network. */
    offline() {
      this.show("offline", "Offline (no network)");
    }
    /** Stops diagnosing (the view is closing). */
    stop() {
      clearTimeout(this.diagnoseTimer);
    }
    /** Shows that no one is signed in. */
    idle() {
      this.show("idle", "Not signed in");
    }
    /** Asks the server why no session opens, says it in words, and asks again while it lasts. */
    async runDiagnosis() {
      const d = await diagnose(this.token);
      this.diagnoseTimer = void 0;
      if (this.state.closed || this.state.client.connection.getSnapshot().state === "open") return;
      switch (d.kind) {
        case "server_down":
          this.show("offline", "Offline: server unreachable");
          banner(
            "The chat server cannot be reached (it may be down or restarting). Messages you send now are kept in this browser and go out, once each, when it is back.",
            "info"
          );
          this.connBanner = true;
          break;
        case "database_down":
          this.show("reconnecting", "Reconnecting…");
          banner("The chat server is up but cannot reach its database; retrying. Your unsent messages are kept.", "info");
          this.connBanner = true;
          break;
        case "token":
          this.hooks.signedOut(tokenWords(d.message));
          return;
        case "unknown":
          this.show("reconnecting", "Reconnecting…");
          break;
      }
      this.diagnoseTimer = setTimeout(() => void this.runDiagnosis(), 2500);
    }
    show(state, text) {
      const el = byId("conn");
      el.dataset.state = state;
      el.textContent = text;
    }
  };

  // src/chat-create.ts
  var NewChats = class {
    state;
    hooks;
    /** Each form's toggle button, by form id. */
    toggles = /* @__PURE__ */ new Map();
    forms = /* @__PURE__ */ new Map();
    constructor(state, hooks) {
      this.state = state;
      this.hooks = hooks;
    }
    /** Makes the sidebar part: New message and New channel, each with its form (hidden until opened). */
    element() {
      const user = h("input", { id: "dm-user", type: "text", autocomplete: "off", placeholder: "e.g. bob", "aria-describedby": "dm-status" });
      const dmStatus = h("p", { class: "hint", id: "dm-status", role: "status" });
      const dm = this.form(
        "dm-form",
        "Open a direct message",
        () => {
          this.openDirect(user, dmStatus);
        },
        h("label", { for: "dm-user" }, "User id"),
        user,
        h("button", { type: "submit", class: "primary", id: "dm-open" }, "Open"),
        dmStatus
      );
      const name = h("input", { id: "group-name", type: "text", autocomplete: "off", placeholder: "e.g. Book club", "aria-describedby": "group-status" });
      const visibility = h(
        "select",
        { id: "group-visibility" },
        h("option", { value: "private" }, "Private: members only"),
        h("option", { value: "public" }, "Public: anyone may find and join it")
      );
      const groupStatus = h("p", { class: "hint", id: "group-status", role: "status" });
      const group = this.form(
        "group-form",
        "Create a channel",
        () => {
          this.createGroup(name, visibility, groupStatus);
        },
        h("label", { for: "group-name" }, "Name"),
        name,
        h("label", { for: "group-visibility" }, "Who can see it"),
        visibility,
        h("button", { type: "submit", class: "primary", id: "group-create" }, "Create"),
        groupStatus
      );
      return h(
        "div",
        { class: "create-part" },
        h("div", { class: "create-buttons" }, this.toggle("new-message", "New message", dm, user), this.toggle("new-channel", "New channel", group, name)),
        dm,
        group
      );
    }
    /** A form (hidden) that calls `submit` instead of being sent. */
    form(id, label, submit, ...children) {
      const form = h("form", { class: "create-form", id, "aria-label": label, hidden: true }, ...children);
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        submit();
      });
      this.forms.set(id, form);
      return form;
    }
    /** The button that shows (and hides) `form`, the other form hidden; focus goes to `first`. */
    toggle(id, text, form, first) {
      const onclick = () => {
        const open = form.hidden;
        for (const [fid, f] of this.forms) {
          f.hidden = fid === form.id ? !open : true;
          this.toggles.get(fid)?.setAttribute("aria-expanded", String(!f.hidden));
        }
        if (open) first.focus();
      };
      const b = h("button", { type: "button", class: "create", id, "aria-expanded": "false", "aria-controls": form.id, onclick }, text);
      this.toggles.set(form.id, b);
      return b;
    }
    /** Hides a form once it did its work. */
    close(formId) {
      const f = this.forms.get(formId);
      if (f !== void 0) f.hidden = true;
      this.toggles.get(formId)?.setAttribute("aria-expanded", "false");
    }
    /** New message: the direct channel with the user typed, opened. */
    openDirect(input, status) {
      const user = input.value.trim();
      if (user === "") {
        status.textContent = "Type the user id of the person to write to.";
        return;
      }
      status.textContent = `Opening the direct channel with ${user}…`;
      this.state.client.direct(user).then(
        ({ channel, created }) => {
          if (this.state.closed) return;
          this.state.peers.set(channel.channelId, peerOf(channel, this.state.userId) ?? user);
          status.textContent = "";
          input.value = "";
          this.close("dm-form");
          announce(created ? `Direct channel with ${user} created.` : `Direct channel with ${user} opened.`);
          this.hooks.select(channel.channelId);
        },
        (e) => {
          if (this.state.closed) return;
          status.textContent = refusalWords(`No direct channel with ${user}`, e);
        }
      );
    }
    /** New channel: a group with this name and visibility, the user its owner, opened. */
    createGroup(nameInput, visibilitySelect, status) {
      const name = nameInput.value.trim();
      if (name === "") {
        status.textContent = "Give the channel a name.";
        return;
      }
      const visibility = visibilitySelect.value === "public" ? "public" : "private";
      status.textContent = `Creating ${name}…`;
      this.state.client.createChannel({ name, visibility }).then(
        (channel) => {
          if (this.state.closed) return;
          status.textContent = "";
          nameInput.value = "";
          visibilitySelect.value = "private";
          this.close("group-form");
          announce(`Channel ${name} created (${visibility}); you are its owner.`);
          this.hooks.select(channel.channelId);
        },
        (e) => {
          if (this.state.closed) return;
          status.textContent = refusalWords(`Channel ${name} was not created`, e);
        }
      );
    }
  };
  function peerOf(channel, me) {
    return channel.members.find((m) => m !== me) ?? channel.members[0];
  }

  // src/chat-directory.ts
  var PAGE = 50;
  var SEARCH_DELAY_MS = 250;
  var ChannelDirectory = class {
    state;
    hooks;
    panel;
    input;
    toggleBtn;
    /** The channels found for the current search, and whether the server has more. */
    found = [];
    hasMore = false;
    status = "";
    /** The search in flight (a newer one aborts it), and the one waiting for typing to pause. */
    reading;
    timer;
    /** Channels being joined now: `channelAdded` for them is the user's own doing. */
    joining = /* @__PURE__ */ new Set();
    constructor(state, hooks) {
      this.state = state;
      this.hooks = hooks;
    }
    /** Makes the "Browse channels" part of the sidebar (its panel hidden until opened). */
    element() {
      const toggle = () => {
        this.toggle();
      };
      this.toggleBtn = h(
        "button",
        { type: "button", class: "browse", id: "browse-channels", "aria-expanded": "false", "aria-controls": "directory-panel", onclick: toggle },
        "Browse channels"
      );
      this.input = h("input", { type: "search", id: "directory-q", placeholder: "Search public channels", "aria-label": "Search public channels", autocomplete: "off" });
      this.input.addEventListener("input", () => {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          this.search();
        }, SEARCH_DELAY_MS);
      });
      this.input.addEventListener("keydown", (ev) => {
        if (ev.key !== "Enter") return;
        ev.preventDefault();
        clearTimeout(this.timer);
        this.search();
      });
      this.panel = h(
        "div",
        { class: "directory", id: "directory-panel", hidden: true },
        this.input,
        h("ul", { class: "directory-list", id: "directory", "aria-label": "Public channels" }),
        h("p", { class: "hint", id: "directory-status", role: "status" })
      );
      return h("div", { class: "browse-part" }, this.toggleBtn, this.panel);
    }
    /** Whether a `channelAdded` for `id` comes from the user's own join. */
    isJoining(id) {
      return this.joining.has(id);
    }
    /** The Leave button of the open channel `id`; none for a direct channel or one the user is not in. */
    leaveButton(id) {
      const s = this.state.client.channelList.getSnapshot().find((c) => c.channelId === id);
      if (s === void 0 || s.kind === "direct") return null;
      const leave = () => {
        this.leave(id);
      };
      return h("button", { type: "button", class: "leave", id: "leave-channel", "aria-label": `Leave channel ${id}`, onclick: leave }, "Leave");
    }
    /** Redraws the list (the user's channels changed: Join becomes Open, and back). */
    render() {
      const ul = document.getElementById("directory");
      if (ul === null || this.panel?.hidden !== false) return;
      const mine = new Set(this.state.client.channelIds());
      ul.replaceChildren(...this.found.map((c) => this.row(c, mine.has(c.channelId))));
      if (this.hasMore) {
        const more = () => {
          this.search(true);
        };
        ul.append(h("li", {}, h("button", { type: "button", class: "more", id: "directory-more", onclick: more }, "More")));
      }
      const status = document.getElementById("directory-status");
      if (status !== null) status.textContent = this.status;
    }
    /** Shows or hides the panel; opening it lists the channels at once. */
    toggle() {
      if (this.panel === void 0 || this.toggleBtn === void 0) return;
      this.panel.hidden = !this.panel.hidden;
      this.toggleBtn.setAttribute("aria-expanded", String(!this.panel.hidden));
      if (!this.panel.hidden) {
        this.search();
        this.input?.focus();
      }
    }
    /** One channel: its name (or id), member count, and Join or Open. */
    row(c, member) {
      const label = c.name ?? c.channelId;
      const count = `${c.memberCount} ${c.memberCount === 1 ? "member" : "members"}`;
      const open = () => {
        this.hooks.select(c.channelId);
      };
      const join = () => {
        this.join(c.channelId);
      };
      const action = member ? h("button", { type: "button", class: "open", "aria-label": `Open channel ${label}`, onclick: open }, "Open") : h("button", { type: "button", class: "join primary", "aria-label": `Join channel ${label}`, onclick: join }, "Join");
      return h(
        "li",
        { class: "directory-channel", "data-channel": c.channelId, "data-member": String(member) },
        h("span", { class: "directory-name" }, label),
        h("span", { class: "directory-count", "data-count": String(c.memberCount) }, count),
        action
      );
    }
    /** Reads the first page for what the box holds, or (`more`) the next page of the same search. */
    search(more = false) {
      this.reading?.abort();
      const ac = new AbortController();
      this.reading = ac;
      const q = this.input?.value.trim() ?? "";
      const last2 = this.found[this.found.length - 1];
      const after = more && last2 !== void 0 ? last2.channelId : void 0;
      this.state.client.directory({ q, after, limit: PAGE, signal: ac.signal }).then(
        (page) => {
          if (ac.signal.aborted || this.state.closed) return;
          this.found = more ? [...this.found, ...page.channels] : [...page.channels];
          this.hasMore = page.hasMore;
          this.status = this.found.length > 0 ? "" : q === "" ? "There is no public channel yet." : `No public channel matches “${q}”.`;
          this.render();
        },
        (e) => {
          if (ac.signal.aborted || this.state.closed) return;
          this.status = failureWords(e, "The channels could not be listed", "refused");
          this.render();
        }
      );
    }
    /** Joins a channel; the client lists it when this resolves, and it opens. */
    join(id) {
      this.joining.add(id);
      this.state.client.join(id).then(
        () => {
          this.joining.delete(id);
          if (this.state.closed) return;
          announce(`You joined channel ${id}.`);
          this.hooks.select(id);
          this.search();
        },
        (e) => {
          this.joining.delete(id);
          if (this.state.closed) return;
          this.status = failureWords(e, `Channel ${id} could not be joined`, "it is not a public channel (or no longer exists)");
          this.render();
        }
      );
    }
    /** Leaves the open channel; the sidebar loses it at once and the first channel left opens. */
    leave(id) {
      this.state.client.leave(id).then(
        () => {
          if (this.state.closed) return;
          announce(`You left channel ${id}.`);
          if (this.state.current === id) this.hooks.select(void 0);
          if (this.panel?.hidden === false) this.search();
        },
        (e) => {
          if (this.state.closed) return;
          this.hooks.notice(failureWords(e, `You could not leave ${id}`, "a direct channel cannot be left"));
        }
      );
    }
  };
  function failureWords(e, what, forbidden) {
    if (!(e instanceof ChatdError)) return `${what}: ${e instanceof Error ? e.message : String(e)}.`;
    switch (e.code) {
      case "forbidden":
        return `${what}: ${forbidden}.`;
      case "not_found":
        return `${what}: this server has no channel directory (it speaks a chatd protocol before 1.2).`;
      case "invalid_field":
        return `${what}: ${e.message}.`;
      case "unavailable":
        return `${what}: the server or its database cannot be reached; try again.`;
      default:
        return `${what}: ${e.message} [${e.code}].`;
    }
  }

  // src/chat-bans.ts
  var PAGE2 = 50;
  var BansList = class {
    state;
    el;
    listEl;
    moreBtn;
    statusEl;
    /** The channel whose bans are shown, the bans read so far, and whether more follow. */
    shown;
    constructor(state) {
      this.state = state;
    }
    /** Makes the section (hidden until `show(true)`). */
    element() {
      this.listEl = h("ul", { class: "ban-list", id: "ban-list", "aria-label": "Banned users" });
      this.statusEl = h("p", { class: "hint", id: "bans-status", role: "status" });
      this.moreBtn = h(
        "button",
        {
          type: "button",
          id: "bans-more",
          hidden: true,
          onclick: () => {
            void this.read(false);
          }
        },
        "More bans"
      );
      const showBtn = h(
        "button",
        {
          type: "button",
          id: "bans-show",
          onclick: () => {
            void this.read(true);
          }
        },
        "Show bans"
      );
      this.el = h("div", { class: "bans", id: "bans", hidden: true }, h("h3", {}, "Bans"), showBtn, this.listEl, this.moreBtn, this.statusEl);
      return this.el;
    }
    /** Shows or hides the section (the user may moderate the selected channel); another channel forgets the list. */
    show(allowed) {
      if (this.el === void 0) return;
      this.el.hidden = !allowed;
      if (this.shown !== void 0 && this.shown.channelId !== this.state.current) {
        this.shown = void 0;
        this.draw();
        if (this.statusEl !== void 0) this.statusEl.textContent = "";
      }
    }
    /** A ban or lift was made here: read the list again when it is shown. */
    changed(channelId) {
      if (this.shown?.channelId === channelId) void this.read(true);
    }
    /** Reads the first page (`fresh`) or the next one. */
    async read(fresh) {
      const id = this.state.current;
      if (id === void 0) return;
      const prev = fresh || this.shown?.channelId !== id ? void 0 : this.shown;
      const after = prev?.bans[prev.bans.length - 1]?.userId;
      this.say("Reading bans…");
      try {
        const page = await this.state.client.moderation.bans(id, after === void 0 ? { limit: PAGE2 } : { after, limit: PAGE2 });
        if (this.state.closed || this.state.current !== id) return;
        this.shown = { channelId: id, bans: [...prev?.bans ?? [], ...page.bans], hasMore: page.hasMore };
        this.draw();
        this.say(this.shown.bans.length === 0 ? "Nobody is banned." : `${this.shown.bans.length} banned${page.hasMore ? " (more follow)" : ""}.`);
      } catch (e) {
        if (!this.state.closed) this.say(refusalWords("The bans could not be read", e));
      }
    }
    draw() {
      if (this.listEl === void 0 || this.moreBtn === void 0) return;
      const s = this.shown;
      this.moreBtn.hidden = s?.hasMore !== true;
      this.listEl.replaceChildren(...(s?.bans ?? []).map((b) => this.row(s?.channelId ?? "", b)));
    }
    row(channelId, b) {
      const by = b.actorId === void 0 ? "by the admin" : `by ${b.actorId}`;
      const lift = () => {
        this.say(`Lifting the ban of ${b.userId}…`);
        this.state.client.moderation.liftBan(channelId, b.userId).then(
          () => {
            if (this.state.closed) return;
            announce(`The ban of ${b.userId} was lifted.`);
            void this.read(true).then(() => {
              this.say(`The ban of ${b.userId} was lifted.`);
            });
          },
          (e) => {
            if (!this.state.closed) this.say(refusalWords(`The ban of ${b.userId} was not lifted`, e));
          }
        );
      };
      return h(
        "li",
        { class: "ban", "data-user": b.userId },
        h("span", { class: "member-name" }, b.userId),
        " ",
        h("span", { class: "hint" }, `banned ${clock(b.bannedAt)} ${by}`),
        h("button", { type: "button", class: "ban-lift", "aria-label": `Lift the ban of ${b.userId}`, onclick: lift }, "Lift")
      );
    }
    say(text) {
      if (this.statusEl !== void 0) this.statusEl.textContent = text;
    }
  };

  // src/chat-rules.ts
  var SLOW = [
    { ms: 0, label: "off" },
    { ms: 1e4, label: "10 s" },
    { ms: 3e4, label: "30 s" },
    { ms: 6e4, label: "1 min" },
    { ms: 3e5, label: "5 min" }
  ];
  var RETENTION = [
    { secs: 0, label: "forever" },
    { secs: 3600, label: "1 hour" },
    { secs: 86400, label: "1 day" },
    { secs: 604800, label: "7 days" },
    { secs: 2592e3, label: "30 days" },
    { secs: 31536e3, label: "1 year" }
  ];
  var MAX_RETENTION_SECS = 315576e4;
  var ChannelRulesForm = class {
    state;
    el;
    who;
    slow;
    retention;
    retentionSecs;
    retentionNow;
    statusEl;
    /** The channel the form was last drawn for: another one resets the pickers. */
    drawnFor;
    constructor(state) {
      this.state = state;
    }
    /** Makes the section (hidden until `show(true)`). */
    element() {
      this.who = h(
        "select",
        { id: "rules-posting", "aria-label": "Who may post" },
        h("option", { value: "" }, "who posts: keep as it is"),
        h("option", { value: "member" }, "everyone posts"),
        h("option", { value: "moderator" }, "only moderators post")
      );
      this.slow = h(
        "select",
        { id: "rules-slow", "aria-label": "Slow mode" },
        h("option", { value: "" }, "slow mode: keep as it is"),
        ...SLOW.map((s) => h("option", { value: s.ms }, `slow mode ${s.label}`))
      );
      this.retention = h(
        "select",
        { id: "rules-retention", "aria-label": "Keep messages" },
        h("option", { value: "" }, "keep messages: as it is"),
        h("option", { value: "server" }, "keep messages: the server's setting"),
        ...RETENTION.map((r) => h("option", { value: r.secs }, `keep messages ${r.label}`)),
        h("option", { value: "secs" }, "keep messages for … seconds")
      );
      this.retentionSecs = h("input", { id: "rules-retention-secs", type: "number", min: 1, max: MAX_RETENTION_SECS, step: 1, "aria-label": "Keep messages for how many seconds", hidden: true });
      const secs = this.retentionSecs;
      this.retention.addEventListener("change", () => {
        secs.hidden = this.retention?.value !== "secs";
      });
      this.statusEl = h("p", { class: "hint", id: "rules-status", role: "status" });
      this.retentionNow = h("p", { class: "hint", id: "rules-retention-now" });
      const form = h(
        "form",
        { class: "rules-form", id: "rules-form", "aria-label": "Channel rules" },
        this.who,
        this.slow,
        this.retention,
        this.retentionSecs,
        h("button", { type: "submit", id: "rules-save" }, "Save rules")
      );
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        this.save();
      });
      this.el = h("div", { class: "rules", id: "rules", hidden: true }, h("h3", {}, "Channel rules"), form, this.statusEl, this.retentionNow);
      return this.el;
    }
    /** Shows the form for an owner of the selected group channel; another channel starts it anew. */
    show(owner) {
      if (this.el === void 0) return;
      this.el.hidden = !owner;
      const id = this.state.current;
      const known = this.state.snapshot()?.moderation;
      this.showRetention();
      if (id === this.drawnFor) return;
      this.drawnFor = id;
      if (this.retention !== void 0) this.retention.value = "";
      if (this.retentionSecs !== void 0) {
        this.retentionSecs.value = "";
        this.retentionSecs.hidden = true;
      }
      if (this.who !== void 0) this.who.value = known?.postingRole === "moderator" || known?.postingRole === "member" ? known.postingRole : "";
      if (this.slow !== void 0) this.slow.value = known?.slowModeMs !== void 0 && SLOW.some((s) => s.ms === known.slowModeMs) ? String(known.slowModeMs) : "";
      if (this.statusEl !== void 0) this.statusEl.textContent = known === void 0 ? "" : rulesWords(known);
    }
    /**
     * Shows the retention in force under the form, as the client knows it (HELLO,
     * CHANNEL_UPDATED: another owner's change or the admin's follow); nothing while the
     * server has stated no rules (an older server).
     */
    showRetention() {
      const known = this.state.snapshot()?.moderation;
      if (this.retentionNow !== void 0) this.retentionNow.textContent = known === void 0 || known.postingRole === void 0 ? "" : retentionWords(known.retentionSecs);
    }
    save() {
      const id = this.state.current;
      if (id === void 0 || this.who === void 0 || this.slow === void 0) return;
      const settings = {};
      if (this.who.value === "member" || this.who.value === "moderator") settings.postingRole = this.who.value;
      if (this.slow.value !== "") settings.slowModeMs = Number(this.slow.value);
      const keep = this.retention?.value ?? "";
      if (keep === "server") settings.retentionSecs = null;
      else if (keep === "secs") {
        const n = Number(this.retentionSecs?.value ?? "");
        if (this.retentionSecs?.value === "" || !Number.isInteger(n) || n < 1 || n > MAX_RETENTION_SECS) {
          this.say(`Give a whole number of seconds from 1 to ${MAX_RETENTION_SECS}.`);
          return;
        }
        settings.retentionSecs = n;
      } else if (keep !== "") settings.retentionSecs = Number(keep);
      if (settings.postingRole === void 0 && settings.slowModeMs === void 0 && settings.retentionSecs === void 0) {
        this.say("Pick who posts, a slow mode or how long messages are kept first.");
        return;
      }
      this.say("Saving…");
      this.state.client.moderation.setChannelSettings(id, settings).then(
        (rules) => {
          if (this.state.closed || this.state.current !== id) return;
          const said = `${rulesWords(rules)} ${retentionWords(rules.retentionSecs)}`;
          this.say(said);
          if (this.retentionNow !== void 0) this.retentionNow.textContent = retentionWords(rules.retentionSecs);
          announce(said);
        },
        (e) => {
          if (!this.state.closed && this.state.current === id) this.say(refusalWords("The rules were not saved", e));
        }
      );
    }
    say(text) {
      if (this.statusEl !== void 0) this.statusEl.textContent = text;
    }
  };
  function rulesWords(r) {
    if (r.postingRole === void 0 && r.slowModeMs === void 0) return "";
    const who = r.postingRole === "moderator" ? "only moderators post" : r.postingRole === "member" ? "everyone posts" : "who posts not known";
    const slow = r.slowModeMs === void 0 ? "slow mode not known" : r.slowModeMs === 0 ? "no slow mode" : `slow mode ${SLOW.find((s) => s.ms === r.slowModeMs)?.label ?? `${r.slowModeMs / 1e3} s`}`;
    return `Now: ${who}; ${slow}.`;
  }
  function retentionWords(secs) {
    if (secs === void 0) return "Messages are kept as the server's retention says.";
    if (secs === 0) return "Messages are kept forever.";
    const named = RETENTION.find((r) => r.secs === secs);
    return `Messages are kept ${named?.label ?? durationWords(secs)}, then expire.`;
  }
  function durationWords(secs) {
    if (secs % 86400 === 0) return `${secs / 86400} ${secs === 86400 ? "day" : "days"}`;
    if (secs % 3600 === 0) return `${secs / 3600} ${secs === 3600 ? "hour" : "hours"}`;
    if (secs % 60 === 0) return `${secs / 60} min`;
    return `${secs} s`;
  }

  // src/chat-members.ts
  var ROLES = ["member", "moderator", "owner"];
  var ChannelMembers = class {
    state;
    menu;
    bans;
    rules;
    changed;
    /** Redraws the list when the earliest mute shown ends. */
    muteTimer;
    el;
    /** The column's parts, made once: the title, the list (or why there is none), the add form, the action line. */
    titleEl;
    bodyEl;
    manageEl;
    addRole;
    actionEl;
    /** What the list shows now (channel, members, roles, reads, controls), to skip redrawing the same. */
    shownKey = "";
    /** The last member change's outcome per channel, in words. */
    actionText = /* @__PURE__ */ new Map();
    /** The selected channel's live list, and the end of its subscription. */
    store;
    unsubscribe;
    /**
     * `changed` is called when the selected channel's list changed or the user blocked or
     * unblocked someone here (the messages' moderator menu and hidden messages follow both).
     */
    constructor(state, changed) {
      this.changed = changed;
      this.state = state;
      this.bans = new BansList(state);
      this.rules = new ChannelRulesForm(state);
      this.menu = new ModeratorMenu(state, {
        run: (channelId, p, done, refused) => {
          this.change(channelId, p, done, refused);
        },
        blocksChanged: () => {
          this.shownKey = "";
          this.render();
          changed();
        }
      });
    }
    /** Makes the column (filled by `render`). */
    element() {
      this.titleEl = h("h2", { id: "members-title" }, "Members");
      this.bodyEl = h("div", { id: "members-body" });
      const user = h("input", { id: "member-add-user", type: "text", autocomplete: "off", placeholder: "user id", "aria-label": "User id to add" });
      this.addRole = h(
        "select",
        { id: "member-add-role", "aria-label": "Role of the new member" },
        ...ROLES.map((r) => h("option", { value: r }, r))
      );
      const form = h(
        "form",
        { class: "member-add", id: "member-add-form", "aria-label": "Add a member" },
        user,
        this.addRole,
        h("button", { type: "submit", id: "member-add" }, "Add")
      );
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        this.add(user);
      });
      this.manageEl = h("div", { class: "member-manage", id: "member-manage", hidden: true }, h("h3", {}, "Add a member"), form);
      this.actionEl = h("p", { class: "hint", id: "member-action-status", role: "status" });
      this.el = h(
        "aside",
        { class: "members", id: "members", "aria-labelledby": "members-title" },
        this.titleEl,
        this.bodyEl,
        this.manageEl,
        this.actionEl,
        this.rules.element(),
        this.bans.element()
      );
      return this.el;
    }
    /**
     * Shows the selected channel's live list (another channel was selected, or the user is in
     * it again, or no longer): the client keeps it current, read again after a reconnect.
     */
    refresh() {
      const id = this.state.current;
      if (this.store?.channelId !== id) {
        this.unsubscribe?.();
        this.unsubscribe = void 0;
        this.store = void 0;
        if (id !== void 0) {
          const store = this.state.client.memberList(id);
          this.store = store;
          this.unsubscribe = store.subscribe(() => {
            if (this.state.closed || this.store !== store) return;
            this.render();
            this.changed();
          });
        }
      }
      this.render();
    }
    /** The view is closing: no more updates. */
    close() {
      this.unsubscribe?.();
      this.unsubscribe = void 0;
      clearTimeout(this.muteTimer);
    }
    /** The selected channel's snapshot changed: the rules form shows the retention now in force. */
    channelChanged() {
      this.rules.showRetention();
    }
    /** Redraws the column for the selected channel (the add form keeps what is typed in it). */
    render() {
      const el = this.el;
      if (el === void 0 || this.titleEl === void 0 || this.bodyEl === void 0 || this.manageEl === void 0) return;
      const id = this.state.current;
      el.hidden = id === void 0;
      if (id === void 0) {
        this.bodyEl.replaceChildren();
        this.shownKey = "";
        return;
      }
      const l = this.store?.channelId === id ? this.store.getSnapshot() : void 0;
      const shown = l !== void 0 && (l.status === "ready" || l.status === "error" && l.members.length > 0);
      const role = shown ? this.myRole(id, l) : void 0;
      const manage = role === "owner" || role === "moderator";
      this.titleEl.textContent = shown ? `Members (${l.members.length})` : "Members";
      this.manageEl.hidden = !manage;
      this.bans.show(manage);
      this.rules.show(role === "owner");
      if (this.addRole !== void 0) {
        this.addRole.hidden = role !== "owner";
        if (role !== "owner") this.addRole.value = "member";
      }
      if (this.actionEl !== void 0) this.actionEl.textContent = this.actionText.get(id) ?? "";
      if (!shown) {
        this.shownKey = "";
        this.bodyEl.replaceChildren(h("p", { class: "hint", id: "members-status" }, statusWords(l)));
        return;
      }
      const rows = l.members.map((m) => ({ m, readSeq: this.readSeqOf(m) }));
      const now = Date.now();
      const inForce = (m) => m.mutedUntil !== void 0 && m.mutedUntil > now;
      this.redrawWhenMutesEnd(l.members, now);
      const key2 = JSON.stringify([id, role, rows.map((r) => [r.m.userId, r.m.role, r.readSeq, inForce(r.m) ? r.m.mutedUntil : 0, this.state.blocked.has(r.m.userId)])]);
      if (key2 === this.shownKey) return;
      this.shownKey = key2;
      this.bodyEl.replaceChildren(
        h("ul", { class: "member-list", id: "member-list", "aria-labelledby": "members-title" }, ...rows.map((r) => this.row(id, r.m, r.readSeq, role)))
      );
    }
    /** A mute that ends takes its mark and Unmute away then: one timer for the earliest end shown. */
    redrawWhenMutesEnd(members, now) {
      clearTimeout(this.muteTimer);
      this.muteTimer = void 0;
      const ends = members.map((m) => m.mutedUntil ?? 0).filter((t) => t > now);
      if (ends.length === 0 || this.state.closed) return;
      const wait = Math.min(Math.min(...ends) - now + 50, 2147483647);
      this.muteTimer = setTimeout(() => {
        this.muteTimer = void 0;
        this.render();
      }, wait);
    }
    /** The user's role in channel `id`: its entry in the list read, else the channel list's; none in a direct channel's controls. */
    myRole(id, list) {
      const s = this.state.summary(id);
      if (s?.kind === "direct") return void 0;
      return list.members.find((m) => m.userId === this.state.userId)?.role ?? s?.role;
    }
    /** How far a member read: the list's watermark or a newer one seen since. */
    readSeqOf(m) {
      const snap = this.state.snapshot();
      const live = m.userId === this.state.userId ? snap?.readSeq : snap?.receipts[m.userId]?.readSeq;
      return Math.max(m.readSeq, live ?? 0);
    }
    /** One member: name, role, how far they read, and the controls the user's role allows. */
    row(channelId, m, readSeq, myRole) {
      const me = m.userId === this.state.userId;
      const read = readSeq > 0 ? `read up to seq ${readSeq}` : "read nothing yet";
      const owner = myRole === "owner";
      const mayRemove = !me && (owner || myRole === "moderator" && m.role === "member");
      let roleControl = null;
      if (owner && !me) {
        const select = h(
          "select",
          { class: "member-role-select", "aria-label": `Role of ${m.userId}` },
          ...ROLES.map((r) => h("option", { value: r, selected: r === m.role }, r))
        );
        select.addEventListener("change", () => {
          this.setRole(channelId, m.userId, select.value);
        });
        roleControl = select;
      }
      const remove = () => {
        this.remove(channelId, m.userId);
      };
      const moderate = ModeratorMenu.mayModerate(myRole, m, this.state.userId) ? this.menu.moderatorControls(channelId, m) : [];
      const block = this.menu.blockControl(channelId, m.userId);
      return h(
        "li",
        { class: "member", "data-user": m.userId, "data-role": m.role, "data-read-seq": String(readSeq) },
        h("span", { class: "member-name" }, me ? `${m.userId} (you)` : m.userId),
        " ",
        h("span", { class: "role", "data-role": m.role }, m.role),
        h("span", { class: "sr-only" }, ", "),
        h("span", { class: "member-read" }, read),
        this.menu.mutedMark(m),
        roleControl !== null || mayRemove || moderate.length > 0 || block !== null ? h(
          "span",
          { class: "member-controls" },
          roleControl,
          ...moderate,
          mayRemove ? h("button", { type: "button", class: "member-remove", "aria-label": `Remove ${m.userId}`, onclick: remove }, "Remove") : null,
          block
        ) : null
      );
    }
    /** Add: the user typed, with the role picked (an owner's), to the selected channel. */
    add(input) {
      const id = this.state.current;
      const user = input.value.trim();
      if (id === void 0) return;
      if (user === "") {
        this.say(id, "Type the user id of the member to add.");
        return;
      }
      const picked = this.addRole?.hidden === false ? this.addRole.value : "member";
      const options = picked === "member" ? {} : { role: picked };
      const done = `${user} was added${picked === "member" ? "" : ` as ${picked}`}.`;
      this.change(id, this.state.client.addMember(id, user, options), done, `${user} was not added`, () => {
        input.value = "";
      });
    }
    setRole(channelId, user, role) {
      this.change(channelId, this.state.client.setMemberRole(channelId, user, role), `${user} is now ${role}.`, `The role of ${user} was not changed`);
    }
    remove(channelId, user) {
      this.change(channelId, this.state.client.removeMember(channelId, user), `${user} was removed.`, `${user} was not removed`);
    }
    /**
     * A member change in flight: its outcome in words under the list. The list itself follows
     * the server's `MEMBER` frame; after a refusal it is read again (what the user saw may be
     * out of date), and a refused role picker goes back to the role the member has.
     */
    change(channelId, p, done, refused, onDone) {
      this.say(channelId, "Saving…");
      p.then(
        () => {
          if (this.state.closed) return;
          onDone?.();
          this.say(channelId, done);
          announce(done);
          this.bans.changed(channelId);
        },
        (e) => {
          if (this.state.closed) return;
          this.say(channelId, refusalWords(refused, e));
          this.shownKey = "";
          this.state.client.memberList(channelId).refresh();
          this.render();
        }
      );
    }
    /** Sets the action line of a channel (shown when it is the selected one). */
    say(channelId, text) {
      this.actionText.set(channelId, text);
      if (channelId === this.state.current && this.actionEl !== void 0) this.actionEl.textContent = text;
    }
  };
  function statusWords(l) {
    if (l === void 0 || l.status === "loading" || l.status === "ready") return "Loading members…";
    if (l.status === "removed") return FORBIDDEN;
    return failureWords2(l.error);
  }
  var FORBIDDEN = "You are not a member of this channel, so its members are not shown.";
  function failureWords2(e) {
    if (!(e instanceof ChatdError)) return `The member list could not be read: ${e instanceof Error ? e.message : String(e)}.`;
    switch (e.code) {
      case "forbidden":
        return FORBIDDEN;
      case "not_found":
        return "This server has no member list for users (it speaks a chatd protocol before 1.2).";
      case "unavailable":
        return "The member list could not be read (the server or its database cannot be reached); it is read again on reconnect.";
      default:
        return `The member list could not be read: ${e.message} [${e.code}].`;
    }
  }

  // src/chat-people.ts
  function presenceDot(user, presence) {
    const p = presence[user];
    const status = p?.status ?? "unknown";
    const words2 = status === "online" ? "online" : status === "offline" ? "offline" : "presence unknown";
    return h("span", { class: "dot", "data-status": status, "data-user": user, role: "img", "aria-label": `${user} is ${words2}`, title: words2 });
  }
  function presenceWithMe(state) {
    const open = state.client.connection.getSnapshot().state === "open";
    return { ...state.client.presence.getSnapshot(), [state.userId]: { status: open ? "online" : "offline", lastSeenAt: void 0 } };
  }
  var People = class {
    state;
    peopleEl;
    typingEl;
    /** The users last subscribed to, joined (to skip a subscription that changes nothing). */
    presenceIds = "";
    constructor(state) {
      this.state = state;
    }
    /** Makes the people header of a newly built pane. */
    peopleElement() {
      this.peopleEl = h("div", {
        class: "people",
        id: "people",
        "aria-label": "People seen in this channel",
        title: "People seen in this channel (who sent, read or typed here), with their presence"
      });
      return this.peopleEl;
    }
    /** Makes the typing line of a newly built pane. */
    typingElement() {
      this.typingEl = h("div", { class: "typing", id: "typing", "aria-live": "polite" });
      return this.typingEl;
    }
    /** Shows who is typing in the selected channel. */
    renderTyping() {
      const el = this.typingEl;
      const snap = this.state.snapshot();
      if (el === void 0 || snap === void 0) return;
      const t = snap.typing;
      el.textContent = t.length === 0 ? "" : t.length === 1 ? `${t[0] ?? ""} is typing…` : `${t.slice(0, -1).join(", ")} and ${t[t.length - 1] ?? ""} are typing…`;
    }
    /** Shows the user and the others seen in the selected channel, each with a presence dot. */
    renderPeople() {
      const el = this.peopleEl;
      const snap = this.state.snapshot();
      if (el === void 0 || snap === void 0) return;
      const me = this.state.userId;
      const presence = presenceWithMe(this.state);
      el.replaceChildren(
        ...[me, ...this.othersIn(snap)].map(
          (u) => h("span", { class: "person", "data-user": u }, presenceDot(u, presence), u === me ? `${u} (you)` : u)
        )
      );
    }
    /** Subscribes to the presence of everyone seen in the opened channels (when it changed and the server supports it). */
    updateSubscription() {
      if (!this.state.supports("PRESENCE_SUB")) return;
      const all = /* @__PURE__ */ new Set();
      for (const st of this.state.stores.values()) for (const u of this.othersIn(st.getSnapshot())) all.add(u);
      const key2 = [...all].sort().join(",");
      if (key2 === this.presenceIds) return;
      this.presenceIds = key2;
      this.state.client.subscribePresence([...all].sort());
    }
    /** The other users this channel shows: senders, readers, typers. */
    othersIn(snap) {
      const s = /* @__PURE__ */ new Set();
      for (const m of snap.messages) s.add(m.senderId);
      for (const u of Object.keys(snap.receipts)) s.add(u);
      for (const u of snap.typing) s.add(u);
      s.delete(this.state.userId);
      return [...s].sort();
    }
  };

  // src/chat-messages.ts
  function blockedItem(m) {
    return h(
      "li",
      { class: "msg blocked", "data-message-id": m.messageId, "data-seq": m.seq, "data-sender": m.senderId, "data-blocked": "true" },
      h("div", { class: "meta" }, `A message from ${m.senderId}, whom you block, is hidden.`)
    );
  }
  var MessageList = class {
    state;
    actions;
    hooks;
    listEl;
    scrollerEl;
    olderBtn;
    loadingOlder = false;
    /** What was last drawn, to keep the reading position when older messages come in above. */
    lastRendered;
    /** The membership changes seen live, per channel, in the order they came (and of afterSeq). */
    lines = /* @__PURE__ */ new Map();
    /** A message to scroll to once its channel holds it (opened from search), and the one marked as found. */
    target;
    found;
    constructor(state, actions, hooks) {
      this.state = state;
      this.actions = actions;
      this.hooks = hooks;
    }
    /** Makes the scroller (older-messages button and list) of a newly built pane for channel `id`. */
    element(id) {
      this.olderBtn = h(
        "button",
        {
          type: "button",
          class: "older",
          id: "load-older",
          hidden: true,
          onclick: () => {
            this.loadOlder();
          }
        },
        "Load older messages"
      );
      this.listEl = h("ol", { class: "messages", id: "messages", role: "log", "aria-label": `Messages in ${id}` });
      this.scrollerEl = h("div", { class: "scroller", id: "scroller" }, this.olderBtn, this.listEl);
      this.scrollerEl.addEventListener("scroll", () => {
        if (this.scrollerEl !== void 0 && this.scrollerEl.scrollTop < 24) this.loadOlder();
      });
      return this.scrollerEl;
    }
    /** The pane shows no channel: nothing to draw until a new one is built. */
    detach() {
      this.listEl = void 0;
    }
    /** Another channel is selected: it opens at its newest messages. */
    reset() {
      this.lastRendered = void 0;
      this.target = void 0;
      this.found = void 0;
    }
    /**
     * Scrolls to message `messageId` of channel `channelId` (the selected one, or the one
     * being selected) and marks it; older pages are loaded until it is held. A thread reply:
     * its root, with the thread opened. A message no longer there: a notice says so.
     */
    reveal(channelId, messageId) {
      this.target = { channelId, messageId };
      this.render();
    }
    /**
     * A `MEMBER` frame: a line in its channel's timeline ("bob joined", "carol was removed by
     * olive", "bob is now moderator"), placed after the entry `afterSeq`. Changes made while
     * the console was not connected are not shown (the member list has them).
     */
    memberChange(f) {
      const text = memberChangeWords(f, this.state.userId);
      if (text === void 0) return;
      let list = this.lines.get(f.channelId);
      if (list === void 0) {
        list = [];
        this.lines.set(f.channelId, list);
      }
      list.push({ afterSeq: f.afterSeq, ts: f.ts, op: f.op, userId: f.userId, text });
      if (f.channelId === this.state.current) this.render();
    }
    /** Draws the selected channel's messages and keeps the reading position. */
    render() {
      const list = this.listEl;
      const scroller = this.scrollerEl;
      const snap = this.state.snapshot();
      const current = this.state.current;
      if (list === void 0 || scroller === void 0 || snap === void 0 || current === void 0) return;
      const fromBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
      const atBottom = fromBottom < 48;
      const receipts = this.receiptLabels(snap);
      const presence = presenceWithMe(this.state);
      const lines = this.lines.get(current) ?? [];
      const items = [];
      let next = 0;
      for (const m of snap.messages) {
        if (m.threadId !== void 0) continue;
        for (let l = lines[next]; l !== void 0 && l.afterSeq < m.seq; l = lines[++next]) items.push(systemItem(l));
        items.push(this.messageItem(m, receipts.get(m.seq) ?? [], presence));
      }
      for (const l of lines.slice(next)) items.push(systemItem(l));
      for (const o of snap.outgoing) if (o.threadId === void 0) items.push(this.outgoingItem(o));
      if (snap.status === "loading") items.unshift(h("li", { class: "empty" }, "Loading messages…"));
      if (snap.status === "ready" && items.length === 0) items.push(h("li", { class: "empty" }, "No messages yet. Say hello!"));
      list.replaceChildren(...items);
      if (this.olderBtn !== void 0) {
        this.olderBtn.hidden = !snap.hasOlder;
        this.olderBtn.textContent = this.loadingOlder ? "Loading older messages…" : "Load older messages";
      }
      const first = snap.messages[0]?.seq ?? 0;
      const prev = this.lastRendered;
      const opened = prev === void 0 || prev.channelId !== current;
      if (opened || atBottom) scroller.scrollTop = scroller.scrollHeight;
      else if (first < prev.firstSeq) scroller.scrollTop = scroller.scrollHeight - scroller.clientHeight - fromBottom;
      this.lastRendered = { channelId: current, firstSeq: first, count: snap.messages.length };
      this.seek(snap, current, list);
      if (snap.status === "removed") {
        const why = removalWords(this.state.label(current), snap.removedReason, this.state.removedBy.get(current));
        this.hooks.notice(`${why} You can read what is shown but not send.`);
        this.hooks.readOnly();
      }
    }
    /** Scrolls to the target when it is held; else loads the older page (or says it is gone). */
    seek(snap, current, list) {
      const t = this.target;
      if (t === void 0 || t.channelId !== current || snap.status === "loading") return;
      const m = snap.messages.find((x) => x.messageId === t.messageId);
      if (m === void 0) {
        if (snap.hasOlder && snap.status === "ready") this.loadOlder();
        else if (!this.loadingOlder) {
          this.target = void 0;
          this.hooks.notice("That message is not in this channel any more (it may have been deleted).");
        }
        return;
      }
      this.target = void 0;
      const root = m.threadId === void 0 ? m : snap.messages.find((x) => x.messageId === m.threadId);
      this.found = root?.messageId ?? m.messageId;
      const el = list.querySelector(`li.msg[data-message-id="${CSS.escape(this.found)}"]`);
      if (el instanceof HTMLElement) {
        el.dataset.found = "true";
        el.scrollIntoView({ block: "center" });
      }
      if (root !== void 0 && root !== m) this.hooks.openThread(root);
    }
    /** Reads the page of messages before the oldest shown (one page at a time). */
    loadOlder() {
      const store = this.state.currentStore();
      const snap = store?.getSnapshot();
      if (store === void 0 || snap === void 0 || !snap.hasOlder || this.loadingOlder) return;
      this.loadingOlder = true;
      if (this.olderBtn !== void 0) this.olderBtn.textContent = "Loading older messages…";
      store.loadOlder().then(
        () => {
          this.loadingOlder = false;
          this.render();
        },
        (e) => {
          this.loadingOlder = false;
          this.target = void 0;
          this.hooks.notice(errorText(e));
          this.render();
        }
      );
    }
    /** Where each other member's read watermark lands: the user's newest message at or below it. */
    receiptLabels(snap) {
      const mine = snap.messages.filter((m) => m.senderId === this.state.userId).map((m) => m.seq);
      const out = /* @__PURE__ */ new Map();
      for (const [user, w] of Object.entries(snap.receipts)) {
        let best;
        for (const s of mine) if (s <= w.readSeq) best = s;
        if (best === void 0) continue;
        out.set(best, [...out.get(best) ?? [], user]);
      }
      return out;
    }
    /** A stored message: sender with presence, body (or "expired" / "deleted"), time, marks, then reactions and actions. */
    messageItem(m, readers, presence) {
      const mine = m.senderId === this.state.userId;
      if (!mine && this.state.blocked.has(m.senderId) && this.state.summary(m.channelId)?.kind !== "direct") return blockedItem(m);
      const meta = h("div", { class: "meta" }, h("time", { datetime: new Date(m.ts).toISOString() }, clock(m.ts)));
      if (m.editedAt !== void 0 && !m.deleted) meta.append(h("span", { class: "edited" }, "(edited)"));
      if (m.byAdmin) meta.append(h("span", { class: "by-admin", title: "made by an admin through the server API" }, "admin"));
      if (mine) meta.append(h("span", { class: "state", "data-state": "sent" }, "✓ sent"));
      if (readers.length > 0) meta.append(h("span", { class: "receipt" }, `read by ${readers.join(", ")}`));
      const li = h(
        "li",
        {
          class: "msg",
          "data-message-id": m.messageId,
          "data-client-msg-id": m.clientMsgId,
          "data-seq": m.seq,
          "data-sender": m.senderId,
          "data-mine": String(mine),
          "data-state": "sent",
          "data-deleted": String(m.deleted),
          "data-expired": String(m.expired),
          "data-mentions-me": String(m.mentionsMe),
          "data-found": m.messageId === this.found ? "true" : void 0,
          "aria-label": `${m.senderId}${m.expired ? ", expired message" : m.deleted ? ", deleted message" : `: ${m.body}`}${m.attachments.length > 0 ? ` (${m.attachments.length} ${m.attachments.length === 1 ? "file" : "files"})` : ""}${m.mentionsMe ? " (mentions you)" : ""}`
        },
        h("div", { class: "msg-head" }, presenceDot(m.senderId, presence), h("span", { class: "sender" }, mine ? `${m.senderId} (you)` : m.senderId)),
        m.replyPreview !== void 0 && !m.deleted ? quoteElement(m.replyPreview, m.replyTo) : null,
        h("div", { class: "body" }, ...m.expired ? ["This message expired."] : m.deleted ? ["This message was deleted."] : bodyWithMentions(m.body, m.mentions, m.mentionAll, this.state.userId)),
        m.attachments.length > 0 ? attachmentsElement(this.state.client, m) : null,
        meta
      );
      const replies = m.thread?.replyCount ?? 0;
      if (replies > 0) {
        li.append(
          h(
            "button",
            {
              type: "button",
              class: "thread-open",
              "data-reply-count": replies,
              "aria-label": `Open the thread: ${replies} ${replies === 1 ? "reply" : "replies"}`,
              onclick: () => {
                this.hooks.openThread(m);
              }
            },
            `💬 ${replies} ${replies === 1 ? "reply" : "replies"}`
          )
        );
      }
      if (m.deleted) return li;
      const reactions = this.actions.reactions(m);
      const actions = this.actions.actions(m, mine);
      if (reactions.childElementCount > 0) li.append(reactions);
      li.append(actions);
      return li;
    }
    /** The quote of an unsent reply, from the quoted message held (nothing when it is not). */
    pendingQuote(replyTo) {
      const q = this.state.snapshot()?.messages.find((m) => m.messageId === replyTo);
      if (q === void 0) return null;
      return quoteElement(q.deleted ? { senderId: q.senderId, body: "", deleted: true } : { senderId: q.senderId, body: q.body }, replyTo);
    }
    /** One of the user's messages not yet stored: pending, sent, or failed with Retry and Discard. */
    outgoingItem(o) {
      const me = this.state.userId;
      const words2 = o.state === "pending" ? "⏳ pending" : o.state === "sent" ? "✓ sent" : "⚠ failed";
      const meta = h("div", { class: "meta" }, h("span", { class: "state", "data-state": o.state }, words2));
      if (o.state === "pending") meta.append(h("span", {}, "kept in this browser until the server stores it"));
      const li = h(
        "li",
        {
          class: "msg",
          "data-client-msg-id": o.clientMsgId,
          "data-mine": "true",
          "data-sender": me,
          "data-state": o.state,
          "aria-label": `${me}: ${o.body}, ${o.state}`
        },
        h("div", { class: "msg-head" }, h("span", { class: "sender" }, `${me} (you)`)),
        o.replyTo !== void 0 ? this.pendingQuote(o.replyTo) : null,
        h("div", { class: "body" }, o.body),
        o.attachments !== void 0 && o.attachments.length > 0 ? outgoingAttachmentsElement(o.attachments) : null,
        meta
      );
      if (o.state === "failed") {
        li.append(
          h("div", { class: "meta error" }, errorWords(o.error?.code ?? "internal", o.error?.message ?? "failed", o.error?.reason)),
          h(
            "div",
            { class: "actions" },
            h(
              "button",
              {
                type: "button",
                class: "retry",
                "aria-label": "Retry sending this message",
                onclick: () => {
                  this.state.client.retry(o.clientMsgId).catch((e) => {
                    this.hooks.notice(errorText(e));
                  });
                }
              },
              "Retry"
            ),
            h(
              "button",
              {
                type: "button",
                class: "discard",
                "aria-label": "Discard this message",
                onclick: () => {
                  void this.state.client.discard(o.clientMsgId);
                }
              },
              "Discard"
            )
          )
        );
      }
      return li;
    }
  };
  function systemItem(l) {
    return h(
      "li",
      { class: "system", "data-op": l.op, "data-user": l.userId, "data-after-seq": l.afterSeq },
      h("span", { class: "system-text" }, l.text),
      " ",
      h("time", { datetime: new Date(l.ts).toISOString() }, clock(l.ts))
    );
  }

  // src/chat-notice.ts
  var OP_NAMES = /* @__PURE__ */ new Map([
    ["MSG_EDIT", "editing"],
    ["MSG_DELETE", "deleting"],
    ["MSG_REACT", "reactions"],
    ["TYPING", "typing indicators"],
    ["PRESENCE_SUB", "presence"]
  ]);
  var Notices = class {
    state;
    texts = /* @__PURE__ */ new Map();
    el;
    constructor(state) {
      this.state = state;
    }
    /** Makes the notice line of a newly built pane (the previous one is dropped). */
    element() {
      this.el = h("div", { class: "notice", id: "notice", "aria-live": "polite" });
      return this.el;
    }
    /** Shows the selected channel's notice and the unsupported features. */
    render() {
      const el = this.el;
      if (el === void 0) return;
      const current = this.state.current;
      const custom = current === void 0 ? void 0 : this.texts.get(current);
      const missing = this.state.unsupported();
      const parts = [];
      if (custom !== void 0) parts.push(custom);
      if (missing.length > 0) {
        parts.push(`This server does not support ${missing.map((m) => OP_NAMES.get(m) ?? m).join(", ")} (chatd protocol 1.1); they are off.`);
      }
      el.textContent = parts.join(" ");
      document.body.dataset.unsupported = missing.join(" ");
    }
    /** Sets the selected channel's notice (empty text clears it) and shows it. */
    set(text) {
      if (this.state.current !== void 0) this.texts.set(this.state.current, text);
      this.render();
    }
    /** Forgets a channel's notice (the user is back in it). */
    forget(channelId) {
      this.texts.delete(channelId);
    }
  };

  // src/chat-notify.ts
  var LEVELS = [
    ["all", "All messages"],
    ["mentions", "Mentions only"],
    ["none", "Nothing"]
  ];
  var HOUR_MS = 36e5;
  var NotifyMenu = class {
    state;
    el;
    /** What the menu last showed, so a redraw that changes nothing keeps the focus. */
    shown = "";
    /** Redraws the menu when the shown snooze ends. */
    timer;
    constructor(state) {
      this.state = state;
    }
    /** Makes the menu of a newly built pane. */
    element() {
      this.el = h("div", { class: "notify-menu", id: "notify-menu" });
      this.shown = "";
      this.render();
      return this.el;
    }
    /** Shows the selected channel's settings (called when the channel list changed). */
    render() {
      const el = this.el;
      const id = this.state.current;
      const s = id === void 0 ? void 0 : this.state.summary(id);
      if (el === void 0 || id === void 0 || s === void 0) {
        el?.replaceChildren();
        this.shown = "";
        clearTimeout(this.timer);
        this.timer = void 0;
        return;
      }
      const snoozeEnd = s.snoozeUntil !== null && s.snoozeUntil > Date.now() ? s.snoozeUntil : void 0;
      const snoozed = snoozeEnd !== void 0;
      const key2 = JSON.stringify([id, s.notify, snoozed ? s.snoozeUntil : null]);
      if (key2 === this.shown) return;
      this.shown = key2;
      clearTimeout(this.timer);
      this.timer = void 0;
      if (snoozeEnd !== void 0) {
        this.timer = setTimeout(() => {
          this.timer = void 0;
          this.render();
        }, Math.min(snoozeEnd - Date.now() + 50, 2 ** 31 - 1));
      }
      el.dataset.notify = s.notify;
      el.dataset.snoozed = String(snoozed);
      const select = h(
        "select",
        {
          id: "notify-level",
          "aria-label": "Notifications for this channel",
          onchange: () => {
            this.set(id, { notify: select.value });
          }
        },
        ...LEVELS.map(([v, words2]) => h("option", { value: v, selected: v === s.notify }, words2))
      );
      select.value = s.notify;
      const snooze = snoozeEnd !== void 0 ? [
        h("span", { class: "snoozed", id: "snoozed" }, `Snoozed until ${until(snoozeEnd)}`),
        h("button", { type: "button", id: "snooze-end", onclick: () => {
          this.set(id, { snoozeUntil: null });
        } }, "End snooze")
      ] : [1, 8].map(
        (n) => h("button", { type: "button", class: "snooze", id: `snooze-${n}h`, onclick: () => {
          this.set(id, { snoozeUntil: Date.now() + n * HOUR_MS });
        } }, `Snooze ${n} h`)
      );
      el.replaceChildren(h("label", { for: "notify-level" }, "Notify"), select, ...snooze);
    }
    set(channelId, change) {
      this.state.client.setNotifySettings(channelId, change).then(
        () => {
          this.render();
        },
        (e) => {
          banner(`Notification settings not changed: ${e instanceof ChatdError ? e.message : String(e)}`);
          this.shown = "";
          this.render();
        }
      );
    }
  };

  // src/chat-posting.ts
  var PostingState = class {
    state;
    el;
    timer;
    constructor(state) {
      this.state = state;
    }
    /** Makes the line of a newly built pane. */
    element() {
      this.el = h("div", { class: "posting-state", id: "posting-state", "data-state": "open", "aria-live": "polite", hidden: true });
      this.render();
      return this.el;
    }
    /** Shows the selected channel's state; turns the composer off while muted or read-only. */
    render() {
      const el = this.el;
      const snap = this.state.snapshot();
      if (el === void 0) return;
      const p = snap === void 0 || snap.status === "removed" ? { kind: "open" } : this.posting(snap.channelId, snap.moderation);
      el.dataset.state = p.kind;
      el.hidden = p.kind === "open";
      el.textContent = words(p);
      const off = p.kind === "muted";
      if (snap !== void 0 && snap.status !== "removed") {
        for (const id of ["composer", "send"]) {
          const c = document.getElementById(id);
          if (c instanceof HTMLTextAreaElement || c instanceof HTMLButtonElement) c.disabled = off;
        }
      }
      if (p.kind === "slow" && this.timer === void 0) {
        this.timer = setInterval(() => {
          this.render();
        }, 1e3);
      } else if (p.kind !== "slow" && this.timer !== void 0) {
        clearInterval(this.timer);
        this.timer = void 0;
      }
    }
    /** The view is closing: no more countdown. */
    close() {
      clearInterval(this.timer);
      this.timer = void 0;
    }
    posting(channelId, m) {
      const now = Date.now();
      if (m.mutedUntil !== void 0 && m.mutedUntil > now) return { kind: "muted", until: m.mutedUntil };
      const role = this.state.summary(channelId)?.role ?? "member";
      if (m.postingRole === "moderator" && role === "member") return { kind: "read_only" };
      if (m.nextSendAt !== void 0 && m.nextSendAt > now) return { kind: "slow", at: m.nextSendAt };
      return { kind: "open" };
    }
  };
  function words(p) {
    switch (p.kind) {
      case "open":
        return "";
      case "muted":
        return `You are muted in this channel until ${until(p.until)}; you can read but not send.`;
      case "read_only":
        return "Only moderators post in this channel; you can read and react.";
      case "slow": {
        const s = Math.max(1, Math.ceil((p.at - Date.now()) / 1e3));
        return `Slow mode: you can send again in ${s} s (a message sent now waits until then).`;
      }
    }
  }

  // src/chat-search.ts
  var PAGE3 = 20;
  var SEARCH_DELAY_MS2 = 300;
  var MessageSearch = class {
    state;
    hooks;
    input;
    panel;
    /** The query the results are of, the results so far, and the next page's cursor. */
    query = "";
    results = [];
    next;
    status = "";
    /** The read in flight (a newer search aborts it), and the search waiting for typing to pause. */
    reading;
    timer;
    constructor(state, hooks) {
      this.state = state;
      this.hooks = hooks;
    }
    /** Makes the search box and its (hidden until searched) results panel. */
    element() {
      this.input = h("input", {
        type: "search",
        id: "search-q",
        placeholder: "Search messages",
        "aria-label": "Search messages",
        "aria-controls": "search-results",
        autocomplete: "off"
      });
      this.input.addEventListener("input", () => {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          this.search();
        }, SEARCH_DELAY_MS2);
      });
      this.input.addEventListener("keydown", (ev) => {
        if (ev.key === "Escape") {
          this.clear();
          return;
        }
        if (ev.key !== "Enter") return;
        ev.preventDefault();
        clearTimeout(this.timer);
        this.search();
      });
      this.panel = h("div", { class: "search-results", id: "search-results", hidden: true });
      return h("div", { class: "search", role: "search" }, this.input, this.panel);
    }
    /** Empties the box and hides the results. */
    clear() {
      clearTimeout(this.timer);
      this.reading?.abort();
      this.reading = void 0;
      if (this.input !== void 0) this.input.value = "";
      this.query = "";
      this.results = [];
      this.next = void 0;
      this.status = "";
      this.render();
    }
    /** Searches for what the box holds now (from the newest). */
    search() {
      const q = this.input?.value.trim() ?? "";
      if (q === "") {
        this.clear();
        return;
      }
      this.query = q;
      this.results = [];
      this.next = void 0;
      this.read(void 0);
    }
    /** Reads a page of the current query before `before` and appends it. */
    read(before) {
      this.reading?.abort();
      const ctl = new AbortController();
      this.reading = ctl;
      this.status = "Searching…";
      this.render();
      const q = this.query;
      const options = before === void 0 ? { limit: PAGE3, signal: ctl.signal } : { limit: PAGE3, before, signal: ctl.signal };
      this.state.client.search(q, options).then(
        (page) => {
          if (ctl !== this.reading || this.state.closed) return;
          this.reading = void 0;
          this.results.push(...page.results);
          this.next = page.next;
          this.status = this.results.length > 0 ? "" : page.next !== void 0 ? `No messages match “${q}” yet; there is more to look through.` : `No messages match “${q}”.`;
          this.render();
        },
        (e) => {
          if (ctl !== this.reading || this.state.closed) return;
          this.reading = void 0;
          this.status = errorText(e);
          this.render();
        }
      );
    }
    /** Draws the results, the status line and "More results". */
    render() {
      const panel = this.panel;
      if (panel === void 0) return;
      panel.hidden = this.query === "";
      const terms = this.query.split(/\s+/u).filter((t) => t !== "");
      const items = this.results.map((m) => this.item(m, terms));
      const children = [
        h("p", { class: "hint search-status", id: "search-status", role: "status" }, this.status),
        h("ul", { class: "search-list", id: "search-list", "aria-label": `Messages matching ${this.query}` }, ...items)
      ];
      if (this.next !== void 0 && this.reading === void 0) {
        const next = this.next;
        children.push(
          h(
            "button",
            {
              type: "button",
              class: "more",
              id: "search-more",
              onclick: () => {
                this.read(next);
              }
            },
            "More results"
          )
        );
      }
      children.push(
        h(
          "button",
          {
            type: "button",
            class: "search-close",
            id: "search-close",
            onclick: () => {
              this.clear();
            }
          },
          "Close search"
        )
      );
      panel.replaceChildren(...children);
    }
    /** One result: a button with its channel, sender, time and text (the terms marked). */
    item(m, terms) {
      const channel = this.state.label(m.channelId);
      return h(
        "li",
        {},
        h(
          "button",
          {
            type: "button",
            class: "search-result",
            "data-message-id": m.messageId,
            "data-channel": m.channelId,
            "data-seq": m.seq,
            "aria-label": `${m.senderId} in ${channel}: ${m.body}`,
            onclick: () => {
              this.hooks.open(m);
            }
          },
          h(
            "span",
            { class: "search-meta" },
            h("span", { class: "search-channel" }, channel),
            " · ",
            h("span", { class: "search-sender" }, m.senderId),
            " · ",
            h("time", { datetime: new Date(m.ts).toISOString() }, until(m.ts))
          ),
          h("span", { class: "search-body" }, ...highlighted(m.body, terms))
        )
      );
    }
  };
  function highlighted(text, terms) {
    const chars = Array.from(text);
    let lowered = "";
    const from = [];
    const starts = [];
    let at = 0;
    for (const ch of chars) {
      starts.push(at);
      const low = ch.toLowerCase();
      for (let i2 = 0; i2 < low.length; i2++) from.push(starts.length - 1);
      lowered += low;
      at += ch.length;
    }
    starts.push(at);
    const marked = new Array(chars.length).fill(false);
    for (const term of terms) {
      const t = Array.from(term, (c) => c.toLowerCase()).join("");
      if (t === "") continue;
      for (let i2 = lowered.indexOf(t); i2 >= 0; i2 = lowered.indexOf(t, i2 + 1)) {
        const first = from[i2] ?? 0;
        const last2 = from[i2 + t.length - 1] ?? first;
        for (let c = first; c <= last2; c++) marked[c] = true;
      }
    }
    const out = [];
    let i = 0;
    while (i < chars.length) {
      const m = marked[i] === true;
      let j = i;
      while (j < chars.length && marked[j] === true === m) j++;
      const piece = text.slice(starts[i], starts[j]);
      out.push(m ? h("mark", {}, piece) : piece);
      i = j;
    }
    return out;
  }

  // src/chat-state.ts
  var ChatState = class {
    /** The user's chatd client. */
    client;
    /** The channels opened (their entries read) so far, by id. */
    stores = /* @__PURE__ */ new Map();
    /** Version 1.1 operations the server answered `unknown_type` to (the client learns of some by itself). */
    localUnsupported = /* @__PURE__ */ new Set();
    /** The selected channel, if any. */
    current;
    /** Set once the view is closed: late callbacks then change nothing. */
    closed = false;
    /**
     * The other user of each direct channel, once known (from `direct`'s answer, or its
     * members read); the user's own id for the user's channel with itself.
     */
    peers = /* @__PURE__ */ new Map();
    /**
     * Who removed the user from each channel it was removed from (the `actorId` of its
     * `MEMBER` leave or ban, which comes just before `CHANNEL_REMOVED`): said in the notice.
     */
    removedBy = /* @__PURE__ */ new Map();
    /**
     * The users this user blocks (`GET /v1/me/blocks`, read at start, and changed by Block and
     * Unblock): their messages in group channels are hidden (protocol §17: the client hides them).
     */
    blocked = /* @__PURE__ */ new Set();
    /** What each channel was last called on screen: a removed channel keeps its name in notices. */
    labels = /* @__PURE__ */ new Map();
    constructor(client) {
      this.client = client;
    }
    /** The user id (the token's subject). */
    get userId() {
      return this.client.userId;
    }
    /** The channel list's entry of a channel, if the user is in it. */
    summary(id) {
      return this.client.channelList.getSnapshot().find((c) => c.channelId === id);
    }
    /**
     * What a channel is called on screen: `@ bob` for a direct channel (`@ …` until the other
     * user is known), `# name` for a group with a name, else `# id`.
     */
    label(id) {
      const s = this.summary(id);
      if (s === void 0) return this.labels.get(id) ?? `# ${id}`;
      const label = s.kind === "direct" ? `@ ${this.peers.get(id) ?? "…"}` : `# ${s.name ?? id}`;
      this.labels.set(id, label);
      return label;
    }
    /** The store of the selected channel, once opened. */
    currentStore() {
      return this.current === void 0 ? void 0 : this.stores.get(this.current);
    }
    /** The selected channel's snapshot, once opened. */
    snapshot() {
      return this.currentStore()?.getSnapshot();
    }
    /** The operations this server does not support, sorted: those the client learned of and those refused here. */
    unsupported() {
      const all = /* @__PURE__ */ new Set([...this.client.connection.getSnapshot().unsupported, ...this.localUnsupported]);
      return [...all].sort();
    }
    /** Whether `op` may be offered (not known to be unsupported). */
    supports(op) {
      return !this.unsupported().includes(op);
    }
  };

  // src/chat-thread.ts
  var ThreadPanel = class {
    state;
    open;
    panelEl;
    listEl;
    rootEl;
    olderBtn;
    statusEl;
    textarea;
    constructor(state) {
      this.state = state;
    }
    /** The thread shown, if any. */
    get rootId() {
      return this.open?.rootId;
    }
    /** Opens the thread of `root` (in the selected channel): the panel shows it at once. */
    show(root) {
      if (this.open?.rootId === root.messageId) {
        this.textarea?.focus();
        return;
      }
      this.hide();
      const store = this.state.client.thread(root.channelId, root.messageId);
      const unsub = store.subscribe(() => {
        this.render();
      });
      this.open = { channelId: root.channelId, rootId: root.messageId, store, unsub };
      this.build();
      this.render();
      this.textarea?.focus();
    }
    /** Closes the panel. */
    hide() {
      this.open?.unsub();
      this.open = void 0;
      this.panelEl?.remove();
      this.panelEl = void 0;
      this.listEl = void 0;
    }
    /** The pane was built anew: the panel (when a thread of this channel is open) goes back into it. */
    attach(pane) {
      if (this.open === void 0) return;
      if (this.open.channelId !== this.state.current) {
        this.hide();
        return;
      }
      this.build(pane);
      this.render();
    }
    build(pane = document.getElementById("pane")) {
      const open = this.open;
      if (open === void 0) return;
      this.panelEl?.remove();
      this.rootEl = h("div", { class: "thread-root", id: "thread-root" });
      this.olderBtn = h(
        "button",
        {
          type: "button",
          class: "older",
          id: "thread-older",
          hidden: true,
          onclick: () => {
            open.store.loadOlder().catch((e) => {
              if (this.statusEl !== void 0) this.statusEl.textContent = errorText(e);
            });
          }
        },
        "Load older replies"
      );
      this.listEl = h("ol", { class: "messages thread-messages", id: "thread-messages", role: "log", "aria-label": "Replies in this thread" });
      this.statusEl = h("div", { class: "thread-status", id: "thread-status", "aria-live": "polite" });
      const textarea = h("textarea", { id: "thread-composer", rows: 1, "aria-label": "Reply in this thread", placeholder: "Reply in thread (Enter sends)" });
      textarea.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
          ev.preventDefault();
          this.submit();
        } else if (ev.key === "Escape") {
          ev.preventDefault();
          this.hide();
        }
      });
      this.textarea = textarea;
      this.panelEl = h(
        "aside",
        { class: "thread-panel", id: "thread", "data-root": open.rootId, "aria-label": "Thread" },
        h(
          "div",
          { class: "thread-head" },
          h("h3", {}, "Thread"),
          h(
            "button",
            {
              type: "button",
              id: "thread-close",
              "aria-label": "Close the thread",
              onclick: () => {
                this.hide();
              }
            },
            "✕"
          )
        ),
        this.rootEl,
        this.olderBtn,
        this.listEl,
        this.statusEl,
        h(
          "div",
          { class: "composer" },
          textarea,
          h(
            "button",
            {
              type: "button",
              class: "primary",
              id: "thread-send",
              onclick: () => {
                this.submit();
              }
            },
            "Reply"
          )
        )
      );
      pane?.append(this.panelEl);
    }
    /** Draws the root, the replies and the user's unsent replies. */
    render() {
      const open = this.open;
      const list = this.listEl;
      if (open === void 0 || list === void 0) return;
      const snap = open.store.getSnapshot();
      if (this.rootEl !== void 0) this.rootEl.replaceChildren(...snap.root === void 0 ? [] : [this.item(snap.root)]);
      const items = snap.messages.map((m) => this.item(m));
      for (const o of snap.outgoing) items.push(this.outgoingItem(o));
      if (snap.status === "ready" && items.length === 0) items.push(h("li", { class: "empty" }, "No replies yet."));
      list.replaceChildren(...items);
      list.scrollTop = list.scrollHeight;
      if (this.olderBtn !== void 0) this.olderBtn.hidden = !snap.hasOlder;
      if (this.statusEl !== void 0) this.statusEl.textContent = statusWords2(snap);
      if (this.panelEl !== void 0) this.panelEl.dataset.status = snap.status;
      if (snap.status === "removed" || snap.status === "failed") {
        if (this.textarea !== void 0) this.textarea.disabled = true;
      }
    }
    submit() {
      const open = this.open;
      const c = this.textarea;
      if (open === void 0 || c === void 0) return;
      const body = c.value;
      if (body.trim() === "") return;
      c.value = "";
      open.store.send(body).catch(() => {
      });
    }
    /** A stored message of the thread (or its root). */
    item(m) {
      const mine = m.senderId === this.state.userId;
      const li = h(
        "li",
        {
          class: "msg",
          "data-message-id": m.messageId,
          "data-seq": m.seq,
          "data-sender": m.senderId,
          "data-mine": String(mine),
          "data-state": "sent",
          "data-deleted": String(m.deleted),
          "data-expired": String(m.expired)
        },
        h("div", { class: "msg-head" }, h("span", { class: "sender" }, mine ? `${m.senderId} (you)` : m.senderId)),
        m.replyPreview !== void 0 && !m.deleted ? quoteElement(m.replyPreview, m.replyTo) : null,
        h("div", { class: "body" }, m.expired ? "This message expired." : m.deleted ? "This message was deleted." : m.body),
        m.attachments.length > 0 ? attachmentsElement(this.state.client, m) : null,
        h("div", { class: "meta" }, h("time", { datetime: new Date(m.ts).toISOString() }, clock(m.ts)), m.editedAt !== void 0 && !m.deleted ? h("span", { class: "edited" }, "(edited)") : null)
      );
      if (!m.deleted && this.state.client.mayDelete(m) && this.state.supports("MSG_DELETE")) {
        li.append(
          h(
            "div",
            { class: "actions" },
            deleteControl(m.messageId, mine ? "Delete this reply" : `Delete ${m.senderId}’s reply (as moderator)`, !mine, () => {
              this.state.client.deleteMessage(m.channelId, m.messageId).catch((e) => {
                if (this.statusEl !== void 0) this.statusEl.textContent = errorText(e);
              });
            })
          )
        );
      }
      return li;
    }
    /** One of the user's replies not yet stored: pending, sent, or failed with Retry. */
    outgoingItem(o) {
      const me = this.state.userId;
      const words2 = o.state === "pending" ? "⏳ pending" : o.state === "sent" ? "✓ sent" : "⚠ failed";
      const li = h(
        "li",
        { class: "msg", "data-client-msg-id": o.clientMsgId, "data-mine": "true", "data-sender": me, "data-state": o.state },
        h("div", { class: "msg-head" }, h("span", { class: "sender" }, `${me} (you)`)),
        h("div", { class: "body" }, o.body),
        h("div", { class: "meta" }, h("span", { class: "state", "data-state": o.state }, words2))
      );
      if (o.state === "failed") {
        li.append(
          h("div", { class: "meta error" }, errorWords(o.error?.code ?? "internal", o.error?.message ?? "failed", o.error?.reason)),
          h(
            "div",
            { class: "actions" },
            h(
              "button",
              {
                type: "button",
                class: "retry",
                onclick: () => {
                  this.state.client.retry(o.clientMsgId).catch(() => void 0);
                }
              },
              "Retry"
            ),
            h(
              "button",
              {
                type: "button",
                class: "discard",
                onclick: () => {
                  void this.state.client.discard(o.clientMsgId);
                }
              },
              "Discard"
            )
          )
        );
      }
      return li;
    }
  };
  function statusWords2(s) {
    switch (s.status) {
      case "loading":
        return "Loading replies…";
      case "failed":
        return `This thread cannot be shown: ${errorWords(s.error?.code ?? "internal", s.error?.message ?? "refused")}`;
      case "removed":
        return "You are no longer in this channel.";
      case "ready":
        return "";
    }
  }

  // src/chat.ts
  function channelKey(userId) {
    return `chatd-console-channel:${userId}`;
  }
  function lastChannel(userId) {
    try {
      return sessionStorage.getItem(channelKey(userId)) ?? void 0;
    } catch {
      return void 0;
    }
  }
  function rememberChannel(userId, channelId) {
    try {
      sessionStorage.setItem(channelKey(userId), channelId);
    } catch {
    }
  }
  var ChatView = class {
    /** The user's chatd client. */
    client;
    state;
    notices;
    connection;
    channels;
    people;
    members;
    directory;
    newChats;
    actions;
    messages;
    composer;
    posting;
    notify;
    thread;
    search;
    unsubs = [];
    /** The channels of the last HELLO (not announced as new). */
    helloIds = /* @__PURE__ */ new Set();
    /** A HELLO came on this page (the channels are known from the server). */
    sawHello = false;
    constructor(token, host) {
      const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/v1/ws`;
      this.client = new ChatClient({ url: wsUrl, token });
      const state = new ChatState(this.client);
      this.state = state;
      this.notices = new Notices(state);
      this.connection = new ConnectionIndicator(state, token, {
        signedOut: (reason) => {
          host.signedOut(reason);
        },
        opened: () => {
          this.notices.render();
        }
      });
      this.channels = new ChannelList(
        state,
        (id) => {
          this.select(id);
        },
        () => {
          this.retitle();
        }
      );
      this.people = new People(state);
      this.members = new ChannelMembers(state, () => {
        this.messages.render();
      });
      this.posting = new PostingState(state);
      this.notify = new NotifyMenu(state);
      this.directory = new ChannelDirectory(state, {
        select: (id) => {
          this.select(id ?? this.client.channelIds()[0]);
        },
        notice: (text) => {
          this.notices.set(text);
        }
      });
      this.newChats = new NewChats(state, {
        select: (id) => {
          this.select(id);
        }
      });
      this.composer = new Composer(state, {
        edit: (channelId, messageId, body) => {
          this.actions.edit(channelId, messageId, body);
        },
        typed: () => {
          this.notices.render();
        }
      });
      this.actions = new MessageActions(state, {
        notice: (text) => {
          this.notices.set(text);
        },
        redraw: () => {
          this.messages.render();
        },
        startEdit: (m) => {
          this.composer.startEdit(m);
        },
        startReply: (m) => {
          this.composer.startReply(m);
        },
        openThread: (m) => {
          this.thread.show(m);
        },
        blocked: () => {
          this.messages.render();
          this.members.render();
        }
      });
      this.thread = new ThreadPanel(state);
      this.search = new MessageSearch(state, {
        open: (m) => {
          if (m.channelId !== this.state.current) this.select(m.channelId);
          this.messages.reveal(m.channelId, m.messageId);
        }
      });
      this.messages = new MessageList(state, this.actions, {
        notice: (text) => {
          this.notices.set(text);
        },
        readOnly: () => {
          this.composer.disable();
        },
        openThread: (m) => {
          this.thread.show(m);
        }
      });
    }
    /** The user id (the token's subject). */
    get userId() {
      return this.client.userId;
    }
    /** Starts the client (loads the outbox from IndexedDB, connects). */
    async start() {
      const c = this.client;
      this.unsubs.push(
        c.connection.subscribe(() => {
          this.connection.update();
          this.openBeforeHello();
          this.people.renderPeople();
          this.messages.render();
        }),
        c.presence.subscribe(() => {
          this.people.renderPeople();
          this.messages.render();
        }),
        c.channelList.subscribe(() => {
          this.channels.changed();
          this.notify.render();
          this.directory.render();
          this.retitle();
          this.members.render();
        }),
        c.events.on("hello", (hello) => {
          this.sawHello = true;
          this.helloIds = new Set(hello.channels.map((x) => x.channelId));
          this.channels.render();
          if (this.state.current === void 0 || !c.channelIds().includes(this.state.current)) {
            const last2 = lastChannel(this.userId);
            this.select(last2 !== void 0 && c.channelIds().includes(last2) ? last2 : c.channelIds()[0]);
          } else this.members.refresh();
        }),
        c.events.on("channelAdded", (id) => {
          this.channels.notice(id, void 0);
          this.state.removedBy.delete(id);
          this.channels.render();
          if (this.state.current === void 0) this.select(id);
          else if (this.state.current === id) {
            this.notices.forget(id);
            this.renderPane();
            this.members.refresh();
          }
          if (!this.helloIds.has(id) && !this.directory.isJoining(id)) announce(`You were added to channel ${id}.`);
        }),
        c.events.on("entries", (channelId, entries) => {
          const recent = Date.now() - 15e3;
          for (const e of entries) {
            if ((e.kind ?? "message") === "message" && e.senderId !== this.userId && e.ts >= recent) {
              announce(`New message from ${e.senderId} in ${channelId}: ${e.body}`);
            }
          }
        }),
        c.events.on("member", (f) => {
          if (f.userId === this.userId && (f.op === "leave" || f.op === "ban")) {
            this.state.removedBy.set(f.channelId, f.actorId === this.userId ? void 0 : f.actorId);
          }
          this.messages.memberChange(f);
        }),
        c.events.on("channelRemoved", (id, reason) => {
          const why = removalWords(this.state.label(id), reason, this.state.removedBy.get(id));
          this.channels.notice(id, why);
          announce(why);
          this.channels.render();
          this.renderPane();
          if (id === this.state.current) this.members.refresh();
        }),
        c.events.on("error", (err) => {
          banner(errorWords(err.code, err.message, err.reason));
        })
      );
      const goOffline = () => {
        this.connection.offline();
      };
      window.addEventListener("offline", goOffline);
      this.unsubs.push(() => {
        window.removeEventListener("offline", goOffline);
      });
      await c.start();
      this.connection.update();
      c.moderation.blocks().then(
        (list) => {
          if (this.state.closed) return;
          for (const u of list) this.state.blocked.add(u);
          this.messages.render();
          this.members.render();
        },
        () => void 0
      );
    }
    /** Closes the client for good. */
    close() {
      this.state.closed = true;
      this.connection.stop();
      this.members.close();
      this.posting.close();
      for (const u of this.unsubs.splice(0)) u();
      this.client.close();
      this.connection.idle();
    }
    /** Shows the view in `root`. */
    mount(root) {
      document.title = `${this.userId} · chatd console`;
      const sidebar = this.channels.sidebar();
      sidebar.prepend(this.search.element());
      sidebar.append(this.newChats.element(), this.directory.element());
      root.replaceChildren(h("div", { class: "chat" }, sidebar, h("section", { class: "pane", id: "pane", "aria-label": "Messages" }), this.members.element()));
      this.channels.render();
      this.renderPane();
      this.members.render();
    }
    /** Opens a channel (reads its newest entries) the first time the user selects it. */
    open(id) {
      if (this.state.stores.has(id)) return;
      const store = this.client.channel(id);
      this.state.stores.set(id, store);
      this.unsubs.push(
        store.subscribe(() => {
          this.onChannelChange(id);
        })
      );
    }
    /** An opened channel changed: mark it read when it is on screen, and redraw it. */
    onChannelChange(id) {
      if (id !== this.state.current) return;
      const snap = this.state.stores.get(id)?.getSnapshot();
      if (snap !== void 0 && document.visibilityState === "visible" && snap.status === "ready") {
        this.state.stores.get(id)?.markRead();
      }
      this.messages.render();
      this.members.channelChanged();
      this.people.renderTyping();
      this.people.renderPeople();
      this.people.updateSubscription();
      this.members.render();
      this.posting.render();
    }
    /** Selects a channel (or none), opens it and builds its pane. */
    /**
     * The server cannot be reached before any HELLO (a reload while it is down: the page came
     * from the service worker's cache, offline.ts): opens the channel this tab had open, so
     * its messages still in the outbox show, pending. HELLO then keeps it (or picks another
     * when the user is no longer in it).
     */
    openBeforeHello() {
      if (this.sawHello || this.state.current !== void 0 || this.client.connection.getSnapshot().state !== "reconnecting") return;
      const last2 = lastChannel(this.userId);
      if (last2 !== void 0) this.select(last2);
    }
    select(id) {
      if (id !== this.state.current) this.thread.hide();
      this.state.current = id;
      if (id !== void 0) rememberChannel(this.userId, id);
      this.composer.forgetEdit();
      this.messages.reset();
      if (id !== void 0) this.open(id);
      this.channels.render();
      this.renderPane();
      this.members.refresh();
      if (id !== void 0) this.state.stores.get(id)?.markRead();
    }
    /** The selected channel's title, again (its name, or a direct channel's other user, became known). */
    retitle() {
      const title = document.getElementById("channel-title");
      const id = this.state.current;
      if (title === null || id === void 0) return;
      const text = this.state.label(id);
      if (title.textContent === text) return;
      title.textContent = text;
      this.composer.relabel();
    }
    /** Builds the pane of the selected channel from its parts (or says why there is none). */
    renderPane() {
      const pane = document.getElementById("pane");
      if (pane === null) return;
      const id = this.state.current;
      if (id === void 0) {
        this.messages.detach();
        pane.replaceChildren(
          h(
            "div",
            { class: "empty", id: "no-channels" },
            this.client.connection.getSnapshot().state === "open" ? `You (${this.userId}) are not a member of any channel yet. Join a public one with “Browse channels”, or an admin adds you in the admin view (/console#admin); the channel shows up here when they do.` : "Connecting…"
          )
        );
        return;
      }
      pane.replaceChildren(
        h(
          "div",
          { class: "pane-head" },
          h("h2", { id: "channel-title", "data-channel": id, title: id }, this.state.label(id)),
          this.people.peopleElement(),
          this.notify.element(),
          this.directory.leaveButton(id)
        ),
        this.messages.element(id),
        this.people.typingElement(),
        this.notices.element(),
        this.composer.editingElement(),
        this.composer.replyingElement(),
        this.posting.element(),
        this.composer.trayElement(),
        this.composer.element(id)
      );
      const scroller = pane.querySelector("#scroller");
      if (scroller instanceof HTMLElement) this.composer.acceptFiles(scroller);
      this.posting.render();
      this.thread.attach(pane);
      this.messages.render();
      this.people.renderTyping();
      this.people.renderPeople();
      this.notices.render();
      this.people.updateSubscription();
      this.composer.focus();
    }
  };

  // src/offline.ts
  var CACHE = "chatd-console-shell-v1";
  var PAGE4 = "/console/";
  var SCOPE = "/console/";
  var SCRIPT = "/console/console.js";
  var SHELL = /* @__PURE__ */ new Map([
    ["/console", PAGE4],
    ["/console/", PAGE4],
    ["/console/console.js", "/console/console.js"],
    ["/console/console.css", "/console/console.css"],
    ["/console/favicon.svg", "/console/favicon.svg"]
  ]);
  function inWorker() {
    return typeof document === "undefined";
  }
  function registerShell() {
    if (!("serviceWorker" in navigator)) return;
    if (location.pathname === "/console") history.replaceState(history.state, "", `${PAGE4}${location.search}${location.hash}`);
    navigator.serviceWorker.register(SCRIPT, { scope: SCOPE }).catch(() => void 0);
  }
  async function networkFirst(e, key2) {
    try {
      const r = await fetch(e.request);
      if (r.status === 200) {
        const copy = r.clone();
        e.waitUntil(caches.open(CACHE).then((c) => c.put(key2, copy)));
      }
      return r;
    } catch (err) {
      const cached = await caches.match(key2, { cacheName: CACHE });
      if (cached !== void 0) return cached;
      throw err;
    }
  }
  function serveShell(sw) {
    sw.addEventListener("install", (e) => {
      e.waitUntil(
        caches.open(CACHE).then((c) => c.addAll([...new Set(SHELL.values())])).then(() => sw.skipWaiting())
      );
    });
    sw.addEventListener("activate", (e) => {
      e.waitUntil(
        caches.keys().then((names) => Promise.all(names.filter((n) => n.startsWith("chatd-console-shell-") && n !== CACHE).map((n) => caches.delete(n)))).then(() => sw.clients.claim())
      );
    });
    sw.addEventListener("fetch", (e) => {
      if (e.request.method !== "GET") return;
      const url = new URL(e.request.url);
      if (url.origin !== sw.location.origin) return;
      const key2 = SHELL.get(url.pathname);
      if (key2 === void 0) return;
      e.respondWith(networkFirst(e, key2));
    });
  }

  // src/main.ts
  var TOKEN_KEY = "chatd-console-token";
  var chat;
  function storedToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) ?? void 0;
    } catch {
      return void 0;
    }
  }
  function storeToken(token) {
    try {
      if (token === void 0) sessionStorage.removeItem(TOKEN_KEY);
      else sessionStorage.setItem(TOKEN_KEY, token);
    } catch {
    }
  }
  function takeTokenFromHash() {
    const m = /^#token=([^&]+)/.exec(location.hash);
    if (m === null || m[1] === void 0) return;
    const token = decodeURIComponent(m[1]);
    history.replaceState(null, "", location.pathname + location.search);
    if (chat !== void 0 && chat.client.connection.getSnapshot().userId !== jwtSubject(token)) signOut();
    storeToken(token);
  }
  function signOut(reason) {
    chat?.close();
    chat = void 0;
    storeToken(void 0);
    byId("me").textContent = "";
    byId("signout").hidden = true;
    route();
    if (reason !== void 0) banner(reason);
  }
  function renderSignIn(root, problem) {
    document.title = "Sign in · chatd console";
    const input = h("textarea", { id: "token", spellcheck: "false", autocomplete: "off", "aria-describedby": "token-hint" });
    const out = h("p", { class: "result", id: "signin-result", role: "status", "data-ok": problem === void 0 ? "true" : "false" }, problem ?? "");
    const form = h(
      "form",
      {
        class: "card",
        "aria-labelledby": "signin-title",
        onsubmit: (ev) => {
          ev.preventDefault();
          const t = input.value.trim();
          if (jwtSubject(t) === void 0) {
            out.dataset.ok = "false";
            out.textContent = "This does not look like a chatd user token (a JWT: three parts separated by dots).";
            return;
          }
          void (async () => {
            try {
              const r = await fetch("/v1/me/channels", {
                cache: "no-store",
                headers: { authorization: `Bearer ${t}` }
              });
              if (r.status === 401) {
                const body = await r.json().catch(() => ({}));
                out.dataset.ok = "false";
                out.replaceChildren(...withCode(tokenWords(body.error?.message ?? "unauthorized")));
                return;
              }
            } catch {
              out.dataset.ok = "false";
              out.textContent = "The chat server cannot be reached (is chatd running?).";
              return;
            }
            storeToken(t);
            route();
          })();
        }
      },
      h("h2", { id: "signin-title" }, "Sign in"),
      h(
        "p",
        { class: "hint", id: "token-hint" },
        "Paste your user token: run ",
        h("code", {}, "chatd token alice"),
        " on the server, or ask an admin for a sign-in link (admin view). A link ",
        h("code", {}, "/console#token=…"),
        " signs you in directly."
      ),
      h("label", { for: "token" }, "User token"),
      input,
      h("p", {}, h("button", { type: "submit", class: "primary", id: "signin" }, "Sign in")),
      out,
      h("p", { class: "hint" }, "Setting up? The ", h("a", { href: "#admin" }, "admin view"), " creates channels and mints tokens with the admin token.")
    );
    root.replaceChildren(h("div", { class: "admin" }, form));
  }
  function startChat(token) {
    if (jwtSubject(token) === void 0) {
      storeToken(void 0);
      return void 0;
    }
    const view = new ChatView(token, {
      signedOut: (reason) => {
        signOut(reason);
      }
    });
    byId("me").textContent = `signed in as ${view.userId}`;
    byId("signout").hidden = false;
    view.start().catch((e) => {
      signOut(`Could not start: ${String(e)}`);
    });
    return view;
  }
  function route() {
    takeTokenFromHash();
    const root = byId("app");
    byId("nav-admin").setAttribute("aria-current", location.hash === "#admin" ? "page" : "false");
    byId("nav-chat").setAttribute("aria-current", location.hash === "#admin" ? "false" : "page");
    if (location.hash === "#admin") {
      renderAdmin(root);
      return;
    }
    adminHeader();
    const token = storedToken();
    if (token === void 0) {
      renderSignIn(root);
      return;
    }
    chat ??= startChat(token);
    if (chat === void 0) renderSignIn(root, "That token could not be read; paste it again.");
    else chat.mount(root);
  }
  function boot() {
    ensureRandomUUID();
    registerShell();
    byId("signout").addEventListener("click", () => {
      signOut();
    });
    window.addEventListener("hashchange", () => {
      banner("");
      route();
    });
    route();
  }
  if (inWorker()) serveShell(self);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
