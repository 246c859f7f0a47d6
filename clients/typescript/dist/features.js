/** The frame types a version 1 server does not know. */
const V11_TYPES = new Set(['MSG_EDIT', 'MSG_DELETE', 'MSG_REACT', 'TYPING', 'PRESENCE_SUB']);
/** @internal The server's support of version 1.1 frame types, as far as it is known. */
export class Features {
    /** Types the server answered `unknown_type` to. */
    unsupported = new Set();
    /** Types the server is known to understand. */
    supported = new Set();
    unconfirmed = [];
    onUnsupported;
    /** `onUnsupported` runs when a type joins {@link Features.unsupported}. */
    constructor(onUnsupported) {
        this.onUnsupported = onUnsupported;
    }
    /** Frame number `no` was sent on the current connection: remember it if its support is unknown. */
    sent(frame, no) {
        if (!V11_TYPES.has(frame.type) || this.supported.has(frame.type))
            return;
        const entry = { type: frame.type, frameNo: no };
        if ('clientMsgId' in frame)
            entry.clientMsgId = frame.clientMsgId;
        this.unconfirmed.push(entry);
    }
    /** A reply to frame `no` arrived: every earlier v1.1 frame was understood. */
    confirmUpTo(no) {
        if (this.unconfirmed.length === 0)
            return;
        this.unconfirmed = this.unconfirmed.filter((u) => {
            if (u.frameNo < no) {
                this.supported.add(u.type);
                return false;
            }
            return true;
        });
    }
    /** A frame of this type was answered in kind (a TYPING, a PRESENCE, an ACK): understood. */
    confirm(type) {
        this.supported.add(type);
    }
    /**
     * An `unknown_type` ERROR arrived: it answers the oldest unconfirmed frame, whose type
     * is then unsupported. Returns that frame, or undefined when none was waiting.
     */
    refuseOldest() {
        const u = this.unconfirmed.shift();
        if (u === undefined)
            return undefined;
        this.unsupported.add(u.type);
        this.onUnsupported();
        return u;
    }
    /** The connection dropped: what was sent on it will never be answered. */
    dropped() {
        this.unconfirmed = [];
    }
}
//# sourceMappingURL=features.js.map