//! How stored rows look on the wire: the one place that turns what the store
//! returns ([`StoredMessage`], [`ChannelPosition`], [`StoreError`]) into
//! frames (`MSG_ACK`, `MSG_RECV`, HELLO's channel entries, `ERROR`), cuts
//! pages to `max_page_bytes`, and maps store errors to wire codes
//! (`docs/protocol.md` §5). The store knows nothing of frames; the commands,
//! the HTTP routes and the cluster bridge all render through here.

use crate::ids::ChannelId;
use crate::protocol::{AckFrame, ChannelState, ErrorCode, ErrorFrame, RecvMessage, TaggedMessage};
use crate::store::{ChannelPosition, StoreError, StoredMessage};

/// The ERROR message of `idempotency_conflict`: the key was used for another
/// send (another channel or body).
pub const KEY_USED_FOR_ANOTHER_MESSAGE: &str = "this clientMsgId was already used for another message";

/// The MSG_ACK for `message`'s send (`duplicate` for a retry).
pub fn ack(message: &StoredMessage, duplicate: bool) -> AckFrame {
    AckFrame {
        client_msg_id: message.client_msg_id.as_str().to_owned(),
        message_id: message.message_id,
        channel_id: message.channel_id.as_str().to_owned(),
        seq: message.seq,
        ts: message.ts,
        duplicate,
    }
}

/// `message` as the MSG_RECV object clients see (fan-out, SYNC_BATCH, history).
pub fn recv(message: &StoredMessage) -> RecvMessage {
    RecvMessage {
        message_id: message.message_id,
        channel_id: message.channel_id.as_str().to_owned(),
        sender_id: message.sender_id.as_str().to_owned(),
        seq: message.seq,
        body: message.body.clone(),
        ts: message.ts,
        client_msg_id: message.client_msg_id.as_str().to_owned(),
    }
}

/// One channel's entry in HELLO.
pub fn channel_state(position: &ChannelPosition) -> ChannelState {
    ChannelState {
        channel_id: position.channel_id.as_str().to_owned(),
        last_seq: position.last_seq,
        delivered_seq: position.delivered_seq,
        read_seq: position.read_seq,
        name: position.name.clone(),
        metadata: metadata(position.metadata.as_deref()),
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
pub fn json_len_bound(message: &StoredMessage) -> usize {
    let escaped = |text: &str| -> usize {
        text.bytes()
            .map(|b| match b {
                0x00..=0x1f => 6,
                b'"' | b'\\' => 2,
                _ => 1,
            })
            .sum()
    };
    256 + escaped(&message.body)
        + escaped(message.channel_id.as_str())
        + escaped(message.sender_id.as_str())
        + escaped(message.client_msg_id.as_str())
}

/// How many of `messages`, from the first, fit in `budget` bytes of JSON
/// ([`json_len_bound`] each); always at least one (when there is one), so a
/// reader paging by seq makes progress. A SYNC_BATCH and a history page keep
/// this many and say `hasMore` (`max_page_bytes`).
pub fn page_len(messages: &[StoredMessage], budget: usize) -> usize {
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
/// history route): the messages that fit `budget` bytes of JSON
/// (`max_page_bytes`, [`page_len`]) as MSG_RECV objects, and `hasMore`, also
/// true when the page stopped early.
pub fn recv_page(messages: &[StoredMessage], has_more: bool, budget: usize) -> (Vec<TaggedMessage>, bool) {
    let fits = page_len(messages, budget);
    let page = messages[..fits]
        .iter()
        .map(|m| TaggedMessage::MsgRecv(recv(m)))
        .collect();
    (page, has_more || fits < messages.len())
}

/// The wire error code for a failed store call: `unavailable` when the
/// database could not be reached or did not answer in time and nothing was
/// stored, else `internal` (which makes no such promise:
/// [`StoreError::InDoubt`] is one). Both are retryable.
pub fn wire_code(error: &StoreError) -> ErrorCode {
    match error {
        StoreError::Unavailable(_) | StoreError::TimedOut => ErrorCode::Unavailable,
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

    fn message(body: &str) -> StoredMessage {
        StoredMessage {
            message_id: uuid::Uuid::now_v7(),
            channel_id: ChannelId::from_trusted("room-1".into()),
            sender_id: UserId::from_trusted("alice".into()),
            client_msg_id: ClientMsgId::from_trusted("5b0e6c4e-8f0a-4c52-9d1e-2a7b3c4d5e6f".into()),
            seq: i64::MAX,
            body: body.into(),
            ts: i64::MAX,
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
            let encoded = serde_json::to_string(&TaggedMessage::MsgRecv(recv(&m))).unwrap();
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
