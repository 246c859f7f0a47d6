//! The message routes of a channel: its history, and the backend's post
//! through group commit (`/v1/channels/{channelId}/messages`).

use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use tokio::sync::oneshot;

use super::body::{parse_json, read_body};
use super::caller::{caller_from_header_or_query, channel_reader, require_admin};
use super::channels::channel_id;
use super::error::ApiError;
use super::extract::{ApiPath, ApiQuery, QueryParams};
use super::openapi::{ErrorBody, HistoryPage, HistoryQuery, MessageAck, PostMessageBody};
use crate::command::sync::{cut_page, read_page};
use crate::commit::answer::{self, SendAnswer};
use crate::commit::{ReplyTo, SendJob};
use crate::ids::{ChannelId, ClientMsgId, UserId};
use crate::protocol::{
    attachments_key_of, check_limit, mentions_key_of, ClientFrame, Command, ErrorCode, ErrorFrame, FrameError, Page,
    ServerFrame,
};
use crate::state::AppState;
use crate::store::{Mentions, References};
use crate::view;

/// `GET /v1/channels/{channelId}/messages?afterSeq=N&limit=M` (member or
/// admin), or paging back with `beforeSeq=N` (exclusive; `afterSeq` is then
/// ignored) or `latest=true` (the newest `limit`), returned in increasing
/// `seq` with `hasMore` saying whether older ones exist: 200 `{"messages",
/// "hasMore"}`; 403 for a non-member or unknown
/// channel (user), 404 for an unknown channel (admin).
#[utoipa::path(
    get,
    path = "/v1/channels/{channelId}/messages",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id"), HistoryQuery),
    responses(
        (status = 200, description = "A page of messages in increasing seq", body = HistoryPage),
        (status = 400, description = "A bad channel id, afterSeq or limit", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a member, or an unknown channel (user token)", body = ErrorBody),
        (status = 404, description = "Unknown channel (admin token)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = []), ("accessToken" = []), ("adminToken" = [])),
)]
pub async fn history(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let query = QueryParams::new(query);
    let who = caller_from_header_or_query(&state, &headers, &query)?;
    let ApiPath(raw) = path?;
    let id = channel_id(&raw)?;
    let param = |name: &'static str| query.field(name);
    let int = |name: &'static str, range: &'static str| -> Result<Option<i64>, ApiError> {
        param(name)?
            .map(|v| crate::number::integer_text(v).ok_or_else(|| ApiError::invalid_field(name, range)))
            .transpose()
    };
    let after_seq = int("afterSeq", "must be an integer between 0 and 2^53-1")?;
    let before_seq = int("beforeSeq", "must be an integer between 1 and 2^53-1")?;
    let latest = match param("latest")? {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(ApiError::invalid_field("latest", "must be true or false")),
    };
    let page = Page::from_fields(after_seq, before_seq, latest, false).map_err(|(field, reason)| match field {
        "afterSeq" => ApiError::invalid_field(field, "must be an integer between 0 and 2^53-1"),
        "beforeSeq" => ApiError::invalid_field(field, "must be an integer between 1 and 2^53-1"),
        _ => ApiError::invalid_field(field, reason),
    })?;
    let limit = match param("limit")? {
        None => None,
        Some(v) => Some(
            crate::number::integer_text(v)
                .ok_or_else(|| ApiError::invalid_field("limit", "must be an integer between 1 and 500"))?,
        ),
    };
    let limit = check_limit(limit).map_err(|reason| ApiError::invalid_field("limit", reason))?;
    let thread = param("threadId")?
        .map(|t| {
            crate::ids::parse_message_id(t)
                .map_err(|_| ApiError::invalid_field("threadId", "must be a lower-case hyphenated UUID"))
        })
        .transpose()?;
    let reader = channel_reader(&state, &who, &id).await?;
    if reader.is_none() && state.store.channel(&id).await?.is_none() {
        return Err(ApiError::not_found("unknown channel"));
    }
    // Render-ready (§8): each message with its current state; `me` is the
    // user's (never true for the admin). With `threadId`, that root's
    // replies only (§14).
    let read = match read_page(&state.store, &id, page, limit, reader, thread).await? {
        Ok(read) => read,
        Err(refused) => return Err(send_refused(&refused)),
    };
    // Like a SYNC_BATCH, a page stops early past `max_page_bytes`; the
    // caller asks again after its last seq (or before its first).
    let (messages, has_more) = cut_page(&read.entries, read.has_more, page, state.config.max_page_bytes);
    let mut answer = serde_json::json!({"messages": messages, "hasMore": has_more, "lastSeq": read.last_seq});
    if let Some(root) = thread {
        answer["threadId"] = serde_json::json!(root);
    }
    Ok(Json(answer).into_response())
}

/// Unknown fields are ignored, as in every frame and body of the API
/// (protocol.md: additions are additive), so a backend that sends a field
/// of a later version is not refused.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PostMessage {
    sender_id: String,
    client_msg_id: String,
    body: String,
    /// §14; any JSON value, so a wrong type is `invalid_field` naming it.
    #[serde(default)]
    reply_to: Option<serde_json::Value>,
    #[serde(default)]
    thread_id: Option<serde_json::Value>,
    /// §16: an array of user ids; any JSON value, as `replyTo`.
    #[serde(default)]
    mentions: Option<serde_json::Value>,
    /// §16: `true` to mention all (the sender must be a moderator).
    #[serde(default)]
    mention_all: Option<serde_json::Value>,
    /// §15: an array of the sender's `attachmentId`s; any JSON value, as `replyTo`.
    #[serde(default)]
    attachments: Option<serde_json::Value>,
}

