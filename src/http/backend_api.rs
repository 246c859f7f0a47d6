//! The routes a product's backend needs (`docs/protocol.md`, "The API a
//! product's backend needs"): a server-side send through group commit,
//! channel listing, naming, metadata and deletion, and a user's own channels.

use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::oneshot;

use super::body::{parse_json, read_body};
use super::channels::{ChannelList, ChannelView};
use super::openapi::{ChannelPatchBody, ChannelsQuery, ErrorBody, MessageAck, MyChannels, PostMessageBody};
use super::{caller, require_admin, ApiError, ApiPath, ApiQuery, Caller, QueryParams};
use crate::commit::answer::{self, SendAnswer};
use crate::commit::{ReplyTo, SendJob};
use crate::ids::{ChannelId, ClientMsgId, UserId};
use crate::protocol::{ClientFrame, Command, ErrorCode, ErrorFrame, FrameError, ServerFrame};
use crate::state::AppState;
use crate::store::{ChannelPatch, StoreError};
use crate::view;

/// Longest channel `name`, in characters (Unicode scalar values).
pub const MAX_NAME_CHARS: usize = 200;
/// Default `limit` of `GET /v1/channels`.
pub const DEFAULT_CHANNELS_PAGE: u32 = 100;
/// Largest `limit` of `GET /v1/channels`.
pub const MAX_CHANNELS_PAGE: u32 = 500;

fn channel_id(raw: &str) -> Result<ChannelId, ApiError> {
    ChannelId::parse(raw).map_err(|e| ApiError::invalid_field("channelId", &e.to_string()))
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
}

/// The shape of the `POST /v1/channels/{channelId}/messages` body.
const POST_MESSAGE_SHAPE: &str = r#"{"senderId": string, "clientMsgId": string, "body": string}"#;

