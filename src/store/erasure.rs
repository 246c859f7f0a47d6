//! Erasing a user (protocol.md §19), as stored: the erasure's row in
//! `user_erasures` (its watermark, and whether it is still pending), what is
//! left to erase (the user's messages not deleted, the reactions it holds,
//! its channels), and the user's rows that are not entries of a log
//! (watermarks, settings, blocks, flags, `lastSeenAt`, mutes, mention
//! rows, unclaimed uploads, idempotency keys; bans stay, without who made
//! them when that is the erased user), each erased here in bounded
//! transactions. The entries an erasure adds (deletes, reaction removals)
//! and its membership changes go through group commit
//! (`crate::erasure`), never through this file.

use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};

/// Records an erasure of `$1` asked at `$2` (ms), pending (`$3` = true):
/// the watermark never goes back.
const BEGIN: &str = "INSERT INTO user_erasures (user_id, erased_at, started_at, pending) VALUES ($1, $2, $2, $3) \
     ON CONFLICT (user_id) DO UPDATE SET started_at = excluded.started_at, pending = excluded.pending, \
     erased_at = CASE WHEN excluded.erased_at > user_erasures.erased_at \
     THEN excluded.erased_at ELSE user_erasures.erased_at END";
/// The erasure of `$1` is complete at `$2` (ms; `$3` = false): the
/// watermark moves up to it, so tokens made while it ran are refused too.
const FINISH: &str = "UPDATE user_erasures SET pending = $3, \
     erased_at = CASE WHEN $2 > erased_at THEN $2 ELSE erased_at END WHERE user_id = $1";
/// Users whose erasure is pending (`$1` = true).
const PENDING: &str = "SELECT user_id FROM user_erasures WHERE pending = $1 ORDER BY started_at";
/// Every erased user with its watermark.
const WATERMARKS: &str = "SELECT user_id, erased_at FROM user_erasures";
/// Up to `$2` messages of `$1` not deleted, by the idempotency key's index.
static MESSAGES_LEFT: Sql = Sql::same(
    "SELECT channel_id, message_id::text FROM messages \
     WHERE sender_id = $1 AND kind = 'message' AND NOT deleted LIMIT $2",
);
/// Up to `$2` reactions `$1` holds on messages not deleted.
static REACTIONS_LEFT: Sql = Sql::same(
    "SELECT m.channel_id, r.message_id::text, r.emoji FROM reactions r \
     JOIN messages m ON m.message_id = r.message_id \
     WHERE r.user_id = $1 AND NOT m.deleted LIMIT $2",
);
/// The channels `$1` is a member of.
const CHANNELS_OF: &str = "SELECT channel_id FROM members WHERE user_id = $1 ORDER BY channel_id";
/// Forgets the pair of every direct channel `$1` is a member of: the
/// channel stays (with its other member), and a later direct channel with
/// a user of the same id is a new one.
const FORGET_DIRECT_PAIRS: &str = "UPDATE channels SET direct_pair = NULL WHERE kind = 'direct' \
     AND direct_pair IS NOT NULL AND channel_id IN (SELECT channel_id FROM members WHERE user_id = $1)";
