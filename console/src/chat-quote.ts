/**
 * How a reply shows the message it quotes (protocol §14): its sender and text as the
 * client keeps them current (edited text, or "deleted message" once deleted), above the
 * reply's own text; used by the message list, the thread panel and the composer's
 * "Replying to" line.
 */
import type { ReplyPreview } from '../../clients/typescript/src/index.js';
import { h } from './dom.js';

/** The quote of a reply's `replyPreview`. */
export function quoteElement(preview: ReplyPreview, replyTo: string | undefined): HTMLElement {
  return h(
    'blockquote',
    { class: 'quote', 'data-reply-to': replyTo, 'data-deleted': String(preview.deleted === true) },
    h('span', { class: 'quote-sender' }, preview.senderId),
    ' ',
    h('span', { class: 'quote-body' }, preview.deleted === true ? 'deleted message' : preview.body),
  );
}
