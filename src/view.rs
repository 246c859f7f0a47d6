//! How stored rows look on the wire: the one place that turns what the store
//! returns ([`Entry`], [`ChannelPosition`], [`StoreError`]) into
//! frames (`MSG_ACK`, `MSG_RECV`, HELLO's channel entries, `ERROR`), cuts
//! pages to `max_page_bytes`, and maps store errors to wire codes
//! (`docs/protocol.md` §5). The store knows nothing of frames; the commands,
//! the HTTP routes and the cluster bridge all render through here.

use crate::ids::ChannelId;
use crate::protocol::{
    AckFrame, ChannelState, EntryKind as WireKind, ErrorCode, ErrorFrame, ReactOp, ReactionCount, RecvMessage,
    ReplyPreview as WirePreview, TaggedMessage, ThreadSummary as WireThread,
};
use crate::store::{ChannelPosition, Entry, EntryKind, EntryOutcome, Reference, StoreError};

/// The ERROR message of `idempotency_conflict`: the key was used for another
/// send (another channel or body).
pub const KEY_USED_FOR_ANOTHER_MESSAGE: &str = "this clientMsgId was already used for another message";

/// The MSG_ACK for `message`'s send (`duplicate` for a retry).
pub fn ack(message: &Entry, duplicate: bool) -> AckFrame {
    AckFrame {
        client_msg_id: message.client_msg_id.as_str().to_owned(),
        message_id: message.message_id,
        channel_id: message.channel_id.as_str().to_owned(),
        seq: message.seq,
        ts: message.ts,
        duplicate,
    }
}

/// The wire kind of a stored entry.
pub fn kind(kind: EntryKind) -> WireKind {
    match kind {
        EntryKind::Message => WireKind::Message,
        EntryKind::Edit => WireKind::Edit,
        EntryKind::Delete => WireKind::Delete,
        EntryKind::Reaction => WireKind::Reaction,
    }
}

/// `entry` as the MSG_RECV object of its fan-out: the entry as stored, with
/// `kind` and, for edits, deletes and reactions, `targetId` (and `emoji`,
/// `op`), `byAdmin` when made with the admin token, and no `clientMsgId`
/// when made through an HTTP route. A message's `body` is its text as sent (`""` once deleted), an
/// edit's its new text, a delete's and a reaction's `""`.
pub fn recv(entry: &Entry) -> RecvMessage {
    RecvMessage {
        message_id: entry.message_id,
        channel_id: entry.channel_id.as_str().to_owned(),
        sender_id: entry.sender_id.as_str().to_owned(),
        seq: entry.seq,
        body: entry.body.clone(),
        ts: entry.ts,
        // §12's common rules of version 1.2: no key on an entry made
        // through an HTTP route, `byAdmin` on one made with the admin token.
        client_msg_id: (!entry.via_http).then(|| entry.client_msg_id.as_str().to_owned()),
        by_admin: entry.by_admin,
        kind: kind(entry.kind),
        target_id: entry.target_id,
        emoji: entry.emoji.clone(),
        op: entry.add.map(|add| if add { ReactOp::Add } else { ReactOp::Remove }),
        noop: entry.noop,
        edited_at: None,
        deleted: false,
        expired: false,
        reactions: None,
        reply_to: entry.reply_to,
        reply_preview: entry.reply_preview.as_ref().map(|p| WirePreview {
            sender_id: p.sender_id.as_str().to_owned(),
            body: p.body.clone(),
            deleted: p.deleted,
        }),
        thread_id: entry.thread_id,
        thread: None,
        mentions: entry.mentions.iter().map(|u| u.as_str().to_owned()).collect(),
        mention_all: entry.mention_all,
        attachments: attachments(entry),
    }
}

/// A message's attachments as it carries them (§15), with URLs signed now;
/// none once deleted.
fn attachments(entry: &Entry) -> Vec<crate::protocol::AttachmentObject> {
    if entry.deleted || entry.attachments.is_empty() {
        return Vec::new();
    }
    let now = crate::attachments::signing::now_secs();
    entry
        .attachments
        .iter()
        .map(|row| crate::attachments::object(row, now))
        .collect()
}

/// `entry` as reads return it (SYNC_BATCH, history; §8): a `message` entry
/// with its state at the time of the read (current `body`, `editedAt`,
/// `deleted`, `reactions`, always present; a root's `thread` summary,
/// §14; `expired` once the retention sweep erased it, §19); other kinds as
/// in [`recv`].
pub fn recv_read(entry: &Entry) -> RecvMessage {
    let mut out = recv(entry);
    if entry.kind == EntryKind::Message {
        out.body = entry.current_body().to_owned();
        out.deleted = entry.deleted;
        // §19: erased by the retention sweep, with no delete entry.
        out.expired = entry.deleted && entry.expired;
        out.edited_at = entry.edited_at.filter(|_| !entry.deleted);
        out.reactions = Some(
            entry
                .reactions
                .iter()
                .map(|r| ReactionCount {
                    emoji: r.emoji.clone(),
                    count: r.count,
                    me: r.me,
                })
                .collect(),
        );
        out.thread = entry.thread.as_ref().map(|t| WireThread {
            reply_count: t.reply_count,
            last_reply_at: t.last_reply_at,
            last_reply_seq: t.last_reply_seq,
            participants: t.participants.iter().map(|u| u.as_str().to_owned()).collect(),
        });
    }
    out
}

