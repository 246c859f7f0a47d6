import { type Message } from './message-states.js';
import type { WireEntry } from './protocol.js';
export { entryKind, type Message } from './message-states.js';
/** What one call to {@link ChannelLog.ingest} did. */
export interface IngestResult {
    /** Entries that became part of the contiguous log, in seq order (each exactly once over the log's life). */
    readonly appended: readonly WireEntry[];
    /** When set: entries above this seq are missing; SYNC from it. */
    readonly gapAfter: number | undefined;
}
/**
 * The pure core of a channel: one contiguous window [low, high] of the channel's log,
 * entries above it held until the gap below them is filled, duplicates dropped by
 * `messageId` (and by seq), and edits, deletions, reactions, reply previews and thread
 * summaries folded into per-message state ({@link MessageStates}). It never talks to the network: the caller feeds it entries and does what
 * {@link IngestResult.gapAfter} says.
 */
export declare class ChannelLog {
    /** The channel. */
    readonly channelId: string;
    /** The current user (for reaction `me`). */
    readonly me: string;
    private lowSeq;
    private highSeq;
    private started;
    private readonly ids;
    private readonly held;
    private readonly msgs;
    private known;
    /** Creates an empty, not yet started log. */
    constructor(channelId: string, me: string);
    /** True once the window has been placed (first page read). */
    get isStarted(): boolean;
    /** Lowest seq of the window (window is empty when low > high). */
    get low(): number;
    /** Highest contiguous seq held. */
    get high(): number;
    /** Highest seq known to exist (HELLO lastSeq, live entries, ACKs). */
    get knownLastSeq(): number;
    /** True while entries older than the window exist. */
    get hasOlder(): boolean;
    /** Records that entries up to `seq` exist. */
    noteLastSeq(seq: number): void;
    /** Places an empty window just above `seq` (entries seq+1... come next). Only before the log started. */
    start(afterSeq: number): void;
    /** True when the entry is already part of the log. */
    has(messageId: string): boolean;
    /**
     * Adds entries at or above the window (live `MSG_RECV`, forward `SYNC_BATCH`).
     * `fromRead` marks entries of a read, whose message state is as of the read: as of
     * `readLastSeq` (the `SYNC_BATCH`'s `lastSeq`) when given, else of the highest seq known.
     */
    ingest(entries: readonly WireEntry[], fromRead: boolean, readLastSeq?: number): IngestResult;
    private readonly readAsOf;
    private drain;
    /**
     * Adds an older page (entries below the window, from a backward read), in seq order.
     * Only entries that are contiguous with the window's bottom are taken; returns them.
     * If the log had not started, the page places the window.
     */
    prepend(entries: readonly WireEntry[], readLastSeq?: number): readonly WireEntry[];
    private append;
    /** The messages of the window, in seq order, folded. The same array until something changes. */
    messages(): readonly Message[];
    /** The folded state of one message, if held. */
    message(messageId: string): Message | undefined;
    /**
     * Entries of a read of the window again: the held messages it shows expired (§19)
     * become so (see {@link MessageStates.expire}). Returns how many changed.
     */
    reread(entries: readonly WireEntry[]): number;
    /** Replaces a held message's attachments with a read's (see {@link MessageStates.setAttachments}). */
    setAttachments(messageId: string, attachments: unknown): boolean;
    /** Counts held `message` entries above `afterSeq` that are not deleted and not sent by the user. */
    countUnreadAbove(afterSeq: number): number;
    /** Messages of others held above `afterSeq` that mention the user (protocol §16), not deleted. */
    countMentionsAbove(afterSeq: number): number;
    /** The entry id at the highest contiguous seq (undefined when the window is empty). */
    highEntryId(): string | undefined;
    private lastAppendedId;
}
//# sourceMappingURL=log.d.ts.map