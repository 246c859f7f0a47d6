//! Writing the log: a batch of entries stored in one transaction, each
//! decided by [`super::entry_rules`] against the state its channel's earlier
//! entries left, and applied to its target (an edit's text, a delete's
//! erasure, a reaction's holders and counts). This is the per-row path:
//! every SQLite batch, and the PostgreSQL batches the set-based path
//! (`pg_batch.rs`) hands back.

use std::collections::BTreeMap;

use sqlx::Sqlite;

use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql, SqlStore};
use super::entries::{MESSAGE_BY_ID, MESSAGE_BY_KEY};
use super::entry_row::{entry_from_row, id_text, mentions_text, op_text, participants_text};
use super::entry_rules::{self, ChannelRules, TargetState};
use super::locked::Locked;
use super::{
    dispatch_write, BatchOutcome, Change, CommitSent, Entry, EntryKind, EntryOutcome, NewEntry, OfflineMembers,
    References, Store, StoreError,
};
use crate::ids::ChannelId;
use crate::protocol::ChannelKind;

static INSERT_MESSAGE: Sql = Sql::same(
    "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, target_id, emoji, op, offline_members, \
         reply_to, thread_id, mentions, mention_all, mentions_asked, notify_members, by_admin, via_http) \
         VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9::uuid, $10, $11, $12, $13::uuid, $14::uuid, $15, $16, $17, $18, $19, $20) \
         ON CONFLICT (sender_id, client_msg_id) DO NOTHING RETURNING seq",
);
/// User `$1` is mentioned by the message at seq `$3` of channel `$2` (§16).
pub(super) const INSERT_MENTION: &str = "INSERT INTO mentions (user_id, channel_id, seq) VALUES ($1, $2, $3)";
/// A reply at seq `$3`, ts `$2` joined the thread of root `$1`; `$4`: the
/// root's new `participants` (`NULL`: unchanged).
static THREAD_REPLIED: Sql = Sql::same(
    "UPDATE messages SET reply_count = reply_count + 1, last_reply_at = $2, last_reply_seq = $3, \
         participants = COALESCE($4, participants) WHERE message_id = $1::uuid",
);
/// A reply in the thread of root `$1` was deleted.
pub(super) static THREAD_REPLY_DELETED: Sql =
    Sql::same("UPDATE messages SET reply_count = reply_count - 1 WHERE message_id = $1::uuid");
/// Sets channel `$1`'s `last_seq` and `last_ts` at the end of a batch.
pub(super) const UPDATE_CHANNEL_SEQ: &str = "UPDATE channels SET last_seq = $2, last_ts = $3 WHERE channel_id = $1";
/// Marks entry `$1` as having changed nothing.
static MARK_NOOP: Sql = Sql::same("UPDATE messages SET noop = TRUE WHERE message_id = $1::uuid");
/// Sets message `$1`'s current text `$2` and edit time `$3`.
static APPLY_EDIT: Sql = Sql::same("UPDATE messages SET edited_body = $2, edited_at = $3 WHERE message_id = $1::uuid");
/// Marks message `$1` deleted and erases its text.
static ERASE_MESSAGE: Sql = Sql::same(
    "UPDATE messages SET body = '', edited_body = NULL, edited_at = NULL, deleted = TRUE, \
     mentions = NULL, mentions_asked = NULL, mention_all = FALSE WHERE message_id = $1::uuid",
);
/// Drops the `mentions` rows of message `$1` (§16: a deleted message
/// mentions no one). Run before [`ERASE_MESSAGE`]'s siblings; its row
/// keeps its channel and seq.
static ERASE_MENTIONS: Sql = Sql::same(
    "DELETE FROM mentions WHERE channel_id = (SELECT channel_id FROM messages WHERE message_id = $1::uuid) \
     AND seq = (SELECT seq FROM messages WHERE message_id = $1::uuid)",
);
/// Erases the text of every edit of message `$1`.
static ERASE_EDITS: Sql = Sql::same("UPDATE messages SET body = '' WHERE target_id = $1::uuid AND kind = 'edit'");
static DELETE_REACTIONS: Sql = Sql::same("DELETE FROM reactions WHERE message_id = $1::uuid");
static DELETE_REACTION_COUNTS: Sql = Sql::same("DELETE FROM reaction_counts WHERE message_id = $1::uuid");
/// Adds `$3`'s reaction `$2` on `$1`; affects no row when held.
static ADD_REACTION: Sql =
    Sql::same("INSERT INTO reactions (message_id, emoji, user_id) VALUES ($1::uuid, $2, $3) ON CONFLICT DO NOTHING");
