import type { EntryKind, ReactionCount, WireEntry } from './protocol.js';

/** A message as the app renders it: a `message` log entry with its edits, deletion and reactions folded in. */
export interface Message {
  /** The message's id. */
  readonly messageId: string;
  /** Its channel. */
  readonly channelId: string;
  /** Its author. */
  readonly senderId: string;
  /** Its seq. */
  readonly seq: number;
  /** When it was stored. */
  readonly ts: number;
  /** The author's idempotency key. */
  readonly clientMsgId: string;
  /** Current text (`""` when deleted). */
  readonly body: string;
  /** ts of the latest edit, when edited. */
  readonly editedAt: number | undefined;
  /** True when deleted. */
  readonly deleted: boolean;
  /** Reaction counts in order of first use, counts > 0 only. */
  readonly reactions: readonly ReactionCount[];
}

interface ReactionState {
  emoji: string;
  count: number;
  /** What we know about holders: true holds, false does not. */
  holders: Map<string, boolean>;
}

interface MessageState {
  entry: WireEntry;
  body: string;
  editedAt: number | undefined;
  deleted: boolean;
  reactions: ReactionState[];
  /** Modifications with seq <= asOfSeq are already included in the state. */
  asOfSeq: number;
  /** True when the holders maps are complete (built from the message's creation on). */
  exact: boolean;
  view: Message | undefined;
}

/** What one call to {@link ChannelLog.ingest} did. */
export interface IngestResult {
  /** Entries that became part of the contiguous log, in seq order (each exactly once over the log's life). */
  readonly appended: readonly WireEntry[];
  /** When set: entries above this seq are missing; SYNC from it. */
  readonly gapAfter: number | undefined;
}

/** The kind of an entry (version 1 entries have none: `message`). */
export function entryKind(e: WireEntry): EntryKind {
  return e.kind ?? 'message';
}

