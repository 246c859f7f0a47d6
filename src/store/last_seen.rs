//! Presence's stored part: each user's `lastSeenAt`, which only moves
//! forward and is written in batches.

use super::dialect::{Columns, Dialect, Executes, Params, Sql};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;
use crate::ids::UserId;

/// Moves user `$1`'s `lastSeenAt` forward to `$2` (never back); not for a
/// time at or before the user's erasure (§19): a session the erasure closed
/// leaves no `lastSeenAt` behind.
const RECORD_LAST_SEEN: &str = "INSERT INTO presence (user_id, last_seen_at) SELECT $1, $2 \
     WHERE NOT EXISTS (SELECT 1 FROM user_erasures WHERE user_id = $1 AND erased_at >= $2) \
     ON CONFLICT (user_id) DO UPDATE SET last_seen_at = excluded.last_seen_at \
     WHERE presence.last_seen_at < excluded.last_seen_at";
/// The stored `lastSeenAt` of the users `$1` (a list of ids).
static LAST_SEEN: Sql = Sql::each(
    "SELECT user_id, last_seen_at FROM presence WHERE user_id = ANY($1)",
    "SELECT user_id, last_seen_at FROM presence WHERE user_id IN (SELECT value FROM json_each($1))",
);

impl Store {
    /// The stored `lastSeenAt` (ms) of those of `users` that have one.
    pub async fn last_seen(&self, users: &[UserId]) -> Result<Vec<(UserId, i64)>, StoreError> {
        if users.is_empty() {
            return Ok(Vec::new());
        }
        self.read(async { dispatch!(self.last_seen(users)) }).await
    }

    /// Moves each user's stored `lastSeenAt` forward to the given time (ms;
    /// never back), in one transaction: presence writes in batches.
    ///
    /// # Errors
    /// The store's error; nothing, or all of it, is written.
    pub async fn record_last_seen(&self, seen: &[(UserId, i64)]) -> Result<(), StoreError> {
        if seen.is_empty() {
            return Ok(());
        }
        dispatch_write!(self, self.deadline(), record_last_seen(seen))
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn last_seen(&self, users: &[UserId]) -> Result<Vec<(UserId, i64)>, StoreError> {
        let ids: Vec<&str> = users.iter().map(UserId::as_str).collect();
        let rows = D::bind_ids(sqlx::query::<D>(D::sql(&LAST_SEEN)), &ids)?
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|row| Ok((UserId::from_trusted(row.value(0)?), row.value(1)?)))
            .collect()
    }

    pub(super) async fn record_last_seen(&self, seen: &[(UserId, i64)], sent: &CommitSent) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        for (user, at) in seen {
            sqlx::query::<D>(RECORD_LAST_SEEN)
                .param(user.as_str())
                .param(*at)
                .execute(tx.ex())
                .await?;
        }
        Self::commit(tx, sent).await
    }
}
