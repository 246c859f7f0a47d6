/**
 * chatd-client: the client half of the chatd protocol (versions 1 and 1.1) for browsers
 * and Node >= 20. See README.md.
 *
 * @packageDocumentation
 */
export {
  ChatClient,
  ChannelStore,
  applyReceipt,
  computeUnread,
  jwtSubject,
  type ChannelSnapshot,
  type ChannelSummary,
  type ChatClientEvents,
  type ChatClientOptions,
  type ConnectionSnapshot,
  type ConnectionState,
  type OnlineEventSource,
  type OutgoingMessage,
  type Presence,
  type SendOptions,
  type SentEntry,
  type UnreadInputs,
  type Watermarks,
  type WebSocketConstructor,
  type WebSocketLike,
} from './client.js';
export { ChatdError, RETRYABLE_CODES, type ErrorCode, type SerializedError } from './errors.js';
export { backoffDelay, type BackoffOptions } from './backoff.js';
export { ChannelLog, entryKind, type IngestResult, type Message } from './log.js';
export {
  IndexedDBOutboxStorage,
  MemoryOutboxStorage,
  sendOrder,
  type IDBFactoryLike,
  type OutboxOp,
  type OutboxRecord,
  type OutboxStorage,
} from './outbox.js';
export { TypingThrottle, TypingTracker } from './typing.js';
export { Emitter, type ExternalStore } from './store.js';
export * from './protocol.js';
