/**
 * What every part of the chat view reads: the client, the channels opened so far, the
 * selected channel, and the version 1.1 operations this server does not support. The
 * parts (chat-*.ts) keep their own elements and state; this holds only what they share.
 */
import type { ChannelSnapshot, ChannelStore, ChatClient } from '../../clients/typescript/src/index.js';

/** Version 1.1 operations, as the connection snapshot names them. */
export type V11Op = 'MSG_EDIT' | 'MSG_DELETE' | 'MSG_REACT' | 'TYPING' | 'PRESENCE_SUB';

/** The state the parts of one signed-in user's chat view share. */
export class ChatState {
  /** The user's chatd client. */
  readonly client: ChatClient;
  /** The channels opened (their entries read) so far, by id. */
  readonly stores = new Map<string, ChannelStore>();
  /** Version 1.1 operations the server answered `unknown_type` to (the client learns of some by itself). */
  readonly localUnsupported = new Set<V11Op>();
  /** The selected channel, if any. */
  current: string | undefined;
  /** Set once the view is closed: late callbacks then change nothing. */
  closed = false;

  constructor(client: ChatClient) {
    this.client = client;
  }

  /** The user id (the token's subject). */
  get userId(): string {
    return this.client.userId;
  }

  /** The store of the selected channel, once opened. */
  currentStore(): ChannelStore | undefined {
    return this.current === undefined ? undefined : this.stores.get(this.current);
  }

  /** The selected channel's snapshot, once opened. */
  snapshot(): ChannelSnapshot | undefined {
    return this.currentStore()?.getSnapshot();
  }

  /** The operations this server does not support, sorted: those the client learned of and those refused here. */
  unsupported(): string[] {
    const all = new Set<string>([...this.client.connection.getSnapshot().unsupported, ...this.localUnsupported]);
    return [...all].sort();
  }

  /** Whether `op` may be offered (not known to be unsupported). */
  supports(op: V11Op): boolean {
    return !this.unsupported().includes(op);
  }
}
