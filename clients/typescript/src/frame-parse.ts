/**
 * Parsing one text frame from the server into a {@link ServerFrame}: the frames of versions 1
 * and 1.1 as they come, the membership frames of version 1.2 checked
 * ({@link decodeMembershipFrame}).
 *
 * @module
 */
import { decodeMembershipFrame } from './membership-frames.js';
import type { ServerFrame } from './protocol.js';

/**
 * Parses one text frame; returns undefined for anything that is not an object with a string
 * `type`, and for a `MEMBER`, `CHANNEL_ADDED` or `CHANNEL_REMOVED` that lacks a field it
 * needs (see {@link decodeMembershipFrame}: unknown ops and reasons are kept).
 */
export function parseServerFrame(text: string): ServerFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return undefined;
  if (type === 'MEMBER' || type === 'CHANNEL_ADDED' || type === 'CHANNEL_REMOVED') {
    return decodeMembershipFrame(value as Record<string, unknown>);
  }
  return value as ServerFrame;
}
