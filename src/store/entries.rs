//! Reading the log: pages of a channel's entries (with each message's state
//! and reactions at one point of the log), one entry by id or by its
//! idempotency key, and where an entry lives.

use std::collections::HashMap;

use super::channel_lock::LAST_SEQ;
use super::dialect::{Columns, Dialect, Executes, Params, Sql};
use super::entry_row::{entry_from_row, id_text, parse_uuid, select_entries};
use super::entry_types::{EntriesPage, Entry, EntryKind, ReactionState};
use super::error::StoreError;
use super::handle::{dispatch, Store};
use super::sql_store::{fresh_read, SqlStore};
use crate::ids::{ChannelId, ClientMsgId, UserId};

pub(super) static MESSAGE_BY_KEY: Sql = select_entries!("WHERE sender_id = $1 AND client_msg_id = $2");
pub(super) static MESSAGE_BY_ID: Sql = select_entries!("WHERE message_id = $1::uuid");
pub(super) static MESSAGES_AFTER: Sql = select_entries!("WHERE channel_id = $1 AND seq > $2 ORDER BY seq LIMIT $3");
/// A backward scan of the `(channel_id, seq)` index from `$2`.
pub(super) static MESSAGES_BEFORE: Sql =
    select_entries!("WHERE channel_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3");
/// The reactions of the messages `$1` (a list of ids), with whether `$2`
/// holds each, by first use, the first `$3` of each message
/// (`max_reactions_per_message`: a message stored over the bound, before
/// it existed or before it was lowered, is read cut). PostgreSQL: whether
/// `$2` holds it is a scalar subquery of the rows kept (one probe of the
/// primary key per reaction): as a join, the planner read every row of
/// `reactions` held by `$2` through the primary key (whose first column is
/// the message, so all of it). A message's rows are numbered from its
/// `reaction_counts` rows (no index by first use: a message over the bound
/// still costs a scan of its rows, not their transfer).
static REACTIONS_OF: Sql = Sql::each(
    "SELECT c.message_id::text, c.emoji, c.count, \
         COALESCE((SELECT TRUE FROM reactions r \
         WHERE r.message_id = c.message_id AND r.emoji = c.emoji AND r.user_id = $2), FALSE) \
         FROM (SELECT message_id, emoji, count, first_seq, \
         row_number() OVER (PARTITION BY message_id ORDER BY first_seq) AS n \
         FROM reaction_counts WHERE message_id = ANY($1::uuid[])) c \
         WHERE c.n <= $3 ORDER BY c.message_id, c.first_seq",
    "SELECT c.message_id, c.emoji, c.count, (r.user_id IS NOT NULL) \
         FROM (SELECT message_id, emoji, count, first_seq, \
         row_number() OVER (PARTITION BY message_id ORDER BY first_seq) AS n \
         FROM reaction_counts WHERE message_id IN (SELECT value FROM json_each($1))) c \
         LEFT JOIN reactions r ON r.message_id = c.message_id AND r.emoji = c.emoji AND r.user_id = $2 \
         WHERE c.n <= $3 ORDER BY c.message_id, c.first_seq",
);

/// How a read renders its messages' reactions: `me` for `reader` (`None`,
/// the admin: no one's), and at most `most_reactions` of each message, the
/// first by first use (`max_reactions_per_message`; an export, the user's
/// own data, reads them all: `usize::MAX`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading<'a> {
    pub(super) reader: Option<&'a UserId>,
    pub(super) most_reactions: usize,
}

