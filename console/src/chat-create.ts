/**
 * "New message" and "New channel" under the channel list. New message asks for a user id
 * and opens the one direct channel with that user (the client's `direct`, `PUT
 * /v1/me/direct/{userId}`: the same channel from either side, made by whoever asks first);
 * New channel makes a group channel with a name, private or public, the user its owner
 * (`createChannel`, `POST /v1/me/channels`). Either way the new channel is in the sidebar
 * when the call resolves (from the server's `CHANNEL_ADDED`, or the channel list the
 * client reads once when that has not come yet) and opens.
 * A refusal (the server's `dm_policy`, `user_channel_creation` off, a bad id or name) is
 * shown under the form in the server's words, with its code and reason.
 */
import type { ChannelInfo } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { announce, h } from './dom.js';
import { refusalWords } from './words.js';

/** What the forms need from the view. */
export interface CreateHooks {
  /** Selects (opens) a channel the user is in. */
  select(id: string): void;
}

/** The two buttons and their forms. */
export class NewChats {
  private readonly state: ChatState;
  private readonly hooks: CreateHooks;
  /** Each form's toggle button, by form id. */
  private readonly toggles = new Map<string, HTMLButtonElement>();
  private readonly forms = new Map<string, HTMLFormElement>();

  constructor(state: ChatState, hooks: CreateHooks) {
    this.state = state;
    this.hooks = hooks;
  }

  /** Makes the sidebar part: New message and New channel, each with its form (hidden until opened). */
  element(): HTMLElement {
    const user = h('input', { id: 'dm-user', type: 'text', autocomplete: 'off', placeholder: 'e.g. bob', 'aria-describedby': 'dm-status' });
    const dmStatus = h('p', { class: 'hint', id: 'dm-status', role: 'status' });
    const dm = this.form(
      'dm-form',
      'Open a direct message',
      () => {
        this.openDirect(user, dmStatus);
      },
      h('label', { for: 'dm-user' }, 'User id'),
      user,
      h('button', { type: 'submit', class: 'primary', id: 'dm-open' }, 'Open'),
      dmStatus,
    );
    const name = h('input', { id: 'group-name', type: 'text', autocomplete: 'off', placeholder: 'e.g. Book club', 'aria-describedby': 'group-status' });
    const visibility = h(
      'select',
      { id: 'group-visibility' },
      h('option', { value: 'private' }, 'Private: members only'),
      h('option', { value: 'public' }, 'Public: anyone may find and join it'),
    );
    const groupStatus = h('p', { class: 'hint', id: 'group-status', role: 'status' });
    const group = this.form(
      'group-form',
      'Create a channel',
      () => {
        this.createGroup(name, visibility, groupStatus);
      },
      h('label', { for: 'group-name' }, 'Name'),
      name,
      h('label', { for: 'group-visibility' }, 'Who can see it'),
      visibility,
      h('button', { type: 'submit', class: 'primary', id: 'group-create' }, 'Create'),
      groupStatus,
    );
    return h(
      'div',
      { class: 'create-part' },
      h('div', { class: 'create-buttons' }, this.toggle('new-message', 'New message', dm, user), this.toggle('new-channel', 'New channel', group, name)),
      dm,
      group,
    );
  }

  /** A form (hidden) that calls `submit` instead of being sent. */
  private form(id: string, label: string, submit: () => void, ...children: HTMLElement[]): HTMLFormElement {
    const form = h('form', { class: 'create-form', id, 'aria-label': label, hidden: true }, ...children);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      submit();
    });
    this.forms.set(id, form);
    return form;
  }

  /** The button that shows (and hides) `form`, the other form hidden; focus goes to `first`. */
  private toggle(id: string, text: string, form: HTMLFormElement, first: HTMLElement): HTMLButtonElement {
    const onclick = (): void => {
      const open = form.hidden;
      for (const [fid, f] of this.forms) {
        f.hidden = fid === form.id ? !open : true;
        this.toggles.get(fid)?.setAttribute('aria-expanded', String(!f.hidden));
      }
      if (open) first.focus();
    };
    const b = h('button', { type: 'button', class: 'create', id, 'aria-expanded': 'false', 'aria-controls': form.id, onclick }, text);
    this.toggles.set(form.id, b);
    return b;
  }

  /** Hides a form once it did its work. */
  private close(formId: string): void {
    const f = this.forms.get(formId);
    if (f !== undefined) f.hidden = true;
    this.toggles.get(formId)?.setAttribute('aria-expanded', 'false');
  }

  /** New message: the direct channel with the user typed, opened. */
  private openDirect(input: HTMLInputElement, status: HTMLElement): void {
    const user = input.value.trim();
    if (user === '') {
      status.textContent = 'Type the user id of the person to write to.';
      return;
    }
    status.textContent = `Opening the direct channel with ${user}…`;
    this.state.client.direct(user).then(
      ({ channel, created }) => {
        if (this.state.closed) return;
        this.state.peers.set(channel.channelId, peerOf(channel, this.state.userId) ?? user);
        status.textContent = '';
        input.value = '';
        this.close('dm-form');
        announce(created ? `Direct channel with ${user} created.` : `Direct channel with ${user} opened.`);
        this.hooks.select(channel.channelId);
      },
      (e: unknown) => {
        if (this.state.closed) return;
        status.textContent = refusalWords(`No direct channel with ${user}`, e);
      },
    );
  }

  /** New channel: a group with this name and visibility, the user its owner, opened. */
  private createGroup(nameInput: HTMLInputElement, visibilitySelect: HTMLSelectElement, status: HTMLElement): void {
    const name = nameInput.value.trim();
    if (name === '') {
      status.textContent = 'Give the channel a name.';
      return;
    }
    const visibility = visibilitySelect.value === 'public' ? 'public' : 'private';
    status.textContent = `Creating ${name}…`;
    this.state.client.createChannel({ name, visibility }).then(
      (channel) => {
        if (this.state.closed) return;
        status.textContent = '';
        nameInput.value = '';
        visibilitySelect.value = 'private';
        this.close('group-form');
        announce(`Channel ${name} created (${visibility}); you are its owner.`);
        this.hooks.select(channel.channelId);
      },
      (e: unknown) => {
        if (this.state.closed) return;
        status.textContent = refusalWords(`Channel ${name} was not created`, e);
      },
    );
  }
}

/** The other member of a direct channel (the user itself for its channel with itself). */
function peerOf(channel: ChannelInfo, me: string): string | undefined {
  return channel.members.find((m) => m !== me) ?? channel.members[0];
}