/// One channel's entry in HELLO.
pub fn channel_state(position: &ChannelPosition) -> ChannelState {
    ChannelState {
        channel_id: position.channel_id.as_str().to_owned(),
        last_seq: position.last_seq,
        delivered_seq: position.delivered_seq,
        read_seq: position.read_seq,
        unread: position.unread,
        name: position.name.clone(),
        metadata: metadata(position.metadata.as_deref()),
        kind: position.kind,
        visibility: position.visibility,
        member_count: position.member_count,
        role: position.role,
        unread_mentions: position.unread_mentions,
        notify: position.notify,
        snooze_until: position.snooze_until,
        posting_role: position.posting_role,
        slow_mode_ms: position.slow_mode_ms,
        retention_secs: position.retention_secs,
    }
}

/// Stored channel metadata (the serialized text of a JSON object) as JSON;
/// `None` when unset (or, never expected, when the stored text is not JSON).
pub fn metadata(stored: Option<&str>) -> Option<serde_json::Value> {
    stored.and_then(|text| serde_json::from_str(text).ok())
}

/// An upper bound of `message`'s size as a MSG_RECV object in JSON, bytes:
/// every byte of its text fields as escaped at worst (`\u00XX`, 6 bytes, for
/// a control character; 2 for `"` and `\`; 1 otherwise) plus room for the
/// field names, the UUID and the numbers.
pub fn json_len_bound(message: &Entry) -> usize {
    let escaped = |text: &str| -> usize {
        text.bytes()
            .map(|b| match b {
                0x00..=0x1f => 6,
                b'"' | b'\\' => 2,
                _ => 1,
            })
            .sum()
    };
    let reactions: usize = message.reactions.iter().map(|r| 64 + escaped(&r.emoji)).sum();
    // §14: two ids, the preview (its sender and text) and the thread
    // summary (four numbers, the participants).
    let preview = message
        .reply_preview
        .as_ref()
        .map_or(0, |p| 96 + escaped(p.sender_id.as_str()) + escaped(&p.body));
    let thread = message.thread.as_ref().map_or(0, |t| {
        160 + t.participants.iter().map(|u| 3 + escaped(u.as_str())).sum::<usize>()
    });
    // §16: the mentioned users and `"mentionAll":true`.
    let mentions = 40 + message.mentions.iter().map(|u| 3 + escaped(u.as_str())).sum::<usize>();
    // `"byAdmin":true` fits the fixed room.
    // §15: each attachment's fields and two signed URLs.
    let attachments: usize = message
        .attachments
        .iter()
        .map(|a| 640 + escaped(&a.content_type) + a.filename.as_deref().map_or(0, escaped))
        .sum();
    384 + 128
        + preview
        + thread
        + mentions
        + attachments
        + escaped(&message.body)
        + message.edited_body.as_deref().map_or(0, escaped)
        + message.emoji.as_deref().map_or(0, escaped)
        + reactions
        + escaped(message.channel_id.as_str())
        + escaped(message.sender_id.as_str())
        + escaped(message.client_msg_id.as_str())
}

/// How many of `messages`, from the first, fit in `budget` bytes of JSON
/// ([`json_len_bound`] each); always at least one (when there is one), so a
/// reader paging by seq makes progress. A SYNC_BATCH and a history page keep
/// this many and say `hasMore` (`max_page_bytes`).
pub fn page_len(messages: &[Entry], budget: usize) -> usize {
    fitting(messages.iter(), budget)
}

/// How many of `messages`, in the order given, fit in `budget` bytes of
/// JSON ([`json_len_bound`] each); at least one when there is one. A page
/// back from a seq counts from its newest entry.
pub fn fitting<'a>(messages: impl Iterator<Item = &'a Entry>, budget: usize) -> usize {
    let mut used = 0usize;
    let mut fits = 0;
    for message in messages {
        used = used.saturating_add(json_len_bound(message));
        if fits > 0 && used > budget {
            break;
        }
        fits += 1;
    }
    fits
}

/// A page read with `has_more`, as clients get it (SYNC_BATCH and the
/// history route): the entries, in their read state ([`recv_read`]), that fit `budget` bytes of JSON
/// (`max_page_bytes`, [`page_len`]) as MSG_RECV objects, and `hasMore`, also
/// true when the page stopped early.
pub fn recv_page(messages: &[Entry], has_more: bool, budget: usize) -> (Vec<TaggedMessage>, bool) {
    let fits = page_len(messages, budget);
    let page = messages[..fits]
        .iter()
        .map(|m| TaggedMessage::MsgRecv(recv_read(m)))
        .collect();
    (page, has_more || fits < messages.len())
}

