/**
 * A channel's posting rules, for its owner (protocol §17), under the member list: who
 * posts (anyone, or only moderators: an announcement channel), slow mode (off, or a
 * wait between a member's messages) and retention (§19: how long its messages are kept;
 * the server's setting, forever, a choice, or a number of seconds), saved with
 * `client.moderation.setChannelSettings`. Each picker starts at "keep as it is" (or at
 * what the client knows from HELLO and CHANNEL_UPDATED), and only what is picked is
 * sent; the answer says the rules now in force. The retention in force is shown under
 * the form and follows CHANNEL_UPDATED.
 */
import type { ChannelModeration } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { announce, h } from './dom.js';
import { refusalWords } from './words.js';

/** Slow mode's choices, in ms (0: off). */
const SLOW: readonly { ms: number; label: string }[] = [
  { ms: 0, label: 'off' },
  { ms: 10_000, label: '10 s' },
  { ms: 30_000, label: '30 s' },
  { ms: 60_000, label: '1 min' },
  { ms: 300_000, label: '5 min' },
];

/** Retention's choices, in seconds (0: forever). */
const RETENTION: readonly { secs: number; label: string }[] = [
  { secs: 0, label: 'forever' },
  { secs: 3600, label: '1 hour' },
  { secs: 86_400, label: '1 day' },
  { secs: 604_800, label: '7 days' },
  { secs: 2_592_000, label: '30 days' },
  { secs: 31_536_000, label: '1 year' },
];

/** The most seconds a channel's retention may be (100 years, §19). */
const MAX_RETENTION_SECS = 3_155_760_000;

/** The rules form of the member column. */
export class ChannelRulesForm {
  private readonly state: ChatState;
  private el: HTMLElement | undefined;
  private who: HTMLSelectElement | undefined;
  private slow: HTMLSelectElement | undefined;
  private retention: HTMLSelectElement | undefined;
  private retentionSecs: HTMLInputElement | undefined;
  private retentionNow: HTMLElement | undefined;
  private statusEl: HTMLElement | undefined;
  /** The channel the form was last drawn for: another one resets the pickers. */
  private drawnFor: string | undefined;

  constructor(state: ChatState) {
    this.state = state;
  }

