//! One implementation of the store's operations, generated for each backend by
//! [`sql_backend!`] over that backend's SQL text ([`super::sql`]). Keeping a
//! single body means PostgreSQL and SQLite cannot drift apart in behaviour;
//! the conformance suite in `tests/api/store.rs` checks that they do not.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use sqlx::{Postgres, Row, Sqlite};

use super::entry_rules::{self, Count, TargetState};
use super::sql::{self, common};
use super::{
    BatchOutcome, Change, Channel, ChannelPatch, ChannelPosition, CommitSent, EntriesPage, Entry, EntryKind,
    EntryOutcome, NewEntry, OfflineMembers, ReactionState, StoreError, WebhookBacklog, WebhookEntry,
};
use crate::ids::{ChannelId, ClientMsgId, UserId};

/// Decodes a row selected with the `message_columns!` column list.
fn entry_from_row<R: Row>(row: &R) -> Result<Entry, StoreError>
where
    usize: sqlx::ColumnIndex<R>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    bool: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let message_id = parse_uuid(row.try_get(0)?)?;
    let kind: String = row.try_get(7)?;
    let target: Option<String> = row.try_get(8)?;
    let op: Option<String> = row.try_get(10)?;
    Ok(Entry {
        message_id,
        channel_id: ChannelId::from_trusted(row.try_get(1)?),
        seq: row.try_get(2)?,
        sender_id: UserId::from_trusted(row.try_get(3)?),
        client_msg_id: ClientMsgId::from_trusted(row.try_get(4)?),
        body: row.try_get(5)?,
        ts: row.try_get(6)?,
        kind: EntryKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("kind {kind}")))?,
        target_id: target.map(parse_uuid).transpose()?,
        emoji: row.try_get(9)?,
        add: op.map(|op| op == "add"),
        edited_body: row.try_get(11)?,
        edited_at: row.try_get(12)?,
        deleted: row.try_get(13)?,
        noop: row.try_get(14)?,
        reactions: Vec::new(),
    })
}

fn parse_uuid(id: String) -> Result<uuid::Uuid, StoreError> {
    uuid::Uuid::try_parse(&id).map_err(|_| StoreError::Corrupt(format!("message id {id}")))
}

/// The `op` column's text.
fn op_text(add: bool) -> &'static str {
    if add {
        "add"
    } else {
        "remove"
    }
}

/// User ids in byte order, the order `binary_search` on [`UserId`] needs.
/// The database's `ORDER BY` is not enough: under a collation such as ICU's
/// `en-US`, `alice` sorts before `Bob`, and a member would be refused.
fn sorted_members(members: Vec<String>) -> Vec<UserId> {
    let mut members: Vec<UserId> = members.into_iter().map(UserId::from_trusted).collect();
    members.sort_unstable();
    members
}

/// The state a batch keeps for one locked channel.
struct Locked {
    last_seq: i64,
    last_ts: i64,
    members: Vec<UserId>,
    changed: bool,
    /// While webhooks are on: the members with no open session on any
    /// node, asked once per channel and batch, under the channel's lock.
    offline: Option<Vec<UserId>>,
}

impl Locked {
    /// A channel just locked, with its members (in byte order), and their
    /// offline ones when `offline` is given (webhooks on).
    fn new(last_seq: i64, last_ts: i64, members: Vec<UserId>, offline: Option<&dyn OfflineMembers>) -> Self {
        let offline = offline.map(|o| o.offline(&members));
        Self {
            last_seq,
            last_ts,
            members,
            changed: false,
            offline,
        }
    }

