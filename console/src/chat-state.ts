/**
 * What every part of the chat view reads: the client, the channels opened so far, the
 * selected channel, the other user of each direct channel, what a channel is called on
 * screen (also once the user is no longer in it), who removed the user from a channel, and
 * the version 1.1 operations this server does not support. The parts
 * (chat-*.ts) keep their own elements and state; this holds only what they share.
 */
import type { ChannelSnapshot, ChannelStore, ChannelSummary, ChatClient } from '../../clients/typescript/src/index.js';

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
  /**
   * The other user of each direct channel, once known (from `direct`'s answer, or its
   * members read); the user's own id for the user's channel with itself.
   */
  readonly peers = new Map<string, string>();
  /**
   * Who removed the user from each channel it was removed from (the `actorId` of its
   * `MEMBER` leave or ban, which comes just before `CHANNEL_REMOVED`): said in the notice.
   */
  readonly removedBy = new Map<string, string | undefined>();
  /**
   * The users this user blocks (`GET /v1/me/blocks`, read at start, and changed by Block and
   * Unblock): their messages in group channels are hidden (protocol §17: the client hides them).
   */
  readonly blocked = new Set<string>();
  /** What each channel was last called on screen: a removed channel keeps its name in notices. */
  private readonly labels = new Map<string, string>();

  constructor(client: ChatClient) {
    this.client = client;
  }

  /** The user id (the token's subject). */
  get userId(): string {
    return this.client.userId;
  }

  /** The channel list's entry of a channel, if the user is in it. */
  summary(id: string): ChannelSummary | undefined {
    return this.client.channelList.getSnapshot().find((c) => c.channelId === id);
  }

  /**
   * What a channel is called on screen: `@ bob` for a direct channel (`@ …` until the other
   * user is known), `# name` for a group with a name, else `# id`.
   */
  label(id: string): string {
    const s = this.summary(id);
    if (s === undefined) return this.labels.get(id) ?? `# ${id}`;
    const label = s.kind === 'direct' ? `@ ${this.peers.get(id) ?? '…'}` : `# ${s.name ?? id}`;
    this.labels.set(id, label);
    return label;
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
