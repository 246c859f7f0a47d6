//! CORS (`cors_allowed_origins`): a listed origin gets the preflight and
//! response headers on the user routes; an unlisted one gets none; the admin
//! routes never send any; with the setting empty nobody gets any.

use chatd_testkit::{spawn_app_with, Backend, TestApp, ADMIN_TOKEN};
use reqwest::header::HeaderMap;

const LISTED: &str = "https://app.example.com";
const OTHER: &str = "https://evil.example.net";

async fn with_origins(origins: &[&str]) -> TestApp {
    let origins: Vec<String> = origins.iter().map(|o| (*o).to_owned()).collect();
    spawn_app_with(Backend::Sqlite, move |config| config.cors_allowed_origins = origins).await
}

/// A browser's preflight: OPTIONS with Origin and the method and headers it
/// is about to use.
async fn preflight(app: &TestApp, path: &str, origin: &str, method: &str) -> (u16, HeaderMap) {
    let res = app
        .http
        .request(reqwest::Method::OPTIONS, app.url(path))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", method)
        .header("Access-Control-Request-Headers", "authorization, content-type")
        .send()
        .await
        .expect("http");
    (res.status().as_u16(), res.headers().clone())
}

async fn get(app: &TestApp, path: &str, origin: &str, bearer: &str) -> (u16, HeaderMap) {
    let res = app
        .http
        .get(app.url(path))
        .header("Origin", origin)
        .bearer_auth(bearer)
        .send()
        .await
        .expect("http");
    (res.status().as_u16(), res.headers().clone())
}

fn cors_headers(headers: &HeaderMap) -> Vec<String> {
    headers
        .keys()
        .map(|k| k.as_str().to_owned())
        .filter(|k| k.starts_with("access-control-"))
        .collect()
}

#[tokio::test]
async fn a_listed_origin_may_call_the_user_routes_and_no_other_may() {
    let app = with_origins(&[LISTED, "http://localhost:3000"]).await;
    app.create_channel("room", &["alice"]).await;
    let token = app.token("alice");
    let history = "/v1/channels/room/messages";

    let (status, headers) = preflight(&app, history, LISTED, "GET").await;
    assert!((200..300).contains(&status), "preflight answered: {status}");
    assert_eq!(headers["access-control-allow-origin"], LISTED);
    let methods = headers["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .to_ascii_uppercase();
    assert!(methods.contains("GET"), "{methods}");
    let allowed = headers["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("authorization"), "{allowed}");
    assert!(headers.contains_key("access-control-max-age"));

    let (status, headers) = get(&app, history, LISTED, &token).await;
    assert_eq!(status, 200);
    assert_eq!(headers["access-control-allow-origin"], LISTED);
    let vary = headers
        .get_all("vary")
        .iter()
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(",");
    assert!(vary.contains("origin"), "a cache keeps answers per origin: {vary}");
    // The second listed origin too.
    let (_, headers) = get(&app, history, "http://localhost:3000", &token).await;
    assert_eq!(headers["access-control-allow-origin"], "http://localhost:3000");
    // A refused request still tells the browser it may read the refusal.
    let (status, headers) = get(&app, history, LISTED, "not-a-token").await;
    assert_eq!(status, 401);
    assert_eq!(headers["access-control-allow-origin"], LISTED);

    // An unlisted origin: no CORS header at all, on the preflight or the GET.
    let (_, headers) = preflight(&app, history, OTHER, "GET").await;
    assert_eq!(cors_headers(&headers), Vec::<String>::new(), "preflight of {OTHER}");
    let (status, headers) = get(&app, history, OTHER, &token).await;
    assert_eq!(status, 200, "served; the browser withholds it");
    assert_eq!(cors_headers(&headers), Vec::<String>::new(), "GET of {OTHER}");

    // Version 1.2's user routes: joining and leaving (PUT, DELETE), the
    // members and the directory; and the routes an owner's or moderator's
    // token works on (members, PATCH and DELETE of the channel).
    for (path, method) in [
        ("/v1/channels/room/members/bob", "PUT"),
        ("/v1/channels/room/members/bob", "DELETE"),
        ("/v1/channels/room", "PATCH"),
        ("/v1/channels/room", "DELETE"),
        ("/v1/me/channels", "POST"),
        ("/v1/me/direct/bob", "PUT"),
        ("/v1/me/channels/room", "PUT"),
        ("/v1/me/channels/room", "DELETE"),
        ("/v1/channels/room/members", "GET"),
        ("/v1/directory", "GET"),
    ] {
        let (status, headers) = preflight(&app, path, LISTED, method).await;
        assert!((200..300).contains(&status), "{method} {path}: {status}");
        assert_eq!(headers["access-control-allow-origin"], LISTED, "{method} {path}");
        let methods = headers["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .to_ascii_uppercase();
        assert!(methods.contains(method), "{method} {path}: {methods}");
    }
    app.stop().await;
}

#[tokio::test]
async fn the_admin_routes_never_answer_cross_origin() {
    let app = with_origins(&[LISTED]).await;
    app.create_channel("room", &["alice"]).await;
    for (method, path) in [
        ("POST", "/v1/channels"),
        ("GET", "/v1/channels/room"),
        ("POST", "/v1/tokens"),
        // The history route's path, asked about another method.
        ("POST", "/v1/channels/room/messages"),
        ("DELETE", "/v1/channels/room/messages"),
    ] {
        let (_, headers) = preflight(&app, path, LISTED, method).await;
        assert_eq!(
            cors_headers(&headers),
            Vec::<String>::new(),
            "preflight {method} {path}"
        );
    }
    for path in ["/v1/channels/room", "/healthz", "/v1/openapi.json", "/metrics"] {
        let (status, headers) = get(&app, path, LISTED, ADMIN_TOKEN).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(cors_headers(&headers), Vec::<String>::new(), "GET {path}");
    }
    let res = app
        .http
        .post(app.url("/v1/tokens"))
        .header("Origin", LISTED)
        .bearer_auth(ADMIN_TOKEN)
        .json(&serde_json::json!({"userId": "alice"}))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 201);
    assert_eq!(cors_headers(res.headers()), Vec::<String>::new(), "POST /v1/tokens");
    app.stop().await;
}

#[tokio::test]
async fn without_allowed_origins_no_request_gets_cors_headers() {
    let app = with_origins(&[]).await;
    app.create_channel("room", &["alice"]).await;
    let history = "/v1/channels/room/messages";
    let (_, headers) = preflight(&app, history, LISTED, "GET").await;
    assert_eq!(cors_headers(&headers), Vec::<String>::new());
    let (status, headers) = get(&app, history, LISTED, &app.token("alice")).await;
    assert_eq!(status, 200);
    assert_eq!(cors_headers(&headers), Vec::<String>::new());
    assert!(headers.get("vary").is_none(), "not even Vary");
    app.stop().await;
}
