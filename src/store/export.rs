//! A user's data as one snapshot (protocol.md §19, `GET
//! /v1/users/{userId}/export`): the messages they sent (render-ready: current
//! text, reactions with `me` for them, previews, attachments, thread
//! summaries), their memberships, their reactions and their uploads, read
//! page by page inside one read-only transaction (PostgreSQL `REPEATABLE
//! READ READ ONLY`; SQLite a read transaction, whose first read fixes the
//! snapshot), so the export is consistent however long it streams.
//!
//! Each part pages by keyset on an index that starts with the user
//! (migration 0020): a page costs the same at the first row and at the
//! millionth, and at most one page is in memory (the pages go to a bounded
//! channel that the HTTP body drains, so a slow reader slows the reads).

use std::time::Duration;

use tokio::sync::mpsc;

use super::attachments::{attachment_columns, attachment_from_row};
use super::channel_types::parse_role;
use super::dialect::{Columns, Dialect, Executes, Params, Sql};
use super::entries::Reading;
use super::entry_row::{entry_from_row, id_text, parse_uuid, select_entries};
use super::entry_types::{AttachmentRow, Entry};
use super::error::StoreError;
use super::handle::{dispatch, Store};
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};
use crate::permissions::Role;

/// Rows per page of each part of an export.
pub const EXPORT_PAGE: u32 = 500;

/// The user `$1`'s messages after `$2` (by id: UUIDv7, so in the order
/// they were stored), `$3` of them.
static MESSAGES_OF_SENDER: Sql =
    select_entries!("WHERE sender_id = $1 AND kind = 'message' AND message_id > $2::uuid ORDER BY message_id LIMIT $3");
/// The user `$1`'s memberships after channel `$2` (byte order), `$3` of them.
static MEMBERSHIPS_OF_USER: Sql = Sql::same(
    "SELECT channel_id, role, joined_at FROM members WHERE user_id = $1 AND channel_id COLLATE \"C\" > $2 \
     ORDER BY channel_id COLLATE \"C\" LIMIT $3",
);
/// The reactions the user `$1` holds after (message `$2`, emoji `$3`), `$4`
/// of them, with the channel of each message.
static REACTIONS_OF_USER: Sql = Sql::same(
    "SELECT r.message_id::text, m.channel_id, r.emoji FROM reactions r \
     JOIN messages m ON m.message_id = r.message_id \
     WHERE r.user_id = $1 AND (r.message_id > $2::uuid OR (r.message_id = $2::uuid AND r.emoji COLLATE \"C\" > $3)) \
     ORDER BY r.message_id, r.emoji COLLATE \"C\" LIMIT $4",
);
/// The uploads of user `$1` after attachment `$2` (byte order), `$3` of them.
static ATTACHMENTS_OF_UPLOADER: Sql = Sql::same(concat!(
    "SELECT ",
    attachment_columns!(),
    " FROM attachments WHERE uploader_id = $1 AND attachment_id COLLATE \"C\" > $2 \
     ORDER BY attachment_id COLLATE \"C\" LIMIT $3"
));

/// The id below every message id: the first page's cursor.
const BEFORE_ALL_IDS: &str = "00000000-0000-0000-0000-000000000000";

/// One membership of the exported user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportMembership {
    pub channel_id: ChannelId,
    pub role: Role,
    /// When they joined, ms since the Unix epoch.
    pub joined_at: i64,
}

/// One reaction the exported user holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportReaction {
    pub channel_id: ChannelId,
    pub message_id: uuid::Uuid,
    pub emoji: String,
}

/// One item of an export, in the order they come: every message, then
/// every membership, every reaction, every upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportItem {
    /// A message the user sent, render-ready (`view::recv_read`).
    Message(Box<Entry>),
    Membership(ExportMembership),
    Reaction(ExportReaction),
    /// An upload of the user's (sent with a message or not yet).
    Attachment(Box<AttachmentRow>),
}

/// A page of an export (at most [`EXPORT_PAGE`] items).
pub type ExportPage = Vec<ExportItem>;

impl Store {
    /// Reads user `user`'s data from one snapshot and sends it to `out`, a
    /// page at a time (at most [`EXPORT_PAGE`] items each): messages, then
    /// memberships, reactions, uploads. Each statement is bounded by the
    /// store's timeout; the whole export is not (it runs as fast as `out` is
    /// drained). `Ok` when everything was sent, or when `out` was closed
    /// (the reader left: the snapshot is dropped). An unknown user sends
    /// nothing.
    ///
    /// # Errors
    /// The database's error that stopped it, after the pages sent before.
    pub async fn export_user(&self, user: &UserId, out: mpsc::Sender<ExportPage>) -> Result<(), StoreError> {
        let timeout = self.timeout();
        dispatch!(self.export_user(user, timeout, &out))
    }
}