  /** Makes the section (hidden until `show(true)`). */
  element(): HTMLElement {
    this.who = h(
      'select',
      { id: 'rules-posting', 'aria-label': 'Who may post' },
      h('option', { value: '' }, 'who posts: keep as it is'),
      h('option', { value: 'member' }, 'everyone posts'),
      h('option', { value: 'moderator' }, 'only moderators post'),
    );
    this.slow = h(
      'select',
      { id: 'rules-slow', 'aria-label': 'Slow mode' },
      h('option', { value: '' }, 'slow mode: keep as it is'),
      ...SLOW.map((s) => h('option', { value: s.ms }, `slow mode ${s.label}`)),
    );
    this.retention = h(
      'select',
      { id: 'rules-retention', 'aria-label': 'Keep messages' },
      h('option', { value: '' }, 'keep messages: as it is'),
      h('option', { value: 'server' }, "keep messages: the server's setting"),
      ...RETENTION.map((r) => h('option', { value: r.secs }, `keep messages ${r.label}`)),
      h('option', { value: 'secs' }, 'keep messages for … seconds'),
    );
    this.retentionSecs = h('input', { id: 'rules-retention-secs', type: 'number', min: 1, max: MAX_RETENTION_SECS, step: 1, 'aria-label': 'Keep messages for how many seconds', hidden: true });
    const secs = this.retentionSecs;
    this.retention.addEventListener('change', () => {
      secs.hidden = this.retention?.value !== 'secs';
    });
    this.statusEl = h('p', { class: 'hint', id: 'rules-status', role: 'status' });
    this.retentionNow = h('p', { class: 'hint', id: 'rules-retention-now' });
    const form = h(
      'form',
      { class: 'rules-form', id: 'rules-form', 'aria-label': 'Channel rules' },
      this.who,
      this.slow,
      this.retention,
      this.retentionSecs,
      h('button', { type: 'submit', id: 'rules-save' }, 'Save rules'),
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.save();
    });
    this.el = h('div', { class: 'rules', id: 'rules', hidden: true }, h('h3', {}, 'Channel rules'), form, this.statusEl, this.retentionNow);
    return this.el;
  }

  /** Shows the form for an owner of the selected group channel; another channel starts it anew. */
  show(owner: boolean): void {
    if (this.el === undefined) return;
    this.el.hidden = !owner;
    const id = this.state.current;
    const known = this.state.snapshot()?.moderation;
    this.showRetention();
    if (id === this.drawnFor) return;
    this.drawnFor = id;
    if (this.retention !== undefined) this.retention.value = '';
    if (this.retentionSecs !== undefined) {
      this.retentionSecs.value = '';
      this.retentionSecs.hidden = true;
    }
    if (this.who !== undefined) this.who.value = known?.postingRole === 'moderator' || known?.postingRole === 'member' ? known.postingRole : '';
    if (this.slow !== undefined) this.slow.value = known?.slowModeMs !== undefined && SLOW.some((s) => s.ms === known.slowModeMs) ? String(known.slowModeMs) : '';
    if (this.statusEl !== undefined) this.statusEl.textContent = known === undefined ? '' : rulesWords(known);
  }

  /**
   * Shows the retention in force under the form, as the client knows it (HELLO,
   * CHANNEL_UPDATED: another owner's change or the admin's follow); nothing while the
   * server has stated no rules (an older server).
   */
  showRetention(): void {
    const known = this.state.snapshot()?.moderation;
    if (this.retentionNow !== undefined) this.retentionNow.textContent = known === undefined || known.postingRole === undefined ? '' : retentionWords(known.retentionSecs);
  }

  private save(): void {
    const id = this.state.current;
    if (id === undefined || this.who === undefined || this.slow === undefined) return;
    const settings: { postingRole?: 'member' | 'moderator'; slowModeMs?: number; retentionSecs?: number | null } = {};
    if (this.who.value === 'member' || this.who.value === 'moderator') settings.postingRole = this.who.value;
    if (this.slow.value !== '') settings.slowModeMs = Number(this.slow.value);
    const keep = this.retention?.value ?? '';
    if (keep === 'server') settings.retentionSecs = null;
    else if (keep === 'secs') {
      const n = Number(this.retentionSecs?.value ?? '');
      if (this.retentionSecs?.value === '' || !Number.isInteger(n) || n < 1 || n > MAX_RETENTION_SECS) {
        this.say(`Give a whole number of seconds from 1 to ${MAX_RETENTION_SECS}.`);
        return;
      }
      settings.retentionSecs = n;
    } else if (keep !== '') settings.retentionSecs = Number(keep);
    if (settings.postingRole === undefined && settings.slowModeMs === undefined && settings.retentionSecs === undefined) {
      this.say('Pick who posts, a slow mode or how long messages are kept first.');
      return;
    }
    this.say('Saving…');
    this.state.client.moderation.setChannelSettings(id, settings).then(
      (rules) => {
        if (this.state.closed || this.state.current !== id) return;
        const said = `${rulesWords(rules)} ${retentionWords(rules.retentionSecs)}`;
        this.say(said);
        if (this.retentionNow !== undefined) this.retentionNow.textContent = retentionWords(rules.retentionSecs);
        announce(said);
      },
      (e: unknown) => {
        if (!this.state.closed && this.state.current === id) this.say(refusalWords('The rules were not saved', e));
      },
    );
  }

  private say(text: string): void {
    if (this.statusEl !== undefined) this.statusEl.textContent = text;
  }
}

/** The rules in force, in words ("Now: only moderators post; slow mode 30 s."). */
function rulesWords(r: Pick<ChannelModeration, 'postingRole' | 'slowModeMs'>): string {
  if (r.postingRole === undefined && r.slowModeMs === undefined) return '';
  const who = r.postingRole === 'moderator' ? 'only moderators post' : r.postingRole === 'member' ? 'everyone posts' : 'who posts not known';
  const slow = r.slowModeMs === undefined ? 'slow mode not known' : r.slowModeMs === 0 ? 'no slow mode' : `slow mode ${SLOW.find((s) => s.ms === r.slowModeMs)?.label ?? `${r.slowModeMs / 1000} s`}`;
  return `Now: ${who}; ${slow}.`;
}

/** The channel's retention in words ("Messages are kept 1 day.", §19). */
export function retentionWords(secs: number | undefined): string {
  if (secs === undefined) return "Messages are kept as the server's retention says.";
  if (secs === 0) return 'Messages are kept forever.';
  const named = RETENTION.find((r) => r.secs === secs);
  return `Messages are kept ${named?.label ?? durationWords(secs)}, then expire.`;
}

function durationWords(secs: number): string {
  if (secs % 86_400 === 0) return `${secs / 86_400} ${secs === 86_400 ? 'day' : 'days'}`;
  if (secs % 3600 === 0) return `${secs / 3600} ${secs === 3600 ? 'hour' : 'hours'}`;
  if (secs % 60 === 0) return `${secs / 60} min`;
  return `${secs} s`;
}
