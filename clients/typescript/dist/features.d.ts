/**
 * Which version 1.1 frame types the server understands, learned from its answers: a
 * version 1 server answers `unknown_type` to each one, in the order they were sent, and
 * any reply to a later frame shows the earlier ones were understood.
 *
 * @module
 */
import type { ClientFrame } from './protocol.js';
/** @internal A version 1.1 frame sent whose type is not known to be understood yet. */
export interface Unconfirmed {
    /** Its type. */
    readonly type: string;
    /** Its number on the connection (see {@link Features.sent}). */
    readonly frameNo: number;
    /** Its idempotency key, when it has one. */
    readonly clientMsgId?: string;
}
/** @internal The server's support of version 1.1 frame types, as far as it is known. */
export declare class Features {
    /** Types the server answered `unknown_type` to. */
    readonly unsupported: Set<string>;
    /** Types the server is known to understand. */
    readonly supported: Set<string>;
    private unconfirmed;
    private readonly onUnsupported;
    /** `onUnsupported` runs when a type joins {@link Features.unsupported}. */
    constructor(onUnsupported: () => void);
    /** Frame number `no` was sent on the current connection: remember it if its support is unknown. */
    sent(frame: ClientFrame, no: number): void;
    /** A reply to frame `no` arrived: every earlier v1.1 frame was understood. */
    confirmUpTo(no: number): void;
    /** A frame of this type was answered in kind (a TYPING, a PRESENCE, an ACK): understood. */
    confirm(type: string): void;
    /**
     * An `unknown_type` ERROR arrived: it answers the oldest unconfirmed frame, whose type
     * is then unsupported. Returns that frame, or undefined when none was waiting.
     */
    refuseOldest(): Unconfirmed | undefined;
    /** The connection dropped: what was sent on it will never be answered. */
    dropped(): void;
}
//# sourceMappingURL=features.d.ts.map