/**
 * The public types of the members, directory and channel routes: members and their
 * pages, live member lists, the directory's pages, joining, leaving, new group and direct
 * channels.
 *
 * @module
 */
import type { ChatdError } from './errors.js';
import type { ChannelKind, ChannelVisibility } from './protocol.js';
import type { ExternalStore } from './store.js';
/**
 * A member's role in a channel (protocol §13.1): `member`, `moderator` or `owner`. A role
 * this client does not know yet is passed through as its string.
 */
export type MemberRole = 'member' | 'moderator' | 'owner' | (string & Record<never, never>);
/** One member of a channel, as `GET /v1/channels/{channelId}/members` gives it. */
export interface Member {
    /** The member's user id. */
    readonly userId: string;
    /** Its role in the channel. */
    readonly role: MemberRole;
    /** When it (last) joined the channel, ms since the Unix epoch. */
    readonly joinedAt: number;
    /** Its delivered watermark in the channel (0: none). */
    readonly deliveredSeq: number;
    /** Its read watermark in the channel (0: none): it has read up to this seq. */
    readonly readSeq: number;
    /** Until when it is muted (ms since the epoch), when a mute is in force (version 1.2, §17). */
    readonly mutedUntil?: number;
}
/** One page of a channel's members ({@link ChatClient.members}). */
export interface MembersPage {
    /** The members, in byte order of `userId` (upper case before lower case). */
    readonly members: readonly Member[];
    /** Whether members follow the last one: ask again with `after` set to its `userId`. */
    readonly hasMore: boolean;
    /**
     * The channel's last seq when the page was read: membership changes after it are not
     * reflected in the page.
     */
    readonly atSeq: number;
}
/** Options of {@link ChatClient.members}. */
export interface MembersOptions {
    /** Members after this user id (exclusive, byte order); default: from the first. */
    readonly after?: string;
    /** Page size, 1 to 500; default the server's (100). */
    readonly limit?: number;
    /** Stops waiting (the call rejects with `aborted`). */
    readonly signal?: AbortSignal;
}
/** Options of {@link ChatClient.allMembers}. */
export interface AllMembersOptions {
    /** Members asked for per request, 1 to 500; default 500. */
    readonly pageSize?: number;
    /** Stops paging (the call rejects with `aborted`). */
    readonly signal?: AbortSignal;
}
/** Every member of a channel ({@link ChatClient.allMembers}). */
export interface MemberList {
    /** The members, in byte order of `userId`. */
    readonly members: readonly Member[];
    /**
     * The lowest `atSeq` of the pages read (the first page's): membership changes after it
     * may not be reflected in the list.
     */
    readonly atSeq: number;
}
/**
 * A channel's member list kept live ({@link ChatClient.memberList}): the members route
 * read, with the `MEMBER` frames received since folded onto it.
 */
export interface MemberListSnapshot {
    /** The channel. */
    readonly channelId: string;
    /**
     * `loading` until the first read answers; `ready`; `error` when the last read failed
     * (`members` are then those known before, if any); `removed` when the user is no longer
     * in the channel (`members` empty) until it is added back.
     */
    readonly status: 'loading' | 'ready' | 'error' | 'removed';
    /** The members, in byte order of `userId`, with their roles and watermarks (moved by `RECEIPT`s). */
    readonly members: readonly Member[];
    /** `atSeq` of the read (0 before one answered). */
    readonly atSeq: number;
    /** With `error`: why the read failed. */
    readonly error: ChatdError | undefined;
}
/**
 * The store of one channel's live member list, for `useSyncExternalStore(store.subscribe,
 * store.getSnapshot)`.
 */
export interface MemberListStore extends ExternalStore<MemberListSnapshot> {
    /** The channel. */
    readonly channelId: string;
    /** Reads the members route again (folding the frames received meanwhile). */
    refresh(): void;
}
/** One public channel of the directory ({@link ChatClient.directory}). */
export interface DirectoryChannel {
    /** The channel. */
    readonly channelId: string;
    /** Its display name, `null` when unset. */
    readonly name: string | null;
    /** How many members it has. */
    readonly memberCount: number;
    /** Its highest stored seq (0 when empty). */
    readonly lastSeq: number;
}
/** One page of the directory of public channels ({@link ChatClient.directory}). */
export interface DirectoryPage {
    /** Public group channels, in byte order of `channelId` (upper case before lower case). */
    readonly channels: readonly DirectoryChannel[];
    /** Whether channels follow the last one: ask again with `after` set to its `channelId`. */
    readonly hasMore: boolean;
}
/** Options of {@link ChatClient.directory}. */
export interface DirectoryOptions {
    /** Only channels whose id or name holds this text, case-insensitively (at most 200 characters); empty: all. */
    readonly q?: string;
    /** Channels after this channel id (exclusive, byte order); default: from the first. */
    readonly after?: string;
    /** Page size, 1 to 500; default the server's (100). */
    readonly limit?: number;
    /** Stops waiting (the call rejects with `aborted`). */
    readonly signal?: AbortSignal;
}
/** Options of {@link ChatClient.join} and {@link ChatClient.leave}. */
export interface MembershipOptions {
    /**
     * Stops waiting (the call rejects with `aborted`). The request may have reached the
     * server already: the user may then be in (or out of) the channel all the same, and the
     * channel list shows it after its next refresh.
     */
    readonly signal?: AbortSignal;
}
/**
 * A channel as the HTTP API gives it (the channel object of `POST /v1/me/channels` and `PUT
 * /v1/me/direct/{userId}`, protocol §13).
 */
export interface ChannelInfo {
    /** The channel (chosen by the server for a direct channel, and for a new one made without an id). */
    readonly channelId: string;
    /** Its members' user ids. */
    readonly members: readonly string[];
    /** Its highest stored seq (0 when empty). */
    readonly lastSeq: number;
    /** When it was made, ms since the Unix epoch. */
    readonly createdAt: number;
    /** Its display name, `null` when unset. */
    readonly name: string | null;
    /** Its metadata, `null` when unset. */
    readonly metadata: Readonly<Record<string, unknown>> | null;
    /** `group`, or `direct` for the one channel between two users. */
    readonly kind: ChannelKind;
    /** `private` or `public` (in the {@link ChatClient.directory}). */
    readonly visibility: ChannelVisibility;
    /** How many members it has. */
    readonly memberCount: number;
}
/** What {@link ChatClient.direct} resolves to. */
export interface DirectResult {
    /** The direct channel of the two users. */
    readonly channel: ChannelInfo;
    /** True when this call made it (201), false when it existed (200), made by either user. */
    readonly created: boolean;
}
/** Options of {@link ChatClient.createChannel}. */
export interface CreateChannelOptions {
    /** The channel id; default: one the server chooses (a UUIDv7). */
    readonly channelId?: string;
    /** Its display name (at most 200 characters, no control characters); default none. */
    readonly name?: string;
    /** `private` (the default: members only) or `public` (in the directory, anyone may join). */
    readonly visibility?: 'private' | 'public';
    /** Users added as `member`s (the user making it is its `owner`). */
    readonly members?: readonly string[];
    /**
     * Stops waiting (the call rejects with `aborted`). The request may have reached the
     * server already: the channel may then exist all the same.
     */
    readonly signal?: AbortSignal;
}
/** Options of {@link ChatClient.addMember}. */
export interface AddMemberOptions extends MembershipOptions {
    /**
     * The member's role; default: a new member is a `member`, an existing one keeps its role.
     * Any role but `member`, or changing an existing member's, needs the user to be an owner.
     */
    readonly role?: MemberRole;
}
//# sourceMappingURL=member-types.d.ts.map