/// One more holder of `$2` on `$1`; a new row (first use at seq `$3`) when none held it.
static COUNT_UP: Sql = Sql::same(
    "INSERT INTO reaction_counts (message_id, emoji, count, first_seq) VALUES ($1::uuid, $2, 1, $3) \
         ON CONFLICT (message_id, emoji) DO UPDATE SET count = reaction_counts.count + 1",
);
/// Removes `$3`'s reaction `$2` on `$1`; affects no row when not held.
static REMOVE_REACTION: Sql =
    Sql::same("DELETE FROM reactions WHERE message_id = $1::uuid AND emoji = $2 AND user_id = $3");
/// The last holder of `$2` on `$1` left: the row goes.
static COUNT_GONE: Sql =
    Sql::same("DELETE FROM reaction_counts WHERE message_id = $1::uuid AND emoji = $2 AND count = 1");
static COUNT_DOWN: Sql =
    Sql::same("UPDATE reaction_counts SET count = count - 1 WHERE message_id = $1::uuid AND emoji = $2");
/// What the rules know of an `add` of reaction `$2` on message `$1`: how
/// many distinct emoji are held on `$1`, counted up to `$3` (the bound:
/// past it the number does not matter, and a message stored over it is
/// not counted through), and whether someone holds `$2`.
static REACTIONS_HELD: Sql = Sql::same(
    "SELECT (SELECT count(*) FROM (SELECT 1 FROM reaction_counts WHERE message_id = $1::uuid LIMIT $3) AS held), \
     EXISTS (SELECT 1 FROM reaction_counts WHERE message_id = $1::uuid AND emoji = $2)",
);
/// Slow mode: `$3` is the `ts` of member `$2`'s last message in channel `$1`.
pub(super) const KEEP_LAST_MESSAGE: &str = "INSERT INTO member_limits (channel_id, user_id, last_message_ts) \
     VALUES ($1, $2, $3) ON CONFLICT (channel_id, user_id) DO UPDATE SET last_message_ts = excluded.last_message_ts";
/// Copies SQLite's WAL into the database file and truncates it.
pub(super) const CHECKPOINT: &str = "PRAGMA wal_checkpoint(TRUNCATE)";

impl Store {
    /// Stores a batch of sends in one transaction with one durable commit,
    /// within the store's timeout. See [`Store::write_batch_by`].
    ///
    /// # Errors
    /// As [`Store::write_batch_by`].
    pub async fn write_batch(&self, sends: &[NewEntry], now: i64) -> Result<BatchOutcome, StoreError> {
        self.write_batch_by(sends, now, self.deadline()).await
    }

    /// Stores a batch of sends in one transaction with one durable commit,
    /// giving up at `deadline`. Channels are locked in id order, so concurrent
    /// batches cannot deadlock on channel rows. Returns after the commit.
    ///
    /// # Errors
    /// Any error fails the whole batch. [`StoreError::Retry`] when it lost a
    /// deadlock and may be run again; [`StoreError::Unavailable`] or
    /// [`StoreError::TimedOut`] when it failed before its `COMMIT` was sent
    /// (nothing stored); [`StoreError::InDoubt`] when the connection failed or
    /// the deadline passed while the `COMMIT` was in flight (stored or not:
    /// a retry with the same keys finds out).
    pub async fn write_batch_by(
        &self,
        sends: &[NewEntry],
        now: i64,
        deadline: tokio::time::Instant,
    ) -> Result<BatchOutcome, StoreError> {
        self.write_batch_with(sends, now, deadline, None).await
    }

