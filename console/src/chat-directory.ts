/**
 * "Browse channels": the directory of public channels under the channel list (a search
 * box, each channel with its name and member count, Join, or Open for one the user is in,
 * and More while the server has more), and the Leave button of the open channel (not for
 * a direct channel, which cannot be left). It uses the client's `directory`, `join` and
 * `leave` (`GET /v1/directory`, `PUT` and `DELETE /v1/me/channels/{channelId}`); the
 * client lists a joined channel before its join resolves and drops a left one at once, so
 * the sidebar follows at once.
 */
import { ChatdError, type DirectoryChannel } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { announce, h } from './dom.js';

/** What the directory needs from the view. */
export interface DirectoryHooks {
  /** Selects (opens) a channel the user is in; `undefined`: the first one, or none. */
  select(id: string | undefined): void;
  /** Sets the selected channel's notice. */
  notice(text: string): void;
}

/** Channels asked for per page. */
const PAGE = 50;
/** How long typing pauses before the search is made (ms). */
const SEARCH_DELAY_MS = 250;

/** The directory panel and the Leave button. */
export class ChannelDirectory {
  private readonly state: ChatState;
  private readonly hooks: DirectoryHooks;
  private panel: HTMLElement | undefined;
  private input: HTMLInputElement | undefined;
  private toggleBtn: HTMLButtonElement | undefined;
  /** The channels found for the current search, and whether the server has more. */
  private found: DirectoryChannel[] = [];
  private hasMore = false;
  private status = '';
  /** The search in flight (a newer one aborts it), and the one waiting for typing to pause. */
  private reading: AbortController | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Channels being joined now: `channelAdded` for them is the user's own doing. */
  private readonly joining = new Set<string>();

  constructor(state: ChatState, hooks: DirectoryHooks) {
    this.state = state;
    this.hooks = hooks;
  }

