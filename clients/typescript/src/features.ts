/**
 * Which version 1.1 frame types the server understands, learned from its answers: a
 * version 1 server answers `unknown_type` to each one, in the order they were sent, and
 * any reply to a later frame shows the earlier ones were understood.
 *
 * @module
 */
import type { ClientFrame } from './protocol.js';

/** The frame types a version 1 server does not know. */
const V11_TYPES: ReadonlySet<string> = new Set(['MSG_EDIT', 'MSG_DELETE', 'MSG_REACT', 'TYPING', 'PRESENCE_SUB']);

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
export class Features {
  /** Types the server answered `unknown_type` to. */
  readonly unsupported = new Set<string>();
  /** Types the server is known to understand. */
  readonly supported = new Set<string>();
  private unconfirmed: Unconfirmed[] = [];
  private readonly onUnsupported: () => void;

  /** `onUnsupported` runs when a type joins {@link Features.unsupported}. */
  constructor(onUnsupported: () => void) {
    this.onUnsupported = onUnsupported;
  }

  /** Frame number `no` was sent on the current connection: remember it if its support is unknown. */
  sent(frame: ClientFrame, no: number): void {
    if (!V11_TYPES.has(frame.type) || this.supported.has(frame.type)) return;
    const entry: { type: string; frameNo: number; clientMsgId?: string } = { type: frame.type, frameNo: no };
    if ('clientMsgId' in frame) entry.clientMsgId = frame.clientMsgId;
    this.unconfirmed.push(entry);
  }

  /** A reply to frame `no` arrived: every earlier v1.1 frame was understood. */
  confirmUpTo(no: number): void {
    if (this.unconfirmed.length === 0) return;
    this.unconfirmed = this.unconfirmed.filter((u) => {
      if (u.frameNo < no) {
        this.supported.add(u.type);
        return false;
      }
      return true;
    });
  }

  /** A frame of this type was answered in kind (a TYPING, a PRESENCE, an ACK): understood. */
  confirm(type: string): void {
    this.supported.add(type);
  }

  /**
   * An `unknown_type` ERROR arrived: it answers the oldest unconfirmed frame, whose type
   * is then unsupported. Returns that frame, or undefined when none was waiting.
   */
  refuseOldest(): Unconfirmed | undefined {
    const u = this.unconfirmed.shift();
    if (u === undefined) return undefined;
    this.unsupported.add(u.type);
    this.onUnsupported();
    return u;
  }

  /** The connection dropped: what was sent on it will never be answered. */
  dropped(): void {
    this.unconfirmed = [];
  }
}
