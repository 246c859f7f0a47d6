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
export declare function applyReceipt(prev: Watermarks, kind: 'delivered' | 'read', seq: number): Watermarks;
/** @internal The user's watermarks going out, and others' coming in. */
export declare class Receipts {
    private readonly c;
    private readonly conn;
    private readonly channels;
    private deliveredTimer;
    /** Receipts over the connection, for the channels. */
    constructor(c: ClientContext, conn: Connection, channels: Channels);
    /** Marks the channel read up to its newest held entry (monotonic: never moves back). */
    markRead(channelId: string): void;
    /**
     * New entries were appended to an opened channel: soon (100 ms, for all channels at
     * once) send `MSG_DELIVERED` for the newest entry of each opened channel that moved,
     * unless `autoDelivered` is off.
     */
    scheduleDelivered(): void;
    /** A RECEIPT arrived: the user's own (another session's) or another member's watermark moved. */
    onReceipt(r: ReceiptFrame): void;
    /** The client closed: no more `MSG_DELIVERED`. */
    close(): void;
}
//# sourceMappingURL=receipts.d.ts.map