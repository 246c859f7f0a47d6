import { type OutboxAttachment } from './attachment-types.js';
import type { SerializedError } from './errors.js';
import type { MessageSendOptions } from './snapshot-types.js';
/** What an outbox record asks the server to store. */
export type OutboxOp = {
    readonly type: 'MSG_SEND';
    readonly channelId: string;
    readonly body: string;
    /** The quoted message (protocol §14), kept with the record so every retry sends it. */
    readonly replyTo?: string;
    /** The thread's root (protocol §14), kept with the record so every retry sends it. */
    readonly threadId?: string;
    /** The users the message mentions (protocol §16), as asked; kept so every retry sends the same set. */
    readonly mentions?: readonly string[];
    /** Mentions every member (protocol §16); kept like `mentions`. */
    readonly mentionAll?: boolean;
    /** Uploads the message carries (protocol §15), in order; kept so every retry sends the same list. */
    readonly attachments?: readonly OutboxAttachment[];
} | {
    readonly type: 'MSG_EDIT';
    readonly channelId: string;
    readonly messageId: string;
    readonly body: string;
} | {
    readonly type: 'MSG_DELETE';
    readonly channelId: string;
    readonly messageId: string;
} | {
    readonly type: 'MSG_REACT';
    readonly channelId: string;
    readonly messageId: string;
    readonly emoji: string;
    readonly op: 'add' | 'remove';
};
/**
 * The op of a message send: `body`, with the reply, thread, mention and attachment fields
 * that `options` sets (kept in the outbox record, so that every retry sends the same frame).
 */
export declare function messageOp(channelId: string, body: string, options: MessageSendOptions): OutboxOp;
/** One durable outbox record: written before the first try, removed when ACKed. */
export interface OutboxRecord {
    /** The user the record belongs to. */
    readonly userId: string;
    /** The idempotency key, made once (a UUIDv7, `uuidv7`) and reused on every retry. */
    readonly clientMsgId: string;
    /** What to store. */
    readonly op: OutboxOp;
    /** When the user sent it (ms since the epoch). */
    readonly createdAt: number;
    /** Send order: increasing in the order the user sent (re)tries go in this order. */
    readonly order: number;
    /** Pending (being tried) or failed (a non-retryable error; the app may retry or discard it). */
    readonly state: 'pending' | 'failed';
    /** The error of a failed record. */
    readonly error?: SerializedError;
    /** The tab (client instance) currently responsible for sending it. */
    readonly owner: string;
}
/**
 * Pluggable durable storage of the outbox. Implementations must have written a record
 * durably when `put` resolves. Records are keyed by (userId, clientMsgId) and are plain
 * JSON. A record is deleted after its ACK (the delete is not awaited by the send, so a
 * crash in between leaves it: the next start sends it again and the server answers
 * `duplicate: true`); a failed record stays until `discard` or a `retry`'s ACK. See the
 * README's "Outbox storage".
 */
export interface OutboxStorage {
    /**
     * Every record of the user, any order. Called by `start` (its rejection rejects
     * `start`) and after each connection opens (a rejection there is tried again on the
     * next connection); it may run while records are put and deleted.
     */
    load(userId: string): Promise<OutboxRecord[]>;
    /** Inserts or replaces a record. */
    put(record: OutboxRecord): Promise<void>;
    /** Removes a record (no error when absent). */
    delete(userId: string, clientMsgId: string): Promise<void>;
}
/** Outbox storage in memory: the Node default; lost with the process. Can be shared by several clients. */
export declare class MemoryOutboxStorage implements OutboxStorage {
    private readonly records;
    /** {@inheritDoc OutboxStorage.load} */
    load(userId: string): Promise<OutboxRecord[]>;
    /** {@inheritDoc OutboxStorage.put} */
    put(record: OutboxRecord): Promise<void>;
    /** {@inheritDoc OutboxStorage.delete} */
    delete(userId: string, clientMsgId: string): Promise<void>;
}
/** The IndexedDB factory type (the platform's `indexedDB`, or fake-indexeddb's in tests). */
export type IDBFactoryLike = IDBFactory;
/**
 * Outbox storage in IndexedDB (the browser default): survives reloads and crashes, and is
 * shared by every tab of the origin. A `put` resolves once its transaction completed
 * with `durability: 'strict'`.
 */
export declare class IndexedDBOutboxStorage implements OutboxStorage {
    private db;
    private readonly factory;
    private readonly name;
    /**
     * @param name - database name (default `chatd-outbox`)
     * @param factory - the IndexedDB factory (default `globalThis.indexedDB`)
     */
    constructor(name?: string, factory?: IDBFactoryLike);
    private open;
    private tx;
    /** {@inheritDoc OutboxStorage.load} */
    load(userId: string): Promise<OutboxRecord[]>;
    /** {@inheritDoc OutboxStorage.put} */
    put(record: OutboxRecord): Promise<void>;
    /** {@inheritDoc OutboxStorage.delete} */
    delete(userId: string, clientMsgId: string): Promise<void>;
    /** Closes the database connection. */
    close(): Promise<void>;
}
/** Sorts records into the order they must be (re)sent: by `order`, then key. */
export declare function sendOrder(records: readonly OutboxRecord[]): OutboxRecord[];
/**
 * @internal Whether two ops ask the server to store the same thing: the server's idempotency
 * key (protocol §6.2) covers the channel, the body and every other field of the frame, so a
 * send reusing a clientMsgId with any of them changed gets `idempotency_conflict`. Fields
 * left out and fields set to `undefined` are the same (a record read back from storage
 * has none of the latter).
 */
export declare function sameOp(a: OutboxOp, b: OutboxOp): boolean;
//# sourceMappingURL=outbox.d.ts.map