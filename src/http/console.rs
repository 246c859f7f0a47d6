//! The web console at `/console` (`console_enabled`, on by default): a chat
//! view and an admin view (and their icon, `/console/favicon.svg`), compiled from `console/src/*.ts` into
//! `console/dist/` (committed, checked by `.ci/console-check`) and embedded
//! here, so building chatd needs no Node and the page loads nothing from
//! outside this server.
//!
//! Every response carries a Content-Security-Policy that allows only this
//! origin (no inline script, no eval, no framing) and the WebSocket to this
//! same host, with `nosniff` and `no-referrer`: a token in the page's URL
//! fragment never leaves it, and no other site can frame or script it.

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::http::error::ApiError;
use crate::state::AppState;

/// The page: `GET /console` (and `/console/`).
const INDEX_HTML: &str = include_str!("../../console/dist/index.html");
/// The script: the console and the chatd-client TypeScript client, bundled.
const CONSOLE_JS: &str = include_str!("../../console/dist/console.js");
/// The style sheet.
const CONSOLE_CSS: &str = include_str!("../../console/dist/console.css");
/// The page's icon (`<link rel="icon">`), so the browser asks for no
/// `/favicon.ico` (a 404 on every page load before it existed).
const FAVICON_SVG: &str = include_str!("../../console/dist/favicon.svg");

/// The console's route templates (the `route` label of the HTTP metrics).
pub const ROUTES: [&str; 3] = ["/console", "/console/", "/console/{file}"];

/// The routes of the console when `enabled`; none (so `/console` is 404, like
/// any unknown path) when not.
pub fn routes(enabled: bool) -> Router<AppState> {
    if !enabled {
        return Router::new();
    }
    Router::new()
        .route(ROUTES[0], get(index))
        .route(ROUTES[1], get(index))
        .route(ROUTES[2], get(asset))
}

async fn index(headers: HeaderMap) -> Response {
    respond(&headers, "text/html; charset=utf-8", INDEX_HTML)
}

async fn asset(headers: HeaderMap, Path(file): Path<String>) -> Response {
    match file.as_str() {
        "console.js" => respond(&headers, "text/javascript; charset=utf-8", CONSOLE_JS),
        "console.css" => respond(&headers, "text/css; charset=utf-8", CONSOLE_CSS),
        "favicon.svg" => respond(&headers, "image/svg+xml", FAVICON_SVG),
        _ => ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route").into_response(),
    }
}

/// `body` with its content type and the console's security headers.
fn respond(request: &HeaderMap, content_type: &'static str, body: &'static str) -> Response {
    let csp = content_security_policy(request.get(header::HOST));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(value) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    headers.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    // The files change with the binary: a browser revalidates them instead
    // of running a stale script against a newer server.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The policy: this origin only. `connect-src` also names `ws://` and
/// `wss://` of the request's host, since browsers older than CSP level 3 do
/// not count the WebSocket to the same host as `'self'`; a `Host` that is not
/// a plain `host[:port]` adds nothing.
pub fn content_security_policy(host: Option<&HeaderValue>) -> String {
    let same_host_ws = host
        .and_then(|h| h.to_str().ok())
        .filter(|h| is_plain_host(h))
        .map(|h| format!(" ws://{h} wss://{h}"))
        .unwrap_or_default();
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; \
         connect-src 'self'{same_host_ws}; object-src 'none'; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    )
}

/// `host[:port]` of letters, digits, `.`, `-`, and an IPv6 literal's `[`, `]`
/// and `:`: nothing that could end a CSP directive or source.
fn is_plain_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 255
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_that_is_not_plain_adds_no_source() {
        let evil = HeaderValue::from_static("x; script-src *");
        assert!(!content_security_policy(Some(&evil)).contains('*'));
        let ok = HeaderValue::from_static("127.0.0.1:8080");
        assert!(
            content_security_policy(Some(&ok)).contains("connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080;")
        );
    }
}
