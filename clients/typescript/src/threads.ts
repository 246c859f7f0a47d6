/**
 * Threads (protocol §14): the replies of one root, as a store with the guarantees of a
 * channel's (each reply once, in seq order, the user's unsent replies beside them).
 *
 * A thread's replies are entries of the channel's log, so their seqs have gaps (the
 * channel's other entries) and a gap in them says nothing. A thread therefore leans on its
 * channel's log, which is gapless: its first read (`SYNC` with `threadId`, `latest`) gives
 * its newest replies as of the read's `lastSeq`, and from then on every entry the channel's
 * log appends above that seq (live, caught up after a reconnect or a gap, made from an ACK)
 * is offered to the thread, which takes its own replies and the edits, deletes and
 * reactions of the messages it holds. Entries the channel appended while the first read
 * was on its way wait, and are taken above its `lastSeq`; a read older than what the
 * channel held when the thread was opened is made again (the entries between would
 * otherwise be missed).
 *
 * @module
 */
import { outgoingAttachments } from './attachment-types.js';
import { mentionFields } from './mentions.js';
import type { SerializedError } from './errors.js';
import type { ChannelLog } from './log.js';
import { entryKind, MessageStates, type Message } from './message-states.js';
import type { OutboxRecord } from './outbox.js';
import type { WireEntry } from './protocol.js';
import { LazyStore } from './store.js';
import type { OutgoingMessage, ThreadSnapshot } from './snapshot-types.js';

/** @internal The replies of one thread, folded: the pure core of a thread store. */
export class ThreadLog {
  /** The channel. */
  readonly channelId: string;
  /** The root's message id. */
  readonly rootId: string;
  private readonly msgs: MessageStates;
  /** The channel's entries up to this seq are in the states (once started). */
  private through = 0;
  /** The first read must be as of this seq at least: the channel's log held up to it when the thread was opened. */
  private readonly minThrough: number;
  private started = false;
  private older = false;
  private oldest = Number.POSITIVE_INFINITY;
  /** The channel's entries appended before the first read came, with the seq their state is as of. */
  private buffer: [WireEntry, number | undefined][] = [];

  /** A thread whose first read must be as of `minThrough` or later. */
  constructor(channelId: string, rootId: string, me: string, minThrough: number) {
    this.channelId = channelId;
    this.rootId = rootId;
    this.minThrough = minThrough;
    this.msgs = new MessageStates(me, false);
  }

  /** True once the first read was taken. */
  get isStarted(): boolean {
    return this.started;
  }

  /** True while older replies can be read. */
  get hasOlder(): boolean {
    return this.started && this.older;
  }

  /** The seq of the oldest reply held (for reading the page below it); undefined when none. */
  get oldestSeq(): number | undefined {
    return Number.isFinite(this.oldest) ? this.oldest : undefined;
  }

  /** The replies held, in seq order, folded. The same array until something changes. */
  messages(): readonly Message[] {
    return this.msgs.messages();
  }

  /** Replaces a held reply's attachments with a read's (see {@link MessageStates.setAttachments}). */
  setAttachments(messageId: string, attachments: unknown): boolean {
    return this.msgs.setAttachments(messageId, attachments);
  }

  /**
   * The first read (`latest`): its replies, as of `lastSeq`; `hasMore`: older ones exist.
   * Returns false, taking nothing, when the read is older than what the channel held when
   * the thread was opened: it must be made again.
   */
  start(entries: readonly WireEntry[], lastSeq: number | undefined, hasMore: boolean): boolean {
    if (this.started) return true;
    const asOf = lastSeq ?? Math.max(0, ...entries.map((e) => e.seq));
    if (asOf < this.minThrough) return false;
    this.started = true;
    this.through = asOf;
    this.older = hasMore;
    this.take(entries, asOf);
    const waiting = this.buffer;
    this.buffer = [];
    this.channelAppended(waiting.map(([e]) => e), undefined, waiting.map(([, a]) => a));
    return true;
  }

  /** An older page (`beforeSeq`): its replies below the oldest held, as of `lastSeq`. Returns those taken. */
  prepend(entries: readonly WireEntry[], lastSeq: number | undefined, hasMore: boolean): readonly WireEntry[] {
    this.older = hasMore;
    const asOf = lastSeq ?? this.through;
    return this.take(
      entries.filter((e) => e.seq < this.oldest),
      asOf,
    );
  }

