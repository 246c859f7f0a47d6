import { ChannelStore } from './channel-store.js';
import { ClientParts } from './client-parts.js';
import { setNotifySettings } from './notify-settings.js';
import { messageOp } from './outbox.js';
import { Emitter } from './store.js';
import { newThread } from './threads.js';
/**
 * The chatd client: one WebSocket session that reconnects by itself, a durable outbox,
 * and a store per channel.
 *
 * @example
 * ```ts
 * const client = new ChatClient({ url: 'wss://chat.example.com/v1/ws', token });
 * await client.start();
 * const room = client.channel('room1');
 * room.subscribe(() => render(room.getSnapshot()));
 * await client.send('room1', 'hello');
 * ```
 */
export class ChatClient {
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
        if (this.started)
            return;
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
        if (t === undefined) {
            t = newThread(ch, rootId, this.userId, () => this.p.tabOutbox.records());
            ch.threads.set(rootId, t);
            this.p.sync.openThread(ch, t);
        }
        const ctx = t;
        return {
            subscribe: ctx.store.subscribe,
            getSnapshot: ctx.store.getSnapshot,
            loadOlder: (signal) => this.p.sync.threadOlder(ch, ctx, signal),
            send: (body, options = {}) => this.send(channelId, body, { ...options, threadId: rootId }),
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
        if (!ch.opened)
            this.channel(channelId);
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
        if (!ch.opened)
            this.channel(channelId);
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
        return this.p.sender.enqueue({ type: 'MSG_EDIT', channelId, messageId, body }, options);
    }
    /**
     * Deletes a message (version 1.1): one of the user's own, or, for a `moderator` or
     * `owner` of its channel, anyone's (protocol §13.1, §17; the delete entry's `senderId`
     * is then the moderator). The client does not judge: the server answers `forbidden`
     * to a delete the user's role does not allow. {@link mayDelete} says whether to offer it.
     */
    deleteMessage(channelId, messageId, options = {}) {
        return this.p.sender.enqueue({ type: 'MSG_DELETE', channelId, messageId }, options);
    }
    /**
     * Whether the user may delete `message` as far as this client knows: it is not deleted,
     * and it is the user's own or the user is a `moderator` or `owner` of its channel (the
     * role of the channel list, which HELLO, CHANNEL_ADDED and the user's MEMBER frames keep
     * current). The server still judges (a role changed a moment ago may not be known here).
     */
    mayDelete(message) {
        if (message.deleted)
            return false;
        if (message.senderId === this.userId)
            return true;
        const role = this.channelList.getSnapshot().find((c) => c.channelId === message.channelId)?.role;
        return role === 'moderator' || role === 'owner';
    }
    /** Adds or removes a reaction (version 1.1). */
    react(channelId, messageId, emoji, op = 'add', options = {}) {
        return this.p.sender.enqueue({ type: 'MSG_REACT', channelId, messageId, emoji, op }, options);
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
}
//# sourceMappingURL=client.js.map