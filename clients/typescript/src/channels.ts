/**
 * The user's channels as the client holds them: each channel's state (its log window,
 * watermarks, receipts, typing, what HELLO said), its store's snapshot, membership
 * (listed, removed), and the channel list built from them.
 *
 * @module
 */
import type { ChatdError } from './errors.js';
import { ChannelLog } from './log.js';
import type { OutboxRecord } from './outbox.js';
import type { ChannelRemovedReason, HelloChannel, HelloFrame, MemberFrame } from './protocol.js';
import { ModerationState } from './moderation-state.js';
import { LazyStore } from './store.js';
import type { ThreadCtx } from './threads.js';
import type { ChannelSnapshot, ChannelSummary, NotifySettings, OutgoingMessage, Watermarks } from './snapshot-types.js';
import type { ClientContext } from './types.js';
import { TypingThrottle, TypingTracker } from './typing.js';
import { computeUnread } from './unread.js';
import { outgoingAttachments } from './attachment-types.js';
import { computeUnreadMentions, mentionFields } from './mentions.js';

/** @internal Everything the client holds about one channel. */
export interface ChannelCtx {
  /** The channel. */
  id: string;
  /** Its entries: the window held, folded. */
  log: ChannelLog;
  /** True once `ChatClient.channel` opened it (its entries are then read and kept). */
  opened: boolean;
  /** Deleted, or the user is no longer a member. */
  removed: boolean;
  /** Why it was removed, when known (`CHANNEL_REMOVED`'s `reason`). */
  removedReason: ChannelRemovedReason | undefined;
  /** Its entry of the last HELLO (or `GET /v1/me/channels`); undefined until listed. */
  hello: HelloChannel | undefined;
  /** `lastSeq` of that entry. */
  helloLastSeq: number;
  /** others' `message` entries received while not opened, after `helloLastSeq`: messageId → seq */
  liveUnread: Map<string, number>;
  /** those of them that mention the user (protocol §16): messageId → seq */
  liveMentions: Map<string, number>;
  /** `epoch` when the channel was last listed (see refreshChannels) */
  listedEpoch: number;
  /** `epoch` when the channel was last removed */
  removedEpoch: number;
  /** The user's read watermark. */
  readSeq: number;
  /** The user's delivered watermark. */
  deliveredSeq: number;
  /** Highest seq a MSG_DELIVERED (or MSG_READ) was sent for. */
  deliveredSent: number;
  /** Other users' watermarks. */
  receipts: Map<string, Watermarks>;
  /** Who else is typing. */
  typing: TypingTracker;
  /** Expires the next typing indicator. */
  typingTimer: ReturnType<typeof setTimeout> | undefined;
  /** Throttles the user's own typing `start`s. */
  throttle: TypingThrottle;
  /** The user's ACKed messages, until they show in the log. */
  sent: Map<string, OutgoingMessage>;
  /** The channel's store. */
  store: LazyStore<ChannelSnapshot>;
  /** `loadOlder` calls waiting for the next older page. */
  olderWaiters: ((err?: ChatdError) => void)[];
  /** An older page is being read. */
  loadingOlder: boolean;
  /** The threads opened in it (`ChatClient.thread`), by root id: fed the entries its log appends. */
  threads: Map<string, ThreadCtx>;
}

/** @internal The channels, by id, and the channel list. */
export class Channels {
  /** The channel list's store. */
  readonly list: LazyStore<readonly ChannelSummary[]>;
  /** The channels' posting rules and the user's mutes (`ChannelSnapshot.moderation`). */
  readonly moderation: ModerationState;
  private readonly c: ClientContext;
  private readonly byId = new Map<string, ChannelCtx>();
  /** The user's outbox records (this tab's and other tabs'), for the channels' `outgoing`. */
  private readonly outbox: () => Iterable<OutboxRecord>;
  private listValue: readonly ChannelSummary[] = Object.freeze([]);
  /** ids emitted by `channelAdded` and not removed since */
  private readonly listed = new Set<string>();
  /** counts channel listings and removals, to order them against a refresh in flight */
  private epochValue = 0;

  /** `outbox` lists the user's outbox records in the order they were made. */
  constructor(c: ClientContext, outbox: () => Iterable<OutboxRecord>) {
    this.c = c;
    this.outbox = outbox;
    this.list = new LazyStore(() => this.buildList());
    this.moderation = new ModerationState(c.now, () => c.userId, (id) => this.byId.get(id)?.store.invalidate());
  }

