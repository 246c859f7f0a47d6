// A real DOM for the tests: jsdom's window, document and DOM classes made global before
// React DOM loads (import this module first). Node 20 has no DOM of its own.
import { JSDOM } from 'jsdom';

export const dom = new JSDOM('<!doctype html><html><head></head><body></body></html>', {
  url: 'http://localhost/',
  pretendToBeVisual: true,
});

const g = globalThis as unknown as Record<string, unknown>;
g.window = dom.window;
g.document = dom.window.document;
for (const name of ['HTMLElement', 'HTMLInputElement', 'Node', 'Event', 'MouseEvent', 'KeyboardEvent', 'SubmitEvent', 'requestAnimationFrame', 'cancelAnimationFrame']) {
  if (!(name in g)) g[name] = (dom.window as unknown as Record<string, unknown>)[name];
}
if (!('navigator' in g)) g.navigator = dom.window.navigator;

/** A new element in the document's body, to render into. */
export function container(): HTMLElement {
  const el = dom.window.document.createElement('div');
  dom.window.document.body.appendChild(el);
  return el;
}

/** Types `text` into an input as a user does: the value, then the `input` event React listens to. */
export function typeInto(input: HTMLInputElement, text: string): void {
  // the prototype's setter, as the browser's own typing sets it (React watches the instance's)
  Reflect.set(dom.window.HTMLInputElement.prototype, 'value', text, input);
  input.dispatchEvent(new dom.window.Event('input', { bubbles: true }));
}

/** Clicks an element as a user does. */
export function click(el: Element): void {
  el.dispatchEvent(new dom.window.MouseEvent('click', { bubbles: true, cancelable: true }));
}