/// The wire error code for a failed store call: `unavailable` when the
/// database could not be reached or did not answer in time and nothing was
/// stored, else `internal` (which makes no such promise:
/// [`StoreError::InDoubt`] is one). Both are retryable.
pub fn wire_code(error: &StoreError) -> ErrorCode {
    match error {
        StoreError::Unavailable(_) | StoreError::TimedOut | StoreError::Standby => ErrorCode::Unavailable,
        _ => ErrorCode::Internal,
    }
}

/// The ERROR for a failed store call; details go to the log, not the client.
pub fn store_error(error: &StoreError) -> ErrorFrame {
    let code = wire_code(error);
    if code == ErrorCode::Internal {
        tracing::error!(%error, cause = ?std::error::Error::source(error), "store call failed");
    }
    let message = match (code, error) {
        (ErrorCode::Unavailable, _) => "database unavailable; retry",
        (_, StoreError::InDoubt(_)) => "the database failed while committing; it may have been done; retry",
        _ => "internal error; retry",
    };
    ErrorFrame::new(code, message)
}

/// The refusal of a reply's reference or a thread read's root (§14):
/// `not_found` (`why` is `None`: unknown, deleted, not a message) or
/// `invalid_field` with `why`; both name the field.
pub fn reference_refused(reference: Reference, why: Option<&str>) -> ErrorFrame {
    let field = reference.field();
    let mut frame = match why {
        None => ErrorFrame::new(
            ErrorCode::NotFound,
            format!("{field} names an unknown or deleted message"),
        ),
        Some(why) => ErrorFrame::new(ErrorCode::InvalidField, format!("{field} {why}")),
    };
    frame.field = Some(field.to_owned());
    frame
}

/// The ERROR of a thread read refused by the store ([`crate::store::Store::thread_entries`]).
pub fn thread_refused(outcome: &EntryOutcome) -> ErrorFrame {
    match outcome {
        EntryOutcome::ReferenceInvalid(reference, why) => reference_refused(*reference, Some(why)),
        EntryOutcome::ReferenceNotFound(reference) => reference_refused(*reference, None),
        _ => reference_refused(Reference::ThreadId, None),
    }
}

/// `forbidden` about `channel_id`: an unknown channel or a non-member (the
/// two are not told apart, `docs/protocol.md` §5).
pub fn not_a_member(channel_id: &ChannelId) -> ErrorFrame {
    let mut frame = ErrorFrame::new(ErrorCode::Forbidden, "not a member of this channel");
    frame.channel_id = Some(channel_id.as_str().to_owned());
    frame
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ClientMsgId, UserId};

    fn message(body: &str) -> Entry {
        Entry {
            message_id: uuid::Uuid::now_v7(),
            channel_id: ChannelId::from_trusted("room-1".into()),
            sender_id: UserId::from_trusted("alice".into()),
            client_msg_id: ClientMsgId::from_trusted("5b0e6c4e-8f0a-4c52-9d1e-2a7b3c4d5e6f".into()),
            by_admin: true,
            via_http: false,
            seq: i64::MAX,
            body: body.into(),
            ts: i64::MAX,
            kind: EntryKind::Message,
            target_id: None,
            emoji: None,
            add: None,
            edited_body: None,
            edited_at: Some(i64::MAX),
            deleted: false,
            expired: false,
            noop: true,
            reactions: vec![crate::store::ReactionState {
                emoji: "👍🏽".repeat(8),
                count: i64::MAX,
                me: true,
            }],
            reply_to: Some(uuid::Uuid::now_v7()),
            thread_id: Some(uuid::Uuid::now_v7()),
            reply_preview: Some(Box::new(crate::store::ReplyPreview {
                sender_id: UserId::from_trusted("\u{1}".repeat(128)),
                body: "\u{1}".repeat(200),
                deleted: true,
            })),
            thread: Some(Box::new(crate::store::ThreadSummary {
                reply_count: i64::MAX,
                last_reply_at: i64::MAX,
                last_reply_seq: i64::MAX,
                participants: vec![UserId::from_trusted("\"".repeat(128)); 10],
            })),
            mentions: vec![UserId::from_trusted("\"".repeat(128)); 50],
            mention_all: true,
            mentions_asked: None,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn the_json_bound_is_never_below_the_encoding() {
        for body in [
            String::new(),
            "hello".into(),
            "\"\\".repeat(1000),
            "\u{1}\n\t\u{1f}".repeat(1000),
            "é漢字🙂".repeat(500),
            "x".repeat(16_384),
        ] {
            let m = message(&body);
            let encoded = serde_json::to_string(&TaggedMessage::MsgRecv(recv_read(&m))).unwrap();
            assert!(
                encoded.len() <= json_len_bound(&m),
                "{} > {}",
                encoded.len(),
                json_len_bound(&m)
            );
        }
    }

    #[test]
    fn a_page_stops_at_its_budget_but_holds_one_message() {
        let big = message(&"x".repeat(10_000));
        let each = json_len_bound(&big);
        let page = vec![big; 10];
        assert_eq!(page_len(&page, each * 3), 3);
        assert_eq!(page_len(&page, each * 3 - 1), 2);
        assert_eq!(page_len(&page, 1), 1);
        assert_eq!(page_len(&page, usize::MAX), 10);
        assert_eq!(page_len(&[], 1), 0);
    }
}
