//! Channel, membership and history routes.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::body::{admin_body, parse_json};
use super::openapi::{ErrorBody, HistoryPage, HistoryQuery};
use super::{require_admin, ApiError, ApiPath, ApiQuery, Caller, QueryParams};
use crate::command::sync::{cut_page, read_page};
use crate::ids::{now_ms, ChannelId, UserId};
use crate::protocol::{check_limit, Page};
use crate::state::AppState;
use crate::store::Channel;

/// The channel object of the API: `{"channelId", "members", "lastSeq",
/// "createdAt", "name", "metadata"}` (`name` and `metadata` are `null` when
/// unset; `PATCH /v1/channels/{channelId}` sets them).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelView {
    channel_id: String,
    members: Vec<String>,
    last_seq: i64,
    created_at: i64,
    name: Option<String>,
    metadata: Option<serde_json::Value>,
}

/// `GET /v1/channels`'s answer.
#[derive(Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // a schema: the handler builds the body as JSON.
pub struct ChannelList {
    /// Channel objects in byte order of `channelId`.
    channels: Vec<ChannelView>,
    /// Whether more channels follow the last one.
    has_more: bool,
}

impl From<Channel> for ChannelView {
    fn from(c: Channel) -> Self {
        Self {
            channel_id: c.channel_id.as_str().to_owned(),
            members: c.members.iter().map(|m| m.as_str().to_owned()).collect(),
            last_seq: c.last_seq,
            created_at: c.created_at,
            metadata: crate::view::metadata(c.metadata.as_deref()),
            name: c.name,
        }
    }
}

/// The `POST /v1/channels` body; an empty body is `{}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct CreateChannel {
    channel_id: Option<String>,
    /// Absent or `null`: no members.
    members: Option<Vec<String>>,
}

/// The shape of the `POST /v1/channels` body, as its refusals name it.
const CHANNEL_SHAPE: &str = r#"{"channelId"?: string, "members"?: [string]}"#;

fn channel_id(raw: &str) -> Result<ChannelId, ApiError> {
    ChannelId::parse(raw).map_err(|e| ApiError::invalid_field("channelId", &e.to_string()))
}

pub(super) fn user_id(raw: &str, field: &str) -> Result<UserId, ApiError> {
    UserId::parse(raw).map_err(|e| ApiError::invalid_field(field, &e.to_string()))
}

