/** Small DOM helpers: elements are built with text nodes only (never innerHTML), so no message can inject markup. */

type Attrs = Record<string, string | number | boolean | undefined | EventListener>;
type Child = Node | string | null | undefined | false;

/** Creates an element; `on*` attributes become listeners, `false`/`undefined` attributes are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === 'value' && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) el.value = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/** The element with this id (throws when the page lacks it: a build error, not a user's). */
export function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`#${id} missing from the page`);
  return el;
}

/** `text` with each `…` span (a command, a setting) as a `<code>` element, the backticks dropped. */
export function withCode(text: string): (Node | string)[] {
  return text.split('`').map((part, i) => (i % 2 === 1 ? h('code', {}, part) : part));
}

/** Shows a message above the view (`kind` error or info), its `…` spans as code; empty text hides it. */
export function banner(text: string, kind: 'error' | 'info' = 'error'): void {
  const el = byId('banner');
  el.replaceChildren(...withCode(text));
  el.dataset.kind = kind;
  el.hidden = text === '';
}

/** Says `text` to screen readers (the polite live region). */
export function announce(text: string): void {
  const el = byId('announcer');
  el.append(h('p', {}, text));
  while (el.childElementCount > 5) el.firstElementChild?.remove();
}

/** Clock time of a server timestamp (ms). */
export function clock(ts: number): string {
  return new Date(ts).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/** A moment to come (a mute's end): its clock time today, with the date on another day. */
export function until(ts: number): string {
  const d = new Date(ts);
  if (d.toDateString() === new Date().toDateString()) return clock(ts);
  return `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })}, ${clock(ts)}`;
}
