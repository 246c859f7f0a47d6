/**
 * Typing indicators (version 1.1): the user's own `TYPING` frames, throttled, and other
 * members' indicators in each channel's snapshot until they stop, send or expire.
 *
 * @module
 */
import type { ChannelCtx, Channels } from './channels.js';
import type { Connection } from './connection.js';
import type { TypingFrame } from './protocol.js';
import type { ClientContext } from './types.js';

/** @internal Typing, both ways, over the connection. */
export class TypingIndicators {
  private readonly c: ClientContext;
  private readonly conn: Connection;
  private readonly channels: Channels;

  /** Indicators of the channels, sent and received on the connection. */
  constructor(c: ClientContext, conn: Connection, channels: Channels) {
    this.c = c;
    this.conn = conn;
    this.channels = channels;
  }

  /** The user is typing in the channel: sends `start` at most once per throttle period (none in a removed channel). */
  typing(channelId: string): void {
    const ch = this.channels.ctx(channelId);
    if (this.conn.features.unsupported.has('TYPING') || ch.removed) return;
    if (ch.throttle.onInput(this.c.now())) this.conn.send({ type: 'TYPING', channelId, state: 'start' });
  }

  /** The user stopped typing (cleared the input): sends `stop` if a `start` is live. */
  stopTyping(channelId: string): void {
    const ch = this.channels.ctx(channelId);
    if (this.conn.features.unsupported.has('TYPING') || ch.removed) return;
    if (ch.throttle.onStop()) this.conn.send({ type: 'TYPING', channelId, state: 'stop' });
  }

  /** The user sends a message to the channel: the server stops the indicator when it is stored. */
  messageSent(channelId: string): void {
    this.channels.ctx(channelId).throttle.onSent();
  }

  /**
   * A message of the user was stored in the channel (its ACK): if the user typed since
   * sending, `start` goes out again, since the server's `stop` for the message ends a
   * `start` that reached it before the message was stored.
   */
  messageStored(channelId: string): void {
    const ch = this.channels.ctx(channelId);
    if (this.conn.features.unsupported.has('TYPING') || ch.removed) return;
    if (ch.throttle.onStored(this.c.now())) this.conn.send({ type: 'TYPING', channelId, state: 'start' });
  }

  /** A TYPING arrived: another member's indicator starts or stops. */
  onTyping(t: TypingFrame): void {
    this.conn.features.confirm('TYPING');
    if (t.userId === this.c.userId) return;
    const ch = this.channels.ctx(t.channelId);
    if (ch.typing.apply(t, this.c.now())) ch.store.invalidate();
    this.scheduleExpiry(ch);
  }

  /** The connection dropped: no indicator is known to be live any more. */
  dropped(): void {
    for (const ch of this.channels.all()) {
      ch.typing.expire(Number.POSITIVE_INFINITY);
      ch.store.invalidate();
    }
  }

  /** The client closed: no more expiry timers. */
  close(): void {
    for (const ch of this.channels.all()) clearTimeout(ch.typingTimer);
  }

  private scheduleExpiry(ch: ChannelCtx): void {
    clearTimeout(ch.typingTimer);
    const next = ch.typing.nextExpiry();
    if (next === undefined) return;
    ch.typingTimer = setTimeout(
      () => {
        if (ch.typing.expire(this.c.now())) ch.store.invalidate();
        this.scheduleExpiry(ch);
      },
      Math.max(0, next - this.c.now()) + 5,
    );
  }
}
