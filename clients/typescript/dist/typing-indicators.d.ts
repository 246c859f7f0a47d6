/**
 * Typing indicators (version 1.1): the user's own `TYPING` frames, throttled, and other
 * members' indicators in each channel's snapshot until they stop, send or expire.
 *
 * @module
 */
import type { Channels } from './channels.js';
import type { Connection } from './connection.js';
import type { TypingFrame } from './protocol.js';
import type { ClientContext } from './types.js';
/** @internal Typing, both ways, over the connection. */
export declare class TypingIndicators {
    private readonly c;
    private readonly conn;
    private readonly channels;
    /** Indicators of the channels, sent and received on the connection. */
    constructor(c: ClientContext, conn: Connection, channels: Channels);
    /** The user is typing in the channel: sends `start` at most once per throttle period (none in a removed channel). */
    typing(channelId: string): void;
    /** The user stopped typing (cleared the input): sends `stop` if a `start` is live. */
    stopTyping(channelId: string): void;
    /** The user sends a message to the channel: the server stops the indicator when it is stored. */
    messageSent(channelId: string): void;
    /**
     * A message of the user was stored in the channel (its ACK): if the user typed since
     * sending, `start` goes out again, since the server's `stop` for the message ends a
     * `start` that reached it before the message was stored.
     */
    messageStored(channelId: string): void;
    /** A TYPING arrived: another member's indicator starts or stops. */
    onTyping(t: TypingFrame): void;
    /** The connection dropped: no indicator is known to be live any more. */
    dropped(): void;
    /** The client closed: no more expiry timers. */
    close(): void;
    private scheduleExpiry;
}
//# sourceMappingURL=typing-indicators.d.ts.map