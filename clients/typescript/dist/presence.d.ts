import type { Connection } from './connection.js';
import type { ChatdError } from './errors.js';
import type { PresenceFrame } from './protocol.js';
import { LazyStore } from './store.js';
import type { Presence } from './snapshot-types.js';
import type { ClientContext } from './types.js';
/** @internal The presence subscription and what it brought. */
export declare class PresenceSubscription {
    /** Presence of the subscribed users; keyed by user id. */
    readonly store: LazyStore<Readonly<Record<string, Presence>>>;
    private readonly c;
    private readonly conn;
    /** The ids of the last `subscribePresence`, without repeats. */
    private ids;
    /**
     * Ids of the pending PRESENCE_SUB whose PRESENCE has not arrived since it was sent;
     * undefined when no subscription is pending (snapshot complete, empty, or not sent).
     */
    private waiting;
    /** Retries of the pending PRESENCE_SUB so far (the backoff's attempt number). */
    private attempt;
    private timer;
    private readonly map;
    /** An empty subscription on the connection. */
    constructor(c: ClientContext, conn: Connection);
    /** Replaces the subscription (see `ChatClient.subscribePresence`). */
    subscribe(userIds: readonly string[]): void;
    /** A connection opened: subscribe on it. */
    opened(): void;
    /**
     * A PRESENCE arrived. One for an id no longer subscribed is a late frame of a replaced
     * subscription (its snapshot was still on the wire): dropped, so the store holds the
     * current subscription's ids only.
     */
    onPresence(f: PresenceFrame): void;
    /**
     * A retryable ERROR naming no frame arrived: while the subscription is pending, send it
     * again after a backoff. Misattributing another frame's ERROR (a MSG_READ's, say) costs
     * one redundant PRESENCE_SUB only: it is idempotent (it replaces the subscription and
     * the server sends the snapshot again). One retry is scheduled at a time, so a burst of
     * ERRORs cannot make a tight loop.
     */
    refused(err: ChatdError): void;
    /** The connection dropped: nothing is pending on it (the next HELLO subscribes again). */
    dropped(): void;
    /** The client closed: no more retries. */
    close(): void;
    /** Sends the current PRESENCE_SUB (if open) and makes it the pending one. */
    private send;
    /** A PRESENCE arrived: one id fewer to wait for; the snapshot may be complete. */
    private arrived;
}
//# sourceMappingURL=presence.d.ts.map