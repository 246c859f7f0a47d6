//! The store's row types of channels: a channel and what makes or changes
//! it, its members and membership changes (§13), a user's position and
//! settings in it (HELLO's channel entries, §16), and the column parsers
//! of their names.

use super::error::StoreError;
use crate::ids::{ChannelId, UserId};
use crate::protocol::{ChannelKind, Notify, Role, Visibility};

/// A channel and its current members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    pub channel_id: ChannelId,
    /// Sorted by user id.
    pub members: Vec<UserId>,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
    /// Creation time, ms since the Unix epoch.
    pub created_at: i64,
    /// Display name, `None` when unset.
    pub name: Option<String>,
    /// Metadata: the serialized text of a JSON object, `None` when unset.
    pub metadata: Option<String>,
    /// `group` or `direct`.
    pub kind: ChannelKind,
    /// `private` or `public`.
    pub visibility: Visibility,
    /// Who may store `message` entries (§17): `member` (anyone) or `moderator`.
    pub posting_role: Role,
    /// Slow mode (§17): ms between two messages of one member, 0 when off.
    pub slow_mode_ms: i64,
    /// Its own retention (§19), seconds: `message` entries older than this
    /// are erased by the sweep (0: kept forever); `None`: the server's
    /// `retention_secs`.
    pub retention_secs: Option<i64>,
}

/// What a new channel is made with (`POST /v1/channels`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewChannel {
    /// Its members with the role `member`.
    pub members: Vec<UserId>,
    /// Its members with the role `owner` (an id in both lists is an owner).
    pub owners: Vec<UserId>,
    pub kind: ChannelKind,
    pub visibility: Visibility,
    /// Its display name, `None` for none.
    pub name: Option<String>,
    /// For a direct channel, its pair of users ([`super::direct::pair_key`]).
    pub direct_pair: Option<String>,
}

/// A change to a channel's `name` and `metadata`: for each, `None` leaves
/// it as it is, `Some(None)` clears it, `Some(Some(v))` sets it; and its
/// `visibility` (`None` leaves it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelPatch {
    /// The new display name.
    pub name: Option<Option<String>>,
    /// The new metadata, the serialized text of a JSON object.
    pub metadata: Option<Option<String>>,
    /// The new visibility (a group's only: a direct channel stays private).
    pub visibility: Option<Visibility>,
    /// The new posting role, `member` or `moderator` (§17; `None` leaves it).
    pub posting_role: Option<Role>,
    /// The new slow mode in ms, 0..=3600000 (§17; `None` leaves it).
    pub slow_mode_ms: Option<i64>,
    /// The new retention in seconds (§19): `None` leaves it, `Some(None)`
    /// clears it (the server's `retention_secs` applies), `Some(Some(s))`
    /// sets it (0: forever).
    pub retention_secs: Option<Option<i64>>,
}

/// One member of a channel, as the members route shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberRow {
    pub user_id: UserId,
    pub role: Role,
    /// When the member (last) joined, ms since the epoch.
    pub joined_at: i64,
    /// The member's delivered watermark in the channel (0: none).
    pub delivered_seq: i64,
    /// The member's read watermark in the channel (0: none).
    pub read_seq: i64,
    /// Until when the member is muted (ms since the epoch), as stored; a
    /// time in the past is no mute.
    pub muted_until: Option<i64>,
}

/// What a membership change changed (§13.3), as a `MEMBER` frame says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberEvent {
    /// The user became a member, with this role.
    Join(Role),
    /// The user is no longer a member.
    Leave,
    /// The member's role is now this.
    Role(Role),
    /// The member is muted until then (ms since the epoch; `None`: unmuted).
    Mute(Option<i64>),
    /// The user is banned; `removed`: it was a member and is no longer one.
    Ban {
        /// It was a member (and is removed); else only the ban is new.
        removed: bool,
    },
}

