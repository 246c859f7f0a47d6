//! Attachments (protocol.md §15): the rows of uploads (stored and expired
//! unclaimed by `uploads.rs`), the claim that
//! binds uploads to the message that carries them (in the transaction that
//! stores the message), the attachments reads show on messages, and the
//! durable queue of storage objects to remove (`attachment_removals`),
//! written in the transaction that deletes their rows and drained after it.

use std::collections::HashMap;

use super::dialect::{Affected, Columns, Dialect, Executes, Params};
use super::entry_types::{AttachmentRow, Entry, EntryKind};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};

/// The columns of an attachment row, in [`attachment_from_row`]'s order.
macro_rules! attachment_columns {
    () => {
        "attachment_id, channel_id, uploader_id, content_type, size, sha256, filename, width, height, \
         created_at, message_id, storage_key, thumbnail_key, url_key, url_ttl_secs"
    };
}
pub(super) use attachment_columns;

const ATTACHMENT_BY_ID: &str = concat!(
    "SELECT ",
    attachment_columns!(),
    " FROM attachments WHERE attachment_id = $1"
);
/// The attachments of the messages `$1` (a list of ids), in each message's order.
const ATTACHMENTS_OF_MESSAGES_PG: &str = concat!(
    "SELECT ",
    attachment_columns!(),
    " FROM attachments WHERE message_id = ANY($1::text[]) ORDER BY message_id, position"
);
const ATTACHMENTS_OF_MESSAGES_SQLITE: &str = concat!(
    "SELECT ",
    attachment_columns!(),
    " FROM attachments WHERE message_id IN (SELECT value FROM json_each($1)) ORDER BY message_id, position"
);
/// The uploads `$1` (a list of ids) as a send finds them.
const ATTACHMENTS_BY_IDS_PG: &str = concat!(
    "SELECT ",
    attachment_columns!(),
    " FROM attachments WHERE attachment_id = ANY($1::text[])"
);
const ATTACHMENTS_BY_IDS_SQLITE: &str = concat!(
    "SELECT ",
    attachment_columns!(),
    " FROM attachments WHERE attachment_id IN (SELECT value FROM json_each($1))"
);
/// Whether message `$1` carries an attachment.
const CARRIES: &str = "SELECT 1 FROM attachments WHERE message_id = $1 LIMIT 1";
/// Binds upload `$1` to message `$2` at `position` `$3`, if still unbound.
const CLAIM: &str =
    "UPDATE attachments SET message_id = $2, position = $3 WHERE attachment_id = $1 AND message_id IS NULL";
const SET_THUMBNAIL: &str = "UPDATE attachments SET thumbnail_key = $2 WHERE attachment_id = $1";
/// Queues the objects of the attachments of message `$1` and of channel `$1`.
const QUEUE_OF_MESSAGE: [&str; 2] = [
    "INSERT INTO attachment_removals (storage_key, queued_at) SELECT storage_key, $2 FROM attachments \
     WHERE message_id = $1 ON CONFLICT DO NOTHING",
    "INSERT INTO attachment_removals (storage_key, queued_at) SELECT thumbnail_key, $2 FROM attachments \
     WHERE message_id = $1 AND thumbnail_key IS NOT NULL ON CONFLICT DO NOTHING",
];
const DELETE_OF_MESSAGE: &str = "DELETE FROM attachments WHERE message_id = $1";
const QUEUE_OF_CHANNEL: [&str; 2] = [
    "INSERT INTO attachment_removals (storage_key, queued_at) SELECT storage_key, $2 FROM attachments \
     WHERE channel_id = $1 ON CONFLICT DO NOTHING",
    "INSERT INTO attachment_removals (storage_key, queued_at) SELECT thumbnail_key, $2 FROM attachments \
     WHERE channel_id = $1 AND thumbnail_key IS NOT NULL ON CONFLICT DO NOTHING",
];
const DELETE_OF_CHANNEL: &str = "DELETE FROM attachments WHERE channel_id = $1";
/// Up to `$1` queued removals, oldest first.
const REMOVALS: &str = "SELECT storage_key FROM attachment_removals ORDER BY queued_at, storage_key LIMIT $1";
const REMOVAL_DONE: &str = "DELETE FROM attachment_removals WHERE storage_key = $1";
/// Queues one object (an upload whose row was never written).
const QUEUE_ONE: &str =
    "INSERT INTO attachment_removals (storage_key, queued_at) VALUES ($1, $2) ON CONFLICT DO NOTHING";

