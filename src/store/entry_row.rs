//! An entry as a row of `messages`: the column list every statement that
//! reads entries selects ([`message_columns!`]), and its decoding.

use super::dialect::Columns;
use super::entry_types::{Entry, EntryKind, ThreadSummary};
use super::error::StoreError;
use crate::ids::{ChannelId, ClientMsgId, UserId};

/// Columns of an entry row, in the order [`entry_from_row`] reads them.
/// `$id` and `$target` are the `message_id` and `target_id` columns as
/// text (`message_id::text` on PostgreSQL, where they are `uuid`; the casts
/// of `reply_to` and `thread_id` go where [`super::dialect::Sql::same`]
/// drops them on SQLite). Columns 15 to 20 are the references and the
/// thread summary of §14, 21 to 23 the mentions of §16, 24 and 25 how
/// the entry was made (§12's common rules of version 1.2), 26 whether the
/// retention sweep erased it (§19).
macro_rules! message_columns {
    ($id:literal, $target:literal) => {
        concat!(
            $id,
            " AS message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, ",
            $target,
            " AS target_id, emoji, op, edited_body, edited_at, deleted, noop, ",
            "reply_to::text AS reply_to, thread_id::text AS thread_id, ",
            "reply_count, last_reply_at, last_reply_seq, participants, ",
            "mentions, mention_all, mentions_asked, by_admin, via_http, expired"
        )
    };
}
pub(super) use message_columns;

/// How many columns [`message_columns!`] selects: a statement that selects
/// more after them reads the first of those at this index.
pub(super) const ENTRY_COLUMNS: usize = 27;

/// `SELECT <entry columns> FROM messages <rest>`, on both databases
/// ([`super::dialect::Sql::same`]: SQLite's text drops the casts).
macro_rules! select_entries {
    ($rest:literal) => {
        $crate::store::dialect::Sql::same(concat!(
            "SELECT ",
            $crate::store::entry_row::message_columns!("message_id::text", "target_id::text"),
            " FROM messages ",
            $rest
        ))
    };
}
pub(super) use select_entries;

/// Decodes a row selected with the [`message_columns!`] column list.
pub(super) fn entry_from_row<R: Columns>(row: &R) -> Result<Entry, StoreError> {
    let message_id = parse_uuid(row.value(0)?)?;
    let kind: String = row.value(7)?;
    let target: Option<String> = row.value(8)?;
    let op: Option<String> = row.value(10)?;
    let reply_to: Option<String> = row.value(15)?;
    let thread_id: Option<String> = row.value(16)?;
    let last_reply_at: Option<i64> = row.value(18)?;
    let last_reply_seq: Option<i64> = row.value(19)?;
    let thread = match (last_reply_at, last_reply_seq) {
        (Some(last_reply_at), Some(last_reply_seq)) => Some(Box::new(ThreadSummary {
            reply_count: row.value(17)?,
            last_reply_at,
            last_reply_seq,
            participants: parse_participants(row.value(20)?)?,
        })),
        _ => None,
    };
    Ok(Entry {
        message_id,
        channel_id: ChannelId::from_trusted(row.value(1)?),
        seq: row.value(2)?,
        sender_id: UserId::from_trusted(row.value(3)?),
        client_msg_id: ClientMsgId::from_trusted(row.value(4)?),
        body: row.value(5)?,
        ts: row.value(6)?,
        kind: EntryKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("kind {kind}")))?,
        target_id: target.map(parse_uuid).transpose()?,
        emoji: row.value(9)?,
        add: op.map(|op| op == "add"),
        edited_body: row.value(11)?,
        edited_at: row.value(12)?,
        deleted: row.value(13)?,
        noop: row.value(14)?,
        reactions: Vec::new(),
        reply_to: reply_to.map(parse_uuid).transpose()?,
        thread_id: thread_id.map(parse_uuid).transpose()?,
        reply_preview: None,
        thread,
        mentions: parse_participants(row.value(21)?)?,
        mention_all: row.value(22)?,
        mentions_asked: row.value(23)?,
        by_admin: row.value(24)?,
        via_http: row.value(25)?,
        expired: row.value(26)?,
        attachments: Vec::new(),
    })
}

/// The `participants` (or `mentions`) column (a JSON array of user ids; `NULL`: none).
fn parse_participants(text: Option<String>) -> Result<Vec<UserId>, StoreError> {
    let Some(text) = text else { return Ok(Vec::new()) };
    let ids: Vec<String> =
        serde_json::from_str(&text).map_err(|_| StoreError::Corrupt(format!("participants {text}")))?;
    Ok(ids.into_iter().map(UserId::from_trusted).collect())
}

/// The `participants` column's text for `participants`.
pub(super) fn participants_text(participants: &[UserId]) -> Result<String, StoreError> {
    let ids: Vec<&str> = participants.iter().map(UserId::as_str).collect();
    serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The `mentions` column's text for `mentions`: `None` when empty.
pub(super) fn mentions_text(mentions: &[UserId]) -> Result<Option<String>, StoreError> {
    if mentions.is_empty() {
        return Ok(None);
    }
    participants_text(mentions).map(Some)
}

/// A message id read as text.
pub(super) fn parse_uuid(id: String) -> Result<uuid::Uuid, StoreError> {
    uuid::Uuid::try_parse(&id).map_err(|_| StoreError::Corrupt(format!("message id {id}")))
}

/// A message id as the text a statement binds (cast to `uuid` on PostgreSQL).
pub(super) fn id_text(id: uuid::Uuid) -> String {
    id.hyphenated().to_string()
}

/// The `op` column's text.
pub(super) fn op_text(add: bool) -> &'static str {
    if add {
        "add"
    } else {
        "remove"
    }
}

/// User ids in byte order, the order `binary_search` on [`UserId`] needs.
/// The database's `ORDER BY` is not enough: under a collation such as ICU's
/// `en-US`, `alice` sorts before `Bob`, and a member would be refused.
pub(super) fn sorted_members(members: Vec<String>) -> Vec<UserId> {
    let mut members: Vec<UserId> = members.into_iter().map(UserId::from_trusted).collect();
    members.sort_unstable();
    members
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_columns_counts_the_column_list() {
        assert_eq!(message_columns!("id", "target").split(',').count(), ENTRY_COLUMNS);
    }
}
