/**
 * The composer's state line (protocol §17), from the selected channel's
 * `snapshot.moderation` and the user's role: "You are muted until 14:05" (the composer
 * off until then), "Only moderators post in this channel" (an announcement channel, for a
 * member: from HELLO, the server's `CHANNEL_UPDATED` when an owner changes it, or a
 * `read_only` refusal), or slow mode's countdown "Slow mode: you can send again in 12 s" (the
 * composer stays on: a message sent now waits in the outbox and goes when allowed). A
 * second timer moves the countdown while one is shown; the client's snapshot changes by
 * itself when a mute or a wait ends.
 */
import type { ChannelModeration } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { h, until } from './dom.js';

/** What the line shows now. */
type Posting =
  | { readonly kind: 'open' }
  | { readonly kind: 'muted'; readonly until: number }
  | { readonly kind: 'read_only' }
  | { readonly kind: 'slow'; readonly at: number };

/** The state line above the composer, and the composer's on and off. */
export class PostingState {
  private readonly state: ChatState;
  private el: HTMLElement | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(state: ChatState) {
    this.state = state;
  }

  /** Makes the line of a newly built pane. */
  element(): HTMLElement {
    this.el = h('div', { class: 'posting-state', id: 'posting-state', 'data-state': 'open', 'aria-live': 'polite', hidden: true });
    this.render();
    return this.el;
  }

  /** Shows the selected channel's state; turns the composer off while muted or read-only. */
  render(): void {
    const el = this.el;
    const snap = this.state.snapshot();
    if (el === undefined) return;
    const p = snap === undefined || snap.status === 'removed' ? ({ kind: 'open' } as const) : this.posting(snap.channelId, snap.moderation);
    el.dataset.state = p.kind;
    el.hidden = p.kind === 'open';
    el.textContent = words(p);
    // (read-only leaves the composer on: a message sent is refused, and said so, if it still holds)
    const off = p.kind === 'muted';
    // a removed channel's composer is turned off by the message list; here only moderation's
    if (snap !== undefined && snap.status !== 'removed') {
      for (const id of ['composer', 'send']) {
        const c = document.getElementById(id);
        if (c instanceof HTMLTextAreaElement || c instanceof HTMLButtonElement) c.disabled = off;
      }
    }
    if (p.kind === 'slow' && this.timer === undefined) {
      this.timer = setInterval(() => {
        this.render();
      }, 1000);
    } else if (p.kind !== 'slow' && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** The view is closing: no more countdown. */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private posting(channelId: string, m: ChannelModeration): Posting {
    const now = Date.now();
    if (m.mutedUntil !== undefined && m.mutedUntil > now) return { kind: 'muted', until: m.mutedUntil };
    const role = this.state.summary(channelId)?.role ?? 'member';
    if (m.postingRole === 'moderator' && role === 'member') return { kind: 'read_only' };
    if (m.nextSendAt !== undefined && m.nextSendAt > now) return { kind: 'slow', at: m.nextSendAt };
    return { kind: 'open' };
  }
}

function words(p: Posting): string {
  switch (p.kind) {
    case 'open':
      return '';
    case 'muted':
      return `You are muted in this channel until ${until(p.until)}; you can read but not send.`;
    case 'read_only':
      return 'Only moderators post in this channel; you can read and react.';
    case 'slow': {
      const s = Math.max(1, Math.ceil((p.at - Date.now()) / 1000));
      return `Slow mode: you can send again in ${s} s (a message sent now waits until then).`;
    }
  }
}
