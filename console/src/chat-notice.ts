/**
 * The notice line under the messages: the last problem met in the selected channel (a
 * refused operation, "not a member any more") and the version 1.1 features this server
 * lacks. It also keeps `document.body.dataset.unsupported` (read by the tests) current.
 */
import type { ChatState } from './chat-state.js';
import { h } from './dom.js';

/** The features the notice names for each version 1.1 operation. */
const OP_NAMES: ReadonlyMap<string, string> = new Map([
  ['MSG_EDIT', 'editing'],
  ['MSG_DELETE', 'deleting'],
  ['MSG_REACT', 'reactions'],
  ['TYPING', 'typing indicators'],
  ['PRESENCE_SUB', 'presence'],
]);

/** The notice line and each channel's notice text. */
export class Notices {
  private readonly state: ChatState;
  private readonly texts = new Map<string, string>();
  private el: HTMLElement | undefined;

  constructor(state: ChatState) {
    this.state = state;
  }

  /** Makes the notice line of a newly built pane (the previous one is dropped). */
  element(): HTMLElement {
    this.el = h('div', { class: 'notice', id: 'notice', 'aria-live': 'polite' });
    return this.el;
  }

  /** Shows the selected channel's notice and the unsupported features. */
  render(): void {
    const el = this.el;
    if (el === undefined) return;
    const current = this.state.current;
    const custom = current === undefined ? undefined : this.texts.get(current);
    const missing = this.state.unsupported();
    const parts: string[] = [];
    if (custom !== undefined) parts.push(custom);
    if (missing.length > 0) {
      parts.push(`This server does not support ${missing.map((m) => OP_NAMES.get(m) ?? m).join(', ')} (chatd protocol 1.1); they are off.`);
    }
    el.textContent = parts.join(' ');
    document.body.dataset.unsupported = missing.join(' ');
  }

  /** Sets the selected channel's notice (empty text clears it) and shows it. */
  set(text: string): void {
    if (this.state.current !== undefined) this.texts.set(this.state.current, text);
    this.render();
  }

  /** Forgets a channel's notice (the user is back in it). */
  forget(channelId: string): void {
    this.texts.delete(channelId);
  }
}
