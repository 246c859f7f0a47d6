//! A channel's bans (protocol.md §17): listed
//! (`GET /v1/channels/{channelId}/bans`) and lifted
//! (`DELETE /v1/channels/{channelId}/bans/{userId}`). Banning itself is
//! `DELETE …/members/{userId}?ban=true` (`members.rs`).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use super::caller::{actor_in, caller};
use super::channels::{channel_id, user_id};
use super::error::ApiError;
use super::extract::{ApiPath, ApiQuery, QueryParams};
use super::openapi::ErrorBody;
use crate::ids::UserId;
use crate::permissions::{self, Action, Denied};
use crate::state::AppState;
use crate::store::{BanRow, StoreError};

/// Bans per page of `GET /v1/channels/{channelId}/bans` when `limit` is absent.
pub const DEFAULT_BANS_PAGE: u32 = 100;
/// The largest `limit` of `GET /v1/channels/{channelId}/bans`.
pub const MAX_BANS_PAGE: u32 = 500;

/// One ban as `GET /v1/channels/{channelId}/bans` shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BanView {
    /// The banned user.
    user_id: String,
    /// When it was banned, ms since the epoch.
    banned_at: i64,
    /// The owner or moderator who banned it; absent when the admin token did,
    /// or when that user was erased since (§19).
    #[serde(skip_serializing_if = "Option::is_none")]
    actor_id: Option<String>,
}

impl From<BanRow> for BanView {
    fn from(ban: BanRow) -> Self {
        Self {
            user_id: ban.user_id.as_str().to_owned(),
            banned_at: ban.banned_at,
            actor_id: ban.banned_by.map(|u| u.as_str().to_owned()),
        }
    }
}

/// A page of a channel's bans.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BanList {
    /// Bans in byte order of `userId`.
    bans: Vec<BanView>,
    /// Whether more bans follow the last one.
    has_more: bool,
}

/// The query of `GET /v1/channels/{channelId}/bans`.
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // a schema: the handler reads the query as pairs.
pub struct BansQuery {
    /// Bans after this user id (exclusive), in byte order.
    after: Option<String>,
    /// Page size, 1 to 500; default 100.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
}

/// `GET /v1/channels/{channelId}/bans?after=USERID&limit=N` (an owner or
/// moderator of the channel, or admin): 200 `{"bans": [{"userId",
/// "bannedAt", "actorId"?}], "hasMore"}` in byte order of `userId` after
/// `after`; `limit` 1..500, default 100. 403 for a user who is not a
/// moderator (or an unknown channel), 404 for an unknown channel (admin).
#[utoipa::path(
    get,
    path = "/v1/channels/{channelId}/bans",
    tag = "moderation",
    params(("channelId" = String, Path, description = "The channel id"), BansQuery),
    responses(
        (status = 200, description = "A page of bans", body = BanList),
        (status = 400, description = "A bad channel id, after or limit", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a moderator, or an unknown channel (user token)", body = ErrorBody),
        (status = 404, description = "Unknown channel (admin token)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("adminToken" = []), ("userJwt" = [])),
)]
pub async fn list_bans(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    caller(&state, &headers)?;
    let ApiPath(raw) = path?;
    let channel = channel_id(&raw)?;
    let query = QueryParams::new(query);
    let after = query.after(UserId::parse)?;
    let limit = query.page_limit(DEFAULT_BANS_PAGE, MAX_BANS_PAGE)?;
    let (actor, by) = actor_in(&state, &headers, &channel).await?;
    permissions::may(actor, Action::ManageMembers).map_err(ApiError::from)?;
    let page = state
        .store
        .bans_page(&channel, after.as_ref(), limit)
        .await?
        .ok_or_else(|| match by {
            None => ApiError::not_found("unknown channel"),
            Some(_) => ApiError::from(Denied::NotAMember),
        })?;
    let body = BanList {
        bans: page.bans.into_iter().map(BanView::from).collect(),
        has_more: page.has_more,
    };
    Ok(Json(body).into_response())
}

/// `DELETE /v1/channels/{channelId}/bans/{userId}` (an owner or moderator of
/// the channel, or admin): lifts the user's ban; 204, also when it was not
/// banned. 403 for a user who is not a moderator (or an unknown channel),
/// 404 for an unknown channel (admin).
#[utoipa::path(
    delete,
    path = "/v1/channels/{channelId}/bans/{userId}",
    tag = "moderation",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("userId" = String, Path, description = "The user id"),
    ),
    responses(
        (status = 204, description = "Not banned (also when it was not)"),
        (status = 400, description = "A bad channel or user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a moderator, or an unknown channel (user token)", body = ErrorBody),
        (status = 404, description = "Unknown channel (admin token)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("adminToken" = []), ("userJwt" = [])),
)]
pub async fn lift_ban(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
) -> Result<StatusCode, ApiError> {
    caller(&state, &headers)?;
    let ApiPath((raw_channel, raw_user)) = path?;
    let channel = channel_id(&raw_channel)?;
    let user = user_id(&raw_user, "userId")?;
    let (actor, by) = actor_in(&state, &headers, &channel).await?;
    permissions::may(actor, Action::ManageMembers).map_err(ApiError::from)?;
    match state.store.unban(&channel, &user, by.as_ref()).await {
        Ok(lifted) => {
            tracing::info!(channel_id = %channel, user_id = %user, lifted, "ban lifted");
            Ok(StatusCode::NO_CONTENT)
        }
        Err(StoreError::NotFound) if by.is_some() => Err(ApiError::from(Denied::NotAMember)),
        Err(other) => Err(other.into()),
    }
}
