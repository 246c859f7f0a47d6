//! Uploads not yet part of a message (protocol.md §15): storing an
//! upload's row under its checks (membership, no pending erasure, and the
//! uploader's bound on unclaimed bytes, `max_unclaimed_upload_bytes`), the
//! bytes an uploader holds unclaimed, the expiry of orphans (after
//! `attachment_orphan_ttl_secs`, or the channel's retention when shorter),
//! and which storage keys rows still name (for objects left by a crash:
//! `attachments::strays`).

use super::attachments::{attachment_columns, id_text};
use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql};
use super::entry_types::AttachmentRow;
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;
use crate::ids::UserId;

/// Serializes the row inserts of one uploader (`$1`) on PostgreSQL, until
/// the transaction ends. Why a lock: the insert below holds only the
/// `(channel, uploader)` member row `FOR SHARE`, which two uploads (in one
/// channel or in two) both get at once, and under READ COMMITTED each
/// statement sees only rows committed before it began: two uploads
/// finishing together would each count the bytes without the other's and
/// both pass the bound. With this lock (taken before the insert's
/// statement starts, released at commit) the second insert's snapshot is
/// taken after the first committed, so its sum includes the first's row.
/// An advisory lock rather than a row lock because a user has no row of
/// its own to lock (members rows are per channel); the two-key form keeps
/// it apart from any one-key advisory lock. SERIALIZABLE would also do but
/// would need retries. SQLite needs nothing: a write transaction holds the
/// database's write lock from its `BEGIN IMMEDIATE`.
const LOCK_UPLOADER_PG: &str = "SELECT pg_advisory_xact_lock(1969382, hashtext($1))";

/// Stores an upload's row only if its uploader (`$3`) is still a member
/// of its channel (`$2`, which then exists), is not being erased (a
/// pending erasure, `$16` = true), and its unclaimed uploads with this one
/// (`$5` bytes) stay within `$17` bytes: checked in the statement that
/// writes the row, not only when the upload began. On PostgreSQL the member
/// row is held `FOR SHARE`, so a channel delete, a leave or an erasure's
/// membership end committing meanwhile is waited for and then seen; the
/// sum is exact there because of [`LOCK_UPLOADER_PG`].
static INSERT_ATTACHMENT: Sql = Sql::each(
    concat!(
        "INSERT INTO attachments (",
        attachment_columns!(),
        ") SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15 FROM members \
         WHERE channel_id = $2 AND user_id = $3 \
         AND NOT EXISTS (SELECT 1 FROM user_erasures WHERE user_id = $3 AND pending = $16) \
         AND (SELECT COALESCE(SUM(size), 0) FROM attachments WHERE uploader_id = $3 AND message_id IS NULL) + $5 <= $17 \
         FOR SHARE OF members"
    ),
    concat!(
        "INSERT INTO attachments (",
        attachment_columns!(),
        ") SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15 FROM members \
         WHERE channel_id = $2 AND user_id = $3 \
         AND NOT EXISTS (SELECT 1 FROM user_erasures WHERE user_id = $3 AND pending = $16) \
         AND (SELECT COALESCE(SUM(size), 0) FROM attachments WHERE uploader_id = $3 AND message_id IS NULL) + $5 <= $17"
    ),
);
/// The bytes of user `$1`'s uploads that no message claimed.
const UNCLAIMED_BYTES: &str = "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM attachments \
     WHERE uploader_id = $1 AND message_id IS NULL";

/// Orphans at `$2` (ms): uploads no message claimed, made before `$1`
/// (`attachment_orphan_ttl_secs` ago), or longer ago than their channel's
/// retention (its `retentionSecs`, else the server's `$3`; 0 is forever).
macro_rules! orphan {
    () => {
        "message_id IS NULL AND (created_at < $1 OR created_at < $2 - 1000 * \
         (SELECT COALESCE(c.retention_secs, $3) FROM channels c \
          WHERE c.channel_id = attachments.channel_id AND COALESCE(c.retention_secs, $3) > 0))"
    };
}
const QUEUE_ORPHANS: [&str; 2] = [
    concat!(
        "INSERT INTO attachment_removals (storage_key, queued_at) SELECT storage_key, $2 FROM attachments WHERE ",
        orphan!(),
        " ON CONFLICT DO NOTHING"
    ),
    concat!(
        "INSERT INTO attachment_removals (storage_key, queued_at) SELECT thumbnail_key, $2 FROM attachments WHERE ",
        orphan!(),
        " AND thumbnail_key IS NOT NULL ON CONFLICT DO NOTHING"
    ),
];
const DELETE_ORPHANS: &str = concat!("DELETE FROM attachments WHERE ", orphan!());

/// What became of an upload's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadStored {
    /// Stored.
    Stored,
    /// Not stored: the uploader is not a member of the channel (or it is
    /// gone), or is being erased.
    NotAMember,
    /// Not stored: with it, the uploader's unclaimed uploads would pass
    /// the bound; they hold `unclaimed` bytes without it.
    OverBound {
        /// Bytes of the uploader's uploads no message claimed.
        unclaimed: i64,
    },
}

