/**
 * Making channels over HTTP (protocol §13.2), with the connection's token: a group channel
 * with the user as its `owner` (`POST /v1/me/channels`), and the one direct channel of the
 * user and another user (`PUT /v1/me/direct/{userId}`). The client reads its channel list
 * right after either (`GET /v1/me/channels`), so that the channel is listed when the call
 * resolves, without waiting for a frame or the periodic read.
 *
 * @module
 */
import type { ChannelRefresh } from './channel-refresh.js';
import type { ChannelCtx } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { request } from './http.js';
import type { HelloChannel } from './protocol.js';
import type { ChannelInfo, CreateChannelOptions, DirectResult, MemberRole, MembershipOptions } from './member-types.js';
import type { ClientContext } from './types.js';

/** @internal New group channels and direct channels. */
export class NewChannels {
  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly refresher: ChannelRefresh;

  /** Requests with the connection's token; the channel list is brought up to date through `refresher`. */
  constructor(c: ClientContext, conn: Connection, refresher: ChannelRefresh) {
    this.c = c;
    this.conn = conn;
    this.refresher = refresher;
  }

  /** The direct channel with `userId`, made when there is none (see `ChatClient.direct`). */
  async direct(userId: string, options: MembershipOptions = {}): Promise<DirectResult> {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
    const path = `/v1/me/direct/${encodeURIComponent(userId)}`;
    const answer = await request(this.c.opts, this.conn, 'PUT', path, { signal: options.signal });
    const channel = parseChannelInfo(answer.body, 'PUT /v1/me/direct/{userId}');
    await this.listed(channel, 'member', options.signal);
    return { channel, created: answer.status === 201 };
  }

  /** A group channel with the user as its owner (see `ChatClient.createChannel`). */
  async create(options: CreateChannelOptions = {}): Promise<ChannelInfo> {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
    const body: { channelId?: string; name?: string; visibility?: string; members?: string[] } = {};
    if (options.channelId !== undefined) body.channelId = options.channelId;
    if (options.name !== undefined) body.name = options.name;
    if (options.visibility !== undefined) body.visibility = options.visibility;
    if (options.members !== undefined) body.members = [...options.members];
    const answer = await request(this.c.opts, this.conn, 'POST', '/v1/me/channels', { body, signal: options.signal });
    const channel = parseChannelInfo(answer.body, 'POST /v1/me/channels');
    await this.listed(channel, 'owner', options.signal);
    return channel;
  }

  /** Reads the channel list; when that fails, lists `channel` from its object, the user's role `role`. */
  private async listed(channel: ChannelInfo, role: MemberRole, signal: AbortSignal | undefined): Promise<void> {
    await this.refresher.listAfter(
      channel.channelId,
      (ch: ChannelCtx): HelloChannel => ({
        channelId: channel.channelId,
        lastSeq: Math.max(channel.lastSeq, ch.log.knownLastSeq),
        deliveredSeq: ch.deliveredSeq,
        readSeq: ch.readSeq,
        name: channel.name,
        metadata: channel.metadata,
        kind: channel.kind,
        visibility: channel.visibility,
        memberCount: channel.memberCount,
        role,
      }),
      signal,
    );
  }
}

/**
 * @internal Checks and types a channel object of the HTTP API (the answer of `what`);
 * rejects one of another shape with `internal`. Fields a server before version 1.2 does
 * not send take the contract's defaults (`group`, `private`, the members counted); fields
 * this client does not know are dropped.
 */
export function parseChannelInfo(body: unknown, what: string): ChannelInfo {
  const bad = (why: string): ChatdError => new ChatdError('internal', `${what}: ${why}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('not a JSON object');
  const b = body as Record<string, unknown>;
  const { channelId, members, lastSeq, createdAt } = b;
  const name = b.name ?? null;
  const metadata = b.metadata ?? null;
  const kind = b.kind ?? 'group';
  const visibility = b.visibility ?? 'private';
  if (typeof channelId !== 'string') throw bad('no channelId');
  if (!Array.isArray(members) || !members.every((m): m is string => typeof m === 'string')) throw bad('no members list');
  if (typeof lastSeq !== 'number' || typeof createdAt !== 'number') throw bad('no lastSeq or createdAt');
  if (name !== null && typeof name !== 'string') throw bad('a name that is not a string');
  if (metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) throw bad('metadata that is not an object');
  if (typeof kind !== 'string' || typeof visibility !== 'string') throw bad('a kind or visibility that is not a string');
  const memberCount = b.memberCount ?? members.length;
  if (typeof memberCount !== 'number') throw bad('a memberCount that is not a number');
  return {
    channelId,
    members,
    lastSeq,
    createdAt,
    name,
    metadata: metadata as Readonly<Record<string, unknown>> | null,
    kind,
    visibility,
    memberCount,
  };
}
