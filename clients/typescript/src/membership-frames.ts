/**
 * Checking and typing the membership frames of version 1.2 (§13.3): `MEMBER`,
 * `CHANNEL_ADDED` and `CHANNEL_REMOVED`. Forward-compatible: an op or reason this client
 * does not know, and fields it does not know, are no error; a frame that lacks what the
 * client needs to act on it (a channel id, a seq) is dropped (undefined), never thrown.
 *
 * @module
 */
import type { ChannelAddedFrame, ChannelRemovedFrame, HelloChannel, MemberFrame } from './protocol.js';

/** A finite number, or undefined. */
function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A string, or undefined. */
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * A `MEMBER` frame, typed: `channelId`, `userId`, `op` (any string) and `afterSeq` are
 * needed (`ts` is 0 when missing); `role` and `actorId` are kept when strings,
 * `mutedUntil` when a number or `null`. Undefined when a needed field is missing or of
 * another type.
 */
export function decodeMemberFrame(v: Readonly<Record<string, unknown>>): MemberFrame | undefined {
  const channelId = str(v.channelId);
  const userId = str(v.userId);
  const op = str(v.op);
  const afterSeq = num(v.afterSeq);
  const ts = num(v.ts) ?? 0;
  if (channelId === undefined || userId === undefined || op === undefined || afterSeq === undefined) return undefined;
  const f: { -readonly [K in keyof MemberFrame]: MemberFrame[K] } = { type: 'MEMBER', channelId, userId, op, afterSeq, ts };
  const role = str(v.role);
  if (role !== undefined) f.role = role;
  if (v.mutedUntil === null || num(v.mutedUntil) !== undefined) f.mutedUntil = v.mutedUntil as number | null;
  const actorId = str(v.actorId);
  if (actorId !== undefined) f.actorId = actorId;
  return f;
}

/**
 * A `HELLO` channel entry (also `CHANNEL_ADDED`'s `channel`), typed: `channelId` and
 * `lastSeq` are needed; missing watermarks are 0; the other fields this client knows are
 * kept when of their type, those it does not know are dropped.
 */
export function decodeHelloChannel(v: unknown): HelloChannel | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const r = v as Record<string, unknown>;
  const channelId = str(r.channelId);
  const lastSeq = num(r.lastSeq);
  if (channelId === undefined || lastSeq === undefined) return undefined;
  const out: { -readonly [K in keyof HelloChannel]: HelloChannel[K] } = {
    channelId,
    lastSeq,
    deliveredSeq: num(r.deliveredSeq) ?? 0,
    readSeq: num(r.readSeq) ?? 0,
  };
  const unread = num(r.unread);
  if (unread !== undefined) out.unread = unread;
  const memberCount = num(r.memberCount);
  if (memberCount !== undefined) out.memberCount = memberCount;
  const kind = str(r.kind);
  if (kind !== undefined) out.kind = kind;
  const visibility = str(r.visibility);
  if (visibility !== undefined) out.visibility = visibility;
  const role = str(r.role);
  if (role !== undefined) out.role = role;
  const unreadMentions = num(r.unreadMentions);
  if (unreadMentions !== undefined) out.unreadMentions = unreadMentions;
  const notify = str(r.notify);
  if (notify !== undefined) out.notify = notify;
  const postingRole = str(r.postingRole);
  if (postingRole !== undefined) out.postingRole = postingRole;
  const slowModeMs = num(r.slowModeMs);
  if (slowModeMs !== undefined) out.slowModeMs = slowModeMs;
  const retentionSecs = num(r.retentionSecs);
  if (retentionSecs !== undefined) out.retentionSecs = retentionSecs;
  if (r.snoozeUntil === null) out.snoozeUntil = null;
  else if (num(r.snoozeUntil) !== undefined) out.snoozeUntil = num(r.snoozeUntil);
  if (r.name === null || typeof r.name === 'string') out.name = r.name;
  if (r.metadata === null) out.metadata = null;
  else if (typeof r.metadata === 'object' && !Array.isArray(r.metadata)) out.metadata = r.metadata as Readonly<Record<string, unknown>>;
  return out;
}

/** A `CHANNEL_ADDED` frame, typed; undefined when its `channel` is not a channel entry. */
export function decodeChannelAddedFrame(v: Readonly<Record<string, unknown>>): ChannelAddedFrame | undefined {
  const channel = decodeHelloChannel(v.channel);
  return channel === undefined ? undefined : { type: 'CHANNEL_ADDED', channel };
}

/** A `CHANNEL_REMOVED` frame, typed: `channelId` needed; `reason` (any string) kept when there is one. */
export function decodeChannelRemovedFrame(v: Readonly<Record<string, unknown>>): ChannelRemovedFrame | undefined {
  const channelId = str(v.channelId);
  if (channelId === undefined) return undefined;
  const reason = str(v.reason);
  return reason === undefined ? { type: 'CHANNEL_REMOVED', channelId } : { type: 'CHANNEL_REMOVED', channelId, reason };
}

/** One of the three membership frames by its `type`, checked as above (undefined for any other type). */
export function decodeMembershipFrame(v: Readonly<Record<string, unknown>>): MemberFrame | ChannelAddedFrame | ChannelRemovedFrame | undefined {
  switch (v.type) {
    case 'MEMBER':
      return decodeMemberFrame(v);
    case 'CHANNEL_ADDED':
      return decodeChannelAddedFrame(v);
    case 'CHANNEL_REMOVED':
      return decodeChannelRemovedFrame(v);
    default:
      return undefined;
  }
}
