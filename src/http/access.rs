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

/// Longest path written to a log line, bytes: a longer one (anyone may send
/// a path of tens of kilobytes, no credential needed) is cut there, on a
/// character boundary, and marked with `…`.
pub const MAX_LOGGED_PATH_BYTES: usize = 256;

/// `path` as it goes into a log line: at most [`MAX_LOGGED_PATH_BYTES`]
/// bytes of it, then `…` when it was longer.
pub fn logged_path(path: &str) -> std::borrow::Cow<'_, str> {
    if path.len() <= MAX_LOGGED_PATH_BYTES {
        return std::borrow::Cow::Borrowed(path);
    }
    let kept = crate::text::cut_to_bytes(path, MAX_LOGGED_PATH_BYTES);
    std::borrow::Cow::Owned(format!("{kept}…"))
}

/// Logs and counts the request once its response head is ready. For the
/// WebSocket route that is the `101` (the session's life is not counted).
pub(super) async fn observe(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED.to_owned(), |path| path.as_str().to_owned());
    let path = logged_path(request.uri().path()).into_owned();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_path_is_cut_on_a_character_boundary() {
        assert_eq!(logged_path("/v1/ws"), "/v1/ws");
        let exact = "a".repeat(MAX_LOGGED_PATH_BYTES);
        assert_eq!(logged_path(&exact), exact.as_str());
        // "é" is two bytes: the cut falls inside one and moves back.
        let long = format!("/{}", "é".repeat(MAX_LOGGED_PATH_BYTES));
        let cut = logged_path(&long);
        assert!(cut.ends_with('…'), "{cut}");
        assert!(cut.len() <= MAX_LOGGED_PATH_BYTES + '…'.len_utf8());
        assert!(long.starts_with(cut.trim_end_matches('…')));
    }
}
