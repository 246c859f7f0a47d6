//! Moderation's own reads and writes (protocol.md §17) beside the
//! membership changes (`members.rs`) and the entry rules
//! (`entry_rules.rs`): a channel's mutes (for TYPING), its bans (listed and
//! lifted). Mutes and bans themselves are membership changes, made on the
//! channel's commit task.

use super::channel_lock::LAST_SEQ;
use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::members::DELETE_BAN;
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};
use crate::permissions::Action;

/// The members of channel `$1` with a stored mute, and its end (ms).
const MUTED_MEMBERS: &str = "SELECT m.user_id, l.muted_until FROM members m \
     JOIN member_limits l ON l.channel_id = m.channel_id AND l.user_id = m.user_id \
     WHERE m.channel_id = $1 AND l.muted_until IS NOT NULL";

/// Up to `$3` bans of channel `$1` after user `$2` (`NULL`: from the first),
/// in byte order of the user id. PostgreSQL: `COLLATE "C"`, served by the
/// `bans_by_channel_user_bytes` index; SQLite: the primary key.
static BANS_PAGE: Sql = Sql::same(
    "SELECT user_id, banned_at, banned_by FROM bans \
     WHERE channel_id = $1 AND user_id COLLATE \"C\" > COALESCE($2::text, '') COLLATE \"C\" \
     ORDER BY user_id COLLATE \"C\" LIMIT $3",
);

/// One ban of a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BanRow {
    pub user_id: UserId,
    /// When, ms since the epoch.
    pub banned_at: i64,
    /// The moderator or owner who banned; `None` for the admin token.
    pub banned_by: Option<UserId>,
}

/// A page of a channel's bans, in byte order of the user id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BansPage {
    pub bans: Vec<BanRow>,
    /// Whether bans follow the last one of the page.
    pub has_more: bool,
}

impl Store {
    /// The members of `channel_id` with a stored mute and its end (ms since
    /// the epoch; one in the past is no mute), in no order; empty for an
    /// unknown channel. A read (TYPING's check; the entries are judged
    /// under the channel's lock).
    pub async fn muted_members(&self, channel_id: &ChannelId) -> Result<Vec<(UserId, i64)>, StoreError> {
        self.read(async { dispatch!(self.muted_members(channel_id)) }).await
    }

    /// Up to `limit` bans of `channel_id` with a user id above `after` (from
    /// the first when `None`), in byte order of the user id; `None` for an
    /// unknown channel.
    pub async fn bans_page(
        &self,
        channel_id: &ChannelId,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<Option<BansPage>, StoreError> {
        self.read(async { dispatch!(self.bans_page(channel_id, after, limit)) })
            .await
    }

    /// Lifts `user_id`'s ban from `channel_id`, asked by `by` (`None`: the
    /// admin token; else an owner or moderator, judged under the channel's
    /// lock). Returns whether there was one.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown channel, [`StoreError::Denied`]
    /// when `by`'s role does not allow it.
    pub async fn unban(
        &self,
        channel_id: &ChannelId,
        user_id: &UserId,
        by: Option<&UserId>,
    ) -> Result<bool, StoreError> {
        dispatch_write!(self, self.deadline(), unban(channel_id, user_id, by))
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn muted_members(&self, channel_id: &ChannelId) -> Result<Vec<(UserId, i64)>, StoreError> {
        let rows = sqlx::query::<D>(MUTED_MEMBERS)
            .param(channel_id.as_str())
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|row| Ok((UserId::from_trusted(row.value(0)?), row.value(1)?)))
            .collect()
    }

    pub(super) async fn bans_page(
        &self,
        channel_id: &ChannelId,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<Option<BansPage>, StoreError> {
        let mut tx = self.begin_snapshot().await?;
        if sqlx::query::<D>(LAST_SEQ)
            .param(channel_id.as_str())
            .fetch_optional(tx.ex())
            .await?
            .is_none()
        {
            return Ok(None);
        }
        let rows = sqlx::query::<D>(D::sql(&BANS_PAGE))
            .param(channel_id.as_str())
            .param(after.map(UserId::as_str))
            .param(i64::from(limit) + 1)
            .fetch_all(tx.ex())
            .await?;
        tx.commit().await?;
        let has_more = rows.len() > limit as usize;
        let bans = rows
            .iter()
            .take(limit as usize)
            .map(|row| {
                Ok(BanRow {
                    user_id: UserId::from_trusted(row.value(0)?),
                    banned_at: row.value(1)?,
                    banned_by: row.value::<Option<String>>(2)?.map(UserId::from_trusted),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Some(BansPage { bans, has_more }))
    }

    pub(super) async fn unban(
        &self,
        channel_id: &ChannelId,
        user_id: &UserId,
        by: Option<&UserId>,
        sent: &CommitSent,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        if Self::lock_channel(&mut tx, channel_id).await?.is_none() {
            return Err(StoreError::NotFound);
        }
        Self::check_under_lock(&mut tx, channel_id, by, Action::ManageMembers).await?;
        let lifted = sqlx::query::<D>(DELETE_BAN)
            .param(channel_id.as_str())
            .param(user_id.as_str())
            .execute(tx.ex())
            .await?
            .rows_affected();
        Self::commit(tx, sent).await?;
        Ok(lifted > 0)
    }
}
