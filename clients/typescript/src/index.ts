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
export { computeUnread, type UnreadInputs } from './unread.js';
export { computeUnreadMentions, mentionFields, mentionsUser, type MentionFields, type UnreadMentionInputs } from './mentions.js';
export type { NotifySettingsChange } from './notify-settings.js';
export { foldMemberFrame, foldReceipt, memberFrameShown } from './member-lists.js';
export {
  decodeChannelAddedFrame,
  decodeChannelRemovedFrame,
  decodeHelloChannel,
  decodeMemberFrame,
  decodeMembershipFrame,
} from './membership-frames.js';
export type {
  ChatClientEvents,
  ChatClientOptions,
  OnlineEventSource,
  WebSocketConstructor,
  WebSocketLike,
  WebSocketHandler,
} from './types.js';
export type {
  ChannelSnapshot,
  ChannelSummary,
  NotifySettings,
  ConnectionSnapshot,
  ConnectionState,
  OutgoingMessage,
  Presence,
  MessageSendOptions,
  SendOptions,
  SentEntry,
  ThreadSnapshot,
  ThreadStore,
  Watermarks,
} from './snapshot-types.js';
export type {
  AddMemberOptions,
  AllMembersOptions,
  ChannelInfo,
  CreateChannelOptions,
  DirectResult,
  DirectoryChannel,
  DirectoryOptions,
  DirectoryPage,
  Member,
  MemberList,
  MemberListSnapshot,
  MemberListStore,
  MemberRole,
  MembersOptions,
  MembersPage,
  MembershipOptions,
} from './member-types.js';
export { Moderation } from './moderation.js';
export {
  Attachments,
  type AttachmentData,
  type AttachmentUrlOptions,
  type DownloadOptions,
  type FileToSend,
  type SendFilesOptions,
  type UploadOptions,
  type UploadProgress,
} from './attachments.js';
export { DEFAULT_MAX_UPLOADS_IN_FLIGHT, DEFAULT_UPLOAD_RETRY_BACKOFF, UPLOAD_IN_FLIGHT_RETRIES } from './upload-queue.js';
export {
  DEFAULT_ATTACHMENT_TYPES,
  IMAGE_TYPES,
  isImageType,
  parseMessageAttachments,
  signedExpiry,
  type Attachment,
  type AttachmentRef,
  type MessageAttachment,
  type OutboxAttachment,
} from './attachment-types.js';
export { SEARCH_Q_MAX_BYTES, type SearchOptions, type SearchPage } from './search.js';
export type {
  Ban,
  BansOptions,
  BansPage,
  ChannelModeration,
  ChannelRules,
  ChannelSettings,
  Flag,
  FlagReason,
  ModerationOptions,
  PostingRole,
} from './moderation-types.js';
export { ChatdError, RETRYABLE_CODES, type ErrorCode, type SerializedError } from './errors.js';
export { backoffDelay, type BackoffOptions } from './backoff.js';
export { ChannelLog, entryKind, type IngestResult, type Message } from './log.js';
export { cutUtf8, PREVIEW_MAX_BYTES } from './message-states.js';
export { ThreadLog } from './threads.js';
export {
  IndexedDBOutboxStorage,
  MemoryOutboxStorage,
  sendOrder,
  type IDBFactoryLike,
  type OutboxOp,
  type OutboxRecord,
  type OutboxStorage,
} from './outbox.js';
export { platformWriteAheadStore, type WriteAheadStore } from './outbox-wal.js';
export { TypingThrottle, TypingTracker } from './typing.js';
export { Emitter, type ExternalStore } from './store.js';
export * from './protocol.js';
export { parseServerFrame } from './frame-parse.js';
