/**
 * The folded state of a set of `message` entries: edits, deletions and reactions folded into
 * each message, and (protocol §14) each reply's preview of the message it quotes and each
 * root's thread summary kept current as quoted messages are edited or deleted and replies
 * come or are deleted. A channel's log and a thread's replies both keep their messages here;
 * they decide which entries come in, and in what order.
 *
 * Every state has an `asOfSeq`: the entries with a seq at or below it are already in it (a
 * read's states are as of the read's `lastSeq`, a live message as of its own seq), so an
 * entry is folded into a state only when its seq is above that state's `asOfSeq`.
 *
 * @module
 */
import { parseMessageAttachments, type MessageAttachment } from './attachment-types.js';
import { mentionsUser } from './mentions.js';
import type { EntryKind, ReactionCount, ReplyPreview, ThreadSummary, WireEntry } from './protocol.js';

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
  /** The author's idempotency key; absent when it was made through an HTTP route (protocol §12, version 1.2). */
  readonly clientMsgId?: string;
  /** True when it was made with the admin token (a backend post or an admin's delete route). */
  readonly byAdmin: boolean;
  /** Current text (`""` when deleted). */
  readonly body: string;
  /** ts of the latest edit, when edited. */
  readonly editedAt: number | undefined;
  /** True when deleted (also when expired). */
  readonly deleted: boolean;
  /**
   * True when the retention sweep erased it (§19): `deleted` too. Learned from a read (a
   * read shows it so; a held message becomes expired when a later read of it does).
   */
  readonly expired: boolean;
  /** Reaction counts in order of first use, counts > 0 only. */
  readonly reactions: readonly ReactionCount[];
  /** The message it quotes (protocol §14), when a reply. */
  readonly replyTo?: string;
  /**
   * With `replyTo`: the quoted message's sender and current text (at most 200 bytes), or
   * `{body: "", deleted: true}` once it is deleted; folded as edits and deletes arrive.
   */
  readonly replyPreview?: ReplyPreview;
  /** The thread's root (protocol §14), when a reply in a thread. */
  readonly threadId?: string;
  /** A root with replies: its thread's summary, folded as replies come and are deleted. */
  readonly thread?: ThreadSummary;
  /** The users it mentions (protocol §16), as the server kept them; `[]` when none or deleted. */
  readonly mentions: readonly string[];
  /** True when it mentions every member (`@channel`); false once deleted. */
  readonly mentionAll: boolean;
  /** True when it mentions the client's user (`mentions` holds it, or `mentionAll`); false once deleted. */
  readonly mentionsMe: boolean;
  /**
   * Its files and images (protocol §15), in the order sent, each with its signed `url` (an
   * image's with `thumbnailUrl`); `[]` when none, and once deleted (the server deletes
   * their bytes with the message).
   */
  readonly attachments: readonly MessageAttachment[];
}

/** The kind of an entry (version 1 entries have none: `message`). */
export function entryKind(e: WireEntry): EntryKind {
  return e.kind ?? 'message';
}

/** The most bytes of UTF-8 a reply preview holds (protocol §14). */
export const PREVIEW_MAX_BYTES = 200;

/** `text` cut to at most `maxBytes` bytes of UTF-8, at a character (code point) boundary. */
export function cutUtf8(text: string, maxBytes = PREVIEW_MAX_BYTES): string {
  let bytes = 0;
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > maxBytes) break;
    bytes += n;
    out += ch;
  }
  return out;
}

/** The most participants a thread summary lists (protocol §14). */
const MAX_PARTICIPANTS = 10;

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
  expired: boolean;
  reactions: ReactionState[];
  preview: ReplyPreview | undefined;
  thread: ThreadSummary | undefined;
  /** Its attachments as last read (a read of the stored entry replaces those made from an ACK). */
  attachments: readonly MessageAttachment[];
  /** Modifications with seq <= asOfSeq are already included in the state. */
  asOfSeq: number;
  /** True when the holders maps are complete (built from the message's creation on). */
  exact: boolean;
  view: Message | undefined;
}

/** @internal The messages of a channel's window or of a thread, by id and in seq order, folded. */
export class MessageStates {
  /** The current user (for reaction `me`). */
  private readonly me: string;
  /** Whether modifications of messages not held are kept until their message comes (a channel's log: yes). */
  private readonly keepOrphans: boolean;
  private readonly states = new Map<string, MessageState>();
  /** message ids in seq order */
  private order: string[] = [];
  /** modifications whose target is not (yet) held */
  private readonly orphanMods = new Map<string, WireEntry[]>();
  /** The held messages that quote each message id. */
  private readonly quoting = new Map<string, Set<string>>();
  private cache: readonly Message[] | undefined;

  constructor(me: string, keepOrphans: boolean) {
    this.me = me;
    this.keepOrphans = keepOrphans;
  }

  /** Whether the message is held. */
  has(messageId: string): boolean {
    return this.states.has(messageId);
  }

