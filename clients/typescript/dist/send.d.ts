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
    /** Makes `op` an outbox record and sends it; resolves on its ACK (see `ChatClient.send`). */
    enqueue(op: OutboxOp, options: SendOptions): Promise<SentEntry>;
    /** Sends a failed outbox record again, with its same clientMsgId. */
    retry(clientMsgId: string): Promise<SentEntry>;
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