    /// The `offline_members` column of an entry of `sender` stored now: a
    /// JSON array of the offline members but the sender; `None` while
    /// webhooks are off.
    fn offline_text(&self, sender: &UserId) -> Result<Option<String>, StoreError> {
        let Some(offline) = &self.offline else {
            return Ok(None);
        };
        let ids: Vec<&str> = offline.iter().filter(|u| *u != sender).map(UserId::as_str).collect();
        serde_json::to_string(&ids)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    /// Whether `user` is a current member (`members` is in byte order).
    fn may_send(&self, user: &UserId) -> bool {
        self.members.binary_search(user).is_ok()
    }

    /// The message `send` becomes if stored next in this channel: a new
    /// UUIDv7, the next seq, and a ts that never goes back.
    fn next_message(&self, send: &NewEntry, now: i64) -> Entry {
        Entry {
            message_id: uuid::Uuid::now_v7(),
            channel_id: send.channel_id.clone(),
            sender_id: send.sender_id.clone(),
            client_msg_id: send.client_msg_id.clone(),
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
            noop: false,
            reactions: Vec::new(),
        }
    }

    /// Records that `message` (from [`Locked::next_message`]) is stored.
    fn stored(&mut self, message: &Entry) {
        self.last_seq = message.seq;
        self.last_ts = message.ts;
        self.changed = true;
    }
}

macro_rules! sql_backend {
    ($(#[$doc:meta])* $store:ident, $db:ty, $dialect:ident, $begin:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $store {
            /// Pool for transactions that write.
            pub(crate) write_pool: sqlx::Pool<$db>,
            /// Pool for reads (the same pool on PostgreSQL).
            pub(crate) read_pool: sqlx::Pool<$db>,
            /// The bound on every call (`db_timeout_ms`), applied by [`super::Store`].
            pub(crate) timeout: std::time::Duration,
            /// Where the messages this node read or stored live ([`super::Store::route`]).
            pub(crate) channel_of_cache: std::sync::Arc<super::channel_of::ChannelOfCache>,
        }

        impl $store {
            async fn begin_write(&self) -> Result<sqlx::Transaction<'static, $db>, StoreError> {
                Ok(self.write_pool.begin_with($begin).await?)
            }

            /// Commits, marking `sent` first: from here on a failure leaves the
            /// outcome unknown ([`StoreError::InDoubt`]) unless the server
            /// reported that it rolled back.
            async fn commit(tx: sqlx::Transaction<'static, $db>, sent: &CommitSent) -> Result<(), StoreError> {
                sent.set();
                tx.commit().await.map_err(StoreError::after_commit_sent)
            }

            pub(super) async fn close(&self) {
                self.write_pool.close().await;
                self.read_pool.close().await;
            }

            pub(super) async fn ping(&self) -> Result<(), StoreError> {
                sqlx::query(common::PING).execute(&self.read_pool).await?;
                Ok(())
            }

            pub(super) async fn create_channel(&self, channel_id: &ChannelId, members: &[UserId], now: i64, sent: &CommitSent) -> Result<Channel, StoreError> {
                let mut tx = self.begin_write().await?;
                let inserted = sqlx::query(common::INSERT_CHANNEL)
                    .bind(channel_id.as_str())
                    .bind(now)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if inserted == 0 {
                    return Err(StoreError::Exists);
                }
                Self::insert_members(&mut tx, channel_id, members, now).await?;
                Self::commit(tx, sent).await?;
                let mut members = members.to_vec();
                members.sort();
                members.dedup();
                Ok(Channel { channel_id: channel_id.clone(), members, last_seq: 0, created_at: now, name: None, metadata: None })
            }

            pub(super) async fn channel(&self, channel_id: &ChannelId) -> Result<Option<Channel>, StoreError> {
                let Some(row) = sqlx::query(common::CHANNEL).bind(channel_id.as_str()).fetch_optional(&self.read_pool).await? else {
                    return Ok(None);
                };
                let members = sqlx::query_scalar::<_, String>(common::CHANNEL_MEMBERS)
                    .bind(channel_id.as_str())
                    .fetch_all(&self.read_pool)
                    .await?;
                Ok(Some(Channel {
                    channel_id: ChannelId::from_trusted(row.try_get(0)?),
                    created_at: row.try_get(1)?,
                    last_seq: row.try_get(2)?,
                    members: sorted_members(members),
                    name: row.try_get(3)?,
                    metadata: row.try_get(4)?,
                }))
            }

            pub(super) async fn list_channels(&self, after: Option<&ChannelId>, limit: u32) -> Result<(Vec<Channel>, bool), StoreError> {
                let rows = sqlx::query(sql::$dialect::LIST_CHANNELS)
                    .bind(after.map(ChannelId::as_str))
                    .bind(i64::from(limit) + 1)
                    .fetch_all(&self.read_pool)
                    .await?;
                let has_more = rows.len() > limit as usize;
                let mut channels = rows
                    .iter()
                    .take(limit as usize)
                    .map(|row| {
                        Ok(Channel {
                            channel_id: ChannelId::from_trusted(row.try_get(0)?),
                            created_at: row.try_get(1)?,
                            last_seq: row.try_get(2)?,
                            members: Vec::new(),
                            name: row.try_get(3)?,
                            metadata: row.try_get(4)?,
                        })
                    })
                    .collect::<Result<Vec<_>, sqlx::Error>>()?;
                let ids: Vec<&str> = channels.iter().map(|c| c.channel_id.as_str()).collect();
                let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for (channel, user) in self.members_of_listed(&ids).await? {
                    members.entry(channel).or_default().push(user);
                }
                for channel in &mut channels {
                    channel.members = sorted_members(members.remove(channel.channel_id.as_str()).unwrap_or_default());
                }
                Ok((channels, has_more))
            }

            pub(super) async fn update_channel(&self, channel_id: &ChannelId, patch: &ChannelPatch, sent: &CommitSent) -> Result<(), StoreError> {
                let mut tx = self.begin_write().await?;
                let updated = sqlx::query(common::UPDATE_CHANNEL)
                    .bind(channel_id.as_str())
                    .bind(patch.name.is_some())
                    .bind(patch.name.clone().flatten())
                    .bind(patch.metadata.is_some())
                    .bind(patch.metadata.clone().flatten())
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if updated == 0 {
                    return Err(StoreError::NotFound);
                }
                Self::commit(tx, sent).await
            }

            pub(super) async fn delete_channel(&self, channel_id: &ChannelId, sent: &CommitSent) -> Result<Vec<UserId>, StoreError> {
                let mut tx = self.begin_write().await?;
                // The channel lock, as a send takes it: a send either
                // committed before the delete or finds no channel after it.
                if sqlx::query(sql::$dialect::LOCK_CHANNEL)
                    .bind(channel_id.as_str())
                    .fetch_optional(&mut *tx)
                    .await?
                    .is_none()
                {
                    return Err(StoreError::NotFound);
                }
                let members = sqlx::query_scalar::<_, String>(common::CHANNEL_MEMBERS)
                    .bind(channel_id.as_str())
                    .fetch_all(&mut *tx)
                    .await?;
                // Every statement in the one transaction: a failure rolls
                // all of them back, so nothing is left half-deleted.
                for statement in common::DELETE_CHANNEL {
                    sqlx::query(statement).bind(channel_id.as_str()).execute(&mut *tx).await?;
                }
                Self::commit(tx, sent).await?;
                Ok(sorted_members(members))
            }

            pub(super) async fn set_member(&self, channel_id: &ChannelId, user_id: &UserId, add: bool, now: i64, sent: &CommitSent) -> Result<i64, StoreError> {
                let mut tx = self.begin_write().await?;
                // Lock the channel row like a send does, so a send either sees
                // the new membership or committed before it.
                let Some(row) = sqlx::query(sql::$dialect::LOCK_CHANNEL)
                    .bind(channel_id.as_str())
                    .fetch_optional(&mut *tx)
                    .await?
                else {
                    return Err(StoreError::NotFound);
                };
                let last_seq: i64 = row.try_get(0)?;
                let statement = if add { common::INSERT_MEMBER } else { common::DELETE_MEMBER };
                let mut query = sqlx::query(statement).bind(channel_id.as_str()).bind(user_id.as_str());
                if add {
                    query = query.bind(now).bind(last_seq);
                }
                query.execute(&mut *tx).await?;
                Self::commit(tx, sent).await?;
                Ok(last_seq)
            }

            pub(super) async fn members_since(&self, channel_id: &ChannelId) -> Result<Vec<(UserId, i64)>, StoreError> {
                let rows = sqlx::query(common::MEMBERS_SINCE)
                    .bind(channel_id.as_str())
                    .fetch_all(&self.read_pool)
                    .await?;
                rows.iter()
                    .map(|row| Ok((UserId::from_trusted(row.try_get(0)?), row.try_get(1)?)))
                    .collect()
            }

            pub(super) async fn member_since(&self, channel_id: &ChannelId, user_id: &UserId) -> Result<Option<i64>, StoreError> {
                let row = sqlx::query(common::MEMBER_SINCE)
                    .bind(channel_id.as_str())
                    .bind(user_id.as_str())
                    .fetch_optional(&self.read_pool)
                    .await?;
                Ok(row.map(|row| row.try_get(0)).transpose()?)
            }

            pub(super) async fn channel_states(&self, user_id: &UserId) -> Result<Vec<ChannelPosition>, StoreError> {
                let rows = sqlx::query(common::CHANNEL_STATES).bind(user_id.as_str()).fetch_all(&self.read_pool).await?;
                rows.iter()
                    .map(|row| {
                        Ok(ChannelPosition {
                            channel_id: ChannelId::from_trusted(row.try_get(0)?),
                            last_seq: row.try_get(1)?,
                            delivered_seq: row.try_get(2)?,
                            read_seq: row.try_get(3)?,
                            unread: row.try_get(4)?,
                            name: row.try_get(5)?,
                            metadata: row.try_get(6)?,
                        })
                    })
                    .collect::<Result<_, sqlx::Error>>()
                    .map_err(StoreError::from)
            }

            pub(super) async fn messages_after(&self, channel_id: &ChannelId, after_seq: i64, limit: u32) -> Result<(Vec<Entry>, bool), StoreError> {
                let rows = sqlx::query(sql::$dialect::MESSAGES_AFTER)
                    .bind(channel_id.as_str())
                    .bind(after_seq)
                    .bind(i64::from(limit) + 1)
                    .fetch_all(&self.read_pool)
                    .await?;
                let mut messages = rows.iter().map(entry_from_row).collect::<Result<Vec<_>, _>>()?;
                let has_more = messages.len() > limit as usize;
                messages.truncate(limit as usize);
                Ok((messages, has_more))
            }

            pub(super) async fn entries_after(&self, channel_id: &ChannelId, after_seq: i64, limit: u32, reader: Option<&UserId>) -> Result<EntriesPage, StoreError> {
                self.entries_page(channel_id, sql::$dialect::MESSAGES_AFTER, after_seq, limit, reader, false).await
            }

            pub(super) async fn entries_before(&self, channel_id: &ChannelId, before_seq: i64, limit: u32, reader: Option<&UserId>) -> Result<EntriesPage, StoreError> {
                self.entries_page(channel_id, sql::$dialect::MESSAGES_BEFORE, before_seq, limit, reader, true).await
            }

            /// A page of entries from `query` (`MESSAGES_AFTER`, or
            /// `MESSAGES_BEFORE` when `backward`: a backward index scan, its
            /// rows reversed into `seq` order, `has_more` saying older ones
            /// exist), each `message` entry with its state and reactions.
            async fn entries_page(&self, channel_id: &ChannelId, query: &'static str, seq: i64, limit: u32, reader: Option<&UserId>, backward: bool) -> Result<EntriesPage, StoreError> {
                // The page and its reactions from one snapshot, so the state
                // shown is the state at one point of the log.
                let mut tx = self.read_pool.begin_with(sql::$dialect::BEGIN_SNAPSHOT).await?;
                let rows = sqlx::query(query)
                    .bind(channel_id.as_str())
                    .bind(seq)
                    .bind(i64::from(limit) + 1)
                    .fetch_all(&mut *tx)
                    .await?;
                let mut entries = rows.iter().map(entry_from_row).collect::<Result<Vec<_>, _>>()?;
                let has_more = entries.len() > limit as usize;
                entries.truncate(limit as usize);
                if backward {
                    entries.reverse();
                }
                let last_seq: i64 = sqlx::query_scalar(common::LAST_SEQ)
                    .bind(channel_id.as_str())
                    .fetch_optional(&mut *tx)
                    .await?
                    .unwrap_or(0);
                let ids: Vec<String> = entries
                    .iter()
                    .filter(|e| e.kind == EntryKind::Message && !e.deleted)
                    .map(|e| e.message_id.hyphenated().to_string())
                    .collect();
                if ids.is_empty() {
                    return Ok(EntriesPage { entries, has_more, last_seq });
                }
                // One statement for the reactions of every message of the
                // page, in first-use order per message.
                let rows = sqlx::query(sql::$dialect::REACTIONS_OF)
                    .bind(Self::id_list(&ids)?)
                    .bind(reader.map(UserId::as_str).unwrap_or(""))
                    .fetch_all(&mut *tx)
                    .await?;
                tx.commit().await?;
                let mut by_message: std::collections::HashMap<uuid::Uuid, Vec<ReactionState>> = std::collections::HashMap::new();
                for row in rows {
                    let id = parse_uuid(row.try_get(0)?)?;
                    by_message.entry(id).or_default().push(ReactionState {
                        emoji: row.try_get(1)?,
                        count: row.try_get(2)?,
                        me: reader.is_some() && row.try_get::<bool, _>(3)?,
                    });
                }
                for entry in &mut entries {
                    if let Some(reactions) = by_message.remove(&entry.message_id) {
                        entry.reactions = reactions;
                    }
                }
                Ok(EntriesPage { entries, has_more, last_seq })
            }

            pub(super) async fn message(&self, message_id: uuid::Uuid) -> Result<Option<Entry>, StoreError> {
                sqlx::query(sql::$dialect::MESSAGE_BY_ID)
                    .bind(message_id.hyphenated().to_string())
                    .fetch_optional(&self.read_pool)
                    .await?
                    .as_ref()
                    .map(entry_from_row)
                    .transpose()
            }

            pub(super) async fn message_by_key(&self, sender_id: &UserId, client_msg_id: &ClientMsgId) -> Result<Option<Entry>, StoreError> {
                sqlx::query(sql::$dialect::MESSAGE_BY_KEY)
                    .bind(sender_id.as_str())
                    .bind(client_msg_id.as_str())
                    .fetch_optional(&self.read_pool)
                    .await?
                    .as_ref()
                    .map(entry_from_row)
                    .transpose()
            }

            pub(super) async fn advance_watermark(&self, user_id: &UserId, message: &Entry, read: bool, sent: &CommitSent) -> Result<bool, StoreError> {
                let statement = if read { common::ADVANCE_READ } else { common::ADVANCE_DELIVERED };
                // One autocommit statement: its commit is "sent" with it, so a
                // failure once the connection is ours is classified like a COMMIT's.
                let mut conn = self.write_pool.acquire().await?;
                sent.set();
                let moved = sqlx::query(statement)
                    .bind(message.channel_id.as_str())
                    .bind(user_id.as_str())
                    .bind(message.seq)
                    .execute(&mut *conn)
                    .await
                    .map_err(StoreError::after_commit_sent)?
                    .rows_affected();
                Ok(moved > 0)
            }

            pub(super) async fn webhook_backlog(&self) -> Result<Vec<WebhookBacklog>, StoreError> {
                let rows = sqlx::query(common::WEBHOOK_BACKLOG).fetch_all(&self.read_pool).await?;
                rows.iter()
                    .map(|row| {
                        Ok(WebhookBacklog {
                            channel_id: ChannelId::from_trusted(row.try_get(0)?),
                            last_seq: row.try_get(1)?,
                            delivered_seq: row.try_get(2)?,
                            first_ts: row.try_get(3)?,
                        })
                    })
                    .collect::<Result<_, sqlx::Error>>()
                    .map_err(StoreError::from)
            }

            pub(super) async fn webhook_cursor(&self, channel_id: &ChannelId) -> Result<i64, StoreError> {
                Ok(sqlx::query_scalar::<_, i64>(common::WEBHOOK_CURSOR)
                    .bind(channel_id.as_str())
                    .fetch_optional(&self.read_pool)
                    .await?
                    .unwrap_or(0))
            }

            pub(super) async fn webhook_entries_after(&self, channel_id: &ChannelId, after_seq: i64, limit: u32) -> Result<Vec<WebhookEntry>, StoreError> {
                let rows = sqlx::query(sql::$dialect::WEBHOOK_ENTRIES_AFTER)
                    .bind(channel_id.as_str())
                    .bind(after_seq)
                    .bind(i64::from(limit))
                    .fetch_all(&self.read_pool)
                    .await?;
                rows.iter()
                    .map(|row| {
                        let entry = entry_from_row(row)?;
                        let offline: Option<String> = row.try_get(15)?;
                        let offline_members = match offline {
                            None => Vec::new(),
                            Some(text) => serde_json::from_str::<Vec<String>>(&text)
                                .map_err(|_| StoreError::Corrupt(format!("offline_members of {}", entry.message_id)))?
                                .into_iter()
                                .map(UserId::from_trusted)
                                .collect(),
                        };
                        Ok(WebhookEntry { entry, offline_members })
                    })
                    .collect()
            }

            pub(super) async fn move_webhook_cursor(&self, channel_id: &ChannelId, from: i64, to: i64, now: i64, sent: &CommitSent) -> Result<bool, StoreError> {
                let mut conn = self.write_pool.acquire().await?;
                sent.set();
                let moved = if from == 0 {
                    let inserted = sqlx::query(common::WEBHOOK_CURSOR_FIRST)
                        .bind(channel_id.as_str())
                        .bind(to)
                        .bind(now)
                        .execute(&mut *conn)
                        .await
                        .map_err(StoreError::after_commit_sent)?
                        .rows_affected();
                    inserted > 0
                } else {
                    false
                };
                if moved {
                    return Ok(true);
                }
                let updated = sqlx::query(common::WEBHOOK_CURSOR_MOVE)
                    .bind(channel_id.as_str())
                    .bind(from)
                    .bind(to)
                    .bind(now)
                    .execute(&mut *conn)
                    .await
                    .map_err(StoreError::after_commit_sent)?
                    .rows_affected();
                Ok(updated > 0)
            }

            pub(super) async fn record_last_seen(&self, seen: &[(UserId, i64)], sent: &CommitSent) -> Result<(), StoreError> {
                let mut tx = self.begin_write().await?;
                for (user, at) in seen {
                    sqlx::query(common::RECORD_LAST_SEEN)
                        .bind(user.as_str())
                        .bind(*at)
                        .execute(&mut *tx)
                        .await?;
                }
                Self::commit(tx, sent).await
            }

            /// Stores a batch with a few statements per send: every channel
            /// locked in id order, each send resolved by its idempotency key,
            /// one insert per new message. Handles every batch (repeated
            /// keys, keys taken meanwhile); on PostgreSQL the set-based
            /// [`PgStore::write_batch`] falls back to it.
            pub(super) async fn write_batch_rows(&self, sends: &[NewEntry], now: i64, offline: Option<&dyn OfflineMembers>, sent: &CommitSent) -> Result<BatchOutcome, StoreError> {
                let mut tx = self.begin_write().await?;
                // Lock every channel of the batch in id order (BTreeMap), read its
                // sequence state and members once.
                let mut channels: BTreeMap<&ChannelId, Option<Locked>> = sends.iter().map(|s| (&s.channel_id, None)).collect();
                for (channel_id, slot) in channels.iter_mut() {
                    let Some(row) = sqlx::query(sql::$dialect::LOCK_CHANNEL)
                        .bind(channel_id.as_str())
                        .fetch_optional(&mut *tx)
                        .await?
                    else {
                        continue;
                    };
                    let members = sqlx::query_scalar::<_, String>(common::CHANNEL_MEMBERS)
                        .bind(channel_id.as_str())
                        .fetch_all(&mut *tx)
                        .await?;
                    *slot = Some(Locked::new(row.try_get(0)?, row.try_get(1)?, sorted_members(members), offline));
                }

                let mut outcomes = Vec::with_capacity(sends.len());
                for send in sends {
                    // The idempotency key decides first (guarantee 2): a send that
                    // may not be stored still gets the message stored under its
                    // key, and a send that may is inserted only if its key is
                    // new (ON CONFLICT DO NOTHING), else the stored one is looked
                    // up. So a new message costs one statement, not a lookup and
                    // an insert. Lookups run in the transaction, so they see
                    // this batch's own rows.
                    let channel = match channels.get_mut(&send.channel_id) {
                        Some(Some(channel)) if channel.may_send(&send.sender_id) => channel,
                        _ => {
                            let existing = match self.lookup_in(&mut tx, send).await? {
                                Some(existing) => existing,
                                None => {
                                    let target = match send.change.target() {
                                        Some(target) => Self::target_in(&mut tx, target).await?.map(TargetState::from),
                                        None => None,
                                    };
                                    entry_rules::refusal(send, false, target.as_ref()).unwrap_or(EntryOutcome::Forbidden)
                                }
                            };
                            outcomes.push(existing);
                            continue;
                        }
                    };
                    // An entry about a message: the key decides first, then
                    // the target, read under the channel's lock (so an
                    // earlier entry of this batch, a delete say, is seen).
                    if let Some(target) = send.change.target() {
                        if let Some(existing) = self.lookup_in(&mut tx, send).await? {
                            outcomes.push(existing);
                            continue;
                        }
                        let target = Self::target_in(&mut tx, target).await?.map(TargetState::from);
                        if let Some(refusal) = entry_rules::refusal(send, true, target.as_ref()) {
                            outcomes.push(refusal);
                            continue;
                        }
                    }
                    let message = channel.next_message(send, now);
                    let inserted = sqlx::query(sql::$dialect::INSERT_MESSAGE)
                        .bind(message.message_id.hyphenated().to_string())
                        .bind(message.channel_id.as_str())
                        .bind(message.seq)
                        .bind(message.sender_id.as_str())
                        .bind(message.client_msg_id.as_str())
                        .bind(&message.body)
                        .bind(message.ts)
                        .bind(message.kind.as_str())
                        .bind(message.target_id.map(|t| t.hyphenated().to_string()))
                        .bind(message.emoji.as_deref())
                        .bind(message.add.map(op_text))
                        .bind(channel.offline_text(&message.sender_id)?)
                        .fetch_optional(&mut *tx)
                        .await?
                        .is_some();
                    if inserted {
                        let mut message = message;
                        message.noop = !Self::apply(&mut tx, send, &message).await?;
                        if message.noop {
                            sqlx::query(sql::$dialect::MARK_NOOP)
                                .bind(message.message_id.hyphenated().to_string())
                                .execute(&mut *tx)
                                .await?;
                        }
                        channel.stored(&message);
                        outcomes.push(EntryOutcome::Stored(message));
                    } else {
                        // The key is taken (stored earlier, earlier in this batch,
                        // or by a transaction that committed meanwhile; a fresh
                        // statement sees it). No seq was used.
                        let existing = self.lookup_in(&mut tx, send).await?;
                        outcomes.push(existing.unwrap_or(EntryOutcome::Conflict));
                    }
                }

                let mut members = Vec::new();
                for (channel_id, state) in channels {
                    let Some(state) = state.filter(|s| s.changed) else { continue };
                    sqlx::query(common::UPDATE_CHANNEL_SEQ)
                        .bind(channel_id.as_str())
                        .bind(state.last_seq)
                        .bind(state.last_ts)
                        .execute(&mut *tx)
                        .await?;
                    members.push((channel_id.clone(), state.members));
                }
                Self::commit(tx, sent).await?;
                Ok(BatchOutcome { outcomes, members })
            }

            /// Resolves a send against a stored row with the same key:
            /// `Duplicate` when channel and body match, else `Conflict`.
            async fn lookup_in(&self, tx: &mut sqlx::Transaction<'static, $db>, send: &NewEntry) -> Result<Option<EntryOutcome>, StoreError> {
                let row = sqlx::query(sql::$dialect::MESSAGE_BY_KEY)
                    .bind(send.sender_id.as_str())
                    .bind(send.client_msg_id.as_str())
                    .fetch_optional(&mut **tx)
                    .await?;
                let Some(row) = row else { return Ok(None) };
                let existing = entry_from_row(&row)?;
                Ok(Some(if existing.is_retried_as(send) {
                    EntryOutcome::Duplicate(existing)
                } else {
                    EntryOutcome::Conflict
                }))
            }

            async fn target_in(tx: &mut sqlx::Transaction<'static, $db>, target: uuid::Uuid) -> Result<Option<Entry>, StoreError> {
                sqlx::query(sql::$dialect::MESSAGE_BY_ID)
                    .bind(target.hyphenated().to_string())
                    .fetch_optional(&mut **tx)
                    .await?
                    .as_ref()
                    .map(entry_from_row)
                    .transpose()
            }

            /// Applies a stored entry to its target's state, in the same
            /// transaction: an edit sets the current text, a delete erases
            /// the text of the message and of all its edits and drops its
            /// reactions, a reaction moves the holders and counts (a no-op
            /// `add` of a held one or `remove` of one not held changes nothing).
            /// Returns whether it changed anything.
            async fn apply(tx: &mut sqlx::Transaction<'static, $db>, send: &NewEntry, entry: &Entry) -> Result<bool, StoreError> {
                match &send.change {
                    Change::Message => {}
                    Change::Edit { target } => {
                        sqlx::query(sql::$dialect::APPLY_EDIT)
                            .bind(target.hyphenated().to_string())
                            .bind(&send.body)
                            .bind(entry.ts)
                            .execute(&mut **tx)
                            .await?;
                    }
                    Change::Delete { target } => {
                        let id = target.hyphenated().to_string();
                        for statement in [
                            sql::$dialect::ERASE_MESSAGE,
                            sql::$dialect::ERASE_EDITS,
                            sql::$dialect::DELETE_REACTIONS,
                            sql::$dialect::DELETE_REACTION_COUNTS,
                        ] {
                            sqlx::query(statement).bind(&id).execute(&mut **tx).await?;
                        }
                    }
                    Change::React { target, emoji, add } => {
                        let id = target.hyphenated().to_string();
                        let user = send.sender_id.as_str();
                        if *add {
                            let added = sqlx::query(sql::$dialect::ADD_REACTION)
                                .bind(&id).bind(emoji).bind(user)
                                .execute(&mut **tx).await?.rows_affected();
                            if added == 0 {
                                return Ok(false);
                            }
                            sqlx::query(sql::$dialect::COUNT_UP)
                                .bind(&id).bind(emoji).bind(entry.seq)
                                .execute(&mut **tx).await?;
                        } else {
                            let removed = sqlx::query(sql::$dialect::REMOVE_REACTION)
                                .bind(&id).bind(emoji).bind(user)
                                .execute(&mut **tx).await?.rows_affected();
                            if removed == 0 {
                                return Ok(false);
                            }
                            let gone = sqlx::query(sql::$dialect::COUNT_GONE)
                                .bind(&id).bind(emoji)
                                .execute(&mut **tx).await?.rows_affected();
                            if gone == 0 {
                                sqlx::query(sql::$dialect::COUNT_DOWN)
                                    .bind(&id).bind(emoji)
                                    .execute(&mut **tx).await?;
                            }
                        }
                    }
                }
                Ok(true)
            }
        }
    };
}

