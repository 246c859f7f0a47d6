//! The WebSocket gateway: `GET /v1/ws`. Authenticates before the upgrade
//! (401 otherwise), applies the frame-size and buffer limits, and hands the
//! socket to [`session::run`].

pub mod reader;
pub mod session;
pub mod sink;

use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use tracing::Instrument;

use crate::auth;
use crate::http::error::ApiError;
use crate::http::extract::QueryParams;
use crate::limits::ConnectionRefused;
use crate::state::AppState;

/// Upgrades an authenticated request to a chat session.
///
/// The token comes from `Authorization: Bearer` or else the `access_token`
/// query parameter. Refusals: 401 `unauthorized` for a missing or bad token
/// (before any upgrade), 400 when the request is not a WebSocket upgrade,
/// 429 `rate_limited` when the user has `max_connections_per_user` sessions,
/// 503 when the node has `max_connections` sessions or is shutting down.
#[utoipa::path(
    get,
    path = "/v1/ws",
    tag = "websocket",
    params(crate::http::openapi::WsQuery),
    responses(
        (status = 101, description = "Switching to the WebSocket protocol (docs/protocol.md, frames)"),
        (status = 400, description = "Not a WebSocket upgrade", body = crate::http::openapi::ErrorBody),
        (status = 401, description = "No or a refused user token", body = crate::http::openapi::ErrorBody),
        (status = 429, description = "max_connections_per_user sessions open", body = crate::http::openapi::ErrorBody),
        (status = 503, description = "max_connections reached or shutting down", body = crate::http::openapi::ErrorBody),
    ),
    security(("userJwt" = []), ("accessToken" = [])),
)]
pub async fn ws_handler(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let query = QueryParams::new(query.map(|Query(pairs)| pairs).unwrap_or_default());
    let (token, from): (Option<String>, &'static str) = match auth::bearer(&headers) {
        Some(token) => (Some(token.to_owned()), "header"),
        // The header wins; without it, the query's one `access_token`.
        None => match query.get("access_token") {
            Ok(token) => (token.map(str::to_owned), "query"),
            Err(repeated) => return crate::http::caller::refused("query", &repeated.to_string()).into_response(),
        },
    };
    let Some(token) = token else {
        return crate::http::caller::refused(from, "missing bearer token").into_response();
    };
    let user = match state.auth.verify(&token) {
        Ok(user) => user,
        Err(e) => return crate::http::caller::refused(from, &e.to_string()).into_response(),
    };
    if state.shutdown.is_cancelled() {
        return ApiError::unavailable("server is shutting down").into_response();
    }
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(rejection) => return ApiError::bad_request(&rejection.body_text()).into_response(),
    };
    // axum checks that the key is there, not what it is.
    let key = headers.get(axum::http::header::SEC_WEBSOCKET_KEY);
    if !key.is_some_and(|key| is_websocket_key(key.as_bytes())) {
        return ApiError::bad_request("Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455 §4.2.1)").into_response();
    }
    let permit = match state.limits.acquire(&user.user_id) {
        Ok(permit) => permit,
        Err(refused @ ConnectionRefused::PerUser) => {
            return ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", &refused.to_string()).into_response()
        }
        Err(refused @ ConnectionRefused::Total) => return ApiError::unavailable(&refused.to_string()).into_response(),
    };
    let config = &state.config;
    let tracker = state.sessions.clone();
    upgrade
        .max_message_size(config.max_frame_bytes)
        .max_frame_size(config.max_frame_bytes)
        .read_buffer_size(config.ws_read_buffer_bytes)
        .write_buffer_size(config.ws_write_buffer_bytes)
        // tungstenite's default is unbounded: a client that never reads and
        // sends pings made it queue pongs in this buffer without end (about
        // 200 MB/s). The session's byte bound covers it too; past it a pong
        // replaces the unsent one.
        .max_write_buffer_size(config.ws_write_buffer_bytes.saturating_add(config.outbound_queue_bytes))
        // A client that resets during its handshake: its own doing, and
        // cheap to repeat, so not a warning (it flooded the log).
        .on_failed_upgrade(|error| tracing::debug!(%error, "websocket upgrade failed"))
        .on_upgrade(move |socket| {
            let span = tracing::info_span!("session", user_id = %user.user_id);
            tracker.track_future(session::run(socket, state, user, permit).instrument(span))
        })
}

/// Whether `key` is a `Sec-WebSocket-Key` as RFC 6455 §4.2.1 requires: 16
/// bytes in base64, that is 22 characters of its alphabet and `==` (every
/// client sends 16 random bytes; before, a 5,000-character key was upgraded).
fn is_websocket_key(key: &[u8]) -> bool {
    key.len() == 24
        && key.ends_with(b"==")
        && key[..22]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
}
