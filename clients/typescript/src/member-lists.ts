/**
 * A live member list per channel ({@link ChatClient.memberList}): a read of the members
 * route (`GET /v1/channels/{channelId}/members`, every page) with the `MEMBER` frames
 * folded onto it (version 1.2 §13.3), and the members' watermarks moved by `RECEIPT`s.
 *
 * Which frames a read already shows: the route's `atSeq` is the channel's last seq at the
 * read, a frame's `afterSeq` the channel's last seq at the change. A frame with `afterSeq`
 * below `atSeq` is in the read (an entry stored after the change was stored before the
 * read). One with `afterSeq` equal to `atSeq` cannot be told apart (changes with no entry
 * between them share their `afterSeq`, and a read between them has that `atSeq` too: in a
 * channel with no message every frame has `afterSeq` 0), so it is folded, as is every later
 * frame received since the read was sent: join, role, leave and ban set a member's state
 * (they do not add to it), so folding, in order, frames the read already shows ends in the
 * same list once the frames after them are folded too. Frames received before the read was
 * sent are in it and are not folded again.
 *
 * A frame can be missed while the connection is down: every list is read again after a
 * reconnect (on `HELLO`; one that nobody subscribes to then, on its next subscribe or
 * `memberList` call), and when the user is added back to its channel.
 *
 * @module
 */
import type { ChatdError } from './errors.js';
import { applyReceipt } from './receipts.js';
import type { MemberFrame, ReceiptFrame } from './protocol.js';
import { LazyStore } from './store.js';
import type { Member, MemberList, MemberListSnapshot, MemberListStore } from './member-types.js';
import type { ClientContext } from './types.js';

/**
 * Whether a `MEMBER` frame with `afterSeq` is surely shown by a members read whose `atSeq`
 * is `atSeq` (see the module's comment: equal seqs are not).
 */
export function memberFrameShown(afterSeq: number, atSeq: number): boolean {
  return afterSeq < atSeq;
}

/**
 * Folds one `MEMBER` frame onto a member list in byte order of the user id: `join` and
 * `role` set the member's role (adding it when missing, joined at the frame's `ts`, with no
 * watermarks), `leave` and `ban` take it out, `mute` sets the member's `mutedUntil` (or,
 * `null`, removes it); ops this client does not know change nothing. Returns `members`
 * itself when nothing changed.
 */
export function foldMemberFrame(members: readonly Member[], f: MemberFrame): readonly Member[] {
  const i = members.findIndex((m) => m.userId === f.userId);
  const cur = i >= 0 ? members[i] : undefined;
  switch (f.op) {
    case 'join':
    case 'role': {
      const role = f.role ?? cur?.role ?? 'member';
      if (cur !== undefined) {
        if (cur.role === role) return members;
        const next = [...members];
        next[i] = Object.freeze({ ...cur, role });
        return Object.freeze(next);
      }
      const added: Member = Object.freeze({ userId: f.userId, role, joinedAt: f.ts, deliveredSeq: 0, readSeq: 0 });
      const at = members.findIndex((m) => m.userId > f.userId);
      const next = [...members];
      next.splice(at < 0 ? next.length : at, 0, added);
      return Object.freeze(next);
    }
    case 'leave':
    case 'ban':
      return i < 0 ? members : Object.freeze(members.filter((_, j) => j !== i));
    case 'mute': {
      if (cur === undefined || f.mutedUntil === undefined || cur.mutedUntil === (f.mutedUntil ?? undefined)) return members;
      const rest: Member = { userId: cur.userId, role: cur.role, joinedAt: cur.joinedAt, deliveredSeq: cur.deliveredSeq, readSeq: cur.readSeq };
      const next = [...members];
      next[i] = Object.freeze(f.mutedUntil === null ? rest : { ...rest, mutedUntil: f.mutedUntil });
      return Object.freeze(next);
    }
    default:
      return members;
  }
}

/** Moves a member's watermark by a `RECEIPT` (never back); `members` itself when nothing moved. */
export function foldReceipt(members: readonly Member[], r: Pick<ReceiptFrame, 'userId' | 'kind' | 'seq'>): readonly Member[] {
  const i = members.findIndex((m) => m.userId === r.userId);
  const cur = members[i];
  if (cur === undefined) return members;
  const w = applyReceipt(cur, r.kind, r.seq);
  if (w === cur) return members;
  const next = [...members];
  next[i] = Object.freeze({ ...cur, deliveredSeq: w.deliveredSeq, readSeq: w.readSeq });
  return Object.freeze(next);
}

/** One channel's list. */
interface ListCtx {
  readonly id: string;
  members: readonly Member[];
  atSeq: number;
  status: MemberListSnapshot['status'];
  error: ChatdError | undefined;
  /** Frames received since the read in flight was sent (undefined: no read in flight). */
  buffer: MemberFrame[] | undefined;
  /** A read is in flight; `again`: read once more when it is done. */
  reading: boolean;
  again: boolean;
  /** Bumped when the channel is removed: a read sent before that is thrown away. */
  gen: number;
  /** The connection (its number) whose frames the last read was sent on; 0: none open. */
  readConn: number;
  /** Not read since something was missed, and nobody listening: read on the next subscribe. */
  stale: boolean;
  /** Read at least once. */
  started: boolean;
  listeners: number;
  readonly store: LazyStore<MemberListSnapshot>;
  readonly handle: MemberListStore;
}

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
export class MemberLists {
  private readonly c: ClientContext;
  private readonly deps: MemberListsDeps;
  private readonly lists = new Map<string, ListCtx>();
  private readonly aborts = new Set<AbortController>();

