//! The channel routes: create, read, list and delete (`/v1/channels`,
//! `/v1/channels/{channelId}`), the channel object they answer with, and
//! the checks of a channel request's fields; `PATCH` is `channel_patch.rs`.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::body::{admin_body, parse_json};
use super::caller::{actor_in, caller, require_admin};
use super::error::ApiError;
use super::extract::{ApiPath, ApiQuery, QueryParams};
use super::openapi::{ChannelsQuery, ErrorBody};
use crate::ids::{now_ms, ChannelId, UserId};
use crate::permissions::{self, Action};
use crate::protocol::{ChannelKind, Role, Visibility};
use crate::state::AppState;
use crate::store::{Channel, NewChannel, StoreError};
use crate::text::is_bidi_override;

/// The channel object of the API: `{"channelId", "members", "lastSeq",
/// "createdAt", "name", "metadata", "kind", "visibility", "memberCount"}`
/// (`name` and `metadata` are `null` when unset; `PATCH
/// /v1/channels/{channelId}` sets them; the last three since version 1.2).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelView {
    channel_id: String,
    members: Vec<String>,
    last_seq: i64,
    created_at: i64,
    name: Option<String>,
    metadata: Option<serde_json::Value>,
    /// `group` or `direct`.
    #[schema(value_type = String)]
    kind: ChannelKind,
    /// `private` or `public`.
    #[schema(value_type = String)]
    visibility: Visibility,
    /// How many members the channel has (the length of `members`).
    member_count: i64,
    /// Who may store messages (§17): `member` (anyone, the default) or
    /// `moderator` (an announcement channel).
    #[schema(value_type = String)]
    posting_role: Role,
    /// Slow mode (§17): ms a `member` waits between two messages; 0: off.
    slow_mode_ms: i64,
    /// The channel's own retention (§19), seconds: its `message` entries
    /// older than this are erased by the retention sweep (0: kept forever).
    /// Absent: the server's `retention_secs` applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    retention_secs: Option<i64>,
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
            kind: c.kind,
            visibility: c.visibility,
            member_count: i64::try_from(c.members.len()).unwrap_or(i64::MAX),
            posting_role: c.posting_role,
            slow_mode_ms: c.slow_mode_ms,
            retention_secs: c.retention_secs,
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
    /// Members with the role `owner` (version 1.2); absent or `null`: none.
    owners: Option<Vec<String>>,
    /// `private` (the default) or `public` (version 1.2).
    #[schema(value_type = Option<String>)]
    visibility: Option<String>,
}

/// The shape of the `POST /v1/channels` body, as its refusals name it.
const CHANNEL_SHAPE: &str =
    r#"{"channelId"?: string, "members"?: [string], "owners"?: [string], "visibility"?: "private" | "public"}"#;

/// A `channelId` from a path or body, or 400 `invalid_field` naming it.
pub(super) fn channel_id(raw: &str) -> Result<ChannelId, ApiError> {
    ChannelId::parse(raw).map_err(|e| ApiError::invalid_field("channelId", &e.to_string()))
}

pub(super) fn user_id(raw: &str, field: &str) -> Result<UserId, ApiError> {
    UserId::parse(raw).map_err(|e| ApiError::invalid_field(field, &e.to_string()))
}

/// The user ids of the list `field` of a `POST /v1/channels` body, at most
/// `most` of them.
pub(super) fn user_ids(raw: Vec<String>, field: &str, most: usize) -> Result<Vec<UserId>, ApiError> {
    if raw.len() > most {
        return Err(too_many(most));
    }
    raw.iter().map(|m| user_id(m, field)).collect()
}

/// A channel's `visibility` as a request gives it: `private` when absent.
///
/// # Errors
/// 400 `invalid_field` for anything but `private` or `public`.
pub(super) fn visibility(raw: Option<&str>) -> Result<Visibility, ApiError> {
    match raw {
        None => Ok(Visibility::Private),
        Some(raw) => {
            Visibility::parse(raw).ok_or_else(|| ApiError::invalid_field("visibility", "must be private or public"))
        }
    }
}

/// 400 for a `POST /v1/channels` naming more than `max_members_per_request` users.
fn too_many(most: usize) -> ApiError {
    ApiError::invalid_field(
        "members",
        &format!("at most {most} per request; add more with PUT /v1/channels/{{channelId}}/members/{{userId}}"),
    )
}

