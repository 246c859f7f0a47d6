//! One implementation of the store's operations, generated for each backend by
//! [`sql_backend!`] over that backend's SQL text ([`super::sql`]). Keeping a
//! single body means PostgreSQL and SQLite cannot drift apart in behaviour;
//! the conformance suite in `tests/api/store.rs` checks that they do not.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use sqlx::{Postgres, Row, Sqlite};

use super::sql::{self, common};
use super::{BatchOutcome, Channel, ChannelPosition, CommitSent, NewMessage, SendOutcome, StoreError, StoredMessage};
use crate::ids::{ChannelId, ClientMsgId, UserId};

/// Decodes a row selected with the `message_columns!` column list.
fn message_from_row<R: Row>(row: &R) -> Result<StoredMessage, StoreError>
where
    usize: sqlx::ColumnIndex<R>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let id: String = row.try_get(0)?;
    let message_id = uuid::Uuid::try_parse(&id).map_err(|_| StoreError::Corrupt(format!("message_id {id}")))?;
    Ok(StoredMessage {
        message_id,
        channel_id: ChannelId::from_trusted(row.try_get(1)?),
        seq: row.try_get(2)?,
        sender_id: UserId::from_trusted(row.try_get(3)?),
        client_msg_id: ClientMsgId::from_trusted(row.try_get(4)?),
        body: row.try_get(5)?,
        ts: row.try_get(6)?,
    })
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
}

impl Locked {
    /// Whether `user` is a current member (`members` is in byte order).
    fn may_send(&self, user: &UserId) -> bool {
        self.members.binary_search(user).is_ok()
    }

    /// The message `send` becomes if stored next in this channel: a new
    /// UUIDv7, the next seq, and a ts that never goes back.
    fn next_message(&self, send: &NewMessage, now: i64) -> StoredMessage {
        StoredMessage {
            message_id: uuid::Uuid::now_v7(),
            channel_id: send.channel_id.clone(),
            sender_id: send.sender_id.clone(),
            client_msg_id: send.client_msg_id.clone(),
            seq: self.last_seq + 1,
            body: send.body.clone(),
            ts: now.max(self.last_ts),
        }
    }

