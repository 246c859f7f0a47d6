//! Receipts: each member's delivered and read watermarks, which only move
//! forward, and where a user stands in every channel (watermarks and unread
//! count).

use super::channel_types::ChannelPosition;
use super::channel_types::{parse_kind, parse_posting_role, parse_role, parse_visibility};
use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql};
use super::entry_types::Entry;
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::locked::parse_notify;
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};

/// Moves `delivered_seq` forward only; affects no row when it would not move.
const ADVANCE_DELIVERED: &str =
    "INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq) VALUES ($1, $2, $3, 0) \
     ON CONFLICT (channel_id, user_id) DO UPDATE SET delivered_seq = excluded.delivered_seq \
     WHERE watermarks.delivered_seq < excluded.delivered_seq";
/// Moves `read_seq` forward only, and `delivered_seq` with it (read implies delivered).
const ADVANCE_READ: &str = "INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq) VALUES ($1, $2, $3, $3) \
     ON CONFLICT (channel_id, user_id) DO UPDATE SET read_seq = excluded.read_seq, \
     delivered_seq = CASE WHEN watermarks.delivered_seq < excluded.read_seq THEN excluded.read_seq ELSE watermarks.delivered_seq END \
     WHERE watermarks.read_seq < excluded.read_seq";
/// Each channel of `$1` with its last seq, the user's watermarks, its
/// unread count and unread mentions packed in one column (below), the
/// channel's kind, visibility and member count (from the members' primary
/// key), the user's role, its count of unread mentions of it by name, its
/// notification settings (none stored: `all`, no snooze), the channel's
/// `postingRole` and `slowModeMs` (§17) and retention; in byte order of the
/// id (PostgreSQL: `COLLATE "C"`, whatever the database's collation;
/// SQLite's BINARY already is).
///
/// Unread: the `message` entries after `read_seq`, not deleted, not sent
/// by the user, counted from the `messages_unread` index (no stored
/// counter that could drift). Unread mentions (§16): the user's `mentions`
/// rows above `read_seq` (a range of their primary key; deleted messages
/// and the user's own have none) plus the unread messages that mention
/// all (a message that mentions all adds no `mentions` rows, so none
/// counts twice; a delete clears the flag with the text).
///
/// A channel read up to its last seq has nothing unread: its counts are 0
/// without a probe (both databases evaluate a `CASE` branch's subqueries
/// only when it is taken), so a read-up user's HELLO costs one row per
/// channel. The `mentions` range is probed only when the watermarks row's
/// `mention_seq` (the newest seq of the user's `mentions` rows there, or
/// above; written with the message by `log_write` and `pg_batch`, never
/// lowered) is above `read_seq`, so a skipped probe is one that would have
/// counted 0.
///
/// The unread column is [`unpack_unread`]'s: the unread count times 2^32
/// plus the unread messages that mention all (NULL: 2^31 unread or more,
/// refused by [`position`]). On PostgreSQL both come from the one
/// index-only range of `messages_unread`, which includes `mention_all`
/// (migration 0024): a range per channel fewer than two, which is what a
/// user with unread mentions everywhere paid for (docs/performance.md,
/// "One range for unread and the mentions of all"). On SQLite the mentions
/// of all are a second range, of the `messages_mention_all` partial index,
/// probed only above the channel's `mention_all_seq` mark (written and
/// kept like `mention_seq`): there a probe is cheaper than a filter on
/// every unread row (measured, same section).
macro_rules! channel_states {
    (pg, $where:literal) => {
        concat!(
            channel_states!(
                "(SELECT CASE WHEN count(*) < 2147483648 THEN count(*) * 4294967296 \
                 + count(*) FILTER (WHERE x.mention_all) END FROM messages x \
                 WHERE x.channel_id = m.channel_id AND x.seq > COALESCE(w.read_seq, 0) \
                 AND x.kind = 'message' AND NOT x.deleted AND x.sender_id <> m.user_id)"
            ),
            $where
        )
    };
    (sqlite, $where:literal) => {
        concat!(
            channel_states!(
                "(SELECT CASE WHEN count(*) < 2147483648 THEN count(*) * 4294967296 END FROM messages x \
                 WHERE x.channel_id = m.channel_id AND x.seq > COALESCE(w.read_seq, 0) \
                 AND x.kind = 'message' AND NOT x.deleted AND x.sender_id <> m.user_id) + \
                 CASE WHEN c.mention_all_seq > COALESCE(w.read_seq, 0) THEN \
                 (SELECT count(*) FROM messages a WHERE a.channel_id = m.channel_id AND a.mention_all \
                 AND a.seq > COALESCE(w.read_seq, 0) AND a.sender_id <> m.user_id) ELSE 0 END"
            ),
            $where
        )
    };
    ($unread:literal) => {
        concat!(
            "SELECT c.channel_id, c.last_seq, COALESCE(w.delivered_seq, 0), COALESCE(w.read_seq, 0), \
     CASE WHEN COALESCE(w.read_seq, 0) >= c.last_seq THEN 0 ELSE ",
            $unread,
            " END, c.name, c.metadata, \
     c.kind, c.visibility, (SELECT count(*) FROM members y WHERE y.channel_id = m.channel_id), m.role, \
     CASE WHEN COALESCE(w.mention_seq, 0) > COALESCE(w.read_seq, 0) THEN \
     (SELECT count(*) FROM mentions z WHERE z.user_id = m.user_id AND z.channel_id = m.channel_id \
      AND z.seq > COALESCE(w.read_seq, 0)) ELSE 0 END, \
     s.notify, s.snooze_until, c.posting_role, c.slow_mode_ms, c.retention_secs \
     FROM members m JOIN channels c ON c.channel_id = m.channel_id \
     LEFT JOIN watermarks w ON w.channel_id = m.channel_id AND w.user_id = m.user_id \
     LEFT JOIN channel_settings s ON s.channel_id = m.channel_id AND s.user_id = m.user_id "
        )
    };
}
static CHANNEL_STATES: Sql = Sql::each(
    channel_states!(pg, "WHERE m.user_id = $1 ORDER BY c.channel_id COLLATE \"C\""),
    channel_states!(sqlite, "WHERE m.user_id = $1 ORDER BY c.channel_id"),
);
/// User `$1`'s entry of channel `$2`, as in [`CHANNEL_STATES`].
static CHANNEL_STATE: Sql = Sql::each(
    channel_states!(pg, "WHERE m.user_id = $1 AND m.channel_id = $2"),
    channel_states!(sqlite, "WHERE m.user_id = $1 AND m.channel_id = $2"),
);

