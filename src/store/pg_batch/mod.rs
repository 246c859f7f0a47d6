//! PostgreSQL's set-based batch: a fixed number of statements whatever the
//! batch's size (arrays and `UNNEST`), so a batch of a hundred sends costs
//! five round trips, not a few hundred (six with replies: their
//! references read, and the thread roots' summaries moved in the insert's
//! statement). Each entry is decided by
//! [`super::entry_rules`] in memory, in batch order, as the per-row path
//! (`log_write/per_row.rs`) decides it in the database; a batch that repeats a key
//! or meets a stored one goes to the per-row path instead.
//!
//! Here: the batch's steps in order and its entries decided in memory;
//! `lock.rs` locks its channels and reads them, `changes.rs` reads and
//! moves the targets of its changes, `insert.rs` writes its entries.

mod changes;
mod insert;
mod lock;

use std::collections::{BTreeMap, HashSet};

use sqlx::Postgres;

use self::changes::Changes;
use super::batch_types::{BatchOutcome, Change, EntryOutcome, NewEntry, OfflineMembers};
use super::entry_row::{entry_from_row, message_columns};
use super::entry_rules;
use super::error::{CommitSent, StoreError};
use super::locked::Locked;
use super::sql_store::SqlStore;
use crate::ids::ChannelId;

/// The stored entries with the keys `($1[i], $2[i])` (sender, client id; text[] each).
const MESSAGES_BY_KEYS: &str = concat!(
    "SELECT ",
    message_columns!("message_id::text", "target_id::text"),
    " FROM messages WHERE (sender_id, client_msg_id) IN (SELECT * FROM UNNEST($1::text[], $2::text[]))"
);

impl SqlStore<Postgres> {
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
        // A message with attachments (§15) is decided by the per-row path,
        // which reads and claims its uploads under the channel's lock.
        if sends.iter().any(|s| !s.attachments.is_empty()) {
            return Ok(None);
        }
        let mut tx = self.begin_write().await?;
        let mut channels = Self::lock_batch_channels(&mut tx, sends, offline).await?;
        let mut changes = if sends.iter().any(|s| s.change != Change::Message) {
            Changes::read(&mut tx, sends, self.max_reactions).await?
        } else {
            Changes::default()
        };
        let decided = Decided::decide(sends, &mut channels, &mut changes, now, self.max_reactions);
        let effects = changes.effects()?;
        if !Self::insert_entries(&mut tx, sends, &decided, &channels, effects.as_ref()).await? {
            // A key was stored already (a retry) or by a transaction that
            // committed meanwhile: the seqs after it would have a gap.
            tx.rollback().await?;
            return Ok(None);
        }
        changes.write_deletes(&mut tx).await?;
        Self::keep_last_messages(&mut tx, &channels).await?;
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
        let mut found = Vec::new();
        for row in sqlx::query(MESSAGES_BY_KEYS)
            .bind(&senders)
            .bind(&keys)
            .fetch_all(&mut **tx)
            .await?
        {
            found.push(entry_from_row(&row)?);
        }
        // The idempotency key covers the attachments (§15).
        Self::attach_attachments(&mut **tx, &mut found).await?;
        let mut stored = std::collections::HashMap::new();
        for message in found {
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
    /// checks (a reaction `add` past `most`, `max_reactions_per_message`,
    /// included) is refused; any other becomes the next entry of its
    /// channel and moves `changes` (so a later send sees its effect).
    fn decide(
        sends: &[NewEntry],
        channels: &mut BTreeMap<String, Locked>,
        changes: &mut Changes,
        now: i64,
        most: usize,
    ) -> Self {
        let mut decided = Decided {
            outcomes: Vec::with_capacity(sends.len()),
            refused: Vec::new(),
            new: Vec::with_capacity(sends.len()),
        };
        for (index, send) in sends.iter().enumerate() {
            let channel = channels
                .get_mut(send.channel_id.as_str())
                .filter(|c| send.origin.overrides_rules() || c.may_send(&send.sender_id));
            let sender = channel.as_ref().and_then(|c| c.sender(&send.sender_id));
            let rules = channel.as_ref().map(|c| c.rules).unwrap_or_default();
            let state = |id: Option<uuid::Uuid>| id.and_then(|id| changes.targets.get(&id));
            let refs = send.change.references();
            let refusal = entry_rules::refusal(send, sender.as_ref(), &rules, state(send.change.target()), now)
                .or_else(|| entry_rules::reference_refusal(send, state(refs.reply_to), state(refs.thread_id)))
                .or_else(|| changes.empty_body_refusal(send))
                .or_else(|| {
                    changes
                        .reactions_held(send)
                        .and_then(|held| entry_rules::reaction_refusal(held, most))
                });
            let preview = state(refs.reply_to).map(|t| Box::new(t.reply_preview()));
            let (Some(channel), None) = (channel, &refusal) else {
                decided.refused.push(index);
                decided.outcomes.push(refusal.unwrap_or(EntryOutcome::Forbidden));
                continue;
            };
            let mut message = channel.next_message(send, now);
            message.reply_preview = preview;
            message.noop = !changes.apply(send, &message);
            channel.stored(&message);
            decided.new.push(index);
            decided.outcomes.push(EntryOutcome::Stored(message));
        }
        decided
    }
}
