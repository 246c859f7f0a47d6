/**
 * {@link usePresence}: the presence of some users, with the client's one presence
 * subscription (`PRESENCE_SUB`, protocol 1.1) kept as the union of the ids every mounted
 * component asks for.
 *
 * @module
 */
import { useCallback, useEffect, useMemo } from 'react';
import { useChatClient } from './context.js';
import { useStoreSelector } from './select.js';
/**
 * The ids the mounted components ask for, counted, and the client's subscription kept to
 * their union: changed once per microtask at most (a list of avatars mounting at once makes
 * one `PRESENCE_SUB`), and only when the union changed.
 */
class PresenceInterest {
    counts = new Map();
    subscribed = '';
    scheduled = false;
    client;
    constructor(client) {
        this.client = client;
    }
    /** Adds interest in `userIds`; returns the function that takes it back (once). */
    add(userIds) {
        for (const id of userIds)
            this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
        this.schedule();
        let removed = false;
        return () => {
            if (removed)
                return;
            removed = true;
            for (const id of userIds) {
                const n = (this.counts.get(id) ?? 0) - 1;
                if (n > 0)
                    this.counts.set(id, n);
                else
                    this.counts.delete(id);
            }
            this.schedule();
        };
    }
    schedule() {
        if (this.scheduled)
            return;
        this.scheduled = true;
        queueMicrotask(() => {
            this.scheduled = false;
            const ids = [...this.counts.keys()].sort();
            const key = ids.join('\n');
            if (key === this.subscribed)
                return;
            this.subscribed = key;
            this.client.subscribePresence(ids);
        });
    }
}
const interests = new WeakMap();
function interestOf(client) {
    let i = interests.get(client);
    if (i === undefined) {
        i = new PresenceInterest(client);
        interests.set(client, i);
    }
    return i;
}
/**
 * The presence (`online` or `offline`, and `lastSeenAt`) of `userIds`, live: the client
 * subscribes to the union of the ids of every mounted `usePresence` (and drops an id when
 * no component asks for it any more), so this hook owns the client's presence
 * subscription: an app that uses it does not call `client.subscribePresence` itself. A
 * user's entry is `undefined` until the server's first `PRESENCE` for it (and with a
 * server before version 1.1, which has no presence). Renders again only when one of
 * these users' presence changed. The array may be a new one on every render: only its
 * ids count.
 */
export function usePresence(userIds) {
    const client = useChatClient();
    const key = [...new Set(userIds)].sort().join('\n');
    const ids = useMemo(() => (key === '' ? [] : key.split('\n')), [key]);
    useEffect(() => interestOf(client).add(ids), [client, ids]);
    const select = useCallback((all) => {
        const out = {};
        for (const id of ids)
            out[id] = all[id];
        return Object.freeze(out);
    }, [ids]);
    return useStoreSelector(client.presence, select, samePresence);
}
function samePresence(a, b) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && a[k] === b[k]);
}
//# sourceMappingURL=presence.js.map