//! Channel frames: a channel's state in HELLO, notification settings,
//! why a channel was removed, and MEMBER (membership changes, §13).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// One channel's state in HELLO.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelState {
    pub channel_id: String,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
    /// This user's delivered watermark.
    pub delivered_seq: i64,
    /// This user's read watermark (≤ `delivered_seq`).
    pub read_seq: i64,
    /// `message` entries after `read_seq` that are not deleted and not sent
    /// by this user (§8); 0 from a server before v1.1.
    #[serde(default)]
    pub unread: i64,
    /// The channel's display name (`PATCH /v1/channels/{channelId}`), `null` when unset.
    #[serde(default)]
    pub name: Option<String>,
    /// The channel's metadata, a JSON object, `null` when unset.
    #[serde(default)]
    pub metadata: Option<Value>,
    /// `group` or `direct` (version 1.2; `group` from an older server).
    #[serde(default)]
    pub kind: ChannelKind,
    /// `private` or `public` (version 1.2; `private` from an older server).
    #[serde(default)]
    pub visibility: Visibility,
    /// How many members the channel has (version 1.2; 0 from an older server).
    #[serde(default)]
    pub member_count: i64,
    /// This user's role in the channel (version 1.2; `member` from an older server).
    #[serde(default)]
    pub role: Role,
    /// Those of `unread` that mention this user or mention all (§16; 0
    /// from an older server).
    #[serde(default)]
    pub unread_mentions: i64,
    /// This user's notification setting in the channel (§16; `all` from an
    /// older server).
    #[serde(default)]
    pub notify: Notify,
    /// This user's snooze in the channel, ms since the epoch, as set
    /// (`null`: none; a time in the past has ended).
    #[serde(default)]
    pub snooze_until: Option<i64>,
    /// Who may post messages (§17): `member` (anyone; also from an older
    /// server) or `moderator` (an announcement channel).
    #[serde(default)]
    pub posting_role: Role,
    /// Slow mode (§17): ms a `member` waits between two messages; 0 when
    /// off (also from an older server).
    #[serde(default)]
    pub slow_mode_ms: i64,
    /// The channel's own retention (§19), seconds (0: forever); absent when
    /// unset (the server's `retention_secs` applies) and from an older server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_secs: Option<i64>,
}

/// Whom a user wants notified of in a channel (§16): `all` messages (the
/// default), those that `mentions` them or all, or `none`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Notify {
    #[default]
    All,
    Mentions,
    None,
}

impl Notify {
    /// The wire text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Mentions => "mentions",
            Self::None => "none",
        }
    }

    /// Parses the wire text; `None` for any other.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "all" => Self::All,
            "mentions" => Self::Mentions,
            "none" => Self::None,
            _ => return None,
        })
    }
}

/// Why a user is no longer in a channel (`CHANNEL_REMOVED`'s `reason`, §13.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemovedReason {
    /// The user left (`DELETE /v1/me/channels/{channelId}`).
    Left,
    /// An owner, moderator or the admin removed it.
    Removed,
    /// It was banned (moderation).
    Banned,
    /// The channel was deleted.
    Deleted,
    /// A reason this version does not know (a newer server).
    #[serde(other)]
    Other,
}

/// What a `MEMBER` frame announces (§13.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberOp {
    /// The user became a member (with `role`).
    Join,
    /// The user is no longer a member (left or removed).
    Leave,
    /// The member's role changed (to `role`).
    Role,
    /// The member was muted until `mutedUntil` (`null`: unmuted).
    Mute,
    /// The user was banned (and so is no longer a member).
    Ban,
    /// An op this version does not know (a newer server).
    #[serde(other)]
    Other,
}

/// The `MEMBER` frame's fields (§13.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberFrame {
    pub channel_id: String,
    /// Whose membership changed.
    pub user_id: String,
    pub op: MemberOp,
    /// The role after a `join` or `role`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// Until when (ms since the epoch) for a `mute`; `null` to unmute.
    /// Absent for other ops.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "muted_until")]
    pub muted_until: Option<Option<i64>>,
    /// The user who made the change; absent when the admin token made it
    /// (or for a user's own join or leave made with the admin token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<String>,
    /// The channel's `lastSeq` when the change took effect: entries above it
    /// were judged with it, entries at or below it without.
    pub after_seq: i64,
    /// When the change was stored, ms since the epoch.
    pub ts: i64,
}

/// `mutedUntil`: absent (`None`), `null` (`Some(None)`) or a time.
mod muted_until {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<Option<i64>>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(Some(ts)) => s.serialize_i64(*ts),
            _ => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<i64>>, D::Error> {
        Option::<i64>::deserialize(d).map(Some)
    }
}
