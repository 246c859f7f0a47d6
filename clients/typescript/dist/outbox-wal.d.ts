/**
 * The outbox's write-ahead: a new record is written synchronously (the browser's
 * `localStorage` by default) in the same call as `send`, before the durable storage's
 * asynchronous `put` even starts, and removed once that `put` resolved. A page reloaded or
 * closed right after a send (the composer already cleared) leaves its record here; the next
 * load of the user's outbox (this tab's or another's) moves it into the storage, with its
 * clientMsgId, and it is sent from there (the server dedups by clientMsgId).
 *
 * @module
 */
import type { OutboxRecord } from './outbox.js';
/**
 * A synchronous key-value store: the subset of the Web Storage API (`localStorage`) the
 * write-ahead uses. A `setItem` must be kept across a reload of the page once it returned
 * (`localStorage` is); it may throw (quota): the record then relies on the storage's `put`.
 */
export interface WriteAheadStore {
    /** Number of keys. */
    readonly length: number;
    /** The key at `index` (0 ≤ index < length), or null. */
    key(index: number): string | null;
    /** The value of `key`, or null. */
    getItem(key: string): string | null;
    /** Writes `value` under `key` (may throw, e.g. `QuotaExceededError`). */
    setItem(key: string, value: string): void;
    /** Removes `key` (no error when absent). */
    removeItem(key: string): void;
}
/**
 * The default write-ahead store: the page's `localStorage` in a browser (a document is
 * there), else none (Node: pass a store in the `writeAhead` option to have one).
 */
export declare function platformWriteAheadStore(): WriteAheadStore | undefined;
/** @internal The write-ahead of one user's outbox records (none when `store` is undefined). */
export declare class WriteAhead {
    private readonly store;
    /** `store`: where entries are written (undefined: the write-ahead does nothing). */
    constructor(store: WriteAheadStore | undefined);
    /** Writes `record` synchronously; false when there is no store or it refused (quota, blocked). */
    add(record: OutboxRecord): boolean;
    /** Removes the entry of (userId, clientMsgId) if any. */
    remove(userId: string, clientMsgId: string): void;
    /** The user's entries (unreadable ones are removed: nothing can be sent from them). */
    list(userId: string): OutboxRecord[];
}
//# sourceMappingURL=outbox-wal.d.ts.map