/**
 * Searching messages (protocol §18) from the top of the sidebar: a search box whose
 * results (the client's `search`, `GET /v1/me/search`: the messages of the user's channels
 * holding every term, newest first) list each message's channel, sender, time and text
 * with the terms highlighted; "More results" reads the next page (`next`), and a result
 * opens its channel scrolled to the message (the view loads older pages until it is
 * there). A search is made when typing pauses or on Enter; a newer one aborts the one in
 * flight.
 */
import type { Message, SearchPage } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { h, until } from './dom.js';
import { errorText } from './words.js';

/** What the search needs from the view. */
export interface SearchHooks {
  /** Opens `m`'s channel scrolled to `m`. */
  open(m: Message): void;
}

/** Results asked for per page. */
const PAGE = 20;
/** How long typing pauses before the search is made (ms). */
const SEARCH_DELAY_MS = 300;

/** The search box and its results. */
export class MessageSearch {
  private readonly state: ChatState;
  private readonly hooks: SearchHooks;
  private input: HTMLInputElement | undefined;
  private panel: HTMLElement | undefined;
  /** The query the results are of, the results so far, and the next page's cursor. */
  private query = '';
  private results: Message[] = [];
  private next: string | undefined;
  private status = '';
  /** The read in flight (a newer search aborts it), and the search waiting for typing to pause. */
  private reading: AbortController | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(state: ChatState, hooks: SearchHooks) {
    this.state = state;
    this.hooks = hooks;
  }

  /** Makes the search box and its (hidden until searched) results panel. */
  element(): HTMLElement {
    this.input = h('input', {
      type: 'search',
      id: 'search-q',
      placeholder: 'Search messages',
      'aria-label': 'Search messages',
      'aria-controls': 'search-results',
      autocomplete: 'off',
    });
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.search();
      }, SEARCH_DELAY_MS);
    });
    this.input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') {
        this.clear();
        return;
      }
      if (ev.key !== 'Enter') return;
      ev.preventDefault();
      clearTimeout(this.timer);
      this.search();
    });
    this.panel = h('div', { class: 'search-results', id: 'search-results', hidden: true });
    return h('div', { class: 'search', role: 'search' }, this.input, this.panel);
  }

  /** Empties the box and hides the results. */
  clear(): void {
    clearTimeout(this.timer);
    this.reading?.abort();
    this.reading = undefined;
    if (this.input !== undefined) this.input.value = '';
    this.query = '';
    this.results = [];
    this.next = undefined;
    this.status = '';
    this.render();
  }

  /** Searches for what the box holds now (from the newest). */
  private search(): void {
    const q = this.input?.value.trim() ?? '';
    if (q === '') {
      this.clear();
      return;
    }
    this.query = q;
    this.results = [];
    this.next = undefined;
    this.read(undefined);
  }

  /** Reads a page of the current query before `before` and appends it. */
  private read(before: string | undefined): void {
    this.reading?.abort();
    const ctl = new AbortController();
    this.reading = ctl;
    this.status = 'Searching…';
    this.render();
    const q = this.query;
    const options = before === undefined ? { limit: PAGE, signal: ctl.signal } : { limit: PAGE, before, signal: ctl.signal };
    this.state.client.search(q, options).then(
      (page: SearchPage) => {
        if (ctl !== this.reading || this.state.closed) return;
        this.reading = undefined;
        this.results.push(...page.results);
        this.next = page.next;
        this.status =
          this.results.length > 0 ? '' : page.next !== undefined ? `No messages match “${q}” yet; there is more to look through.` : `No messages match “${q}”.`;
        this.render();
      },
      (e: unknown) => {
        if (ctl !== this.reading || this.state.closed) return;
        this.reading = undefined;
        this.status = errorText(e);
        this.render();
      },
    );
  }

  /** Draws the results, the status line and "More results". */
  private render(): void {
    const panel = this.panel;
    if (panel === undefined) return;
    panel.hidden = this.query === '';
    const terms = this.query.split(/\s+/u).filter((t) => t !== '');
    const items = this.results.map((m) => this.item(m, terms));
    const children: HTMLElement[] = [
      h('p', { class: 'hint search-status', id: 'search-status', role: 'status' }, this.status),
      h('ul', { class: 'search-list', id: 'search-list', 'aria-label': `Messages matching ${this.query}` }, ...items),
    ];
    if (this.next !== undefined && this.reading === undefined) {
      const next = this.next;
      children.push(
        h(
          'button',
          {
            type: 'button',
            class: 'more',
            id: 'search-more',
            onclick: () => {
              this.read(next);
            },
          },
          'More results',
        ),
      );
    }
    children.push(
      h(
        'button',
        {
          type: 'button',
          class: 'search-close',
          id: 'search-close',
          onclick: () => {
            this.clear();
          },
        },
        'Close search',
      ),
    );
    panel.replaceChildren(...children);
  }

  /** One result: a button with its channel, sender, time and text (the terms marked). */
  private item(m: Message, terms: readonly string[]): HTMLElement {
    const channel = this.state.label(m.channelId);
    return h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          class: 'search-result',
          'data-message-id': m.messageId,
          'data-channel': m.channelId,
          'data-seq': m.seq,
          'aria-label': `${m.senderId} in ${channel}: ${m.body}`,
          onclick: () => {
            this.hooks.open(m);
          },
        },
        h(
          'span',
          { class: 'search-meta' },
          h('span', { class: 'search-channel' }, channel),
          ' · ',
          h('span', { class: 'search-sender' }, m.senderId),
          ' · ',
          h('time', { datetime: new Date(m.ts).toISOString() }, until(m.ts)),
        ),
        h('span', { class: 'search-body' }, ...highlighted(m.body, terms)),
      ),
    );
  }
}

/**
 * `text` as text nodes and `<mark>`s, each mark a place where a term occurs, found as the
 * server finds it: case folded per character (lower case), no other normalization.
 */
export function highlighted(text: string, terms: readonly string[]): (string | HTMLElement)[] {
  // the text's characters lowered one by one, and where each lowered unit came from
  // code points on purpose: the server folds case per character (code point)
  const chars = Array.from(text);
  let lowered = '';
  const from: number[] = [];
  const starts: number[] = [];
  let at = 0;
  for (const ch of chars) {
    starts.push(at);
    const low = ch.toLowerCase();
    for (let i = 0; i < low.length; i++) from.push(starts.length - 1);
    lowered += low;
    at += ch.length;
  }
  starts.push(at);
  // marked characters (by index in `chars`)
  const marked = new Array<boolean>(chars.length).fill(false);
  for (const term of terms) {
    const t = Array.from(term, (c) => c.toLowerCase()).join('');
    if (t === '') continue;
    for (let i = lowered.indexOf(t); i >= 0; i = lowered.indexOf(t, i + 1)) {
      const first = from[i] ?? 0;
      const last = from[i + t.length - 1] ?? first;
      for (let c = first; c <= last; c++) marked[c] = true;
    }
  }
  const out: (string | HTMLElement)[] = [];
  let i = 0;
  while (i < chars.length) {
    const m = marked[i] === true;
    let j = i;
    while (j < chars.length && (marked[j] === true) === m) j++;
    const piece = text.slice(starts[i], starts[j]);
    out.push(m ? h('mark', {}, piece) : piece);
    i = j;
  }
  return out;
}
