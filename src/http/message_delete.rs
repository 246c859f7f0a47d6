//! A moderator's delete without a frame (protocol.md §17):
//! `DELETE /v1/channels/{channelId}/messages/{messageId}`, stored as a
//! `delete` entry through group commit like `MSG_DELETE`, so the text is
//! erased in the same transaction (guarantee 9) and the entry is ordered,
//! ACKed and fanned out like any other.

use std::time::Instant;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use tokio::sync::oneshot;

use super::caller::{actor_in, caller};
use super::channels::channel_id;
use super::error::ApiError;
use super::extract::ApiPath;
use super::openapi::ErrorBody;
use crate::commit::answer::SendAnswer;
use crate::commit::{ReplyTo, SendJob};
use crate::ids::ClientMsgId;
use crate::permissions::{self, Action, Actor};
use crate::protocol::ErrorCode;
use crate::state::AppState;
use crate::store::{Change, EntryKind, NewEntry, Origin};

/// `DELETE /v1/channels/{channelId}/messages/{messageId}` (an owner or
/// moderator of the channel, or admin): deletes the message as
/// `MSG_DELETE` does: 204; 404 when the message is unknown, not a message
/// entry, already deleted or of another channel. A moderator's delete
/// entry has the moderator as `senderId`; the admin token's has the
/// message's own sender, who need not be a member any more, and
/// `byAdmin`. The entry carries no `clientMsgId` on the wire; it is stored
/// with a key the server makes (`http-` and a UUIDv7), unique to the call.
#[utoipa::path(
    delete,
    path = "/v1/channels/{channelId}/messages/{messageId}",
    tag = "moderation",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("messageId" = String, Path, description = "The message's id (a UUIDv7)"),
    ),
    responses(
        (status = 204, description = "Deleted: its text is gone from every table"),
        (status = 400, description = "A bad channel id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a moderator, or an unknown channel (user token)", body = ErrorBody),
        (status = 404, description = "Unknown or already deleted message", body = ErrorBody),
        (status = 503, description = "Database unavailable, or shutting down", body = ErrorBody),
    ),
    security(("adminToken" = []), ("userJwt" = [])),
)]
pub async fn delete_message(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
) -> Result<StatusCode, ApiError> {
    caller(&state, &headers)?;
    let ApiPath((raw_channel, raw_message)) = path?;
    let channel = channel_id(&raw_channel)?;
    let (actor, by) = actor_in(&state, &headers, &channel).await?;
    permissions::may(actor, Action::DeleteAnyMessage).map_err(ApiError::from)?;
    let unknown = || ApiError::not_found("unknown or deleted message");
    // An id that is not a UUID names no message.
    let target = crate::ids::parse_message_id(&raw_message).map_err(|_| unknown())?;
    let message = state
        .store
        .message(target)
        .await?
        .filter(|m| m.kind == EntryKind::Message && !m.deleted && m.channel_id == channel)
        .ok_or_else(unknown)?;
    let (sender, origin) = match (actor, by) {
        (Actor::User(_), Some(user)) => (user, Origin::UserRoute),
        _ => (message.sender_id.clone(), Origin::Admin),
    };
    let key = ClientMsgId::parse(&format!("http-{}", uuid::Uuid::now_v7()))
        .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "key"))?;
    let (reply_to, answered) = oneshot::channel();
    let job = SendJob {
        message: NewEntry {
            sender_id: sender,
            channel_id: channel.clone(),
            client_msg_id: key,
            body: String::new(),
            change: Change::Delete { target },
            mentions: Default::default(),
            origin,
            attachments: Vec::new(),
        },
        reply_to: ReplyTo::Caller(reply_to),
        received: Instant::now(),
    };
    if state.commits.submit(job).await.is_err() {
        return Err(ApiError::unavailable("server is shutting down; retry"));
    }
    // Judged again in the commit path, under the channel's lock: a delete
    // that committed meanwhile makes this one 404, a demotion 403.
    match answered.await {
        Ok(SendAnswer::Acked { .. }) => {
            tracing::info!(channel_id = %channel, message_id = %target, "message deleted by a moderator");
            Ok(StatusCode::NO_CONTENT)
        }
        Ok(SendAnswer::Refused(frame)) => Err(match frame.code {
            ErrorCode::NotFound | ErrorCode::InvalidField => unknown(),
            ErrorCode::Forbidden => ApiError::forbidden(&frame.message),
            _ => super::messages::send_refused(&frame),
        }),
        Err(_) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the delete was not answered; retry",
        )),
    }
}
