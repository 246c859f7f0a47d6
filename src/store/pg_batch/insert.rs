//! The set-based batch's writes: its new entries inserted and its
//! channels' seqs set in one statement (with the effects of its edits,
//! reactions and thread replies when it has any), its `mentions` rows, and
//! slow mode's last message times.

use std::collections::BTreeMap;

use sqlx::{Postgres, Row};

use super::super::batch_types::{Change, EntryOutcome, NewEntry};
use super::super::entry_row::{mentions_text, op_text};
use super::super::entry_rules;
use super::super::entry_types::Entry;
use super::super::error::StoreError;
use super::super::locked::Locked;
use super::super::sql_store::SqlStore;
use super::changes::Effects;
use super::Decided;

/// The two `WITH` queries of `INSERT_ENTRIES` (`$1`..`$18`): the
/// batch's entries inserted (`inserted`) and its channels' seqs set
/// (`updated`), one row per piece each.
macro_rules! insert_entries {
    ($mentions:literal, $all:literal, $asked:literal, $notify:literal, $by_admin:literal, $via_http:literal) => {
        concat!("WITH inserted AS (\
         INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, offline_members, \
         kind, target_id, emoji, op, noop, reply_to, thread_id, mentions, mention_all, mentions_asked, notify_members, \
         by_admin, via_http) \
         SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::int8[], $11::text[], \
         $12::text[], $13::uuid[], $14::text[], $15::text[], $16::bool[], $17::uuid[], $18::uuid[], ", $mentions, "::text[], ",
         $all, "::bool[], ", $asked, "::text[], ", $notify, "::text[], ", $by_admin, "::bool[], ", $via_http, "::bool[]) \
         ON CONFLICT (sender_id, client_msg_id) DO NOTHING RETURNING 1), \
         updated AS (UPDATE channels AS c SET last_seq = u.last_seq, last_ts = u.last_ts \
         FROM UNNEST($8::text[], $9::int8[], $10::int8[]) AS u(channel_id, last_seq, last_ts) \
         WHERE c.channel_id = u.channel_id RETURNING 1)")
    };
}

/// Slow mode: the `ts` `$3[i]` of member `$2[i]`'s last message in channel
/// `$1[i]` (one row per pair).
const KEEP_LAST_MESSAGES: &str = "INSERT INTO member_limits (channel_id, user_id, last_message_ts) \
     SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[]) \
     ON CONFLICT (channel_id, user_id) DO UPDATE SET last_message_ts = excluded.last_message_ts";

/// Inserts a batch's entries from one array per column (`$1`..`$7`,
/// `$11` the offline members, `$12`..`$16` kind, target, emoji, op,
/// noop, `$17`, `$18` the references of §14, `$19`..`$22` the mentions
/// and notify columns of §16, `$23`, `$24` `by_admin` and `via_http`) and
/// sets `last_seq`/`last_ts` of every channel it wrote to
/// (`$8`..`$10`), in one statement. Returns the number of entries
/// inserted (fewer than given means a key was taken, and the caller
/// rolls back) and of channels updated.
const INSERT_ENTRIES: &str = concat!(
    insert_entries!("$19", "$20", "$21", "$22", "$23", "$24"),
    " SELECT (SELECT count(*) FROM inserted), (SELECT count(*) FROM updated)"
);

