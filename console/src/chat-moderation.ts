/**
 * The moderator menu on a member of the member list, and on a member's message (protocol
 * §17): for an owner, or a
 * moderator on a `member`, a duration picker with Mute (or Unmute while a mute is in
 * force) and Ban (`client.moderation.mute`, `unmute`, `ban`); and, for any user on any
 * other user, Block or Unblock (`block`, `unblock`), which hides a blocked user's messages
 * here. The server judges each change; its outcome goes to the member list's action line
 * through `run`.
 */
import type { Member, MemberRole } from '../../clients/typescript/src/index.js';
import type { ChatState } from './chat-state.js';
import { h, until } from './dom.js';

/** The mute durations offered, in minutes. */
const DURATIONS: readonly { minutes: number; label: string }[] = [
  { minutes: 10, label: '10 minutes' },
  { minutes: 60, label: '1 hour' },
  { minutes: 24 * 60, label: '1 day' },
  { minutes: 7 * 24 * 60, label: '1 week' },
];

/** What the menu needs from the member list. */
export interface ModerationHooks {
  /** Runs a change: "Saving…", then `done` or the refusal (`refused` and the server's words). */
  run(channelId: string, p: Promise<void>, done: string, refused: string): void;
  /** The blocked users changed: redraw what hides their messages. */
  blocksChanged(): void;
}

/** The moderator and block controls of member rows. */
export class ModeratorMenu {
  private readonly state: ChatState;
  private readonly hooks: ModerationHooks;
  /** The duration last picked per channel and user: a redraw of the list keeps it. */
  private readonly picked = new Map<string, string>();

  constructor(state: ChatState, hooks: ModerationHooks) {
    this.state = state;
    this.hooks = hooks;
  }

  /** Whether a user of role `mine` may mute and ban member `m` (an owner: anyone else; a moderator: `member`s). */
  static mayModerate(mine: MemberRole | undefined, m: Member, me: string): boolean {
    if (m.userId === me) return false;
    return mine === 'owner' || (mine === 'moderator' && m.role === 'member');
  }

  /** The muted mark of a member whose mute is in force ("muted until 14:05"), or nothing. */
  mutedMark(m: Member): HTMLElement | null {
    if (m.mutedUntil === undefined || m.mutedUntil <= Date.now()) return null;
    return h('span', { class: 'muted-mark', 'data-muted-until': m.mutedUntil }, `muted until ${until(m.mutedUntil)}`);
  }

  /**
   * Mute (with its duration) or, while `m` is muted and `unmute` is set, Unmute; and Ban,
   * for member `m` of `channelId` (on a message, `unmute` is off: a mute is lifted from the
   * member list).
   */
  moderatorControls(channelId: string, m: Member, unmute = true): HTMLElement[] {
    const client = this.state.client;
    const muted = unmute && m.mutedUntil !== undefined && m.mutedUntil > Date.now();
    const out: HTMLElement[] = [];
    if (muted) {
      out.push(
        h(
          'button',
          {
            type: 'button',
            class: 'member-unmute',
            'aria-label': `Unmute ${m.userId}`,
            onclick: () => {
              this.hooks.run(channelId, client.moderation.unmute(channelId, m.userId), `${m.userId} is no longer muted.`, `${m.userId} was not unmuted`);
            },
          },
          'Unmute',
        ),
      );
    } else {
      const pick = h(
        'select',
        { class: 'member-mute-for', 'aria-label': `Mute ${m.userId} for` },
        ...DURATIONS.map((d) => h('option', { value: d.minutes }, d.label)),
      );
      const key = `${channelId}\u0000${m.userId}`;
      pick.value = this.picked.get(key) ?? String(DURATIONS[0]?.minutes ?? 10);
      pick.addEventListener('change', () => {
        this.picked.set(key, pick.value);
      });
      const mute = (): void => {
        const minutes = Number(pick.value);
        const until = Date.now() + minutes * 60_000;
        const label = DURATIONS.find((d) => d.minutes === minutes)?.label ?? `${minutes} minutes`;
        this.hooks.run(channelId, client.moderation.mute(channelId, m.userId, until), `${m.userId} is muted for ${label}.`, `${m.userId} was not muted`);
      };
      out.push(pick, h('button', { type: 'button', class: 'member-mute', 'aria-label': `Mute ${m.userId}`, onclick: mute }, 'Mute'));
    }
    out.push(
      h(
        'button',
        {
          type: 'button',
          class: 'member-ban',
          'aria-label': `Ban ${m.userId}`,
          onclick: () => {
            this.hooks.run(channelId, client.moderation.ban(channelId, m.userId), `${m.userId} was banned.`, `${m.userId} was not banned`);
          },
        },
        'Ban',
      ),
    );
    return out;
  }

  /** Block or Unblock another user (any user may); nothing for the user itself. */
  blockControl(channelId: string, userId: string): HTMLElement | null {
    if (userId === this.state.userId) return null;
    const blocked = this.state.blocked.has(userId);
    const client = this.state.client;
    const toggle = (): void => {
      const p = blocked ? client.moderation.unblock(userId) : client.moderation.block(userId);
      const change = p.then(() => {
        if (blocked) this.state.blocked.delete(userId);
        else this.state.blocked.add(userId);
        this.hooks.blocksChanged();
      });
      this.hooks.run(
        channelId,
        change,
        blocked ? `You no longer block ${userId}.` : `You block ${userId}: their messages are hidden.`,
        blocked ? `${userId} was not unblocked` : `${userId} was not blocked`,
      );
    };
    return h(
      'button',
      { type: 'button', class: blocked ? 'member-unblock' : 'member-block', 'aria-label': `${blocked ? 'Unblock' : 'Block'} ${userId}`, onclick: toggle },
      blocked ? 'Unblock' : 'Block',
    );
  }
}