pub(super) fn attachment_from_row<R: Columns>(row: &R) -> Result<AttachmentRow, StoreError> {
    let id =
        |text: String| uuid::Uuid::parse_str(&text).map_err(|e| StoreError::Corrupt(format!("attachment id: {e}")));
    Ok(AttachmentRow {
        attachment_id: id(row.value(0)?)?,
        channel_id: ChannelId::from_trusted(row.value(1)?),
        uploader_id: UserId::from_trusted(row.value(2)?),
        content_type: row.value(3)?,
        size: row.value(4)?,
        sha256: row.value(5)?,
        filename: row.value(6)?,
        width: row.value(7)?,
        height: row.value(8)?,
        created_at: row.value(9)?,
        message_id: row.value::<Option<String>>(10)?.map(id).transpose()?,
        storage_key: row.value(11)?,
        thumbnail_key: row.value(12)?,
        url_key: row.value(13)?,
        url_ttl_secs: row.value(14)?,
    })
}

pub(super) fn id_text(id: uuid::Uuid) -> String {
    id.hyphenated().to_string()
}

impl Store {
    /// The upload with this id, or `None`.
    pub async fn attachment(&self, id: uuid::Uuid) -> Result<Option<AttachmentRow>, StoreError> {
        self.read(async { dispatch!(self.attachment(id)) }).await
    }

    /// Records where upload `id`'s thumbnail is.
    pub async fn set_attachment_thumbnail(&self, id: uuid::Uuid, key: &str) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), set_attachment_thumbnail(id, key))
    }

    /// Up to `limit` storage keys queued for removal, oldest first.
    pub async fn attachment_removals(&self, limit: u32) -> Result<Vec<String>, StoreError> {
        self.read(async { dispatch!(self.attachment_removals(limit)) }).await
    }

    /// Takes `key` off the removal queue (its object is gone).
    pub async fn attachment_removed(&self, key: &str) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), attachment_removed(key))
    }

    /// Queues `key` for removal (an object whose row was never stored).
    pub async fn queue_attachment_removal(&self, key: &str, now: i64) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), queue_attachment_removal(key, now))
    }
}

impl<D: Dialect> SqlStore<D> {
    /// Whether message `id` carries attachments (an edit to an empty body
    /// is judged by it, `entry_rules::empty_body_refusal`), in `tx`.
    pub(super) async fn carries_attachments_in(
        tx: &mut sqlx::Transaction<'static, D>,
        id: uuid::Uuid,
    ) -> Result<bool, StoreError> {
        Ok(sqlx::query::<D>(CARRIES)
            .param(id_text(id))
            .fetch_optional(tx.ex())
            .await?
            .is_some())
    }

    pub(super) async fn attachment(&self, id: uuid::Uuid) -> Result<Option<AttachmentRow>, StoreError> {
        sqlx::query::<D>(ATTACHMENT_BY_ID)
            .param(id_text(id))
            .fetch_optional(self.reader().await?.ex())
            .await?
            .as_ref()
            .map(attachment_from_row)
            .transpose()
    }

    pub(super) async fn set_attachment_thumbnail(
        &self,
        id: uuid::Uuid,
        key: &str,
        sent: &CommitSent,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query::<D>(SET_THUMBNAIL)
            .param(id_text(id))
            .param(key)
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await
    }