/// Replaces up to `$2` of `$1`'s idempotency keys by `erased-<messageId>`
/// (and hides them, `via_http` = `$3` = true): the keys the user chose are
/// gone, and the unique (sender, key) index still holds.
static ERASE_KEYS: Sql = Sql::same(
    "UPDATE messages SET client_msg_id = 'erased-' || message_id::text, via_http = $3 \
     WHERE message_id IN (SELECT message_id FROM messages \
     WHERE sender_id = $1 AND client_msg_id <> 'erased-' || message_id::text LIMIT $2)",
);
/// The user's rows that are not log entries, `$1` the user, `$2` now (ms).
const ERASE_ROWS: [&str; 12] = [
    // The watermark first: a `lastSeenAt` of a session closed before now
    // is not written after this (`last_seen.rs`).
    "UPDATE user_erasures SET erased_at = CASE WHEN $2 > erased_at THEN $2 ELSE erased_at END WHERE user_id = $1",
    "DELETE FROM watermarks WHERE user_id = $1",
    "DELETE FROM channel_settings WHERE user_id = $1",
    "DELETE FROM blocks WHERE blocker_id = $1 OR blocked_id = $1",
    "DELETE FROM flags WHERE reporter_id = $1",
    "DELETE FROM presence WHERE user_id = $1",
    // The user's bans stay: a channel's decision to keep an id out, which
    // the spec does not list among what an erasure takes, and which a new
    // token for the same id would otherwise get around. Who banned is the
    // erased user's trace in others' rows: forgotten.
    "UPDATE bans SET banned_by = NULL WHERE banned_by = $1",
    "DELETE FROM member_limits WHERE user_id = $1",
    "DELETE FROM mentions WHERE user_id = $1",
    // Uploads no message claimed: bytes queued for the sweeper, rows gone.
    "INSERT INTO attachment_removals (storage_key, queued_at) SELECT storage_key, $2 FROM attachments \
     WHERE uploader_id = $1 AND message_id IS NULL ON CONFLICT DO NOTHING",
    "INSERT INTO attachment_removals (storage_key, queued_at) SELECT thumbnail_key, $2 FROM attachments \
     WHERE uploader_id = $1 AND message_id IS NULL AND thumbnail_key IS NOT NULL ON CONFLICT DO NOTHING",
    "DELETE FROM attachments WHERE uploader_id = $1 AND message_id IS NULL",
];

/// A reaction an erased user still holds: (channel, message, emoji).
pub type HeldReaction = (ChannelId, uuid::Uuid, String);

