/**
 * The folded state of a set of `message` entries: edits, deletions and reactions folded into
 * each message, and (protocol §14) each reply's preview of the message it quotes and each
 * root's thread summary kept current as quoted messages are edited or deleted and replies
 * come or are deleted. A channel's log and a thread's replies both keep their messages here;
 * they decide which entries come in, and in what order.
 *
 * Every state has an `asOfSeq`: the entries with a seq at or below it are already in it (a
 * read's states are as of the read's `lastSeq`, a live message as of its own seq), so an
 * entry is folded into a state only when its seq is above that state's `asOfSeq`.
 *
 * @module
 */
import { type MessageAttachment } from './attachment-types.js';
import type { EntryKind, ReactionCount, ReplyPreview, ThreadSummary, WireEntry } from './protocol.js';
/** A message as the app renders it: a `message` log entry with its edits, deletion and reactions folded in. */
export interface Message {
    /** The message's id. */
    readonly messageId: string;
    /** Its channel. */
    readonly channelId: string;
    /** Its author. */
    readonly senderId: string;
    /** Its seq. */
    readonly seq: number;
    /** When it was stored. */
    readonly ts: number;
    /** The author's idempotency key; absent when it was made through an HTTP route (protocol §12, version 1.2). */
    readonly clientMsgId?: string;
    /** True when it was made with the admin token (a backend post or an admin's delete route). */
    readonly byAdmin: boolean;
    /** Current text (`""` when deleted). */
    readonly body: string;
    /** ts of the latest edit, when edited. */
    readonly editedAt: number | undefined;
    /** True when deleted (also when expired). */
    readonly deleted: boolean;
    /**
     * True when the retention sweep erased it (§19): `deleted` too. Learned from a read (a
     * read shows it so; a held message becomes expired when a later read of it does).
     */
    readonly expired: boolean;
    /** Reaction counts in order of first use, counts > 0 only. */
    readonly reactions: readonly ReactionCount[];
    /** The message it quotes (protocol §14), when a reply. */
    readonly replyTo?: string;
    /**
     * With `replyTo`: the quoted message's sender and current text (at most 200 bytes), or
     * `{body: "", deleted: true}` once it is deleted; folded as edits and deletes arrive.
     */
    readonly replyPreview?: ReplyPreview;
    /** The thread's root (protocol §14), when a reply in a thread. */
    readonly threadId?: string;
    /** A root with replies: its thread's summary, folded as replies come and are deleted. */
    readonly thread?: ThreadSummary;
    /** The users it mentions (protocol §16), as the server kept them; `[]` when none or deleted. */
    readonly mentions: readonly string[];
    /** True when it mentions every member (`@channel`); false once deleted. */
    readonly mentionAll: boolean;
    /** True when it mentions the client's user (`mentions` holds it, or `mentionAll`); false once deleted. */
    readonly mentionsMe: boolean;
    /**
     * Its files and images (protocol §15), in the order sent, each with its signed `url` (an
     * image's with `thumbnailUrl`); `[]` when none, and once deleted (the server deletes
     * their bytes with the message).
     */
    readonly attachments: readonly MessageAttachment[];
}
/** The kind of an entry (version 1 entries have none: `message`). */
export declare function entryKind(e: WireEntry): EntryKind;
/** The most bytes of UTF-8 a reply preview holds (protocol §14). */
export declare const PREVIEW_MAX_BYTES = 200;
/** `text` cut to at most `maxBytes` bytes of UTF-8, at a character (code point) boundary. */
export declare function cutUtf8(text: string, maxBytes?: number): string;
/** @internal The messages of a channel's window or of a thread, by id and in seq order, folded. */
export declare class MessageStates {
    /** The current user (for reaction `me`). */
    private readonly me;
    /** Whether modifications of messages not held are kept until their message comes (a channel's log: yes). */
    private readonly keepOrphans;
    private readonly states;
    /** message ids in seq order */
    private order;
    /** modifications whose target is not (yet) held */
    private readonly orphanMods;
    /** The held messages that quote each message id. */
    private readonly quoting;
    private cache;
    constructor(me: string, keepOrphans: boolean);
    /** Whether the message is held. */
    has(messageId: string): boolean;
    /** How many messages are held. */
    get size(): number;
    /**
     * Adds a `message` entry whose state is as of `asOf` (see the module doc); `exactIfNoReactions`:
     * the reaction holders are known from its creation on when the entry lists none. `atEnd`: it
     * is above every held message (else it is put in seq order). Its root's summary counts it
     * when the root's state is older than it.
     */
    addMessage(e: WireEntry, asOf: number, exactIfNoReactions: boolean, atEnd: boolean): void;
    /**
     * Folds an `edit`, `delete` or `reaction` entry into its target (when the target's state is
     * older than it), and an edit's or delete's into the previews of the messages quoting the
     * target. A target not held: kept for it when orphans are kept, else dropped.
     */
    modify(e: WireEntry): void;
    /** The held messages in seq order, folded. The same array until something changes. */
    messages(): readonly Message[];
    /** The folded state of one message, if held. */
    message(messageId: string): Message | undefined;
    /**
     * Replaces a held message's attachments with those of a read of its stored entry (fresh
     * signed URLs; the sender's own entry made from its ACK had none). Nothing for a message
     * not held or deleted. Returns whether it changed anything.
     */
    setAttachments(messageId: string, attachments: unknown): boolean;
    /**
     * A read shows a held message expired (§19: the retention sweep erased it, with no
     * entry): it is deleted and expired from now on, as a delete makes it (no text,
     * reactions, mentions or attachments; the messages quoting it preview it deleted; its
     * root counts one reply fewer). Nothing for a message not held, or an entry not
     * `expired`. Returns whether it changed anything.
     */
    expire(e: WireEntry): boolean;
    /** Counts held messages above `afterSeq` that are not deleted and not sent by the user. */
    countUnreadAbove(afterSeq: number): number;
    /** Messages of others, not deleted, above `afterSeq` that mention the user (protocol §16). */
    countMentionsAbove(afterSeq: number): number;
    private insertOrdered;
    private newState;
    private fold;
    /** An edit or delete of `targetId`: the previews of the held messages quoting it follow. */
    private foldPreviews;
    /**
     * A reply newer than the root's state: the root's summary names it as the last reply and its
     * sender as a participant, and counts it when `counts` (a reply read already deleted has its
     * delete in its state, which will not be folded again: the server's `replyCount` leaves it out).
     */
    private replyAdded;
    private view;
}
//# sourceMappingURL=message-states.d.ts.map