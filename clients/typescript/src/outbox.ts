import { outboxAttachments, type OutboxAttachment } from './attachment-types.js';
import type { SerializedError } from './errors.js';
import { mentionFields } from './mentions.js';
import type { MessageSendOptions } from './snapshot-types.js';

/** What an outbox record asks the server to store. */
export type OutboxOp =
  | {
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
    }
  | { readonly type: 'MSG_EDIT'; readonly channelId: string; readonly messageId: string; readonly body: string }
  | { readonly type: 'MSG_DELETE'; readonly channelId: string; readonly messageId: string }
  | {
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
export function messageOp(channelId: string, body: string, options: MessageSendOptions): OutboxOp {
  const { replyTo, threadId } = options;
  return {
    type: 'MSG_SEND',
    channelId,
    body,
    ...(replyTo !== undefined ? { replyTo } : {}),
    ...(threadId !== undefined ? { threadId } : {}),
    ...mentionFields(options),
    ...(options.attachments !== undefined ? { attachments: outboxAttachments(options.attachments) } : {}),
  };
}

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
export class MemoryOutboxStorage implements OutboxStorage {
  private readonly records = new Map<string, OutboxRecord>();

  /** {@inheritDoc OutboxStorage.load} */
  load(userId: string): Promise<OutboxRecord[]> {
    return Promise.resolve([...this.records.values()].filter((r) => r.userId === userId).map((r) => ({ ...r })));
  }
  /** {@inheritDoc OutboxStorage.put} */
  put(record: OutboxRecord): Promise<void> {
    this.records.set(key(record.userId, record.clientMsgId), { ...record });
    return Promise.resolve();
  }
  /** {@inheritDoc OutboxStorage.delete} */
  delete(userId: string, clientMsgId: string): Promise<void> {
    this.records.delete(key(userId, clientMsgId));
    return Promise.resolve();
  }
}

function key(userId: string, clientMsgId: string): string {
  return `${userId}\u0000${clientMsgId}`;
}

/** The IndexedDB factory type (the platform's `indexedDB`, or fake-indexeddb's in tests). */
export type IDBFactoryLike = IDBFactory;

const STORE = 'outbox';

/**
 * Outbox storage in IndexedDB (the browser default): survives reloads and crashes, and is
 * shared by every tab of the origin. A `put` resolves once its transaction completed
 * with `durability: 'strict'`.
 */
export class IndexedDBOutboxStorage implements OutboxStorage {
  private db: Promise<IDBDatabase> | undefined;
  private readonly factory: IDBFactoryLike;
  private readonly name: string;

  /**
   * @param name - database name (default `chatd-outbox`)
   * @param factory - the IndexedDB factory (default `globalThis.indexedDB`)
   */
  constructor(name = 'chatd-outbox', factory?: IDBFactoryLike) {
    const f = factory ?? (globalThis as { indexedDB?: IDBFactoryLike }).indexedDB;
    if (f === undefined) throw new Error('IndexedDB is not available: pass a factory or use MemoryOutboxStorage');
    this.factory = f;
    this.name = name;
  }

  private open(): Promise<IDBDatabase> {
    this.db ??= new Promise<IDBDatabase>((resolve, reject) => {
      const req = this.factory.open(this.name, 1);
      req.onupgradeneeded = () => {
        const db = req.result;
        if (!db.objectStoreNames.contains(STORE)) {
          const store = db.createObjectStore(STORE, { keyPath: ['userId', 'clientMsgId'] });
          store.createIndex('userId', 'userId');
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

  private async tx(mode: 'readonly' | 'readwrite', fn: (s: IDBObjectStore) => void): Promise<void> {
    const db = await this.open();
    await new Promise<void>((resolve, reject) => {
      const t = db.transaction(STORE, mode, { durability: 'strict' });
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
  async load(userId: string): Promise<OutboxRecord[]> {
    let out: OutboxRecord[] = [];
    await this.tx('readonly', (s) => {
      const req = s.index('userId').getAll(userId);
      req.onsuccess = () => {
        out = req.result as OutboxRecord[];
      };
    });
    return out;
  }
  /** {@inheritDoc OutboxStorage.put} */
  put(record: OutboxRecord): Promise<void> {
    return this.tx('readwrite', (s) => {
      s.put(JSON.parse(JSON.stringify(record)) as OutboxRecord);
    });
  }
  /** {@inheritDoc OutboxStorage.delete} */
  delete(userId: string, clientMsgId: string): Promise<void> {
    return this.tx('readwrite', (s) => {
      s.delete([userId, clientMsgId]);
    });
  }
  /** Closes the database connection. */
  async close(): Promise<void> {
    if (this.db !== undefined) (await this.db).close();
    this.db = undefined;
  }
}

function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** Sorts records into the order they must be (re)sent: by `order`, then key. */
export function sendOrder(records: readonly OutboxRecord[]): OutboxRecord[] {
  return [...records].sort((a, b) => a.order - b.order || (a.clientMsgId < b.clientMsgId ? -1 : 1));
}

/**
 * @internal Whether two ops ask the server to store the same thing: the server's idempotency
 * key (protocol §6.2) covers the channel, the body and every other field of the frame, so a
 * send reusing a clientMsgId with any of them changed gets `idempotency_conflict`. Fields
 * left out and fields set to `undefined` are the same (a record read back from storage
 * has none of the latter).
 */
export function sameOp(a: OutboxOp, b: OutboxOp): boolean {
  return sameValue(a, b);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = (r: Record<string, unknown>): string[] => Object.keys(r).filter((k) => r[k] !== undefined);
  const ka = keys(ra);
  return ka.length === keys(rb).length && ka.every((k) => sameValue(ra[k], rb[k]));
}
