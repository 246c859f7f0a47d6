import type { ChannelCtx, Channels } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import type { SyncBatchFrame, WireEntry } from './protocol.js';
import type { Receipts } from './receipts.js';
import type { ThreadCtx } from './threads.js';
import type { ClientContext } from './types.js';
/** @internal The SYNC requests of the open connection, per channel, answered in order. */
export declare class Sync {
    private readonly c;
    private readonly conn;
    private readonly channels;
    private readonly receipts;
    private readonly syncs;
    /** A channel's opening or catch-up read (or a thread's first read, keyed channel NUL root) refused with a retryable error: the timer that asks again. */
    private readonly retryTimers;
    /** How many such refusals in a row, per key (the backoff's attempt). */
    private readonly retryAttempts;
    /** Reads over the connection into the channels; appended entries are delivered receipts to be. */
    constructor(c: ClientContext, conn: Connection, channels: Channels, receipts: Receipts);
    /** An opened channel after a (re)connection or a listing: open it, or catch it up; then its threads. */
    resume(ch: ChannelCtx): void;
    /** Reads the newest replies of a thread not read yet (after its channel's reads, so as of a later seq). */
    openThread(ch: ChannelCtx, t: ThreadCtx): void;
    /** Loads the page of a thread's replies below its oldest held one; resolves to whether even older ones exist. */
    threadOlder(ch: ChannelCtx, t: ThreadCtx, signal?: AbortSignal): Promise<boolean>;
    private pumpThreadOlder;
    /** The answer to a thread's read. */
    private onThreadBatch;
    /** Reads the newest page of an opened channel whose window is not placed yet. */
    openChannel(ch: ChannelCtx): void;
    /** Reads what is known to exist above the window (a gap, or what came while away). */
    catchUp(ch: ChannelCtx): void;
    /**
     * Loads the page just below the window for `ch`'s `loadOlder` waiters. Resolves to
     * whether even older entries exist.
     */
    loadOlder(ch: ChannelCtx, signal?: AbortSignal): Promise<boolean>;
    /**
     * Reads the held window again (pages of SYNC from its bottom to its top), so that the
     * held messages the retention sweep has erased since (§19; no entry tells of it) show
     * `expired`. Resolves to how many became expired; rejects with `unavailable` when the
     * connection is not open or drops, or the SYNC's error.
     */
    recheck(ch: ChannelCtx): Promise<number>;
    private recheckPage;
    private onRecheckBatch;
    /** Reads the next older page when `loadOlder` calls wait for one (the window placed first). */
    pumpOlder(ch: ChannelCtx, fromSeq?: number): void;
    /** A SYNC_BATCH arrived: the answer to the channel's oldest SYNC. */
    onBatch(b: SyncBatchFrame): void;
    /**
     * Takes entries into a channel: an opened one's log (emitting `entries` for those
     * appended, catching up on a gap); a channel not opened only counts them (its last seq,
     * others' messages for the unread count). `fromRead`: they come from a SYNC_BATCH whose
     * `lastSeq` is `readLastSeq`.
     */
    ingest(channelId: string, entries: readonly WireEntry[], fromRead: boolean, readLastSeq?: number): void;
    /**
     * An ERROR naming the channel and no clientMsgId: the answer to its oldest SYNC, if one
     * waits (`forbidden`: the channel is gone for the user). Returns whether it was one.
     */
    onError(channelId: string, err: ChatdError): boolean;
    /**
     * An ERROR naming only a message (no channel, no clientMsgId): the answer to a thread's
     * read of that root, when one is the oldest SYNC of its channel. Returns whether it was one.
     */
    onThreadError(messageId: string, err: ChatdError): boolean;
    /** Whether a SYNC has waited for its answer longer than `limitMs`. */
    stale(now: number, limitMs: number): boolean;
    /**
     * Asks a channel's refused opening or catch-up read (with `thread`: that thread's first
     * read) again after a backoff
     * (`retryBackoff`, at least the ERROR's `retryAfterMs`), on the same connection; one
     * timer per channel. A reconnect meanwhile asks by itself (HELLO resumes the channel).
     */
    private retryRead;
    /** The client closed: no read is asked again. */
    close(): void;
    /** The connection dropped: no SYNC on it will be answered (they are sent again after HELLO). */
    dropped(): void;
    private syncQueue;
    private sendSync;
    private pageSize;
}
//# sourceMappingURL=sync.d.ts.map