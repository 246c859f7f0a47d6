/**
 * Delete with a confirm step: a message's Delete button asks first ("Delete for
 * everyone?" with Delete and Cancel, inline, not a browser dialog), since a deletion
 * erases the text for good. Which messages are asking is kept here, by message id, so the
 * question survives the message list's redraws (a receipt, a typing line) until answered.
 */
import { h } from './dom.js';

/** The messages whose Delete is asking for confirmation. */
const asking = new Set<string>();

/**
 * The Delete control of message `messageId`: its Delete button (`label` for screen
 * readers, `moderation` when it deletes another user's message), or, once clicked, the
 * question with its Delete (runs `remove`) and Cancel buttons.
 */
export function deleteControl(messageId: string, label: string, moderation: boolean, remove: () => void): HTMLElement {
  const slot = h('span', { class: 'delete-slot', 'data-message-id': messageId });
  const show = (): void => {
    if (!asking.has(messageId)) {
      slot.replaceChildren(
        h(
          'button',
          {
            type: 'button',
            class: 'delete',
            'data-moderation': String(moderation),
            'aria-label': label,
            onclick: () => {
              asking.add(messageId);
              show();
              slot.querySelector<HTMLButtonElement>('button.delete-cancel')?.focus();
            },
          },
          'Delete',
        ),
      );
      return;
    }
    slot.replaceChildren(
      h(
        'span',
        { class: 'delete-confirm-row', role: 'group', 'aria-label': 'Confirm the deletion' },
        h('span', { class: 'delete-question' }, 'Delete for everyone?'),
        h(
          'button',
          {
            type: 'button',
            class: 'delete-confirm',
            'aria-label': `${label}: confirm`,
            onclick: () => {
              asking.delete(messageId);
              remove();
            },
          },
          'Delete',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'delete-cancel',
            onclick: () => {
              asking.delete(messageId);
              show();
            },
          },
          'Cancel',
        ),
      ),
    );
  };
  show();
  return slot;
}
