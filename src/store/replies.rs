//! Replies and threads as reads show them (protocol.md §14): each reply's
//! preview of the message it quotes, read when the page is read (so an edit
//! shows and a deletion erases it: the preview is never stored), and one
//! thread's replies paged by the `messages_thread` index. A root's thread
//! summary is not read here: the write path keeps it on the root's row
//! (`log_write/`, `pg_batch/`), so it comes with the row.

use std::collections::HashMap;

use super::batch_types::EntryOutcome;
use super::dialect::{Columns, Dialect, Executes, Params, Sql};
use super::entries::{Reading, MESSAGE_BY_ID};
use super::entry_row::{entry_from_row, id_text, parse_uuid, select_entries};
use super::entry_rules::{self, TargetState};
use super::entry_types::{EntriesPage, Entry, ReplyPreview};
use super::error::StoreError;
use super::handle::{dispatch, Store};
use super::sql_store::{fresh_read, SqlStore};
use crate::ids::{ChannelId, UserId};
use crate::protocol::preview_text;

/// The messages `$1` (a list of ids) as previews: sender, deleted, and the
/// first 200 characters of the current text (at least `PREVIEW_BYTES`
/// bytes; cut to bytes in Rust), so a page never carries whole bodies.
static PREVIEWS_OF: Sql = Sql::each(
    "SELECT message_id::text, sender_id, deleted, substr(COALESCE(edited_body, body), 1, 200) \
         FROM messages WHERE message_id = ANY($1::uuid[])",
    "SELECT message_id, sender_id, deleted, substr(COALESCE(edited_body, body), 1, 200) \
         FROM messages WHERE message_id IN (SELECT value FROM json_each($1))",
);
/// Up to `$3` replies of thread `$1` after seq `$2`: a range scan of
/// `messages_thread (thread_id, seq)`.
static THREAD_AFTER: Sql = select_entries!("WHERE thread_id = $1::uuid AND seq > $2 ORDER BY seq LIMIT $3");
/// Up to `$3` replies of thread `$1` before seq `$2`, newest first: a
/// backward scan of the same index.
static THREAD_BEFORE: Sql = select_entries!("WHERE thread_id = $1::uuid AND seq < $2 ORDER BY seq DESC LIMIT $3");

impl Store {
    /// Up to `limit` replies of the thread of `root` in `channel_id` with
    /// `seq > after_seq` (or, when `backward`, the last `limit` with
    /// `seq < after_seq`, still in `seq` order), render-ready as
    /// [`Store::entries_after`], and whether more lie beyond. `Ok(Err(_))`
    /// when `root` names no thread of this channel: the refusal
    /// ([`EntryOutcome::ReferenceNotFound`] for an unknown id or an entry
    /// that is not a message, [`EntryOutcome::ReferenceInvalid`] for a
    /// message of another channel or a reply). A deleted root's thread is
    /// read. Membership is the caller's to check.
    ///
    /// # Errors
    /// The store's error.
    pub async fn thread_entries(
        &self,
        channel_id: &ChannelId,
        root: uuid::Uuid,
        seq: i64,
        limit: u32,
        reader: Option<&UserId>,
        backward: bool,
    ) -> Result<Result<EntriesPage, EntryOutcome>, StoreError> {
        self.read(async { dispatch!(self.thread_entries(channel_id, root, seq, limit, reader, backward)) })
            .await
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn thread_entries(
        &self,
        channel_id: &ChannelId,
        root: uuid::Uuid,
        seq: i64,
        limit: u32,
        reader: Option<&UserId>,
        backward: bool,
    ) -> Result<Result<EntriesPage, EntryOutcome>, StoreError> {
        let reading = Reading {
            reader,
            most_reactions: self.max_reactions,
        };
        // The root and the page from one snapshot.
        fresh_read!(self, |tx| Self::thread_in(
            tx, channel_id, root, seq, limit, reading, backward
        ))
    }

    /// [`Self::thread_entries`] in `tx`.
    async fn thread_in(
        tx: &mut D::Connection,
        channel_id: &ChannelId,
        root: uuid::Uuid,
        seq: i64,
        limit: u32,
        reading: Reading<'_>,
        backward: bool,
    ) -> Result<Result<EntriesPage, EntryOutcome>, StoreError> {
        let state = sqlx::query::<D>(D::sql(&MESSAGE_BY_ID))
            .param(id_text(root))
            .fetch_optional(tx.ex())
            .await?
            .as_ref()
            .map(entry_from_row)
            .transpose()?
            .map(TargetState::from);
        if let Some(refused) = entry_rules::thread_root_refusal(channel_id, state.as_ref()) {
            return Ok(Err(refused));
        }
        let query = if backward { &THREAD_BEFORE } else { &THREAD_AFTER };
        let page = Self::page_in(tx, query, id_text(root), channel_id, seq, limit, reading, backward).await?;
        Ok(Ok(page))
    }

    /// Sets the `reply_preview` of every entry of `entries` that quotes a
    /// message, from that message as it is now: one statement for all of
    /// them, none when no entry quotes.
    pub(super) async fn attach_previews<'e>(
        conn: &mut D::Connection,
        entries: impl IntoIterator<Item = &'e mut Entry>,
    ) -> Result<(), StoreError> {
        let mut entries: Vec<&mut Entry> = entries.into_iter().collect();
        let mut ids: Vec<String> = entries.iter().filter_map(|e| e.reply_to).map(id_text).collect();
        if ids.is_empty() {
            return Ok(());
        }
        ids.sort_unstable();
        ids.dedup();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let rows = D::bind_ids(sqlx::query::<D>(D::sql(&PREVIEWS_OF)), &ids)?
            .fetch_all(conn.ex())
            .await?;
        let mut previews = HashMap::with_capacity(rows.len());
        for row in rows {
            let deleted: bool = row.value(2)?;
            let text: String = row.value(3)?;
            let preview = ReplyPreview {
                sender_id: UserId::from_trusted(row.value(1)?),
                body: if deleted {
                    String::new()
                } else {
                    preview_text(&text).to_owned()
                },
                deleted,
            };
            previews.insert(parse_uuid(row.value(0)?)?, Box::new(preview));
        }
        for entry in &mut entries {
            // A quoted message is never removed but with its channel, and
            // then so are its replies: each is found.
            entry.reply_preview = entry.reply_to.and_then(|id| previews.get(&id).cloned());
        }
        Ok(())
    }
}