sql_backend!(
    /// The PostgreSQL store: one pool; `FOR UPDATE` on the channel row
    /// serialises writers of a channel across connections and nodes.
    PgStore,
    Postgres,
    pg,
    "BEGIN"
);

sql_backend!(
    /// The embedded SQLite store: WAL, `synchronous=FULL`, one writer
    /// connection taking `BEGIN IMMEDIATE`, and a pool of readers.
    SqliteStore,
    Sqlite,
    sqlite,
    "BEGIN IMMEDIATE"
);

impl SqliteStore {
    /// A list of ids as one parameter: a JSON array (read by `json_each`).
    fn id_list(ids: &[String]) -> Result<String, StoreError> {
        serde_json::to_string(ids).map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    /// (channel, member) rows of the channels `ids`.
    async fn members_of_listed(&self, ids: &[&str]) -> Result<Vec<(String, String)>, StoreError> {
        let ids = serde_json::to_string(ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(sqlx::query_as(sql::sqlite::MEMBERS_OF_LISTED)
            .bind(ids)
            .fetch_all(&self.read_pool)
            .await?)
    }

    /// Adds a new channel's members in one statement (`$2` a JSON array of
    /// the ids, read by SQLite's `json_each`).
    async fn insert_members(
        tx: &mut sqlx::Transaction<'static, sqlx::Sqlite>,
        channel_id: &ChannelId,
        members: &[UserId],
        now: i64,
    ) -> Result<(), StoreError> {
        let users: Vec<&str> = members.iter().map(UserId::as_str).collect();
        let users = serde_json::to_string(&users).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        sqlx::query(sql::sqlite::INSERT_MEMBERS)
            .bind(channel_id.as_str())
            .bind(users)
            .bind(now)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// Stores a batch in one transaction with one durable commit. SQLite runs
    /// in-process, so a statement per send costs no round trip: the
    /// per-row path is the whole implementation.
    pub(super) async fn write_batch(
        &self,
        sends: &[NewEntry],
        now: i64,
        offline: Option<&dyn OfflineMembers>,
        sent: &CommitSent,
    ) -> Result<BatchOutcome, StoreError> {
        let batch = self.write_batch_rows(sends, now, offline, sent).await?;
        let deleted = batch
            .outcomes
            .iter()
            .any(|o| matches!(o, EntryOutcome::Stored(e) if e.kind == EntryKind::Delete));
        if deleted {
            // secure_delete overwrites the erased text in the pages, but in WAL
            // mode older copies of those pages stay in the -wal file until a
            // checkpoint: copy the WAL back and truncate it, so the text is
            // gone from the files (protocol guarantee 9). A reader holding an
            // old snapshot can keep it from finishing; the next delete's
            // checkpoint, or SQLite's automatic one, completes it.
            if let Err(error) = sqlx::query(sql::sqlite::CHECKPOINT).execute(&self.write_pool).await {
                tracing::warn!(%error, "WAL checkpoint after a delete failed");
            }
        }
        Ok(batch)
    }
}

impl SqliteStore {
    /// See [`super::Store::sharing_a_channel`].
    pub(super) async fn sharing_a_channel(&self, user: &UserId, others: &[UserId]) -> Result<Vec<UserId>, StoreError> {
        let ids = json_ids(others)?;
        let rows = sqlx::query_scalar::<_, String>(sql::sqlite::SHARING_A_CHANNEL)
            .bind(user.as_str())
            .bind(ids)
            .fetch_all(&self.read_pool)
            .await?;
        Ok(rows.into_iter().map(UserId::from_trusted).collect())
    }

    /// See [`super::Store::last_seen`].
    pub(super) async fn last_seen(&self, users: &[UserId]) -> Result<Vec<(UserId, i64)>, StoreError> {
        let rows = sqlx::query(sql::sqlite::LAST_SEEN)
            .bind(json_ids(users)?)
            .fetch_all(&self.read_pool)
            .await?;
        rows.iter()
            .map(|row| Ok((UserId::from_trusted(row.try_get(0)?), row.try_get(1)?)))
            .collect()
    }
}

/// Ids as a JSON array, for SQLite's `json_each`.
fn json_ids(ids: &[UserId]) -> Result<String, StoreError> {
    let ids: Vec<&str> = ids.iter().map(UserId::as_str).collect();
    serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl PgStore {
    /// See [`super::Store::take_webhook_leases`].
    pub(super) async fn take_webhook_leases(
        &self,
        owner: &str,
        buckets: &[i32],
        ttl_ms: i64,
    ) -> Result<Vec<i32>, StoreError> {
        Ok(sqlx::query_scalar::<_, i32>(sql::pg::TAKE_LEASES)
            .bind(owner)
            .bind(buckets)
            .bind(ttl_ms)
            .fetch_all(&self.write_pool)
            .await?)
    }

    /// See [`super::Store::release_webhook_leases`].
    pub(super) async fn release_webhook_leases(&self, owner: &str) -> Result<(), StoreError> {
        sqlx::query(sql::pg::RELEASE_LEASES)
            .bind(owner)
            .execute(&self.write_pool)
            .await?;
        Ok(())
    }

    /// A list of ids as one parameter: a `text[]` (cast to `uuid[]` by the statement).
    fn id_list(ids: &[String]) -> Result<Vec<String>, StoreError> {
        Ok(ids.to_vec())
    }

    /// (channel, member) rows of the channels `ids`.
    async fn members_of_listed(&self, ids: &[&str]) -> Result<Vec<(String, String)>, StoreError> {
        Ok(sqlx::query_as(sql::pg::MEMBERS_OF_LISTED)
            .bind(ids)
            .fetch_all(&self.read_pool)
            .await?)
    }

    /// See [`super::Store::sharing_a_channel`].
    pub(super) async fn sharing_a_channel(&self, user: &UserId, others: &[UserId]) -> Result<Vec<UserId>, StoreError> {
        let ids: Vec<&str> = others.iter().map(UserId::as_str).collect();
        let rows = sqlx::query_scalar::<_, String>(sql::pg::SHARING_A_CHANNEL)
            .bind(user.as_str())
            .bind(&ids)
            .fetch_all(&self.read_pool)
            .await?;
        Ok(rows.into_iter().map(UserId::from_trusted).collect())
    }

    /// See [`super::Store::last_seen`].
    pub(super) async fn last_seen(&self, users: &[UserId]) -> Result<Vec<(UserId, i64)>, StoreError> {
        let ids: Vec<&str> = users.iter().map(UserId::as_str).collect();
        let rows = sqlx::query(sql::pg::LAST_SEEN)
            .bind(&ids)
            .fetch_all(&self.read_pool)
            .await?;
        rows.iter()
            .map(|row| Ok((UserId::from_trusted(row.try_get(0)?), row.try_get(1)?)))
            .collect()
    }

    /// Adds a new channel's members in one statement (`$2` text[]): a round
    /// trip per member made a channel of 150,000 members outlast
    /// `db_timeout_ms` and answer 503, which no retry could fix.
    async fn insert_members(
        tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
        channel_id: &ChannelId,
        members: &[UserId],
        now: i64,
    ) -> Result<(), StoreError> {
        let users: Vec<&str> = members.iter().map(UserId::as_str).collect();
        sqlx::query(sql::pg::INSERT_MEMBERS)
            .bind(channel_id.as_str())
            .bind(&users)
            .bind(now)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// Stores a batch in one transaction with one durable commit, in a fixed
    /// number of statements whatever its size (set-based, with arrays and
    /// `UNNEST`), so a batch of a hundred sends costs five round trips
    /// (`BEGIN`, lock, members, insert-and-update, `COMMIT`), not a few
    /// hundred. Falls back to the per-row path when the batch repeats
    /// an idempotency key or a key turns out to be stored already (a retry),
    /// because those sends must not use a seq.
    pub(super) async fn write_batch(
        &self,
        sends: &[NewEntry],
        now: i64,
        offline: Option<&dyn OfflineMembers>,
        sent: &CommitSent,
    ) -> Result<BatchOutcome, StoreError> {
        match self.write_batch_sets(sends, now, offline, sent).await? {
            Some(outcome) => Ok(outcome),
            None => self.write_batch_rows(sends, now, offline, sent).await,
        }
    }

    /// The set-based batch: `None` (and nothing written: the transaction is
    /// rolled back) when the per-row path must decide instead. The number of
    /// statements does not grow with the batch: the channels are locked and
    /// their members read once; the targets of its edits, deletes and
    /// reactions and their reaction state are read once; every entry is
    /// decided in batch order in memory (a later entry sees an earlier
    /// one's effect); the entries are inserted with one statement and
    /// their effects applied set-wise.
    pub(super) async fn write_batch_sets(
        &self,
        sends: &[NewEntry],
        now: i64,
        offline: Option<&dyn OfflineMembers>,
        sent: &CommitSent,
    ) -> Result<Option<BatchOutcome>, StoreError> {
        let mut keys = HashSet::with_capacity(sends.len());
        if !sends
            .iter()
            .all(|s| keys.insert((s.sender_id.as_str(), s.client_msg_id.as_str())))
        {
            return Ok(None);
        }
        let mut tx = self.begin_write().await?;
        let mut channels = Self::lock_batch_channels(&mut tx, sends, offline).await?;
        let mut changes = if sends.iter().any(|s| s.change != Change::Message) {
            Changes::read(&mut tx, sends).await?
        } else {
            Changes::default()
        };
        let decided = Decided::decide(sends, &mut channels, &mut changes, now);
        let effects = changes.effects();
        if !Self::insert_entries(&mut tx, sends, &decided, &channels, effects.as_ref()).await? {
            // A key was stored already (a retry) or by a transaction that
            // committed meanwhile: the seqs after it would have a gap.
            tx.rollback().await?;
            return Ok(None);
        }
        changes.write_deletes(&mut tx).await?;
        let mut outcomes = decided.outcomes;
        Self::resolve_refused_keys(&mut tx, sends, &decided.refused, &mut outcomes).await?;
        Self::commit(tx, sent).await?;
        let members = channels
            .into_iter()
            .filter(|(_, c)| c.changed)
            .map(|(id, c)| (ChannelId::from_trusted(id), c.members))
            .collect();
        Ok(Some(BatchOutcome { outcomes, members }))
    }

    /// Locks every channel of the batch with one statement, in byte order
    /// of the id like the per-row path (so batches of any writer or node
    /// cannot deadlock), and reads their members (in byte order) and, when
    /// `offline` is given, their offline members. Unknown channels are absent.
    async fn lock_batch_channels(
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
        let mut channels: BTreeMap<String, Locked> = BTreeMap::new();
        for row in sqlx::query(sql::pg::LOCK_CHANNELS)
            .bind(&ids)
            .fetch_all(&mut **tx)
            .await?
        {
            let locked = Locked::new(row.try_get(1)?, row.try_get(2)?, Vec::new(), None);
            channels.insert(row.try_get(0)?, locked);
        }
        for row in sqlx::query(sql::pg::MEMBERS_OF_CHANNELS)
            .bind(&ids)
            .fetch_all(&mut **tx)
            .await?
        {
            let channel_id: String = row.try_get(0)?;
            if let Some(channel) = channels.get_mut(&channel_id) {
                channel.members.push(UserId::from_trusted(row.try_get(1)?));
            }
        }
        for channel in channels.values_mut() {
            channel.members.sort_unstable();
            channel.offline = offline.map(|o| o.offline(&channel.members));
        }
        Ok(channels)
    }

    /// Inserts the batch's new entries and sets the seqs of the channels
    /// they went to, in one statement, which also applies `effects` (the
    /// batch's edits and reactions) when given. Rows go in in byte order of their
    /// idempotency key, not batch order: a key being inserted by another
    /// transaction makes this one wait, and two batches taking the same
    /// keys in opposite orders would deadlock. Seqs are already assigned,
    /// so the order is free. Returns `false` when fewer rows went in than
    /// given (a key was taken): the caller rolls back.
    async fn insert_entries(
        tx: &mut sqlx::Transaction<'static, Postgres>,
        sends: &[NewEntry],
        decided: &Decided,
        channels: &BTreeMap<String, Locked>,
        effects: Option<&Effects<'_>>,
    ) -> Result<bool, StoreError> {
        let mut new = decided.new.clone();
        new.sort_unstable_by_key(|&index| (sends[index].sender_id.as_str(), sends[index].client_msg_id.as_str()));
        let mut rows = MessageColumns::with_capacity(new.len());
        for &index in &new {
            if let EntryOutcome::Stored(message) = &decided.outcomes[index] {
                let offline = channels
                    .get(sends[index].channel_id.as_str())
                    .map(|c| c.offline_text(&message.sender_id))
                    .transpose()?
                    .flatten();
                rows.push(&sends[index], message, offline);
            }
        }
        if rows.is_empty() {
            return Ok(true);
        }
        let changed: Vec<(&String, &Locked)> = channels.iter().filter(|(_, c)| c.changed).collect();
        let ids: Vec<&str> = changed.iter().map(|(id, _)| id.as_str()).collect();
        let seqs: Vec<i64> = changed.iter().map(|(_, c)| c.last_seq).collect();
        let tss: Vec<i64> = changed.iter().map(|(_, c)| c.last_ts).collect();
        let statement = if effects.is_some() {
            sql::pg::INSERT_ENTRIES_WITH_EFFECTS
        } else {
            sql::pg::INSERT_ENTRIES
        };
        let mut query = sqlx::query(statement)
            .bind(&rows.message_id)
            .bind(&rows.channel_id)
            .bind(&rows.seq)
            .bind(&rows.sender_id)
            .bind(&rows.client_msg_id)
            .bind(&rows.body)
            .bind(&rows.ts)
            .bind(&ids)
            .bind(&seqs)
            .bind(&tss)
            .bind(&rows.offline_members)
            .bind(&rows.kind)
            .bind(&rows.target_id)
            .bind(&rows.emoji)
            .bind(&rows.op)
            .bind(&rows.noop);
        if let Some(effects) = effects {
            query = effects.bind(query);
        }
        let row = query.fetch_one(&mut **tx).await?;
        let (inserted, updated): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        if inserted != rows.len() as i64 {
            return Ok(false);
        }
        if updated != ids.len() as i64 {
            return Err(StoreError::Corrupt(format!(
                "{updated} of {} locked channels updated",
                ids.len()
            )));
        }
        Ok(true)
    }

    /// A refused send may still be a retry of a stored entry: the key
    /// decides before membership and target, as in the per-row path. Looks
    /// up the keys of the sends at `refused` with one statement and turns
    /// each found one into `Duplicate` or `Conflict`.
    async fn resolve_refused_keys(
        tx: &mut sqlx::Transaction<'static, Postgres>,
        sends: &[NewEntry],
        refused: &[usize],
        outcomes: &mut [EntryOutcome],
    ) -> Result<(), StoreError> {
        if refused.is_empty() {
            return Ok(());
        }
        let senders: Vec<&str> = refused.iter().map(|&i| sends[i].sender_id.as_str()).collect();
        let keys: Vec<&str> = refused.iter().map(|&i| sends[i].client_msg_id.as_str()).collect();
        let mut stored = std::collections::HashMap::new();
        for row in sqlx::query(sql::pg::MESSAGES_BY_KEYS)
            .bind(&senders)
            .bind(&keys)
            .fetch_all(&mut **tx)
            .await?
        {
            let message = entry_from_row(&row)?;
            stored.insert((message.sender_id.clone(), message.client_msg_id.clone()), message);
        }
        for &index in refused {
            let send = &sends[index];
            if let Some(existing) = stored.get(&(send.sender_id.clone(), send.client_msg_id.clone())) {
                outcomes[index] = if existing.is_retried_as(send) {
                    EntryOutcome::Duplicate(existing.clone())
                } else {
                    EntryOutcome::Conflict
                };
            }
        }
        Ok(())
    }
}

/// A held reaction: (target, emoji, user).
type Holder = (uuid::Uuid, String, String);
/// A reaction count's key: (target, emoji).
type CountKey = (uuid::Uuid, String);

/// What a set-based batch reads of the targets of its edits, deletes and
/// reactions (under the channels' locks: no other writer moves them), how
/// its entries move them, entry by entry in batch order, and the writes
/// that bring the tables to the end state.
#[derive(Default)]
struct Changes {
    targets: HashMap<uuid::Uuid, TargetState>,
    /// Per reaction of the batch: (held before the batch, held now).
    holders: BTreeMap<Holder, (bool, bool)>,
    /// Per (target, emoji) of the batch's reactions: (before, now).
    counts: BTreeMap<CountKey, (Count, Count)>,
    /// The latest edit of each target: its text and ts.
    edits: BTreeMap<uuid::Uuid, (String, i64)>,
    /// The targets deleted by the batch.
    deleted: Vec<uuid::Uuid>,
}

impl Changes {
    /// Reads the targets of the batch's changes with one statement, and
    /// with another which of its reactions are held and the counts of its
    /// (target, emoji) pairs.
    async fn read(tx: &mut sqlx::Transaction<'static, Postgres>, sends: &[NewEntry]) -> Result<Self, StoreError> {
        let mut changes = Changes::default();
        let targets: BTreeSet<uuid::Uuid> = sends.iter().filter_map(|s| s.change.target()).collect();
        let ids: Vec<String> = targets.iter().map(|t| t.hyphenated().to_string()).collect();
        for row in sqlx::query(sql::pg::MESSAGES_BY_IDS)
            .bind(&ids)
            .fetch_all(&mut **tx)
            .await?
        {
            let message = entry_from_row(&row)?;
            changes.targets.insert(message.message_id, TargetState::from(message));
        }
        for send in sends {
            if let Change::React { target, emoji, .. } = &send.change {
                changes.holders.insert(
                    (*target, emoji.clone(), send.sender_id.as_str().to_owned()),
                    (false, false),
                );
                changes.counts.insert((*target, emoji.clone()), (None, None));
            }
        }
        if changes.holders.is_empty() {
            return Ok(changes);
        }
        let (ids, emojis, users) = holder_columns(changes.holders.keys());
        for row in sqlx::query(sql::pg::REACTION_STATE_OF)
            .bind(&ids)
            .bind(&emojis)
            .bind(&users)
            .fetch_all(&mut **tx)
            .await?
        {
            let (target, emoji, user): (uuid::Uuid, String, String) =
                (parse_uuid(row.try_get(0)?)?, row.try_get(1)?, row.try_get(2)?);
            if row.try_get::<bool, _>(3)? {
                changes.holders.insert((target, emoji.clone(), user), (true, true));
            }
            match row.try_get::<Option<Vec<i64>>, _>(4)?.as_deref() {
                None => {}
                Some(&[count, first]) => {
                    let count = Some((count, first));
                    changes.counts.insert((target, emoji), (count, count));
                }
                Some(other) => return Err(StoreError::Corrupt(format!("reaction count read as {other:?}"))),
            }
        }
        Ok(changes)
    }

    /// Applies a stored entry (`entry`, for `send`) to the batch's state,
    /// as the per-row path's `apply` does to the tables. Returns whether it
    /// changed anything (`false`: a no-op reaction).
    fn apply(&mut self, send: &NewEntry, entry: &Entry) -> bool {
        match &send.change {
            Change::Message => true,
            Change::Edit { target } => {
                self.edits.insert(*target, (send.body.clone(), entry.ts));
                true
            }
            Change::Delete { target } => {
                if let Some(state) = self.targets.get_mut(target) {
                    state.deleted = true;
                }
                self.edits.remove(target);
                self.deleted.push(*target);
                true
            }
            Change::React { target, emoji, add } => {
                let holder = (*target, emoji.clone(), send.sender_id.as_str().to_owned());
                let held = &mut self.holders.entry(holder).or_insert((false, false)).1;
                if !entry_rules::reaction_changes(*held, *add) {
                    return false;
                }
                *held = *add;
                let count = &mut self.counts.entry((*target, emoji.clone())).or_insert((None, None)).1;
                *count = entry_rules::next_count(*count, *add, entry.seq);
                true
            }
        }
    }

    /// The effects that bring the tables to the batch's end state, but
    /// for its deletes: the latest edit of each target, the reactions
    /// gained and lost, the counts changed or gone. Applied by the
    /// statement that inserts the entries; `None` when there are none.
    fn effects(&self) -> Option<Effects<'_>> {
        let moved = |held: bool| {
            self.holders
                .iter()
                .filter(move |(_, (before, now))| before != now && *now == held)
                .map(|(key, _)| key)
        };
        let changed = || self.counts.iter().filter(|(_, (before, now))| before != now);
        let set: Vec<(&CountKey, (i64, i64))> = changed().filter_map(|(k, (_, now))| now.map(|n| (k, n))).collect();
        let gone: Vec<&CountKey> = changed()
            .filter(|(_, (_, now))| now.is_none())
            .map(|(k, _)| k)
            .collect();
        let effects = Effects {
            edit_ids: self.edits.keys().map(|t| t.hyphenated().to_string()).collect(),
            edit_bodies: self.edits.values().map(|(b, _)| b.as_str()).collect(),
            edit_tss: self.edits.values().map(|(_, ts)| *ts).collect(),
            added: holder_columns(moved(true)),
            removed: holder_columns(moved(false)),
            set_ids: set.iter().map(|((t, _), _)| t.hyphenated().to_string()).collect(),
            set_emojis: set.iter().map(|((_, e), _)| e.as_str()).collect(),
            set_counts: set.iter().map(|(_, (n, _))| *n).collect(),
            set_firsts: set.iter().map(|(_, (_, f))| *f).collect(),
            gone_ids: gone.iter().map(|(t, _)| t.hyphenated().to_string()).collect(),
            gone_emojis: gone.iter().map(|(_, e)| e.as_str()).collect(),
        };
        let none = effects.edit_ids.is_empty()
            && effects.added.0.is_empty()
            && effects.removed.0.is_empty()
            && effects.set_ids.is_empty()
            && effects.gone_ids.is_empty();
        (!none).then_some(effects)
    }

    /// Applies the batch's deletes, after its entries and their other
    /// effects are written: the text of each deleted message and of its
    /// edits (this batch's included), its reactions and counts. Nothing
    /// when the batch deleted nothing.
    async fn write_deletes(&self, tx: &mut sqlx::Transaction<'static, Postgres>) -> Result<(), StoreError> {
        if !self.deleted.is_empty() {
            let ids: Vec<String> = self.deleted.iter().map(|t| t.hyphenated().to_string()).collect();
            for statement in [
                sql::pg::ERASE_MESSAGES,
                sql::pg::ERASE_EDITS_OF,
                sql::pg::DELETE_REACTIONS_OF,
                sql::pg::DELETE_REACTION_COUNTS_OF,
            ] {
                sqlx::query(statement).bind(&ids).execute(&mut **tx).await?;
            }
        }
        Ok(())
    }
}

/// The effects of a batch's edits and reactions as one array per column
/// (`$17`..`$31` of `pg::INSERT_ENTRIES_WITH_EFFECTS`).
struct Effects<'a> {
    edit_ids: Vec<String>,
    edit_bodies: Vec<&'a str>,
    edit_tss: Vec<i64>,
    added: (Vec<String>, Vec<&'a str>, Vec<&'a str>),
    removed: (Vec<String>, Vec<&'a str>, Vec<&'a str>),
    set_ids: Vec<String>,
    set_emojis: Vec<&'a str>,
    set_counts: Vec<i64>,
    set_firsts: Vec<i64>,
    gone_ids: Vec<String>,
    gone_emojis: Vec<&'a str>,
}

impl<'a> Effects<'a> {
    /// Binds the arrays, in parameter order, after the entries' sixteen.
    fn bind<'q>(
        &'q self,
        query: sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
    ) -> sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments> {
        query
            .bind(&self.edit_ids)
            .bind(&self.edit_bodies)
            .bind(&self.edit_tss)
            .bind(&self.added.0)
            .bind(&self.added.1)
            .bind(&self.added.2)
            .bind(&self.removed.0)
            .bind(&self.removed.1)
            .bind(&self.removed.2)
            .bind(&self.set_ids)
            .bind(&self.set_emojis)
            .bind(&self.set_counts)
            .bind(&self.set_firsts)
            .bind(&self.gone_ids)
            .bind(&self.gone_emojis)
    }
}

/// Reactions as one array per column (target ids as text), for `UNNEST`.
fn holder_columns<'a>(holders: impl Iterator<Item = &'a Holder>) -> (Vec<String>, Vec<&'a str>, Vec<&'a str>) {
    let mut columns = (Vec::new(), Vec::new(), Vec::new());
    for (target, emoji, user) in holders {
        columns.0.push(target.hyphenated().to_string());
        columns.1.push(emoji.as_str());
        columns.2.push(user.as_str());
    }
    columns
}

/// Every entry of a set-based batch decided, in batch order.
struct Decided {
    /// One per send; `Stored` for the new entries.
    outcomes: Vec<EntryOutcome>,
    /// The sends refused (their key may still be stored: see
    /// `resolve_refused_keys`).
    refused: Vec<usize>,
    /// The sends stored as new entries, in batch order.
    new: Vec<usize>,
}

impl Decided {
    /// Decides each send in batch order, as the per-row path does: a send
    /// to an unknown channel, by a non-member or failing its target's
    /// checks is refused; any other becomes the next entry of its channel
    /// and moves `changes` (so a later send sees its effect).
    fn decide(sends: &[NewEntry], channels: &mut BTreeMap<String, Locked>, changes: &mut Changes, now: i64) -> Self {
        let mut decided = Decided {
            outcomes: Vec::with_capacity(sends.len()),
            refused: Vec::new(),
            new: Vec::with_capacity(sends.len()),
        };
        for (index, send) in sends.iter().enumerate() {
            let channel = channels
                .get_mut(send.channel_id.as_str())
                .filter(|c| c.may_send(&send.sender_id));
            let target = send.change.target().and_then(|t| changes.targets.get(&t));
            let refusal = entry_rules::refusal(send, channel.is_some(), target);
            let (Some(channel), None) = (channel, &refusal) else {
                decided.refused.push(index);
                decided.outcomes.push(refusal.unwrap_or(EntryOutcome::Forbidden));
                continue;
            };
            let mut message = channel.next_message(send, now);
            message.noop = !changes.apply(send, &message);
            channel.stored(&message);
            decided.new.push(index);
            decided.outcomes.push(EntryOutcome::Stored(message));
        }
        decided
    }
}

/// A batch's new entries as one array per column, for `UNNEST`.
struct MessageColumns<'a> {
    message_id: Vec<String>,
    channel_id: Vec<&'a str>,
    seq: Vec<i64>,
    sender_id: Vec<&'a str>,
    client_msg_id: Vec<&'a str>,
    body: Vec<&'a str>,
    ts: Vec<i64>,
    offline_members: Vec<Option<String>>,
    kind: Vec<&'static str>,
    target_id: Vec<Option<String>>,
    emoji: Vec<Option<&'a str>>,
    op: Vec<Option<&'static str>>,
    noop: Vec<bool>,
}