/**
 * The pure core of a channel: one contiguous window [low, high] of the channel's log,
 * entries above it held until the gap below them is filled, duplicates dropped by
 * `messageId` (and by seq), and edits, deletions and reactions folded into per-message
 * state. It never talks to the network: the caller feeds it entries and does what
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
  private readonly states = new Map<string, MessageState>();
  /** message ids in seq order */
  private order: string[] = [];
  /** modifications whose target is not (yet) held */
  private readonly orphanMods = new Map<string, WireEntry[]>();
  private known = 0;
  private cache: readonly Message[] | undefined;

  /** Creates an empty, not yet started log. */
  constructor(channelId: string, me: string) {
    this.channelId = channelId;
    this.me = me;
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
      if (this.ids.has(e.messageId) || e.seq <= this.highSeq) continue;
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
      if (this.ids.has(e.messageId)) continue;
      this.ids.add(e.messageId);
      added.push(e);
      if (entryKind(e) === 'message') {
        const st = this.newState(e, asOf, true);
        this.states.set(e.messageId, st);
        this.insertOrdered(e.messageId, e.seq);
        this.applyOrphans(st);
      } else {
        const target = e.targetId === undefined ? undefined : this.states.get(e.targetId);
        // a modification older than a state we hold is already folded into it
        if (target !== undefined && e.seq > target.asOfSeq) this.fold(target, e);
        else if (target === undefined && e.targetId !== undefined) this.addOrphan(e);
      }
    }
    const top = run[run.length - 1];
    if (top !== undefined && top.seq === this.highSeq && this.lastAppendedId === undefined) {
      this.lastAppendedId = top.messageId;
    }
    if (run.length > 0) this.cache = undefined;
    return added;
  }

  private append(e: WireEntry, asOf: number): void {
    this.highSeq = e.seq;
    this.lastAppendedId = e.messageId;
    this.ids.add(e.messageId);
    this.cache = undefined;
    if (entryKind(e) === 'message') {
      const st = this.newState(e, asOf, e.reactions === undefined);
      this.states.set(e.messageId, st);
      this.order.push(e.messageId);
      this.applyOrphans(st);
      return;
    }
    const target = e.targetId === undefined ? undefined : this.states.get(e.targetId);
    if (target === undefined) {
      if (e.targetId !== undefined) this.addOrphan(e);
      return;
    }
    if (e.seq > target.asOfSeq) this.fold(target, e);
  }

  private addOrphan(e: WireEntry): void {
    const id = e.targetId;
    if (id === undefined) return;
    const list = this.orphanMods.get(id) ?? [];
    list.push(e);
    list.sort((a, b) => a.seq - b.seq);
    this.orphanMods.set(id, list);
  }

  private applyOrphans(st: MessageState): void {
    const list = this.orphanMods.get(st.entry.messageId);
    if (list === undefined) return;
    this.orphanMods.delete(st.entry.messageId);
    for (const m of list) if (m.seq > st.asOfSeq) this.fold(st, m);
  }

  private insertOrdered(id: string, seq: number): void {
    let i = 0;
    while (i < this.order.length) {
      const other = this.states.get(this.order[i] ?? '');
      if (other !== undefined && other.entry.seq > seq) break;
      i++;
    }
    this.order.splice(i, 0, id);
  }

  private newState(e: WireEntry, asOf: number, exactIfNoReactions: boolean): MessageState {
    const reactions: ReactionState[] = (e.reactions ?? []).map((r) => {
      const holders = new Map<string, boolean>();
      holders.set(this.me, r.me);
      return { emoji: r.emoji, count: r.count, holders };
    });
    return {
      entry: e,
      body: e.deleted === true ? '' : e.body,
      editedAt: e.editedAt,
      deleted: e.deleted === true,
      reactions,
      asOfSeq: e.reactions === undefined && e.editedAt === undefined && e.deleted !== true ? e.seq : asOf,
      exact: e.reactions === undefined && exactIfNoReactions,
      view: undefined,
    };
  }

  private fold(st: MessageState, m: WireEntry): void {
    st.view = undefined;
    this.cache = undefined;
    switch (entryKind(m)) {
      case 'edit':
        if (!st.deleted) {
          st.body = m.body;
          st.editedAt = m.ts;
        }
        break;
      case 'delete':
        // a deleted message shows no text, no edit time and no reactions (as reads return it)
        st.deleted = true;
        st.body = '';
        st.editedAt = undefined;
        st.reactions = [];
        break;
      case 'reaction': {
        if (st.deleted || m.emoji === undefined) break;
        foldReaction(st, m.senderId, m.emoji, m.op ?? 'add', m.noop === true);
        break;
      }
      case 'message':
        break;
    }
  }

  /** The messages of the window, in seq order, folded. The same array until something changes. */
  messages(): readonly Message[] {
    if (this.cache !== undefined) return this.cache;
    const out: Message[] = [];
    for (const id of this.order) {
      const st = this.states.get(id);
      if (st === undefined) continue;
      st.view ??= this.view(st);
      out.push(st.view);
    }
    this.cache = out;
    return out;
  }

  /** The folded state of one message, if held. */
  message(messageId: string): Message | undefined {
    const st = this.states.get(messageId);
    if (st === undefined) return undefined;
    st.view ??= this.view(st);
    return st.view;
  }

  /** Counts held `message` entries above `afterSeq` that are not deleted and not sent by the user. */
  countUnreadAbove(afterSeq: number): number {
    let n = 0;
    for (const id of this.order) {
      const st = this.states.get(id);
      if (st === undefined || st.entry.seq <= afterSeq) continue;
      if (!st.deleted && st.entry.senderId !== this.me) n++;
    }
    return n;
  }

  /** The entry id at the highest contiguous seq (undefined when the window is empty). */
  highEntryId(): string | undefined {
    return this.lastAppendedId;
  }
  private lastAppendedId: string | undefined;

  private view(st: MessageState): Message {
    const e = st.entry;
    return Object.freeze({
      messageId: e.messageId,
      channelId: e.channelId,
      senderId: e.senderId,
      seq: e.seq,
      ts: e.ts,
      clientMsgId: e.clientMsgId,
      body: st.body,
      editedAt: st.editedAt,
      deleted: st.deleted,
      reactions: Object.freeze(
        st.reactions
          .filter((r) => r.count > 0)
          .map((r) => Object.freeze({ emoji: r.emoji, count: r.count, me: r.holders.get(this.me) === true })),
      ),
    });
  }
}

function foldReaction(st: MessageState, userId: string, emoji: string, op: 'add' | 'remove', noop: boolean): void {
  let r = st.reactions.find((x) => x.emoji === emoji);
  if (noop) {
    // the server says it changed nothing: the sender held it (add) or did not (remove)
    r?.holders.set(userId, op === 'add');
    return;
  }
  if (r === undefined) {
    if (op === 'remove') return;
    r = { emoji, count: 0, holders: new Map() };
    st.reactions.push(r);
  }
  const known = r.holders.get(userId);
  // unknown holder: exact states know nobody unlisted holds it; read states only have counts
  const holds = known ?? (st.exact ? false : op === 'remove' && r.count > 0);
  if (op === 'add' && !holds) r.count++;
  if (op === 'remove' && holds) r.count = Math.max(0, r.count - 1);
  r.holders.set(userId, op === 'add');
  if (r.count === 0) st.reactions.splice(st.reactions.indexOf(r), 1);
}
