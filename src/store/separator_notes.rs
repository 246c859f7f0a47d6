//! The store's side of the FTS5 separator repair ([`super::search_separators`],
//! which knows only SQLite): a deleting transaction of either dialect notes
//! the indexed texts it takes out ([`GoneTexts::note_message_in`],
//! [`GoneTexts::note_channel_in`]; nothing on PostgreSQL), and the check of
//! every separator runs once at start
//! ([`SqlStore::repair_all_search_separators`]). Kept apart so that the
//! repair itself does not depend on [`super::dialect`], which calls it.

use futures_util::TryStreamExt;
use sqlx::Sqlite;

use super::dialect::{Columns, Dialect, Executes, Kind, Params};
use super::error::{CommitSent, StoreError};
use super::search_separators::{repair_all, GoneTexts, Repaired};
use super::sql_store::SqlStore;

/// The text message `$1` has in the index, if any (SQLite only: a row
/// above the indexer's watermark holds nothing there, `search_indexer`).
const INDEXED_TEXT: &str = "SELECT COALESCE(edited_body, body) FROM messages \
     WHERE message_id = $1 AND kind = 'message' AND NOT deleted \
     AND rowid <= (SELECT upto FROM search_indexed)";
/// Every text channel `$1`'s rows have in the index.
const INDEXED_TEXTS_OF_CHANNEL: &str = "SELECT COALESCE(edited_body, body) FROM messages \
     WHERE channel_id = $1 AND kind = 'message' AND NOT deleted \
     AND rowid <= (SELECT upto FROM search_indexed)";
/// Applies the pending changes of this transaction to the index's pages.
impl GoneTexts {
    /// Notes the text message `id` has in the index now, if any: called
    /// before the statement that erases or replaces it. Nothing on
    /// PostgreSQL.
    pub(in crate::store) async fn note_message_in<D: Dialect>(
        &mut self,
        conn: &mut D::Connection,
        id: &str,
    ) -> Result<(), StoreError> {
        if D::KIND != Kind::Sqlite {
            return Ok(());
        }
        let row = sqlx::query::<D>(INDEXED_TEXT)
            .param(id)
            .fetch_optional(conn.ex())
            .await?;
        if let Some(row) = row {
            self.add_text(&row.value::<String>(0)?);
        }
        Ok(())
    }

    /// Notes every text channel `channel_id` has in the index: called
    /// before its messages are deleted. Nothing on PostgreSQL.
    pub(in crate::store) async fn note_channel_in<D: Dialect>(
        &mut self,
        conn: &mut D::Connection,
        channel_id: &str,
    ) -> Result<(), StoreError> {
        if D::KIND != Kind::Sqlite {
            return Ok(());
        }
        let mut texts = sqlx::query::<D>(INDEXED_TEXTS_OF_CHANNEL)
            .param(channel_id)
            .fetch(conn.ex());
        while let Some(row) = texts.try_next().await? {
            self.add_text(&row.value::<String>(0)?);
        }
        Ok(())
    }
}

impl SqlStore<Sqlite> {
    /// [`repair_all`] in a write transaction of its own, then the WAL
    /// scrubbed when a separator was set: run once at start
    /// ([`super::Store::migrate`]), for what deletes left before they
    /// repaired (an index of 1,000,000 messages has about 18,000 rows of
    /// `message_search_idx`, one page read each).
    pub(super) async fn repair_all_search_separators(&self) -> Result<Repaired, StoreError> {
        let mut tx = self.begin_write().await?;
        let done = repair_all(&mut tx).await?;
        Self::commit(tx, &CommitSent::default()).await?;
        if done.fixed > 0 {
            tracing::info!(
                checked = done.checked,
                fixed = done.fixed,
                "search index: separators of deleted text repaired"
            );
            self.scrub_wal().await;
        }
        Ok(done)
    }
}
