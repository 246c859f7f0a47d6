//! The set-based batch's channels: every one locked with one statement, in
//! byte order of the id, and what the batch decides against read under the
//! locks (members with roles and limits; a direct channel's blocks; while
//! webhooks are on, the notification settings and the members' blocks).

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{Postgres, Row};

use super::super::batch_types::{NewEntry, OfflineMembers};
use super::super::channel_types::ChannelSettings;
use super::super::channel_types::{parse_kind, parse_posting_role, parse_role};
use super::super::entry_rules::ChannelRules;
use super::super::error::StoreError;
use super::super::locked::{parse_notify, Locked, LockedMember};
use super::super::sql_store::SqlStore;
use crate::ids::UserId;
use crate::protocol::ChannelKind;

/// Locks every channel of a batch (`$1` text[]) in one statement. The
/// rows are sorted before they are locked (PostgreSQL applies `ORDER BY`
/// below the locking clause), so the locks are taken in byte order of the
/// id, the order the per-row path uses: no deadlock between batches.
const LOCK_CHANNELS: &str = "SELECT channel_id, last_seq, last_ts, kind, posting_role, slow_mode_ms FROM channels \
     WHERE channel_id = ANY($1) ORDER BY channel_id COLLATE \"C\" FOR UPDATE";

/// Members of every channel of a batch (`$1` text[]) with their roles,
/// mutes and last message times (`member_limits`), in no order.
const MEMBERS_OF_CHANNELS: &str = "SELECT m.channel_id, m.user_id, m.role, l.muted_until, l.last_message_ts \
     FROM members m LEFT JOIN member_limits l ON l.channel_id = m.channel_id AND l.user_id = m.user_id \
     WHERE m.channel_id = ANY($1)";

/// The members of the direct channels `$1` (text[]) whom another member of
/// the same channel blocks (§17), as (channel, user).
const BLOCKED_IN_CHANNELS: &str = "SELECT DISTINCT x.channel_id, b.blocked_id FROM members x \
     JOIN blocks b ON b.blocker_id = x.user_id \
     JOIN members y ON y.channel_id = x.channel_id AND y.user_id = b.blocked_id WHERE x.channel_id = ANY($1)";

/// The stored notification settings (§16) of the channels `$1` (text[]),
/// as (channel, user, notify, snooze_until); read while webhooks are on.
const SETTINGS_OF_CHANNELS: &str = "SELECT channel_id, user_id, notify, snooze_until FROM channel_settings \
     WHERE channel_id = ANY($1)";

/// Every block held by a member of the channels `$1` (text[]), as
/// (channel, blocker, blocked); read while webhooks are on.
const BLOCKS_BY_MEMBERS_OF: &str = "SELECT m.channel_id, b.blocker_id, b.blocked_id FROM blocks b \
     JOIN members m ON m.user_id = b.blocker_id WHERE m.channel_id = ANY($1)";

impl SqlStore<Postgres> {
    /// Locks every channel of the batch with one statement, in byte order
    /// of the id like the per-row path (so batches of any writer or node
    /// cannot deadlock), and reads their members (in byte order) and, when
    /// `offline` is given, their offline members. Unknown channels are absent.
    pub(super) async fn lock_batch_channels(
        tx: &mut sqlx::Transaction<'static, Postgres>,
        sends: &[NewEntry],
        offline: Option<&dyn OfflineMembers>,
    ) -> Result<BTreeMap<String, Locked>, StoreError> {
        let ids: Vec<&str> = sends
            .iter()
            .map(|s| s.channel_id.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let locked = sqlx::query(LOCK_CHANNELS).bind(&ids).fetch_all(&mut **tx).await?;
        let mut members: BTreeMap<String, Vec<LockedMember>> = BTreeMap::new();
        for row in sqlx::query(MEMBERS_OF_CHANNELS).bind(&ids).fetch_all(&mut **tx).await? {
            let member = LockedMember {
                user: UserId::from_trusted(row.try_get(1)?),
                role: parse_role(row.try_get(2)?)?,
                muted_until: row.try_get(3)?,
                last_message_ts: row.try_get(4)?,
            };
            members.entry(row.try_get(0)?).or_default().push(member);
        }
        let mut channels = BTreeMap::new();
        let mut direct = Vec::new();
        for row in locked {
            let id: String = row.try_get(0)?;
            if parse_kind(row.try_get(3)?)? == ChannelKind::Direct {
                direct.push(id.clone());
            }
            let rules = ChannelRules {
                posting_role: parse_posting_role(row.try_get(4)?)?,
                slow_mode_ms: row.try_get(5)?,
            };
            let with_roles = members.remove(&id).unwrap_or_default();
            channels.insert(
                id,
                Locked::new(row.try_get(1)?, row.try_get(2)?, rules, with_roles, offline),
            );
        }
        if !direct.is_empty() {
            // Blocks matter in direct channels only: one more statement
            // when the batch has one.
            for row in sqlx::query(BLOCKED_IN_CHANNELS)
                .bind(&direct)
                .fetch_all(&mut **tx)
                .await?
            {
                let id: String = row.try_get(0)?;
                if let Some(channel) = channels.get_mut(&id) {
                    channel.blocked.push(UserId::from_trusted(row.try_get(1)?));
                }
            }
            for channel in channels.values_mut() {
                channel.blocked.sort_unstable();
            }
        }
        if offline.is_some() {
            // Webhooks on: what `notify` is computed from (§16), two more
            // statements per batch.
            for row in sqlx::query(SETTINGS_OF_CHANNELS)
                .bind(&ids)
                .fetch_all(&mut **tx)
                .await?
            {
                let id: String = row.try_get(0)?;
                if let Some(channel) = channels.get_mut(&id) {
                    let settings = ChannelSettings {
                        notify: parse_notify(row.try_get(2)?)?,
                        snooze_until: row.try_get(3)?,
                    };
                    channel.settings.push((UserId::from_trusted(row.try_get(1)?), settings));
                }
            }
            for row in sqlx::query(BLOCKS_BY_MEMBERS_OF)
                .bind(&ids)
                .fetch_all(&mut **tx)
                .await?
            {
                let id: String = row.try_get(0)?;
                if let Some(channel) = channels.get_mut(&id) {
                    let pair = (
                        UserId::from_trusted(row.try_get(1)?),
                        UserId::from_trusted(row.try_get(2)?),
                    );
                    channel.blocks.push(pair);
                }
            }
            for channel in channels.values_mut() {
                channel.sorted_notify_state();
            }
        }
        Ok(channels)
    }
}
