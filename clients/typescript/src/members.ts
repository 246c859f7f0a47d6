/**
 * A channel's members over HTTP (protocol §13.1), with the connection's token: reading
 * them (`GET /v1/channels/{channelId}/members`), one page at a time or all of them, each
 * with its role and watermarks, so that an app that opens a channel can show who is in it
 * and who read how far without waiting for live `RECEIPT`s; and, for a channel's owners
 * and moderators, adding and removing members and setting their roles (`PUT` and `DELETE
 * /v1/channels/{channelId}/members/{userId}`). The server's `MEMBER` frames bring the
 * change to the channel list (member count, the user's own role) and the member lists.
 *
 * @module
 */
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { getJson, request } from './http.js';
import type {
  AllMembersOptions,
  Member,
  MemberList,
  MemberRole,
  MembersOptions,
  MembersPage,
  MembershipOptions,
} from './member-types.js';
import type { ClientContext } from './types.js';

/** The largest page the route gives (and {@link Members.all}'s default page size). */
const MAX_PAGE = 500;

/** @internal A channel's members, read and changed through the user HTTP routes. */
export class Members {
  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly channels: Channels;

  /** Requests with the connection's token. */
  constructor(c: ClientContext, conn: Connection, channels: Channels) {
    this.c = c;
    this.conn = conn;
    this.channels = channels;
  }

  /**
   * `PUT /v1/channels/{channelId}/members/{userId}`, with `{"role"}` when `role` is given
   * (see `ChatClient.addMember` and `setMemberRole`).
   */
  async put(channelId: string, userId: string, role: MemberRole | undefined, options: MembershipOptions = {}): Promise<void> {
    this.notClosed();
    const body = role === undefined ? undefined : { role };
    await request(this.c.opts, this.conn, 'PUT', memberPath(channelId, userId), { body, signal: options.signal });
  }

  /**
   * `DELETE /v1/channels/{channelId}/members/{userId}` (see `ChatClient.removeMember`); the
   * user's own removal takes the channel from the list at once (reason `removed`), as a
   * leave does.
   */
  async remove(channelId: string, userId: string, options: MembershipOptions = {}): Promise<void> {
    this.notClosed();
    await request(this.c.opts, this.conn, 'DELETE', memberPath(channelId, userId), { signal: options.signal });
    if (this.conn.state === 'closed') return;
    if (userId === this.c.userId) {
      const ch = this.channels.get(channelId);
      if (ch !== undefined) this.channels.markRemoved(ch, 'removed');
    }
  }

  /** Rejects with `closed` after `ChatClient.close`. */
  private notClosed(): void {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
  }

  /** One page (see `ChatClient.members`). */
  async page(channelId: string, options: MembersOptions = {}): Promise<MembersPage> {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
    const q = new URLSearchParams();
    if (options.after !== undefined) q.set('after', options.after);
    if (options.limit !== undefined) q.set('limit', String(options.limit));
    const query = q.toString() === '' ? '' : `?${q.toString()}`;
    const path = `/v1/channels/${encodeURIComponent(channelId)}/members`;
    const body = await getJson(this.c.opts, this.conn, path + query, options.signal);
    const page = parseMembersPage(body);
    const me = page.members.find((m) => m.userId === this.c.userId);
    if (me !== undefined) this.channels.moderation.onMemberRead(channelId, me.mutedUntil, page.atSeq);
    return page;
  }

  /** Every member, page after page (see `ChatClient.allMembers`). */
  async all(channelId: string, options: AllMembersOptions = {}): Promise<MemberList> {
    const limit = options.pageSize ?? MAX_PAGE;
    const members: Member[] = [];
    let atSeq = Number.POSITIVE_INFINITY;
    let after: string | undefined;
    for (;;) {
      const opts: { after?: string; limit: number; signal?: AbortSignal } = { limit };
      if (after !== undefined) opts.after = after;
      if (options.signal !== undefined) opts.signal = options.signal;
      const page = await this.page(channelId, opts);
      members.push(...page.members);
      atSeq = Math.min(atSeq, page.atSeq);
      const last = page.members[page.members.length - 1];
      if (!page.hasMore) break;
      // a page that does not move on would be asked for forever (user ids are ASCII: JS order is byte order)
      if (last === undefined || (after !== undefined && !(last.userId > after))) {
        throw new ChatdError('internal', 'GET /v1/channels/{channelId}/members: hasMore without a later member');
      }
      after = last.userId;
    }
    return { members, atSeq: Number.isFinite(atSeq) ? atSeq : 0 };
  }
}

/** The route of one member of a channel. */
function memberPath(channelId: string, userId: string): string {
  return `/v1/channels/${encodeURIComponent(channelId)}/members/${encodeURIComponent(userId)}`;
}

/**
 * @internal Checks and types the body of `GET /v1/channels/{channelId}/members`; rejects a
 * body of another shape with `internal`. Members keep only the fields this client knows
 * (`mutedUntil` when the server shows one).
 */
export function parseMembersPage(body: unknown): MembersPage {
  const bad = (what: string): ChatdError => new ChatdError('internal', `GET /v1/channels/{channelId}/members: ${what}`);
  if (typeof body !== 'object' || body === null) throw bad('not a JSON object');
  const b = body as { members?: unknown; hasMore?: unknown; atSeq?: unknown };
  if (!Array.isArray(b.members)) throw bad('no members list');
  if (typeof b.hasMore !== 'boolean') throw bad('no hasMore');
  if (typeof b.atSeq !== 'number') throw bad('no atSeq');
  const members = (b.members as unknown[]).map((m): Member => {
    const r = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>;
    const { userId, role, joinedAt, deliveredSeq, readSeq, mutedUntil } = r;
    if (
      typeof userId !== 'string' ||
      typeof role !== 'string' ||
      typeof joinedAt !== 'number' ||
      typeof deliveredSeq !== 'number' ||
      typeof readSeq !== 'number'
    ) {
      throw bad(`a member of another shape: ${JSON.stringify(m)}`);
    }
    const member: Member = { userId, role, joinedAt, deliveredSeq, readSeq };
    return typeof mutedUntil === 'number' ? { ...member, mutedUntil } : member;
  });
  return { members, hasMore: b.hasMore, atSeq: b.atSeq };
}
