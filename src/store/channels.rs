//! Channels: creating one with its first members, reading, listing,
//! renaming and deleting it, and the channel row lock that orders every
//! write of a channel.

use std::collections::BTreeMap;

use super::channel_types::{parse_kind, parse_posting_role, parse_visibility};
use super::channel_types::{Channel, ChannelPatch, NewChannel};
use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql};
use super::entry_row::sorted_members;
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::search_separators::GoneTexts;
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};
use crate::permissions::Action;
use crate::protocol::{ChannelKind, Role, Visibility};

/// Channel `$1` made at `$2` (ms), of kind `$3` and visibility `$4`, named
/// `$5`, of the direct pair `$6`; affects no row when the id is taken (or,
/// for a direct channel, its pair has one already).
const INSERT_CHANNEL: &str = "INSERT INTO channels (channel_id, created_at, kind, visibility, name, direct_pair) \
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING";
/// Adds members (`$2`, a list of ids) to channel `$1`, joined at `$3`, with
/// the role `$4`; repeats and existing members are skipped (so owners,
/// inserted first, stay owners), and so are users whose erasure is pending
/// (`$5` = true: they gain no membership until it is done, §19).
static INSERT_MEMBERS: Sql = Sql::each(
    "INSERT INTO members (channel_id, user_id, joined_at, role) \
         SELECT $1, u, $3, $4 FROM UNNEST($2::text[]) AS u \
         WHERE NOT EXISTS (SELECT 1 FROM user_erasures e WHERE e.user_id = u AND e.pending = $5) \
         ON CONFLICT (channel_id, user_id) DO NOTHING",
    "INSERT INTO members (channel_id, user_id, joined_at, role) \
         SELECT $1, value, $3, $4 FROM json_each($2) \
         WHERE NOT EXISTS (SELECT 1 FROM user_erasures e WHERE e.user_id = value AND e.pending = $5) \
         ON CONFLICT (channel_id, user_id) DO NOTHING",
);
const CHANNEL: &str =
    "SELECT channel_id, created_at, last_seq, name, metadata, kind, visibility, posting_role, slow_mode_ms, \
     retention_secs FROM channels WHERE channel_id = $1";
/// Channels after `$1` (`NULL`: from the first; ids are never empty) in
/// byte order of the id, `$2` of them. PostgreSQL: `COLLATE "C"`, served by
/// the `channels_by_id_bytes` index; SQLite: the default BINARY collation
/// and the primary key's index.
static LIST_CHANNELS: Sql = Sql::same(
    "SELECT channel_id, created_at, last_seq, name, metadata, kind, visibility, posting_role, slow_mode_ms, \
         retention_secs FROM channels WHERE channel_id COLLATE \"C\" > COALESCE($1::text, '') COLLATE \"C\" \
         ORDER BY channel_id COLLATE \"C\" LIMIT $2",
);
/// The members of the channels `$1` (a list of ids).
static MEMBERS_OF_LISTED: Sql = Sql::each(
    "SELECT channel_id, user_id FROM members WHERE channel_id = ANY($1)",
    "SELECT channel_id, user_id FROM members WHERE channel_id IN (SELECT value FROM json_each($1))",
);
/// Sets `name` to `$3` when `$2`, `metadata` to `$5` when `$4`, and
/// `visibility` to `$6`, `posting_role` to `$7`, `slow_mode_ms` to `$8`
/// unless `NULL`, and `retention_secs` to `$10` when `$9` (§19).
const UPDATE_CHANNEL: &str = "UPDATE channels SET \
     name = CASE WHEN $2 THEN $3 ELSE name END, metadata = CASE WHEN $4 THEN $5 ELSE metadata END, \
     visibility = COALESCE($6, visibility), posting_role = COALESCE($7, posting_role), \
     slow_mode_ms = COALESCE($8, slow_mode_ms), \
     retention_secs = CASE WHEN $9 THEN $10 ELSE retention_secs END WHERE channel_id = $1";
