//! The admin routes and the `listen` address's view of them when the admin
//! API has an address of its own (`admin_listen`, `docs/configuration.md`).
//!
//! Unset, one router serves everything on `listen`, as it always did. Set,
//! the admin address serves that same router, and `listen` serves it behind
//! [`hide_admin_routes`]: the admin routes answer 404 there, as an unknown
//! route does, and the admin token is refused (401) on the routes that take
//! it besides a user token (members, channel changes, history, deletes), so
//! nothing reachable on `listen` acts with the admin's rights.

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use crate::state::AppState;

/// The routes only the admin token may call, (method, path template), and
/// `GET /metrics` (the operators' scrape, with no credentials): with
/// `admin_listen` set, served on that address only. A `GET` includes its
/// `HEAD`. `tests/api/admin_listen.rs` checks this list against the
/// operations of `/v1/openapi.json` whose only credential is `adminToken`.
pub const ADMIN_ROUTES: &[(&str, &str)] = &[
    ("GET", "/v1/channels"),
    ("POST", "/v1/channels"),
    ("GET", "/v1/channels/{channelId}"),
    ("POST", "/v1/channels/{channelId}/messages"),
    ("POST", "/v1/tokens"),
    ("GET", "/v1/flags"),
    ("GET", "/v1/users/{userId}/export"),
    ("DELETE", "/v1/users/{userId}"),
    ("GET", "/metrics"),
];

/// Whether `path` matches `template`: the same number of segments, each
/// `{…}` of the template standing for one non-empty segment.
pub(crate) fn path_matches(template: &str, path: &str) -> bool {
    let mut template = template.split('/');
    let mut path = path.split('/');
    loop {
        match (template.next(), path.next()) {
            (None, None) => return true,
            (Some(t), Some(p)) if (t.starts_with('{') && !p.is_empty()) || t == p => {}
            _ => return false,
        }
    }
}

/// Whether `method` `path` is one of [`ADMIN_ROUTES`].
pub fn is_admin_route(method: &Method, path: &str) -> bool {
    let method = if method == Method::HEAD { &Method::GET } else { method };
    ADMIN_ROUTES
        .iter()
        .any(|(route_method, template)| method.as_str() == *route_method && path_matches(template, path))
}

/// What `Authorization` becomes on `listen` in place of the admin token: a
/// token no route accepts.
const REFUSED_BEARER: &str = "Bearer -";

/// The `listen` address's layer when `admin_listen` is set: 404
/// `not_found` for an admin route (the answer of an unknown route); the
/// admin token in `Authorization` taken for a token no route accepts, so
/// each route refuses it (401 `unauthorized`, saying why) where it checks
/// credentials, after its own 404 or 405. (A 405's `Allow`, which axum adds
/// outside this layer, still names a path's admin methods:
/// `docs/known-issues.md`.)
pub(crate) async fn hide_admin_routes(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if is_admin_route(request.method(), request.uri().path()) {
        return ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route").into_response();
    }
    let admin_token = crate::auth::bearer(request.headers()).is_some_and(|token| state.auth.is_admin_token(token));
    if admin_token {
        if state.auth.is_admin_token("-") {
            request.headers_mut().remove(header::AUTHORIZATION);
        } else {
            request
                .headers_mut()
                .insert(header::AUTHORIZATION, HeaderValue::from_static(REFUSED_BEARER));
        }
    }
    let response = next.run(request).await;
    if admin_token && response.status() == StatusCode::UNAUTHORIZED {
        return ApiError::unauthorized("the admin token is accepted only on the admin address (admin_listen)")
            .into_response();
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_one_segment_per_parameter() {
        assert!(path_matches("/v1/channels/{channelId}", "/v1/channels/room"));
        assert!(!path_matches("/v1/channels/{channelId}", "/v1/channels/"));
        assert!(!path_matches("/v1/channels/{channelId}", "/v1/channels/room/messages"));
        assert!(!path_matches("/v1/channels", "/v1/channels/room"));
        assert!(path_matches("/metrics", "/metrics"));
    }

    #[test]
    fn admin_routes_are_told_by_method_and_path() {
        assert!(is_admin_route(&Method::POST, "/v1/channels/room/messages"));
        assert!(!is_admin_route(&Method::GET, "/v1/channels/room/messages"));
        assert!(is_admin_route(&Method::HEAD, "/v1/channels/room"));
        assert!(!is_admin_route(&Method::PATCH, "/v1/channels/room"));
        assert!(!is_admin_route(&Method::GET, "/v1/me/channels"));
        assert!(is_admin_route(&Method::GET, "/metrics"));
    }
}