/// What [`super::Store::change_membership`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MembershipOutcome {
    /// The channel's last seq when the change took effect (`afterSeq`):
    /// entries above it were judged with it.
    pub after_seq: i64,
    /// When it was stored, ms since the epoch.
    pub ts: i64,
    /// What changed; `None` when nothing did (already so), and then
    /// `members` is empty and nothing is announced.
    pub event: Option<MemberEvent>,
    /// The members after the change, in byte order, read under the lock.
    pub members: Vec<UserId>,
    /// For a join: the new member's HELLO entry, read under the lock (its
    /// `last_seq` is `after_seq`).
    pub added: Option<ChannelPosition>,
    /// The member made owner in the same transaction because the change
    /// took the channel's last owner away (`store::succession`); already
    /// in `members`.
    pub successor: Option<UserId>,
}

/// A page of a channel's members, in byte order of the user id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MembersPage {
    pub members: Vec<MemberRow>,
    /// Whether members follow the last one of the page.
    pub has_more: bool,
    /// The channel's last seq when the page was read (from the same
    /// snapshot): membership changes announced after it are not in the page.
    pub at_seq: i64,
}

/// Where a user stands in one channel: the channel's last `seq` and the
/// user's watermarks (HELLO's channel entries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelPosition {
    pub channel_id: ChannelId,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
    /// The user's delivered watermark.
    pub delivered_seq: i64,
    /// The user's read watermark (at most `delivered_seq`).
    pub read_seq: i64,
    /// `message` entries after `read_seq`, not deleted, not sent by the user.
    pub unread: i64,
    /// Those of `unread` that mention the user or mention all (§16).
    pub unread_mentions: i64,
    /// The user's notification setting in the channel (§16).
    pub notify: Notify,
    /// The user's snooze in the channel, until then (ms; as stored: a time in
    /// the past is no snooze).
    pub snooze_until: Option<i64>,
    /// The channel's display name, `None` when unset.
    pub name: Option<String>,
    /// The channel's metadata (serialized JSON object), `None` when unset.
    pub metadata: Option<String>,
    pub kind: ChannelKind,
    pub visibility: Visibility,
    /// How many members the channel has.
    pub member_count: i64,
    /// The user's role in the channel.
    pub role: Role,
    /// Who may store `message` entries in the channel (§17).
    pub posting_role: Role,
    /// The channel's slow mode, ms (0: off; §17).
    pub slow_mode_ms: i64,
    /// The channel's own retention, seconds (§19; `None`: the server's).
    pub retention_secs: Option<i64>,
}

impl ChannelPosition {
    /// A member's entry of a channel it was made a member of at its
    /// creation: no watermarks, nothing unread.
    pub fn new_member(channel: &Channel, role: Role) -> Self {
        Self {
            channel_id: channel.channel_id.clone(),
            last_seq: channel.last_seq,
            delivered_seq: 0,
            read_seq: 0,
            unread: 0,
            unread_mentions: 0,
            notify: Notify::All,
            snooze_until: None,
            name: channel.name.clone(),
            metadata: channel.metadata.clone(),
            kind: channel.kind,
            visibility: channel.visibility,
            member_count: i64::try_from(channel.members.len()).unwrap_or(i64::MAX),
            role,
            posting_role: channel.posting_role,
            slow_mode_ms: channel.slow_mode_ms,
            retention_secs: channel.retention_secs,
        }
    }
}

/// A user's settings in a channel (§16).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelSettings {
    pub notify: Notify,
    /// Snoozed until then (ms); `None`: not snoozed.
    pub snooze_until: Option<i64>,
}

/// The `kind` column's text.
pub(super) fn parse_kind(text: String) -> Result<ChannelKind, StoreError> {
    ChannelKind::parse(&text).ok_or_else(|| StoreError::Corrupt(format!("channel kind {text}")))
}

/// The `visibility` column's text.
pub(super) fn parse_visibility(text: String) -> Result<Visibility, StoreError> {
    Visibility::parse(&text).ok_or_else(|| StoreError::Corrupt(format!("visibility {text}")))
}

/// The `role` column's text as a [`Role`].
pub(super) fn parse_role(text: String) -> Result<Role, StoreError> {
    Role::parse(&text).ok_or_else(|| StoreError::Corrupt(format!("role {text}")))
}

/// The `posting_role` column's text: `member` or `moderator`.
pub(super) fn parse_posting_role(text: String) -> Result<Role, StoreError> {
    match Role::parse(&text) {
        Some(role @ (Role::Member | Role::Moderator)) => Ok(role),
        _ => Err(StoreError::Corrupt(format!("posting role {text}"))),
    }
}