/// A channel's rows, children first (`DELETE /v1/channels/{channelId}`):
/// the reaction state of its messages, its log, watermarks, members,
/// its webhook cursor (a channel made again with this id starts at seq 1),
/// its moderation state (mutes, slow mode, bans, flags).
const DELETE_CHANNEL: [&str; 12] = [
    "DELETE FROM reactions WHERE message_id IN (SELECT message_id FROM messages WHERE channel_id = $1)",
    "DELETE FROM reaction_counts WHERE message_id IN (SELECT message_id FROM messages WHERE channel_id = $1)",
    "DELETE FROM messages WHERE channel_id = $1",
    "DELETE FROM watermarks WHERE channel_id = $1",
    "DELETE FROM members WHERE channel_id = $1",
    "DELETE FROM webhook_cursors WHERE channel_id = $1",
    "DELETE FROM member_limits WHERE channel_id = $1",
    "DELETE FROM bans WHERE channel_id = $1",
    "DELETE FROM flags WHERE channel_id = $1",
    "DELETE FROM mentions WHERE channel_id = $1",
    "DELETE FROM channel_settings WHERE channel_id = $1",
    "DELETE FROM channels WHERE channel_id = $1",
];

impl Store {
    /// Creates a channel with its first members.
    ///
    /// # Errors
    /// [`StoreError::Exists`] when the id is taken.
    pub async fn create_channel(
        &self,
        channel_id: &ChannelId,
        members: &[UserId],
        now: i64,
    ) -> Result<Channel, StoreError> {
        let new = NewChannel {
            members: members.to_vec(),
            ..NewChannel::default()
        };
        self.create_channel_as(channel_id, &new, now).await
    }

    /// Creates a channel as `new` says: its kind, visibility, members and
    /// owners.
    ///
    /// # Errors
    /// [`StoreError::Exists`] when the id is taken.
    pub async fn create_channel_as(
        &self,
        channel_id: &ChannelId,
        new: &NewChannel,
        now: i64,
    ) -> Result<Channel, StoreError> {
        dispatch_write!(self, self.deadline(), create_channel(channel_id, new, now))
    }

    /// The channel and its members, or `None`.
    pub async fn channel(&self, channel_id: &ChannelId) -> Result<Option<Channel>, StoreError> {
        self.read(async { dispatch!(self.channel(channel_id)) }).await
    }

