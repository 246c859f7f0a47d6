//! `admin_listen`: the admin routes on an address of their own, `listen`
//! answering 404 for them and 401 for the admin token; unset, everything
//! on `listen` as before. In-process and with the real binary.

use std::net::SocketAddr;
use std::time::Duration;

use chatd::startup::Application;
use chatd_client::{Client, ClientConfig};
use serde_json::{json, Value};

use chatd_testkit::*;

/// One request; the status and the JSON body (`Null` when none).
async fn call(base: &str, method: &str, path: &str, bearer: Option<&str>, body: Option<Value>) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut request = reqwest::Client::new().request(method, format!("{base}{path}"));
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let res = request.send().await.expect("http");
    let status = res.status().as_u16();
    let text = res.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Each of [`chatd::http::ADMIN_ROUTES`] as a request that succeeds for the
/// admin token once channel `room` (alice, bob) exists, with its status.
fn admin_calls() -> Vec<(&'static str, &'static str, Option<Value>, u16)> {
    vec![
        (
            "POST",
            "/v1/channels",
            Some(json!({"channelId": "room", "members": ["alice", "bob"]})),
            201,
        ),
        ("GET", "/v1/channels", None, 200),
        ("GET", "/v1/channels/room", None, 200),
        (
            "POST",
            "/v1/channels/room/messages",
            Some(json!({"senderId": "alice", "clientMsgId": "k1", "body": "from the backend"})),
            201,
        ),
        ("POST", "/v1/tokens", Some(json!({"userId": "alice"})), 201),
        ("GET", "/v1/flags", None, 200),
        ("GET", "/v1/users/alice/export", None, 200),
        ("DELETE", "/v1/users/carol", None, 204),
        ("GET", "/metrics", None, 200),
    ]
}

/// Asserts that `listen` (at `base`) answers every admin route as an
/// unknown route, with the admin token.
async fn admin_routes_are_unknown_on(base: &str) {
    for (method, path, body, _) in admin_calls() {
        let (status, answer) = call(base, method, path, Some(ADMIN_TOKEN), body).await;
        assert_eq!(status, 404, "{method} {path} on listen: {answer}");
        assert_eq!(answer["error"]["code"], "not_found", "{method} {path}");
        assert_eq!(answer["error"]["message"], "no such route", "{method} {path}");
    }
}

