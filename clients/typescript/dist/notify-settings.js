import { ChatdError } from './errors.js';
import { request } from './http.js';
/**
 * Sends the change; resolves to the settings now (the server's answer). Rejects with a
 * ChatdError: `invalid_field` (`field` `notify` or `snoozeUntil`), `forbidden` (not a
 * member), `unavailable`, `aborted`, `closed`.
 */
export async function setNotifySettings(c, conn, channelId, change, signal) {
    if (conn.state === 'closed')
        throw new ChatdError('closed', 'client closed');
    const body = {};
    if (change.notify !== undefined)
        body.notify = change.notify;
    if (change.snoozeUntil !== undefined)
        body.snoozeUntil = change.snoozeUntil;
    const path = `/v1/me/channels/${encodeURIComponent(channelId)}/settings`;
    const answer = await request(c.opts, conn, 'PUT', path, { body, signal });
    return parseNotifySettings(answer.body);
}
/** The settings of a settings answer (or `CHANNEL_SETTINGS`); `internal` when malformed. */
export function parseNotifySettings(v) {
    const r = typeof v === 'object' && v !== null ? v : {};
    const { notify, snoozeUntil } = r;
    if (typeof notify !== 'string' || (snoozeUntil !== null && typeof snoozeUntil !== 'number')) {
        throw new ChatdError('internal', 'PUT /v1/me/channels/{channelId}/settings: malformed answer');
    }
    return { notify, snoozeUntil };
}
//# sourceMappingURL=notify-settings.js.map