/// Sends `page` to `out`; `false` when the reader has gone.
async fn send(out: &mpsc::Sender<ExportPage>, page: ExportPage) -> bool {
    out.send(page).await.is_ok()
}

/// `call` within `timeout`, else [`StoreError::TimedOut`].
async fn bounded<T>(
    timeout: Duration,
    call: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(timeout, call)
        .await
        .unwrap_or(Err(StoreError::TimedOut))
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn export_user(
        &self,
        user: &UserId,
        timeout: Duration,
        out: &mpsc::Sender<ExportPage>,
    ) -> Result<(), StoreError> {
        let mut tx = bounded(timeout, self.begin_snapshot()).await?;
        let limit = i64::from(EXPORT_PAGE);

        // Messages, render-ready, with `me` in reactions for the user.
        let mut after = BEFORE_ALL_IDS.to_owned();
        loop {
            let page = bounded(timeout, async {
                let rows = sqlx::query::<D>(D::sql(&MESSAGES_OF_SENDER))
                    .param(user.as_str())
                    .param(after.clone())
                    .param(limit)
                    .fetch_all(tx.ex())
                    .await?;
                let mut entries = rows.iter().map(entry_from_row).collect::<Result<Vec<_>, _>>()?;
                Self::attach_previews(&mut tx, &mut entries).await?;
                Self::attach_attachments(&mut tx, &mut entries).await?;
                // An export is the user's own data: every reaction, past
                // `max_reactions_per_message` too.
                let reading = Reading {
                    reader: Some(user),
                    most_reactions: usize::MAX,
                };
                Self::attach_reactions(&mut tx, &mut entries, reading).await?;
                Ok(entries)
            })
            .await?;
            let full = page.len() == EXPORT_PAGE as usize;
            let Some(last) = page.last() else { break };
            after = id_text(last.message_id);
            if !send(
                out,
                page.into_iter().map(|e| ExportItem::Message(Box::new(e))).collect(),
            )
            .await
            {
                return Ok(());
            }
            if !full {
                break;
            }
        }

        // Memberships.
        let mut after = String::new();
        loop {
            let rows = bounded(timeout, async {
                Ok(sqlx::query::<D>(D::sql(&MEMBERSHIPS_OF_USER))
                    .param(user.as_str())
                    .param(after.clone())
                    .param(limit)
                    .fetch_all(tx.ex())
                    .await?)
            })
            .await?;
            let page = rows
                .iter()
                .map(|row| {
                    Ok(ExportItem::Membership(ExportMembership {
                        channel_id: ChannelId::from_trusted(row.value(0)?),
                        role: parse_role(row.value(1)?)?,
                        joined_at: row.value(2)?,
                    }))
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let full = page.len() == EXPORT_PAGE as usize;
            let Some(ExportItem::Membership(last)) = page.last() else {
                break;
            };
            after = last.channel_id.as_str().to_owned();
            if !send(out, page).await {
                return Ok(());
            }
            if !full {
                break;
            }
        }

        // Reactions the user holds.
        let (mut after_id, mut after_emoji) = (BEFORE_ALL_IDS.to_owned(), String::new());
        loop {
            let rows = bounded(timeout, async {
                Ok(sqlx::query::<D>(D::sql(&REACTIONS_OF_USER))
                    .param(user.as_str())
                    .param(after_id.clone())
                    .param(after_emoji.clone())
                    .param(limit)
                    .fetch_all(tx.ex())
                    .await?)
            })
            .await?;
            let page = rows
                .iter()
                .map(|row| {
                    Ok(ExportItem::Reaction(ExportReaction {
                        message_id: parse_uuid(row.value(0)?)?,
                        channel_id: ChannelId::from_trusted(row.value(1)?),
                        emoji: row.value(2)?,
                    }))
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let full = page.len() == EXPORT_PAGE as usize;
            let Some(ExportItem::Reaction(last)) = page.last() else {
                break;
            };
            after_id = id_text(last.message_id);
            after_emoji = last.emoji.clone();
            if !send(out, page).await {
                return Ok(());
            }
            if !full {
                break;
            }
        }

        // Uploads.
        let mut after = String::new();
        loop {
            let rows = bounded(timeout, async {
                Ok(sqlx::query::<D>(D::sql(&ATTACHMENTS_OF_UPLOADER))
                    .param(user.as_str())
                    .param(after.clone())
                    .param(limit)
                    .fetch_all(tx.ex())
                    .await?)
            })
            .await?;
            let page = rows
                .iter()
                .map(|row| Ok(ExportItem::Attachment(Box::new(attachment_from_row(row)?))))
                .collect::<Result<Vec<_>, StoreError>>()?;
            let full = page.len() == EXPORT_PAGE as usize;
            let Some(ExportItem::Attachment(last)) = page.last() else {
                break;
            };
            after = last.attachment_id.hyphenated().to_string();
            if !send(out, page).await {
                return Ok(());
            }
            if !full {
                break;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}
