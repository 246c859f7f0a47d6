//! The HTTP API (`docs/protocol.md` §4): router assembly, the request limits
//! applied to every route, and the credential checks shared by the routes.
//! The JSON error shape is [`error`], the extractors [`extract`].

mod backend_api;
mod body;
mod channels;
pub mod error;
pub mod extract;
mod health;
mod tokens;

pub use error::ApiError;
pub use extract::{ApiPath, ApiQuery, QueryParams, RepeatedParam};

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::TraceLayer;

use crate::auth::{self, AuthUser};
use crate::gateway;
use crate::state::AppState;

/// Builds the router with every route and layer.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/ws", get(gateway::ws_handler))
        .route(
            "/v1/channels",
            post(channels::create_channel).get(backend_api::list_channels),
        )
        .route(
            "/v1/channels/{channel_id}",
            get(channels::get_channel)
                .patch(backend_api::patch_channel)
                .delete(backend_api::delete_channel),
        )
        .route("/v1/me/channels", get(backend_api::my_channels))
        .route(
            "/v1/channels/{channel_id}/members/{user_id}",
            put(channels::add_member).delete(channels::remove_member),
        )
        .route(
            "/v1/channels/{channel_id}/messages",
            get(channels::history).post(backend_api::post_message),
        )
        .route("/v1/tokens", post(tokens::create_token))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics))
        .merge(crate::console::routes(state.config.console_enabled))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "bad_request", "method not allowed on this route")
        })
        // The body extractor's limit (axum's default is 2 MiB), and the
        // same limit on a declared length before anything reads the body.
        .layer(axum::extract::DefaultBodyLimit::max(state.config.max_request_bytes))
        .layer(axum::middleware::from_fn_with_state(
            state.config.max_request_bytes,
            declared_body_limit,
        ))
        .layer(axum::middleware::from_fn(one_authorization))
        .layer(axum::middleware::from_fn_with_state(state.config.handshake_timeout(), request_deadline))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error").into_response()
        }))
        .layer(
            // Log the path only: the query may hold an access_token.
            TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
                tracing::info_span!("http", method = %request.method(), path = %request.uri().path())
            }),
        )
        .layer(SetSensitiveRequestHeadersLayer::new([header::AUTHORIZATION]))
        .with_state(state)
}

/// Answers 401 to a request with more than one `Authorization` header, on
/// every route: a singleton field (RFC 9110 §11.6.2), and which of several
/// counts would depend on the parser (a proxy that reads the last and a
/// server that reads the first would see two different users).
async fn one_authorization(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    if request.headers().get_all(header::AUTHORIZATION).iter().nth(1).is_some() {
        return ApiError::unauthorized("Authorization header given more than once").into_response();
    }
    next.run(request).await
}

/// The message of a 413 for a body over `limit` bytes.
fn body_too_large(limit: usize) -> String {
    match limit {
        1 => "request body over 1 byte".to_owned(),
        _ if limit.is_multiple_of(1024 * 1024) => format!("request body over {} MiB", limit / (1024 * 1024)),
        _ => format!("request body over {limit} bytes"),
    }
}

/// Answers 413 at once to a request whose `Content-Length` says its body is
/// over `limit` (`max_request_bytes`), before any handler (or
/// authentication) and without reading the body: the extractor alone would
/// wait for the body to arrive, and a client that declares a gigabyte and
/// sends nothing would hold the connection until the request deadline.
async fn declared_body_limit(
    axum::extract::State(limit): axum::extract::State<usize>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "bad_request", &body_too_large(limit)).into_response();
    }
    next.run(request).await
}

/// Bounds the whole HTTP request (head, body and handling) by
/// `handshake_timeout_ms`: a client that sends its body a byte at a time gets
/// 408 instead of holding the connection. A WebSocket upgrade answers at once,
/// so upgraded sessions are not affected.
async fn request_deadline(
    axum::extract::State(limit): axum::extract::State<std::time::Duration>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "bad_request",
            "request not completed in time",
        )
        .into_response(),
    }
}

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
    match caller(state, headers)? {
        Caller::Admin => Ok(()),
        Caller::User(_) => Err(ApiError::forbidden("admin token required")),
    }
}

/// Identifies the caller from `Authorization: Bearer`: the admin token or a user JWT.
///
/// # Errors
/// 401 when the header is missing or the token is neither.
pub fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let token = auth::bearer(headers).ok_or_else(|| ApiError::unauthorized("missing bearer token"))?;
    if state.auth.is_admin_token(token) {
        return Ok(Caller::Admin);
    }
    state
        .auth
        .verify(token)
        .map(Caller::User)
        .map_err(|e| ApiError::unauthorized(&e.to_string()))
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
        .map_err(|repeated| ApiError::unauthorized(&repeated.to_string()))?
        .ok_or_else(|| ApiError::unauthorized("missing bearer token"))?;
    state
        .auth
        .verify(token)
        .map(Caller::User)
        .map_err(|e| ApiError::unauthorized(&e.to_string()))
}
