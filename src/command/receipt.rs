//! `MSG_DELIVERED` / `MSG_READ`: moves the user's watermark in the message's
//! channel (the channel comes from the stored message, never from the
//! client) and sends the RECEIPT when it moved (`docs/protocol.md` §6.6).

use axum::extract::ws::Utf8Bytes;

use super::Context;
use crate::ids::now_ms;
use crate::outbound::ReceiptFrame;
use crate::permissions::{self, Action, Actor};
use crate::protocol::{ErrorCode, ErrorFrame, ReceiptKind, ServerFrame};
use crate::view;

/// Moves the delivered (`read == false`) or read watermark up to
/// `message_id` and sends the RECEIPT when it moved.
///
/// # Errors
/// The ERROR to answer, with `messageId`: `not_found` for an unknown
/// message, `forbidden` for a non-member of its channel, or the store's
/// error (`unavailable`, `internal`).
pub async fn run(ctx: Context<'_>, message_id: uuid::Uuid, read: bool) -> Result<(), ErrorFrame> {
    let store = &ctx.state.store;
    let user_id = &ctx.user.user_id;
    let with_id = |mut frame: ErrorFrame| {
        frame.message_id = Some(message_id.to_string());
        frame
    };
    let message = store
        .message(message_id)
        .await
        .map_err(|e| with_id(view::store_error(&e)))?
        .ok_or_else(|| with_id(ErrorFrame::new(ErrorCode::NotFound, "unknown message")))?;
    let member = store
        .is_member(&message.channel_id, user_id)
        .await
        .map_err(|e| with_id(view::store_error(&e)))?;
    if permissions::may(Actor::user(member), Action::Receipt).is_err() {
        return Err(with_id(ErrorFrame::new(
            ErrorCode::Forbidden,
            "not a member of this message's channel",
        )));
    }
    // Held until the RECEIPT is queued, so moves of this watermark reach
    // the sessions in the order they committed.
    let _order = ctx.state.hub.receipt_order(&message.channel_id, user_id).await;
    let moved = store
        .advance_watermark(user_id, &message, read)
        .await
        .map_err(|e| with_id(view::store_error(&e)))?;
    if !moved {
        return Ok(());
    }
    let frame = ServerFrame::Receipt {
        channel_id: message.channel_id.as_str().to_owned(),
        user_id: user_id.as_str().to_owned(),
        kind: if read {
            ReceiptKind::Read
        } else {
            ReceiptKind::Delivered
        },
        message_id: message.message_id,
        seq: message.seq,
        ts: now_ms(),
    };
    let receipt = ReceiptFrame {
        key: (message.channel_id.clone(), user_id.clone(), read),
        seq: message.seq,
        text: Utf8Bytes::from(frame.encode()),
    };
    // The wire contract's recipients: "the sessions of that message's
    // sender" (every one of them, so when users mark their own message the
    // session that sent the receipt gets it too), while the sender is still
    // a member (one who left or was removed gets nothing more of the
    // channel, §13.3), and, for `read`, "the reader's other sessions".
    let delivery = &ctx.state.delivery;
    // The watermark moved: a failed read skips the sender's copy rather
    // than answer the reader with an error.
    let sender_is_member = message.sender_id == *user_id
        || store
            .is_member(&message.channel_id, &message.sender_id)
            .await
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "cannot read the sender's membership; its RECEIPT is skipped");
                false
            });
    if sender_is_member {
        delivery.receipt(&message.sender_id, &receipt, None);
    }
    if read && message.sender_id != *user_id {
        delivery.receipt(user_id, &receipt, Some(&ctx.session.id));
    }
    Ok(())
}
