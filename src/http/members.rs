//! The membership routes: a channel's members, paged
//! (`GET /v1/channels/{channelId}/members`), and adding or removing one
//! (`/v1/channels/{channelId}/members/{userId}`).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::body::{parse_json, read_body};
use super::caller::{actor_in, caller, caller_from_header_or_query, channel_reader, Caller};
use super::channels::{channel_id, user_id};
use super::error::ApiError;
use super::extract::{ApiPath, ApiQuery, QueryParams};
use super::openapi::ErrorBody;
use crate::commit::MembershipError;
use crate::ids::{now_ms, ChannelId, UserId};
use crate::permissions::{self, Action, Denied, Role};
use crate::state::AppState;
use crate::store::{MemberRow, MembershipChange, StoreError};

/// Members per page of `GET /v1/channels/{channelId}/members` when `limit` is absent.
pub const DEFAULT_MEMBERS_PAGE: u32 = 100;
/// The largest `limit` of `GET /v1/channels/{channelId}/members`.
pub const MAX_MEMBERS_PAGE: u32 = 500;

/// One member as `GET /v1/channels/{channelId}/members` shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberView {
    user_id: String,
    /// `member`, `moderator` or `owner`.
    role: &'static str,
    /// When the member (last) joined, ms since the epoch.
    joined_at: i64,
    /// The member's delivered watermark (0: none).
    delivered_seq: i64,
    /// The member's read watermark (0: none).
    read_seq: i64,
    /// Until when the member is muted (ms since the epoch, §17); absent
    /// when it is not (or its mute has ended).
    #[serde(skip_serializing_if = "Option::is_none")]
    muted_until: Option<i64>,
}

impl MemberView {
    /// `m` as the route shows it at `now` (ms): a mute that ended is not shown.
    fn new(m: MemberRow, now: i64) -> Self {
        Self {
            user_id: m.user_id.as_str().to_owned(),
            role: m.role.as_str(),
            joined_at: m.joined_at,
            delivered_seq: m.delivered_seq,
            read_seq: m.read_seq,
            muted_until: m.muted_until.filter(|&until| until > now),
        }
    }
}

/// A page of a channel's members.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberList {
    /// Members in byte order of `userId`.
    members: Vec<MemberView>,
    /// Whether more members follow the last one.
    has_more: bool,
    /// The channel's last seq when the page was read: `MEMBER` frames with a
    /// higher `afterSeq` are not reflected in it.
    at_seq: i64,
}

/// The query of `GET /v1/channels/{channelId}/members`.
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // a schema: the handler reads the query as pairs.
pub struct MembersQuery {
    /// Members after this user id (exclusive), in byte order.
    after: Option<String>,
    /// Page size, 1 to 500; default 100.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
    /// A user JWT, for browsers that cannot set a header (the header wins).
    #[param(rename = "access_token")]
    access_token: Option<String>,
}

