//! The HTTP API (`docs/protocol.md` §4): router assembly and the request
//! limits applied to every route. The JSON error shape is [`error`], the
//! extractors [`extract`], the credential checks shared by the routes
//! `caller.rs` ([`Caller`], [`require_admin`], [`caller()`]).

mod access;
mod admin_routes;
pub mod asyncapi;
mod attachment_get;
mod attachments;
mod blocks;
mod body;
mod caller;
mod channel_patch;
mod channels;
pub mod console;
pub mod error;
mod export;
pub mod extract;
mod flags;
mod health;
mod me;
mod members;
mod message_delete;
mod messages;
mod moderation;
pub mod openapi;
mod routes;
mod search;
mod settings;
mod tokens;
mod users;
pub mod ws;

pub use admin_routes::{is_admin_route, ADMIN_ROUTES};
pub use caller::{caller, require_admin, Caller};
pub use error::ApiError;
pub use extract::{ApiPath, ApiQuery, QueryParams, RepeatedParam};

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::TraceLayer;

use crate::state::AppState;

/// The user routes a browser on a `cors_allowed_origins` origin may call:
/// (method, path template). Only these ever send CORS headers; the admin
/// routes, the WebSocket (not subject to CORS) and the rest never do.
pub const CORS_ROUTES: &[(&str, &str)] = &[
    ("GET", "/v1/channels/{channelId}/messages"),
    ("GET", "/v1/channels/{channelId}/members"),
    ("GET", "/v1/me/channels"),
    ("POST", "/v1/me/channels"),
    ("PUT", "/v1/me/channels/{channelId}"),
    ("DELETE", "/v1/me/channels/{channelId}"),
    ("PUT", "/v1/me/channels/{channelId}/settings"),
    ("GET", "/v1/directory"),
    ("GET", "/v1/me/search"),
    ("PUT", "/v1/me/direct/{userId}"),
    // An owner's or moderator's token works on these since version 1.2.
    ("PUT", "/v1/channels/{channelId}/members/{userId}"),
    ("DELETE", "/v1/channels/{channelId}/members/{userId}"),
    ("PATCH", "/v1/channels/{channelId}"),
    ("DELETE", "/v1/channels/{channelId}"),
    // Moderation (§17): an owner's or moderator's token.
    ("GET", "/v1/channels/{channelId}/bans"),
    ("DELETE", "/v1/channels/{channelId}/bans/{userId}"),
    ("DELETE", "/v1/channels/{channelId}/messages/{messageId}"),
    ("GET", "/v1/me/blocks"),
    ("PUT", "/v1/me/blocks/{userId}"),
    ("DELETE", "/v1/me/blocks/{userId}"),
    ("POST", "/v1/messages/{messageId}/flags"),
    // Attachments (§15).
    ("POST", "/v1/channels/{channelId}/attachments"),
    ("GET", "/v1/attachments/{attachmentId}"),
    ("GET", "/v1/attachments/{attachmentId}/thumbnail"),
];

/// Builds the router of the `listen` address: every route and layer, or,
/// when `admin_listen` is set, every route but the admin routes (404 there,
/// and the admin token refused: [`admin_routes`]).
pub fn router(state: AppState) -> Router {
    let hide_admin = state.config.admin_listen.is_some();
    routes_with_layers(state, hide_admin)
}

/// Builds the router of the `admin_listen` address: every route and layer,
/// the admin routes included.
pub fn admin_router(state: AppState) -> Router {
    routes_with_layers(state, false)
}

/// Every route with the layers applied to all of them; `hide_admin`: with
/// [`admin_routes::hide_admin_routes`] innermost, so an admin route is
/// answered as an unknown route is.
fn routes_with_layers(state: AppState, hide_admin: bool) -> Router {
    let (routes, api) = routes::api_routes().split_for_parts();
    // Every route's HTTP series at zero from the start.
    crate::telemetry::catalog::register_routes(api.paths.paths.keys().map(String::as_str));
    if state.config.console_enabled {
        crate::telemetry::catalog::register_routes(console::ROUTES.iter().copied());
    }
    crate::telemetry::catalog::register_routes([access::UNMATCHED]);
    let cors = cors_layer(&state.config.cors_allowed_origins);
    let routes = routes
        // The web console is a page for people, not part of the API: served
        // beside it, not in `/v1/openapi.json`.
        .merge(console::routes(state.config.console_enabled))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "bad_request",
                "method not allowed on this route",
            )
        });
    let routes = if hide_admin {
        routes.layer(axum::middleware::from_fn_with_state(
            state.clone(),
            admin_routes::hide_admin_routes,
        ))
    } else {
        routes
    };
    routes
        // The body extractor's limit (axum's default is 2 MiB), and the
        // same limit on a declared length before anything reads the body.
        .layer(axum::extract::DefaultBodyLimit::max(state.config.max_request_bytes))
        .layer(axum::middleware::from_fn_with_state(
            state.config.max_request_bytes,
            declared_body_limit,
        ))
        .layer(axum::middleware::from_fn(one_authorization))
        .layer(axum::middleware::from_fn_with_state(cors, user_cors))
        .layer(axum::middleware::from_fn_with_state(state.config.handshake_timeout(), request_deadline))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error").into_response()
        }))
        // Outside the panic catcher and the deadline: their answers are counted and logged.
        .layer(axum::middleware::from_fn(access::observe))
        .layer(
            // Log the path only: the query may hold an access_token.
            TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
                tracing::info_span!("http", method = %request.method(), path = %access::logged_path(request.uri().path()))
            }),
        )
        .layer(SetSensitiveRequestHeadersLayer::new([header::AUTHORIZATION]))
        .with_state(state)
}

