/**
 * The message list of the selected channel: the newest messages first loaded, older
 * pages on scroll (or the "Load older messages" button), each stored message with its
 * edit mark, read receipts, reactions and actions, and the user's unsent messages with
 * their state (pending, sent, failed with Retry and Discard), and between them the
 * membership changes seen live (`MEMBER` frames: "bob joined", "bob is now moderator"). It
 * keeps the reading position: at the bottom it follows new messages; above, it stays where
 * the user is. A channel the user is no longer in stays readable, with a notice saying why.
 * A message opened from search is scrolled to and marked (older pages loaded until it is
 * held; a thread reply's root, with its thread opened).
 */
import { attachmentsElement, outgoingAttachmentsElement } from './chat-attach.js';
import { bodyWithMentions } from './chat-mentions.js';
import type { ChannelSnapshot, MemberFrame, Message, OutgoingMessage, Presence } from '../../clients/typescript/src/index.js';
import type { MessageActions } from './chat-actions.js';
import { presenceDot, presenceWithMe } from './chat-people.js';
import { quoteElement } from './chat-quote.js';
import type { ChatState } from './chat-state.js';
import { clock, h } from './dom.js';
import { errorText, errorWords, memberChangeWords, removalWords } from './words.js';

/** The place of a blocked user's message: said, not shown. */
function blockedItem(m: Message): HTMLElement {
  return h(
    'li',
    { class: 'msg blocked', 'data-message-id': m.messageId, 'data-seq': m.seq, 'data-sender': m.senderId, 'data-blocked': 'true' },
    h('div', { class: 'meta' }, `A message from ${m.senderId}, whom you block, is hidden.`),
  );
}

/** A membership change seen live, as a line of its channel's timeline. */
interface SystemLine {
  /** The channel's last seq when it took effect: the line goes after that entry. */
  readonly afterSeq: number;
  readonly ts: number;
  readonly op: string;
  readonly userId: string;
  readonly text: string;
}

/** What the list needs from the view. */
export interface MessageListHooks {
  /** Sets the selected channel's notice. */
  notice(text: string): void;
  /** Opens the thread of a root (its "N replies" button). */
  openThread(m: Message): void;
  /** The user is no longer a member of the selected channel: no more sending in it. */
  readOnly(): void;
}

/** The scroller with the message list of the selected channel. */
export class MessageList {
  private readonly state: ChatState;
  private readonly actions: MessageActions;
  private readonly hooks: MessageListHooks;
  private listEl: HTMLOListElement | undefined;
  private scrollerEl: HTMLElement | undefined;
  private olderBtn: HTMLButtonElement | undefined;
  private loadingOlder = false;
  /** What was last drawn, to keep the reading position when older messages come in above. */
  private lastRendered: { channelId: string; firstSeq: number; count: number } | undefined;
  /** The membership changes seen live, per channel, in the order they came (and of afterSeq). */
  private readonly lines = new Map<string, SystemLine[]>();
  /** A message to scroll to once its channel holds it (opened from search), and the one marked as found. */
  private target: { channelId: string; messageId: string } | undefined;
  private found: string | undefined;

  constructor(state: ChatState, actions: MessageActions, hooks: MessageListHooks) {
    this.state = state;
    this.actions = actions;
    this.hooks = hooks;
  }

  /** Makes the scroller (older-messages button and list) of a newly built pane for channel `id`. */
  element(id: string): HTMLElement {
    this.olderBtn = h(
      'button',
      {
        type: 'button',
        class: 'older',
        id: 'load-older',
        hidden: true,
        onclick: () => {
          this.loadOlder();
        },
      },
      'Load older messages',
    );
    this.listEl = h('ol', { class: 'messages', id: 'messages', role: 'log', 'aria-label': `Messages in ${id}` });
    this.scrollerEl = h('div', { class: 'scroller', id: 'scroller' }, this.olderBtn, this.listEl);
    this.scrollerEl.addEventListener('scroll', () => {
      if (this.scrollerEl !== undefined && this.scrollerEl.scrollTop < 24) this.loadOlder();
    });
    return this.scrollerEl;
  }

