//! The channel row lock every write of a channel takes, and what is read
//! under it: the row orders a channel's writers (sends, membership changes,
//! its deletion), so each one sees the others' effects or commits before them.

use super::dialect::{Columns, Dialect, Params, Sql, SqlStore};
use super::StoreError;
use crate::ids::ChannelId;

/// Locks channel `$1`'s row and reads its `last_seq`, `last_ts`, `kind` and
/// `visibility`.
/// PostgreSQL: `FOR UPDATE` serialises the channel's writers across
/// connections and nodes. SQLite: the one writer connection and
/// `BEGIN IMMEDIATE` already do, so it is a plain read.
pub(super) static LOCK_CHANNEL: Sql = Sql::each(
    "SELECT last_seq, last_ts, kind, visibility FROM channels WHERE channel_id = $1 FOR UPDATE",
    "SELECT last_seq, last_ts, kind, visibility FROM channels WHERE channel_id = $1",
);
/// The ids of channel `$1`'s members.
const CHANNEL_MEMBERS: &str = "SELECT user_id FROM members WHERE channel_id = $1 ORDER BY user_id";

impl<D: Dialect> SqlStore<D> {
    /// The ids of channel `channel_id`'s members, read on `conn` (a
    /// transaction holding the channel's lock, or a reader).
    pub(super) async fn members_in<'c>(
        conn: impl sqlx::Executor<'c, Database = D>,
        channel_id: &ChannelId,
    ) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query::<D>(CHANNEL_MEMBERS)
            .param(channel_id.as_str())
            .fetch_all(conn)
            .await?;
        Ok(rows
            .iter()
            .map(|row| row.value(0))
            .collect::<Result<_, sqlx::Error>>()?)
    }
}
