//! The credential checks shared by the routes: who made a request (the
//! admin token or a user JWT, from the header or, on the routes that allow
//! it, the `access_token` query parameter), who may read or act on a
//! channel, and how a refused credential is logged and answered.

use axum::http::HeaderMap;

use super::error::ApiError;
use super::extract::QueryParams;
use crate::auth::{self, AuthUser};
use crate::ids::{ChannelId, UserId};
use crate::permissions::{self, Action, Actor};
use crate::state::AppState;

/// Who made an authenticated request.
#[derive(Debug)]
pub enum Caller {
    /// The admin token.
    Admin,
    /// A user JWT.
    User(AuthUser),
}

/// Checks for the admin token.
///
/// # Errors
/// 401 without a bearer token or with an invalid one; 403 for a valid user token.
pub fn require_admin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let actor = match caller(state, headers)? {
        Caller::Admin => Actor::Admin,
        Caller::User(user) => {
            tracing::info!(
                target: "chatd::auth",
                user_id = %user.user_id,
                reason = "a user token on an admin route",
                "admin credential refused"
            );
            Actor::User(None)
        }
    };
    permissions::may(actor, Action::Administer).map_err(|denied| ApiError::forbidden(&denied.to_string()))
}

/// Identifies the caller from `Authorization: Bearer`: the admin token or a user JWT.
///
/// # Errors
/// 401 when the header is missing or the token is neither.
pub fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let Some(token) = auth::bearer(headers) else {
        return Err(refused("header", "missing bearer token"));
    };
    if state.auth.is_admin_token(token) {
        return Ok(Caller::Admin);
    }
    state
        .auth
        .verify(token)
        .map(Caller::User)
        .map_err(|e| refused("header", &e.to_string()))
}

/// A credential refused: logged at `info` (target `chatd::auth`) with where
/// it came from (`header`, `query`) and the reason, never the token itself
/// (no [`auth::AuthError`] text holds it); the 401 to answer.
pub(crate) fn refused(from: &'static str, reason: &str) -> ApiError {
    tracing::info!(target: "chatd::auth", from, reason, "credential refused");
    ApiError::unauthorized(reason)
}

/// Who reads `channel` through a route open to its members: `None` for the
/// admin token (the route answers 404 itself for an unknown channel), the
/// user for a member its role lets read ([`permissions::Action::Read`]).
///
/// # Errors
/// 403 `forbidden` for a user who may not (not a member, or an unknown
/// channel: the same answer); the store's error.
pub(crate) async fn channel_reader<'a>(
    state: &AppState,
    who: &'a Caller,
    channel: &ChannelId,
) -> Result<Option<&'a UserId>, ApiError> {
    let actor = match who {
        Caller::Admin => return Ok(None),
        Caller::User(user) => Actor::User(state.store.role_of(channel, &user.user_id).await?),
    };
    permissions::may(actor, Action::Read).map_err(|denied| ApiError::forbidden(&denied.to_string()))?;
    Ok(match who {
        Caller::User(user) => Some(&user.user_id),
        Caller::Admin => None,
    })
}

/// Who acts on a channel: the admin token (`Actor::Admin`, no user), or a
/// user with its role in the channel (`None`: not a member, or an unknown
/// channel). The role is read before the change, for an early refusal; the
/// store judges the change again under the channel lock.
///
/// # Errors
/// 401 for no or a refused token; the store's error.
pub(crate) async fn actor_in(
    state: &AppState,
    headers: &HeaderMap,
    channel: &ChannelId,
) -> Result<(Actor, Option<UserId>), ApiError> {
    Ok(match caller(state, headers)? {
        Caller::Admin => (Actor::Admin, None),
        Caller::User(user) => (
            Actor::User(state.store.role_of(channel, &user.user_id).await?),
            Some(user.user_id),
        ),
    })
}

/// Identifies the caller of a route open to users: the `Authorization`
/// header (admin token or user JWT) when present, else the `access_token`
/// query parameter, which only ever carries a user JWT (the admin token is
/// never accepted in a URL, where proxies log it).
///
/// # Errors
/// 401 when both are missing or the token is refused.
pub(crate) fn caller_from_header_or_query(
    state: &AppState,
    headers: &HeaderMap,
    query: &QueryParams,
) -> Result<Caller, ApiError> {
    if auth::bearer(headers).is_some() {
        return caller(state, headers);
    }
    let token = query
        .get("access_token")
        .map_err(|repeated| refused("query", &repeated.to_string()))?
        .ok_or_else(|| refused("query", "missing bearer token"))?;
    state
        .auth
        .verify(token)
        .map(Caller::User)
        .map_err(|e| refused("query", &e.to_string()))
}