  /** The pane shows no channel: nothing to draw until a new one is built. */
  detach(): void {
    this.listEl = undefined;
  }

  /** Another channel is selected: it opens at its newest messages. */
  reset(): void {
    this.lastRendered = undefined;
    this.target = undefined;
    this.found = undefined;
  }

  /**
   * Scrolls to message `messageId` of channel `channelId` (the selected one, or the one
   * being selected) and marks it; older pages are loaded until it is held. A thread reply:
   * its root, with the thread opened. A message no longer there: a notice says so.
   */
  reveal(channelId: string, messageId: string): void {
    this.target = { channelId, messageId };
    this.render();
  }

  /**
   * A `MEMBER` frame: a line in its channel's timeline ("bob joined", "carol was removed by
   * olive", "bob is now moderator"), placed after the entry `afterSeq`. Changes made while
   * the console was not connected are not shown (the member list has them).
   */
  memberChange(f: MemberFrame): void {
    const text = memberChangeWords(f, this.state.userId);
    if (text === undefined) return;
    let list = this.lines.get(f.channelId);
    if (list === undefined) {
      list = [];
      this.lines.set(f.channelId, list);
    }
    list.push({ afterSeq: f.afterSeq, ts: f.ts, op: f.op, userId: f.userId, text });
    if (f.channelId === this.state.current) this.render();
  }

  /** Draws the selected channel's messages and keeps the reading position. */
  render(): void {
    const list = this.listEl;
    const scroller = this.scrollerEl;
    const snap = this.state.snapshot();
    const current = this.state.current;
    if (list === undefined || scroller === undefined || snap === undefined || current === undefined) return;
    const fromBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
    const atBottom = fromBottom < 48;
    const receipts = this.receiptLabels(snap);
    const presence = presenceWithMe(this.state);
    // membership lines between the messages, each after the entry its change followed
    const lines = this.lines.get(current) ?? [];
    const items: HTMLElement[] = [];
    let next = 0;
    // a thread's replies show in its thread panel, not here (their root says how many)
    for (const m of snap.messages) {
      if (m.threadId !== undefined) continue;
      for (let l = lines[next]; l !== undefined && l.afterSeq < m.seq; l = lines[++next]) items.push(systemItem(l));
      items.push(this.messageItem(m, receipts.get(m.seq) ?? [], presence));
    }
    for (const l of lines.slice(next)) items.push(systemItem(l));
    for (const o of snap.outgoing) if (o.threadId === undefined) items.push(this.outgoingItem(o));
    if (snap.status === 'loading') items.unshift(h('li', { class: 'empty' }, 'Loading messages…'));
    if (snap.status === 'ready' && items.length === 0) items.push(h('li', { class: 'empty' }, 'No messages yet. Say hello!'));
    list.replaceChildren(...items);
    if (this.olderBtn !== undefined) {
      this.olderBtn.hidden = !snap.hasOlder;
      this.olderBtn.textContent = this.loadingOlder ? 'Loading older messages…' : 'Load older messages';
    }
    const first = snap.messages[0]?.seq ?? 0;
    const prev = this.lastRendered;
    const opened = prev === undefined || prev.channelId !== current;
    if (opened || atBottom) scroller.scrollTop = scroller.scrollHeight;
    else if (first < prev.firstSeq) scroller.scrollTop = scroller.scrollHeight - scroller.clientHeight - fromBottom;
    this.lastRendered = { channelId: current, firstSeq: first, count: snap.messages.length };
    this.seek(snap, current, list);
    if (snap.status === 'removed') {
      const why = removalWords(this.state.label(current), snap.removedReason, this.state.removedBy.get(current));
      this.hooks.notice(`${why} You can read what is shown but not send.`);
      this.hooks.readOnly();
    }
  }