/// `POST /v1/channels` (admin): 201 with the channel; 409 if the id exists.
#[utoipa::path(
    post,
    path = "/v1/channels",
    tag = "channels",
    request_body(content = CreateChannel, description = "Without channelId the server assigns a UUIDv7"),
    responses(
        (status = 201, description = "Created", body = ChannelView),
        (status = 400, description = "Body not JSON, not the shape, or a bad channel or member id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
        (status = 409, description = "The channel id exists", body = ErrorBody),
        (status = 413, description = "Body over max_request_bytes", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn create_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    raw: Request,
) -> Result<Response, ApiError> {
    let body = admin_body(&state, &headers, raw).await?;
    let request: CreateChannel = if body.is_empty() {
        CreateChannel {
            channel_id: None,
            members: None,
        }
    } else {
        parse_json(&body, CHANNEL_SHAPE)?
    };
    let id = match request.channel_id {
        Some(raw) => channel_id(&raw)?,
        None => ChannelId::generate(),
    };
    let members = request.members.unwrap_or_default();
    let most = state.config.max_members_per_request;
    if members.len() > most {
        return Err(ApiError::invalid_field(
            "members",
            &format!("at most {most} per request; add more with PUT /v1/channels/{{channelId}}/members/{{userId}}"),
        ));
    }
    let members = members
        .iter()
        .map(|m| user_id(m, "members"))
        .collect::<Result<Vec<_>, _>>()?;
    let channel = state.store.create_channel(&id, &members, now_ms()).await?;
    // With NATS, a node delivers a channel to the users it has sessions for
    // once it has taken the channel for them, so members whose sessions were
    // open before the channel existed are announced as joined (at seq 0), or
    // they would get nothing live until they reconnect.
    for member in &channel.members {
        state.delivery.membership_changed(member, &id, true, channel.last_seq);
    }
    tracing::info!(channel_id = %id, members = members.len(), "channel created");
    Ok((StatusCode::CREATED, Json(ChannelView::from(channel))).into_response())
}

/// `GET /v1/channels/{channelId}` (admin): 200 or 404.
#[utoipa::path(
    get,
    path = "/v1/channels/{channelId}",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id")),
    responses(
        (status = 200, description = "The channel", body = ChannelView),
        (status = 400, description = "A bad channel id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
        (status = 404, description = "Unknown channel", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn get_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<Json<ChannelView>, ApiError> {
    require_admin(&state, &headers)?;
    let ApiPath(raw) = path?;
    let id = channel_id(&raw)?;
    let channel = state
        .store
        .channel(&id)
        .await?
        .ok_or_else(|| ApiError::not_found("unknown channel"))?;
    Ok(Json(channel.into()))
}

/// `PUT /v1/channels/{channelId}/members/{userId}` (admin): 204; 404 for an unknown channel.
#[utoipa::path(
    put,
    path = "/v1/channels/{channelId}/members/{userId}",
    tag = "channels",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("userId" = String, Path, description = "The user id"),
    ),
    responses(
        (status = 204, description = "Member (also when already one)"),
        (status = 400, description = "A bad channel or user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
        (status = 404, description = "Unknown channel", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn add_member(
    state: State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
) -> Result<StatusCode, ApiError> {
    set_member(state, headers, path, true).await
}

/// `DELETE /v1/channels/{channelId}/members/{userId}` (admin): 204; 404 for an unknown channel.
#[utoipa::path(
    delete,
    path = "/v1/channels/{channelId}/members/{userId}",
    tag = "channels",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("userId" = String, Path, description = "The user id"),
    ),
    responses(
        (status = 204, description = "Not a member (also when not one)"),
        (status = 400, description = "A bad channel or user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
        (status = 404, description = "Unknown channel", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn remove_member(
    state: State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
) -> Result<StatusCode, ApiError> {
    set_member(state, headers, path, false).await
}

async fn set_member(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
    add: bool,
) -> Result<StatusCode, ApiError> {
    require_admin(&state, &headers)?;
    let ApiPath((raw_channel, raw_user)) = path?;
    let channel = channel_id(&raw_channel)?;
    let user = user_id(&raw_user, "userId")?;
    let seq = state.store.set_member(&channel, &user, add, now_ms()).await?;
    state.delivery.membership_changed(&user, &channel, add, seq);
    tracing::info!(channel_id = %channel, user_id = %user, add, "membership changed");
    Ok(StatusCode::NO_CONTENT)
}

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
    let who = super::caller_from_header_or_query(&state, &headers, &query)?;
    let ApiPath(raw) = path?;
    let id = channel_id(&raw)?;
    let param = |name: &'static str| {
        query
            .get(name)
            .map_err(|_| ApiError::invalid_field(name, "given more than once"))
    };
    let int = |name: &'static str, range: &'static str| -> Result<Option<i64>, ApiError> {
        param(name)?
            .map(|v| v.parse::<i64>().map_err(|_| ApiError::invalid_field(name, range)))
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
            v.parse::<i64>()
                .map_err(|_| ApiError::invalid_field("limit", "must be an integer between 1 and 500"))?,
        ),
    };
    let limit = check_limit(limit).map_err(|reason| ApiError::invalid_field("limit", reason))?;
    let reader = match &who {
        Caller::Admin => {
            if state.store.channel(&id).await?.is_none() {
                return Err(ApiError::not_found("unknown channel"));
            }
            None
        }
        Caller::User(user) => {
            if !state.store.is_member(&id, &user.user_id).await? {
                return Err(ApiError::forbidden("not a member of this channel"));
            }
            Some(&user.user_id)
        }
    };
    // Render-ready (§8): each message with its current state; `me` is the
    // user's (never true for the admin).
    let read = read_page(&state.store, &id, page, limit, reader).await?;
    // Like a SYNC_BATCH, a page stops early past `max_page_bytes`; the
    // caller asks again after its last seq (or before its first).
    let (messages, has_more) = cut_page(&read.entries, read.has_more, page, state.config.max_page_bytes);
    Ok(Json(serde_json::json!({"messages": messages, "hasMore": has_more, "lastSeq": read.last_seq})).into_response())
}