impl Store {
    /// Up to `limit` messages with `seq > after_seq`, in `seq` order, and
    /// whether more were stored after the last one returned.
    pub async fn messages_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
    ) -> Result<(Vec<Entry>, bool), StoreError> {
        self.read(async { dispatch!(self.messages_after(channel_id, after_seq, limit)) })
            .await
    }

    /// As [`Self::messages_after`], each `message` entry with its state at
    /// the time of the read, reactions included (`me` for `reader`; none
    /// holds it for `None`, the admin): one statement for the page and one
    /// for the reactions of all its messages, whatever the page's size, and
    /// one for the channel's last seq, all from one snapshot.
    pub async fn entries_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
        reader: Option<&UserId>,
    ) -> Result<EntriesPage, StoreError> {
        self.read(async { dispatch!(self.entries_page(channel_id, after_seq, limit, reader, false)) })
            .await
    }

    /// As [`Self::entries_after`], for the last `limit` entries with
    /// `seq < before_seq`, returned in `seq` order, and whether older ones
    /// exist: one backward scan of the `(channel_id, seq)` index, whatever
    /// the channel's length.
    pub async fn entries_before(
        &self,
        channel_id: &ChannelId,
        before_seq: i64,
        limit: u32,
        reader: Option<&UserId>,
    ) -> Result<EntriesPage, StoreError> {
        self.read(async { dispatch!(self.entries_page(channel_id, before_seq, limit, reader, true)) })
            .await
    }

    /// Where entry `message_id` lives, to route a change of it: its kind and
    /// channel, or `None` when no entry has this id. Answered from memory for
    /// a message this node stored or routed before (a message never moves;
    /// see `channel_of.rs` for why a deleted channel does not matter), else read.
    ///
    /// # Errors
    /// As [`Store::message`].
    pub async fn channel_of(&self, message_id: uuid::Uuid) -> Result<Option<(EntryKind, ChannelId)>, StoreError> {
        let cache = self.channel_of_cache();
        if let Some(channel_id) = cache.get(&message_id) {
            return Ok(Some((EntryKind::Message, channel_id)));
        }
        let Some(stored) = self.message(message_id).await? else {
            return Ok(None);
        };
        if stored.kind == EntryKind::Message {
            cache.remember(message_id, &stored.channel_id);
        }
        Ok(Some((stored.kind, stored.channel_id)))
    }

    /// The message with this id, or `None`.
    pub async fn message(&self, message_id: uuid::Uuid) -> Result<Option<Entry>, StoreError> {
        self.read(async { dispatch!(self.message(message_id)) }).await
    }

    /// The message stored under the idempotency key, or `None`.
    pub async fn message_by_key(
        &self,
        sender_id: &UserId,
        client_msg_id: &ClientMsgId,
    ) -> Result<Option<Entry>, StoreError> {
        self.read(async { dispatch!(self.message_by_key(sender_id, client_msg_id)) })
            .await
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn messages_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
    ) -> Result<(Vec<Entry>, bool), StoreError> {
        let mut conn = self.reader().await?;
        let rows = sqlx::query::<D>(D::sql(&MESSAGES_AFTER))
            .param(channel_id.as_str())
            .param(after_seq)
            .param(i64::from(limit) + 1)
            .fetch_all(conn.ex())
            .await?;
        let mut messages = rows.iter().map(entry_from_row).collect::<Result<Vec<_>, _>>()?;
        let has_more = messages.len() > limit as usize;
        messages.truncate(limit as usize);
        Self::attach_previews(&mut *conn, &mut messages).await?;
        Self::attach_attachments(&mut *conn, &mut messages).await?;
        Ok((messages, has_more))
    }

    /// A page of entries after `seq` (or, when `backward`, before it: a
    /// backward index scan, its rows reversed into `seq` order, `has_more`
    /// saying older ones exist), each `message` entry with its state and
    /// reactions.
    pub(super) async fn entries_page(
        &self,
        channel_id: &ChannelId,
        seq: i64,
        limit: u32,
        reader: Option<&UserId>,
        backward: bool,
    ) -> Result<EntriesPage, StoreError> {
        let query = if backward { &MESSAGES_BEFORE } else { &MESSAGES_AFTER };
        // The page and its reactions from one snapshot, so the state
        // shown is the state at one point of the log.
        let reading = Reading {
            reader,
            most_reactions: self.max_reactions,
        };
        fresh_read!(self, |tx| Self::page_in(
            tx,
            query,
            channel_id.as_str().to_owned(),
            channel_id,
            seq,
            limit,
            reading,
            backward,
        ))
    }

    /// A page read in `tx` by `query` (`$1` = `key`: the channel, or a
    /// thread's root; `$2` = `seq`; `$3` = `limit + 1`), render-ready: each
    /// `message` entry with its reactions as `reading` says (one statement
    /// for the whole page) and each reply with its preview (one more), and
    /// the channel's last seq.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn page_in(
        tx: &mut D::Connection,
        query: &'static Sql,
        key: String,
        channel_id: &ChannelId,
        seq: i64,
        limit: u32,
        reading: Reading<'_>,
        backward: bool,
    ) -> Result<EntriesPage, StoreError> {
        let rows = sqlx::query::<D>(D::sql(query))
            .param(key)
            .param(seq)
            .param(i64::from(limit) + 1)
            .fetch_all(tx.ex())
            .await?;
        let mut entries = rows.iter().map(entry_from_row).collect::<Result<Vec<_>, _>>()?;
        let has_more = entries.len() > limit as usize;
        entries.truncate(limit as usize);
        if backward {
            entries.reverse();
        }
        let last_seq: i64 = match sqlx::query::<D>(LAST_SEQ)
            .param(channel_id.as_str())
            .fetch_optional(tx.ex())
            .await?
        {
            Some(row) => row.value(0)?,
            None => 0,
        };
        Self::attach_previews(tx, &mut entries).await?;
        Self::attach_attachments(tx, &mut entries).await?;
        Self::attach_reactions(tx, &mut entries, reading).await?;
        Ok(EntriesPage {
            entries,
            has_more,
            last_seq,
        })
    }

    /// Sets the `reactions` of every `message` entry of `entries` that is
    /// not deleted (`me` for `reading.reader`, at most
    /// `reading.most_reactions` of each): one statement for all of them, in
    /// first-use order per message, none when there is no such entry.
    pub(super) async fn attach_reactions(
        tx: &mut D::Connection,
        entries: &mut [Entry],
        reading: Reading<'_>,
    ) -> Result<(), StoreError> {
        let reader = reading.reader;
        let ids: Vec<String> = entries
            .iter()
            .filter(|e| e.kind == EntryKind::Message && !e.deleted)
            .map(|e| id_text(e.message_id))
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let rows = D::bind_ids(sqlx::query::<D>(D::sql(&REACTIONS_OF)), &ids)?
            .param(reader.map(UserId::as_str).unwrap_or(""))
            .param(i64::try_from(reading.most_reactions).unwrap_or(i64::MAX))
            .fetch_all(tx.ex())
            .await?;
        let mut by_message: HashMap<uuid::Uuid, Vec<ReactionState>> = HashMap::new();
        for row in rows {
            let id = parse_uuid(row.value(0)?)?;
            by_message.entry(id).or_default().push(ReactionState {
                emoji: row.value(1)?,
                count: row.value(2)?,
                me: reader.is_some() && row.value::<bool>(3)?,
            });
        }
        for entry in entries.iter_mut() {
            if let Some(reactions) = by_message.remove(&entry.message_id) {
                entry.reactions = reactions;
            }
        }
        Ok(())
    }

    pub(super) async fn message(&self, message_id: uuid::Uuid) -> Result<Option<Entry>, StoreError> {
        let mut conn = self.reader().await?;
        let found = sqlx::query::<D>(D::sql(&MESSAGE_BY_ID))
            .param(id_text(message_id))
            .fetch_optional(conn.ex())
            .await?
            .as_ref()
            .map(entry_from_row)
            .transpose()?;
        Self::with_attachments(&mut conn, found).await
    }

    /// `found` with its attachments (§15), read on `conn`.
    async fn with_attachments(conn: &mut D::Connection, found: Option<Entry>) -> Result<Option<Entry>, StoreError> {
        let Some(entry) = found else { return Ok(None) };
        let mut entries = [entry];
        Self::attach_attachments(conn, &mut entries).await?;
        let [entry] = entries;
        Ok(Some(entry))
    }

    pub(super) async fn message_by_key(
        &self,
        sender_id: &UserId,
        client_msg_id: &ClientMsgId,
    ) -> Result<Option<Entry>, StoreError> {
        let mut conn = self.reader().await?;
        let found = sqlx::query::<D>(D::sql(&MESSAGE_BY_KEY))
            .param(sender_id.as_str())
            .param(client_msg_id.as_str())
            .fetch_optional(conn.ex())
            .await?
            .as_ref()
            .map(entry_from_row)
            .transpose()?;
        Self::with_attachments(&mut conn, found).await
    }
}