  /** Scrolls to the target when it is held; else loads the older page (or says it is gone). */
  private seek(snap: ChannelSnapshot, current: string, list: HTMLElement): void {
    const t = this.target;
    if (t === undefined || t.channelId !== current || snap.status === 'loading') return;
    const m = snap.messages.find((x) => x.messageId === t.messageId);
    if (m === undefined) {
      if (snap.hasOlder && snap.status === 'ready') this.loadOlder();
      else if (!this.loadingOlder) {
        this.target = undefined;
        this.hooks.notice('That message is not in this channel any more (it may have been deleted).');
      }
      return;
    }
    this.target = undefined;
    const root = m.threadId === undefined ? m : snap.messages.find((x) => x.messageId === m.threadId);
    this.found = root?.messageId ?? m.messageId;
    const el = list.querySelector(`li.msg[data-message-id="${CSS.escape(this.found)}"]`);
    if (el instanceof HTMLElement) {
      el.dataset.found = 'true';
      el.scrollIntoView({ block: 'center' });
    }
    if (root !== undefined && root !== m) this.hooks.openThread(root);
  }

  /** Reads the page of messages before the oldest shown (one page at a time). */
  private loadOlder(): void {
    const store = this.state.currentStore();
    const snap = store?.getSnapshot();
    if (store === undefined || snap === undefined || !snap.hasOlder || this.loadingOlder) return;
    this.loadingOlder = true;
    if (this.olderBtn !== undefined) this.olderBtn.textContent = 'Loading older messages…';
    store.loadOlder().then(
      () => {
        this.loadingOlder = false;
        this.render();
      },
      (e: unknown) => {
        this.loadingOlder = false;
        // a search result waiting for this page is not looked for again (no retry loop)
        this.target = undefined;
        this.hooks.notice(errorText(e));
        this.render();
      },
    );
  }

  /** Where each other member's read watermark lands: the user's newest message at or below it. */
  private receiptLabels(snap: ChannelSnapshot): Map<number, string[]> {
    const mine = snap.messages.filter((m) => m.senderId === this.state.userId).map((m) => m.seq);
    const out = new Map<number, string[]>();
    for (const [user, w] of Object.entries(snap.receipts)) {
      let best: number | undefined;
      for (const s of mine) if (s <= w.readSeq) best = s;
      if (best === undefined) continue;
      out.set(best, [...(out.get(best) ?? []), user]);
    }
    return out;
  }

  /** A stored message: sender with presence, body (or "expired" / "deleted"), time, marks, then reactions and actions. */
  private messageItem(m: Message, readers: readonly string[], presence: Readonly<Record<string, Presence>>): HTMLElement {
    const mine = m.senderId === this.state.userId;
    // a blocked user's messages are hidden in group channels (protocol §17: the client hides them)
    if (!mine && this.state.blocked.has(m.senderId) && this.state.summary(m.channelId)?.kind !== 'direct') return blockedItem(m);
    const meta = h('div', { class: 'meta' }, h('time', { datetime: new Date(m.ts).toISOString() }, clock(m.ts)));
    if (m.editedAt !== undefined && !m.deleted) meta.append(h('span', { class: 'edited' }, '(edited)'));
    if (m.byAdmin) meta.append(h('span', { class: 'by-admin', title: 'made by an admin through the server API' }, 'admin'));
    if (mine) meta.append(h('span', { class: 'state', 'data-state': 'sent' }, '✓ sent'));
    if (readers.length > 0) meta.append(h('span', { class: 'receipt' }, `read by ${readers.join(', ')}`));
    const li = h(
      'li',
      {
        class: 'msg',
        'data-message-id': m.messageId,
        'data-client-msg-id': m.clientMsgId,
        'data-seq': m.seq,
        'data-sender': m.senderId,
        'data-mine': String(mine),
        'data-state': 'sent',
        'data-deleted': String(m.deleted),
        'data-expired': String(m.expired),
        'data-mentions-me': String(m.mentionsMe),
        'data-found': m.messageId === this.found ? 'true' : undefined,
        'aria-label': `${m.senderId}${m.expired ? ', expired message' : m.deleted ? ', deleted message' : `: ${m.body}`}${m.attachments.length > 0 ? ` (${m.attachments.length} ${m.attachments.length === 1 ? 'file' : 'files'})` : ''}${m.mentionsMe ? ' (mentions you)' : ''}`,
      },
      h('div', { class: 'msg-head' }, presenceDot(m.senderId, presence), h('span', { class: 'sender' }, mine ? `${m.senderId} (you)` : m.senderId)),
      m.replyPreview !== undefined && !m.deleted ? quoteElement(m.replyPreview, m.replyTo) : null,
      h('div', { class: 'body' }, ...(m.expired ? ['This message expired.'] : m.deleted ? ['This message was deleted.'] : bodyWithMentions(m.body, m.mentions, m.mentionAll, this.state.userId))),
      m.attachments.length > 0 ? attachmentsElement(this.state.client, m) : null,
      meta,
    );
    const replies = m.thread?.replyCount ?? 0;
    if (replies > 0) {
      li.append(
        h(
          'button',
          {
            type: 'button',
            class: 'thread-open',
            'data-reply-count': replies,
            'aria-label': `Open the thread: ${replies} ${replies === 1 ? 'reply' : 'replies'}`,
            onclick: () => {
              this.hooks.openThread(m);
            },
          },
          `💬 ${replies} ${replies === 1 ? 'reply' : 'replies'}`,
        ),
      );
    }
    if (m.deleted) return li;
    const reactions = this.actions.reactions(m);
    const actions = this.actions.actions(m, mine);
    if (reactions.childElementCount > 0) li.append(reactions);
    li.append(actions);
    return li;
  }

