import type { SerializedError } from './errors.js';
import type { ChannelLog } from './log.js';
import { type Message } from './message-states.js';
import type { OutboxRecord } from './outbox.js';
import type { WireEntry } from './protocol.js';
import { LazyStore } from './store.js';
import type { OutgoingMessage, ThreadSnapshot } from './snapshot-types.js';
/** @internal The replies of one thread, folded: the pure core of a thread store. */
export declare class ThreadLog {
    /** The channel. */
    readonly channelId: string;
    /** The root's message id. */
    readonly rootId: string;
    private readonly msgs;
    /** The channel's entries up to this seq are in the states (once started). */
    private through;
    /** The first read must be as of this seq at least: the channel's log held up to it when the thread was opened. */
    private readonly minThrough;
    private started;
    private older;
    private oldest;
    /** The channel's entries appended before the first read came, with the seq their state is as of. */
    private buffer;
    /** A thread whose first read must be as of `minThrough` or later. */
    constructor(channelId: string, rootId: string, me: string, minThrough: number);
    /** True once the first read was taken. */
    get isStarted(): boolean;
    /** True while older replies can be read. */
    get hasOlder(): boolean;
    /** The seq of the oldest reply held (for reading the page below it); undefined when none. */
    get oldestSeq(): number | undefined;
    /** The replies held, in seq order, folded. The same array until something changes. */
    messages(): readonly Message[];
    /** Replaces a held reply's attachments with a read's (see {@link MessageStates.setAttachments}). */
    setAttachments(messageId: string, attachments: unknown): boolean;
    /**
     * The first read (`latest`): its replies, as of `lastSeq`; `hasMore`: older ones exist.
     * Returns false, taking nothing, when the read is older than what the channel held when
     * the thread was opened: it must be made again.
     */
    start(entries: readonly WireEntry[], lastSeq: number | undefined, hasMore: boolean): boolean;
    /** An older page (`beforeSeq`): its replies below the oldest held, as of `lastSeq`. Returns those taken. */
    prepend(entries: readonly WireEntry[], lastSeq: number | undefined, hasMore: boolean): readonly WireEntry[];
    /**
     * Entries the channel's log appended, in seq order (each once). `readAsOf`: they came from
     * a read whose states are as of that seq (undefined: live). `asOfs`: per entry instead.
     */
    channelAppended(entries: readonly WireEntry[], readAsOf?: number, asOfs?: readonly (number | undefined)[]): void;
    /** Held replies that a read of the channel shows expired (§19) become so; returns how many. */
    reread(entries: readonly WireEntry[]): number;
    /** Takes a read's replies of this thread not held yet, as of `asOf`. */
    private take;
}
/** @internal Everything the client holds about one opened thread. */
export interface ThreadCtx {
    /** The thread's replies. */
    log: ThreadLog;
    /** The thread's store. */
    store: LazyStore<ThreadSnapshot>;
    /** The server's refusal of the thread's read, if any. */
    error: SerializedError | undefined;
    /** `loadOlder` calls waiting for the next older page. */
    olderWaiters: ((err?: Error) => void)[];
    /** An older page is being read. */
    loadingOlder: boolean;
}
/** @internal What a thread's snapshot is built from: its channel's state. */
export interface ThreadChannel {
    readonly log: ChannelLog;
    readonly removed: boolean;
    readonly sent: ReadonlyMap<string, OutgoingMessage>;
}
/** @internal A thread of `ch` (its store's snapshot built from `ch`, the user `me` and the outbox). */
export declare function newThread(ch: ThreadChannel, rootId: string, me: string, outbox: () => Iterable<OutboxRecord>): ThreadCtx;
//# sourceMappingURL=threads.d.ts.map