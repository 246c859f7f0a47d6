//! Members: adding and removing one under the channel's lock, when each
//! joined (in the channel's sequence), and who shares a channel with whom.

use super::channel_lock::{LAST_SEQ, ROLE_OF};
use super::channel_types::parse_role;
use super::channel_types::{MemberEvent, MemberRow, MembersPage, MembershipOutcome};
use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql};
use super::entry_row::sorted_members;
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;
use super::succession;
use crate::ids::{ChannelId, UserId};
use crate::permissions::{self, Actor, MemberChange};
use crate::protocol::{ChannelKind, Role, Visibility};

/// Adds member `$2` to channel `$1` at `$3` (ms), when the channel's last
/// seq was `$4`, with role `$5`; a member already in keeps its row.
const INSERT_MEMBER: &str = "INSERT INTO members (channel_id, user_id, joined_at, joined_seq, role) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (channel_id, user_id) DO NOTHING";
/// Sets member `$2`'s role in channel `$1` to `$3`.
const SET_ROLE: &str = "UPDATE members SET role = $3 WHERE channel_id = $1 AND user_id = $2";
const DELETE_MEMBER: &str = "DELETE FROM members WHERE channel_id = $1 AND user_id = $2";
/// Whether user `$1`'s erasure is pending (`$2` = true).
const ERASING: &str = "SELECT 1 FROM user_erasures WHERE user_id = $1 AND pending = $2";
/// Whether user `$2` is banned from channel `$1`.
const IS_BANNED: &str = "SELECT 1 FROM bans WHERE channel_id = $1 AND user_id = $2";
/// Bans user `$2` from channel `$1` at `$3` (ms), by `$4` (`NULL`: the
/// admin token); affects no row when already banned.
const INSERT_BAN: &str = "INSERT INTO bans (channel_id, user_id, banned_at, banned_by) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (channel_id, user_id) DO NOTHING";
/// Lifts user `$2`'s ban from channel `$1` (none: no row).
pub(super) const DELETE_BAN: &str = "DELETE FROM bans WHERE channel_id = $1 AND user_id = $2";
/// Until when member `$2` of channel `$1` is muted, as stored.
const MUTED_UNTIL: &str = "SELECT muted_until FROM member_limits WHERE channel_id = $1 AND user_id = $2";
/// Mutes member `$2` of channel `$1` until `$3` (`NULL`: unmutes).
const SET_MUTE: &str = "INSERT INTO member_limits (channel_id, user_id, muted_until) VALUES ($1, $2, $3) \
     ON CONFLICT (channel_id, user_id) DO UPDATE SET muted_until = excluded.muted_until";
const MEMBER_SINCE: &str = "SELECT joined_seq FROM members WHERE channel_id = $1 AND user_id = $2";
/// The members of channel `$1` with their `joined_seq`, earliest join first.
const MEMBERS_SINCE: &str = "SELECT user_id, joined_seq FROM members WHERE channel_id = $1 ORDER BY joined_seq";
/// Which of the users `$2` (a list of ids) share a channel with user `$1`.
static SHARING_A_CHANNEL: Sql = Sql::each(
    "SELECT DISTINCT o.user_id FROM members m \
         JOIN members o ON o.channel_id = m.channel_id WHERE m.user_id = $1 AND o.user_id = ANY($2)",
    "SELECT DISTINCT o.user_id FROM members m \
         JOIN members o ON o.channel_id = m.channel_id WHERE m.user_id = $1 \
         AND o.user_id IN (SELECT value FROM json_each($2))",
);

