//! The state a batch reads of each channel it writes, under the channel's
//! lock ([`super::channel_lock`]): its members with their roles and
//! moderation state (mutes, slow mode's last message times, direct
//! channels' blocks), and what the entry rules ask of it. Both write
//! paths (`log_write/`, `pg_batch/`) keep one [`Locked`] per channel.

use std::collections::BTreeMap;

use super::batch_types::{Change, NewEntry, OfflineMembers};
use super::channel_types::parse_role;
use super::channel_types::ChannelSettings;
use super::dialect::{Columns, Dialect, Executes, Params};
use super::entry_rules::{self, ChannelRules, SenderState};
use super::entry_types::{Entry, EntryKind};
use super::error::StoreError;
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};
use crate::protocol::{Notify, Role};

/// A member as a batch reads it under the channel's lock: its role and
/// what moderation keeps of it (`member_limits`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LockedMember {
    pub user: UserId,
    pub role: Role,
    /// Muted until then (ms), as stored.
    pub muted_until: Option<i64>,
    /// The `ts` of its last stored `message` entry, when kept (slow mode).
    pub last_message_ts: Option<i64>,
}

/// Channel `$1`'s members with their roles, mutes and last message times
/// (`member_limits`), in no order.
const MEMBERS_WITH_ROLES: &str = "SELECT m.user_id, m.role, l.muted_until, l.last_message_ts FROM members m \
     LEFT JOIN member_limits l ON l.channel_id = m.channel_id AND l.user_id = m.user_id WHERE m.channel_id = $1";
/// The members of channel `$1` another member of it blocks (§17; asked of
/// direct channels).
const BLOCKED_MEMBERS: &str = "SELECT DISTINCT b.blocked_id FROM members x \
     JOIN blocks b ON b.blocker_id = x.user_id \
     JOIN members y ON y.channel_id = x.channel_id AND y.user_id = b.blocked_id WHERE x.channel_id = $1";
/// The notification settings of channel `$1`'s users that have a row
/// (§16; read while webhooks are on).
const SETTINGS_OF_CHANNEL: &str = "SELECT user_id, notify, snooze_until FROM channel_settings WHERE channel_id = $1";
/// Every block held by a member of channel `$1`, as (blocker, blocked)
/// (read while webhooks are on).
const BLOCKS_BY_MEMBERS: &str = "SELECT b.blocker_id, b.blocked_id FROM blocks b \
     JOIN members m ON m.user_id = b.blocker_id WHERE m.channel_id = $1";

/// The `notify` column's text.
pub(super) fn parse_notify(text: String) -> Result<Notify, StoreError> {
    Notify::parse(&text).ok_or_else(|| StoreError::Corrupt(format!("notify {text}")))
}

/// The state a batch keeps for one locked channel.
pub(super) struct Locked {
    pub(super) last_seq: i64,
    pub(super) last_ts: i64,
    pub(super) members: Vec<UserId>,
    /// The members whose role is not `member` (moderators and owners), in
    /// byte order: few, read with the members under the lock.
    pub(super) moderators: Vec<(UserId, Role)>,
    /// The channel's `postingRole` and slow mode (§17).
    pub(super) rules: ChannelRules,
    /// The members with a stored mute or last message time
    /// (`member_limits`), in byte order: few, read with the members.
    pub(super) limits: Vec<(UserId, Limits)>,
    /// Members blocked by another member (a direct channel's; §17), in byte order.
    pub(super) blocked: Vec<UserId>,
    /// Slow mode on: the senders whose `message` entries this batch stored,
    /// with the last one's `ts`, to keep in `member_limits`.
    pub(super) posted: BTreeMap<UserId, i64>,
    pub(super) changed: bool,
    /// While webhooks are on: the members with no open session on any
    /// node, asked once per channel and batch, under the channel's lock.
    pub(super) offline: Option<Vec<UserId>>,
    /// While webhooks are on: the members' notification settings that are
    /// not the default (§16), in byte order of the user.
    pub(super) settings: Vec<(UserId, ChannelSettings)>,
    /// While webhooks are on: (blocker, blocked) for every block held by a
    /// member (§17: a blocker is not notified of the blocked user's
    /// entries), in byte order.
    pub(super) blocks: Vec<(UserId, UserId)>,
}

/// A member's `member_limits` row: mute and last message time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Limits {
    pub(super) muted_until: Option<i64>,
    pub(super) last_message_ts: Option<i64>,
}