/// The shape of the `POST /v1/channels/{channelId}/messages` body.
const POST_MESSAGE_SHAPE: &str = r#"{"senderId": string, "clientMsgId": string, "body": string, "replyTo"?: messageId, "threadId"?: messageId, "mentions"?: [userId], "mentionAll"?: boolean, "attachments"?: [attachmentId]}"#;

/// The `mentions` and `mentionAll` of the post as `MSG_SEND` reads them:
/// absent or `null` is none; `mentions` must be an array (its elements are
/// checked by `validate`), `mentionAll` true or false; any other value is
/// `invalid_field` naming the field.
fn mentions_fields(request: &PostMessage) -> Result<(Option<Vec<serde_json::Value>>, Option<bool>), ApiError> {
    let mentions = match &request.mentions {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Array(values)) => Some(values.clone()),
        Some(_) => return Err(ApiError::invalid_field("mentions", "must be an array")),
    };
    let all = match &request.mention_all {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Bool(all)) => Some(*all),
        Some(_) => return Err(ApiError::invalid_field("mentionAll", "must be true or false")),
    };
    Ok((mentions, all))
}

/// A `replyTo` or `threadId` of the post as `MSG_SEND` reads it: absent or
/// `null` is none, a string is checked by `validate`, any other value is
/// `invalid_field` naming `field`.
fn reference_text(field: &'static str, value: Option<&serde_json::Value>) -> Result<Option<String>, ApiError> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(ApiError::invalid_field(field, "must be a string")),
    }
}

