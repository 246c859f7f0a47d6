import type { Presence } from 'chatd-client';
/** Presence of the users a {@link usePresence} asked for; `undefined` until the server told it. */
export type PresenceOf = Readonly<Record<string, Presence | undefined>>;
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
export declare function usePresence(userIds: readonly string[]): PresenceOf;
//# sourceMappingURL=presence.d.ts.map