  /** The count of listings and removals so far. */
  get epoch(): number {
    return this.epochValue;
  }

  /** Every channel the client knows of, listed or not, removed or not. */
  all(): IterableIterator<ChannelCtx> {
    return this.byId.values();
  }

  /** A channel, if known. */
  get(channelId: string): ChannelCtx | undefined {
    return this.byId.get(channelId);
  }

  /** A channel, created (not opened, not listed) when first asked for. */
  ctx(channelId: string): ChannelCtx {
    let ch = this.byId.get(channelId);
    if (ch !== undefined) return ch;
    const created: ChannelCtx = {
      id: channelId,
      log: new ChannelLog(channelId, this.c.userId),
      opened: false,
      removed: false,
      removedReason: undefined,
      hello: undefined,
      helloLastSeq: 0,
      liveUnread: new Map(),
      liveMentions: new Map(),
      listedEpoch: 0,
      removedEpoch: 0,
      readSeq: 0,
      deliveredSeq: 0,
      deliveredSent: 0,
      receipts: new Map(),
      typing: new TypingTracker(),
      typingTimer: undefined,
      throttle: new TypingThrottle(this.c.opts.typingThrottleMs ?? 2000),
      sent: new Map(),
      store: new LazyStore(
        () => this.buildSnapshot(created),
        () => {
          this.list.invalidate();
          // a thread shows its root and the channel's outbox records: it may have changed too
          for (const t of created.threads.values()) t.store.invalidate();
        },
      ),
      olderWaiters: [],
      loadingOlder: false,
      threads: new Map(),
    };
    ch = created;
    this.byId.set(channelId, ch);
    return ch;
  }

  /** The listed channels that are not removed (`ChatClient.channelIds`). */
  ids(): string[] {
    return [...this.byId.values()].filter((c) => !c.removed && c.hello !== undefined).map((c) => c.id);
  }

  /** Something shown in the channel changed (its outbox records): a new snapshot. */
  changed(channelId: string): void {
    this.byId.get(channelId)?.store.invalidate();
  }

  /**
   * Takes a HELLO's channels; those it no longer lists are removed (`channelRemoved`).
   * Returns the ids it lists, for {@link Channels.markListed} once the state is `open`.
   */
  applyHello(h: HelloFrame): Set<string> {
    const listed = new Set<string>();
    for (const c of h.channels) {
      listed.add(c.channelId);
      const ch = this.ctx(c.channelId);
      ch.removed = false;
      this.takeChannelState(ch, c);
    }
    for (const ch of this.byId.values()) {
      if (!listed.has(ch.id) && ch.hello !== undefined && !ch.removed) this.markRemoved(ch);
    }
    return listed;
  }

  /** Takes a channel's entry of HELLO (or of `GET /v1/me/channels`): its seqs, watermarks, unread base. */
  takeChannelState(ch: ChannelCtx, c: HelloChannel): void {
    ch.hello = c;
    ch.helloLastSeq = c.lastSeq;
    for (const [id, seq] of ch.liveUnread) if (seq <= c.lastSeq) ch.liveUnread.delete(id);
    for (const [id, seq] of ch.liveMentions) if (seq <= c.lastSeq) ch.liveMentions.delete(id);
    ch.log.noteLastSeq(c.lastSeq);
    ch.readSeq = Math.max(ch.readSeq, c.readSeq);
    ch.deliveredSeq = Math.max(ch.deliveredSeq, c.deliveredSeq, ch.readSeq);
    ch.deliveredSent = Math.max(ch.deliveredSent, ch.deliveredSeq);
    ch.store.invalidate();
  }

  /**
   * A live frame shows the user is a member now (added while connected, or again): a
   * `MSG_RECV`, or the ACK of a new (not duplicate) entry. A duplicate ACK proves nothing:
   * the server gives it also after the sender left the channel.
   */
  memberNow(ch: ChannelCtx): void {
    if (ch.hello === undefined) ch.hello = { channelId: ch.id, lastSeq: 0, deliveredSeq: 0, readSeq: 0 };
    if (ch.removed) {
      ch.removed = false;
      ch.removedReason = undefined;
      ch.store.invalidate();
    }
    this.markListed(ch);
  }

  /**
   * `CHANNEL_ADDED`: the user is in the channel now, as its entry says (taken as a `HELLO`
   * channel's); listed (`channelAdded`) when it was not.
   */
  added(ch: ChannelCtx, entry: HelloChannel): void {
    if (ch.removed) {
      ch.removed = false;
      ch.removedReason = undefined;
    }
    this.takeChannelState(ch, entry);
    this.markListed(ch);
  }

