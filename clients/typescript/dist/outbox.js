import { outboxAttachments } from './attachment-types.js';
import { mentionFields } from './mentions.js';
/**
 * The op of a message send: `body`, with the reply, thread, mention and attachment fields
 * that `options` sets (kept in the outbox record, so that every retry sends the same frame).
 */
export function messageOp(channelId, body, options) {
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
/** Outbox storage in memory: the Node default; lost with the process. Can be shared by several clients. */
export class MemoryOutboxStorage {
    records = new Map();
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
}
function key(userId, clientMsgId) {
    return `${userId}\u0000${clientMsgId}`;
}
const STORE = 'outbox';
/**
 * Outbox storage in IndexedDB (the browser default): survives reloads and crashes, and is
 * shared by every tab of the origin. A `put` resolves once its transaction completed
 * with `durability: 'strict'`.
 */
export class IndexedDBOutboxStorage {
    db;
    factory;
    name;
    /**
     * @param name - database name (default `chatd-outbox`)
     * @param factory - the IndexedDB factory (default `globalThis.indexedDB`)
     */
    constructor(name = 'chatd-outbox', factory) {
        const f = factory ?? globalThis.indexedDB;
        if (f === undefined)
            throw new Error('IndexedDB is not available: pass a factory or use MemoryOutboxStorage');
        this.factory = f;
        this.name = name;
    }
    open() {
        this.db ??= new Promise((resolve, reject) => {
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
    async tx(mode, fn) {
        const db = await this.open();
        await new Promise((resolve, reject) => {
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
    async load(userId) {
        let out = [];
        await this.tx('readonly', (s) => {
            const req = s.index('userId').getAll(userId);
            req.onsuccess = () => {
                out = req.result;
            };
        });
        return out;
    }
    /** {@inheritDoc OutboxStorage.put} */
    put(record) {
        return this.tx('readwrite', (s) => {
            s.put(JSON.parse(JSON.stringify(record)));
        });
    }
    /** {@inheritDoc OutboxStorage.delete} */
    delete(userId, clientMsgId) {
        return this.tx('readwrite', (s) => {
            s.delete([userId, clientMsgId]);
        });
    }
    /** Closes the database connection. */
    async close() {
        if (this.db !== undefined)
            (await this.db).close();
        this.db = undefined;
    }
}
function toError(e) {
    return e instanceof Error ? e : new Error(String(e));
}
/** Sorts records into the order they must be (re)sent: by `order`, then key. */
export function sendOrder(records) {
    return [...records].sort((a, b) => a.order - b.order || (a.clientMsgId < b.clientMsgId ? -1 : 1));
}
/**
 * @internal Whether two ops ask the server to store the same thing: the server's idempotency
 * key (protocol §6.2) covers the channel, the body and every other field of the frame, so a
 * send reusing a clientMsgId with any of them changed gets `idempotency_conflict`. Fields
 * left out and fields set to `undefined` are the same (a record read back from storage
 * has none of the latter).
 */
export function sameOp(a, b) {
    return sameValue(a, b);
}
function sameValue(a, b) {
    if (a === b)
        return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
        return false;
    if (Array.isArray(a) !== Array.isArray(b))
        return false;
    if (Array.isArray(a) && Array.isArray(b))
        return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
    const ra = a;
    const rb = b;
    const keys = (r) => Object.keys(r).filter((k) => r[k] !== undefined);
    const ka = keys(ra);
    return ka.length === keys(rb).length && ka.every((k) => sameValue(ra[k], rb[k]));
}
//# sourceMappingURL=outbox.js.map