/// The CORS answers of the user routes: the listed origins and the layer
/// that answers them.
#[derive(Clone)]
struct UserCors {
    origins: Vec<header::HeaderValue>,
    layer: CorsLayer,
}

/// The CORS answers for `origins`; `None` when there are none (then no
/// request gets a CORS header, not even `Vary`).
fn cors_layer(origins: &[String]) -> Option<UserCors> {
    let origins: Vec<header::HeaderValue> = origins
        .iter()
        .filter_map(|origin| header::HeaderValue::from_str(origin).ok())
        .collect();
    if origins.is_empty() {
        return None;
    }
    let layer = CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins.clone()))
        .allow_methods([
            axum::http::Method::GET,
            axum::http::Method::POST,
            axum::http::Method::PUT,
            axum::http::Method::PATCH,
            axum::http::Method::DELETE,
        ])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE])
        .max_age(std::time::Duration::from_secs(600));
    Some(UserCors { origins, layer })
}

/// Whether a request is for one of [`CORS_ROUTES`]: its path matches the
/// template (`{…}` is one segment) and its method (for a preflight, the
/// method it asks about) is the route's.
fn is_cors_route(request: &axum::extract::Request) -> bool {
    let method = if request.method() == axum::http::Method::OPTIONS {
        match request.headers().get(header::ACCESS_CONTROL_REQUEST_METHOD) {
            Some(asked) => asked.as_bytes(),
            None => return false,
        }
    } else {
        request.method().as_str().as_bytes()
    };
    let path = request.uri().path();
    CORS_ROUTES
        .iter()
        .any(|(route_method, template)| route_method.as_bytes() == method && admin_routes::path_matches(template, path))
}

/// Applies the CORS answers ([`cors_layer`]) to the user routes of
/// [`CORS_ROUTES`] only, for a listed `Origin`: a preflight there is
/// answered here, and the request gets `Access-Control-Allow-Origin`. Every
/// other request passes without any CORS header (tower-http's layer would
/// answer an unlisted origin's preflight with the allowed methods and
/// headers, only without `Allow-Origin`); on a user route it gets `Vary:
/// Origin`, so a cache does not hand it to a listed origin.
async fn user_cors(
    axum::extract::State(cors): axum::extract::State<Option<UserCors>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use tower::{Layer, ServiceExt};
    let Some(cors) = cors.filter(|_| is_cors_route(&request)) else {
        return next.run(request).await;
    };
    let listed = request
        .headers()
        .get(header::ORIGIN)
        .is_some_and(|origin| cors.origins.contains(origin));
    if !listed {
        let mut response = next.run(request).await;
        response
            .headers_mut()
            .append(header::VARY, header::HeaderValue::from_static("origin"));
        return response;
    }
    match cors.layer.layer(next).oneshot(request).await {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    }
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
    // Uploads have their own limit (`max_attachment_bytes`), checked by the route.
    if attachments::is_upload(request.method(), request.uri().path()) {
        return next.run(request).await;
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            &body::body_too_large(limit),
        )
        .into_response();
    }
    next.run(request).await
}

/// Bounds the whole HTTP request (head, body and handling) by
/// `handshake_timeout_ms`: a client that sends its body a byte at a time gets
/// 408 instead of holding the connection. A WebSocket upgrade answers at once,
/// so upgraded sessions are not affected. An upload (up to
/// `max_attachment_bytes`, from a phone on a slow link) is not bounded as a
/// whole: its route answers 408 when no body bytes arrive for that long.
async fn request_deadline(
    axum::extract::State(limit): axum::extract::State<std::time::Duration>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if attachments::is_upload(request.method(), request.uri().path()) {
        return next.run(request).await;
    }
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