/// Up to `$3` members of channel `$1` after user `$2` (`NULL`: from the
/// first) in byte order of the user id, each with its role, join time and
/// watermarks. PostgreSQL: `COLLATE "C"`, served by the
/// `members_by_channel_user_bytes` index; SQLite: the primary key.
static MEMBERS_PAGE: Sql = Sql::same(
    "SELECT m.user_id, m.role, m.joined_at, COALESCE(w.delivered_seq, 0), COALESCE(w.read_seq, 0), l.muted_until \
     FROM members m LEFT JOIN watermarks w ON w.channel_id = m.channel_id AND w.user_id = m.user_id \
     LEFT JOIN member_limits l ON l.channel_id = m.channel_id AND l.user_id = m.user_id \
     WHERE m.channel_id = $1 AND m.user_id COLLATE \"C\" > COALESCE($2::text, '') COLLATE \"C\" \
     ORDER BY m.user_id COLLATE \"C\" LIMIT $3",
);

impl Store {
    /// Adds (`add == true`) or removes a member; no-op when already so.
    /// Takes the channel lock, so sends committed after it see the change.
    /// Returns the channel's last `seq` at the change: every message after it
    /// was stored with the new membership.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown channel.
    pub async fn set_member(
        &self,
        channel_id: &ChannelId,
        user_id: &UserId,
        add: bool,
        now: i64,
    ) -> Result<i64, StoreError> {
        let change = if add {
            MembershipChange::Add(None)
        } else {
            MembershipChange::Remove
        };
        Ok(self
            .change_membership(channel_id, user_id, change, None, now)
            .await?
            .after_seq)
    }

    /// Changes `user_id`'s membership of `channel_id` as `change` says,
    /// asked by `by` (`None`: the admin token, or the user itself for a
    /// [`MembershipChange::Join`] or [`MembershipChange::Leave`]), under the
    /// channel lock like [`Self::set_member`]: `by`'s role and `user_id`'s
    /// are read under the lock and judged by
    /// `permissions::may_change_member`, so a role changed meanwhile is seen.
    /// Returns what changed, at which `afterSeq`, the members after it and,
    /// for a join, the new member's HELLO entry (`CHANNEL_ADDED`); adding an
    /// existing member without a new role, or removing a non-member, changes
    /// nothing (`event` is `None`).
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown channel,
    /// [`StoreError::NotAllowed`] when the channel's kind or visibility
    /// refuses the change (adding to or leaving a direct channel, joining a
    /// private one), [`StoreError::Denied`] when `by`'s role does not allow it,
    /// [`StoreError::Erasing`] when a user being erased would be added or join.
    pub async fn change_membership(
        &self,
        channel_id: &ChannelId,
        user_id: &UserId,
        change: MembershipChange,
        by: Option<&UserId>,
        now: i64,
    ) -> Result<MembershipOutcome, StoreError> {
        dispatch_write!(
            self,
            self.deadline(),
            change_membership(channel_id, user_id, change, by, now)
        )
    }

    /// The current members of `channel_id` with the seq each (last) joined
    /// at (see [`Self::member_since`]), earliest join first; empty for an
    /// unknown channel. Messages read back from the database go to the
    /// members who joined before them.
    pub async fn members_since(&self, channel_id: &ChannelId) -> Result<Vec<(UserId, i64)>, StoreError> {
        self.read(async { dispatch!(self.members_since(channel_id)) }).await
    }

    /// `Some(seq)` when `user_id` is a current member of `channel_id`: the
    /// channel's last seq when the member (last) joined, so every message
    /// after it was stored with this member (0 for members added with the
    /// channel). `None` for a non-member or an unknown channel.
    pub async fn member_since(&self, channel_id: &ChannelId, user_id: &UserId) -> Result<Option<i64>, StoreError> {
        self.read(async { dispatch!(self.member_since(channel_id, user_id)) })
            .await
    }

    /// `user_id`'s role in `channel_id`, `None` for a non-member or an
    /// unknown channel.
    ///
    /// # Errors
    /// The store's error; [`StoreError::Corrupt`] for a role the code does not know.
    pub async fn role_of(&self, channel_id: &ChannelId, user_id: &UserId) -> Result<Option<Role>, StoreError> {
        self.read(async { dispatch!(self.role_of(channel_id, user_id)) }).await
    }