/// `GET /v1/channels/{channelId}/members?after=USERID&limit=N` (a member's
/// user token, or admin): 200 `{"members": [{"userId", "role", "joinedAt",
/// "deliveredSeq", "readSeq", "mutedUntil"?}], "hasMore", "atSeq"}`, members in byte order
/// of `userId` after `after`; `limit` 1..500, default 100. 403 for a
/// non-member or an unknown channel (user token; the same answer, so a user
/// cannot learn which channels exist), 404 for an unknown channel (admin).
#[utoipa::path(
    get,
    path = "/v1/channels/{channelId}/members",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id"), MembersQuery),
    responses(
        (status = 200, description = "A page of members", body = MemberList),
        (status = 400, description = "A bad channel id, after or limit", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a member, or an unknown channel (user token)", body = ErrorBody),
        (status = 404, description = "Unknown channel (admin token)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = []), ("accessToken" = []), ("adminToken" = [])),
)]
pub async fn list_members(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let query = QueryParams::new(query);
    let who = caller_from_header_or_query(&state, &headers, &query)?;
    let ApiPath(raw) = path?;
    let channel = channel_id(&raw)?;
    let after = query.after(UserId::parse)?;
    let limit = query.page_limit(DEFAULT_MEMBERS_PAGE, MAX_MEMBERS_PAGE)?;
    channel_reader(&state, &who, &channel).await?;
    // A member's read and the page are two reads: a member removed in
    // between still gets the page it was allowed a moment before.
    let page = state
        .store
        .members_page(&channel, after.as_ref(), limit)
        .await?
        .ok_or_else(|| match who {
            Caller::Admin => ApiError::not_found("unknown channel"),
            Caller::User(_) => ApiError::forbidden(&permissions::Denied::NotAMember.to_string()),
        })?;
    let body = MemberList {
        members: page.members.into_iter().map(|m| MemberView::new(m, now_ms())).collect(),
        has_more: page.has_more,
        at_seq: page.at_seq,
    };
    Ok(Json(body).into_response())
}

/// The optional `PUT /v1/channels/{channelId}/members/{userId}` body. Like
/// `PATCH /v1/channels/{channelId}`, a change that names a field this
/// server does not apply is refused naming it (`invalid_field`), so a
/// client never takes it as done.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // a schema: the handler reads the body as a JSON object.
pub(super) struct MemberBody {
    /// `member`, `moderator` or `owner`; absent: a new member is a
    /// `member`, an existing one keeps its role.
    #[schema(value_type = Option<String>)]
    role: Option<String>,
    /// Mutes the member until then (ms since the epoch; §17); `null` (or a
    /// time already past) unmutes. Absent: the mute is left as it is.
    muted_until: Option<i64>,
}

/// The shape of the `PUT …/members/{userId}` body, as its refusals name it.
const MEMBER_SHAPE: &str = r#"{"role"?: "member" | "moderator" | "owner", "mutedUntil"?: ms | null}"#;

/// `PUT /v1/channels/{channelId}/members/{userId}` `{"role"?, "mutedUntil"?}`
/// (admin, or an owner or moderator of the channel): 204, also when already
/// a member. A moderator adds `member`s only; setting any other role, or
/// changing an existing member's, needs an owner (or the admin). With
/// `mutedUntil` the member (added first when it was not one) is then muted
/// until then, or unmuted with `null` (§17): a moderator mutes `member`s,
/// an owner anyone; a `MEMBER` `mute` is announced in commit order. 404 for an unknown
/// channel (admin; a user gets 403 as for a channel it is not in), 403 for
/// a direct channel.
#[utoipa::path(
    put,
    path = "/v1/channels/{channelId}/members/{userId}",
    tag = "channels",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("userId" = String, Path, description = "The user id"),
    ),
    request_body(content = MemberBody, description = "Optional: the member's role and mute"),
    responses(
        (status = 204, description = "Member (also when already one)"),
        (status = 400, description = "A bad channel or user id, or a bad body", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The caller's role does not allow it, or a direct channel", body = ErrorBody),
        (status = 409, description = "conflict: adding a user who is being erased (§19)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
        (status = 404, description = "Unknown channel (admin token)", body = ErrorBody),
    ),
    security(("adminToken" = []), ("userJwt" = [])),
)]
pub async fn add_member(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
    raw: Request,
) -> Result<StatusCode, ApiError> {
    // The credentials first, as on every route.
    caller(&state, &headers)?;
    let ApiPath((raw_channel, raw_user)) = path?;
    let channel = channel_id(&raw_channel)?;
    let user = user_id(&raw_user, "userId")?;
    let (actor, by) = actor_in(&state, &headers, &channel).await?;
    permissions::may(actor, Action::ManageMembers).map_err(ApiError::from)?;
    let body = read_body(raw, state.config.max_request_bytes).await?;
    let request: serde_json::Map<String, serde_json::Value> = if body.is_empty() {
        serde_json::Map::new()
    } else {
        parse_json(&body, MEMBER_SHAPE)?
    };
    if let Some(other) = request.keys().find(|k| !matches!(k.as_str(), "role" | "mutedUntil")) {
        return Err(ApiError::invalid_field(
            other,
            "unknown field (role and mutedUntil may be set)",
        ));
    }
    let mute = match request.get("mutedUntil") {
        None => None,
        Some(serde_json::Value::Null) => Some(None),
        Some(value) => match crate::number::integer_value(value) {
            Some(ms) if (0..=crate::ids::MAX_SEQ).contains(&ms) => Some(Some(ms)),
            _ => {
                return Err(ApiError::invalid_field(
                    "mutedUntil",
                    "must be ms since the epoch, or null to unmute",
                ))
            }
        },
    };
    let role = match request.get("role") {
        None => None,
        Some(serde_json::Value::String(raw)) => Some(
            Role::parse(raw).ok_or_else(|| ApiError::invalid_field("role", "must be member, moderator or owner"))?,
        ),
        Some(_) => return Err(ApiError::invalid_field("role", "must be member, moderator or owner")),
    };
    // A user who blocks the owner or moderator is not added by them (§17;
    // a member they block is still theirs to moderate). Read before the
    // change: a block made in between lets one add through.
    if let Some(actor) = by.as_ref().filter(|actor| **actor != user) {
        let blocks_actor = !state
            .store
            .blockers_among(actor, std::slice::from_ref(&user))
            .await?
            .is_empty();
        if blocks_actor && !state.store.is_member(&channel, &user).await? {
            return Err(ApiError::forbidden("this user blocks you").with_reason("blocked"));
        }
    }
    // Judged by the store under the channel lock (moderators add members
    // only; setting a role needs an owner): permissions::may_change_member.
    let change = MembershipChange::Add(role);
    change_membership(&state, &channel, &user, change, by.as_ref()).await?;
    tracing::info!(channel_id = %channel, user_id = %user, ?role, "member added");
    if let Some(until) = mute {
        // Judged under the channel lock too: a moderator mutes members
        // only (permissions::may_change_member, Discipline).
        change_membership(&state, &channel, &user, MembershipChange::Mute(until), by.as_ref()).await?;
        tracing::info!(channel_id = %channel, user_id = %user, ?until, "member muted");
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /v1/channels/{channelId}/members/{userId}?ban=true|false` (admin,
/// or an owner or moderator of the channel): 204, also when not a member. A
/// moderator removes `member`s only; an owner anyone. With `ban=true` the
/// user is also banned (§17): a `MEMBER` `ban`, `CHANNEL_REMOVED` with
/// reason `banned`, and joining again is refused (403, reason `banned`)
/// until the ban is lifted or a moderator or the admin adds it back; a
/// non-member is banned too. 404 for an unknown channel (admin; a user gets
/// 403), 403 for a direct channel, 400 `invalid_field` for another `ban`.
#[utoipa::path(
    delete,
    path = "/v1/channels/{channelId}/members/{userId}",
    tag = "channels",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("userId" = String, Path, description = "The user id"),
        ("ban" = Option<bool>, Query, description = "true: also ban the user (§17)"),
    ),
    responses(
        (status = 204, description = "Not a member (also when not one); banned with ban=true"),
        (status = 400, description = "A bad channel or user id, or a ban that is not true or false", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The caller's role does not allow it, or a direct channel", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
        (status = 404, description = "Unknown channel (admin token)", body = ErrorBody),
    ),
    security(("adminToken" = []), ("userJwt" = [])),
)]
pub async fn remove_member(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Result<StatusCode, ApiError> {
    // The credentials first, as on every route.
    caller(&state, &headers)?;
    let ApiPath((raw_channel, raw_user)) = path?;
    let ban = match QueryParams::new(query).field("ban")? {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(ApiError::invalid_field("ban", "must be true or false")),
    };
    let channel = channel_id(&raw_channel)?;
    let user = user_id(&raw_user, "userId")?;
    let (actor, by) = actor_in(&state, &headers, &channel).await?;
    permissions::may(actor, Action::ManageMembers).map_err(ApiError::from)?;
    let change = if ban {
        MembershipChange::Ban
    } else {
        MembershipChange::Remove
    };
    change_membership(&state, &channel, &user, change, by.as_ref()).await?;
    tracing::info!(channel_id = %channel, user_id = %user, ban, "member removed");
    Ok(StatusCode::NO_CONTENT)
}

/// Makes `change` to `user`'s membership of `channel` on the channel's commit
/// task, asked by `by` (`None`: the admin token), which announces it.
///
/// # Errors
/// 403 for a user asking of a channel it is not in (as for an unknown one),
/// else the store's refusal.
pub(super) async fn change_membership(
    state: &AppState,
    channel: &ChannelId,
    user: &UserId,
    change: MembershipChange,
    by: Option<&UserId>,
) -> Result<(), ApiError> {
    match state.commits.change_membership(channel, user, change, by).await {
        Ok(_) => Ok(()),
        Err(MembershipError::Store(StoreError::NotFound)) if by.is_some() => Err(ApiError::from(Denied::NotAMember)),
        Err(other) => Err(other.into()),
    }
}