impl Store {
    /// Records that `user` is being erased from `now` (ms): its watermark
    /// (never lowered) and the pending mark a restart resumes from.
    pub async fn begin_erasure(&self, user: &UserId, now: i64) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), begin_erasure(user, now))
    }

    /// Marks `user`'s erasure complete at `now` (ms), raising its watermark
    /// to `now`.
    pub async fn finish_erasure(&self, user: &UserId, now: i64) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), finish_erasure(user, now))
    }

    /// The users whose erasure is pending, oldest first.
    pub async fn pending_erasures(&self) -> Result<Vec<UserId>, StoreError> {
        self.read(async { dispatch!(self.pending_erasures()) }).await
    }

    /// Every erased user with its watermark (ms).
    pub async fn erasure_watermarks(&self) -> Result<Vec<(UserId, i64)>, StoreError> {
        self.read(async { dispatch!(self.erasure_watermarks()) }).await
    }

    /// Up to `limit` of `user`'s messages not deleted: (channel, messageId).
    pub async fn erasure_messages(
        &self,
        user: &UserId,
        limit: u32,
    ) -> Result<Vec<(ChannelId, uuid::Uuid)>, StoreError> {
        self.read(async { dispatch!(self.erasure_messages(user, limit)) }).await
    }

    /// Up to `limit` reactions `user` holds on messages not deleted.
    pub async fn erasure_reactions(&self, user: &UserId, limit: u32) -> Result<Vec<HeldReaction>, StoreError> {
        self.read(async { dispatch!(self.erasure_reactions(user, limit)) })
            .await
    }

    /// The channels `user` is a member of, in id order.
    pub async fn erasure_channels(&self, user: &UserId) -> Result<Vec<ChannelId>, StoreError> {
        self.read(async { dispatch!(self.erasure_channels(user)) }).await
    }

    /// Erases `user`'s rows that are not log entries (see the module) at
    /// `now` (ms), in one transaction.
    pub async fn erase_user_rows(&self, user: &UserId, now: i64) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), erase_user_rows(user, now))
    }

    /// Forgets the pairs of `user`'s direct channels (before its
    /// memberships end): a new user of the same id gets new direct channels.
    pub async fn forget_direct_pairs(&self, user: &UserId) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), forget_direct_pairs(user))
    }

    /// Replaces up to `limit` of `user`'s idempotency keys; returns how many
    /// (0: none is left).
    pub async fn erase_user_keys(&self, user: &UserId, limit: u32) -> Result<u64, StoreError> {
        dispatch_write!(self, self.deadline(), erase_user_keys(user, limit))
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn begin_erasure(&self, user: &UserId, now: i64, sent: &CommitSent) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query::<D>(BEGIN)
            .param(user.as_str())
            .param(now)
            .param(true)
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await
    }

    pub(super) async fn finish_erasure(&self, user: &UserId, now: i64, sent: &CommitSent) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query::<D>(FINISH)
            .param(user.as_str())
            .param(now)
            .param(false)
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await
    }

    pub(super) async fn pending_erasures(&self) -> Result<Vec<UserId>, StoreError> {
        let rows = sqlx::query::<D>(PENDING)
            .param(true)
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter().map(|row| Ok(UserId::from_trusted(row.value(0)?))).collect()
    }

    pub(super) async fn erasure_watermarks(&self) -> Result<Vec<(UserId, i64)>, StoreError> {
        let rows = sqlx::query::<D>(WATERMARKS)
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|row| Ok((UserId::from_trusted(row.value(0)?), row.value(1)?)))
            .collect()
    }

    pub(super) async fn erasure_messages(
        &self,
        user: &UserId,
        limit: u32,
    ) -> Result<Vec<(ChannelId, uuid::Uuid)>, StoreError> {
        let rows = sqlx::query::<D>(D::sql(&MESSAGES_LEFT))
            .param(user.as_str())
            .param(i64::from(limit))
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    ChannelId::from_trusted(row.value(0)?),
                    message_id(&row.value::<String>(1)?)?,
                ))
            })
            .collect()
    }

    pub(super) async fn erasure_reactions(&self, user: &UserId, limit: u32) -> Result<Vec<HeldReaction>, StoreError> {
        let rows = sqlx::query::<D>(D::sql(&REACTIONS_LEFT))
            .param(user.as_str())
            .param(i64::from(limit))
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    ChannelId::from_trusted(row.value(0)?),
                    message_id(&row.value::<String>(1)?)?,
                    row.value(2)?,
                ))
            })
            .collect()
    }

    pub(super) async fn erasure_channels(&self, user: &UserId) -> Result<Vec<ChannelId>, StoreError> {
        let rows = sqlx::query::<D>(CHANNELS_OF)
            .param(user.as_str())
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|row| Ok(ChannelId::from_trusted(row.value(0)?)))
            .collect()
    }

    pub(super) async fn erase_user_rows(&self, user: &UserId, now: i64, sent: &CommitSent) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        for statement in ERASE_ROWS {
            // Statements that name only `$1` get only `$1`: PostgreSQL
            // refuses a parameter a statement does not use.
            let query = sqlx::query::<D>(statement).param(user.as_str());
            let query = if statement.contains("$2") {
                query.param(now)
            } else {
                query
            };
            query.execute(tx.ex()).await?;
        }
        Self::commit(tx, sent).await?;
        // The erased rows out of SQLite's -wal file too (`store::wal_scrub`).
        self.scrub_wal().await;
        Ok(())
    }

    pub(super) async fn forget_direct_pairs(&self, user: &UserId, sent: &CommitSent) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query::<D>(FORGET_DIRECT_PAIRS)
            .param(user.as_str())
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await
    }

    pub(super) async fn erase_user_keys(
        &self,
        user: &UserId,
        limit: u32,
        sent: &CommitSent,
    ) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        let changed = sqlx::query::<D>(D::sql(&ERASE_KEYS))
            .param(user.as_str())
            .param(i64::from(limit))
            .param(true)
            .execute(tx.ex())
            .await?
            .rows_affected();
        Self::commit(tx, sent).await?;
        Ok(changed)
    }
}

/// A stored message id, read back as text.
fn message_id(text: &str) -> Result<uuid::Uuid, StoreError> {
    uuid::Uuid::try_parse(text).map_err(|e| StoreError::Corrupt(format!("message id {text:?}: {e}")))
}
