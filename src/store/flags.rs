//! Flags of messages (protocol.md §17): one per (message, reporter), kept
//! when the message is deleted (a flag holds no text), listed for the admin
//! in flag order.

use super::dialect::{Columns, Dialect, Executes, Params, Sql};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};

/// Flag `$1` of message `$2` (in channel `$3`) by `$4` with reason `$5` and
/// note `$6` at `$7` (ms); affects no row when `$4` flagged `$2` already.
const INSERT_FLAG: &str = "INSERT INTO flags (flag_id, message_id, channel_id, reporter_id, reason, note, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (message_id, reporter_id) DO NOTHING";
/// `$2`'s flag of message `$1`.
const FLAG_OF: &str = "SELECT flag_id, message_id, channel_id, reporter_id, reason, note, created_at \
     FROM flags WHERE message_id = $1 AND reporter_id = $2";
/// Up to `$2` flags after flag `$1` (`NULL`: from the first), in flag order.
static FLAGS_PAGE: Sql = Sql::same(
    "SELECT flag_id, message_id, channel_id, reporter_id, reason, note, created_at FROM flags \
     WHERE flag_id COLLATE \"C\" > COALESCE($1::text, '') COLLATE \"C\" ORDER BY flag_id COLLATE \"C\" LIMIT $2",
);

/// One flag of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagRow {
    /// A UUIDv7: flags are listed in its order.
    pub flag_id: uuid::Uuid,
    pub message_id: uuid::Uuid,
    pub channel_id: ChannelId,
    pub reporter_id: UserId,
    /// `spam`, `abuse` or `other`.
    pub reason: String,
    pub note: Option<String>,
    /// When, ms since the epoch.
    pub created_at: i64,
}

fn flag_from_row<R: Columns>(row: &R) -> Result<FlagRow, StoreError> {
    let id = |text: String| uuid::Uuid::parse_str(&text).map_err(|e| StoreError::Corrupt(format!("flag id: {e}")));
    Ok(FlagRow {
        flag_id: id(row.value(0)?)?,
        message_id: id(row.value(1)?)?,
        channel_id: ChannelId::from_trusted(row.value(2)?),
        reporter_id: UserId::from_trusted(row.value(3)?),
        reason: row.value(4)?,
        note: row.value(5)?,
        created_at: row.value(6)?,
    })
}

impl Store {
    /// Stores `flag` unless its reporter flagged its message already;
    /// returns the reporter's flag of the message (this one or the first)
    /// and whether it is new.
    pub async fn flag(&self, flag: &FlagRow) -> Result<(FlagRow, bool), StoreError> {
        dispatch_write!(self, self.deadline(), flag(flag))
    }

    /// `reporter`'s flag of message `message_id`, if stored (an erasure of
    /// the reporter removes it). A read.
    pub async fn flag_of(&self, message_id: uuid::Uuid, reporter: &UserId) -> Result<Option<FlagRow>, StoreError> {
        self.read(async { dispatch!(self.flag_of(message_id, reporter)) }).await
    }

    /// Up to `limit` flags after `after` (from the first when `None`), in
    /// flag order, and whether more follow.
    pub async fn flags_page(&self, after: Option<uuid::Uuid>, limit: u32) -> Result<(Vec<FlagRow>, bool), StoreError> {
        self.read(async { dispatch!(self.flags_page(after, limit)) }).await
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn flag(&self, flag: &FlagRow, sent: &CommitSent) -> Result<(FlagRow, bool), StoreError> {
        let mut tx = self.begin_write().await?;
        let message = flag.message_id.hyphenated().to_string();
        let inserted = sqlx::query::<D>(INSERT_FLAG)
            .param(flag.flag_id.hyphenated().to_string())
            .param(&message)
            .param(flag.channel_id.as_str())
            .param(flag.reporter_id.as_str())
            .param(flag.reason.as_str())
            .param(flag.note.as_deref())
            .param(flag.created_at)
            .execute(tx.ex())
            .await?;
        let created = super::dialect::Affected::rows_affected(&inserted) > 0;
        let row = sqlx::query::<D>(FLAG_OF)
            .param(&message)
            .param(flag.reporter_id.as_str())
            .fetch_one(tx.ex())
            .await?;
        let stored = flag_from_row(&row)?;
        Self::commit(tx, sent).await?;
        Ok((stored, created))
    }

    pub(super) async fn flag_of(
        &self,
        message_id: uuid::Uuid,
        reporter: &UserId,
    ) -> Result<Option<FlagRow>, StoreError> {
        let row = sqlx::query::<D>(FLAG_OF)
            .param(message_id.hyphenated().to_string())
            .param(reporter.as_str())
            .fetch_optional(self.reader().await?.ex())
            .await?;
        row.as_ref().map(flag_from_row).transpose()
    }

    pub(super) async fn flags_page(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<(Vec<FlagRow>, bool), StoreError> {
        let rows = sqlx::query::<D>(D::sql(&FLAGS_PAGE))
            .param(after.map(|a| a.hyphenated().to_string()))
            .param(i64::from(limit) + 1)
            .fetch_all(self.reader().await?.ex())
            .await?;
        let has_more = rows.len() > limit as usize;
        let flags = rows
            .iter()
            .take(limit as usize)
            .map(flag_from_row)
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok((flags, has_more))
    }
}
