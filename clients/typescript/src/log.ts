import { entryKind, MessageStates, type Message } from './message-states.js';
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
export class ChannelLog {
  /** The channel. */
  readonly channelId: string;
  /** The current user (for reaction `me`). */
  readonly me: string;
  private lowSeq = 1;
  private highSeq = 0;
  private started = false;
  private readonly ids = new Set<string>();
  private readonly held = new Map<number, WireEntry>();
  private readonly msgs: MessageStates;
  private known = 0;

  /** Creates an empty, not yet started log. */
  constructor(channelId: string, me: string) {
    this.channelId = channelId;
    this.me = me;
    this.msgs = new MessageStates(me, true);
  }

  /** True once the window has been placed (first page read). */
  get isStarted(): boolean {
    return this.started;
  }
  /** Lowest seq of the window (window is empty when low > high). */
  get low(): number {
    return this.lowSeq;
  }
  /** Highest contiguous seq held. */
  get high(): number {
    return this.highSeq;
  }
  /** Highest seq known to exist (HELLO lastSeq, live entries, ACKs). */
  get knownLastSeq(): number {
    return Math.max(this.known, this.highSeq);
  }
  /** True while entries older than the window exist. */
  get hasOlder(): boolean {
    return this.started && this.lowSeq > 1;
  }

  /** Records that entries up to `seq` exist. */
  noteLastSeq(seq: number): void {
    if (seq > this.known) this.known = seq;
  }

  /** Places an empty window just above `seq` (entries seq+1... come next). Only before the log started. */
  start(afterSeq: number): void {
    if (this.started) return;
    this.started = true;
    this.lowSeq = afterSeq + 1;
    this.highSeq = afterSeq;
  }

  /** True when the entry is already part of the log. */
  has(messageId: string): boolean {
    return this.ids.has(messageId);
  }

  /**
   * Adds entries at or above the window (live `MSG_RECV`, forward `SYNC_BATCH`).
   * `fromRead` marks entries of a read, whose message state is as of the read: as of
   * `readLastSeq` (the `SYNC_BATCH`'s `lastSeq`) when given, else of the highest seq known.
   */
  ingest(entries: readonly WireEntry[], fromRead: boolean, readLastSeq?: number): IngestResult {
    const appended: WireEntry[] = [];
    let batchMax = 0;
    for (const e of entries) {
      if (e.seq > batchMax) batchMax = e.seq;
      this.noteLastSeq(e.seq);
    }
    if (readLastSeq !== undefined) this.noteLastSeq(readLastSeq);
    // entries above the read's lastSeq (already here live, or still to come) are not in its states
    const asOf = fromRead ? Math.max(readLastSeq ?? this.knownLastSeq, batchMax) : 0;
    for (const e of entries) {
      if (!this.started) {
        this.held.set(e.seq, e);
        continue;
      }
      if (this.ids.has(e.messageId) || e.seq <= this.highSeq) {
        if (fromRead) this.msgs.expire(e);
        continue;
      }
      if (e.seq === this.highSeq + 1) {
        this.append(e, fromRead ? Math.max(asOf, e.seq) : e.seq);
        appended.push(e);
        this.drain(appended);
      } else {
        if (!this.held.has(e.seq)) this.held.set(e.seq, e);
        if (fromRead) this.readAsOf.set(e.seq, asOf);
      }
    }
    if (this.started) this.drain(appended);
    return { appended, gapAfter: this.started && this.knownLastSeq > this.highSeq ? this.highSeq : undefined };
  }

  private readonly readAsOf = new Map<number, number>();

  private drain(appended: WireEntry[]): void {
    for (const seq of [...this.held.keys()]) if (seq <= this.highSeq) this.held.delete(seq);
    for (;;) {
      const next = this.held.get(this.highSeq + 1);
      if (next === undefined) return;
      this.held.delete(next.seq);
      const asOf = this.readAsOf.get(next.seq);
      this.readAsOf.delete(next.seq);
      if (this.ids.has(next.messageId)) {
        this.highSeq = next.seq;
        this.lastAppendedId = next.messageId;
        continue;
      }
      this.append(next, asOf ?? next.seq);
      appended.push(next);
    }
  }