/// A channel `name`: at most [`MAX_NAME_CHARS`] characters, no control
/// characters, not blank (only spaces or invisible characters), no
/// zero-width filler (`\u{feff}admin` shows as `admin`), no bidirectional
/// embeddings, overrides or isolates
/// ([`is_bidi_override`]: `\u{202e}nimda` shows as `admin`; right-to-left text itself, and the marks, are
/// names like any other).
///
/// # Errors
/// 400 `invalid_field` naming `name`.
pub(super) fn check_name(name: &str) -> Result<(), ApiError> {
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::invalid_field("name", "at most 200 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(ApiError::invalid_field("name", "must not contain control characters"));
    }
    if crate::text::shows_nothing(name) {
        return Err(ApiError::invalid_field(
            "name",
            "must show something: not only spaces or invisible characters (empty clears it)",
        ));
    }
    if name.chars().any(crate::text::is_zero_width_filler) {
        return Err(ApiError::invalid_field(
            "name",
            "must not contain zero-width characters (U+200B, U+2060 to U+2064, U+FEFF, U+00AD)",
        ));
    }
    if name.chars().any(is_bidi_override) {
        return Err(ApiError::invalid_field(
            "name",
            "must not contain bidirectional embeddings, overrides or isolates (U+202A to U+202E, U+2066 to U+2069)",
        ));
    }
    Ok(())
}

/// Longest channel `name`, in characters (Unicode scalar values).
pub const MAX_NAME_CHARS: usize = 200;
/// Default `limit` of `GET /v1/channels`.
pub const DEFAULT_CHANNELS_PAGE: u32 = 100;
/// Largest `limit` of `GET /v1/channels`.
pub const MAX_CHANNELS_PAGE: u32 = 500;

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
            owners: None,
            visibility: None,
        }
    } else {
        parse_json(&body, CHANNEL_SHAPE)?
    };
    let id = match request.channel_id {
        Some(raw) => channel_id(&raw)?,
        None => ChannelId::generate(),
    };
    let visibility = visibility(request.visibility.as_deref())?;
    let most = state.config.max_members_per_request;
    let members = user_ids(request.members.unwrap_or_default(), "members", most)?;
    let owners = user_ids(request.owners.unwrap_or_default(), "owners", most)?;
    if members.len() + owners.len() > most {
        return Err(too_many(most));
    }
    let new = NewChannel {
        members,
        owners,
        kind: ChannelKind::Group,
        visibility,
        name: None,
        direct_pair: None,
    };
    create_and_announce(&state, &id, &new).await
}

/// Creates channel `id` as `new` says and announces it to its members'
/// open sessions: 201 with the channel object.
///
/// # Errors
/// 409 when the id is taken; the store's error.
pub(super) async fn create_and_announce(
    state: &AppState,
    id: &ChannelId,
    new: &NewChannel,
) -> Result<Response, ApiError> {
    let channel = state.store.create_channel_as(id, new, now_ms()).await?;
    // Members with open sessions get CHANNEL_ADDED; with NATS, the nodes
    // holding their sessions take the channel for them (at seq 0), or they
    // would get nothing live until they reconnect.
    state.delivery.channel_created(&channel, &new.owners);
    tracing::info!(channel_id = %id, members = channel.members.len(), "channel created");
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
    let after = query.after(ChannelId::parse)?;
    let limit = query.page_limit(DEFAULT_CHANNELS_PAGE, MAX_CHANNELS_PAGE)?;
    let (channels, has_more) = state.store.list_channels(after.as_ref(), limit).await?;
    let channels: Vec<ChannelView> = channels.into_iter().map(ChannelView::from).collect();
    Ok(Json(serde_json::json!({"channels": channels, "hasMore": has_more})).into_response())
}

/// `DELETE /v1/channels/{channelId}` (admin, or an owner of the channel): 204; its messages, members
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
        (status = 403, description = "A user token of a non-owner, or an unknown channel", body = ErrorBody),
        (status = 404, description = "Unknown channel (admin token)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("adminToken" = []), ("userJwt" = [])),
)]
pub async fn delete_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<StatusCode, ApiError> {
    caller(&state, &headers)?;
    let ApiPath(raw_channel) = path?;
    let id = channel_id(&raw_channel)?;
    let (actor, by) = actor_in(&state, &headers, &id).await?;
    permissions::may(actor, Action::DeleteChannel).map_err(ApiError::from)?;
    let members = state
        .store
        .delete_channel_by(&id, by.as_ref())
        .await
        .map_err(|e| match e {
            StoreError::NotFound if by.is_none() => ApiError::not_found("unknown channel"),
            StoreError::NotFound => ApiError::from(permissions::Denied::NotAMember),
            other => ApiError::from(other),
        })?;
    state.delivery.channel_removed(&id, &members);
    tracing::info!(channel_id = %id, members = members.len(), "channel deleted");
    Ok(StatusCode::NO_CONTENT)
}
