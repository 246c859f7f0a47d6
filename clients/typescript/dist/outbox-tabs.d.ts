/**
 * The user's outbox as this tab holds it, shared with the user's other tabs: the records
 * in storage, loaded at start and after a tab died (a dead tab's records are adopted, one
 * tab at a time under a Web Lock), and mirrored between live tabs over a
 * BroadcastChannel (a tab sends only its own records).
 *
 * @module
 */
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { type OutboxOp, type OutboxRecord, type OutboxStorage } from './outbox.js';
import { WriteAhead } from './outbox-wal.js';
import type { SentEntry } from './snapshot-types.js';
import type { ClientContext } from './types.js';
/** @internal A `send`, `whenSent` or `retry` call waiting for its record's outcome. */
export interface Waiter {
    /** The record was ACKed. */
    resolve: (v: SentEntry) => void;
    /** It failed, was discarded, or the client closed. */
    reject: (e: ChatdError) => void;
    /**
     * A `send` (or `edit`, `deleteMessage`, `react`) call's: while one of these waits, the
     * record is wanted (aborting one such call takes the record out of the outbox only when
     * no other call of this tab made with the same clientMsgId still waits for it).
     */
    claim?: boolean;
}
/** @internal An outbox record held in memory, with where its sending is. */
export interface Pending {
    /** The record as stored. */
    record: OutboxRecord;
    /** true when another live tab is responsible for sending it */
    foreign: boolean;
    /** Retries after retryable errors so far. */
    attempt: number;
    /** Number of the connection it was sent on last (0: not in flight). */
    inflightConn: number;
    /** Its frame's number on that connection. */
    frameNo: number;
    /** When it was sent last. */
    sentAt?: number;
    /** Waits out a retry's backoff. */
    retryTimer: ReturnType<typeof setTimeout> | undefined;
    /** Calls waiting for its outcome. */
    waiters: Waiter[];
    /**
     * Set when every send call of a record being written was aborted: its delete from the
     * storage, once its put is done (a send with the same clientMsgId waits for it, then
     * makes a new record).
     */
    deleting?: Promise<void>;
}
/** What tabs tell each other about the records. */
type BroadcastMsg = {
    t: 'put';
    record: OutboxRecord;
} | {
    t: 'acked';
    clientMsgId: string;
    ack: SentEntry;
    op?: OutboxOp;
} | {
    t: 'deleted';
    clientMsgId: string;
    op?: OutboxOp;
};
/** @internal What the tab outbox asks of the send path. */
export interface TabOutboxHooks {
    /** Another tab's record was ACKed there. */
    acked(p: Pending, ack: SentEntry): void;
    /** A dead tab's records were adopted while open: send them. */
    adopted(): void;
}
/** @internal The outbox records this tab knows of (its own and its live tabs'), and their storage. */
export declare class TabOutbox {
    /** The records by clientMsgId. */
    readonly pending: Map<string, Pending>;
    /** Where the records are kept across reloads. */
    readonly storage: OutboxStorage;
    /** Where a new record is written synchronously until `storage.put` resolved (see outbox-wal.ts). */
    readonly writeAhead: WriteAhead;
    /**
     * This tab's new records whose `storage.put` the send path has not taken yet (by
     * clientMsgId). A load leaves them to it: it holds them once their put resolved, with the
     * caller's waiters (the put starts in the `send` call, so a load running then may read them).
     * A send with the same clientMsgId made meanwhile waits on the one held here.
     */
    readonly writing: Map<string, Pending>;
    private readonly c;
    private readonly conn;
    private readonly channels;
    private readonly hooks;
    private readonly locks;
    private bc;
    private releaseTabLock;
    private readonly watchedOwners;
    private loadChain;
    private orderCounter;
    /**
     * Storage: the `storage` option, else IndexedDB when present, else memory. Write-ahead:
     * the `writeAhead` option, else `localStorage` in a browser with the default IndexedDB
     * storage (a memory storage, given or default, is not meant to outlive the page).
     */
    constructor(c: ClientContext, conn: Connection, channels: Channels, hooks: TabOutboxHooks);
    /** The records, in the order they were added (for the channels' `outgoing`). */
    records(): IterableIterator<OutboxRecord>;
    /** The `order` of a new record: after every record made or loaded so far (microseconds of the clock, or more). */
    nextOrder(): number;
    /** Joins the other tabs: their broadcasts, and a lock held for this tab's life. */
    joinTabs(): void;
    /** Tells the other tabs a record was written, ACKed or deleted. */
    broadcast(m: BroadcastMsg): void;
    /**
     * Reads the outbox from storage: adopts records of dead tabs, mirrors those of live
     * ones. One tab at a time (a Web Lock), so a dead tab's records get one new owner.
     */
    load(): Promise<void>;
    /** The client closed: leaves the other tabs (its records are adopted by one of them). */
    close(): void;
    private onBroadcast;
    /** When another tab dies, its lock is released: adopt its records then. */
    private watchOwner;
    private liveOwners;
    /**
     * Moves the write-ahead entries of tabs that are gone (reloaded, closed, crashed) into
     * the storage, unchanged (same key: a record already there is only written again), so the
     * load that follows adopts them. A live tab's entries are left to it: it removes them once
     * its own `put` resolved. An entry is removed only after its `put` resolved.
     */
    private absorbWriteAhead;
    private loadLocked;
}
/** @internal A record not sent yet (by this tab: `foreign` false). */
export declare function newPending(record: OutboxRecord, foreign: boolean): Pending;
export {};
//# sourceMappingURL=outbox-tabs.d.ts.map