    /// Up to `limit` members of `channel_id` with a user id above `after`
    /// (from the first when `None`), in byte order of the user id, with the
    /// channel's last seq at the read (`at_seq`, the same snapshot); `None`
    /// for an unknown channel.
    pub async fn members_page(
        &self,
        channel_id: &ChannelId,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<Option<MembersPage>, StoreError> {
        self.read(async { dispatch!(self.members_page(channel_id, after, limit)) })
            .await
    }

    /// Whether `user_id` is a current member of `channel_id` (false for an unknown channel).
    pub async fn is_member(&self, channel_id: &ChannelId, user_id: &UserId) -> Result<bool, StoreError> {
        Ok(self.member_since(channel_id, user_id).await?.is_some())
    }

    /// Which of `others` share at least one channel with `user` (presence
    /// shows only those), in no order. A read.
    pub async fn sharing_a_channel(&self, user: &UserId, others: &[UserId]) -> Result<Vec<UserId>, StoreError> {
        if others.is_empty() {
            return Ok(Vec::new());
        }
        self.read(async { dispatch!(self.sharing_a_channel(user, others)) })
            .await
    }
}

/// A change of one user's membership, and so what the channel must allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MembershipChange {
    /// The admin token, or an owner or moderator, adds (not to a direct
    /// channel), with this role (`None`: a new member is a `member`, an
    /// existing one keeps its role).
    Add(Option<Role>),
    /// The admin token, or an owner or moderator, removes (not from a
    /// direct channel).
    Remove,
    /// A user joins: a public group only. (A direct channel's two members
    /// are set when it is made: no one joins, leaves or is added.)
    Join,
    /// A user leaves: not a direct channel.
    Leave,
    /// The admin token, or an owner or moderator, mutes a member until
    /// then (ms since the epoch; `None` or a time past: unmutes); not in a
    /// direct channel (§17).
    Mute(Option<i64>),
    /// The admin token, or an owner or moderator, bans the user: a member
    /// is removed, and the user may not join again until the ban is lifted;
    /// not in a direct channel (§17).
    Ban,
    /// The user is being erased (§19): its membership ends in any channel,
    /// a direct one included, announced as a `leave`.
    Erase,
}

impl MembershipChange {
    /// The change as one member asks it of another (`None` for a join or
    /// leave, which a user asks for itself).
    fn by_another(self) -> Option<MemberChange> {
        match self {
            Self::Add(role) => Some(MemberChange::Add(role)),
            Self::Remove => Some(MemberChange::Remove),
            Self::Mute(_) | Self::Ban => Some(MemberChange::Discipline),
            Self::Join | Self::Leave | Self::Erase => None,
        }
    }

