/**
 * Report and Block on another user's message (protocol §17): Report opens a small form
 * under the message (why: spam, abuse or other, and an optional note) that sends a flag
 * (`client.moderation.flag`; the same user reporting the same message again gets its first
 * report back, said so); Block blocks the sender (`client.moderation.block`), whose
 * messages are then hidden in group channels. Outcomes go to the channel's notice line.
 */
import type { Message } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { announce, h } from './dom.js';
import { refusalWords } from './words.js';

/** What reporting and blocking need from the view. */
export interface ReportHooks {
  /** Sets the selected channel's notice. */
  notice(text: string): void;
  /** The user blocked someone: redraw what shows their messages. */
  blocked(): void;
}

/** The Report and Block buttons of others' messages. */
export class MessageReports {
  private readonly state: ChatState;
  private readonly hooks: ReportHooks;
  /** The report forms open, by message id: a redraw of the list puts the same form (what is typed in it) back. */
  private readonly open = new Map<string, HTMLElement>();

  constructor(state: ChatState, hooks: ReportHooks) {
    this.state = state;
    this.hooks = hooks;
  }

  /** Report and Block for message `m` (another user's). */
  buttons(m: Message): HTMLElement[] {
    const report = h('button', { type: 'button', class: 'report', 'aria-label': `Report ${m.senderId}’s message` }, 'Report');
    report.addEventListener('click', () => {
      const form = this.form(m, report);
      this.open.set(m.messageId, form);
      report.replaceWith(form);
    });
    const open = this.open.get(m.messageId);
    const block = h(
      'button',
      {
        type: 'button',
        class: 'block',
        'aria-label': `Block ${m.senderId}`,
        onclick: () => {
          this.block(m.senderId);
        },
      },
      'Block',
    );
    return [open ?? report, block];
  }

  /** The report form that takes the Report button's place until sent or cancelled. */
  private form(m: Message, button: HTMLElement): HTMLElement {
    const reason = h(
      'select',
      { class: 'report-reason', 'aria-label': 'Why you report this message' },
      h('option', { value: 'spam' }, 'spam'),
      h('option', { value: 'abuse' }, 'abuse'),
      h('option', { value: 'other' }, 'other'),
    );
    const note = h('input', { type: 'text', class: 'report-note', maxlength: 1000, placeholder: 'note (optional)', 'aria-label': 'A note for the moderators' });
    const form = h(
      'form',
      { class: 'report-form', 'aria-label': 'Report this message' },
      reason,
      note,
      h('button', { type: 'submit', class: 'report-send' }, 'Send report'),
      h(
        'button',
        {
          type: 'button',
          class: 'report-cancel',
          onclick: () => {
            this.open.delete(m.messageId);
            form.replaceWith(button);
          },
        },
        'Cancel',
      ),
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const why = reason.value === 'abuse' ? 'abuse' : reason.value === 'other' ? 'other' : 'spam';
      const text = note.value.trim();
      this.state.client.moderation.flag(m.messageId, why, text === '' ? {} : { note: text }).then(
        (flag) => {
          this.open.delete(m.messageId);
          if (this.state.closed) return;
          const said = flag.created ? `You reported ${m.senderId}’s message (${why}); the moderators were told.` : `You had reported this message already.`;
          form.replaceWith(h('span', { class: 'reported', 'data-flag-id': flag.flagId }, 'Reported'));
          this.hooks.notice(said);
          announce(said);
        },
        (e: unknown) => {
          if (!this.state.closed) this.hooks.notice(refusalWords('The report was not sent', e));
        },
      );
    });
    return form;
  }

  private block(userId: string): void {
    this.state.client.moderation.block(userId).then(
      () => {
        if (this.state.closed) return;
        this.state.blocked.add(userId);
        const said = `You block ${userId}: their messages are hidden.`;
        this.hooks.notice(said);
        announce(said);
        this.hooks.blocked();
      },
      (e: unknown) => {
        if (!this.state.closed) this.hooks.notice(refusalWords(`${userId} was not blocked`, e));
      },
    );
  }
}