  /** Reads with `deps`; listens to the client's `channelAdded` and `channelRemoved`. */
  constructor(c: ClientContext, deps: MemberListsDeps) {
    this.c = c;
    this.deps = deps;
    c.events.on('channelRemoved', (id) => {
      this.removed(id);
    });
    c.events.on('channelAdded', (id) => {
      this.added(id);
    });
  }

  /** The list of a channel (read when first asked for, and when it went stale). */
  get(channelId: string): MemberListStore {
    const l = this.ctx(channelId);
    if (!l.started || l.stale) this.read(l);
    return l.handle;
  }

  /** A `MEMBER` frame: folded onto its channel's list (and kept for the read in flight). */
  onMember(f: MemberFrame): void {
    const l = this.lists.get(f.channelId);
    if (l === undefined || l.status === 'removed') return;
    l.buffer?.push(f);
    if (l.status === 'loading' || memberFrameShown(f.afterSeq, l.atSeq)) return;
    const next = foldMemberFrame(l.members, f);
    if (next === l.members) return;
    l.members = next;
    l.store.invalidate();
  }

  /** A `RECEIPT`: the member's watermark moves in its channel's list. */
  onReceipt(r: ReceiptFrame): void {
    const l = this.lists.get(r.channelId);
    if (l === undefined || l.status === 'removed') return;
    const next = foldReceipt(l.members, r);
    if (next === l.members) return;
    l.members = next;
    l.store.invalidate();
  }

  /** A session opened (`HELLO`): frames may have been missed since the lists were read; read them again. */
  opened(): void {
    const conn = this.deps.openConn();
    for (const l of this.lists.values()) {
      if (!l.started || l.status === 'removed' || l.readConn === conn) continue;
      if (l.listeners > 0) this.read(l);
      else l.stale = true;
    }
  }

  /** The client closed: reads in flight are stopped. */
  close(): void {
    for (const a of this.aborts) a.abort();
    this.aborts.clear();
  }

  /** The user is no longer in the channel: its list is empty and `removed`. */
  private removed(id: string): void {
    const l = this.lists.get(id);
    if (l === undefined || l.status === 'removed') return;
    l.gen++;
    l.status = 'removed';
    l.members = Object.freeze([]);
    l.error = undefined;
    l.buffer = undefined;
    l.again = false;
    l.store.invalidate();
  }

  /** The user is in the channel (again): a removed list is read again. */
  private added(id: string): void {
    const l = this.lists.get(id);
    if (l === undefined || l.status !== 'removed') return;
    l.status = 'loading';
    l.atSeq = 0;
    l.store.invalidate();
    this.read(l);
  }

  private ctx(channelId: string): ListCtx {
    const known = this.lists.get(channelId);
    if (known !== undefined) return known;
    const store: LazyStore<MemberListSnapshot> = new LazyStore(() =>
      Object.freeze({ channelId, status: l.status, members: l.members, atSeq: l.atSeq, error: l.error }),
    );
    const handle: MemberListStore = {
      channelId,
      subscribe: (listener) => {
        const off = store.subscribe(listener);
        l.listeners++;
        if (l.stale) this.read(l);
        let on = true;
        return () => {
          if (!on) return;
          on = false;
          l.listeners--;
          off();
        };
      },
      getSnapshot: store.getSnapshot,
      refresh: () => {
        this.read(l);
      },
    };
    const l: ListCtx = {
      id: channelId,
      members: Object.freeze([]),
      atSeq: 0,
      status: 'loading',
      error: undefined,
      buffer: undefined,
      reading: false,
      again: false,
      gen: 0,
      readConn: 0,
      stale: false,
      started: false,
      listeners: 0,
      store,
      handle,
    };
    this.lists.set(channelId, l);
    return l;
  }

  /** Reads the list (once at a time: a read asked for meanwhile follows it). */
  private read(l: ListCtx): void {
    if (this.deps.closed()) return;
    l.started = true;
    l.stale = false;
    if (l.reading) {
      l.again = true;
      return;
    }
    l.reading = true;
    l.buffer = [];
    l.readConn = this.deps.openConn();
    const gen = l.gen;
    const abort = new AbortController();
    this.aborts.add(abort);
    const done = (): void => {
      this.aborts.delete(abort);
      l.reading = false;
      l.buffer = undefined;
      if (l.again && !this.deps.closed()) {
        l.again = false;
        this.read(l);
      }
    };
    this.deps.readAll(l.id, abort.signal).then(
      (list) => {
        if (gen === l.gen && !this.deps.closed()) {
          let members: readonly Member[] = Object.freeze(list.members.map((m) => Object.freeze({ ...m })));
          for (const f of l.buffer ?? []) if (!memberFrameShown(f.afterSeq, list.atSeq)) members = foldMemberFrame(members, f);
          l.members = members;
          l.atSeq = list.atSeq;
          l.status = 'ready';
          l.error = undefined;
          l.store.invalidate();
        }
        done();
      },
      (e: unknown) => {
        if (gen === l.gen && !this.deps.closed()) {
          l.status = 'error';
          l.error = e as ChatdError;
          l.store.invalidate();
        }
        done();
      },
    );
  }
}