    /// Whether a channel of `kind` and `visibility` allows the change.
    fn allowed_in(self, kind: ChannelKind, visibility: Visibility) -> bool {
        match self {
            Self::Add(_) | Self::Remove | Self::Mute(_) | Self::Ban => kind != ChannelKind::Direct,
            Self::Join => kind == ChannelKind::Group && visibility == Visibility::Public,
            Self::Leave => kind != ChannelKind::Direct,
            Self::Erase => true,
        }
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn change_membership(
        &self,
        channel_id: &ChannelId,
        user_id: &UserId,
        change: MembershipChange,
        by: Option<&UserId>,
        now: i64,
        sent: &CommitSent,
    ) -> Result<MembershipOutcome, StoreError> {
        let mut tx = self.begin_write().await?;
        // Lock the channel row like a send does, so a send either sees
        // the new membership or committed before it.
        let locked = Self::lock_channel(&mut tx, channel_id)
            .await?
            .ok_or(StoreError::NotFound)?;
        let after_seq = locked.last_seq;
        let before = Self::role_in(&mut tx, channel_id, user_id).await?;
        let unchanged = MembershipOutcome {
            after_seq,
            ts: now,
            event: None,
            members: Vec::new(),
            added: None,
            successor: None,
        };
        if !change.allowed_in(locked.kind, locked.visibility) {
            // A member "joining" its own private channel changes nothing;
            // so does a non-member "leaving" a direct channel, answered as
            // for an unknown one, so a stranger learns nothing of it.
            let no_op = match change {
                MembershipChange::Join => before.is_some(),
                MembershipChange::Leave => before.is_none(),
                _ => false,
            };
            if no_op {
                return Ok(unchanged);
            }
            return Err(StoreError::NotAllowed);
        }
        if let (Some(by), Some(asked)) = (by, change.by_another()) {
            let actor = Self::role_in(&mut tx, channel_id, by).await?;
            permissions::may_change_member(Actor::User(actor), asked, before).map_err(StoreError::Denied)?;
        }
        // A user being erased (§19) gains no membership until its erasure
        // is done: whatever it could send there would outlive the erasure.
        if matches!(change, MembershipChange::Add(_) | MembershipChange::Join) && before.is_none() {
            let erasing = sqlx::query::<D>(ERASING)
                .param(user_id.as_str())
                .param(true)
                .fetch_optional(tx.ex())
                .await?;
            if erasing.is_some() {
                return Err(StoreError::Erasing);
            }
        }
        match (change, before) {
            // A banned user may not join again (§17) until the ban is lifted.
            (MembershipChange::Join, None) => {
                let banned = sqlx::query::<D>(IS_BANNED)
                    .param(channel_id.as_str())
                    .param(user_id.as_str())
                    .fetch_optional(tx.ex())
                    .await?;
                if banned.is_some() {
                    return Err(StoreError::Banned);
                }
            }
            // An admin or moderator adding the user back lifts its ban.
            (MembershipChange::Add(_), None) => {
                sqlx::query::<D>(DELETE_BAN)
                    .param(channel_id.as_str())
                    .param(user_id.as_str())
                    .execute(tx.ex())
                    .await?;
            }
            _ => {}
        }
        let event = match (change, before) {
            (MembershipChange::Add(_) | MembershipChange::Join, None) => {
                let role = match change {
                    MembershipChange::Add(Some(role)) => role,
                    _ => Role::Member,
                };
                sqlx::query::<D>(INSERT_MEMBER)
                    .param(channel_id.as_str())
                    .param(user_id.as_str())
                    .param(now)
                    .param(after_seq)
                    .param(role.as_str())
                    .execute(tx.ex())
                    .await?;
                MemberEvent::Join(role)
            }
            (MembershipChange::Add(Some(role)), Some(old)) if role != old => {
                sqlx::query::<D>(SET_ROLE)
                    .param(channel_id.as_str())
                    .param(user_id.as_str())
                    .param(role.as_str())
                    .execute(tx.ex())
                    .await?;
                MemberEvent::Role(role)
            }
            (MembershipChange::Remove | MembershipChange::Leave | MembershipChange::Erase, Some(_)) => {
                sqlx::query::<D>(DELETE_MEMBER)
                    .param(channel_id.as_str())
                    .param(user_id.as_str())
                    .execute(tx.ex())
                    .await?;
                MemberEvent::Leave
            }
            (MembershipChange::Mute(until), Some(_)) => {
                let stored: Option<Option<i64>> = sqlx::query::<D>(MUTED_UNTIL)
                    .param(channel_id.as_str())
                    .param(user_id.as_str())
                    .fetch_optional(tx.ex())
                    .await?
                    .map(|row| row.value(0))
                    .transpose()?;
                // A mute that ended is no mute: only a change of the mute
                // in force is stored and announced.
                let in_force = stored.flatten().filter(|&t| t > now);
                let wanted = until.filter(|&t| t > now);
                if in_force == wanted {
                    return Ok(unchanged);
                }
                sqlx::query::<D>(SET_MUTE)
                    .param(channel_id.as_str())
                    .param(user_id.as_str())
                    .param(wanted)
                    .execute(tx.ex())
                    .await?;
                MemberEvent::Mute(wanted)
            }
            (MembershipChange::Ban, _) => {
                let banned = sqlx::query::<D>(INSERT_BAN)
                    .param(channel_id.as_str())
                    .param(user_id.as_str())
                    .param(now)
                    .param(by.map(UserId::as_str))
                    .execute(tx.ex())
                    .await?
                    .rows_affected();
                let removed = before.is_some();
                if removed {
                    sqlx::query::<D>(DELETE_MEMBER)
                        .param(channel_id.as_str())
                        .param(user_id.as_str())
                        .execute(tx.ex())
                        .await?;
                } else if banned == 0 {
                    // Banned already, and not a member.
                    return Ok(unchanged);
                }
                MemberEvent::Ban { removed }
            }
            // Already so: nothing to store or announce.
            _ => return Ok(unchanged),
        };
        let successor = if succession::loses_an_owner(before, event) {
            Self::appoint_successor(&mut tx, channel_id, user_id).await?
        } else {
            None
        };
        let members = sorted_members(Self::members_in(tx.ex(), channel_id).await?);
        let added = match event {
            MemberEvent::Join(_) => Self::position_in(&mut tx, user_id, channel_id).await?,
            _ => None,
        };
        Self::commit(tx, sent).await?;
        Ok(MembershipOutcome {
            after_seq,
            ts: now,
            event: Some(event),
            members,
            added,
            successor,
        })
    }

    pub(super) async fn members_since(&self, channel_id: &ChannelId) -> Result<Vec<(UserId, i64)>, StoreError> {
        let rows = sqlx::query::<D>(MEMBERS_SINCE)
            .param(channel_id.as_str())
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|row| Ok((UserId::from_trusted(row.value(0)?), row.value(1)?)))
            .collect()
    }