  /**
   * Entries the channel's log appended, in seq order (each once). `readAsOf`: they came from
   * a read whose states are as of that seq (undefined: live). `asOfs`: per entry instead.
   */
  channelAppended(entries: readonly WireEntry[], readAsOf?: number, asOfs?: readonly (number | undefined)[]): void {
    entries.forEach((e, i) => {
      const asOf = asOfs === undefined ? readAsOf : asOfs[i];
      if (!this.started) {
        this.buffer.push([e, asOf]);
        return;
      }
      if (e.seq <= this.through) return;
      this.through = e.seq;
      if (entryKind(e) === 'message') {
        if (e.threadId !== this.rootId || this.msgs.has(e.messageId)) return;
        this.msgs.addMessage(e, Math.max(asOf ?? e.seq, e.seq), e.reactions === undefined, true);
        if (e.seq < this.oldest) this.oldest = e.seq;
      } else {
        this.msgs.modify(e);
      }
    });
  }

  /** Held replies that a read of the channel shows expired (§19) become so; returns how many. */
  reread(entries: readonly WireEntry[]): number {
    let n = 0;
    for (const e of entries) if (entryKind(e) === 'message' && this.msgs.expire(e)) n++;
    return n;
  }

    /** Takes a read's replies of this thread not held yet, as of `asOf`. */
  private take(entries: readonly WireEntry[], asOf: number): WireEntry[] {
    const taken: WireEntry[] = [];
    for (const e of [...entries].sort((a, b) => a.seq - b.seq)) {
      if (entryKind(e) !== 'message') continue;
      if (this.msgs.has(e.messageId)) {
        // a held reply read again: expired since (§19) is learned here
        this.msgs.expire(e);
        continue;
      }
      // only this thread's replies: a server before §14 ignores `threadId` and answers with the channel's page
      if (e.threadId !== this.rootId) continue;
      this.msgs.addMessage(e, Math.max(asOf, e.seq), false, false);
      if (e.seq < this.oldest) this.oldest = e.seq;
      taken.push(e);
    }
    return taken;
  }
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
export function newThread(ch: ThreadChannel, rootId: string, me: string, outbox: () => Iterable<OutboxRecord>): ThreadCtx {
  const log = new ThreadLog(ch.log.channelId, rootId, me, ch.log.isStarted ? ch.log.high : 0);
  let last: ThreadSnapshot | undefined;
  const t: ThreadCtx = {
    log,
    error: undefined,
    olderWaiters: [],
    loadingOlder: false,
    store: new LazyStore(() => {
      const next = buildThreadSnapshot(t, ch, me, outbox());
      if (last !== undefined && sameSnapshot(last, next)) return last;
      last = next;
      return next;
    }),
  };
  return t;
}

function buildThreadSnapshot(t: ThreadCtx, ch: ThreadChannel, me: string, records: Iterable<OutboxRecord>): ThreadSnapshot {
  const messages = t.log.messages();
  const rootId = t.log.rootId;
  const mine = new Set<string>();
  for (const m of messages) if (m.senderId === me && m.clientMsgId !== undefined) mine.add(m.clientMsgId);
  const outgoing: OutgoingMessage[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    if (r.op.type !== 'MSG_SEND' || r.op.channelId !== ch.log.channelId || r.op.threadId !== rootId || mine.has(r.clientMsgId)) continue;
    seen.add(r.clientMsgId);
    const sent = ch.sent.get(r.clientMsgId);
    outgoing.push(
      Object.freeze({
        clientMsgId: r.clientMsgId,
        channelId: ch.log.channelId,
        body: r.op.body,
        state: sent !== undefined ? 'sent' : r.state,
        seq: sent?.seq,
        messageId: sent?.messageId,
        error: r.error,
        createdAt: r.createdAt,
        threadId: rootId,
        ...(r.op.replyTo !== undefined ? { replyTo: r.op.replyTo } : {}),
        ...mentionFields(r.op),
        ...outgoingAttachments(r.op),
      }),
    );
  }
  for (const s of ch.sent.values()) {
    if (s.threadId === rootId && !seen.has(s.clientMsgId) && !mine.has(s.clientMsgId)) outgoing.push(s);
  }
  outgoing.sort((a, b) => a.createdAt - b.createdAt);
  const status: ThreadSnapshot['status'] = ch.removed ? 'removed' : t.error !== undefined ? 'failed' : t.log.isStarted ? 'ready' : 'loading';
  return Object.freeze({
    channelId: ch.log.channelId,
    rootId,
    status,
    error: t.error,
    root: ch.log.message(rootId),
    messages,
    outgoing: Object.freeze(outgoing),
    hasOlder: t.log.hasOlder,
  });
}

/** Whether two snapshots show the same (the channel changed, not the thread: keep the old object). */
function sameSnapshot(a: ThreadSnapshot, b: ThreadSnapshot): boolean {
  return (
    a.status === b.status &&
    a.error === b.error &&
    a.root === b.root &&
    a.messages === b.messages &&
    a.hasOlder === b.hasOlder &&
    a.outgoing.length === b.outgoing.length &&
    a.outgoing.every((o, i) => {
      const p = b.outgoing[i];
      return p !== undefined && o.clientMsgId === p.clientMsgId && o.state === p.state && o.seq === p.seq && o.error === p.error;
    })
  );
}
