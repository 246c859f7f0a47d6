//! What a set-based batch reads of the targets of its edits, deletes and
//! reactions and of the messages its replies name (§14), how its entries
//! move them in batch order, and the writes that bring the tables to the
//! batch's end state.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use sqlx::{Postgres, Row};

use super::super::batch_types::{Change, EntryOutcome, NewEntry};
use super::super::entry_row::{entry_from_row, message_columns, parse_uuid, participants_text};
use super::super::entry_rules::{self, Count, TargetState};
use super::super::entry_types::Entry;
use super::super::error::StoreError;
use crate::ids::UserId;

/// Which of the messages `$1` (text[] of ids) carry attachments.
const CARRYING: &str = "SELECT DISTINCT message_id FROM attachments WHERE message_id = ANY($1)";
/// The entries `$1` (text[] of ids), the targets of a batch's changes.
const MESSAGES_BY_IDS: &str = concat!(
    "SELECT ",
    message_columns!("message_id::text", "target_id::text"),
    " FROM messages WHERE message_id = ANY($1::uuid[])"
);

/// The reaction state of the holders `($1[i], $2[i], $3[i])` (message,
/// emoji, user), one row each: whether it is held, and the count and
/// first-use seq of its (message, emoji) as a two-element array (`NULL`
/// when none holds it). The lookups are scalar subqueries of the select
/// list, which PostgreSQL runs row by row (never hashed, never turned
/// into a join), so each is one probe of a primary key whatever the
/// tables' sizes. As joins (or `EXISTS`, which may be hashed), a plan
/// made while the tables were small (and kept by the connection's
/// prepared statement) scanned the whole table on every batch. The last
/// column: how many distinct emoji are held on the message, counted up to
/// `$4` (`max_reactions_per_message` plus the batch's size: a message
/// stored over the bound is not counted through, and the batch's removes
/// cannot bring a capped count below the bound while the true one is not).
const REACTION_STATE_OF: &str = "SELECT u.message_id::text, u.emoji, u.user_id, \
     COALESCE((SELECT TRUE FROM reactions r \
     WHERE r.message_id = u.message_id AND r.emoji = u.emoji AND r.user_id = u.user_id), FALSE), \
     (SELECT ARRAY[c.count, c.first_seq] FROM reaction_counts c \
     WHERE c.message_id = u.message_id AND c.emoji = u.emoji), \
     (SELECT count(*) FROM (SELECT 1 FROM reaction_counts d WHERE d.message_id = u.message_id LIMIT $4) AS held) \
     FROM UNNEST($1::uuid[], $2::text[], $3::text[]) AS u(message_id, emoji, user_id)";

/// Marks the messages `$1` (text[] of ids) deleted and erases their text.
const ERASE_MESSAGES: &str = "UPDATE messages SET body = '', edited_body = NULL, edited_at = NULL, deleted = TRUE, \
     mentions = NULL, mentions_asked = NULL, mention_all = FALSE WHERE message_id = ANY($1::uuid[])";

/// The attachments of the deleted messages `$1` (text[], §15): their
/// objects queued for removal, then their rows deleted.
const ERASE_ATTACHMENTS_OF: [&str; 3] = [
    "INSERT INTO attachment_removals (storage_key, queued_at) SELECT storage_key, \
     (extract(epoch from clock_timestamp()) * 1000)::bigint FROM attachments WHERE message_id = ANY($1) \
     ON CONFLICT DO NOTHING",
    "INSERT INTO attachment_removals (storage_key, queued_at) SELECT thumbnail_key, \
     (extract(epoch from clock_timestamp()) * 1000)::bigint FROM attachments WHERE message_id = ANY($1) \
     AND thumbnail_key IS NOT NULL ON CONFLICT DO NOTHING",
    "DELETE FROM attachments WHERE message_id = ANY($1)",
];

/// Drops the `mentions` rows of the messages `$1` (§16).
const ERASE_MENTIONS_OF: &str = "DELETE FROM mentions x USING messages m \
     WHERE m.message_id = ANY($1::uuid[]) AND x.channel_id = m.channel_id AND x.seq = m.seq";

/// Erases the text of every edit of the messages `$1`.
const ERASE_EDITS_OF: &str = "UPDATE messages SET body = '' WHERE target_id = ANY($1::uuid[]) AND kind = 'edit'";

/// Drops every reaction held on the messages `$1`.
const DELETE_REACTIONS_OF: &str = "DELETE FROM reactions WHERE message_id = ANY($1::uuid[])";

/// Drops every reaction count of the messages `$1`.
const DELETE_REACTION_COUNTS_OF: &str = "DELETE FROM reaction_counts WHERE message_id = ANY($1::uuid[])";

