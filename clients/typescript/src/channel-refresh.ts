/**
 * Reading the user's channels over HTTP (`GET /v1/me/channels`): on demand
 * (`refreshChannels`), and once right after a change of the user's own that put it in a
 * channel (a join, a new group or direct channel) when the server's `CHANNEL_ADDED` has
 * not listed it yet. There is no periodic read: a server of version 1.2 announces every
 * channel the user is added to or removed from while connected (`CHANNEL_ADDED`,
 * `CHANNEL_REMOVED`), and `HELLO` lists them all after a reconnect.
 *
 * @module
 */
import type { ChannelCtx, Channels } from './channels.js';
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { getJson } from './http.js';
import type { HelloChannel } from './protocol.js';
import type { Sync } from './sync.js';
import type { ChannelSummary } from './snapshot-types.js';
import type { ClientContext } from './types.js';

/** @internal The channel list, read from the user HTTP routes. */
export class ChannelRefresh {
  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly channels: Channels;
  private readonly sync: Sync;

  /** Refreshes the channels with the connection's token; opened channels catch up through `sync`. */
  constructor(c: ClientContext, conn: Connection, channels: Channels, sync: Sync) {
    this.c = c;
    this.conn = conn;
    this.channels = channels;
    this.sync = sync;
  }

  /** Reads `GET /v1/me/channels` and brings the channels up to date (see `ChatClient.refreshChannels`). */
  async refresh(signal?: AbortSignal): Promise<readonly ChannelSummary[]> {
    const startEpoch = this.channels.epoch;
    const body = await getJson(this.c.opts, this.conn, '/v1/me/channels', signal);
    const list = (body as { channels?: unknown } | undefined)?.channels;
    if (!Array.isArray(list)) throw new ChatdError('internal', 'GET /v1/me/channels: no channels list');
    if (this.conn.state !== 'closed') this.apply(list as HelloChannel[], startEpoch);
    return this.channels.list.getSnapshot();
  }

  /**
   * After a change of the user's own that put it in `channelId` (a join, a new group or
   * direct channel): when the channel is listed already (the server's `CHANNEL_ADDED`
   * came before the change's answer, or the user was in it before), nothing more; else
   * reads the list at once, so that the channel is listed (`channelAdded`) when the
   * caller resolves. When that read fails, a channel not listed yet is listed from
   * `entry(ch)` (what the change's answer says of it) until its `CHANNEL_ADDED`, the next
   * `HELLO` or read; an `aborted` read still rejects (the change was made all the same).
   */
  async listAfter(channelId: string, entry: (ch: ChannelCtx) => HelloChannel, signal?: AbortSignal): Promise<void> {
    const known = this.channels.get(channelId);
    if (known !== undefined && !known.removed && known.hello !== undefined && this.conn.state !== 'closed') return;
    try {
      await this.refresh(signal);
    } catch (e) {
      if (this.conn.state === 'closed') return;
      const ch = this.channels.ctx(channelId);
      if (ch.removed || ch.hello === undefined) {
        ch.removed = false;
        this.channels.takeChannelState(ch, entry(ch));
        this.channels.markListed(ch);
        if (ch.opened) this.sync.resume(ch);
      }
      if (e instanceof ChatdError && e.code === 'aborted') throw e;
    }
  }

  /**
   * Brings the list up to date with `GET /v1/me/channels`, read after `epoch` was
   * `startEpoch`: a listing or removal seen since (a live frame) is newer than the read
   * and wins over it.
   */
  private apply(list: readonly HelloChannel[], startEpoch: number): void {
    const inList = new Set<string>();
    for (const c of list) {
      if (typeof c.channelId !== 'string' || typeof c.lastSeq !== 'number') continue;
      inList.add(c.channelId);
      const ch = this.channels.ctx(c.channelId);
      this.channels.moderation.stated(c.channelId, c.postingRole, c.slowModeMs, c.retentionSecs);
      if (ch.removed || ch.hello === undefined) {
        if (ch.removedEpoch > startEpoch) continue;
        ch.removed = false;
        this.channels.takeChannelState(ch, c);
      } else if (c.readSeq >= ch.readSeq) {
        this.channels.takeChannelState(ch, c);
      } else {
        // our MSG_READ is newer than this read: keep the unread base, take the rest
        const { name, metadata, kind, visibility, memberCount, role, notify, snoozeUntil } = c;
        ch.hello = { ...ch.hello, name, metadata, kind, visibility, memberCount, role, notify, snoozeUntil };
        ch.log.noteLastSeq(c.lastSeq);
        ch.store.invalidate();
      }
      this.channels.markListed(ch);
      if (ch.opened) this.sync.resume(ch);
    }
    for (const ch of [...this.channels.all()]) {
      if (inList.has(ch.id) || ch.removed || ch.hello === undefined || ch.listedEpoch > startEpoch) continue;
      this.channels.markRemoved(ch);
    }
  }
}