impl Store {
    /// Stores the row of a new upload (its bytes are in storage already),
    /// if its uploader is still a member of its channel (so the channel
    /// exists), is not being erased, and holds at most `max_unclaimed`
    /// bytes of unclaimed uploads with this one; nothing stored otherwise.
    pub async fn insert_attachment(&self, row: &AttachmentRow, max_unclaimed: i64) -> Result<UploadStored, StoreError> {
        dispatch_write!(self, self.deadline(), insert_attachment(row, max_unclaimed))
    }

    /// The bytes of `user`'s uploads that no message claimed (not expired
    /// or deleted yet).
    pub async fn unclaimed_upload_bytes(&self, user: &UserId) -> Result<i64, StoreError> {
        self.read(async { dispatch!(self.unclaimed_upload_bytes(user)) }).await
    }

    /// The storage keys (bytes and thumbnail) that the rows of the
    /// attachments `ids` name now; an id with no row names none.
    pub async fn attachment_keys_of(&self, ids: &[uuid::Uuid]) -> Result<Vec<String>, StoreError> {
        self.read(async { dispatch!(self.attachment_keys_of(ids)) }).await
    }

    /// Deletes the rows of uploads no message claimed that were made
    /// before `before` (ms), or before `now` less their channel's
    /// retention (its `retentionSecs`, else `global_retention_secs`; 0 is
    /// forever), queueing their objects for removal; returns how many.
    pub async fn expire_orphan_attachments(
        &self,
        before: i64,
        now: i64,
        global_retention_secs: i64,
    ) -> Result<u64, StoreError> {
        dispatch_write!(
            self,
            self.deadline(),
            expire_orphan_attachments(before, now, global_retention_secs)
        )
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn insert_attachment(
        &self,
        row: &AttachmentRow,
        max_unclaimed: i64,
        sent: &CommitSent,
    ) -> Result<UploadStored, StoreError> {
        let mut tx = self.begin_write().await?;
        if D::KIND == super::dialect::Kind::Postgres {
            sqlx::query::<D>(LOCK_UPLOADER_PG)
                .param(row.uploader_id.as_str())
                .execute(tx.ex())
                .await?;
        }
        let stored = sqlx::query::<D>(D::sql(&INSERT_ATTACHMENT))
            .param(id_text(row.attachment_id))
            .param(row.channel_id.as_str())
            .param(row.uploader_id.as_str())
            .param(row.content_type.as_str())
            .param(row.size)
            .param(row.sha256.as_str())
            .param(row.filename.as_deref())
            .param(row.width)
            .param(row.height)
            .param(row.created_at)
            .param(row.message_id.map(id_text))
            .param(row.storage_key.as_str())
            .param(row.thumbnail_key.as_deref())
            .param(row.url_key.as_str())
            .param(row.url_ttl_secs)
            .param(true)
            .param(max_unclaimed)
            .execute(tx.ex())
            .await?
            .rows_affected()
            == 1;
        let outcome = if stored {
            UploadStored::Stored
        } else {
            // Refused: tell the bound from membership by the sum, read in
            // the same transaction (under the same lock).
            let unclaimed: i64 = sqlx::query::<D>(UNCLAIMED_BYTES)
                .param(row.uploader_id.as_str())
                .fetch_one(tx.ex())
                .await?
                .value(0)?;
            if unclaimed.saturating_add(row.size) > max_unclaimed {
                UploadStored::OverBound { unclaimed }
            } else {
                UploadStored::NotAMember
            }
        };
        Self::commit(tx, sent).await?;
        Ok(outcome)
    }

    pub(super) async fn attachment_keys_of(&self, ids: &[uuid::Uuid]) -> Result<Vec<String>, StoreError> {
        let mut reader = self.reader().await?;
        let rows = Self::attachments_by_ids_in(&mut reader, ids).await?;
        Ok(rows
            .into_iter()
            .flat_map(|row| std::iter::once(row.storage_key).chain(row.thumbnail_key))
            .collect())
    }

    pub(super) async fn unclaimed_upload_bytes(&self, user: &UserId) -> Result<i64, StoreError> {
        Ok(sqlx::query::<D>(UNCLAIMED_BYTES)
            .param(user.as_str())
            .fetch_one(self.reader().await?.ex())
            .await?
            .value(0)?)
    }

    pub(super) async fn expire_orphan_attachments(
        &self,
        before: i64,
        now: i64,
        global_retention_secs: i64,
        sent: &CommitSent,
    ) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        for statement in QUEUE_ORPHANS {
            sqlx::query::<D>(statement)
                .param(before)
                .param(now)
                .param(global_retention_secs)
                .execute(tx.ex())
                .await?;
        }
        let deleted = sqlx::query::<D>(DELETE_ORPHANS)
            .param(before)
            .param(now)
            .param(global_retention_secs)
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await?;
        Ok(deleted.rows_affected())
    }
}
