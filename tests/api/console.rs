//! The web console at `/console`: served from the binary with its content
//! types and strict security headers, loading nothing from another origin,
//! and switched off (404) by `console_enabled = false` or
//! `CHATD_CONSOLE_ENABLED=false`. What the page does is tested in a real
//! browser by `console/test` (`.ci/console-tests.sh`).

use chatd_testkit::{chatd, spawn_app, spawn_app_with, Backend, ServerProcess};

/// The console's files and the content type each must have.
const FILES: [(&str, &str); 5] = [
    ("/console", "text/html; charset=utf-8"),
    ("/console/", "text/html; charset=utf-8"),
    ("/console/console.js", "text/javascript; charset=utf-8"),
    ("/console/console.css", "text/css; charset=utf-8"),
    ("/console/favicon.svg", "image/svg+xml"),
];

/// Asserts the headers every console response carries: a CSP that allows
/// this origin only (no inline script or style, no eval, no framing), plus
/// nosniff and no-referrer.
fn assert_security_headers(path: &str, headers: &reqwest::header::HeaderMap, host: &str) {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("{path}: no {name} header"))
            .to_owned()
    };
    let csp = header("content-security-policy");
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ] {
        assert!(
            csp.contains(&format!("{directive};")) || csp.ends_with(directive),
            "{path}: {directive} in {csp}"
        );
    }
    // The WebSocket to this same host, and nothing else, besides 'self'.
    assert!(
        csp.contains(&format!("connect-src 'self' ws://{host} wss://{host};")),
        "{path}: connect-src of this host only: {csp}"
    );
    for loose in ["unsafe-inline", "unsafe-eval", "*", "http:", "https:", "data:"] {
        assert!(!csp.contains(loose), "{path}: {loose} in {csp}");
    }
    assert_eq!(header("x-content-type-options"), "nosniff", "{path}");
    assert_eq!(header("referrer-policy"), "no-referrer", "{path}");
    assert_eq!(header("x-frame-options"), "DENY", "{path}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_served_with_its_types_and_strict_security_headers() {
    let app = spawn_app(Backend::Sqlite).await;
    let host = app.addr.to_string();
    for (path, content_type) in FILES {
        let res = app.http.get(app.url(path)).send().await.expect("http");
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(
            res.headers().get("content-type").and_then(|v| v.to_str().ok()),
            Some(content_type),
            "{path}"
        );
        assert_security_headers(path, res.headers(), &host);
        let body = res.text().await.expect("body");
        assert!(!body.is_empty(), "{path}");
        // Nothing from another origin: no absolute URL at all (an SVG's
        // namespace name is an identifier, never loaded).
        let body = body.replace(r#"xmlns="http://www.w3.org/2000/svg""#, "");
        assert!(
            !body.contains("http://") && !body.contains("https://") && !body.contains("//cdn"),
            "{path} names another origin"
        );
        if content_type.starts_with("text/html") {
            // The one script is the file of this server; no inline script or style.
            assert!(
                body.contains(r#"<script src="/console/console.js" defer></script>"#),
                "{body}"
            );
            assert_eq!(body.matches("<script").count(), 1, "one script element: {body}");
            // The icon is this server's file: the browser asks for no /favicon.ico.
            assert!(
                body.contains(r#"<link rel="icon" href="/console/favicon.svg""#),
                "{body}"
            );
            assert!(
                !body.contains("<style") && !body.contains(" style="),
                "no inline style: {body}"
            );
            assert!(
                !body.contains(" onclick=") && !body.contains(" onload="),
                "no inline handler: {body}"
            );
        }
    }
    // A Host header that tries to add a source adds nothing.
    let res = app
        .http
        .get(app.url("/console"))
        .header("host", "x; script-src *")
        .send()
        .await
        .expect("http");
    let csp = res.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(!csp.contains('*') && csp.contains("connect-src 'self';"), "{csp}");
    // Only the console's own files exist under /console.
    for path in ["/console/other.js", "/console/index.html", "/console/console.js/x"] {
        let res = app.http.get(app.url(path)).send().await.expect("http");
        assert_eq!(res.status(), 404, "{path}");
    }
    // The API keeps its own answers (no console headers on it).
    let res = app.http.get(app.url("/healthz")).send().await.expect("http");
    assert!(res.headers().get("content-security-policy").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_enabled_false_answers_404() {
    let app = spawn_app_with(Backend::Sqlite, |c| c.console_enabled = false).await;
    for (path, _) in FILES {
        let res = app.http.get(app.url(path)).send().await.expect("http");
        assert_eq!(res.status(), 404, "{path}");
        assert!(res.headers().get("content-security-policy").is_none(), "{path}");
    }
    // The rest of the server is unaffected.
    let res = app.http.get(app.url("/healthz")).send().await.expect("http");
    assert_eq!(res.status(), 200);
}

/// The setting from the environment of the real binary: on by default, off
/// with `CHATD_CONSOLE_ENABLED=false`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chatd_console_enabled_env_switches_the_console_off() {
    for (value, status) in [(None, 200), (Some("false"), 404), (Some("true"), 200)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cmd = chatd!(dir.path());
        if let Some(value) = value {
            cmd.env("CHATD_CONSOLE_ENABLED", value);
        }
        let server = ServerProcess::start(cmd);
        let res = reqwest::get(server.url("/console")).await.expect("http");
        assert_eq!(res.status(), status, "CHATD_CONSOLE_ENABLED={value:?}");
        server.signal("TERM");
        assert_eq!(server.wait(), 0);
    }
}