  /** How many messages are held. */
  get size(): number {
    return this.order.length;
  }

  /**
   * Adds a `message` entry whose state is as of `asOf` (see the module doc); `exactIfNoReactions`:
   * the reaction holders are known from its creation on when the entry lists none. `atEnd`: it
   * is above every held message (else it is put in seq order). Its root's summary counts it
   * when the root's state is older than it.
   */
  addMessage(e: WireEntry, asOf: number, exactIfNoReactions: boolean, atEnd: boolean): void {
    const st = this.newState(e, asOf, exactIfNoReactions);
    this.states.set(e.messageId, st);
    if (atEnd || this.order.length === 0) this.order.push(e.messageId);
    else this.insertOrdered(e.messageId, e.seq);
    this.cache = undefined;
    if (e.replyTo !== undefined) {
      let set = this.quoting.get(e.replyTo);
      if (set === undefined) {
        set = new Set();
        this.quoting.set(e.replyTo, set);
      }
      set.add(e.messageId);
    }
    if (e.threadId !== undefined) {
      const root = this.states.get(e.threadId);
      if (root !== undefined && e.seq > root.asOfSeq) this.replyAdded(root, e, !st.deleted);
    }
    const list = this.orphanMods.get(e.messageId);
    if (list !== undefined) {
      this.orphanMods.delete(e.messageId);
      for (const m of list) if (m.seq > st.asOfSeq) this.fold(st, m);
    }
  }

  /**
   * Folds an `edit`, `delete` or `reaction` entry into its target (when the target's state is
   * older than it), and an edit's or delete's into the previews of the messages quoting the
   * target. A target not held: kept for it when orphans are kept, else dropped.
   */
  modify(e: WireEntry): void {
    const id = e.targetId;
    if (id === undefined) return;
    const kind = entryKind(e);
    if (kind === 'edit' || kind === 'delete') this.foldPreviews(id, e, kind);
    const target = this.states.get(id);
    if (target !== undefined) {
      if (e.seq > target.asOfSeq) this.fold(target, e);
      return;
    }
    if (!this.keepOrphans) return;
    const list = this.orphanMods.get(id) ?? [];
    list.push(e);
    list.sort((a, b) => a.seq - b.seq);
    this.orphanMods.set(id, list);
  }

  /** The held messages in seq order, folded. The same array until something changes. */
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

  /**
   * Replaces a held message's attachments with those of a read of its stored entry (fresh
   * signed URLs; the sender's own entry made from its ACK had none). Nothing for a message
   * not held or deleted. Returns whether it changed anything.
   */
  setAttachments(messageId: string, attachments: unknown): boolean {
    const st = this.states.get(messageId);
    if (st === undefined || st.deleted) return false;
    st.attachments = parseMessageAttachments(attachments);
    st.view = undefined;
    this.cache = undefined;
    return true;
  }

  /**
   * A read shows a held message expired (§19: the retention sweep erased it, with no
   * entry): it is deleted and expired from now on, as a delete makes it (no text,
   * reactions, mentions or attachments; the messages quoting it preview it deleted; its
   * root counts one reply fewer). Nothing for a message not held, or an entry not
   * `expired`. Returns whether it changed anything.
   */
  expire(e: WireEntry): boolean {
    if (e.expired !== true) return false;
    const st = this.states.get(e.messageId);
    if (st === undefined || st.expired) return false;
    const was = st.deleted;
    st.expired = true;
    st.deleted = true;
    st.body = '';
    st.editedAt = undefined;
    st.reactions = [];
    st.attachments = parseMessageAttachments(undefined);
    st.view = undefined;
    this.cache = undefined;
    for (const id of this.quoting.get(e.messageId) ?? []) {
      const q = this.states.get(id);
      if (q === undefined) continue;
      q.preview = { senderId: q.preview?.senderId ?? st.entry.senderId, body: '', deleted: true };
      q.view = undefined;
    }
    const rootId = st.entry.threadId;
    const root = rootId === undefined ? undefined : this.states.get(rootId);
    if (!was && root?.thread !== undefined) {
      root.thread = { ...root.thread, replyCount: Math.max(0, root.thread.replyCount - 1) };
      root.view = undefined;
    }
    return true;
  }

  /** Counts held messages above `afterSeq` that are not deleted and not sent by the user. */
  countUnreadAbove(afterSeq: number): number {
    let n = 0;
    for (const id of this.order) {
      const st = this.states.get(id);
      if (st === undefined || st.entry.seq <= afterSeq) continue;
      if (!st.deleted && st.entry.senderId !== this.me) n++;
    }
    return n;
  }