/// `INSERT_ENTRIES` (`$1`..`$18`) with the effects of the batch's edits,
/// reactions and thread replies in the same statement (PostgreSQL runs
/// every data-modifying `WITH` to completion; the pieces touch disjoint
/// rows: the stored messages the batch changes, never the new ones, each
/// updated once, the holders gained and lost, the counts set and dropped):
/// - message `$19[i]` (a stored row: an edit's target, a thread's root, or
///   both): its current text `$20[i]` and edit time `$21[i]` (`NULL`:
///   not edited), `$34[i]` more replies (fewer when negative), its latest
///   reply's ts `$35[i]` and seq `$36[i]` and its `participants` `$37[i]`
///   (`NULL`: unchanged);
/// - the reactions `($22[i], $23[i], $24[i])` (message, emoji, user)
///   added and `($25[i], $26[i], $27[i])` removed;
/// - the count `$30[i]` and first-use seq `$31[i]` of `($28[i], $29[i])`
///   (message, emoji) set, and the counts of `($32[i], $33[i])` dropped
///   (nobody holds them any more).
///
/// The columns of `INSERT_ENTRIES`'s `$19`..`$24` are here `$38`..`$43`.
///
/// Returns the same two counts as `INSERT_ENTRIES`; when fewer entries
/// went in than given the caller rolls back, effects included.
const INSERT_ENTRIES_WITH_EFFECTS: &str = concat!(
    insert_entries!("$38", "$39", "$40", "$41", "$42", "$43"),
    ", \
     touched AS (UPDATE messages AS m SET edited_body = COALESCE(u.body, m.edited_body), \
     edited_at = COALESCE(u.ts, m.edited_at), reply_count = m.reply_count + u.replies, \
     last_reply_at = COALESCE(u.last_at, m.last_reply_at), last_reply_seq = COALESCE(u.last_seq, m.last_reply_seq), \
     participants = COALESCE(u.participants, m.participants) \
     FROM UNNEST($19::uuid[], $20::text[], $21::int8[], $34::int8[], $35::int8[], $36::int8[], $37::text[]) \
     AS u(message_id, body, ts, replies, last_at, last_seq, participants) WHERE m.message_id = u.message_id), \
     added AS (INSERT INTO reactions (message_id, emoji, user_id) \
     SELECT * FROM UNNEST($22::uuid[], $23::text[], $24::text[]) ON CONFLICT DO NOTHING), \
     removed AS (DELETE FROM reactions r \
     USING UNNEST($25::uuid[], $26::text[], $27::text[]) AS u(message_id, emoji, user_id) \
     WHERE r.message_id = u.message_id AND r.emoji = u.emoji AND r.user_id = u.user_id), \
     counted AS (INSERT INTO reaction_counts (message_id, emoji, count, first_seq) \
     SELECT * FROM UNNEST($28::uuid[], $29::text[], $30::int8[], $31::int8[]) \
     ON CONFLICT (message_id, emoji) DO UPDATE SET count = excluded.count, first_seq = excluded.first_seq), \
     dropped AS (DELETE FROM reaction_counts c \
     USING UNNEST($32::uuid[], $33::text[]) AS u(message_id, emoji) \
     WHERE c.message_id = u.message_id AND c.emoji = u.emoji) \
     SELECT (SELECT count(*) FROM inserted), (SELECT count(*) FROM updated)"
);

/// The `mentions` rows (§16) of the batch's new messages: user `$1[i]`
/// mentioned at seq `$3[i]` of channel `$2[i]`, with each such member's
/// mark (`watermarks.mention_seq`; a row made for it reads as no
/// watermark) moved up to its newest; and the marks of
/// the channels `$4[i]` whose message at seq `$5[i]` mentions all
/// (`channels.mention_all_seq`). Marks never move down; `receipts.rs`
/// probes the `mentions` rows only above a member's mark (PostgreSQL counts
/// the mentions of all within the unread range and reads no channel mark;
/// it is kept for SQLite's statement and for a node of the previous
/// version during an upgrade). One statement per batch that has any
/// mention.
const INSERT_MENTIONS: &str = "WITH new AS (SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[]) \
     AS n(user_id, channel_id, seq)), \
     inserted AS (INSERT INTO mentions (user_id, channel_id, seq) SELECT user_id, channel_id, seq FROM new), \
     marked AS (INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq, mention_seq) \
     SELECT channel_id, user_id, 0, 0, max(seq) FROM new GROUP BY channel_id, user_id \
     ORDER BY channel_id, user_id \
     ON CONFLICT (channel_id, user_id) DO UPDATE SET mention_seq = excluded.mention_seq \
     WHERE watermarks.mention_seq < excluded.mention_seq), \
     marked_all AS (UPDATE channels c SET mention_all_seq = a.seq \
     FROM (SELECT channel_id, max(seq) AS seq FROM UNNEST($4::text[], $5::int8[]) AS t(channel_id, seq) \
     GROUP BY channel_id) a WHERE c.channel_id = a.channel_id AND c.mention_all_seq < a.seq) \
     SELECT 1";

