/**
 * The per-channel notification menu in the pane's head (protocol §16.3): `Notify` with
 * "All messages", "Mentions only" and "Nothing", and a snooze ("Snooze 1 h", "Snooze 8 h",
 * or "End snooze" with the time it ends while snoozed). Each change is
 * `client.setNotifySettings`; the menu shows the channel list's `notify` and `snoozeUntil`,
 * so a change made on another session (`CHANNEL_SETTINGS`) shows here at once; a snooze
 * that ends by the clock goes from the menu when it ends.
 */
import type { NotifyLevel } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { banner, h, until } from './dom.js';
import { ChatdError } from '../../clients/typescript/src/index.js';

const LEVELS: readonly (readonly [NotifyLevel, string])[] = [
  ['all', 'All messages'],
  ['mentions', 'Mentions only'],
  ['none', 'Nothing'],
];

const HOUR_MS = 3_600_000;

/** The notification menu of the selected channel. */
export class NotifyMenu {
  private readonly state: ChatState;
  private el: HTMLElement | undefined;
  /** What the menu last showed, so a redraw that changes nothing keeps the focus. */
  private shown = '';
  /** Redraws the menu when the shown snooze ends. */
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(state: ChatState) {
    this.state = state;
  }

  /** Makes the menu of a newly built pane. */
  element(): HTMLElement {
    this.el = h('div', { class: 'notify-menu', id: 'notify-menu' });
    this.shown = '';
    this.render();
    return this.el;
  }

  /** Shows the selected channel's settings (called when the channel list changed). */
  render(): void {
    const el = this.el;
    const id = this.state.current;
    const s = id === undefined ? undefined : this.state.summary(id);
    if (el === undefined || id === undefined || s === undefined) {
      el?.replaceChildren();
      this.shown = '';
      clearTimeout(this.timer);
      this.timer = undefined;
      return;
    }
    const snoozeEnd = s.snoozeUntil !== null && s.snoozeUntil > Date.now() ? s.snoozeUntil : undefined;
    const snoozed = snoozeEnd !== undefined;
    const key = JSON.stringify([id, s.notify, snoozed ? s.snoozeUntil : null]);
    if (key === this.shown) return;
    this.shown = key;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (snoozeEnd !== undefined) {
      // the snooze ends by the clock: show the snooze buttons again then
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.render();
      }, Math.min(snoozeEnd - Date.now() + 50, 2 ** 31 - 1));
    }
    el.dataset.notify = s.notify;
    el.dataset.snoozed = String(snoozed);
    const select = h(
      'select',
      {
        id: 'notify-level',
        'aria-label': 'Notifications for this channel',
        onchange: () => {
          this.set(id, { notify: select.value });
        },
      },
      ...LEVELS.map(([v, words]) => h('option', { value: v, selected: v === s.notify }, words)),
    );
    select.value = s.notify;
    const snooze = snoozeEnd !== undefined
      ? [
          h('span', { class: 'snoozed', id: 'snoozed' }, `Snoozed until ${until(snoozeEnd)}`),
          h('button', { type: 'button', id: 'snooze-end', onclick: () => { this.set(id, { snoozeUntil: null }); } }, 'End snooze'),
        ]
      : [1, 8].map((n) =>
          h('button', { type: 'button', class: 'snooze', id: `snooze-${n}h`, onclick: () => { this.set(id, { snoozeUntil: Date.now() + n * HOUR_MS }); } }, `Snooze ${n} h`),
        );
    el.replaceChildren(h('label', { for: 'notify-level' }, 'Notify'), select, ...snooze);
  }

  private set(channelId: string, change: { notify?: string; snoozeUntil?: number | null }): void {
    this.state.client.setNotifySettings(channelId, change).then(
      () => {
        this.render();
      },
      (e: unknown) => {
        banner(`Notification settings not changed: ${e instanceof ChatdError ? e.message : String(e)}`);
        this.shown = '';
        this.render();
      },
    );
  }
}
