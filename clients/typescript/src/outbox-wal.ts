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

const PREFIX = 'chatd-outbox-wal:';

/**
 * The default write-ahead store: the page's `localStorage` in a browser (a document is
 * there), else none (Node: pass a store in the `writeAhead` option to have one).
 */
export function platformWriteAheadStore(): WriteAheadStore | undefined {
  if (typeof (globalThis as { document?: unknown }).document === 'undefined') return undefined;
  try {
    // reading it throws where storage is blocked (some privacy settings, sandboxed frames)
    return (globalThis as { localStorage?: WriteAheadStore }).localStorage;
  } catch {
    return undefined;
  }
}

/** @internal The write-ahead of one user's outbox records (none when `store` is undefined). */
export class WriteAhead {
  private readonly store: WriteAheadStore | undefined;

  /** `store`: where entries are written (undefined: the write-ahead does nothing). */
  constructor(store: WriteAheadStore | undefined) {
    this.store = store;
  }

  /** Writes `record` synchronously; false when there is no store or it refused (quota, blocked). */
  add(record: OutboxRecord): boolean {
    if (this.store === undefined) return false;
    try {
      this.store.setItem(keyOf(record.userId, record.clientMsgId), JSON.stringify(record));
      return true;
    } catch {
      return false;
    }
  }

  /** Removes the entry of (userId, clientMsgId) if any. */
  remove(userId: string, clientMsgId: string): void {
    try {
      this.store?.removeItem(keyOf(userId, clientMsgId));
    } catch {
      /* blocked: nothing was written either */
    }
  }

  /** The user's entries (unreadable ones are removed: nothing can be sent from them). */
  list(userId: string): OutboxRecord[] {
    const s = this.store;
    if (s === undefined) return [];
    const prefix = `${PREFIX}${encodeURIComponent(userId)}:`;
    const out: OutboxRecord[] = [];
    try {
      const keys: string[] = [];
      for (let i = 0; i < s.length; i++) {
        const k = s.key(i);
        if (k?.startsWith(prefix) === true) keys.push(k);
      }
      for (const k of keys) {
        const r = parseRecord(s.getItem(k), userId);
        if (r === undefined) s.removeItem(k);
        else out.push(r);
      }
    } catch {
      /* blocked: nothing was written either */
    }
    return out;
  }
}

function keyOf(userId: string, clientMsgId: string): string {
  return `${PREFIX}${encodeURIComponent(userId)}:${clientMsgId}`;
}

/** An entry's record when it is one of `userId`'s (the shape `add` wrote), else undefined. */
function parseRecord(text: string | null, userId: string): OutboxRecord | undefined {
  if (text === null) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Partial<Record<keyof OutboxRecord, unknown>>;
  const op = r.op as { type?: unknown; channelId?: unknown } | null | undefined;
  const ok =
    r.userId === userId &&
    typeof r.clientMsgId === 'string' &&
    typeof r.createdAt === 'number' &&
    typeof r.order === 'number' &&
    typeof r.owner === 'string' &&
    (r.state === 'pending' || r.state === 'failed') &&
    typeof op === 'object' &&
    op !== null &&
    typeof op.type === 'string' &&
    typeof op.channelId === 'string';
  return ok ? (v as OutboxRecord) : undefined;
}