/// The answer to a refused send, in the API's error shape.
pub(super) fn send_refused(frame: &ErrorFrame) -> ApiError {
    let status = match frame.code {
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::IdempotencyConflict => StatusCode::CONFLICT,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::InvalidField | ErrorCode::BodyTooLarge | ErrorCode::BadFrame | ErrorCode::UnknownType => {
            StatusCode::BAD_REQUEST
        }
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let error = ApiError::new(status, frame.code.as_str(), &frame.message)
        .with_retry_after_ms(frame.retry_after_ms)
        .with_field(frame.field.as_deref());
    match &frame.reason {
        Some(reason) => error.with_reason(reason),
        None => error,
    }
}

/// A send's answer as the response: its MSG_ACK with 201 for a new
/// message, 200 for a retry (`duplicate: true`); a refusal in the API's
/// error shape with its status.
fn respond(answer: SendAnswer) -> Result<Response, ApiError> {
    match answer {
        SendAnswer::Acked { entry, duplicate } => {
            let status = if duplicate { StatusCode::OK } else { StatusCode::CREATED };
            // The frame's own encoding, as MSG_SEND's sender gets it (`type` first).
            let frame = ServerFrame::MsgAck(view::ack(&entry, duplicate));
            Ok((
                status,
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                frame.encode(),
            )
                .into_response())
        }
        SendAnswer::Refused(frame) => Err(send_refused(&frame)),
    }
}

/// `POST /v1/channels/{channelId}/messages` (admin) `{"senderId",
/// "clientMsgId", "body"}`: stores the message as `senderId` through the
/// same group commit as `MSG_SEND` (same idempotency keys, same fan-out to
/// every live session of the members, on every node). 201 with the MSG_ACK
/// object; 200 with `duplicate: true` for a retry; 409
/// `idempotency_conflict` for a key used for another message; 403 when the
/// sender is not a member; 404 for an unknown channel; 400
/// `invalid_field` / `body_too_large` as `MSG_SEND`; 503 when the database
/// is unavailable.
#[utoipa::path(
    post,
    path = "/v1/channels/{channelId}/messages",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id")),
    request_body(content = PostMessageBody, description = "The message and who sends it"),
    responses(
        (status = 201, description = "Stored: the MSG_ACK", body = MessageAck),
        (status = 200, description = "A retry of a stored send: its MSG_ACK with duplicate true", body = MessageAck),
        (status = 400, description = "Body not JSON or not the shape, a bad id, or a body over max_body_bytes", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, or the sender is not a member", body = ErrorBody),
        (status = 404, description = "Unknown channel", body = ErrorBody),
        (status = 409, description = "The idempotency key was used for another message", body = ErrorBody),
        (status = 413, description = "Body over max_request_bytes", body = ErrorBody),
        (status = 503, description = "Database unavailable, or shutting down", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn post_message(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    raw: Request,
) -> Result<Response, ApiError> {
    require_admin(&state, &headers)?;
    let ApiPath(raw_channel) = path?;
    let body = read_body(raw, state.config.max_request_bytes).await?;
    let request: PostMessage = parse_json(&body, POST_MESSAGE_SHAPE)?;
    let sender = UserId::parse(&request.sender_id).map_err(|e| ApiError::invalid_field("senderId", &e.to_string()))?;
    let reply_to = reference_text("replyTo", request.reply_to.as_ref());
    let thread_id = reference_text("threadId", request.thread_id.as_ref());
    let mentions = mentions_fields(&request);
    let attachments = match &request.attachments {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Array(values)) => Ok(Some(values.clone())),
        Some(_) => Err(ApiError::invalid_field("attachments", "must be an array")),
    };
    let checked = match (reply_to, thread_id, mentions, attachments) {
        (Ok(reply_to), Ok(thread_id), Ok((mentions, mention_all)), Ok(attachments)) => ClientFrame::MsgSend {
            channel_id: raw_channel.clone(),
            client_msg_id: request.client_msg_id.clone(),
            body: request.body.clone(),
            reply_to,
            thread_id,
            mentions,
            mention_all,
            attachments,
        }
        .validate(state.config.max_body_bytes)
        .and_then(|c| c.with_mentions_within(state.config.max_mentions))
        .and_then(|c| c.with_attachments_within(state.config.max_attachments_per_message))
        .map_err(|refusal| match refusal {
            FrameError::InvalidField { field, reason, .. } => ApiError::invalid_field(field, &reason),
            other => ApiError::new(StatusCode::BAD_REQUEST, other.code().as_str(), &other.to_string()),
        }),
        (Err(refusal), _, _, _) | (_, Err(refusal), _, _) | (_, _, Err(refusal), _) | (_, _, _, Err(refusal)) => {
            Err(refusal)
        }
    };
    let (channel, client_msg_id, body, refs, mentions, attachments) = match checked {
        Ok(Command::Send {
            channel_id,
            client_msg_id,
            body,
            reply_to,
            thread_id,
            mentions,
            mention_all,
            attachments,
        }) => (
            channel_id,
            client_msg_id,
            body,
            References { reply_to, thread_id },
            Mentions {
                users: mentions,
                all: mention_all,
            },
            attachments,
        ),
        Ok(_) => return Err(ApiError::bad_request("not a send")),
        Err(refusal) => return refused_by_checks(&state, &sender, &raw_channel, &request, refusal).await,
    };
    if state.store.channel(&channel).await?.is_none() {
        // The key decides first (guarantee 2): a retry of a message stored
        // before the channel went is still answered by its key.
        if let Some(stored) = state.store.message_by_key(&sender, &client_msg_id).await? {
            let retry = stored.is_retried_by(channel.as_str(), &body, &refs, &mentions)
                && (stored.deleted || stored.attachment_ids() == attachments);
            return respond(answer::by_stored_key(stored, retry));
        }
        return Err(ApiError::not_found("unknown channel"));
    }
    send(
        &state,
        sender,
        channel,
        client_msg_id,
        body,
        refs,
        mentions,
        attachments,
    )
    .await
}

/// A send refused by `MSG_SEND`'s checks, answered as `MSG_SEND` answers it
/// (guarantee 2: the key is looked up before anything else about the send):
/// by its idempotency key when that key is already stored (the original's
/// MSG_ACK when `channelId` and `body` match, else `idempotency_conflict`),
/// else by the refusal itself (400 `invalid_field` or `body_too_large`).
async fn refused_by_checks(
    state: &AppState,
    sender: &UserId,
    channel: &str,
    request: &PostMessage,
    refusal: ApiError,
) -> Result<Response, ApiError> {
    if let Ok(key) = ClientMsgId::parse(&request.client_msg_id) {
        if let Some(stored) = state.store.message_by_key(sender, &key).await? {
            let text = |value: Option<&serde_json::Value>| match value {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(text)) => Some(text.clone()),
                Some(other) => Some(other.to_string()),
            };
            let (reply_to, thread_id) = (text(request.reply_to.as_ref()), text(request.thread_id.as_ref()));
            let mentions = mentions_key_of(request.mentions.as_ref(), request.mention_all.as_ref());
            let retry = stored.is_retried_by_text(
                channel,
                &request.body,
                reply_to.as_deref(),
                thread_id.as_deref(),
                &mentions,
            ) && stored.is_attaching_as(&attachments_key_of(request.attachments.as_ref()));
            return respond(answer::by_stored_key(stored, retry));
        }
    }
    Err(refusal)
}

/// Submits the send to group commit and answers with its typed answer,
/// once the send is stored and fanned out (or refused).
#[allow(clippy::too_many_arguments)]
async fn send(
    state: &AppState,
    sender: UserId,
    channel_id: ChannelId,
    client_msg_id: ClientMsgId,
    body: String,
    refs: References,
    mentions: Mentions,
    attachments: Vec<uuid::Uuid>,
) -> Result<Response, ApiError> {
    let (reply_to, answered) = oneshot::channel();
    let job = SendJob {
        message: crate::store::NewEntry {
            sender_id: sender,
            channel_id,
            client_msg_id,
            body,
            change: refs.change(),
            mentions,
            // The admin token posts as `senderId`, held to the channel's
            // rules; the entry shows `byAdmin` and no `clientMsgId` (the
            // caller's key is stored: a retry stays idempotent).
            origin: crate::store::Origin::AdminAsSender,
            attachments,
        },
        reply_to: ReplyTo::Caller(reply_to),
        received: Instant::now(),
    };
    if state.commits.submit(job).await.is_err() {
        return Err(ApiError::unavailable("server is shutting down; retry"));
    }
    match answered.await {
        Ok(answer) => respond(answer),
        Err(_) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the send was not answered; retry",
        )),
    }
}
