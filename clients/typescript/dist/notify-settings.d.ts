/**
 * The user's notification settings of a channel (protocol §16.3): the settings call
 * (`PUT /v1/me/channels/{channelId}/settings`) and the parsing of its answer. What the
 * answer says goes into the channel list at once; the user's other sessions learn it from
 * `CHANNEL_SETTINGS` (folded by `Channels.applySettings`).
 *
 * @module
 */
import type { Connection } from './connection.js';
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
export declare function setNotifySettings(c: ClientContext, conn: Connection, channelId: string, change: NotifySettingsChange, signal?: AbortSignal): Promise<NotifySettings>;
/** The settings of a settings answer (or `CHANNEL_SETTINGS`); `internal` when malformed. */
export declare function parseNotifySettings(v: unknown): NotifySettings;
//# sourceMappingURL=notify-settings.d.ts.map