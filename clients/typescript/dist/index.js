/**
 * chatd-client: the client half of the chatd protocol (versions 1 and 1.1, and of 1.2 the
 * channels' kinds, visibility and roles, the members route and member changes, the
 * membership frames `MEMBER`, `CHANNEL_ADDED` and `CHANNEL_REMOVED` with live member
 * lists, the directory, joining and leaving, new group and direct channels, and moderation:
 * mutes, bans, posting rules, moderators' deletes, blocks and flags; search; and attachments) for browsers
 * and Node >= 20. See README.md.
 *
 * @packageDocumentation
 */
export { ChatClient } from './client.js';
export { ChannelStore } from './channel-store.js';
export { jwtSubject } from './connection.js';
export { uuidv7 } from './ids.js';
export { applyReceipt } from './receipts.js';
export { computeUnread } from './unread.js';
export { computeUnreadMentions, mentionFields, mentionsUser } from './mentions.js';
export { foldMemberFrame, foldReceipt, memberFrameShown } from './member-lists.js';
export { decodeChannelAddedFrame, decodeChannelRemovedFrame, decodeHelloChannel, decodeMemberFrame, decodeMembershipFrame, } from './membership-frames.js';
export { Moderation } from './moderation.js';
export { Attachments, } from './attachments.js';
export { DEFAULT_MAX_UPLOADS_IN_FLIGHT, DEFAULT_UPLOAD_RETRY_BACKOFF, UPLOAD_IN_FLIGHT_RETRIES } from './upload-queue.js';
export { DEFAULT_ATTACHMENT_TYPES, IMAGE_TYPES, isImageType, parseMessageAttachments, signedExpiry, } from './attachment-types.js';
export { SEARCH_Q_MAX_BYTES } from './search.js';
export { ChatdError, RETRYABLE_CODES } from './errors.js';
export { backoffDelay } from './backoff.js';
export { ChannelLog, entryKind } from './log.js';
export { cutUtf8, PREVIEW_MAX_BYTES } from './message-states.js';
export { ThreadLog } from './threads.js';
export { IndexedDBOutboxStorage, MemoryOutboxStorage, sendOrder, } from './outbox.js';
export { platformWriteAheadStore } from './outbox-wal.js';
export { TypingThrottle, TypingTracker } from './typing.js';
export { Emitter } from './store.js';
export * from './protocol.js';
export { parseServerFrame } from './frame-parse.js';
//# sourceMappingURL=index.js.map