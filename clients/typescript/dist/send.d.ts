import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { type Pending, type TabOutbox } from './outbox-tabs.js';
import { type OutboxOp, type OutboxRecord } from './outbox.js';
import type { AckFrame } from './protocol.js';
import type { Sync } from './sync.js';
import type { SendOptions, SentEntry } from './snapshot-types.js';
import type { ClientContext } from './types.js';
/** @internal What the send path tells once a send with attachments is stored (the attachments module reads its signed URLs). */
export interface SentWithAttachments {
    /** A send carrying attachments was ACKed (not as a duplicate) and its entry, made from the ACK, is in its channel. */
    sentWithAttachments(sent: SentEntry): void;
}
/** @internal Sends this tab's outbox records and settles them. */
export declare class Sender {
    private readonly c;
    private readonly conn;
    private readonly channels;
    private readonly sync;
    private readonly outbox;
    private readonly attached;
    private putChain;
    /** Sends the outbox's records on the connection; ACKed entries go into the channels through `sync`. */
    constructor(c: ClientContext, conn: Connection, channels: Channels, sync: Sync, outbox: TabOutbox, attached?: SentWithAttachments);
    /**
     * Makes `op` an outbox record and sends it; resolves on its ACK (see `ChatClient.send`).
     * With the clientMsgId of a record this tab holds (being written, waiting for its ACK, or
     * failed; its own or another tab's), no second record is made: the call waits for that
     * one's outcome, and a failed one is sent again (as `retry` does), when `op` is the same;
     * else it rejects with `idempotency_conflict`, as the server would answer, and the held
     * record goes on unchanged.
     */
    enqueue(op: OutboxOp, options: SendOptions): Promise<SentEntry>;
    /**
     * A send with the clientMsgId of the held record `p`: waits for its outcome when `op` is
     * the same (a failed record is sent again), else rejects with `idempotency_conflict`.
     */
    private again;
    /**
     * A waiter of a send call on `p`. Its `signal` rejects it with `aborted`; when no other
     * send call of this tab then waits for the record, and the record is this tab's, it
     * leaves the outbox (and the storage), so nothing resends it; one being written is
     * deleted once its put is done.
     */
    private claim;
    /**
     * Waits for the outcome of the record `p` (a send call's wait when `claim`, else a
     * `whenSent`). When `signal` aborts first, the wait rejects with `aborted` and leaves the
     * record that holds it then (a waiter moves when another tab's record with the same key is
     * taken), and `aborted` is called with that record; a wait already settled is left alone.
     */
    private wait;
    /** Sends a failed outbox record again, with its same clientMsgId. */
    retry(clientMsgId: string): Promise<SentEntry>;
    /** Makes `p` this tab's pending record again (durably, other tabs told). */
    private takeOver;
    /** A send made with the key of the failed record `p`: it is sent again, as by `retry` (a failed put fails it again). */
    private revive;
    /** Removes an outbox record; its waiters reject with `discarded`. */
    discard(clientMsgId: string): Promise<void>;
    /** The outbox records in send order (this tab's and other tabs'). */
    records(): OutboxRecord[];
    /** Waits for a record's outcome (see `ChatClient.whenSent`). */
    whenSent(clientMsgId: string, signal?: AbortSignal): Promise<SentEntry>;
    /**
     * A connection opened: send this tab's records, then those other tabs left behind
     * (reload, crash). Never rejects: a storage `load` that fails is tried again on the next
     * connection.
     */
    resendAll(): Promise<void>;
    /**
     * A MSG_ACK arrived: its record is settled (or, not held any more, its entry is read).
     * Returns true when it stored a new message of this tab (a `MSG_SEND`, not a duplicate).
     */
    onAck(a: AckFrame): boolean;
    /** An outbox record was ACKed (here or in another tab). */
    completed(p: Pending, sent: SentEntry): void;
    /**
     * An ERROR naming a clientMsgId arrived: when it is a held record's, it is retried
     * (retryable) or failed. Returns whether it was one.
     */
    onError(clientMsgId: string, err: ChatdError): boolean;
    /** The channel of a held record (undefined when none is held under `clientMsgId`). */
    channelOf(clientMsgId: string): string | undefined;
    /** The server does not know the frame type of record `clientMsgId` (`unknown_type`): it fails. */
    unsupported(clientMsgId: string, err: ChatdError): void;
    /** Whether a record sent on the open connection has waited for its answer longer than `limitMs`. */
    stale(now: number, limitMs: number): boolean;
    /** The connection dropped: nothing is in flight (all is sent again after the next HELLO). */
    dropped(): void;
    /** The client closed: no more retries; waiters reject with `closed` (the records stay stored). */
    close(): void;
    private transmit;
    /**
     * Sends every pending record of this tab that is not in flight on the current
     * connection, in send order; a channel's later records wait behind one that waits for
     * its retry, so a channel's messages are stored in the order they were sent.
     */
    private pump;
    /**
     * A refusal of a record: retryable ones wait and go again with the same clientMsgId (slow
     * mode's, `reason: "slow_mode"`, exactly its `retryAfterMs`, without growing the backoff:
     * the server's time is exact); others (`muted`, `read_only`, `blocked`, …) fail it for good.
     */
    private sendFailed;
    private fail;
}
//# sourceMappingURL=send.d.ts.map