//! Users' notification settings per channel (protocol.md §16): `notify`
//! and `snoozeUntil`, changed here (`PUT /v1/me/channels/{channelId}/settings`),
//! read with the user's channel positions (`receipts.rs`) and, while
//! webhooks are on, under the channel lock by the write batch
//! (`locked.rs`), which computes each entry's `notify`.

use super::channel_types::ChannelSettings;
use super::dialect::{Columns, Dialect, Executes, Params};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch_write, Store};
use super::locked::parse_notify;
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};
use crate::protocol::Notify;

/// Whether `$2` is a member of channel `$1`.
const IS_MEMBER: &str = "SELECT 1 FROM members WHERE channel_id = $1 AND user_id = $2";
/// User `$2`'s stored settings in channel `$1`.
const SETTINGS_OF: &str = "SELECT notify, snooze_until FROM channel_settings WHERE channel_id = $1 AND user_id = $2";
/// Keeps user `$2`'s settings in channel `$1`: notify `$3`, snooze until `$4`.
const KEEP_SETTINGS: &str = "INSERT INTO channel_settings (channel_id, user_id, notify, snooze_until) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (channel_id, user_id) \
     DO UPDATE SET notify = excluded.notify, snooze_until = excluded.snooze_until";

/// A change to a user's settings in a channel: each `None` leaves its
/// field as it is; `snooze_until: Some(None)` ends the snooze.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SettingsPatch {
    pub notify: Option<Notify>,
    /// Snoozed until then (ms since the epoch); `Some(None)`: no snooze.
    pub snooze_until: Option<Option<i64>>,
}

impl Store {
    /// Applies `patch` to `user`'s settings in `channel` and returns them
    /// as they are now; `None` (nothing changed) when `user` is not a member
    /// or the channel is unknown.
    ///
    /// # Errors
    /// The store's errors ([`StoreError::InDoubt`] when the commit's fate is
    /// unknown: applying the same patch again is harmless).
    pub async fn change_settings(
        &self,
        user: &UserId,
        channel: &ChannelId,
        patch: SettingsPatch,
    ) -> Result<Option<ChannelSettings>, StoreError> {
        dispatch_write!(self, self.deadline(), change_settings(user, channel, patch))
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn change_settings(
        &self,
        user: &UserId,
        channel: &ChannelId,
        patch: SettingsPatch,
        sent: &CommitSent,
    ) -> Result<Option<ChannelSettings>, StoreError> {
        let mut tx = self.begin_write().await?;
        let member = sqlx::query::<D>(IS_MEMBER)
            .param(channel.as_str())
            .param(user.as_str())
            .fetch_optional(tx.ex())
            .await?;
        if member.is_none() {
            return Ok(None);
        }
        let stored = sqlx::query::<D>(SETTINGS_OF)
            .param(channel.as_str())
            .param(user.as_str())
            .fetch_optional(tx.ex())
            .await?;
        let mut settings = match stored {
            Some(row) => ChannelSettings {
                notify: parse_notify(row.value(0)?)?,
                snooze_until: row.value(1)?,
            },
            None => ChannelSettings::default(),
        };
        if let Some(notify) = patch.notify {
            settings.notify = notify;
        }
        if let Some(snooze_until) = patch.snooze_until {
            settings.snooze_until = snooze_until;
        }
        sqlx::query::<D>(KEEP_SETTINGS)
            .param(channel.as_str())
            .param(user.as_str())
            .param(settings.notify.as_str())
            .param(settings.snooze_until)
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await?;
        Ok(Some(settings))
    }
}