    /// Up to `limit` channels with an id above `after` (every channel when
    /// `None`) in byte order of the id, and whether more follow.
    pub async fn list_channels(
        &self,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<(Vec<Channel>, bool), StoreError> {
        self.read(async { dispatch!(self.list_channels(after, limit)) }).await
    }

    /// Applies `patch` to the channel's name and metadata; returns the
    /// channel as it is afterwards.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown channel.
    pub async fn update_channel(&self, channel_id: &ChannelId, patch: &ChannelPatch) -> Result<Channel, StoreError> {
        self.update_channel_by(channel_id, patch, None).await
    }

    /// As [`Self::update_channel`], asked by `by` (`None`: the admin token):
    /// its role is read under the channel lock and must allow it.
    ///
    /// # Errors
    /// As [`Self::update_channel`]; [`StoreError::Denied`].
    pub async fn update_channel_by(
        &self,
        channel_id: &ChannelId,
        patch: &ChannelPatch,
        by: Option<&UserId>,
    ) -> Result<Channel, StoreError> {
        dispatch_write!(self, self.deadline(), update_channel(channel_id, patch, by))?;
        self.channel(channel_id).await?.ok_or(StoreError::NotFound)
    }

    /// Deletes the channel with its messages, members and watermarks in one
    /// transaction (all or nothing), under the channel lock, so a send
    /// either committed before it or finds no channel. Returns the members
    /// it had.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown channel.
    pub async fn delete_channel(&self, channel_id: &ChannelId) -> Result<Vec<UserId>, StoreError> {
        self.delete_channel_by(channel_id, None).await
    }

    /// As [`Self::delete_channel`], asked by `by` (`None`: the admin token):
    /// its role is read under the channel lock and must allow it.
    ///
    /// # Errors
    /// As [`Self::delete_channel`]; [`StoreError::Denied`].
    pub async fn delete_channel_by(
        &self,
        channel_id: &ChannelId,
        by: Option<&UserId>,
    ) -> Result<Vec<UserId>, StoreError> {
        dispatch_write!(self, self.deadline(), delete_channel(channel_id, by))
    }
}

/// A channel row (`channel_id, created_at, last_seq, name, metadata, kind,
/// visibility, posting_role, slow_mode_ms, retention_secs`) with `members`.
fn channel_from_row<R: Columns>(row: &R, members: Vec<UserId>) -> Result<Channel, StoreError> {
    Ok(Channel {
        channel_id: ChannelId::from_trusted(row.value(0)?),
        created_at: row.value(1)?,
        last_seq: row.value(2)?,
        members,
        name: row.value(3)?,
        metadata: row.value(4)?,
        kind: parse_kind(row.value(5)?)?,
        visibility: parse_visibility(row.value(6)?)?,
        posting_role: parse_posting_role(row.value(7)?)?,
        slow_mode_ms: row.value(8)?,
        retention_secs: row.value(9)?,
    })
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn create_channel(
        &self,
        channel_id: &ChannelId,
        new: &NewChannel,
        now: i64,
        sent: &CommitSent,
    ) -> Result<Channel, StoreError> {
        let mut tx = self.begin_write().await?;
        let inserted = sqlx::query::<D>(INSERT_CHANNEL)
            .param(channel_id.as_str())
            .param(now)
            .param(new.kind.as_str())
            .param(new.visibility.as_str())
            .param(new.name.as_deref())
            .param(new.direct_pair.as_deref())
            .execute(tx.ex())
            .await?
            .rows_affected();
        if inserted == 0 {
            return Err(StoreError::Exists);
        }
        // One statement per role, for every member of it: a round trip per
        // member made a channel of 150,000 members outlast `db_timeout_ms`
        // and answer 503, which no retry could fix. Owners first, so an id
        // given in both lists stays an owner.
        for (users, role) in [(&new.owners, Role::Owner), (&new.members, Role::Member)] {
            if users.is_empty() {
                continue;
            }
            let users: Vec<&str> = users.iter().map(UserId::as_str).collect();
            D::bind_ids(
                sqlx::query::<D>(D::sql(&INSERT_MEMBERS)).param(channel_id.as_str()),
                &users,
            )?
            .param(now)
            .param(role.as_str())
            .param(true)
            .execute(tx.ex())
            .await?;
        }
        // Read back: a user being erased was left out.
        let members = sorted_members(Self::members_in(tx.ex(), channel_id).await?);
        Self::commit(tx, sent).await?;
        Ok(Channel {
            channel_id: channel_id.clone(),
            members,
            last_seq: 0,
            created_at: now,
            name: new.name.clone(),
            metadata: None,
            kind: new.kind,
            visibility: new.visibility,
            posting_role: Role::Member,
            slow_mode_ms: 0,
            retention_secs: None,
        })
    }

    pub(super) async fn channel(&self, channel_id: &ChannelId) -> Result<Option<Channel>, StoreError> {
        let mut conn = self.reader().await?;
        let Some(row) = sqlx::query::<D>(CHANNEL)
            .param(channel_id.as_str())
            .fetch_optional(conn.ex())
            .await?
        else {
            return Ok(None);
        };
        let members = Self::members_in(conn.ex(), channel_id).await?;
        Ok(Some(channel_from_row(&row, sorted_members(members))?))
    }

    pub(super) async fn list_channels(
        &self,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<(Vec<Channel>, bool), StoreError> {
        let mut conn = self.reader().await?;
        let rows = sqlx::query::<D>(D::sql(&LIST_CHANNELS))
            .param(after.map(ChannelId::as_str))
            .param(i64::from(limit) + 1)
            .fetch_all(conn.ex())
            .await?;
        let has_more = rows.len() > limit as usize;
        let mut channels = rows
            .iter()
            .take(limit as usize)
            .map(|row| channel_from_row(row, Vec::new()))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let ids: Vec<&str> = channels.iter().map(|c| c.channel_id.as_str()).collect();
        let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for row in D::bind_ids(sqlx::query::<D>(D::sql(&MEMBERS_OF_LISTED)), &ids)?
            .fetch_all(conn.ex())
            .await?
        {
            members.entry(row.value(0)?).or_default().push(row.value(1)?);
        }
        for channel in &mut channels {
            channel.members = sorted_members(members.remove(channel.channel_id.as_str()).unwrap_or_default());
        }
        Ok((channels, has_more))
    }

    pub(super) async fn update_channel(
        &self,
        channel_id: &ChannelId,
        patch: &ChannelPatch,
        by: Option<&UserId>,
        sent: &CommitSent,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        // A user's role is judged under the channel lock, so a demotion that
        // committed first is seen; so is the kind (a direct channel stays
        // private).
        let locked = Self::lock_channel(&mut tx, channel_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        Self::check_under_lock(&mut tx, channel_id, by, Action::UpdateChannel).await?;
        let direct_change = patch.visibility.is_some_and(|v| v != Visibility::Private)
            || patch.posting_role.is_some_and(|r| r != Role::Member)
            || patch.slow_mode_ms.is_some_and(|ms| ms != 0);
        if locked.kind == ChannelKind::Direct && direct_change {
            return Err(StoreError::NotAllowed);
        }
        sqlx::query::<D>(UPDATE_CHANNEL)
            .param(channel_id.as_str())
            .param(patch.name.is_some())
            .param(patch.name.clone().flatten())
            .param(patch.metadata.is_some())
            .param(patch.metadata.clone().flatten())
            .param(patch.visibility.map(Visibility::as_str))
            .param(patch.posting_role.map(Role::as_str))
            .param(patch.slow_mode_ms)
            .param(patch.retention_secs.is_some())
            .param(patch.retention_secs.flatten())
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await
    }

    pub(super) async fn delete_channel(
        &self,
        channel_id: &ChannelId,
        by: Option<&UserId>,
        sent: &CommitSent,
    ) -> Result<Vec<UserId>, StoreError> {
        let mut tx = self.begin_write().await?;
        // The channel lock, as a send takes it: a send either
        // committed before the delete or finds no channel after it.
        if Self::lock_channel(&mut tx, channel_id).await?.is_none() {
            return Err(StoreError::NotFound);
        }
        Self::check_under_lock(&mut tx, channel_id, by, Action::DeleteChannel).await?;
        let members = Self::members_in(tx.ex(), channel_id).await?;
        // Its texts leave the search index (SQLite; `search_separators`).
        let mut gone = GoneTexts::new();
        gone.note_channel_in::<D>(&mut tx, channel_id.as_str()).await?;
        // Every statement in the one transaction: a failure rolls
        // all of them back, so nothing is left half-deleted.
        for statement in DELETE_CHANNEL {
            sqlx::query::<D>(statement)
                .param(channel_id.as_str())
                .execute(tx.ex())
                .await?;
        }
        D::repair_search_separators(&mut tx, &gone).await?;
        // §15: its attachments go, their objects queued for removal after
        // the commit.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Self::erase_attachments_of_channel_in(&mut tx, channel_id.as_str(), now).await?;
        Self::commit(tx, sent).await?;
        // Its texts out of SQLite's -wal file too, as after a delete
        // (`store::wal_scrub`; nothing on PostgreSQL).
        self.scrub_wal().await;
        Ok(sorted_members(members))
    }
}
