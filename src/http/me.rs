//! The routes of the signed-in user: its channels (`/v1/me/channels`),
//! joining and leaving one, and the directory of public channels
//! (`/v1/directory`).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::body::{parse_json, read_body};
use super::caller::{caller, Caller};
use super::channels::{channel_id, check_name, create_and_announce, user_id, user_ids, visibility, ChannelView};
use super::error::ApiError;
use super::extract::{ApiPath, ApiQuery, QueryParams};
use super::openapi::{ErrorBody, MyChannels};
use crate::auth::AuthUser;
use crate::commit::MembershipError;
use crate::config::DmPolicy;
use crate::ids::{now_ms, ChannelId};
use crate::protocol::ChannelKind;
use crate::state::AppState;
use crate::store::{DirectoryEntry, MembershipChange, NewChannel, StoreError};
use crate::view;

/// Channels per page of `GET /v1/directory` when `limit` is absent.
pub const DEFAULT_DIRECTORY_PAGE: u32 = 100;
/// The largest `limit` of `GET /v1/directory`.
pub const MAX_DIRECTORY_PAGE: u32 = 500;
/// The longest `q` of `GET /v1/directory`, in characters.
pub const MAX_DIRECTORY_QUERY_CHARS: usize = 200;

/// The caller of a `/v1/me/…` route: a user token.
///
/// # Errors
/// 401 for no or a refused token, 403 for the admin token (it is no user).
pub(super) fn signed_in_user(state: &AppState, headers: &HeaderMap) -> Result<AuthUser, ApiError> {
    match caller(state, headers)? {
        Caller::User(user) => Ok(user),
        Caller::Admin => Err(ApiError::forbidden(
            "a user token is required (the admin token is no user)",
        )),
    }
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
    let user = signed_in_user(&state, &headers)?;
    let positions = state.store.channel_states(&user.user_id).await?;
    let channels: Vec<_> = positions.iter().map(view::channel_state).collect();
    Ok(Json(serde_json::json!({"channels": channels})).into_response())
}

/// One public channel as `GET /v1/directory` lists it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryChannel {
    channel_id: String,
    /// The display name, `null` when unset.
    name: Option<String>,
    member_count: i64,
    /// Highest stored `seq` (0 when empty).
    last_seq: i64,
}

impl From<DirectoryEntry> for DirectoryChannel {
    fn from(e: DirectoryEntry) -> Self {
        Self {
            channel_id: e.channel_id.as_str().to_owned(),
            name: e.name,
            member_count: e.member_count,
            last_seq: e.last_seq,
        }
    }
}

/// `GET /v1/directory`'s answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Directory {
    /// Public channels in byte order of `channelId`.
    channels: Vec<DirectoryChannel>,
    /// Whether more follow the last one.
    has_more: bool,
}

/// The query of `GET /v1/directory`.
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // a schema: the handler reads the query as pairs.
pub struct DirectoryQuery {
    /// Only channels whose id or name holds this text (case-insensitive).
    q: Option<String>,
    /// Channels after this channel id (exclusive), in byte order.
    after: Option<String>,
    /// Page size, 1 to 500; default 100.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
}