    /// Records that `message` (from [`Locked::next_message`]) is stored.
    fn stored(&mut self, message: &StoredMessage) {
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
                Ok(Channel { channel_id: channel_id.clone(), members, last_seq: 0, created_at: now })
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
                }))
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
                        })
                    })
                    .collect::<Result<_, sqlx::Error>>()
                    .map_err(StoreError::from)
            }

            pub(super) async fn messages_after(&self, channel_id: &ChannelId, after_seq: i64, limit: u32) -> Result<(Vec<StoredMessage>, bool), StoreError> {
                let rows = sqlx::query(sql::$dialect::MESSAGES_AFTER)
                    .bind(channel_id.as_str())
                    .bind(after_seq)
                    .bind(i64::from(limit) + 1)
                    .fetch_all(&self.read_pool)
                    .await?;
                let mut messages = rows.iter().map(message_from_row).collect::<Result<Vec<_>, _>>()?;
                let has_more = messages.len() > limit as usize;
                messages.truncate(limit as usize);
                Ok((messages, has_more))
            }

            pub(super) async fn message(&self, message_id: uuid::Uuid) -> Result<Option<StoredMessage>, StoreError> {
                sqlx::query(sql::$dialect::MESSAGE_BY_ID)
                    .bind(message_id.hyphenated().to_string())
                    .fetch_optional(&self.read_pool)
                    .await?
                    .as_ref()
                    .map(message_from_row)
                    .transpose()
            }

            pub(super) async fn message_by_key(&self, sender_id: &UserId, client_msg_id: &ClientMsgId) -> Result<Option<StoredMessage>, StoreError> {
                sqlx::query(sql::$dialect::MESSAGE_BY_KEY)
                    .bind(sender_id.as_str())
                    .bind(client_msg_id.as_str())
                    .fetch_optional(&self.read_pool)
                    .await?
                    .as_ref()
                    .map(message_from_row)
                    .transpose()
            }

            pub(super) async fn advance_watermark(&self, user_id: &UserId, message: &StoredMessage, read: bool, sent: &CommitSent) -> Result<bool, StoreError> {
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
            async fn write_batch_rows(&self, sends: &[NewMessage], now: i64, sent: &CommitSent) -> Result<BatchOutcome, StoreError> {
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
                    *slot = Some(Locked {
                        last_seq: row.try_get(0)?,
                        last_ts: row.try_get(1)?,
                        members: sorted_members(members),
                        changed: false,
                    });
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
                            let existing = self.lookup_in(&mut tx, send).await?;
                            outcomes.push(existing.unwrap_or(SendOutcome::Forbidden));
                            continue;
                        }
                    };
                    let message = channel.next_message(send, now);
                    let inserted = sqlx::query(sql::$dialect::INSERT_MESSAGE)
                        .bind(message.message_id.hyphenated().to_string())
                        .bind(message.channel_id.as_str())
                        .bind(message.seq)
                        .bind(message.sender_id.as_str())
                        .bind(message.client_msg_id.as_str())
                        .bind(&message.body)
                        .bind(message.ts)
                        .fetch_optional(&mut *tx)
                        .await?
                        .is_some();
                    if inserted {
                        channel.stored(&message);
                        outcomes.push(SendOutcome::Stored(message));
                    } else {
                        // The key is taken (stored earlier, earlier in this batch,
                        // or by a transaction that committed meanwhile; a fresh
                        // statement sees it). No seq was used.
                        let existing = self.lookup_in(&mut tx, send).await?;
                        outcomes.push(existing.unwrap_or(SendOutcome::Conflict));
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
            async fn lookup_in(&self, tx: &mut sqlx::Transaction<'static, $db>, send: &NewMessage) -> Result<Option<SendOutcome>, StoreError> {
                let row = sqlx::query(sql::$dialect::MESSAGE_BY_KEY)
                    .bind(send.sender_id.as_str())
                    .bind(send.client_msg_id.as_str())
                    .fetch_optional(&mut **tx)
                    .await?;
                let Some(row) = row else { return Ok(None) };
                let existing = message_from_row(&row)?;
                Ok(Some(if existing.is_retried_by(send.channel_id.as_str(), &send.body) {
                    SendOutcome::Duplicate(existing)
                } else {
                    SendOutcome::Conflict
                }))
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
        sends: &[NewMessage],
        now: i64,
        sent: &CommitSent,
    ) -> Result<BatchOutcome, StoreError> {
        self.write_batch_rows(sends, now, sent).await
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
        sends: &[NewMessage],
        now: i64,
        sent: &CommitSent,
    ) -> Result<BatchOutcome, StoreError> {
        match self.write_batch_sets(sends, now, sent).await? {
            Some(outcome) => Ok(outcome),
            None => self.write_batch_rows(sends, now, sent).await,
        }
    }

    /// The set-based batch: `None` (and nothing written: the transaction is
    /// rolled back) when the per-row path must decide instead.
    async fn write_batch_sets(
        &self,
        sends: &[NewMessage],
        now: i64,
        sent: &CommitSent,
    ) -> Result<Option<BatchOutcome>, StoreError> {
        let mut keys = HashSet::with_capacity(sends.len());
        if !sends
            .iter()
            .all(|s| keys.insert((s.sender_id.as_str(), s.client_msg_id.as_str())))
        {
            return Ok(None);
        }
        let ids: Vec<&str> = sends
            .iter()
            .map(|s| s.channel_id.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut tx = self.begin_write().await?;
        // One statement locks every channel, in byte order of the id like
        // the per-row path, so batches of any writer or node cannot deadlock.
        let mut channels: BTreeMap<String, Locked> = BTreeMap::new();
        for row in sqlx::query(sql::pg::LOCK_CHANNELS)
            .bind(&ids)
            .fetch_all(&mut *tx)
            .await?
        {
            let locked = Locked {
                last_seq: row.try_get(1)?,
                last_ts: row.try_get(2)?,
                members: Vec::new(),
                changed: false,
            };
            channels.insert(row.try_get(0)?, locked);
        }
        for row in sqlx::query(sql::pg::MEMBERS_OF_CHANNELS)
            .bind(&ids)
            .fetch_all(&mut *tx)
            .await?
        {
            let channel_id: String = row.try_get(0)?;
            if let Some(channel) = channels.get_mut(&channel_id) {
                channel.members.push(UserId::from_trusted(row.try_get(1)?));
            }
        }
        for channel in channels.values_mut() {
            channel.members.sort_unstable();
        }

        let mut outcomes = Vec::with_capacity(sends.len());
        let mut rows = MessageColumns::with_capacity(sends.len());
        let mut refused = Vec::new();
        let mut new = Vec::new();
        for (index, send) in sends.iter().enumerate() {
            let channel = match channels.get_mut(send.channel_id.as_str()) {
                Some(channel) if channel.may_send(&send.sender_id) => channel,
                _ => {
                    refused.push(index);
                    outcomes.push(SendOutcome::Forbidden);
                    continue;
                }
            };
            let message = channel.next_message(send, now);
            channel.stored(&message);
            new.push(index);
            outcomes.push(SendOutcome::Stored(message));
        }
        // Rows go in in byte order of their idempotency key, not batch order:
        // a key being inserted by another transaction makes this one wait,
        // and two batches taking the same keys in opposite orders would
        // deadlock. Seqs are already assigned, so the order is free.
        new.sort_unstable_by_key(|&index| (sends[index].sender_id.as_str(), sends[index].client_msg_id.as_str()));
        for &index in &new {
            if let SendOutcome::Stored(message) = &outcomes[index] {
                rows.push(&sends[index], message);
            }
        }
        // The new messages and the channels' seqs in one statement.
        if !rows.is_empty() {
            let changed: Vec<(&String, &Locked)> = channels.iter().filter(|(_, c)| c.changed).collect();
            let ids: Vec<&str> = changed.iter().map(|(id, _)| id.as_str()).collect();
            let seqs: Vec<i64> = changed.iter().map(|(_, c)| c.last_seq).collect();
            let tss: Vec<i64> = changed.iter().map(|(_, c)| c.last_ts).collect();
            let row = sqlx::query(sql::pg::INSERT_MESSAGES)
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
                .fetch_one(&mut *tx)
                .await?;
            let (inserted, updated): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
            if inserted != rows.len() as i64 {
                // A key was stored already (a retry) or by a transaction that
                // committed meanwhile: the seqs after it would have a gap.
                tx.rollback().await?;
                return Ok(None);
            }
            if updated != ids.len() as i64 {
                return Err(StoreError::Corrupt(format!(
                    "{updated} of {} locked channels updated",
                    ids.len()
                )));
            }
        }
        // A refused send may still be a retry of a stored message: the key
        // decides before membership, as in the per-row path.
        for index in refused {
            if let Some(existing) = self.lookup_in(&mut tx, &sends[index]).await? {
                outcomes[index] = existing;
            }
        }
        Self::commit(tx, sent).await?;
        let members = channels
            .into_iter()
            .filter(|(_, c)| c.changed)
            .map(|(id, c)| (ChannelId::from_trusted(id), c.members))
            .collect();
        Ok(Some(BatchOutcome { outcomes, members }))
    }
}

/// A batch's new messages as one array per column, for `UNNEST`.
struct MessageColumns<'a> {
    message_id: Vec<String>,
    channel_id: Vec<&'a str>,
    seq: Vec<i64>,
    sender_id: Vec<&'a str>,
    client_msg_id: Vec<&'a str>,
    body: Vec<&'a str>,
    ts: Vec<i64>,
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
        }
    }

    /// Adds `message`, the new message stored for `send`; the text columns
    /// borrow from the send.
    fn push(&mut self, send: &'a NewMessage, message: &StoredMessage) {
        self.message_id.push(message.message_id.hyphenated().to_string());
        self.channel_id.push(send.channel_id.as_str());
        self.seq.push(message.seq);
        self.sender_id.push(send.sender_id.as_str());
        self.client_msg_id.push(send.client_msg_id.as_str());
        self.body.push(&send.body);
        self.ts.push(message.ts);
    }

    fn len(&self) -> usize {
        self.seq.len()
    }

    fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }
}