    pub(super) async fn member_since(
        &self,
        channel_id: &ChannelId,
        user_id: &UserId,
    ) -> Result<Option<i64>, StoreError> {
        let row = sqlx::query::<D>(MEMBER_SINCE)
            .param(channel_id.as_str())
            .param(user_id.as_str())
            .fetch_optional(self.reader().await?.ex())
            .await?;
        Ok(row.map(|row| row.value(0)).transpose()?)
    }

    pub(super) async fn role_of(&self, channel_id: &ChannelId, user_id: &UserId) -> Result<Option<Role>, StoreError> {
        let row = sqlx::query::<D>(ROLE_OF)
            .param(channel_id.as_str())
            .param(user_id.as_str())
            .fetch_optional(self.reader().await?.ex())
            .await?;
        row.map(|row| parse_role(row.value(0)?)).transpose()
    }

    pub(super) async fn members_page(
        &self,
        channel_id: &ChannelId,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<Option<MembersPage>, StoreError> {
        let mut tx = self.begin_snapshot().await?;
        let Some(row) = sqlx::query::<D>(LAST_SEQ)
            .param(channel_id.as_str())
            .fetch_optional(tx.ex())
            .await?
        else {
            return Ok(None);
        };
        let at_seq: i64 = row.value(0)?;
        let rows = sqlx::query::<D>(D::sql(&MEMBERS_PAGE))
            .param(channel_id.as_str())
            .param(after.map(UserId::as_str))
            .param(i64::from(limit) + 1)
            .fetch_all(tx.ex())
            .await?;
        tx.commit().await?;
        let has_more = rows.len() > limit as usize;
        let members = rows
            .iter()
            .take(limit as usize)
            .map(|row| {
                Ok(MemberRow {
                    user_id: UserId::from_trusted(row.value(0)?),
                    role: parse_role(row.value(1)?)?,
                    joined_at: row.value(2)?,
                    delivered_seq: row.value(3)?,
                    read_seq: row.value(4)?,
                    muted_until: row.value(5)?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Some(MembersPage {
            members,
            has_more,
            at_seq,
        }))
    }

    pub(super) async fn sharing_a_channel(&self, user: &UserId, others: &[UserId]) -> Result<Vec<UserId>, StoreError> {
        let ids: Vec<&str> = others.iter().map(UserId::as_str).collect();
        let rows = D::bind_ids(sqlx::query::<D>(D::sql(&SHARING_A_CHANNEL)).param(user.as_str()), &ids)?
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter().map(|row| Ok(UserId::from_trusted(row.value(0)?))).collect()
    }
}
