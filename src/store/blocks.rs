//! Users' blocks of other users (protocol.md §17): kept, dropped and
//! listed here; read by the direct-channel route, by presence, and under a
//! direct channel's lock by the write batch (`channel_lock.rs`), where a
//! block refuses the blocked user's entries.

use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;
use crate::ids::UserId;

/// `$1` blocks `$2` since `$3` (ms); affects no row when it did already.
const INSERT_BLOCK: &str = "INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES ($1, $2, $3) \
     ON CONFLICT (blocker_id, blocked_id) DO NOTHING";
const DELETE_BLOCK: &str = "DELETE FROM blocks WHERE blocker_id = $1 AND blocked_id = $2";
/// Whom `$1` blocks, in byte order, at most `$2`.
static BLOCKS_OF: Sql =
    Sql::same("SELECT blocked_id FROM blocks WHERE blocker_id = $1 ORDER BY blocked_id COLLATE \"C\" LIMIT $2");
/// Whether `$1` blocks `$2` or `$2` blocks `$1`.
const BLOCKED_EITHER_WAY: &str = "SELECT 1 FROM blocks WHERE (blocker_id = $1 AND blocked_id = $2) \
     OR (blocker_id = $2 AND blocked_id = $1) LIMIT 1";
/// Which of the users `$2` (a list of ids) block `$1`.
static BLOCKERS_AMONG: Sql = Sql::each(
    "SELECT blocker_id FROM blocks WHERE blocked_id = $1 AND blocker_id = ANY($2)",
    "SELECT blocker_id FROM blocks WHERE blocked_id = $1 AND blocker_id IN (SELECT value FROM json_each($2))",
);

/// The most blocks `GET /v1/me/blocks` returns (and a user may hold).
pub const MAX_BLOCKS: u32 = 10_000;

impl Store {
    /// `blocker` blocks `blocked` from `now` (ms); returns whether it is
    /// new. Idempotent.
    ///
    /// # Errors
    /// [`StoreError::NotAllowed`] when `blocker` already blocks
    /// [`MAX_BLOCKS`] users.
    pub async fn block(&self, blocker: &UserId, blocked: &UserId, now: i64) -> Result<bool, StoreError> {
        dispatch_write!(self, self.deadline(), block(blocker, blocked, now))
    }

    /// `blocker` no longer blocks `blocked`; returns whether it did. Idempotent.
    pub async fn unblock(&self, blocker: &UserId, blocked: &UserId) -> Result<bool, StoreError> {
        dispatch_write!(self, self.deadline(), unblock(blocker, blocked))
    }

    /// Whom `blocker` blocks, in byte order of the id (at most [`MAX_BLOCKS`]).
    pub async fn blocks_of(&self, blocker: &UserId) -> Result<Vec<UserId>, StoreError> {
        self.read(async { dispatch!(self.blocks_of(blocker, MAX_BLOCKS)) })
            .await
    }

    /// Whether either user blocks the other.
    pub async fn blocked_either_way(&self, a: &UserId, b: &UserId) -> Result<bool, StoreError> {
        self.read(async { dispatch!(self.blocked_either_way(a, b)) }).await
    }

    /// Which of `others` block `user`, in no order.
    pub async fn blockers_among(&self, user: &UserId, others: &[UserId]) -> Result<Vec<UserId>, StoreError> {
        if others.is_empty() {
            return Ok(Vec::new());
        }
        self.read(async { dispatch!(self.blockers_among(user, others)) }).await
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn block(
        &self,
        blocker: &UserId,
        blocked: &UserId,
        now: i64,
        sent: &CommitSent,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let held = sqlx::query::<D>(D::sql(&BLOCKS_OF))
            .param(blocker.as_str())
            .param(i64::from(MAX_BLOCKS))
            .fetch_all(tx.ex())
            .await?;
        let already = held
            .iter()
            .any(|row| row.value::<String>(0).is_ok_and(|u| u == blocked.as_str()));
        if already {
            return Ok(false);
        }
        if held.len() >= MAX_BLOCKS as usize {
            return Err(StoreError::NotAllowed);
        }
        let inserted = sqlx::query::<D>(INSERT_BLOCK)
            .param(blocker.as_str())
            .param(blocked.as_str())
            .param(now)
            .execute(tx.ex())
            .await?
            .rows_affected();
        Self::commit(tx, sent).await?;
        Ok(inserted > 0)
    }

    pub(super) async fn unblock(
        &self,
        blocker: &UserId,
        blocked: &UserId,
        sent: &CommitSent,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let deleted = sqlx::query::<D>(DELETE_BLOCK)
            .param(blocker.as_str())
            .param(blocked.as_str())
            .execute(tx.ex())
            .await?
            .rows_affected();
        Self::commit(tx, sent).await?;
        Ok(deleted > 0)
    }

    pub(super) async fn blocks_of(&self, blocker: &UserId, limit: u32) -> Result<Vec<UserId>, StoreError> {
        let rows = sqlx::query::<D>(D::sql(&BLOCKS_OF))
            .param(blocker.as_str())
            .param(i64::from(limit))
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter().map(|row| Ok(UserId::from_trusted(row.value(0)?))).collect()
    }

    pub(super) async fn blocked_either_way(&self, a: &UserId, b: &UserId) -> Result<bool, StoreError> {
        let row = sqlx::query::<D>(BLOCKED_EITHER_WAY)
            .param(a.as_str())
            .param(b.as_str())
            .fetch_optional(self.reader().await?.ex())
            .await?;
        Ok(row.is_some())
    }

    pub(super) async fn blockers_among(&self, user: &UserId, others: &[UserId]) -> Result<Vec<UserId>, StoreError> {
        let ids: Vec<&str> = others.iter().map(UserId::as_str).collect();
        let rows = D::bind_ids(sqlx::query::<D>(D::sql(&BLOCKERS_AMONG)).param(user.as_str()), &ids)?
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter().map(|row| Ok(UserId::from_trusted(row.value(0)?))).collect()
    }
}