/// `GET /v1/directory?q=TEXT&after=CHANNELID&limit=N` (user token): 200
/// `{"channels": [{"channelId", "name", "memberCount", "lastSeq"}],
/// "hasMore"}`, the public group channels in byte order of `channelId`
/// after `after`, whose id or name holds `q` case-insensitively (on SQLite,
/// for ASCII letters only); `limit` 1..500, default 100. Private and
/// direct channels never appear.
#[utoipa::path(
    get,
    path = "/v1/directory",
    tag = "channels",
    params(DirectoryQuery),
    responses(
        (status = 200, description = "A page of public channels", body = Directory),
        (status = 400, description = "A bad q, after or limit", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The admin token (it is no user)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn directory(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    signed_in_user(&state, &headers)?;
    let query = QueryParams::new(query);
    let q = match query.field("q")? {
        None | Some("") => None,
        Some(text) if text.chars().count() > MAX_DIRECTORY_QUERY_CHARS => {
            return Err(ApiError::invalid_field("q", "at most 200 characters"))
        }
        Some(text) if text.chars().any(char::is_control) => {
            return Err(ApiError::invalid_field("q", "no control characters"))
        }
        Some(text) => Some(text),
    };
    let after = query.after(ChannelId::parse)?;
    let limit = query.page_limit(DEFAULT_DIRECTORY_PAGE, MAX_DIRECTORY_PAGE)?;
    let (entries, has_more) = state.store.directory(q, after.as_ref(), limit).await?;
    let body = Directory {
        channels: entries.into_iter().map(DirectoryChannel::from).collect(),
        has_more,
    };
    Ok(Json(body).into_response())
}

/// `PUT /v1/me/channels/{channelId}` (user token): join a public channel as
/// a `member`: 204, also when already one. 403 `forbidden` for a private or
/// direct channel, the same answer as for an unknown one.
#[utoipa::path(
    put,
    path = "/v1/me/channels/{channelId}",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id")),
    responses(
        (status = 204, description = "A member (also when already one)"),
        (status = 400, description = "A bad channel id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a public channel (or unknown), or the admin token", body = ErrorBody),
        (status = 409, description = "conflict: the user is being erased (§19)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn join_channel(
    state: State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<StatusCode, ApiError> {
    join_or_leave(state, headers, path, true).await
}

/// `DELETE /v1/me/channels/{channelId}` (user token): leave the channel:
/// 204, also when not a member (or the channel is unknown). 403 for a
/// direct channel, which cannot be left.
#[utoipa::path(
    delete,
    path = "/v1/me/channels/{channelId}",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id")),
    responses(
        (status = 204, description = "Not a member (also when not one)"),
        (status = 400, description = "A bad channel id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A direct channel, or the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn leave_channel(
    state: State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<StatusCode, ApiError> {
    join_or_leave(state, headers, path, false).await
}

async fn join_or_leave(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    join: bool,
) -> Result<StatusCode, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    let ApiPath(raw) = path?;
    let channel = channel_id(&raw)?;
    let change = if join {
        MembershipChange::Join
    } else {
        MembershipChange::Leave
    };
    match state
        .commits
        .change_membership(&channel, &user.user_id, change, None)
        .await
    {
        Ok(_) => {}
        Err(MembershipError::Store(StoreError::NotFound | StoreError::NotAllowed)) if join => {
            return Err(ApiError::forbidden("not a public channel"))
        }
        Err(MembershipError::Store(StoreError::NotFound)) => return Ok(StatusCode::NO_CONTENT),
        Err(MembershipError::Store(StoreError::NotAllowed)) => {
            return Err(ApiError::forbidden("a direct channel cannot be left"))
        }
        Err(other) => return Err(other.into()),
    }
    tracing::info!(channel_id = %channel, user_id = %user.user_id, join, "membership changed by the user");
    Ok(StatusCode::NO_CONTENT)
}

/// The `POST /v1/me/channels` body; an empty body is `{}`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct CreateMyChannel {
    /// Absent: the server assigns a UUIDv7.
    channel_id: Option<String>,
    /// The display name (at most 200 characters, no control characters).
    name: Option<String>,
    /// `private` (the default) or `public`.
    #[schema(value_type = Option<String>)]
    visibility: Option<String>,
    /// Users added as `member`s (the caller is the `owner`).
    members: Option<Vec<String>>,
}

/// The shape of the `POST /v1/me/channels` body, as its refusals name it.
const MY_CHANNEL_SHAPE: &str =
    r#"{"channelId"?: string, "name"?: string, "visibility"?: "private" | "public", "members"?: [string]}"#;

/// `POST /v1/me/channels` (user token) `{"channelId"?, "name"?,
/// "visibility"?, "members"?}`: a group channel with the caller as its
/// `owner` and `members` as `member`s: 201 with the channel object. 403
/// when `user_channel_creation` is false; 409 when the id is taken; 400
/// `invalid_field` for a bad id, name, visibility or member.
#[utoipa::path(
    post,
    path = "/v1/me/channels",
    tag = "channels",
    request_body(content = CreateMyChannel, description = "Without channelId the server assigns a UUIDv7"),
    responses(
        (status = 201, description = "Created, the caller its owner", body = ChannelView),
        (status = 400, description = "Body not JSON, not the shape, or a bad field", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "user_channel_creation is off, or the admin token", body = ErrorBody),
        (status = 409, description = "The channel id exists", body = ErrorBody),
        (status = 413, description = "Body over max_request_bytes", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn create_my_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    raw: Request,
) -> Result<Response, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    if !state.config.user_channel_creation {
        return Err(ApiError::forbidden(
            "users may not create channels here (user_channel_creation)",
        ));
    }
    let body = read_body(raw, state.config.max_request_bytes).await?;
    let request: CreateMyChannel = if body.is_empty() {
        CreateMyChannel::default()
    } else {
        parse_json(&body, MY_CHANNEL_SHAPE)?
    };
    let id = match request.channel_id {
        Some(raw) => channel_id(&raw)?,
        None => ChannelId::generate(),
    };
    if let Some(name) = &request.name {
        check_name(name)?;
    }
    let most = state.config.max_members_per_request;
    let members = user_ids(request.members.unwrap_or_default(), "members", most.saturating_sub(1))?;
    // A user who blocks the caller is not put in the caller's new channel
    // (§17): else a fresh channel per message would get around the block.
    if !state.store.blockers_among(&user.user_id, &members).await?.is_empty() {
        return Err(ApiError::forbidden("a user in members blocks you").with_reason("blocked"));
    }
    let new = NewChannel {
        members,
        owners: vec![user.user_id.clone()],
        kind: ChannelKind::Group,
        visibility: visibility(request.visibility.as_deref())?,
        name: request.name,
        direct_pair: None,
    };
    create_and_announce(&state, &id, &new).await
}

/// `PUT /v1/me/direct/{userId}` (user token): the one direct channel of the
/// caller and `userId` (the caller alone when `userId` is the caller): 201
/// with the channel object when this call made it, 200 with the same
/// channel afterwards, from either side. Its id is the server's; it is
/// private, its kind `direct`, and no one joins, leaves or is added. 403
/// `forbidden` with `"reason": "dm_policy"` when `dm_policy` refuses a new
/// one (a direct channel that exists stays open to its two members); 403
/// with `"reason": "blocked"` when either user blocks the other (§17).
#[utoipa::path(
    put,
    path = "/v1/me/direct/{userId}",
    tag = "channels",
    params(("userId" = String, Path, description = "The other user's id")),
    responses(
        (status = 200, description = "The pair's direct channel, made earlier", body = ChannelView),
        (status = 201, description = "The pair's direct channel, made now", body = ChannelView),
        (status = 400, description = "A bad user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "dm_policy refuses it (reason dm_policy), a block (reason blocked), or the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn open_direct(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<Response, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    let ApiPath(raw) = path?;
    let other = user_id(&raw, "userId")?;
    // A block either way refuses the direct channel, made or not (§17).
    if other != user.user_id && state.store.blocked_either_way(&user.user_id, &other).await? {
        return Err(ApiError::forbidden("one of you blocks the other").with_reason("blocked"));
    }
    if let Some(channel) = state.store.find_direct(&user.user_id, &other).await? {
        return Ok((StatusCode::OK, Json(ChannelView::from(channel))).into_response());
    }
    let allowed = match state.config.dm_policy {
        DmPolicy::Anyone => true,
        DmPolicy::Off => false,
        DmPolicy::SharedChannel => other == user.user_id || state.store.share_a_group(&user.user_id, &other).await?,
    };
    if !allowed {
        return Err(
            ApiError::forbidden("direct channels with this user are not allowed here (dm_policy)")
                .with_reason("dm_policy"),
        );
    }
    let (channel, created) = state.store.open_direct(&user.user_id, &other, now_ms()).await?;
    if created {
        state.delivery.channel_created(&channel, &[]);
        tracing::info!(channel_id = %channel.channel_id, "direct channel created");
    }
    let status = if created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(ChannelView::from(channel))).into_response())
}
