//! The per-row path: a batch stored with a few statements per send, every
//! channel locked in id order, each send resolved by its idempotency key,
//! decided by [`super::super::entry_rules`] against what its channel's
//! earlier entries left, and inserted one by one. Every SQLite batch, and
//! the PostgreSQL batches the set-based path hands back.

use std::collections::BTreeMap;

use super::super::batch_types::{BatchOutcome, EntryOutcome, NewEntry, OfflineMembers, References};
use super::super::dialect::{Columns, Dialect, Executes, Params, Sql};
use super::super::entries::{MESSAGE_BY_ID, MESSAGE_BY_KEY};
use super::super::entry_row::{entry_from_row, id_text, mentions_text, op_text};
use super::super::entry_rules::{self, ChannelRules, TargetState};
use super::super::entry_types::Entry;
use super::super::error::{CommitSent, StoreError};
use super::super::locked::Locked;
use super::super::search_separators::GoneTexts;
use super::super::sql_store::SqlStore;
use super::effects::Read;
use crate::ids::ChannelId;
use crate::protocol::ChannelKind;

static INSERT_MESSAGE: Sql = Sql::same(
    "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, target_id, emoji, op, offline_members, \
         reply_to, thread_id, mentions, mention_all, mentions_asked, notify_members, by_admin, via_http) \
         VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9::uuid, $10, $11, $12, $13::uuid, $14::uuid, $15, $16, $17, $18, $19, $20) \
         ON CONFLICT (sender_id, client_msg_id) DO NOTHING RETURNING seq",
);
/// User `$1` is mentioned by the message at seq `$3` of channel `$2` (§16).
const INSERT_MENTION: &str = "INSERT INTO mentions (user_id, channel_id, seq) VALUES ($1, $2, $3)";
/// Member `$1` of channel `$2` is mentioned at seq `$3`: its mark for
/// `unreadMentions` (`receipts.rs`) on its watermarks row moves up to it,
/// never down (a row made for it reads as no watermark: 0 and 0).
const MARK_MENTION: &str = "INSERT INTO watermarks (user_id, channel_id, delivered_seq, read_seq, mention_seq) \
     VALUES ($1, $2, 0, 0, $3) ON CONFLICT (channel_id, user_id) DO UPDATE \
     SET mention_seq = excluded.mention_seq WHERE watermarks.mention_seq < excluded.mention_seq";
/// Channel `$1`'s message at seq `$2` mentions all: the channel's mark for
/// `unreadMentions` moves up to it, never down (read by SQLite's
/// statement; PostgreSQL's counts the mentions of all in the unread range).
const MARK_MENTION_ALL: &str =
    "UPDATE channels SET mention_all_seq = $2 WHERE channel_id = $1 AND mention_all_seq < $2";
/// Sets channel `$1`'s `last_seq` and `last_ts` at the end of a batch.
const UPDATE_CHANNEL_SEQ: &str = "UPDATE channels SET last_seq = $2, last_ts = $3 WHERE channel_id = $1";
/// Marks entry `$1` as having changed nothing.
static MARK_NOOP: Sql = Sql::same("UPDATE messages SET noop = TRUE WHERE message_id = $1::uuid");
/// What the rules know of an `add` of reaction `$2` on message `$1`: how
/// many distinct emoji are held on `$1`, counted up to `$3` (the bound:
/// past it the number does not matter, and a message stored over it is
/// not counted through), and whether someone holds `$2`.
static REACTIONS_HELD: Sql = Sql::same(
    "SELECT (SELECT count(*) FROM (SELECT 1 FROM reaction_counts WHERE message_id = $1::uuid LIMIT $3) AS held), \
     EXISTS (SELECT 1 FROM reaction_counts WHERE message_id = $1::uuid AND emoji = $2)",
);
/// Slow mode: `$3` is the `ts` of member `$2`'s last message in channel `$1`.
const KEEP_LAST_MESSAGE: &str = "INSERT INTO member_limits (channel_id, user_id, last_message_ts) \
     VALUES ($1, $2, $3) ON CONFLICT (channel_id, user_id) DO UPDATE SET last_message_ts = excluded.last_message_ts";

impl<D: Dialect> SqlStore<D> {
    /// Stores a batch with a few statements per send: every channel
    /// locked in id order, each send resolved by its idempotency key,
    /// one insert per new message. Handles every batch (repeated
    /// keys, keys taken meanwhile); on PostgreSQL the set-based
    /// `PgStore::write_batch` falls back to it.
    pub(in crate::store) async fn write_batch_rows(
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
        // The texts the batch's edits and deletes take out of the search
        // index (SQLite; `search_separators`).
        let mut gone = GoneTexts::new();
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
                    for statement in [INSERT_MENTION, MARK_MENTION] {
                        sqlx::query::<D>(statement)
                            .param(user.as_str())
                            .param(message.channel_id.as_str())
                            .param(message.seq)
                            .execute(tx.ex())
                            .await?;
                    }
                }
                if message.mention_all {
                    sqlx::query::<D>(MARK_MENTION_ALL)
                        .param(message.channel_id.as_str())
                        .param(message.seq)
                        .execute(tx.ex())
                        .await?;
                }
                message.noop = !Self::apply(&mut tx, send, &message, &read, &mut gone).await?;
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
        D::repair_search_separators(&mut tx, &gone).await?;
        Self::commit(tx, sent).await?;
        // SQLite: the new messages enter the search index now, after the
        // commit (`search_indexer`); a search finds them meanwhile.
        self.search_indexer.wake();
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
}
