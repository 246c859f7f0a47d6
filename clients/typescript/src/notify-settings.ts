/**
 * The user's notification settings of a channel (protocol §16.3): the settings call
 * (`PUT /v1/me/channels/{channelId}/settings`) and the parsing of its answer. What the
 * answer says goes into the channel list at once; the user's other sessions learn it from
 * `CHANNEL_SETTINGS` (folded by `Channels.applySettings`).
 *
 * @module
 */
import type { Connection } from './connection.js';
import { ChatdError } from './errors.js';
import { request } from './http.js';
import type { NotifySettings } from './snapshot-types.js';
import type { ClientContext } from './types.js';

/** What {@link setNotifySettings} changes: a field left out keeps its value. */
export interface NotifySettingsChange {
  /** `all`, `mentions` or `none`. */
  readonly notify?: NotifySettings['notify'];
  /** Until when (ms since the epoch) to snooze; `null` ends a snooze. */
  readonly snoozeUntil?: number | null;
}

/**
 * Sends the change; resolves to the settings now (the server's answer). Rejects with a
 * ChatdError: `invalid_field` (`field` `notify` or `snoozeUntil`), `forbidden` (not a
 * member), `unavailable`, `aborted`, `closed`.
 */
export async function setNotifySettings(
  c: ClientContext,
  conn: Connection,
  channelId: string,
  change: NotifySettingsChange,
  signal?: AbortSignal,
): Promise<NotifySettings> {
  if (conn.state === 'closed') throw new ChatdError('closed', 'client closed');
  const body: { notify?: string; snoozeUntil?: number | null } = {};
  if (change.notify !== undefined) body.notify = change.notify;
  if (change.snoozeUntil !== undefined) body.snoozeUntil = change.snoozeUntil;
  const path = `/v1/me/channels/${encodeURIComponent(channelId)}/settings`;
  const answer = await request(c.opts, conn, 'PUT', path, { body, signal });
  return parseNotifySettings(answer.body);
}

/** The settings of a settings answer (or `CHANNEL_SETTINGS`); `internal` when malformed. */
export function parseNotifySettings(v: unknown): NotifySettings {
  const r = typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  const { notify, snoozeUntil } = r;
  if (typeof notify !== 'string' || (snoozeUntil !== null && typeof snoozeUntil !== 'number')) {
    throw new ChatdError('internal', 'PUT /v1/me/channels/{channelId}/settings: malformed answer');
  }
  return { notify, snoozeUntil };
}