impl Store {
    /// Where `user_id` stands in every channel it is a member of, by channel id.
    pub async fn channel_states(&self, user_id: &UserId) -> Result<Vec<ChannelPosition>, StoreError> {
        self.read(async { dispatch!(self.channel_states(user_id)) }).await
    }

    /// Where `user_id` stands in `channel_id`, as in its HELLO; `None` for a
    /// non-member or an unknown channel.
    pub async fn channel_state(
        &self,
        user_id: &UserId,
        channel_id: &ChannelId,
    ) -> Result<Option<ChannelPosition>, StoreError> {
        self.read(async { dispatch!(self.channel_state(user_id, channel_id)) })
            .await
    }

    /// Moves `user_id`'s delivered (or read) watermark in the message's channel
    /// forward to the message's `seq`. Returns whether it moved.
    ///
    /// # Errors
    /// [`StoreError::InDoubt`] when the connection failed after the statement
    /// was sent (the watermark may have moved; moving it again is harmless).
    pub async fn advance_watermark(&self, user_id: &UserId, message: &Entry, read: bool) -> Result<bool, StoreError> {
        dispatch_write!(self, self.deadline(), advance_watermark(user_id, message, read))
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn channel_states(&self, user_id: &UserId) -> Result<Vec<ChannelPosition>, StoreError> {
        let rows = sqlx::query::<D>(D::sql(&CHANNEL_STATES))
            .param(user_id.as_str())
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter().map(position).collect()
    }

    pub(super) async fn channel_state(
        &self,
        user_id: &UserId,
        channel_id: &ChannelId,
    ) -> Result<Option<ChannelPosition>, StoreError> {
        let mut conn = self.reader().await?;
        Self::position_in(&mut conn, user_id, channel_id).await
    }

    /// `user_id`'s entry of `channel_id` (`None`: not a member), read on
    /// `conn`: a pooled reader ([`Store::channel_state`]) or a transaction
    /// under the channel lock (a new member's `CHANNEL_ADDED`).
    pub(super) async fn position_in(
        conn: &mut D::Connection,
        user_id: &UserId,
        channel_id: &ChannelId,
    ) -> Result<Option<ChannelPosition>, StoreError> {
        let row = sqlx::query::<D>(D::sql(&CHANNEL_STATE))
            .param(user_id.as_str())
            .param(channel_id.as_str())
            .fetch_optional(conn.ex())
            .await?;
        row.as_ref().map(position).transpose()
    }

    pub(super) async fn advance_watermark(
        &self,
        user_id: &UserId,
        message: &Entry,
        read: bool,
        sent: &CommitSent,
    ) -> Result<bool, StoreError> {
        let statement = if read { ADVANCE_READ } else { ADVANCE_DELIVERED };
        // One autocommit statement: its commit is "sent" with it, so a
        // failure once the connection is ours is classified like a COMMIT's.
        let mut conn = self.write_pool.acquire().await?;
        sent.set();
        let moved = sqlx::query::<D>(statement)
            .param(message.channel_id.as_str())
            .param(user_id.as_str())
            .param(message.seq)
            .execute(conn.ex())
            .await
            .map_err(StoreError::after_commit_sent)?
            .rows_affected();
        Ok(moved > 0)
    }
}

/// A row of [`CHANNEL_STATES`] or [`CHANNEL_STATE`].
fn position<R: Columns>(row: &R) -> Result<ChannelPosition, StoreError> {
    let (unread, unread_all) = unpack_unread(row.value(4)?)
        .ok_or_else(|| StoreError::Corrupt("2^31 unread entries or more in one channel".to_owned()))?;
    Ok(ChannelPosition {
        channel_id: ChannelId::from_trusted(row.value(0)?),
        last_seq: row.value(1)?,
        delivered_seq: row.value(2)?,
        read_seq: row.value(3)?,
        unread,
        name: row.value(5)?,
        metadata: row.value(6)?,
        kind: parse_kind(row.value(7)?)?,
        visibility: parse_visibility(row.value(8)?)?,
        member_count: row.value(9)?,
        role: parse_role(row.value(10)?)?,
        unread_mentions: row.value::<i64>(11)? + unread_all,
        notify: row
            .value::<Option<String>>(12)?
            .map(parse_notify)
            .transpose()?
            .unwrap_or_default(),
        snooze_until: row.value(13)?,
        posting_role: parse_posting_role(row.value(14)?)?,
        slow_mode_ms: row.value(15)?,
        retention_secs: row.value(16)?,
    })
}

/// The unread column of [`CHANNEL_STATES`] as (unread entries, unread
/// messages that mention all): `unread * 2^32 + all`. `None`: the column
/// is NULL, which the statement answers for 2^31 unread entries or more in
/// one channel (where the product would leave 64 bits; counting that many
/// would take far longer than `db_timeout_ms` anyway).
fn unpack_unread(packed: Option<i64>) -> Option<(i64, i64)> {
    packed.filter(|p| *p >= 0).map(|p| (p >> 32, p & 0xFFFF_FFFF))
}

#[cfg(test)]
mod tests {
    use super::unpack_unread;

    #[test]
    fn the_unread_column_unpacks_into_unread_and_mentions_of_all() {
        assert_eq!(unpack_unread(Some(0)), Some((0, 0)));
        assert_eq!(unpack_unread(Some((135 << 32) + 2)), Some((135, 2)));
        let most = (1_i64 << 31) - 1;
        assert_eq!(unpack_unread(Some((most << 32) + most)), Some((most, most)));
        // NULL: 2^31 unread or more (the statement's bound); never negative.
        assert_eq!(unpack_unread(None), None);
        assert_eq!(unpack_unread(Some(-1)), None);
    }
}