/// A server whose admin routes are on their own address: both addresses.
async fn start_with_admin_listen(db: &TestDb) -> (Application, SocketAddr, SocketAddr) {
    let mut config = test_config(db);
    config.admin_listen = Some("127.0.0.1:0".into());
    let app = Application::build(config).await.expect("build app");
    let listen = app.local_addr().expect("addr");
    let admin = app.admin_addr().expect("admin addr").expect("admin_listen is set");
    assert_ne!(listen, admin);
    (app, listen, admin)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_admin_listen_the_admin_routes_are_served_only_there() {
    let db = TestDb::new(Backend::Sqlite).await;
    let (app, listen, admin) = start_with_admin_listen(&db).await;
    let shutdown = app.shutdown_token();
    let handle = tokio::spawn(app.run_until_stopped(std::future::pending()));
    let (listen, admin) = (format!("http://{listen}"), format!("http://{admin}"));

    admin_routes_are_unknown_on(&listen).await;
    for (method, path, body, expected) in admin_calls() {
        let (status, answer) = call(&admin, method, path, Some(ADMIN_TOKEN), body).await;
        assert_eq!(status, expected, "{method} {path} on admin_listen: {answer}");
    }
    // With the channel there, still unknown on listen (not a missing channel).
    admin_routes_are_unknown_on(&listen).await;
    // The admin token on listen is a token no route takes: an unknown route
    // is still 404, as for any caller.
    let (status, answer) = call(&listen, "GET", "/v1/nothing-here", Some(ADMIN_TOKEN), None).await;
    assert_eq!((status, &answer["error"]["code"]), (404, &json!("not_found")));

    // The routes that take the admin token besides a user token refuse it
    // on listen, and take it on the admin address.
    let history = "/v1/channels/room/messages?afterSeq=0";
    let (status, answer) = call(&listen, "GET", history, Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 401, "{answer}");
    assert_eq!(answer["error"]["code"], "unauthorized");
    let (status, _) = call(
        &listen,
        "PUT",
        "/v1/channels/room/members/dave",
        Some(ADMIN_TOKEN),
        None,
    )
    .await;
    assert_eq!(status, 401);
    let (status, answer) = call(&admin, "GET", history, Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["messages"].as_array().map(Vec::len), Some(1));

    // Users keep everything else on listen: their routes and the WebSocket.
    let alice = mint_token(JWT_SECRET, "alice", 3600);
    let (status, answer) = call(&listen, "GET", history, Some(&alice), None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["messages"][0]["body"], "from the backend");
    let (status, answer) = call(&listen, "GET", "/v1/me/channels", Some(&alice), None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["channels"][0]["channelId"], "room");
    let (status, _) = call(&listen, "GET", "/healthz", None, None).await;
    assert_eq!(status, 200);
    let ws = format!("{}/v1/ws", listen.replace("http://", "ws://"));
    let (client, _events) = Client::connect(ClientConfig::new(ws, alice))
        .await
        .expect("connect on listen");
    let ack = client
        .submit("room", "k2", "from a user".to_owned())
        .await
        .expect("submit")
        .await
        .expect("acked");
    assert_eq!(ack.seq, 2);
    drop(client);

    shutdown.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(20), handle).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_admin_listen_the_admin_routes_stay_on_listen() {
    let app = spawn_app(Backend::Sqlite).await;
    assert!(app.state.config.admin_listen.is_none());
    let base = app.url("");
    for (method, path, body, expected) in admin_calls() {
        let (status, answer) = call(&base, method, path, Some(ADMIN_TOKEN), body).await;
        assert_eq!(status, expected, "{method} {path} on listen: {answer}");
    }
    let (status, _) = call(&base, "GET", "/v1/channels/room/messages", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 200);
    app.stop().await;
}

/// The list of admin routes is the document's: every operation whose only
/// credential is the admin token, and `/metrics`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_routes_are_the_documents_admin_only_operations() {
    let app = spawn_app(Backend::Sqlite).await;
    let (status, doc) = app.request("GET", "/v1/openapi.json", None, None).await;
    assert_eq!(status, 200);
    let mut documented = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            if operation["security"] == json!([{"adminToken": []}]) {
                documented.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    documented.push(("GET".into(), "/metrics".into()));
    documented.sort();
    let mut listed: Vec<(String, String)> = chatd::http::ADMIN_ROUTES
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    listed.sort();
    assert_eq!(listed, documented);
    app.stop().await;
}

/// The real binary with `CHATD_ADMIN_LISTEN`: it logs the admin address and
/// serves the admin routes there only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chatd_admin_listen_env_moves_the_admin_routes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatd!(dir.path());
    cmd.env("CHATD_ADMIN_LISTEN", "127.0.0.1:0")
        .env("CHATD_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("CHATD_JWT_SECRET", JWT_SECRET);
    let server = ServerProcess::start(cmd);
    // Logged just after "chatd listening", which `start` waited for.
    let mut admin = None;
    for _ in 0..100 {
        let log = server.log_text();
        admin = log
            .split("admin_addr=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_owned);
        if admin.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let admin = admin.unwrap_or_else(|| panic!("no admin_addr in the log: {}", server.log_text()));
    let token = json!({"userId": "alice"});
    let (status, answer) = call(
        &server.url(""),
        "POST",
        "/v1/tokens",
        Some(ADMIN_TOKEN),
        Some(token.clone()),
    )
    .await;
    assert_eq!(status, 404, "{answer}");
    let (status, answer) = call(
        &format!("http://{admin}"),
        "POST",
        "/v1/tokens",
        Some(ADMIN_TOKEN),
        Some(token),
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    server.signal("TERM");
    assert_eq!(server.wait(), 0);
}