  /**
   * Adds an older page (entries below the window, from a backward read), in seq order.
   * Only entries that are contiguous with the window's bottom are taken; returns them.
   * If the log had not started, the page places the window.
   */
  prepend(entries: readonly WireEntry[], readLastSeq?: number): readonly WireEntry[] {
    const sorted = [...entries].sort((a, b) => a.seq - b.seq);
    for (const e of sorted) this.noteLastSeq(e.seq);
    if (readLastSeq !== undefined) this.noteLastSeq(readLastSeq);
    const pageTop = sorted[sorted.length - 1]?.seq ?? 0;
    const asOf = Math.max(readLastSeq ?? this.knownLastSeq, pageTop);
    if (!this.started) {
      const first = sorted[0];
      if (first === undefined) {
        this.start(this.knownLastSeq);
        return [];
      }
      this.start(first.seq - 1);
      const r = this.ingest(sorted, true, readLastSeq);
      return r.appended;
    }
    // keep only the run that ends at low - 1
    const run: WireEntry[] = [];
    let expect = this.lowSeq - 1;
    for (let i = sorted.length - 1; i >= 0; i--) {
      const e = sorted[i];
      if (e === undefined || e.seq > expect) continue;
      if (e.seq < expect) break;
      run.unshift(e);
      expect--;
    }
    const added: WireEntry[] = [];
    for (const e of run) {
      this.lowSeq = Math.min(this.lowSeq, e.seq);
      if (this.ids.has(e.messageId)) {
        this.msgs.expire(e);
        continue;
      }
      this.ids.add(e.messageId);
      added.push(e);
      // a modification older than a state we hold is already folded into it (MessageStates checks)
      if (entryKind(e) === 'message') this.msgs.addMessage(e, asOf, true, false);
      else this.msgs.modify(e);
    }
    const top = run[run.length - 1];
    if (top !== undefined && top.seq === this.highSeq && this.lastAppendedId === undefined) {
      this.lastAppendedId = top.messageId;
    }
    return added;
  }

  private append(e: WireEntry, asOf: number): void {
    this.highSeq = e.seq;
    this.lastAppendedId = e.messageId;
    this.ids.add(e.messageId);
    if (entryKind(e) === 'message') this.msgs.addMessage(e, asOf, e.reactions === undefined, true);
    else this.msgs.modify(e);
  }

  /** The messages of the window, in seq order, folded. The same array until something changes. */
  messages(): readonly Message[] {
    return this.msgs.messages();
  }

  /** The folded state of one message, if held. */
  message(messageId: string): Message | undefined {
    return this.msgs.message(messageId);
  }

  /**
   * Entries of a read of the window again: the held messages it shows expired (§19)
   * become so (see {@link MessageStates.expire}). Returns how many changed.
   */
  reread(entries: readonly WireEntry[]): number {
    let n = 0;
    for (const e of entries) if (entryKind(e) === 'message' && this.ids.has(e.messageId) && this.msgs.expire(e)) n++;
    return n;
  }

  /** Replaces a held message's attachments with a read's (see {@link MessageStates.setAttachments}). */
  setAttachments(messageId: string, attachments: unknown): boolean {
    return this.msgs.setAttachments(messageId, attachments);
  }

  /** Counts held `message` entries above `afterSeq` that are not deleted and not sent by the user. */
  countUnreadAbove(afterSeq: number): number {
    return this.msgs.countUnreadAbove(afterSeq);
  }

  /** Messages of others held above `afterSeq` that mention the user (protocol §16), not deleted. */
  countMentionsAbove(afterSeq: number): number {
    return this.msgs.countMentionsAbove(afterSeq);
  }

  /** The entry id at the highest contiguous seq (undefined when the window is empty). */
  highEntryId(): string | undefined {
    return this.lastAppendedId;
  }
  private lastAppendedId: string | undefined;
}
