/**
 * Receipts: the user's own watermarks (`MSG_READ`, `MSG_DELIVERED` sent by itself for
 * opened channels) and other members' watermarks from `RECEIPT` frames.
 *
 * @module
 */
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import type { ReceiptFrame } from './protocol.js';
import type { Watermarks } from './snapshot-types.js';
import type { ClientContext } from './types.js';

/** Applies a receipt to a user's watermarks: never backwards; read implies delivered. Returns `prev` when nothing moved. */
export function applyReceipt(prev: Watermarks, kind: 'delivered' | 'read', seq: number): Watermarks {
  const readSeq = kind === 'read' ? Math.max(prev.readSeq, seq) : prev.readSeq;
  const deliveredSeq = Math.max(prev.deliveredSeq, readSeq, kind === 'delivered' ? seq : 0);
  if (readSeq === prev.readSeq && deliveredSeq === prev.deliveredSeq) return prev;
  return Object.freeze({ deliveredSeq, readSeq });
}

/** @internal The user's watermarks going out, and others' coming in. */
export class Receipts {
  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly channels: Channels;
  private deliveredTimer: ReturnType<typeof setTimeout> | undefined;

  /** Receipts over the connection, for the channels. */
  constructor(c: ClientContext, conn: Connection, channels: Channels) {
    this.c = c;
    this.conn = conn;
    this.channels = channels;
  }

  /** Marks the channel read up to its newest held entry (monotonic: never moves back). */
  markRead(channelId: string): void {
    const ch = this.channels.ctx(channelId);
    const id = ch.log.highEntryId();
    const seq = ch.log.high;
    if (id === undefined || seq <= ch.readSeq) return;
    ch.readSeq = seq;
    ch.deliveredSeq = Math.max(ch.deliveredSeq, seq);
    ch.deliveredSent = Math.max(ch.deliveredSent, seq);
    ch.store.invalidate();
    this.conn.send({ type: 'MSG_READ', messageId: id });
  }

  /**
   * New entries were appended to an opened channel: soon (100 ms, for all channels at
   * once) send `MSG_DELIVERED` for the newest entry of each opened channel that moved,
   * unless `autoDelivered` is off.
   */
  scheduleDelivered(): void {
    if (this.c.opts.autoDelivered === false || this.deliveredTimer !== undefined) return;
    this.deliveredTimer = setTimeout(() => {
      this.deliveredTimer = undefined;
      for (const ch of this.channels.all()) {
        const id = ch.log.highEntryId();
        if (!ch.opened || id === undefined || ch.log.high <= ch.deliveredSent) continue;
        if (this.conn.send({ type: 'MSG_DELIVERED', messageId: id }) !== 0) {
          ch.deliveredSent = ch.log.high;
          ch.deliveredSeq = Math.max(ch.deliveredSeq, ch.log.high);
          ch.store.invalidate();
        }
      }
    }, 100);
  }

  /** A RECEIPT arrived: the user's own (another session's) or another member's watermark moved. */
  onReceipt(r: ReceiptFrame): void {
    const ch = this.channels.ctx(r.channelId);
    if (r.userId === this.c.userId) {
      if (r.kind === 'read') ch.readSeq = Math.max(ch.readSeq, r.seq);
      ch.deliveredSeq = Math.max(ch.deliveredSeq, r.seq);
      ch.store.invalidate();
      return;
    }
    const prev = ch.receipts.get(r.userId) ?? { deliveredSeq: 0, readSeq: 0 };
    const next = applyReceipt(prev, r.kind, r.seq);
    if (next !== prev) {
      ch.receipts.set(r.userId, next);
      ch.store.invalidate();
      this.c.events.emit('receipt', r);
    }
  }

  /** The client closed: no more `MSG_DELIVERED`. */
  close(): void {
    clearTimeout(this.deliveredTimer);
  }
}