impl SqlStore<Postgres> {
    /// Slow mode: keeps the `ts` of each sender's last message of this
    /// batch in its channel (`member_limits`), one statement for the
    /// batch, none when no channel of it is in slow mode.
    pub(super) async fn keep_last_messages(
        tx: &mut sqlx::Transaction<'static, Postgres>,
        channels: &BTreeMap<String, Locked>,
    ) -> Result<(), StoreError> {
        let mut ids = Vec::new();
        let mut users = Vec::new();
        let mut tss = Vec::new();
        for (id, channel) in channels {
            for (user, ts) in &channel.posted {
                ids.push(id.as_str());
                users.push(user.as_str());
                tss.push(*ts);
            }
        }
        if !ids.is_empty() {
            sqlx::query(KEEP_LAST_MESSAGES)
                .bind(&ids)
                .bind(&users)
                .bind(&tss)
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }

    /// Inserts the batch's new entries and sets the seqs of the channels
    /// they went to, in one statement, which also applies `effects` (the
    /// batch's edits and reactions) when given. Rows go in in byte order of their
    /// idempotency key, not batch order: a key being inserted by another
    /// transaction makes this one wait, and two batches taking the same
    /// keys in opposite orders would deadlock. Seqs are already assigned,
    /// so the order is free. Returns `false` when fewer rows went in than
    /// given (a key was taken): the caller rolls back.
    pub(super) async fn insert_entries(
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
                let notify = channels
                    .get(sends[index].channel_id.as_str())
                    .map(|c| c.notify_text(message))
                    .transpose()?
                    .flatten();
                rows.push(&sends[index], message, offline, notify)?;
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
            INSERT_ENTRIES_WITH_EFFECTS
        } else {
            INSERT_ENTRIES
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
            .bind(&rows.noop)
            .bind(&rows.reply_to)
            .bind(&rows.thread_id);
        if let Some(effects) = effects {
            query = effects.bind(query);
        }
        query = query
            .bind(&rows.mentions)
            .bind(&rows.mention_all)
            .bind(&rows.mentions_asked)
            .bind(&rows.notify_members)
            .bind(&rows.by_admin)
            .bind(&rows.via_http);
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
        if !rows.mention_users.is_empty() || !rows.all_channels.is_empty() {
            sqlx::query(INSERT_MENTIONS)
                .bind(&rows.mention_users)
                .bind(&rows.mention_channels)
                .bind(&rows.mention_seqs)
                .bind(&rows.all_channels)
                .bind(&rows.all_seqs)
                .execute(&mut **tx)
                .await?;
        }
        Ok(true)
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
    reply_to: Vec<Option<String>>,
    thread_id: Vec<Option<String>>,
    mentions: Vec<Option<String>>,
    mention_all: Vec<bool>,
    mentions_asked: Vec<Option<String>>,
    notify_members: Vec<Option<String>>,
    /// How each entry was made (§12's common rules of version 1.2).
    by_admin: Vec<bool>,
    via_http: Vec<bool>,
    /// The `mentions` rows (§16): user, channel, seq.
    mention_users: Vec<String>,
    mention_channels: Vec<&'a str>,
    mention_seqs: Vec<i64>,
    /// The messages that mention all (§16): channel, seq.
    all_channels: Vec<&'a str>,
    all_seqs: Vec<i64>,
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
            reply_to: Vec::with_capacity(n),
            thread_id: Vec::with_capacity(n),
            mentions: Vec::with_capacity(n),
            mention_all: Vec::with_capacity(n),
            mentions_asked: Vec::with_capacity(n),
            notify_members: Vec::with_capacity(n),
            by_admin: Vec::with_capacity(n),
            via_http: Vec::with_capacity(n),
            mention_users: Vec::new(),
            mention_channels: Vec::new(),
            mention_seqs: Vec::new(),
            all_channels: Vec::new(),
            all_seqs: Vec::new(),
        }
    }

    /// Adds `message`, the new entry stored for `send`, with its
    /// `offline_members` and `notify_members` columns, and its `mentions`
    /// rows; the text columns borrow from the send.
    fn push(
        &mut self,
        send: &'a NewEntry,
        message: &Entry,
        offline_members: Option<String>,
        notify_members: Option<String>,
    ) -> Result<(), StoreError> {
        self.offline_members.push(offline_members);
        self.notify_members.push(notify_members);
        self.mentions.push(mentions_text(&message.mentions)?);
        self.mention_all.push(message.mention_all);
        self.mentions_asked.push(message.mentions_asked.clone());
        self.by_admin.push(message.by_admin);
        self.via_http.push(message.via_http);
        for user in entry_rules::mention_rows(message) {
            self.mention_users.push(user.as_str().to_owned());
            self.mention_channels.push(send.channel_id.as_str());
            self.mention_seqs.push(message.seq);
        }
        if message.mention_all {
            self.all_channels.push(send.channel_id.as_str());
            self.all_seqs.push(message.seq);
        }
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
        self.reply_to.push(message.reply_to.map(|t| t.hyphenated().to_string()));
        self.thread_id
            .push(message.thread_id.map(|t| t.hyphenated().to_string()));
        Ok(())
    }

    fn len(&self) -> usize {
        self.seq.len()
    }

    fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }
}
