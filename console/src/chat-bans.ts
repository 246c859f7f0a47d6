/**
 * The bans of the selected channel, under its member list, for an owner or moderator
 * (protocol §17): "Show bans" reads the first page (`client.moderation.bans`, in byte
 * order of the user id), "More bans" the next ones (keyset paging on the last user id),
 * and each ban has Lift (`liftBan`). The list is read again after a ban or a lift made
 * here; a refusal is said in the server's words.
 */
import type { Ban } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { announce, clock, h } from './dom.js';
import { refusalWords } from './words.js';

/** Bans read per page. */
const PAGE = 50;

/** The bans section of the member column. */
export class BansList {
  private readonly state: ChatState;
  private el: HTMLElement | undefined;
  private listEl: HTMLElement | undefined;
  private moreBtn: HTMLButtonElement | undefined;
  private statusEl: HTMLElement | undefined;
  /** The channel whose bans are shown, the bans read so far, and whether more follow. */
  private shown: { channelId: string; bans: Ban[]; hasMore: boolean } | undefined;

  constructor(state: ChatState) {
    this.state = state;
  }

  /** Makes the section (hidden until `show(true)`). */
  element(): HTMLElement {
    this.listEl = h('ul', { class: 'ban-list', id: 'ban-list', 'aria-label': 'Banned users' });
    this.statusEl = h('p', { class: 'hint', id: 'bans-status', role: 'status' });
    this.moreBtn = h(
      'button',
      {
        type: 'button',
        id: 'bans-more',
        hidden: true,
        onclick: () => {
          void this.read(false);
        },
      },
      'More bans',
    );
    const showBtn = h(
      'button',
      {
        type: 'button',
        id: 'bans-show',
        onclick: () => {
          void this.read(true);
        },
      },
      'Show bans',
    );
    this.el = h('div', { class: 'bans', id: 'bans', hidden: true }, h('h3', {}, 'Bans'), showBtn, this.listEl, this.moreBtn, this.statusEl);
    return this.el;
  }

  /** Shows or hides the section (the user may moderate the selected channel); another channel forgets the list. */
  show(allowed: boolean): void {
    if (this.el === undefined) return;
    this.el.hidden = !allowed;
    if (this.shown !== undefined && this.shown.channelId !== this.state.current) {
      this.shown = undefined;
      this.draw();
      if (this.statusEl !== undefined) this.statusEl.textContent = '';
    }
  }

  /** A ban or lift was made here: read the list again when it is shown. */
  changed(channelId: string): void {
    if (this.shown?.channelId === channelId) void this.read(true);
  }

  /** Reads the first page (`fresh`) or the next one. */
  private async read(fresh: boolean): Promise<void> {
    const id = this.state.current;
    if (id === undefined) return;
    const prev = fresh || this.shown?.channelId !== id ? undefined : this.shown;
    const after = prev?.bans[prev.bans.length - 1]?.userId;
    this.say('Reading bans…');
    try {
      const page = await this.state.client.moderation.bans(id, after === undefined ? { limit: PAGE } : { after, limit: PAGE });
      if (this.state.closed || this.state.current !== id) return;
      this.shown = { channelId: id, bans: [...(prev?.bans ?? []), ...page.bans], hasMore: page.hasMore };
      this.draw();
      this.say(this.shown.bans.length === 0 ? 'Nobody is banned.' : `${this.shown.bans.length} banned${page.hasMore ? ' (more follow)' : ''}.`);
    } catch (e) {
      if (!this.state.closed) this.say(refusalWords('The bans could not be read', e));
    }
  }

  private draw(): void {
    if (this.listEl === undefined || this.moreBtn === undefined) return;
    const s = this.shown;
    this.moreBtn.hidden = s?.hasMore !== true;
    this.listEl.replaceChildren(...(s?.bans ?? []).map((b) => this.row(s?.channelId ?? '', b)));
  }

  private row(channelId: string, b: Ban): HTMLElement {
    const by = b.actorId === undefined ? 'by the admin' : `by ${b.actorId}`;
    const lift = (): void => {
      this.say(`Lifting the ban of ${b.userId}…`);
      this.state.client.moderation.liftBan(channelId, b.userId).then(
        () => {
          if (this.state.closed) return;
          announce(`The ban of ${b.userId} was lifted.`);
          void this.read(true).then(() => {
            this.say(`The ban of ${b.userId} was lifted.`);
          });
        },
        (e: unknown) => {
          if (!this.state.closed) this.say(refusalWords(`The ban of ${b.userId} was not lifted`, e));
        },
      );
    };
    return h(
      'li',
      { class: 'ban', 'data-user': b.userId },
      h('span', { class: 'member-name' }, b.userId),
      ' ',
      h('span', { class: 'hint' }, `banned ${clock(b.bannedAt)} ${by}`),
      h('button', { type: 'button', class: 'ban-lift', 'aria-label': `Lift the ban of ${b.userId}`, onclick: lift }, 'Lift'),
    );
  }

  private say(text: string): void {
    if (this.statusEl !== undefined) this.statusEl.textContent = text;
  }
}