  /** The quote of an unsent reply, from the quoted message held (nothing when it is not). */
  private pendingQuote(replyTo: string): HTMLElement | null {
    const q = this.state.snapshot()?.messages.find((m) => m.messageId === replyTo);
    if (q === undefined) return null;
    return quoteElement(q.deleted ? { senderId: q.senderId, body: '', deleted: true } : { senderId: q.senderId, body: q.body }, replyTo);
  }

  /** One of the user's messages not yet stored: pending, sent, or failed with Retry and Discard. */
  private outgoingItem(o: OutgoingMessage): HTMLElement {
    const me = this.state.userId;
    const words = o.state === 'pending' ? '⏳ pending' : o.state === 'sent' ? '✓ sent' : '⚠ failed';
    const meta = h('div', { class: 'meta' }, h('span', { class: 'state', 'data-state': o.state }, words));
    if (o.state === 'pending') meta.append(h('span', {}, 'kept in this browser until the server stores it'));
    const li = h(
      'li',
      {
        class: 'msg',
        'data-client-msg-id': o.clientMsgId,
        'data-mine': 'true',
        'data-sender': me,
        'data-state': o.state,
        'aria-label': `${me}: ${o.body}, ${o.state}`,
      },
      h('div', { class: 'msg-head' }, h('span', { class: 'sender' }, `${me} (you)`)),
      o.replyTo !== undefined ? this.pendingQuote(o.replyTo) : null,
      h('div', { class: 'body' }, o.body),
      o.attachments !== undefined && o.attachments.length > 0 ? outgoingAttachmentsElement(o.attachments) : null,
      meta,
    );
    if (o.state === 'failed') {
      li.append(
        h('div', { class: 'meta error' }, errorWords(o.error?.code ?? 'internal', o.error?.message ?? 'failed', o.error?.reason)),
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              class: 'retry',
              'aria-label': 'Retry sending this message',
              onclick: () => {
                this.state.client.retry(o.clientMsgId).catch((e: unknown) => {
                  this.hooks.notice(errorText(e));
                });
              },
            },
            'Retry',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'discard',
              'aria-label': 'Discard this message',
              onclick: () => {
                void this.state.client.discard(o.clientMsgId);
              },
            },
            'Discard',
          ),
        ),
      );
    }
    return li;
  }
}

/** A membership change in the timeline: its words and when. */
function systemItem(l: SystemLine): HTMLElement {
  return h(
    'li',
    { class: 'system', 'data-op': l.op, 'data-user': l.userId, 'data-after-seq': l.afterSeq },
    h('span', { class: 'system-text' }, l.text),
    ' ',
    h('time', { datetime: new Date(l.ts).toISOString() }, clock(l.ts)),
  );
}