impl Locked {
    /// A channel just locked, with its `rules`, its members with their roles
    /// and moderation state (any order; kept in byte order), and their
    /// offline ones when `offline` is given (webhooks on).
    pub(super) fn new(
        last_seq: i64,
        last_ts: i64,
        rules: ChannelRules,
        locked_members: Vec<LockedMember>,
        offline: Option<&dyn OfflineMembers>,
    ) -> Self {
        let mut members = Vec::with_capacity(locked_members.len());
        let mut moderators = Vec::new();
        let mut limits = Vec::new();
        for member in locked_members {
            if member.role != Role::Member {
                moderators.push((member.user.clone(), member.role));
            }
            if member.muted_until.is_some() || member.last_message_ts.is_some() {
                let row = Limits {
                    muted_until: member.muted_until,
                    last_message_ts: member.last_message_ts,
                };
                limits.push((member.user.clone(), row));
            }
            members.push(member.user);
        }
        members.sort_unstable();
        moderators.sort_unstable();
        limits.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let offline = offline.map(|o| o.offline(&members));
        Self {
            last_seq,
            last_ts,
            members,
            moderators,
            rules,
            limits,
            blocked: Vec::new(),
            posted: BTreeMap::new(),
            changed: false,
            offline,
            settings: Vec::new(),
            blocks: Vec::new(),
        }
    }

    /// What the entry rules know of `user` (`None`: not a member): its
    /// role, mute, last message time (this batch's included) and block.
    pub(super) fn sender(&self, user: &UserId) -> Option<SenderState> {
        let role = self.role_of(user)?;
        let limits = match self.limits.binary_search_by(|(u, _)| u.cmp(user)) {
            Ok(i) => self.limits[i].1,
            Err(_) => Limits::default(),
        };
        Some(SenderState {
            role,
            muted_until: limits.muted_until,
            last_message_ts: self.posted.get(user).copied().or(limits.last_message_ts),
            blocked: self.blocked.binary_search(user).is_ok(),
        })
    }