    /// As [`Store::write_batch_by`]; with `offline` (webhooks on), every new
    /// entry is stored with its `offlineMembers` ([`OfflineMembers`], asked
    /// once per channel of the batch under the channel's lock).
    ///
    /// # Errors
    /// As [`Store::write_batch_by`].
    pub async fn write_batch_with(
        &self,
        sends: &[NewEntry],
        now: i64,
        deadline: tokio::time::Instant,
        offline: Option<&dyn OfflineMembers>,
    ) -> Result<BatchOutcome, StoreError> {
        let outcome = dispatch_write!(self, deadline, write_batch(sends, now, offline))?;
        let cache = self.channel_of_cache();
        for stored in &outcome.outcomes {
            if let EntryOutcome::Stored(message) = stored {
                if message.kind == EntryKind::Message {
                    cache.remember(message.message_id, &message.channel_id);
                }
            }
        }
        Ok(outcome)
    }
}

impl Store {
    /// Test hook: stores a batch on PostgreSQL through one given path,
    /// `set_based` (the set-based path: `Ok(None)` when it falls back,
    /// nothing written) or the per-row path (always `Some`), so tests can
    /// check that both decide alike. `Ok(None)` on SQLite. Not for use
    /// outside tests: no deadline applies.
    ///
    /// # Errors
    /// As [`Store::write_batch_by`].
    #[doc(hidden)]
    pub async fn write_batch_on_path(
        &self,
        sends: &[NewEntry],
        now: i64,
        set_based: bool,
    ) -> Result<Option<BatchOutcome>, StoreError> {
        let sent = CommitSent::default();
        match self {
            Store::Postgres(s) if set_based => s.write_batch_sets(sends, now, None, &sent).await,
            Store::Postgres(s) => s.write_batch_rows(sends, now, None, &sent).await.map(Some),
            Store::Sqlite(_) => Ok(None),
        }
    }
}

/// What the per-row path read for one entry's rules, in its transaction:
/// its target's state, and the states of the messages its references name.
#[derive(Default)]
struct Read {
    target: Option<TargetState>,
    reply_to: Option<TargetState>,
    thread: Option<TargetState>,
}

impl<D: Dialect> SqlStore<D> {
    /// Erases message `id`'s content as a delete does (§8, guarantee 9):
    /// its attachments (§15: rows deleted, objects queued for removal after
    /// the commit, at `now` ms), its `mentions` rows, its text, the text of
    /// its edits and its reactions. The row keeps its channel and seq. A
    /// `Change::Delete` and the retention sweep both erase through it.
    pub(super) async fn erase_message_content_in(tx: &mut D::Connection, id: &str, now: i64) -> Result<(), StoreError> {
        Self::erase_attachments_of_message_in(tx, id, now).await?;
        for statement in [
            &ERASE_MENTIONS,
            &ERASE_MESSAGE,
            &ERASE_EDITS,
            &DELETE_REACTIONS,
            &DELETE_REACTION_COUNTS,
        ] {
            sqlx::query::<D>(D::sql(statement)).param(id).execute(tx.ex()).await?;
        }
        Ok(())
    }