  /**
   * A `MEMBER` frame of a listed channel: the user's own role (`join`, `role`), and the
   * member count for others' `join`, `leave` and `ban` (the user's own are in its
   * `CHANNEL_ADDED`, and its channel is removed after its own leave).
   */
  applyMember(f: MemberFrame): void {
    const ch = this.byId.get(f.channelId);
    const hello = ch?.hello;
    if (ch === undefined || hello === undefined || ch.removed) return;
    let next = hello;
    if (f.userId === this.c.userId) {
      if ((f.op === 'join' || f.op === 'role') && f.role !== undefined && f.role !== hello.role) next = { ...hello, role: f.role };
    } else if (hello.memberCount !== undefined) {
      if (f.op === 'join') next = { ...hello, memberCount: hello.memberCount + 1 };
      else if (f.op === 'leave' || f.op === 'ban') next = { ...hello, memberCount: Math.max(1, hello.memberCount - 1) };
    }
    if (next === hello) return;
    ch.hello = next;
    ch.store.invalidate();
  }

  /** The channel is (again) in the list: `channelAdded` when it was not. */
  markListed(ch: ChannelCtx): void {
    ch.listedEpoch = ++this.epochValue;
    if (ch.removed || ch.hello === undefined || this.listed.has(ch.id)) return;
    this.listed.add(ch.id);
    this.list.invalidate();
    this.c.events.emit('channelAdded', ch.id);
  }

  /** The channel was deleted or the user left it (`reason`, when known): `channelRemoved` once. */
  markRemoved(ch: ChannelCtx, reason?: ChannelRemovedReason): void {
    ch.removedEpoch = ++this.epochValue;
    if (ch.removed) return;
    ch.removed = true;
    ch.removedReason = reason;
    this.listed.delete(ch.id);
    ch.store.invalidate();
    this.c.events.emit('channelRemoved', ch.id, reason);
  }

  private buildSnapshot(ch: ChannelCtx): ChannelSnapshot {
    const messages = ch.log.messages();
    const mine = new Set<string>();
    for (const m of messages) if (m.senderId === this.c.userId && m.clientMsgId !== undefined) mine.add(m.clientMsgId);
    const outgoing: OutgoingMessage[] = [];
    for (const [k, s] of ch.sent) {
      if (mine.has(k) || (s.seq !== undefined && ch.log.isStarted && s.seq < ch.log.low)) ch.sent.delete(k);
    }
    const seen = new Set<string>();
    for (const r of this.outbox()) {
      if (r.op.type !== 'MSG_SEND' || r.op.channelId !== ch.id || mine.has(r.clientMsgId)) continue;
      seen.add(r.clientMsgId);
      const sent = ch.sent.get(r.clientMsgId);
      outgoing.push(
        Object.freeze({
          clientMsgId: r.clientMsgId,
          channelId: ch.id,
          body: r.op.body,
          state: sent !== undefined ? 'sent' : r.state,
          seq: sent?.seq,
          messageId: sent?.messageId,
          error: r.error,
          createdAt: r.createdAt,
          ...(r.op.replyTo !== undefined ? { replyTo: r.op.replyTo } : {}),
          ...(r.op.threadId !== undefined ? { threadId: r.op.threadId } : {}),
          ...mentionFields(r.op),
          ...outgoingAttachments(r.op),
        }),
      );
    }
    for (const s of ch.sent.values()) if (!seen.has(s.clientMsgId)) outgoing.push(s);
    outgoing.sort((a, b) => a.createdAt - b.createdAt);
    return Object.freeze({
      channelId: ch.id,
      status: ch.removed ? 'removed' : ch.log.isStarted ? 'ready' : 'loading',
      removedReason: ch.removed ? ch.removedReason : undefined,
      messages,
      outgoing: Object.freeze(outgoing),
      hasOlder: ch.log.hasOlder,
      unread: this.unreadOf(ch),
      unreadMentions: this.unreadMentionsOf(ch),
      lastSeq: ch.log.knownLastSeq,
      deliveredSeq: ch.deliveredSeq,
      readSeq: ch.readSeq,
      receipts: Object.freeze(Object.fromEntries(ch.receipts)),
      typing: ch.typing.list(),
      moderation: this.moderation.snapshot(ch.id),
    });
  }