/// How a batch moves one thread root's summary (§14).
#[derive(Default)]
struct ThreadMove {
    /// Replies stored, less thread replies deleted.
    replies: i64,
    /// The latest reply stored: its ts and seq.
    last: Option<(i64, i64)>,
    /// The root's `participants` when a reply's sender joined them.
    participants: Option<Vec<UserId>>,
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
pub(super) struct Changes {
    pub(super) targets: HashMap<uuid::Uuid, TargetState>,
    /// The targets of the batch's edits to an empty body that carry
    /// attachments (§15).
    carrying: HashSet<uuid::Uuid>,
    /// Per reaction of the batch: (held before the batch, held now).
    holders: BTreeMap<Holder, (bool, bool)>,
    /// Per (target, emoji) of the batch's reactions: (before, now).
    counts: BTreeMap<CountKey, (Count, Count)>,
    /// Per target of the batch's reactions: how many distinct emoji are
    /// held on it now (counted up to a cap at the read: see
    /// `REACTION_STATE_OF`), for `max_reactions_per_message`.
    distinct: HashMap<uuid::Uuid, i64>,
    /// The latest edit of each target: its text and ts.
    edits: BTreeMap<uuid::Uuid, (String, i64)>,
    /// How the batch moves each thread root's summary.
    threads: BTreeMap<uuid::Uuid, ThreadMove>,
    /// The targets deleted by the batch.
    deleted: Vec<uuid::Uuid>,
}

impl Changes {
    /// Reads the targets of the batch's changes with one statement, and
    /// with another which of its reactions are held, the counts of its
    /// (target, emoji) pairs and how many distinct emoji each target
    /// holds (counted up to `most`, `max_reactions_per_message`, plus the
    /// batch's size).
    pub(super) async fn read(
        tx: &mut sqlx::Transaction<'static, Postgres>,
        sends: &[NewEntry],
        most: usize,
    ) -> Result<Self, StoreError> {
        let mut changes = Changes::default();
        let targets: BTreeSet<uuid::Uuid> = sends
            .iter()
            .flat_map(|s| {
                let refs = s.change.references();
                [s.change.target(), refs.reply_to, refs.thread_id]
            })
            .flatten()
            .collect();
        let ids: Vec<String> = targets.iter().map(|t| t.hyphenated().to_string()).collect();
        for row in sqlx::query(MESSAGES_BY_IDS).bind(&ids).fetch_all(&mut **tx).await? {
            let message = entry_from_row(&row)?;
            changes.targets.insert(message.message_id, TargetState::from(message));
        }
        let emptied: Vec<String> = sends
            .iter()
            .filter_map(entry_rules::empty_edit_target)
            .map(|t| t.hyphenated().to_string())
            .collect();
        if !emptied.is_empty() {
            for row in sqlx::query(CARRYING).bind(&emptied).fetch_all(&mut **tx).await? {
                changes.carrying.insert(parse_uuid(row.try_get(0)?)?);
            }
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
        let cap = i64::try_from(most.saturating_add(sends.len())).unwrap_or(i64::MAX);
        for row in sqlx::query(REACTION_STATE_OF)
            .bind(&ids)
            .bind(&emojis)
            .bind(&users)
            .bind(cap)
            .fetch_all(&mut **tx)
            .await?
        {
            let (target, emoji, user): (uuid::Uuid, String, String) =
                (parse_uuid(row.try_get(0)?)?, row.try_get(1)?, row.try_get(2)?);
            changes.distinct.insert(target, row.try_get(5)?);
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
    pub(super) fn apply(&mut self, send: &NewEntry, entry: &Entry) -> bool {
        match &send.change {
            Change::Message => true,
            Change::Reply(refs) => {
                if let Some(root) = refs.thread_id {
                    let moved = self.threads.entry(root).or_default();
                    moved.replies += 1;
                    moved.last = Some((entry.ts, entry.seq));
                    if let Some(state) = self.targets.get_mut(&root) {
                        if entry_rules::joins_thread(&mut state.participants, &send.sender_id) {
                            moved.participants = Some(state.participants.clone());
                        }
                    }
                }
                true
            }
            Change::Edit { target } => {
                self.edits.insert(*target, (send.body.clone(), entry.ts));
                if let Some(state) = self.targets.get_mut(target) {
                    state.edited(&send.body);
                }
                true
            }
            Change::Delete { target } => {
                if let Some(state) = self.targets.get_mut(target) {
                    state.erase();
                    if let Some(root) = state.thread_id {
                        self.threads.entry(root).or_default().replies -= 1;
                    }
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
                let was_held = count.is_some();
                *count = entry_rules::next_count(*count, *add, entry.seq);
                let now_held = count.is_some();
                if was_held != now_held {
                    *self.distinct.entry(*target).or_insert(0) += if now_held { 1 } else { -1 };
                }
                true
            }
        }
    }

    /// Why `send`, an edit to an empty body, may not be stored
    /// ([`entry_rules::empty_body_refusal`]); `None` for any other entry.
    pub(super) fn empty_body_refusal(&self, send: &NewEntry) -> Option<EntryOutcome> {
        let target = entry_rules::empty_edit_target(send)?;
        entry_rules::empty_body_refusal(send, self.carrying.contains(&target))
    }

    /// What the rules know of `send`'s target when it is a reaction `add`
    /// ([`entry_rules::reaction_refusal`]), as the batch's earlier entries
    /// left it; `None` for any other entry.
    pub(super) fn reactions_held(&self, send: &NewEntry) -> Option<entry_rules::ReactionsHeld> {
        let (target, emoji) = entry_rules::added_reaction(send)?;
        let emoji_held = self
            .counts
            .get(&(target, emoji.to_owned()))
            .is_some_and(|(_, now)| now.is_some());
        Some(entry_rules::ReactionsHeld {
            distinct: self.distinct.get(&target).copied().unwrap_or(0),
            emoji_held,
        })
    }

    /// The effects that bring the tables to the batch's end state, but
    /// for its deletes: the latest edit of each target and the moves of
    /// each thread root's summary (one row per stored message touched), the
    /// reactions gained and lost, the counts changed or gone. Applied by
    /// the statement that inserts the entries; `None` when there are none.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a `participants` list cannot be written.
    pub(super) fn effects(&self) -> Result<Option<Effects<'_>>, StoreError> {
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
        let touched: BTreeSet<&uuid::Uuid> = self.edits.keys().chain(self.threads.keys()).collect();
        let mut rows = Touched::default();
        for id in touched {
            let edit = self.edits.get(id);
            let moved = self.threads.get(id);
            rows.ids.push(id.hyphenated().to_string());
            rows.bodies.push(edit.map(|(b, _)| b.as_str()));
            rows.tss.push(edit.map(|(_, ts)| *ts));
            rows.replies.push(moved.map_or(0, |m| m.replies));
            rows.last_ats.push(moved.and_then(|m| m.last).map(|(ts, _)| ts));
            rows.last_seqs.push(moved.and_then(|m| m.last).map(|(_, seq)| seq));
            rows.participants.push(
                moved
                    .and_then(|m| m.participants.as_deref())
                    .map(participants_text)
                    .transpose()?,
            );
        }
        let effects = Effects {
            touched: rows,
            added: holder_columns(moved(true)),
            removed: holder_columns(moved(false)),
            set_ids: set.iter().map(|((t, _), _)| t.hyphenated().to_string()).collect(),
            set_emojis: set.iter().map(|((_, e), _)| e.as_str()).collect(),
            set_counts: set.iter().map(|(_, (n, _))| *n).collect(),
            set_firsts: set.iter().map(|(_, (_, f))| *f).collect(),
            gone_ids: gone.iter().map(|(t, _)| t.hyphenated().to_string()).collect(),
            gone_emojis: gone.iter().map(|(_, e)| e.as_str()).collect(),
        };
        let none = effects.touched.ids.is_empty()
            && effects.added.0.is_empty()
            && effects.removed.0.is_empty()
            && effects.set_ids.is_empty()
            && effects.gone_ids.is_empty();
        Ok((!none).then_some(effects))
    }

    /// Applies the batch's deletes, after its entries and their other
    /// effects are written: the text of each deleted message and of its
    /// edits (this batch's included), its reactions and counts. Nothing
    /// when the batch deleted nothing.
    pub(super) async fn write_deletes(&self, tx: &mut sqlx::Transaction<'static, Postgres>) -> Result<(), StoreError> {
        if !self.deleted.is_empty() {
            let ids: Vec<String> = self.deleted.iter().map(|t| t.hyphenated().to_string()).collect();
            for statement in [
                ERASE_MENTIONS_OF,
                ERASE_MESSAGES,
                ERASE_EDITS_OF,
                DELETE_REACTIONS_OF,
                DELETE_REACTION_COUNTS_OF,
            ] {
                sqlx::query(statement).bind(&ids).execute(&mut **tx).await?;
            }
            // §15: the deleted messages' attachments go, their objects
            // queued for removal after the commit.
            for statement in ERASE_ATTACHMENTS_OF {
                sqlx::query(statement).bind(&ids).execute(&mut **tx).await?;
            }
        }
        Ok(())
    }
}

/// The stored messages a batch changes (edits' targets, threads' roots),
/// one row each, as one array per column: `NULL` leaves a column as it is.
#[derive(Default)]
struct Touched<'a> {
    ids: Vec<String>,
    bodies: Vec<Option<&'a str>>,
    tss: Vec<Option<i64>>,
    replies: Vec<i64>,
    last_ats: Vec<Option<i64>>,
    last_seqs: Vec<Option<i64>>,
    participants: Vec<Option<String>>,
}

/// The effects of a batch's edits, reactions and thread replies as one
/// array per column (`$19`..`$37` of `pg::INSERT_ENTRIES_WITH_EFFECTS`).
pub(super) struct Effects<'a> {
    touched: Touched<'a>,
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
    /// Binds the arrays, in parameter order, after the entries' eighteen.
    pub(super) fn bind<'q>(
        &'q self,
        query: sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
    ) -> sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments> {
        query
            .bind(&self.touched.ids)
            .bind(&self.touched.bodies)
            .bind(&self.touched.tss)
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
            .bind(&self.touched.replies)
            .bind(&self.touched.last_ats)
            .bind(&self.touched.last_seqs)
            .bind(&self.touched.participants)
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
