//! The channel row lock every write of a channel takes, and what is read
//! under it: the row orders a channel's writers (sends, membership changes,
//! its deletion), so each one sees the others' effects or commits before them.

use super::channel_types::{parse_kind, parse_posting_role, parse_role, parse_visibility};
use super::dialect::{Columns, Dialect, Executes, Params, Sql};
use super::entry_rules::ChannelRules;
use super::error::StoreError;
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};
use crate::permissions::{self, Action, Actor, Role};
use crate::protocol::{ChannelKind, Visibility};

/// What is read of a channel while its row is locked.
#[derive(Debug, Clone, Copy)]
pub(super) struct LockedChannel {
    /// Its last seq: a change made under the lock takes effect after it.
    pub last_seq: i64,
    /// Its newest `ts` (ms): a new entry's is never below it.
    pub last_ts: i64,
    pub kind: ChannelKind,
    pub visibility: Visibility,
    /// Its `postingRole` and `slowModeMs` (§17).
    pub rules: ChannelRules,
}

/// Locks channel `$1`'s row and reads its `last_seq`, `last_ts`, `kind`,
/// `visibility`, `posting_role` and `slow_mode_ms` ([`SqlStore::lock_channel`]).
/// PostgreSQL: `FOR UPDATE` serialises the channel's writers across
/// connections and nodes. SQLite: the one writer connection and
/// `BEGIN IMMEDIATE` already do, so it is a plain read.
static LOCK_CHANNEL: Sql = Sql::each(
    "SELECT last_seq, last_ts, kind, visibility, posting_role, slow_mode_ms FROM channels WHERE channel_id = $1 FOR UPDATE",
    "SELECT last_seq, last_ts, kind, visibility, posting_role, slow_mode_ms FROM channels WHERE channel_id = $1",
);
/// Channel `$1`'s last seq, without a lock (a read, or a snapshot's).
pub(super) const LAST_SEQ: &str = "SELECT last_seq FROM channels WHERE channel_id = $1";
/// Member `$2`'s role in channel `$1`.
pub(super) const ROLE_OF: &str = "SELECT role FROM members WHERE channel_id = $1 AND user_id = $2";
/// The ids of channel `$1`'s members.
const CHANNEL_MEMBERS: &str = "SELECT user_id FROM members WHERE channel_id = $1 ORDER BY user_id";

impl<D: Dialect> SqlStore<D> {
    /// Locks `channel_id`'s row in `tx` until it ends (PostgreSQL: `FOR
    /// UPDATE`; SQLite: the one writer) and reads it; `None` for an unknown
    /// channel.
    pub(super) async fn lock_channel(
        tx: &mut sqlx::Transaction<'static, D>,
        channel_id: &ChannelId,
    ) -> Result<Option<LockedChannel>, StoreError> {
        let Some(row) = sqlx::query::<D>(D::sql(&LOCK_CHANNEL))
            .param(channel_id.as_str())
            .fetch_optional(tx.ex())
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(LockedChannel {
            last_seq: row.value(0)?,
            last_ts: row.value(1)?,
            kind: parse_kind(row.value(2)?)?,
            visibility: parse_visibility(row.value(3)?)?,
            rules: ChannelRules {
                posting_role: parse_posting_role(row.value(4)?)?,
                slow_mode_ms: row.value(5)?,
            },
        }))
    }

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

    /// `user`'s role in `channel_id` (`None`: not a member), read in `tx`
    /// (under the channel lock, so it holds until the commit).
    pub(super) async fn role_in(
        tx: &mut sqlx::Transaction<'static, D>,
        channel_id: &ChannelId,
        user: &UserId,
    ) -> Result<Option<Role>, StoreError> {
        let row = sqlx::query::<D>(ROLE_OF)
            .param(channel_id.as_str())
            .param(user.as_str())
            .fetch_optional(tx.ex())
            .await?;
        row.map(|row| parse_role(row.value(0)?)).transpose()
    }

    /// Refuses `action` on `channel_id` to `by` (`None`: the admin token,
    /// allowed everything) unless its role, read in `tx` under the channel
    /// lock, allows it.
    pub(super) async fn check_under_lock(
        tx: &mut sqlx::Transaction<'static, D>,
        channel_id: &ChannelId,
        by: Option<&UserId>,
        action: Action,
    ) -> Result<(), StoreError> {
        let Some(by) = by else { return Ok(()) };
        let role = Self::role_in(tx, channel_id, by).await?;
        permissions::may(Actor::User(role), action).map_err(StoreError::Denied)
    }
}