impl<'a> MessageColumns<'a> {
    fn with_capacity(n: usize) -> Self {
        Self {
            message_id: Vec::with_capacity(n),
            channel_id: Vec::with_capacity(n),
            seq: Vec::with_capacity(n),
            sender_id: Vec::with_capacity(n),
            client_msg_id: Vec::with_capacity(n),
            body: Vec::with_capacity(n),
            ts: Vec::with_capacity(n),
            offline_members: Vec::with_capacity(n),
            kind: Vec::with_capacity(n),
            target_id: Vec::with_capacity(n),
            emoji: Vec::with_capacity(n),
            op: Vec::with_capacity(n),
            noop: Vec::with_capacity(n),
        }
    }

    /// Adds `message`, the new entry stored for `send`, with its
    /// `offline_members` column; the text columns borrow from the send.
    fn push(&mut self, send: &'a NewEntry, message: &Entry, offline_members: Option<String>) {
        self.offline_members.push(offline_members);
        self.message_id.push(message.message_id.hyphenated().to_string());
        self.channel_id.push(send.channel_id.as_str());
        self.seq.push(message.seq);
        self.sender_id.push(send.sender_id.as_str());
        self.client_msg_id.push(send.client_msg_id.as_str());
        self.body.push(&send.body);
        self.ts.push(message.ts);
        self.kind.push(message.kind.as_str());
        self.target_id
            .push(message.target_id.map(|t| t.hyphenated().to_string()));
        self.emoji.push(match &send.change {
            Change::React { emoji, .. } => Some(emoji.as_str()),
            _ => None,
        });
        self.op.push(message.add.map(op_text));
        self.noop.push(message.noop);
    }

    fn len(&self) -> usize {
        self.seq.len()
    }

    fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }
}