    pub(super) async fn attachment_removals(&self, limit: u32) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query::<D>(REMOVALS)
            .param(i64::from(limit))
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter().map(|r| Ok(r.value(0)?)).collect()
    }

    pub(super) async fn attachment_removed(&self, key: &str, sent: &CommitSent) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query::<D>(REMOVAL_DONE).param(key).execute(tx.ex()).await?;
        Self::commit(tx, sent).await
    }

    pub(super) async fn queue_attachment_removal(
        &self,
        key: &str,
        now: i64,
        sent: &CommitSent,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query::<D>(QUEUE_ONE)
            .param(key)
            .param(now)
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await
    }

    /// The uploads `ids` as they are now, in `tx` (a send checks them under
    /// its channel's lock).
    pub(super) async fn attachments_by_ids_in(
        tx: &mut D::Connection,
        ids: &[uuid::Uuid],
    ) -> Result<Vec<AttachmentRow>, StoreError> {
        let texts: Vec<String> = ids.iter().copied().map(id_text).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let sql = match D::KIND {
            super::dialect::Kind::Postgres => ATTACHMENTS_BY_IDS_PG,
            super::dialect::Kind::Sqlite => ATTACHMENTS_BY_IDS_SQLITE,
        };
        let rows = D::bind_ids(sqlx::query::<D>(sql), &texts)?.fetch_all(tx.ex()).await?;
        rows.iter().map(attachment_from_row).collect()
    }

    /// Binds `rows` (checked by [`crate::store::entry_rules::attachments_refusal`])
    /// to `message`, in order, in `tx`; sets its `attachments`. `false`
    /// when one was claimed meanwhile (the caller fails the batch).
    pub(super) async fn claim_attachments_in(
        tx: &mut D::Connection,
        message: &mut Entry,
        rows: Vec<AttachmentRow>,
    ) -> Result<bool, StoreError> {
        let message_id = id_text(message.message_id);
        for (position, row) in rows.iter().enumerate() {
            let done = sqlx::query::<D>(CLAIM)
                .param(id_text(row.attachment_id))
                .param(&message_id)
                .param(position as i64)
                .execute(tx.ex())
                .await?;
            if done.rows_affected() != 1 {
                return Ok(false);
            }
        }
        message.attachments = rows
            .into_iter()
            .map(|mut row| {
                row.message_id = Some(message.message_id);
                row
            })
            .collect();
        Ok(true)
    }

    /// Deletes the attachment rows of message `message_id` in `tx`, queueing
    /// their objects for removal after the commit.
    pub(super) async fn erase_attachments_of_message_in(
        tx: &mut D::Connection,
        message_id: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        for statement in QUEUE_OF_MESSAGE {
            sqlx::query::<D>(statement)
                .param(message_id)
                .param(now)
                .execute(tx.ex())
                .await?;
        }
        sqlx::query::<D>(DELETE_OF_MESSAGE)
            .param(message_id)
            .execute(tx.ex())
            .await?;
        Ok(())
    }

    /// Deletes the attachment rows of channel `channel_id` in `tx`,
    /// queueing their objects for removal after the commit.
    pub(super) async fn erase_attachments_of_channel_in(
        tx: &mut D::Connection,
        channel_id: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        for statement in QUEUE_OF_CHANNEL {
            sqlx::query::<D>(statement)
                .param(channel_id)
                .param(now)
                .execute(tx.ex())
                .await?;
        }
        sqlx::query::<D>(DELETE_OF_CHANNEL)
            .param(channel_id)
            .execute(tx.ex())
            .await?;
        Ok(())
    }

    /// Sets the `attachments` of every `message` entry of `entries` that is
    /// not deleted: one statement for all of them, none when there is no
    /// such entry.
    pub(super) async fn attach_attachments<'e>(
        tx: &mut D::Connection,
        entries: impl IntoIterator<Item = &'e mut Entry>,
    ) -> Result<(), StoreError> {
        let mut entries: Vec<&mut Entry> = entries.into_iter().collect();
        let ids: Vec<String> = entries
            .iter()
            .filter(|e| e.kind == EntryKind::Message && !e.deleted)
            .map(|e| id_text(e.message_id))
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let sql = match D::KIND {
            super::dialect::Kind::Postgres => ATTACHMENTS_OF_MESSAGES_PG,
            super::dialect::Kind::Sqlite => ATTACHMENTS_OF_MESSAGES_SQLITE,
        };
        let rows = D::bind_ids(sqlx::query::<D>(sql), &ids)?.fetch_all(tx.ex()).await?;
        let mut by_message: HashMap<uuid::Uuid, Vec<AttachmentRow>> = HashMap::new();
        for row in &rows {
            let row = attachment_from_row(row)?;
            if let Some(message) = row.message_id {
                by_message.entry(message).or_default().push(row);
            }
        }
        for entry in entries.iter_mut() {
            if let Some(rows) = by_message.remove(&entry.message_id) {
                entry.attachments = rows;
            }
        }
        Ok(())
    }
}
