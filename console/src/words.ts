/**
 * Errors a user can meet, in words (the code stays available in brackets for a bug report);
 * and membership changes in words (a channel removed, a line of the timeline).
 */
import { ChatdError } from '../../clients/typescript/src/index.js';
import { until } from './dom.js';

/**
 * What a refused send, edit, delete or reaction means to the user; moderation's refusals
 * (protocol §17) and the bound on a message's reactions (§8, `too_many_reactions`) by
 * their `reason`.
 */
export function errorWords(code: string, message: string, reason?: string): string {
  switch (reason) {
    case 'muted':
      return 'You are muted in this channel, so this was not sent.';
    case 'read_only':
      return 'Only moderators post in this channel (it is read-only for members), so this was not sent.';
    case 'slow_mode':
      return 'Slow mode: wait a moment before sending again.';
    case 'blocked':
      return 'The other member blocks you, so this was not sent.';
    case 'banned':
      return 'You are banned from this channel.';
    case 'too_many_reactions':
      return 'This message already has as many different reactions as the server allows; add one of those it has.';
    default:
      break;
  }
  switch (code) {
    case 'forbidden':
      return 'You are not a member of this channel (or it no longer exists), so this was not sent.';
    case 'not_found':
      return 'That message no longer exists (it may have been deleted).';
    case 'body_too_large':
      return 'The message is too long for this server.';
    case 'invalid_field':
      return `The server refused this message: ${message}.`;
    case 'idempotency_conflict':
      return 'The server already has a different message under the same id; send it again as a new message.';
    case 'rate_limited':
      return 'You are sending too fast; slow down a little.';
    case 'unavailable':
      return 'The server cannot store messages right now (its database is down); it will be retried.';
    case 'unknown_type':
    case 'unsupported':
      return 'This server does not support that yet (it speaks chatd protocol 1.0; edits, deletions, reactions, typing and presence need 1.1).';
    case 'closed':
    case 'aborted':
      return 'You signed out before this was sent.';
    default:
      return `Something went wrong: ${message} [${code}].`;
  }
}

/** What a rejected promise of the client means to the user (its errors are `ChatdError`s; anything else is `internal`). */
export function errorText(e: unknown): string {
  if (e instanceof ChatdError) return errorWords(e.code, e.message, e.reason);
  return errorWords('internal', e instanceof Error ? e.message : String(e));
}

/** True when the server answered `unknown_type`: it does not support the operation (chatd protocol 1.0). */
export function isUnknownType(e: unknown): boolean {
  return e instanceof ChatdError && e.code === 'unknown_type';
}

/** Why a user token was refused (HTTP 401 message of chatd: "invalid token: expired", …). */
export function tokenWords(message: string): string {
  if (message.includes('expired')) {
    return 'Your sign-in token has expired. Get a new one (run `chatd token <your user id>`, or ask an admin to mint one in the admin view) and sign in again.';
  }
  if (message.includes('bad signature')) {
    return 'This token was not issued by this server (its signature does not match). Use a token from this server’s `chatd token` or admin view.';
  }
  if (message.includes('user was erased')) {
    return 'An admin erased this user (their messages and memberships are gone), so tokens issued before that are refused. If you should still have access, ask an admin for a new sign-in link.';
  }
  if (message.includes('not yet valid')) return 'This token is not valid yet: check the clock of the machine that made it.';
  if (message.includes('missing bearer')) return 'No token was given. Paste your user token to sign in.';
  return `This server does not accept this token (${message}). Sign in again with a new token.`;
}

/**
 * A refused request of the user routes (a new channel, a direct channel, a member change)
 * in the server's own words: `what`, the server's message, and its code and `reason` in
 * brackets (`[forbidden, dm_policy]`).
 */
export function refusalWords(what: string, e: unknown): string {
  if (!(e instanceof ChatdError)) return `${what}: ${e instanceof Error ? e.message : String(e)}.`;
  switch (e.code) {
    case 'unavailable':
      return `${what}: the server or its database cannot be reached; try again.`;
    case 'not_found':
      return `${what}: this server does not support it (it speaks a chatd protocol before 1.2).`;
    default:
      return `${what}: ${e.message} [${e.reason === undefined ? e.code : `${e.code}, ${e.reason}`}].`;
  }
}

/**
 * Why the user is no longer in a channel (`CHANNEL_REMOVED`'s reason), in words: `label` is
 * how the channel was shown (`# name`), `by` who made the change when known (the `MEMBER`
 * frame before it).
 */
export function removalWords(label: string, reason: string | undefined, by: string | undefined): string {
  const byWhom = by === undefined ? '' : ` by ${by}`;
  switch (reason) {
    case 'left':
      return `You left ${label}.`;
    case 'removed':
      return `You were removed from ${label}${byWhom}.`;
    case 'banned':
      return `You were banned from ${label}${byWhom}.`;
    case 'deleted':
      return `${label} was deleted.`;
    case undefined:
      return `You are no longer a member of ${label}.`;
    default:
      return `You are no longer a member of ${label} [${reason}].`;
  }
}

/** The fields of a `MEMBER` frame that say what happened. */
export interface MemberChange {
  readonly userId: string;
  readonly op: string;
  readonly role?: string;
  readonly actorId?: string;
  readonly mutedUntil?: number | null;
}

/**
 * A membership change as a line of the timeline ("bob joined", "bob left", "carol was
 * removed by olive", "bob is now moderator"), the user itself as "You"; undefined for an op
 * this console does not know.
 */
export function memberChangeWords(f: MemberChange, me: string): string | undefined {
  const self = f.userId === me;
  const who = self ? 'You' : f.userId;
  const by = f.actorId === undefined || f.actorId === f.userId ? undefined : f.actorId === me ? 'you' : f.actorId;
  switch (f.op) {
    case 'join':
      return by === undefined ? `${who} joined` : `${who} joined, added by ${by}`;
    case 'leave':
      if (f.actorId === f.userId) return `${who} left`;
      return by === undefined ? `${who} ${self ? 'were' : 'was'} removed` : `${who} ${self ? 'were' : 'was'} removed by ${by}`;
    case 'ban':
      return by === undefined ? `${who} ${self ? 'were' : 'was'} banned` : `${who} ${self ? 'were' : 'was'} banned by ${by}`;
    case 'role':
      return f.role === undefined ? undefined : `${who} ${self ? 'are' : 'is'} now ${f.role}`;
    case 'mute':
      if (typeof f.mutedUntil === 'number') return `${who} ${self ? 'are' : 'is'} muted until ${until(f.mutedUntil)}`;
      return `${who} ${self ? 'are' : 'is'} no longer muted`;
    default:
      return undefined;
  }
}
