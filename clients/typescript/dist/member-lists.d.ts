import type { MemberFrame, ReceiptFrame } from './protocol.js';
import type { Member, MemberList, MemberListStore } from './member-types.js';
import type { ClientContext } from './types.js';
/**
 * Whether a `MEMBER` frame with `afterSeq` is surely shown by a members read whose `atSeq`
 * is `atSeq` (see the module's comment: equal seqs are not).
 */
export declare function memberFrameShown(afterSeq: number, atSeq: number): boolean;
/**
 * Folds one `MEMBER` frame onto a member list in byte order of the user id: `join` and
 * `role` set the member's role (adding it when missing, joined at the frame's `ts`, with no
 * watermarks), `leave` and `ban` take it out, `mute` sets the member's `mutedUntil` (or,
 * `null`, removes it); ops this client does not know change nothing. Returns `members`
 * itself when nothing changed.
 */
export declare function foldMemberFrame(members: readonly Member[], f: MemberFrame): readonly Member[];
/** Moves a member's watermark by a `RECEIPT` (never back); `members` itself when nothing moved. */
export declare function foldReceipt(members: readonly Member[], r: Pick<ReceiptFrame, 'userId' | 'kind' | 'seq'>): readonly Member[];
/** What the lists need from the rest of the client. */
export interface MemberListsDeps {
    /** Reads every member of a channel (`Members.all`). */
    readAll(channelId: string, signal: AbortSignal): Promise<MemberList>;
    /** The number of the open connection; 0 while not open. */
    openConn(): number;
    /** Whether the client is closed. */
    closed(): boolean;
}
/** @internal The member lists of the channels asked for, by channel id. */
export declare class MemberLists {
    private readonly c;
    private readonly deps;
    private readonly lists;
    private readonly aborts;
    /** Reads with `deps`; listens to the client's `channelAdded` and `channelRemoved`. */
    constructor(c: ClientContext, deps: MemberListsDeps);
    /** The list of a channel (read when first asked for, and when it went stale). */
    get(channelId: string): MemberListStore;
    /** A `MEMBER` frame: folded onto its channel's list (and kept for the read in flight). */
    onMember(f: MemberFrame): void;
    /** A `RECEIPT`: the member's watermark moves in its channel's list. */
    onReceipt(r: ReceiptFrame): void;
    /** A session opened (`HELLO`): frames may have been missed since the lists were read; read them again. */
    opened(): void;
    /** The client closed: reads in flight are stopped. */
    close(): void;
    /** The user is no longer in the channel: its list is empty and `removed`. */
    private removed;
    /** The user is in the channel (again): a removed list is read again. */
    private added;
    private ctx;
    /** Reads the list (once at a time: a read asked for meanwhile follows it). */
    private read;
}
//# sourceMappingURL=member-lists.d.ts.map