    /// The `offline_members` column of an entry of `sender` stored now: a
    /// JSON array of the offline members but the sender; `None` while
    /// webhooks are off.
    pub(super) fn offline_text(&self, sender: &UserId) -> Result<Option<String>, StoreError> {
        let Some(offline) = &self.offline else {
            return Ok(None);
        };
        let ids: Vec<&str> = offline.iter().filter(|u| *u != sender).map(UserId::as_str).collect();
        serde_json::to_string(&ids)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    /// The `notify_members` column of `message` stored now (§16): a JSON
    /// array of the offline members (but the sender) who want a
    /// notification for it ([`entry_rules::wants_notification`]); `None`
    /// while webhooks are off.
    pub(super) fn notify_text(&self, message: &Entry) -> Result<Option<String>, StoreError> {
        let Some(offline) = &self.offline else {
            return Ok(None);
        };
        let ids: Vec<&str> = offline
            .iter()
            .filter(|u| **u != message.sender_id)
            .filter(|u| {
                let settings = match self.settings.binary_search_by(|(s, _)| s.cmp(u)) {
                    Ok(i) => self.settings[i].1,
                    Err(_) => ChannelSettings::default(),
                };
                let blocks_sender = self
                    .blocks
                    .binary_search_by(|(a, b)| (a, b).cmp(&(*u, &message.sender_id)))
                    .is_ok();
                entry_rules::wants_notification(message, u, settings, blocks_sender)
            })
            .map(UserId::as_str)
            .collect();
        serde_json::to_string(&ids)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    /// Whether `user` is a current member (`members` is in byte order).
    pub(super) fn may_send(&self, user: &UserId) -> bool {
        self.members.binary_search(user).is_ok()
    }

    /// `user`'s role (`None`: not a member).
    pub(super) fn role_of(&self, user: &UserId) -> Option<Role> {
        if !self.may_send(user) {
            return None;
        }
        match self.moderators.binary_search_by(|(u, _)| u.cmp(user)) {
            Ok(i) => Some(self.moderators[i].1),
            Err(_) => Some(Role::Member),
        }
    }

    /// The message `send` becomes if stored next in this channel: a new
    /// UUIDv7, the next seq, and a ts that never goes back.
    pub(super) fn next_message(&self, send: &NewEntry, now: i64) -> Entry {
        Entry {
            message_id: uuid::Uuid::now_v7(),
            channel_id: send.channel_id.clone(),
            sender_id: send.sender_id.clone(),
            client_msg_id: send.client_msg_id.clone(),
            by_admin: send.origin.by_admin(),
            via_http: send.origin.via_http(),
            seq: self.last_seq + 1,
            body: send.body.clone(),
            ts: now.max(self.last_ts),
            kind: send.change.kind(),
            target_id: send.change.target(),
            emoji: match &send.change {
                Change::React { emoji, .. } => Some(emoji.clone()),
                _ => None,
            },
            add: match &send.change {
                Change::React { add, .. } => Some(*add),
                _ => None,
            },
            edited_body: None,
            edited_at: None,
            deleted: false,
            expired: false,
            noop: false,
            reactions: Vec::new(),
            reply_to: send.change.references().reply_to,
            thread_id: send.change.references().thread_id,
            reply_preview: None,
            thread: None,
            mentions: entry_rules::kept_mentions(&send.mentions, &self.members),
            mention_all: send.mentions.all,
            mentions_asked: send.mentions.key(),
            attachments: Vec::new(),
        }
    }

    /// Records that `message` (from [`Locked::next_message`]) is stored;
    /// in slow mode, a `message` entry's `ts` is its sender's last.
    pub(super) fn stored(&mut self, message: &Entry) {
        self.last_seq = message.seq;
        self.last_ts = message.ts;
        self.changed = true;
        if self.rules.slow_mode_ms > 0 && message.kind == EntryKind::Message {
            self.posted.insert(message.sender_id.clone(), message.ts);
        }
    }
}

impl<D: Dialect> SqlStore<D> {
    /// Every member of `channel_id` with its role and moderation state,
    /// read in `tx` (under the channel lock: what a batch's entries are
    /// judged by), in no order.
    pub(super) async fn members_with_roles_in(
        tx: &mut sqlx::Transaction<'static, D>,
        channel_id: &ChannelId,
    ) -> Result<Vec<LockedMember>, StoreError> {
        let rows = sqlx::query::<D>(MEMBERS_WITH_ROLES)
            .param(channel_id.as_str())
            .fetch_all(tx.ex())
            .await?;
        rows.iter()
            .map(|row| {
                Ok(LockedMember {
                    user: UserId::from_trusted(row.value(0)?),
                    role: parse_role(row.value(1)?)?,
                    muted_until: row.value(2)?,
                    last_message_ts: row.value(3)?,
                })
            })
            .collect()
    }

    /// The members of `channel_id` whom another member blocks, read in `tx`
    /// (under the channel lock), in byte order.
    pub(super) async fn blocked_members_in(
        tx: &mut sqlx::Transaction<'static, D>,
        channel_id: &ChannelId,
    ) -> Result<Vec<UserId>, StoreError> {
        let rows = sqlx::query::<D>(BLOCKED_MEMBERS)
            .param(channel_id.as_str())
            .fetch_all(tx.ex())
            .await?;
        let mut blocked = rows
            .iter()
            .map(|row| Ok(UserId::from_trusted(row.value(0)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        blocked.sort_unstable();
        Ok(blocked)
    }

    /// What the webhook's `notify` is computed from (§16), read in `tx`
    /// under the channel lock into `state` (asked while webhooks are on):
    /// the channel's stored settings and its members' blocks.
    pub(super) async fn notify_state_in(
        tx: &mut sqlx::Transaction<'static, D>,
        channel_id: &ChannelId,
        state: &mut Locked,
    ) -> Result<(), StoreError> {
        let rows = sqlx::query::<D>(SETTINGS_OF_CHANNEL)
            .param(channel_id.as_str())
            .fetch_all(tx.ex())
            .await?;
        for row in &rows {
            let settings = ChannelSettings {
                notify: parse_notify(row.value(1)?)?,
                snooze_until: row.value(2)?,
            };
            state.settings.push((UserId::from_trusted(row.value(0)?), settings));
        }
        let rows = sqlx::query::<D>(BLOCKS_BY_MEMBERS)
            .param(channel_id.as_str())
            .fetch_all(tx.ex())
            .await?;
        for row in &rows {
            let pair = (UserId::from_trusted(row.value(0)?), UserId::from_trusted(row.value(1)?));
            state.blocks.push(pair);
        }
        state.sorted_notify_state();
        Ok(())
    }
}

impl Locked {
    /// Puts `settings` and `blocks` in the byte order the lookups need.
    pub(super) fn sorted_notify_state(&mut self) {
        self.settings.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        self.blocks.sort_unstable();
    }
}