  /** Makes the "Browse channels" part of the sidebar (its panel hidden until opened). */
  element(): HTMLElement {
    const toggle = (): void => {
      this.toggle();
    };
    this.toggleBtn = h(
      'button',
      { type: 'button', class: 'browse', id: 'browse-channels', 'aria-expanded': 'false', 'aria-controls': 'directory-panel', onclick: toggle },
      'Browse channels',
    );
    this.input = h('input', { type: 'search', id: 'directory-q', placeholder: 'Search public channels', 'aria-label': 'Search public channels', autocomplete: 'off' });
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.search();
      }, SEARCH_DELAY_MS);
    });
    this.input.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Enter') return;
      ev.preventDefault();
      clearTimeout(this.timer);
      this.search();
    });
    this.panel = h(
      'div',
      { class: 'directory', id: 'directory-panel', hidden: true },
      this.input,
      h('ul', { class: 'directory-list', id: 'directory', 'aria-label': 'Public channels' }),
      h('p', { class: 'hint', id: 'directory-status', role: 'status' }),
    );
    return h('div', { class: 'browse-part' }, this.toggleBtn, this.panel);
  }

  /** Whether a `channelAdded` for `id` comes from the user's own join. */
  isJoining(id: string): boolean {
    return this.joining.has(id);
  }

  /** The Leave button of the open channel `id`; none for a direct channel or one the user is not in. */
  leaveButton(id: string): HTMLElement | null {
    const s = this.state.client.channelList.getSnapshot().find((c) => c.channelId === id);
    if (s === undefined || s.kind === 'direct') return null;
    const leave = (): void => {
      this.leave(id);
    };
    return h('button', { type: 'button', class: 'leave', id: 'leave-channel', 'aria-label': `Leave channel ${id}`, onclick: leave }, 'Leave');
  }

  /** Redraws the list (the user's channels changed: Join becomes Open, and back). */
  render(): void {
    const ul = document.getElementById('directory');
    if (ul === null || this.panel?.hidden !== false) return;
    const mine = new Set(this.state.client.channelIds());
    ul.replaceChildren(...this.found.map((c) => this.row(c, mine.has(c.channelId))));
    if (this.hasMore) {
      const more = (): void => {
        this.search(true);
      };
      ul.append(h('li', {}, h('button', { type: 'button', class: 'more', id: 'directory-more', onclick: more }, 'More')));
    }
    const status = document.getElementById('directory-status');
    if (status !== null) status.textContent = this.status;
  }

  /** Shows or hides the panel; opening it lists the channels at once. */
  private toggle(): void {
    if (this.panel === undefined || this.toggleBtn === undefined) return;
    this.panel.hidden = !this.panel.hidden;
    this.toggleBtn.setAttribute('aria-expanded', String(!this.panel.hidden));
    if (!this.panel.hidden) {
      this.search();
      this.input?.focus();
    }
  }

  /** One channel: its name (or id), member count, and Join or Open. */
  private row(c: DirectoryChannel, member: boolean): HTMLElement {
    const label = c.name ?? c.channelId;
    const count = `${c.memberCount} ${c.memberCount === 1 ? 'member' : 'members'}`;
    const open = (): void => {
      this.hooks.select(c.channelId);
    };
    const join = (): void => {
      this.join(c.channelId);
    };
    const action = member
      ? h('button', { type: 'button', class: 'open', 'aria-label': `Open channel ${label}`, onclick: open }, 'Open')
      : h('button', { type: 'button', class: 'join primary', 'aria-label': `Join channel ${label}`, onclick: join }, 'Join');
    return h(
      'li',
      { class: 'directory-channel', 'data-channel': c.channelId, 'data-member': String(member) },
      h('span', { class: 'directory-name' }, label),
      h('span', { class: 'directory-count', 'data-count': String(c.memberCount) }, count),
      action,
    );
  }

  /** Reads the first page for what the box holds, or (`more`) the next page of the same search. */
  private search(more = false): void {
    this.reading?.abort();
    const ac = new AbortController();
    this.reading = ac;
    const q = this.input?.value.trim() ?? '';
    const last = this.found[this.found.length - 1];
    const after = more && last !== undefined ? last.channelId : undefined;
    this.state.client.directory({ q, after, limit: PAGE, signal: ac.signal }).then(
      (page) => {
        if (ac.signal.aborted || this.state.closed) return;
        this.found = more ? [...this.found, ...page.channels] : [...page.channels];
        this.hasMore = page.hasMore;
        this.status = this.found.length > 0 ? '' : q === '' ? 'There is no public channel yet.' : `No public channel matches “${q}”.`;
        this.render();
      },
      (e: unknown) => {
        if (ac.signal.aborted || this.state.closed) return;
        this.status = failureWords(e, 'The channels could not be listed', 'refused');
        this.render();
      },
    );
  }

  /** Joins a channel; the client lists it when this resolves, and it opens. */
  private join(id: string): void {
    this.joining.add(id);
    this.state.client.join(id).then(
      () => {
        this.joining.delete(id);
        if (this.state.closed) return;
        announce(`You joined channel ${id}.`);
        this.hooks.select(id);
        this.search(); // its member count grew
      },
      (e: unknown) => {
        this.joining.delete(id);
        if (this.state.closed) return;
        this.status = failureWords(e, `Channel ${id} could not be joined`, 'it is not a public channel (or no longer exists)');
        this.render();
      },
    );
  }

  /** Leaves the open channel; the sidebar loses it at once and the first channel left opens. */
  private leave(id: string): void {
    this.state.client.leave(id).then(
      () => {
        if (this.state.closed) return;
        announce(`You left channel ${id}.`);
        if (this.state.current === id) this.hooks.select(undefined);
        if (this.panel?.hidden === false) this.search();
      },
      (e: unknown) => {
        if (this.state.closed) return;
        this.hooks.notice(failureWords(e, `You could not leave ${id}`, 'a direct channel cannot be left'));
      },
    );
  }
}

/** Why a directory read, join or leave failed, in words (`forbidden`: what a 403 means for it). */
function failureWords(e: unknown, what: string, forbidden: string): string {
  if (!(e instanceof ChatdError)) return `${what}: ${e instanceof Error ? e.message : String(e)}.`;
  switch (e.code) {
    case 'forbidden':
      return `${what}: ${forbidden}.`;
    case 'not_found':
      return `${what}: this server has no channel directory (it speaks a chatd protocol before 1.2).`;
    case 'invalid_field':
      return `${what}: ${e.message}.`;
    case 'unavailable':
      return `${what}: the server or its database cannot be reached; try again.`;
    default:
      return `${what}: ${e.message} [${e.code}].`;
  }
}
