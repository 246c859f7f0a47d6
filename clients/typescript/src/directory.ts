/**
 * Finding, joining and leaving channels over HTTP (protocol §13.2), with the connection's
 * token: the directory of public channels (`GET /v1/directory`), joining one (`PUT
 * /v1/me/channels/{channelId}`) and leaving one (`DELETE /v1/me/channels/{channelId}`).
 * After its own join the client lists the channel before the call resolves (from the
 * server's `CHANNEL_ADDED`, or, when that has not come yet, by reading `GET
 * /v1/me/channels` once); after its own leave it takes the channel from the list at once.
 *
 * @module
 */
import type { ChannelRefresh } from './channel-refresh.js';
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { requestJson } from './http.js';
import type { DirectoryChannel, DirectoryOptions, DirectoryPage, MembershipOptions } from './member-types.js';
import type { ClientContext } from './types.js';

/** @internal The directory, joining and leaving. */
export class Directory {
  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly channels: Channels;
  private readonly refresher: ChannelRefresh;

  /** Requests with the connection's token; the channel list is brought up to date through `refresher`. */
  constructor(c: ClientContext, conn: Connection, channels: Channels, refresher: ChannelRefresh) {
    this.c = c;
    this.conn = conn;
    this.channels = channels;
    this.refresher = refresher;
  }

  /** One page of public channels (see `ChatClient.directory`). */
  async page(options: DirectoryOptions = {}): Promise<DirectoryPage> {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
    const q = new URLSearchParams();
    if (options.q !== undefined && options.q !== '') q.set('q', options.q);
    if (options.after !== undefined) q.set('after', options.after);
    if (options.limit !== undefined) q.set('limit', String(options.limit));
    const query = q.toString() === '' ? '' : `?${q.toString()}`;
    const body = await requestJson(this.c.opts, this.conn, 'GET', `/v1/directory${query}`, options.signal);
    return parseDirectoryPage(body);
  }

  /**
   * Joins a public channel, then reads the channel list (see `ChatClient.join`). When that
   * read fails, the channel is listed from what the join says (a public group, the user a
   * `member`) until the next read.
   */
  async join(channelId: string, options: MembershipOptions = {}): Promise<void> {
    await this.membership('PUT', channelId, options.signal);
    await this.refresher.listAfter(
      channelId,
      (ch) => ({
        channelId,
        lastSeq: ch.log.knownLastSeq,
        deliveredSeq: ch.deliveredSeq,
        readSeq: ch.readSeq,
        kind: 'group',
        visibility: 'public',
        role: 'member',
      }),
      options.signal,
    );
  }

  /**
   * Leaves a channel: the channel is removed from the list at once (`channelRemoved`,
   * reason `left`; see `ChatClient.leave`). The server's `CHANNEL_REMOVED` says the same.
   */
  async leave(channelId: string, options: MembershipOptions = {}): Promise<void> {
    await this.membership('DELETE', channelId, options.signal);
    if (this.conn.state === 'closed') return;
    const ch = this.channels.get(channelId);
    if (ch !== undefined) this.channels.markRemoved(ch, 'left');
  }

  /** `PUT` or `DELETE /v1/me/channels/{channelId}`: resolves on the 204. */
  private async membership(method: 'PUT' | 'DELETE', channelId: string, signal: AbortSignal | undefined): Promise<void> {
    if (this.conn.state === 'closed') throw new ChatdError('closed', 'client closed');
    await requestJson(this.c.opts, this.conn, method, `/v1/me/channels/${encodeURIComponent(channelId)}`, signal);
  }
}

/**
 * @internal Checks and types the body of `GET /v1/directory`; rejects a body of another
 * shape with `internal`. Channels keep only the fields this client knows.
 */
export function parseDirectoryPage(body: unknown): DirectoryPage {
  const bad = (what: string): ChatdError => new ChatdError('internal', `GET /v1/directory: ${what}`);
  if (typeof body !== 'object' || body === null) throw bad('not a JSON object');
  const b = body as { channels?: unknown; hasMore?: unknown };
  if (!Array.isArray(b.channels)) throw bad('no channels list');
  if (typeof b.hasMore !== 'boolean') throw bad('no hasMore');
  const channels = (b.channels as unknown[]).map((x): DirectoryChannel => {
    const r = (typeof x === 'object' && x !== null ? x : {}) as Record<string, unknown>;
    const { channelId, memberCount, lastSeq } = r;
    const name = r.name ?? null;
    if (typeof channelId !== 'string' || typeof memberCount !== 'number' || typeof lastSeq !== 'number' || (name !== null && typeof name !== 'string')) {
      throw bad(`a channel of another shape: ${JSON.stringify(x)}`);
    }
    return { channelId, name, memberCount, lastSeq };
  });
  return { channels, hasMore: b.hasMore };
}