/// The answer to a refused send, in the API's error shape.
fn send_refused(frame: &ErrorFrame) -> ApiError {
    let status = match frame.code {
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::IdempotencyConflict => StatusCode::CONFLICT,
        ErrorCode::Unavailable | ErrorCode::RateLimited => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::InvalidField | ErrorCode::BodyTooLarge | ErrorCode::BadFrame | ErrorCode::UnknownType => {
            StatusCode::BAD_REQUEST
        }
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError::new(status, frame.code.as_str(), &frame.message)
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
    let frame = ClientFrame::MsgSend {
        channel_id: raw_channel.clone(),
        client_msg_id: request.client_msg_id.clone(),
        body: request.body.clone(),
    };
    let (channel, client_msg_id, body) = match frame.validate(state.config.max_body_bytes) {
        Ok(Command::Send {
            channel_id,
            client_msg_id,
            body,
        }) => (channel_id, client_msg_id, body),
        Ok(_) => return Err(ApiError::bad_request("not a send")),
        Err(refusal) => return refused_by_checks(&state, &sender, &raw_channel, &request, &refusal).await,
    };
    if state.store.channel(&channel).await?.is_none() {
        // The key decides first (guarantee 2): a retry of a message stored
        // before the channel went is still answered by its key.
        if let Some(stored) = state.store.message_by_key(&sender, &client_msg_id).await? {
            let retry = stored.is_retried_by(channel.as_str(), &body);
            return respond(answer::by_stored_key(stored, retry));
        }
        return Err(ApiError::not_found("unknown channel"));
    }
    send(&state, sender, channel, client_msg_id, body).await
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
    refusal: &FrameError,
) -> Result<Response, ApiError> {
    if let Ok(key) = ClientMsgId::parse(&request.client_msg_id) {
        if let Some(stored) = state.store.message_by_key(sender, &key).await? {
            let retry = stored.is_retried_by(channel, &request.body);
            return respond(answer::by_stored_key(stored, retry));
        }
    }
    Err(match refusal {
        FrameError::InvalidField { field, reason, .. } => ApiError::invalid_field(field, reason),
        other => ApiError::new(StatusCode::BAD_REQUEST, other.code().as_str(), &other.to_string()),
    })
}

/// Submits the send to group commit and answers with its typed answer,
/// once the send is stored and fanned out (or refused).
async fn send(
    state: &AppState,
    sender: UserId,
    channel_id: ChannelId,
    client_msg_id: ClientMsgId,
    body: String,
) -> Result<Response, ApiError> {
    let (reply_to, answered) = oneshot::channel();
    let job = SendJob {
        message: crate::store::NewEntry {
            sender_id: sender,
            channel_id,
            client_msg_id,
            body,
            change: crate::store::Change::Message,
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

/// `GET /v1/channels?after=ID&limit=N` (admin): 200 `{"channels": [channel
/// objects], "hasMore"}`, channels in byte order of `channelId` after
/// `after`; `limit` 1..500, default 100.
#[utoipa::path(
    get,
    path = "/v1/channels",
    tag = "channels",
    params(ChannelsQuery),
    responses(
        (status = 200, description = "A page of channels", body = ChannelList),
        (status = 400, description = "A bad after or limit", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn list_channels(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    require_admin(&state, &headers)?;
    let query = QueryParams::new(query);
    let param = |name: &'static str| {
        query
            .get(name)
            .map_err(|_| ApiError::invalid_field(name, "given more than once"))
    };
    let after = match param("after")? {
        None => None,
        Some(raw) => Some(ChannelId::parse(raw).map_err(|e| ApiError::invalid_field("after", &e.to_string()))?),
    };
    let limit = match param("limit")? {
        None => DEFAULT_CHANNELS_PAGE,
        Some(raw) => raw
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_CHANNELS_PAGE).contains(n))
            .ok_or_else(|| ApiError::invalid_field("limit", "must be an integer between 1 and 500"))?,
    };
    let (channels, has_more) = state.store.list_channels(after.as_ref(), limit).await?;
    let channels: Vec<ChannelView> = channels.into_iter().map(ChannelView::from).collect();
    Ok(Json(serde_json::json!({"channels": channels, "hasMore": has_more})).into_response())
}

/// The shape of the `PATCH /v1/channels/{channelId}` body.
const PATCH_SHAPE: &str = r#"{"name"?: string | null, "metadata"?: object | null}"#;

/// A field that may be absent (leave it), `null` (clear it) or a value.
fn patch_field(body: &serde_json::Map<String, Value>, name: &str) -> Option<Option<Value>> {
    body.get(name).map(|v| (!v.is_null()).then(|| v.clone()))
}

/// `PATCH /v1/channels/{channelId}` (admin) `{"name"?, "metadata"?}`: 200
/// with the channel object. `name`: 0..200 characters of text (no control
/// characters); `metadata`: a JSON object of at most
/// `max_channel_metadata_bytes` serialized; `null` clears either. 400
/// `invalid_field` (nothing changed), 404 for an unknown channel.
#[utoipa::path(
    patch,
    path = "/v1/channels/{channelId}",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id")),
    request_body(content = ChannelPatchBody, description = "The fields to change; null clears one"),
    responses(
        (status = 200, description = "The channel as changed", body = ChannelView),
        (status = 400, description = "Body not JSON or not the shape, a bad channel id, name or metadata", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 404, description = "Unknown channel", body = ErrorBody),
        (status = 413, description = "Body over max_request_bytes", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn patch_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    raw: Request,
) -> Result<Response, ApiError> {
    require_admin(&state, &headers)?;
    let ApiPath(raw_channel) = path?;
    let id = channel_id(&raw_channel)?;
    let body = read_body(raw, state.config.max_request_bytes).await?;
    let request: serde_json::Map<String, Value> = parse_json(&body, PATCH_SHAPE)?;
    if let Some(unknown) = request.keys().find(|k| !matches!(k.as_str(), "name" | "metadata")) {
        return Err(ApiError::invalid_field(
            unknown,
            "unknown field (name and metadata may be changed)",
        ));
    }
    let name = match patch_field(&request, "name") {
        None => None,
        Some(None) => Some(None),
        Some(Some(Value::String(name))) => {
            if name.chars().count() > MAX_NAME_CHARS {
                return Err(ApiError::invalid_field("name", "at most 200 characters"));
            }
            if name.chars().any(char::is_control) {
                return Err(ApiError::invalid_field("name", "must not contain control characters"));
            }
            Some(Some(name))
        }
        Some(Some(_)) => return Err(ApiError::invalid_field("name", "must be a string or null")),
    };
    let metadata = match patch_field(&request, "metadata") {
        None => None,
        Some(None) => Some(None),
        Some(Some(value @ Value::Object(_))) => {
            let text = value.to_string();
            let most = state.config.max_channel_metadata_bytes;
            if text.len() > most {
                return Err(ApiError::invalid_field(
                    "metadata",
                    &format!("at most {most} bytes of JSON (max_channel_metadata_bytes)"),
                ));
            }
            Some(Some(text))
        }
        Some(Some(_)) => return Err(ApiError::invalid_field("metadata", "must be a JSON object or null")),
    };
    let channel = state
        .store
        .update_channel(&id, &ChannelPatch { name, metadata })
        .await?;
    tracing::info!(channel_id = %id, "channel updated");
    Ok(Json(ChannelView::from(channel)).into_response())
}

/// `DELETE /v1/channels/{channelId}` (admin): 204; its messages, members
/// and watermarks are gone (one transaction), and the live sessions of its
/// members, on every node, get `CHANNEL_REMOVED`. 404 for an unknown channel.
#[utoipa::path(
    delete,
    path = "/v1/channels/{channelId}",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id")),
    responses(
        (status = 204, description = "Deleted with its messages, members and watermarks"),
        (status = 400, description = "A bad channel id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 404, description = "Unknown channel", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn delete_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<StatusCode, ApiError> {
    require_admin(&state, &headers)?;
    let ApiPath(raw_channel) = path?;
    let id = channel_id(&raw_channel)?;
    let members = state.store.delete_channel(&id).await.map_err(|e| match e {
        StoreError::NotFound => ApiError::not_found("unknown channel"),
        other => ApiError::from(other),
    })?;
    state.delivery.channel_removed(&id, &members);
    tracing::info!(channel_id = %id, members = members.len(), "channel deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/me/channels` (user token): 200 `{"channels": [...]}`, the
/// caller's channels as HELLO lists them (`channelId`, `lastSeq`,
/// `deliveredSeq`, `readSeq`, `name`, `metadata`), by channel id. 403 for
/// the admin token (it is no user).
#[utoipa::path(
    get,
    path = "/v1/me/channels",
    tag = "channels",
    responses(
        (status = 200, description = "The caller's channels", body = MyChannels),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The admin token (it is no user)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn my_channels(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let user = match caller(&state, &headers)? {
        Caller::User(user) => user,
        Caller::Admin => {
            return Err(ApiError::forbidden(
                "a user token is required (the admin token is no user)",
            ))
        }
    };
    let positions = state.store.channel_states(&user.user_id).await?;
    let channels: Vec<_> = positions.iter().map(view::channel_state).collect();
    Ok(Json(serde_json::json!({"channels": channels})).into_response())
}
