//! The one place that answers a send (`MSG_SEND`): its `MSG_ACK` or its
//! `ERROR`, queued to the sending session, and the `chatd_sends_total`
//! metric. Both the commit path ([`crate::commit`]), which answers every send
//! it stored or refused, and the command layer, which answers the sends
//! refused before they reach it, answer through here.

use std::time::Instant;

use crate::outbound::SessionHandle;
use crate::protocol::{ErrorCode, ErrorFrame, ServerFrame};
use crate::store::StoredMessage;
use crate::telemetry;
use crate::view;

/// An ERROR about a send: `code` and `message`, echoing the send's
/// `clientMsgId` and `channelId` when known (and valid).
pub fn send_error(code: ErrorCode, message: &str, client_msg_id: Option<&str>, channel_id: Option<&str>) -> ErrorFrame {
    let mut frame = ErrorFrame::new(code, message);
    frame.client_msg_id = client_msg_id.map(str::to_owned);
    frame.channel_id = channel_id.map(str::to_owned);
    frame
}

/// Answers a send with the MSG_ACK of `message` (`duplicate` for a retry of
/// a stored one); `received` (when the frame was read) gives the
/// send-to-ACK latency.
pub fn acked(session: &SessionHandle, message: &StoredMessage, duplicate: bool, received: Option<Instant>) {
    session.send(&ServerFrame::MsgAck(view::ack(message, duplicate)));
    let result = if duplicate { "duplicate" } else { "stored" };
    telemetry::send_result(result, "", received.map(|r| r.elapsed()));
}

/// Answers a send with `frame`, its refusal.
pub fn refused(session: &SessionHandle, frame: ErrorFrame) {
    telemetry::send_result("refused", frame.code.as_str(), None);
    session.send(&ServerFrame::Error(frame));
}
