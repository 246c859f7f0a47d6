//! The access log and the HTTP metrics: for every request, one `info` line
//! (target `chatd::access`: method, route template, path, status, duration)
//! and `chatd_http_requests_total` / `chatd_http_request_duration_seconds`.
//!
//! The line holds the path only, never the query string (`access_token`
//! and signed attachment URLs carry credentials there) nor any header.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;

use crate::telemetry;

/// The `route` of a request no route matched (a 404 or the console when off).
pub const UNMATCHED: &str = "unmatched";

/// Logs and counts the request once its response head is ready. For the
/// WebSocket route that is the `101` (the session's life is not counted).
pub(super) async fn observe(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED.to_owned(), |path| path.as_str().to_owned());
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let took = started.elapsed();
    let status = response.status().as_u16();
    telemetry::http_request(&route, status, took);
    tracing::info!(
        target: "chatd::access",
        method = %method,
        route = %route,
        path = %path,
        status,
        duration_ms = took.as_secs_f64() * 1000.0,
        "request"
    );
    response
}
