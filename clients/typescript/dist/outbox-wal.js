const PREFIX = 'chatd-outbox-wal:';
/**
 * The default write-ahead store: the page's `localStorage` in a browser (a document is
 * there), else none (Node: pass a store in the `writeAhead` option to have one).
 */
export function platformWriteAheadStore() {
    if (typeof globalThis.document === 'undefined')
        return undefined;
    try {
        // reading it throws where storage is blocked (some privacy settings, sandboxed frames)
        return globalThis.localStorage;
    }
    catch {
        return undefined;
    }
}
/** @internal The write-ahead of one user's outbox records (none when `store` is undefined). */
export class WriteAhead {
    store;
    /** `store`: where entries are written (undefined: the write-ahead does nothing). */
    constructor(store) {
        this.store = store;
    }
    /** Writes `record` synchronously; false when there is no store or it refused (quota, blocked). */
    add(record) {
        if (this.store === undefined)
            return false;
        try {
            this.store.setItem(keyOf(record.userId, record.clientMsgId), JSON.stringify(record));
            return true;
        }
        catch {
            return false;
        }
    }
    /** Removes the entry of (userId, clientMsgId) if any. */
    remove(userId, clientMsgId) {
        try {
            this.store?.removeItem(keyOf(userId, clientMsgId));
        }
        catch {
            /* blocked: nothing was written either */
        }
    }
    /** The user's entries (unreadable ones are removed: nothing can be sent from them). */
    list(userId) {
        const s = this.store;
        if (s === undefined)
            return [];
        const prefix = `${PREFIX}${encodeURIComponent(userId)}:`;
        const out = [];
        try {
            const keys = [];
            for (let i = 0; i < s.length; i++) {
                const k = s.key(i);
                if (k?.startsWith(prefix) === true)
                    keys.push(k);
            }
            for (const k of keys) {
                const r = parseRecord(s.getItem(k), userId);
                if (r === undefined)
                    s.removeItem(k);
                else
                    out.push(r);
            }
        }
        catch {
            /* blocked: nothing was written either */
        }
        return out;
    }
}
function keyOf(userId, clientMsgId) {
    return `${PREFIX}${encodeURIComponent(userId)}:${clientMsgId}`;
}
/** An entry's record when it is one of `userId`'s (the shape `add` wrote), else undefined. */
function parseRecord(text, userId) {
    if (text === null)
        return undefined;
    let v;
    try {
        v = JSON.parse(text);
    }
    catch {
        return undefined;
    }
    if (typeof v !== 'object' || v === null)
        return undefined;
    const r = v;
    const op = r.op;
    const ok = r.userId === userId &&
        typeof r.clientMsgId === 'string' &&
        typeof r.createdAt === 'number' &&
        typeof r.order === 'number' &&
        typeof r.owner === 'string' &&
        (r.state === 'pending' || r.state === 'failed') &&
        typeof op === 'object' &&
        op !== null &&
        typeof op.type === 'string' &&
        typeof op.channelId === 'string';
    return ok ? v : undefined;
}
//# sourceMappingURL=outbox-wal.js.map