    /// Stores a batch with a few statements per send: every channel
    /// locked in id order, each send resolved by its idempotency key,
    /// one insert per new message. Handles every batch (repeated
    /// keys, keys taken meanwhile); on PostgreSQL the set-based
    /// `PgStore::write_batch` falls back to it.
    pub(super) async fn write_batch_rows(
        &self,
        sends: &[NewEntry],
        now: i64,
        offline: Option<&dyn OfflineMembers>,
        sent: &CommitSent,
    ) -> Result<BatchOutcome, StoreError> {
        let mut tx = self.begin_write().await?;
        // Lock every channel of the batch in id order (BTreeMap), read its
        // sequence state and members once.
        let mut channels: BTreeMap<&ChannelId, Option<Locked>> = sends.iter().map(|s| (&s.channel_id, None)).collect();
        for (channel_id, slot) in channels.iter_mut() {
            let Some(locked) = Self::lock_channel(&mut tx, channel_id).await? else {
                continue;
            };
            let members = Self::members_with_roles_in(&mut tx, channel_id).await?;
            let mut state = Locked::new(locked.last_seq, locked.last_ts, locked.rules, members, offline);
            if locked.kind == ChannelKind::Direct {
                state.blocked = Self::blocked_members_in(&mut tx, channel_id).await?;
            }
            if offline.is_some() {
                Self::notify_state_in(&mut tx, channel_id, &mut state).await?;
            }
            *slot = Some(state);
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
            let (channel, sender) = match channels.get_mut(&send.channel_id) {
                Some(Some(channel)) if send.origin.overrides_rules() || channel.may_send(&send.sender_id) => {
                    let sender = channel.sender(&send.sender_id);
                    (channel, sender)
                }
                _ => {
                    let existing = match self.lookup_in(&mut tx, send).await? {
                        Some(existing) => existing,
                        None => {
                            let target = match send.change.target() {
                                Some(target) => Self::target_in(&mut tx, target).await?.map(TargetState::from),
                                None => None,
                            };
                            entry_rules::refusal(send, None, &ChannelRules::default(), target.as_ref(), now)
                                .unwrap_or(EntryOutcome::Forbidden)
                        }
                    };
                    outcomes.push(existing);
                    continue;
                }
            };
            // An entry about a message, or a message with references
            // (§14): the key decides first, then the target and the
            // references, read under the channel's lock (so an earlier
            // entry of this batch, a delete say, is seen).
            let refs = send.change.references();
            let mut read = Read::default();
            if send.change.target().is_some() || refs != References::default() {
                if let Some(existing) = self.lookup_in(&mut tx, send).await? {
                    outcomes.push(existing);
                    continue;
                }
                read.target = Self::state_in(&mut tx, send.change.target()).await?;
                read.reply_to = Self::state_in(&mut tx, refs.reply_to).await?;
                read.thread = Self::state_in(&mut tx, refs.thread_id).await?;
                let refusal = entry_rules::refusal(send, sender.as_ref(), &channel.rules, read.target.as_ref(), now)
                    .or_else(|| entry_rules::reference_refusal(send, read.reply_to.as_ref(), read.thread.as_ref()));
                if let Some(refusal) = refusal {
                    outcomes.push(refusal);
                    continue;
                }
                // An edit to an empty body: only of a message with
                // attachments (§15).
                if let Some(target) = entry_rules::empty_edit_target(send) {
                    let carries = Self::carries_attachments_in(&mut tx, target).await?;
                    if let Some(refusal) = entry_rules::empty_body_refusal(send, carries) {
                        outcomes.push(refusal);
                        continue;
                    }
                }
                // A reaction `add`: `max_reactions_per_message`, against
                // the holders the batch's earlier entries left (applied in
                // this transaction).
                if let Some((target, emoji)) = entry_rules::added_reaction(send) {
                    let held = Self::reactions_held_in(&mut tx, target, emoji, self.max_reactions).await?;
                    if let Some(refusal) = entry_rules::reaction_refusal(held, self.max_reactions) {
                        outcomes.push(refusal);
                        continue;
                    }
                }
            } else if let Some(refusal) = entry_rules::refusal(send, sender.as_ref(), &channel.rules, None, now) {
                // A member's message the moderation rules refuse (§17):
                // still a retry when its key is stored.
                let existing = self.lookup_in(&mut tx, send).await?;
                outcomes.push(existing.unwrap_or(refusal));
                continue;
            }
            // Attachments (§15): the key decides first, then the uploads,
            // read under the channel's lock (an earlier send of this batch
            // that claimed one is seen).
            let mut attached = Vec::new();
            if !send.attachments.is_empty() {
                if send.change.target().is_none() && refs == References::default() {
                    if let Some(existing) = self.lookup_in(&mut tx, send).await? {
                        outcomes.push(existing);
                        continue;
                    }
                }
                let rows = Self::attachments_by_ids_in(&mut tx, &send.attachments).await?;
                if let Some(refusal) = entry_rules::attachments_refusal(send, &rows) {
                    outcomes.push(refusal);
                    continue;
                }
                attached = entry_rules::in_send_order(send, rows);
            }
            let mut message = channel.next_message(send, now);
            message.reply_preview = read.reply_to.as_ref().map(|t| Box::new(t.reply_preview()));
            let inserted = sqlx::query::<D>(D::sql(&INSERT_MESSAGE))
                .param(id_text(message.message_id))
                .param(message.channel_id.as_str())
                .param(message.seq)
                .param(message.sender_id.as_str())
                .param(message.client_msg_id.as_str())
                .param(&message.body)
                .param(message.ts)
                .param(message.kind.as_str())
                .param(message.target_id.map(id_text))
                .param(message.emoji.as_deref())
                .param(message.add.map(op_text))
                .param(channel.offline_text(&message.sender_id)?)
                .param(message.reply_to.map(id_text))
                .param(message.thread_id.map(id_text))
                .param(mentions_text(&message.mentions)?)
                .param(message.mention_all)
                .param(message.mentions_asked.as_deref())
                .param(channel.notify_text(&message)?)
                .param(message.by_admin)
                .param(message.via_http)
                .fetch_optional(tx.ex())
                .await?
                .is_some();
            if inserted {
                if !Self::claim_attachments_in(&mut tx, &mut message, attached).await? {
                    return Err(StoreError::Corrupt(
                        "an attachment checked under the lock was claimed".into(),
                    ));
                }
                for user in entry_rules::mention_rows(&message) {
                    sqlx::query::<D>(INSERT_MENTION)
                        .param(user.as_str())
                        .param(message.channel_id.as_str())
                        .param(message.seq)
                        .execute(tx.ex())
                        .await?;
                }
                message.noop = !Self::apply(&mut tx, send, &message, &read).await?;
                if message.noop {
                    sqlx::query::<D>(D::sql(&MARK_NOOP))
                        .param(id_text(message.message_id))
                        .execute(tx.ex())
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
            let Some(state) = state.filter(|s| s.changed) else {
                continue;
            };
            sqlx::query::<D>(UPDATE_CHANNEL_SEQ)
                .param(channel_id.as_str())
                .param(state.last_seq)
                .param(state.last_ts)
                .execute(tx.ex())
                .await?;
            for (user, ts) in &state.posted {
                sqlx::query::<D>(KEEP_LAST_MESSAGE)
                    .param(channel_id.as_str())
                    .param(user.as_str())
                    .param(*ts)
                    .execute(tx.ex())
                    .await?;
            }
            members.push((channel_id.clone(), state.members));
        }
        Self::commit(tx, sent).await?;
        Ok(BatchOutcome { outcomes, members })
    }

    /// Resolves a send against a stored row with the same key:
    /// `Duplicate` when channel and body match, else `Conflict`.
    async fn lookup_in(
        &self,
        tx: &mut sqlx::Transaction<'static, D>,
        send: &NewEntry,
    ) -> Result<Option<EntryOutcome>, StoreError> {
        let row = sqlx::query::<D>(D::sql(&MESSAGE_BY_KEY))
            .param(send.sender_id.as_str())
            .param(send.client_msg_id.as_str())
            .fetch_optional(tx.ex())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let mut existing = [entry_from_row(&row)?];
        // The idempotency key covers the attachments (§15).
        Self::attach_attachments(&mut **tx, &mut existing).await?;
        let [existing] = existing;
        Ok(Some(if existing.is_retried_as(send) {
            EntryOutcome::Duplicate(existing)
        } else {
            EntryOutcome::Conflict
        }))
    }

    /// The state of message `id` (when given) for the rules, read in the
    /// transaction.
    async fn state_in(
        tx: &mut sqlx::Transaction<'static, D>,
        id: Option<uuid::Uuid>,
    ) -> Result<Option<TargetState>, StoreError> {
        match id {
            Some(id) => Ok(Self::target_in(tx, id).await?.map(TargetState::from)),
            None => Ok(None),
        }
    }

    /// The reaction state of `target` an `add` of `emoji` is judged by
    /// ([`REACTIONS_HELD`]), read in the transaction; the distinct emoji
    /// counted up to `most`.
    async fn reactions_held_in(
        tx: &mut sqlx::Transaction<'static, D>,
        target: uuid::Uuid,
        emoji: &str,
        most: usize,
    ) -> Result<entry_rules::ReactionsHeld, StoreError> {
        let row = sqlx::query::<D>(D::sql(&REACTIONS_HELD))
            .param(id_text(target))
            .param(emoji)
            .param(i64::try_from(most).unwrap_or(i64::MAX))
            .fetch_one(tx.ex())
            .await?;
        Ok(entry_rules::ReactionsHeld {
            distinct: row.value(0)?,
            emoji_held: row.value(1)?,
        })
    }

    async fn target_in(
        tx: &mut sqlx::Transaction<'static, D>,
        target: uuid::Uuid,
    ) -> Result<Option<Entry>, StoreError> {
        sqlx::query::<D>(D::sql(&MESSAGE_BY_ID))
            .param(id_text(target))
            .fetch_optional(tx.ex())
            .await?
            .as_ref()
            .map(entry_from_row)
            .transpose()
    }

    /// Applies a stored entry to its target's state, in the same
    /// transaction: an edit sets the current text, a delete erases
    /// the text of the message and of all its edits and drops its
    /// reactions (and, for a thread reply, takes one off its root's
    /// `reply_count`), a reaction moves the holders and counts (a no-op
    /// `add` of a held one or `remove` of one not held changes nothing), a
    /// thread reply moves its root's summary (§14). `read`: the states the
    /// rules were given. Returns whether it changed anything.
    async fn apply(
        tx: &mut sqlx::Transaction<'static, D>,
        send: &NewEntry,
        entry: &Entry,
        read: &Read,
    ) -> Result<bool, StoreError> {
        match &send.change {
            Change::Message => {}
            Change::Reply(refs) => {
                if let (Some(root), Some(thread)) = (refs.thread_id, &read.thread) {
                    let mut participants = thread.participants.clone();
                    let joined = entry_rules::joins_thread(&mut participants, &send.sender_id);
                    sqlx::query::<D>(D::sql(&THREAD_REPLIED))
                        .param(id_text(root))
                        .param(entry.ts)
                        .param(entry.seq)
                        .param(joined.then(|| participants_text(&participants)).transpose()?)
                        .execute(tx.ex())
                        .await?;
                }
            }
            Change::Edit { target } => {
                sqlx::query::<D>(D::sql(&APPLY_EDIT))
                    .param(id_text(*target))
                    .param(&send.body)
                    .param(entry.ts)
                    .execute(tx.ex())
                    .await?;
            }
            Change::Delete { target } => {
                let id = id_text(*target);
                Self::erase_message_content_in(tx, &id, entry.ts).await?;
                if let Some(root) = read.target.as_ref().and_then(|t| t.thread_id) {
                    sqlx::query::<D>(D::sql(&THREAD_REPLY_DELETED))
                        .param(id_text(root))
                        .execute(tx.ex())
                        .await?;
                }
            }
            Change::React { target, emoji, add } => {
                let id = id_text(*target);
                let user = send.sender_id.as_str();
                if *add {
                    let added = sqlx::query::<D>(D::sql(&ADD_REACTION))
                        .param(&id)
                        .param(emoji)
                        .param(user)
                        .execute(tx.ex())
                        .await?
                        .rows_affected();
                    if added == 0 {
                        return Ok(false);
                    }
                    sqlx::query::<D>(D::sql(&COUNT_UP))
                        .param(&id)
                        .param(emoji)
                        .param(entry.seq)
                        .execute(tx.ex())
                        .await?;
                } else {
                    let removed = sqlx::query::<D>(D::sql(&REMOVE_REACTION))
                        .param(&id)
                        .param(emoji)
                        .param(user)
                        .execute(tx.ex())
                        .await?
                        .rows_affected();
                    if removed == 0 {
                        return Ok(false);
                    }
                    let gone = sqlx::query::<D>(D::sql(&COUNT_GONE))
                        .param(&id)
                        .param(emoji)
                        .execute(tx.ex())
                        .await?
                        .rows_affected();
                    if gone == 0 {
                        sqlx::query::<D>(D::sql(&COUNT_DOWN))
                            .param(&id)
                            .param(emoji)
                            .execute(tx.ex())
                            .await?;
                    }
                }
            }
        }
        Ok(true)
    }
}

impl SqlStore<Sqlite> {
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
            if let Err(error) = sqlx::query::<Sqlite>(CHECKPOINT).execute(&self.write_pool).await {
                tracing::warn!(%error, "WAL checkpoint after a delete failed");
            }
        }
        Ok(batch)
    }
}
