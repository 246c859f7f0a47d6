/**
 * Reactions, edits and deletions (the version 1.1 operations on a stored message): the
 * reaction buttons and the actions row under each message, and the operations they run.
 * An operation the server answers `unknown_type` to is remembered as unsupported, its
 * outbox record discarded, and its buttons go.
 */
import { uuidv7, type Message } from '../../clients/typescript/src/index.js';
import { deleteControl } from './chat-delete.js';
import { ModeratorMenu } from './chat-moderation.js';
import { MessageReports } from './chat-report.js';
import type { ChatState, V11Op } from './chat-state.js';
import { h } from './dom.js';
import { errorText, isUnknownType, refusalWords } from './words.js';

/** The reactions offered on every message. */
const QUICK_REACTIONS: readonly { emoji: string; name: string }[] = [
  { emoji: '👍', name: 'thumbs up' },
  { emoji: '❤️', name: 'heart' },
  { emoji: '😂', name: 'laughing' },
];

/** What the actions need from the view. */
export interface ActionHooks {
  /** Sets the selected channel's notice (empty text clears it). */
  notice(text: string): void;
  /** Redraws the message list (an operation turned out unsupported: its buttons go). */
  redraw(): void;
  /** Puts this message into the composer to edit it. */
  startEdit(m: Message): void;
  /** Makes the composer's next send a reply quoting this message. */
  startReply(m: Message): void;
  /** Opens the thread of this root in the thread panel. */
  openThread(m: Message): void;
  /** The user blocked someone (Block on a message): redraw what shows their messages. */
  blocked(): void;
}

/** The reaction and action buttons of stored messages, and the operations behind them. */
export class MessageActions {
  private readonly state: ChatState;
  private readonly hooks: ActionHooks;
  private readonly reports: MessageReports;
  private readonly menu: ModeratorMenu;

  constructor(state: ChatState, hooks: ActionHooks) {
    this.state = state;
    this.hooks = hooks;
    this.reports = new MessageReports(state, hooks);
    this.menu = new ModeratorMenu(state, {
      run: (_channelId, p, done, refused) => {
        p.then(
          () => {
            if (!this.state.closed) this.hooks.notice(done);
          },
          (e: unknown) => {
            if (!this.state.closed) this.hooks.notice(refusalWords(refused, e));
          },
        );
      },
      blocksChanged: () => {
        this.hooks.blocked();
      },
    });
  }

  /** The reactions on `m`, one button each (pressed when one is the user's: a click takes it back). */
  reactions(m: Message): HTMLElement {
    const reactions = h('div', { class: 'reactions' });
    for (const r of m.reactions) {
      reactions.append(
        h(
          'button',
          {
            type: 'button',
            class: 'reaction',
            'data-emoji': r.emoji,
            'aria-pressed': String(r.me),
            'aria-label': `${r.emoji} ${r.count}${r.me ? ', yours: click to remove' : ': click to add yours'}`,
            onclick: () => {
              this.react(m.channelId, m.messageId, r.emoji, r.me ? 'remove' : 'add');
            },
          },
          `${r.emoji} ${r.count}`,
        ),
      );
    }
    return reactions;
  }

  /**
   * The actions row under `m`: quick reactions the user has not made, Edit on the user's
   * own messages, and Delete on them and, for a moderator or owner of the channel, on
   * anyone's.
   */
  actions(m: Message, mine: boolean): HTMLElement {
    const channelId = m.channelId;
    const actions = h('div', { class: 'actions' });
    if (this.state.supports('MSG_REACT')) {
      for (const q of QUICK_REACTIONS) {
        if (m.reactions.some((r) => r.emoji === q.emoji && r.me)) continue;
        actions.append(
          h(
            'button',
            {
              type: 'button',
              class: 'react',
              'data-emoji': q.emoji,
              'aria-label': `React with ${q.name}`,
              onclick: () => {
                this.react(channelId, m.messageId, q.emoji, 'add');
              },
            },
            q.emoji,
          ),
        );
      }
    }
    // replies and threads (protocol §14): quote it; open its thread (a reply in a thread starts none)
    actions.append(
      h(
        'button',
        {
          type: 'button',
          class: 'reply',
          'aria-label': `Reply to ${m.senderId}’s message`,
          onclick: () => {
            this.hooks.startReply(m);
          },
        },
        'Reply',
      ),
    );
    if (m.threadId === undefined) {
      actions.append(
        h(
          'button',
          {
            type: 'button',
            class: 'thread',
            'aria-label': 'Reply in a thread',
            onclick: () => {
              this.hooks.openThread(m);
            },
          },
          'Thread',
        ),
      );
    }
    if (mine && this.state.supports('MSG_EDIT')) {
      actions.append(
        h(
          'button',
          {
            type: 'button',
            class: 'edit',
            'aria-label': 'Edit this message',
            onclick: () => {
              this.hooks.startEdit(m);
            },
          },
          'Edit',
        ),
      );
    }
    // others' messages too for a moderator or owner of the channel (protocol §13.1, §17)
    if (this.state.client.mayDelete(m) && this.state.supports('MSG_DELETE')) {
      actions.append(
        deleteControl(m.messageId, mine ? 'Delete this message' : `Delete ${m.senderId}’s message (as moderator)`, !mine, () => {
          this.remove(channelId, m.messageId);
        }),
      );
    }
    // moderation (protocol §17): an owner's or moderator's Mute and Ban of the sender (as
    // the member list offers them); anyone's Report of another user's message and Block of its sender
    if (!mine) actions.append(...this.moderation(m), ...this.reports.buttons(m));
    return actions;
  }

  /** Mute and Ban of `m`'s sender, when the user's role allows them (its member list tells the sender's role). */
  private moderation(m: Message): HTMLElement[] {
    const s = this.state.summary(m.channelId);
    if (s === undefined || s.kind === 'direct') return [];
    const sender = this.state.client.memberList(m.channelId).getSnapshot().members.find((x) => x.userId === m.senderId);
    if (sender === undefined || !ModeratorMenu.mayModerate(s.role, sender, this.state.userId)) return [];
    return this.menu.moderatorControls(m.channelId, sender, false);
  }

  /** Adds or removes the user's reaction. */
  react(channelId: string, messageId: string, emoji: string, op: 'add' | 'remove'): void {
    this.v11('MSG_REACT', (clientMsgId) => this.state.client.react(channelId, messageId, emoji, op, { clientMsgId }));
  }

  /** Deletes a message (the user's, or anyone's as a moderator or owner). */
  remove(channelId: string, messageId: string): void {
    this.v11('MSG_DELETE', (clientMsgId) => this.state.client.deleteMessage(channelId, messageId, { clientMsgId }));
  }

  /** Replaces the body of the user's message. */
  edit(channelId: string, messageId: string, body: string): void {
    this.v11('MSG_EDIT', (clientMsgId) => this.state.client.edit(channelId, messageId, body, { clientMsgId }));
  }

  /** A version 1.1 operation: its ERROR `unknown_type` marks it unsupported, and its outbox record is dropped. */
  private v11(op: V11Op, run: (clientMsgId: string) => Promise<unknown>): void {
    const clientMsgId = uuidv7();
    run(clientMsgId).then(
      () => {
        this.hooks.notice('');
      },
      (e: unknown) => {
        if (isUnknownType(e)) {
          this.state.localUnsupported.add(op);
          void this.state.client.discard(clientMsgId);
          this.hooks.notice('');
          this.hooks.redraw();
        } else {
          this.hooks.notice(errorText(e));
        }
        document.body.dataset.unsupported = this.state.unsupported().join(' ');
      },
    );
  }
}
