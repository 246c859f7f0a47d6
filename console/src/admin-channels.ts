/**
 * The admin view's "Channels" card: every channel of the server (`GET /v1/channels`, 50
 * a page, "More channels" for the next), each with its name, kind, visibility, member
 * count and last seq; per channel its members with their roles and read marks (`GET
 * /v1/channels/{channelId}/members`, every page), a rename (`PATCH
 * /v1/channels/{channelId}` `{"name"}`; an empty name clears it) and a delete (`DELETE
 * /v1/channels/{channelId}`), which asks first, inline, as it erases the channel's
 * messages for everyone.
 */
import { api, apiError, guarded, result } from './admin-api.js';
import { h } from './dom.js';

/** Channels read per page. */
const CHANNELS_PAGE = 50;
/** Members read per page (the route's most). */
const MEMBERS_PAGE = 500;

/** A channel as `GET /v1/channels` lists it (the fields the card shows). */
interface AdminChannel {
  readonly channelId: string;
  readonly name: string | null;
  readonly kind?: string;
  readonly visibility?: string;
  readonly memberCount?: number;
  readonly members: readonly string[];
  readonly lastSeq: number;
}

/** A member as `GET /v1/channels/{channelId}/members` lists it. */
interface AdminMember {
  readonly userId: string;
  readonly role: string;
  readonly readSeq: number;
}

/** The card and how to read its list again (after a channel is created or its members change elsewhere in the view). */
export interface ChannelsCard {
  readonly el: HTMLElement;
  /** Reads the first page again, replacing the list. */
  refresh(): void;
}

/** What the card says about one channel under its id. */
function describe(c: AdminChannel): string {
  const count = c.memberCount ?? c.members.length;
  const parts = [c.kind ?? 'group', c.visibility ?? 'private', `${count} ${count === 1 ? 'member' : 'members'}`, c.lastSeq === 0 ? 'no messages' : `last seq ${c.lastSeq}`];
  return parts.join(' · ');
}