  private unreadOf(ch: ChannelCtx): number {
    return computeUnread({
      readSeq: ch.readSeq,
      helloReadSeq: ch.hello?.readSeq ?? 0,
      helloLastSeq: ch.helloLastSeq,
      helloUnread: ch.hello?.unread,
      logStarted: ch.log.isStarted,
      logLow: ch.log.low,
      logHigh: ch.log.high,
      knownLastSeq: ch.log.knownLastSeq,
      countHeldAbove: (s) => ch.log.countUnreadAbove(s),
      liveUnread: countAbove(ch.liveUnread, ch.readSeq),
    });
  }

  private unreadMentionsOf(ch: ChannelCtx): number {
    return computeUnreadMentions({
      readSeq: ch.readSeq,
      helloReadSeq: ch.hello?.readSeq ?? 0,
      helloLastSeq: ch.helloLastSeq,
      helloUnreadMentions: typeof ch.hello?.unreadMentions === 'number' ? ch.hello.unreadMentions : undefined,
      logStarted: ch.log.isStarted,
      logLow: ch.log.low,
      countHeldAbove: (s) => ch.log.countMentionsAbove(s),
      liveMentions: countAbove(ch.liveMentions, ch.readSeq),
    });
  }

  /**
   * `CHANNEL_SETTINGS`, or the answer of the user's own settings call: the channel's
   * `notify` and `snoozeUntil` now (a channel not listed is left alone: its `HELLO` or
   * `CHANNEL_ADDED` entry will carry them).
   */
  applySettings(channelId: string, settings: NotifySettings): void {
    const ch = this.byId.get(channelId);
    const hello = ch?.hello;
    if (ch === undefined || hello === undefined) return;
    if (hello.notify === settings.notify && hello.snoozeUntil === settings.snoozeUntil) return;
    ch.hello = { ...hello, notify: settings.notify, snoozeUntil: settings.snoozeUntil };
    ch.store.invalidate();
  }

  /** The channel list's snapshot: the previous array (and summaries) when nothing changed. */
  private buildList(): readonly ChannelSummary[] {
    const prev = new Map(this.listValue.map((c) => [c.channelId, c]));
    const next: ChannelSummary[] = [];
    let changed = false;
    const chans = [...this.byId.values()].filter((c) => !c.removed && c.hello !== undefined);
    chans.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const ch of chans) {
      const s: ChannelSummary = {
        channelId: ch.id,
        name: ch.hello?.name,
        metadata: ch.hello?.metadata,
        lastSeq: ch.log.knownLastSeq,
        unread: this.unreadOf(ch),
        readSeq: ch.readSeq,
        opened: ch.opened,
        // the contract's defaults for what a server before version 1.2 does not send
        kind: ch.hello?.kind ?? 'group',
        visibility: ch.hello?.visibility ?? 'private',
        role: ch.hello?.role ?? 'member',
        memberCount: ch.hello?.memberCount,
        unreadMentions: this.unreadMentionsOf(ch),
        ...settingsOf(ch.hello),
      };
      const old = prev.get(ch.id);
      if (
        old !== undefined &&
        old.name === s.name &&
        old.metadata === s.metadata &&
        old.lastSeq === s.lastSeq &&
        old.unread === s.unread &&
        old.readSeq === s.readSeq &&
        old.opened === s.opened &&
        old.kind === s.kind &&
        old.visibility === s.visibility &&
        old.role === s.role &&
        old.memberCount === s.memberCount &&
        old.unreadMentions === s.unreadMentions &&
        old.notify === s.notify &&
        old.snoozeUntil === s.snoozeUntil
      ) {
        next.push(old);
      } else {
        next.push(Object.freeze(s));
        changed = true;
      }
    }
    if (!changed && next.length === this.listValue.length && next.every((c, i) => c === this.listValue[i])) {
      return this.listValue;
    }
    this.listValue = Object.freeze(next);
    return this.listValue;
  }
}

/** A channel entry's settings, with the contract's defaults (`all`, no snooze) for what it lacks. */
function settingsOf(h: HelloChannel | undefined): NotifySettings {
  return {
    notify: typeof h?.notify === 'string' ? h.notify : 'all',
    snoozeUntil: typeof h?.snoozeUntil === 'number' ? h.snoozeUntil : null,
  };
}

/** How many of the map's seqs are above `seq`. */
function countAbove(seqs: ReadonlyMap<string, number>, seq: number): number {
  let n = 0;
  for (const s of seqs.values()) if (s > seq) n++;
  return n;
}
