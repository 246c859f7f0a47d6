//! What a stored entry does to its target, in the per-row path's
//! transaction: an edit sets the current text, a delete erases the message
//! (also for the retention sweep), a reaction moves the holders and counts,
//! a thread reply moves its root's summary (§14).

use super::super::batch_types::{Change, NewEntry};
use super::super::dialect::{Affected, Dialect, Executes, Params, Sql};
use super::super::entry_row::{id_text, participants_text};
use super::super::entry_rules::{self, TargetState};
use super::super::entry_types::Entry;
use super::super::error::StoreError;
use super::super::search_separators::GoneTexts;
use super::super::sql_store::SqlStore;

/// A reply at seq `$3`, ts `$2` joined the thread of root `$1`; `$4`: the
/// root's new `participants` (`NULL`: unchanged).
static THREAD_REPLIED: Sql = Sql::same(
    "UPDATE messages SET reply_count = reply_count + 1, last_reply_at = $2, last_reply_seq = $3, \
         participants = COALESCE($4, participants) WHERE message_id = $1::uuid",
);
/// A reply in the thread of root `$1` was deleted.
pub(in crate::store) static THREAD_REPLY_DELETED: Sql =
    Sql::same("UPDATE messages SET reply_count = reply_count - 1 WHERE message_id = $1::uuid");
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

/// What the per-row path read for one entry's rules, in its transaction:
/// its target's state, and the states of the messages its references name.
#[derive(Default)]
pub(super) struct Read {
    pub(super) target: Option<TargetState>,
    pub(super) reply_to: Option<TargetState>,
    pub(super) thread: Option<TargetState>,
}

impl<D: Dialect> SqlStore<D> {
    /// Erases message `id`'s content as a delete does (§8, guarantee 9):
    /// its attachments (§15: rows deleted, objects queued for removal after
    /// the commit, at `now` ms), its `mentions` rows, its text, the text of
    /// its edits and its reactions. The row keeps its channel and seq. A
    /// `Change::Delete` and the retention sweep both erase through it.
    /// The text it takes out of the search index is noted in `gone`, for
    /// [`Dialect::repair_search_separators`] before the commit.
    pub(in crate::store) async fn erase_message_content_in(
        tx: &mut D::Connection,
        id: &str,
        now: i64,
        gone: &mut GoneTexts,
    ) -> Result<(), StoreError> {
        gone.note_message_in::<D>(tx, id).await?;
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

    /// Applies a stored entry to its target's state, in the same
    /// transaction: an edit sets the current text, a delete erases
    /// the text of the message and of all its edits and drops its
    /// reactions (and, for a thread reply, takes one off its root's
    /// `reply_count`), a reaction moves the holders and counts (a no-op
    /// `add` of a held one or `remove` of one not held changes nothing), a
    /// thread reply moves its root's summary (§14). `read`: the states the
    /// rules were given. The text an edit or a delete takes out of the
    /// search index is noted in `gone`. Returns whether it changed anything.
    pub(super) async fn apply(
        tx: &mut sqlx::Transaction<'static, D>,
        send: &NewEntry,
        entry: &Entry,
        read: &Read,
        gone: &mut GoneTexts,
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
                let id = id_text(*target);
                gone.note_message_in::<D>(tx, &id).await?;
                sqlx::query::<D>(D::sql(&APPLY_EDIT))
                    .param(id)
                    .param(&send.body)
                    .param(entry.ts)
                    .execute(tx.ex())
                    .await?;
            }
            Change::Delete { target } => {
                let id = id_text(*target);
                Self::erase_message_content_in(tx, &id, entry.ts, gone).await?;
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