/** The "Channels" card; `note` adds a line to the page's log. */
export function channelsCard(note: (s: string) => void): ChannelsCard {
  const list = h('ul', { class: 'admin-channels', id: 'admin-channel-list', 'aria-label': 'Channels' });
  const out = h('p', { class: 'result', id: 'channels-result', role: 'status', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', id: 'channels-more', hidden: true }, 'More channels');
  /** The last channel id listed, for the next page. */
  let last: string | undefined;
  /** Bumped by every refresh, so a page read before it is dropped. */
  let generation = 0;

  const load = (after: string | undefined): void => {
    const gen = after === undefined ? ++generation : generation;
    void guarded(out, async () => {
      const q = `limit=${CHANNELS_PAGE}${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`;
      const r = await api('GET', `/v1/channels?${q}`);
      if (gen !== generation) return;
      if (r.status !== 200) {
        result(out, false, apiError(r));
        return;
      }
      const page = r.json as { channels: AdminChannel[]; hasMore: boolean };
      if (after === undefined) list.replaceChildren();
      for (const c of page.channels) list.append(row(c));
      last = page.channels[page.channels.length - 1]?.channelId ?? last;
      more.hidden = !page.hasMore;
      const n = list.childElementCount;
      result(out, true, n === 0 ? 'No channels yet.' : `${n} ${n === 1 ? 'channel' : 'channels'}${page.hasMore ? ' shown, more follow' : ''}.`);
    });
  };

  const row = (c: AdminChannel): HTMLElement => {
    const id = c.channelId;
    const path = `/v1/channels/${encodeURIComponent(id)}`;
    const nameEl = h('span', { class: 'admin-channel-name' }, c.name ?? '');
    const meta = h('span', { class: 'admin-channel-meta' }, describe(c));
    const status = h('p', { class: 'result admin-channel-result', role: 'status' });
    const members = h('ul', { class: 'admin-member-list', hidden: true, 'aria-label': `Members of ${id}` });
    const tools = h('div', { class: 'admin-channel-tools' });
    const li = h(
      'li',
      { class: 'admin-channel', 'data-channel': id },
      h('div', { class: 'admin-channel-head' }, h('strong', { class: 'admin-channel-id' }, id), nameEl),
      meta,
      tools,
      members,
      status,
    );

    const showMembers = h('button', { type: 'button', class: 'admin-members', 'aria-expanded': 'false' }, 'Members');
    showMembers.addEventListener('click', () => {
      if (!members.hidden) {
        members.hidden = true;
        showMembers.setAttribute('aria-expanded', 'false');
        return;
      }
      void guarded(status, async () => {
        const all: AdminMember[] = [];
        let after: string | undefined;
        for (;;) {
          const r = await api('GET', `${path}/members?limit=${MEMBERS_PAGE}${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`);
          if (r.status !== 200) {
            result(status, false, apiError(r));
            return;
          }
          const page = r.json as { members: AdminMember[]; hasMore: boolean };
          all.push(...page.members);
          after = page.members[page.members.length - 1]?.userId;
          if (!page.hasMore || after === undefined) break;
        }
        members.replaceChildren(
          ...(all.length === 0
            ? [h('li', { class: 'hint' }, 'No members.')]
            : all.map((m) =>
                h(
                  'li',
                  { class: 'admin-member', 'data-user': m.userId },
                  h('span', { class: 'admin-member-id' }, m.userId),
                  ' ',
                  h('span', { class: 'role', 'data-role': m.role }, m.role),
                  ' ',
                  h('span', { class: 'member-read' }, m.readSeq === 0 ? 'has read nothing' : `read up to seq ${m.readSeq}`),
                ),
              )),
        );
        members.hidden = false;
        showMembers.setAttribute('aria-expanded', 'true');
        status.replaceChildren();
      });
    });

    const renameInput = h('input', { class: 'admin-rename-input', 'aria-label': `New name of ${id}`, maxlength: 200, autocomplete: 'off' });
    const renameForm = h(
      'form',
      {
        class: 'admin-rename-form',
        hidden: true,
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          const name = renameInput.value.trim();
          void guarded(status, async () => {
            const r = await api('PATCH', path, { name: name === '' ? null : name });
            if (r.status !== 200) {
              result(status, false, apiError(r));
              return;
            }
            const changed = r.json as AdminChannel;
            nameEl.textContent = changed.name ?? '';
            renameForm.hidden = true;
            result(status, true, changed.name === null ? `${id} has no name now.` : `Renamed ${id} to “${changed.name}”.`);
            note(changed.name === null ? `cleared the name of ${id}` : `renamed ${id} to “${changed.name}”`);
          });
        },
      },
      renameInput,
      h('button', { type: 'submit', class: 'primary admin-rename-save' }, 'Save name'),
      h(
        'button',
        {
          type: 'button',
          class: 'admin-rename-cancel',
          onclick: () => {
            renameForm.hidden = true;
          },
        },
        'Cancel',
      ),
    );
    const rename = h(
      'button',
      {
        type: 'button',
        class: 'admin-rename',
        onclick: () => {
          renameInput.value = nameEl.textContent;
          renameForm.hidden = false;
          renameInput.focus();
        },
      },
      'Rename',
    );

    const deleteBox = h(
      'div',
      { class: 'admin-delete-box', hidden: true },
      h('span', { class: 'delete-question' }, `Delete ${id} for everyone, with all its messages? This cannot be undone.`),
      h(
        'button',
        {
          type: 'button',
          class: 'danger admin-delete-confirm',
          onclick: () => {
            void guarded(status, async () => {
              const r = await api('DELETE', path);
              if (r.status !== 204) {
                result(status, false, apiError(r));
                return;
              }
              li.remove();
              result(out, true, `Deleted ${id}.`);
              note(`deleted ${id}`);
            });
          },
        },
        'Delete channel',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'admin-delete-cancel',
          onclick: () => {
            deleteBox.hidden = true;
          },
        },
        'Cancel',
      ),
    );
    const del = h(
      'button',
      {
        type: 'button',
        class: 'admin-delete',
        onclick: () => {
          deleteBox.hidden = false;
        },
      },
      'Delete…',
    );
    tools.append(showMembers, rename, del, renameForm, deleteBox);
    return li;
  };

  more.addEventListener('click', () => {
    load(last);
  });
  const refresh = h(
    'button',
    {
      type: 'button',
      id: 'channels-refresh',
      onclick: () => {
        load(undefined);
      },
    },
    'Refresh',
  );
  const el = h(
    'section',
    { class: 'card admin-channels-card', id: 'admin-channels', 'aria-labelledby': 'channels-title' },
    h('div', { class: 'admin-channels-title' }, h('h2', { id: 'channels-title' }, 'Channels'), refresh),
    out,
    list,
    more,
  );
  load(undefined);
  return {
    el,
    refresh: () => {
      load(undefined);
    },
  };
}
