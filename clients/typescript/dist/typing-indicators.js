/** @internal Typing, both ways, over the connection. */
export class TypingIndicators {
    c;
    conn;
    channels;
    /** Indicators of the channels, sent and received on the connection. */
    constructor(c, conn, channels) {
        this.c = c;
        this.conn = conn;
        this.channels = channels;
    }
    /** The user is typing in the channel: sends `start` at most once per throttle period (none in a removed channel). */
    typing(channelId) {
        const ch = this.channels.ctx(channelId);
        if (this.conn.features.unsupported.has('TYPING') || ch.removed)
            return;
        if (ch.throttle.onInput(this.c.now()))
            this.conn.send({ type: 'TYPING', channelId, state: 'start' });
    }
    /** The user stopped typing (cleared the input): sends `stop` if a `start` is live. */
    stopTyping(channelId) {
        const ch = this.channels.ctx(channelId);
        if (this.conn.features.unsupported.has('TYPING') || ch.removed)
            return;
        if (ch.throttle.onStop())
            this.conn.send({ type: 'TYPING', channelId, state: 'stop' });
    }
    /** The user sends a message to the channel: the server stops the indicator when it is stored. */
    messageSent(channelId) {
        this.channels.ctx(channelId).throttle.onSent();
    }
    /**
     * A message of the user was stored in the channel (its ACK): if the user typed since
     * sending, `start` goes out again, since the server's `stop` for the message ends a
     * `start` that reached it before the message was stored.
     */
    messageStored(channelId) {
        const ch = this.channels.ctx(channelId);
        if (this.conn.features.unsupported.has('TYPING') || ch.removed)
            return;
        if (ch.throttle.onStored(this.c.now()))
            this.conn.send({ type: 'TYPING', channelId, state: 'start' });
    }
    /** A TYPING arrived: another member's indicator starts or stops. */
    onTyping(t) {
        this.conn.features.confirm('TYPING');
        if (t.userId === this.c.userId)
            return;
        const ch = this.channels.ctx(t.channelId);
        if (ch.typing.apply(t, this.c.now()))
            ch.store.invalidate();
        this.scheduleExpiry(ch);
    }
    /** The connection dropped: no indicator is known to be live any more. */
    dropped() {
        for (const ch of this.channels.all()) {
            ch.typing.expire(Number.POSITIVE_INFINITY);
            ch.store.invalidate();
        }
    }
    /** The client closed: no more expiry timers. */
    close() {
        for (const ch of this.channels.all())
            clearTimeout(ch.typingTimer);
    }
    scheduleExpiry(ch) {
        clearTimeout(ch.typingTimer);
        const next = ch.typing.nextExpiry();
        if (next === undefined)
            return;
        ch.typingTimer = setTimeout(() => {
            if (ch.typing.expire(this.c.now()))
                ch.store.invalidate();
            this.scheduleExpiry(ch);
        }, Math.max(0, next - this.c.now()) + 5);
    }
}
//# sourceMappingURL=typing-indicators.js.map