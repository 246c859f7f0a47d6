/**
 * A channel's posting rules, for its owner (protocol §17), under the member list: who
 * posts (anyone, or only moderators: an announcement channel) and slow mode (off, or a
 * wait between a member's messages), saved with `client.moderation.setChannelSettings`.
 * No user route reads the rules, so each picker starts at "keep as it is" (or at what the
 * client learned: the owner's own last save), and only what is picked is sent; the answer
 * says the rules now in force.
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

/** The rules form of the member column. */
export class ChannelRulesForm {
  private readonly state: ChatState;
  private el: HTMLElement | undefined;
  private who: HTMLSelectElement | undefined;
  private slow: HTMLSelectElement | undefined;
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
    this.statusEl = h('p', { class: 'hint', id: 'rules-status', role: 'status' });
    const form = h('form', { class: 'rules-form', id: 'rules-form', 'aria-label': 'Channel rules' }, this.who, this.slow, h('button', { type: 'submit', id: 'rules-save' }, 'Save rules'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.save();
    });
    this.el = h('div', { class: 'rules', id: 'rules', hidden: true }, h('h3', {}, 'Channel rules'), form, this.statusEl);
    return this.el;
  }

  /** Shows the form for an owner of the selected group channel; another channel starts it anew. */
  show(owner: boolean): void {
    if (this.el === undefined) return;
    this.el.hidden = !owner;
    const id = this.state.current;
    if (id === this.drawnFor) return;
    this.drawnFor = id;
    const known = this.state.snapshot()?.moderation;
    if (this.who !== undefined) this.who.value = known?.postingRole === 'moderator' || known?.postingRole === 'member' ? known.postingRole : '';
    if (this.slow !== undefined) this.slow.value = known?.slowModeMs !== undefined && SLOW.some((s) => s.ms === known.slowModeMs) ? String(known.slowModeMs) : '';
    if (this.statusEl !== undefined) this.statusEl.textContent = known === undefined ? '' : rulesWords(known);
  }

  private save(): void {
    const id = this.state.current;
    if (id === undefined || this.who === undefined || this.slow === undefined) return;
    const settings: { postingRole?: 'member' | 'moderator'; slowModeMs?: number } = {};
    if (this.who.value === 'member' || this.who.value === 'moderator') settings.postingRole = this.who.value;
    if (this.slow.value !== '') settings.slowModeMs = Number(this.slow.value);
    if (settings.postingRole === undefined && settings.slowModeMs === undefined) {
      this.say('Pick who posts or a slow mode first.');
      return;
    }
    this.say('Saving…');
    this.state.client.moderation.setChannelSettings(id, settings).then(
      (rules) => {
        if (this.state.closed || this.state.current !== id) return;
        const said = rulesWords(rules);
        this.say(said);
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