  /** Messages of others, not deleted, above `afterSeq` that mention the user (protocol §16). */
  countMentionsAbove(afterSeq: number): number {
    let n = 0;
    for (const id of this.order) {
      const st = this.states.get(id);
      if (st === undefined || st.entry.seq <= afterSeq) continue;
      if (!st.deleted && st.entry.senderId !== this.me && mentionsUser(st.entry, this.me)) n++;
    }
    return n;
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
    const expired = e.expired === true;
    const deleted = e.deleted === true || expired;
    return {
      entry: e,
      body: deleted ? '' : e.body,
      editedAt: e.editedAt,
      deleted,
      expired,
      reactions,
      preview: e.replyTo === undefined ? undefined : (e.replyPreview ?? undefined),
      thread: e.thread,
      attachments: deleted ? parseMessageAttachments(undefined) : parseMessageAttachments(e.attachments),
      asOfSeq: e.reactions === undefined && e.editedAt === undefined && !deleted && e.thread === undefined ? e.seq : asOf,
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
      case 'delete': {
        // a deleted message shows no text, no edit time and no reactions (as reads return it)
        const was = st.deleted;
        st.deleted = true;
        st.body = '';
        st.editedAt = undefined;
        st.reactions = [];
        st.attachments = parseMessageAttachments(undefined);
        // a reply deleted: its root counts one reply fewer (when the root's state is older)
        const rootId = st.entry.threadId;
        const root = rootId === undefined ? undefined : this.states.get(rootId);
        if (!was && root?.thread !== undefined && m.seq > root.asOfSeq) {
          root.thread = { ...root.thread, replyCount: Math.max(0, root.thread.replyCount - 1) };
          root.view = undefined;
        }
        break;
      }
      case 'reaction': {
        if (st.deleted || m.emoji === undefined) break;
        foldReaction(st, m.senderId, m.emoji, m.op ?? 'add', m.noop === true);
        break;
      }
      case 'message':
        break;
    }
  }

  /** An edit or delete of `targetId`: the previews of the held messages quoting it follow. */
  private foldPreviews(targetId: string, m: WireEntry, kind: 'edit' | 'delete'): void {
    const ids = this.quoting.get(targetId);
    if (ids === undefined) return;
    for (const id of ids) {
      const st = this.states.get(id);
      if (st === undefined || m.seq <= st.asOfSeq) continue;
      const senderId = st.preview?.senderId ?? this.states.get(targetId)?.entry.senderId ?? '';
      if (kind === 'delete') st.preview = { senderId, body: '', deleted: true };
      else if (st.preview?.deleted !== true) st.preview = { senderId, body: cutUtf8(m.body) };
      st.view = undefined;
      this.cache = undefined;
    }
  }

  /**
   * A reply newer than the root's state: the root's summary names it as the last reply and its
   * sender as a participant, and counts it when `counts` (a reply read already deleted has its
   * delete in its state, which will not be folded again: the server's `replyCount` leaves it out).
   */
  private replyAdded(root: MessageState, reply: WireEntry, counts: boolean): void {
    const t = root.thread;
    const participants = t === undefined ? [] : [...t.participants];
    if (participants.length < MAX_PARTICIPANTS && !participants.includes(reply.senderId)) participants.push(reply.senderId);
    root.thread = {
      replyCount: (t?.replyCount ?? 0) + (counts ? 1 : 0),
      lastReplyAt: Math.max(t?.lastReplyAt ?? 0, reply.ts),
      lastReplySeq: Math.max(t?.lastReplySeq ?? 0, reply.seq),
      participants,
    };
    root.view = undefined;
    this.cache = undefined;
  }

  private view(st: MessageState): Message {
    const e = st.entry;
    return Object.freeze({
      messageId: e.messageId,
      channelId: e.channelId,
      senderId: e.senderId,
      seq: e.seq,
      ts: e.ts,
      ...(e.clientMsgId !== undefined ? { clientMsgId: e.clientMsgId } : {}),
      byAdmin: e.byAdmin === true,
      body: st.body,
      editedAt: st.editedAt,
      deleted: st.deleted,
      expired: st.expired,
      reactions: Object.freeze(
        st.reactions
          .filter((r) => r.count > 0)
          .map((r) => Object.freeze({ emoji: r.emoji, count: r.count, me: r.holders.get(this.me) === true })),
      ),
      ...(e.replyTo !== undefined ? { replyTo: e.replyTo } : {}),
      ...(st.preview !== undefined ? { replyPreview: Object.freeze({ ...st.preview }) } : {}),
      ...(e.threadId !== undefined ? { threadId: e.threadId } : {}),
      ...(st.thread !== undefined ? { thread: Object.freeze({ ...st.thread, participants: Object.freeze([...st.thread.participants]) }) } : {}),
      // a deleted message mentions no one any more (its mentions go with its text)
      mentions: Object.freeze(st.deleted || !Array.isArray(e.mentions) ? [] : e.mentions.filter((id): id is string => typeof id === 'string')),
      mentionAll: !st.deleted && e.mentionAll === true,
      mentionsMe: !st.deleted && mentionsUser(e, this.me),
      attachments: st.attachments,
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
