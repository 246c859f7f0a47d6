/**
 * {@link ClientParts}: the parts of one {@link ChatClient} (connection, channels, sync,
 * send path, tab outbox, receipts, typing, presence, channel refresh, members, member
 * lists, directory, new channels, search, moderation, attachments), made and wired
 * together; server frames go to its {@link FrameRouter}.
 *
 * @module
 */
import { Attachments } from './attachments.js';
import { NewChannels } from './channel-create.js';
import { ChannelRefresh } from './channel-refresh.js';
import { Channels } from './channels.js';
import { Connection, jwtSubject } from './connection.js';
import { Directory } from './directory.js';
import { ChatdError } from './errors.js';
import { FrameRouter } from './frame-router.js';
import { MemberLists } from './member-lists.js';
import { Members } from './members.js';
import { Moderation } from './moderation.js';
import { TabOutbox } from './outbox-tabs.js';
import { PresenceSubscription } from './presence.js';
import { Receipts } from './receipts.js';
import { Search } from './search.js';
import { Sender } from './send.js';
import { Sync } from './sync.js';
import { TypingIndicators } from './typing-indicators.js';
/** @internal The parts of one client, wired together. */
export class ClientParts {
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
        const uid = options.userId ?? (typeof options.token === 'string' ? jwtSubject(options.token) : undefined);
        const c = {
            opts: options,
            now: options.now ?? Date.now,
            tabId: crypto.randomUUID(),
            events,
            userId: uid ?? '',
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
            stale: (now, limitMs) => this.sender.stale(now, limitMs) || this.sync.stale(now, limitMs),
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
            },
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
            closed: () => conn.state === 'closed',
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
        if (this.c.userId === '') {
            const t = await this.conn.getToken();
            this.c.userId = jwtSubject(t) ?? '';
            if (this.c.userId === '')
                throw new ChatdError('invalid_field', 'userId: not given and not in the token');
        }
        if (this.c.opts.tabSync !== false)
            this.tabOutbox.joinTabs();
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
}
//# sourceMappingURL=client-parts.js.map