//! What the real binary logs at the default level (`info`), read from its
//! output as JSON lines: refused credentials with their reason, sessions
//! opened and closed, one access line per request (path, never the query),
//! never a token; and PostgreSQL's notice at start only at `debug`.

use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use chatd_testkit::{chatd, mint_token, on_both_stores, Backend, ServerProcess, TestDb, WsClient};

on_both_stores!(
    the_default_level_logs_refusals_sessions_and_requests_never_a_token,
    the_database_notice_at_start_is_debug,
);

const ADMIN: &str = "logs-admin-token-0123456789-abcdef";
const SECRET: &str = "logs-jwt-secret-0123456789-abcdefghijkl";

fn start(db: &TestDb, log: Option<&str>) -> ServerProcess {
    let mut cmd = chatd!(db.dir.path());
    cmd.env("CHATD_DATABASE_URL", &db.url)
        .env("CHATD_DATA_DIR", db.dir.path())
        .env("CHATD_ADMIN_TOKEN", ADMIN)
        .env("CHATD_JWT_SECRET", SECRET)
        .env("CHATD_LOG_FORMAT", "json");
    if let Some(log) = log {
        cmd.env("CHATD_LOG", log);
    }
    ServerProcess::start(cmd)
}

/// Stops the server and returns every line it wrote.
fn stop(server: ServerProcess) -> Vec<String> {
    server.signal("TERM");
    let lines = server.log.clone();
    assert_eq!(server.wait(), 0);
    // The reader threads take the last lines after the exit.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let lines = lines.lock().expect("log").clone();
    lines
}

/// The JSON lines whose `message` is `message`.
fn events(lines: &[String], message: &str) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["message"] == message)
        .collect()
}

async fn the_default_level_logs_refusals_sessions_and_requests_never_a_token(backend: Backend) {
    let db = TestDb::new(backend).await;
    let server = start(&db, None);
    let http = reqwest::Client::new();
    let admin = server.admin(ADMIN);
    admin
        .post_channel(json!({"channelId": "room", "members": ["alice"]}))
        .await;
    let token = mint_token(SECRET, "alice", 600);
    // Signed with another secret: refused as "bad signature".
    let forged = mint_token("another-secret-0123456789-abcdefghijklmn", "alice", 600);
    let wrong_admin = "wrong-admin-token-0123456789";

    // A wrong admin token on an admin route: 401, logged with its reason.
    let res = http
        .get(server.url("/v1/channels/room"))
        .bearer_auth(wrong_admin)
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 401);
    // A user token on an admin route: 403.
    let res = http
        .get(server.url("/v1/channels/room"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 403);
    // A token in the query string, accepted (history) and refused (the WebSocket).
    let res = http
        .get(server.url(&format!("/v1/channels/room/messages?access_token={token}")))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 200);
    let refused = tokio_tungstenite::connect_async(format!("ws://{}/v1/ws?access_token={forged}", server.addr)).await;
    assert!(refused.is_err(), "a forged token is refused");
    // A session: opened, then closed by the client.
    let (stream, _) = tokio_tungstenite::connect_async(format!("ws://{}/v1/ws?access_token={token}", server.addr))
        .await
        .expect("connect");
    let mut ws = WsClient::new(stream).read_hello().await;
    ws.send_msg("room", "c1", "hello").await;
    ws.recv_type("MSG_ACK").await;
    ws.stream.send(Message::Close(None)).await.expect("close");
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), ws.recv_close_code()).await;
    drop(ws);
    // The session's close is logged after its linger: give it a moment.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let lines = stop(server);
    let text = lines.join("\n");

    let refusals = events(&lines, "credential refused");
    assert!(
        refusals
            .iter()
            .any(|e| e["from"] == "header" && e["reason"].as_str().is_some_and(|r| r.starts_with("invalid token"))),
        "the wrong admin token is logged with its reason: {refusals:?}"
    );
    assert!(
        refusals
            .iter()
            .any(|e| e["from"] == "query" && e["reason"] == "invalid token: bad signature"),
        "the forged token of the WebSocket is logged with its reason: {refusals:?}"
    );
    assert!(refusals
        .iter()
        .all(|e| e["target"] == "chatd::auth" && e["level"] == "INFO"));
    let admin_refusals = events(&lines, "admin credential refused");
    assert_eq!(admin_refusals.len(), 1, "{admin_refusals:?}");
    assert_eq!(admin_refusals[0]["user_id"], "alice");

    let opened = events(&lines, "session opened");
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0]["user_id"], "alice");
    let closed = events(&lines, "session closed");
    assert_eq!(closed.len(), 1, "{closed:?}");
    assert_eq!(closed[0]["user_id"], "alice");
    assert_eq!(closed[0]["session_id"], opened[0]["session_id"]);
    assert_eq!(closed[0]["code"], 1000);
    assert_eq!(closed[0]["reason"], "closed by the client");

    let access = events(&lines, "request");
    let history: Vec<&Value> = access
        .iter()
        .filter(|e| e["route"] == "/v1/channels/{channelId}/messages")
        .collect();
    assert_eq!(history.len(), 1, "{access:?}");
    assert_eq!(history[0]["path"], "/v1/channels/room/messages");
    assert_eq!(history[0]["status"], 200);
    assert_eq!(history[0]["method"], "GET");
    assert_eq!(history[0]["target"], "chatd::access");
    assert!(history[0]["duration_ms"].as_f64().is_some());
    let statuses: Vec<(String, i64)> = access
        .iter()
        .map(|e| {
            (
                e["route"].as_str().unwrap_or("").to_owned(),
                e["status"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    for expected in [
        ("/v1/channels/{channelId}".to_owned(), 401),
        ("/v1/channels/{channelId}".to_owned(), 403),
        ("/v1/ws".to_owned(), 401),
        ("/v1/ws".to_owned(), 101),
        ("/v1/channels".to_owned(), 201),
    ] {
        assert!(statuses.contains(&expected), "{expected:?} in {statuses:?}");
    }

    let signature = token.rsplit('.').next().expect("signature");
    let forged_signature = forged.rsplit('.').next().expect("signature");
    for secret_text in [
        token.as_str(),
        signature,
        forged.as_str(),
        forged_signature,
        ADMIN,
        wrong_admin,
        SECRET,
        "access_token",
    ] {
        assert!(!text.contains(secret_text), "{secret_text} reached the log");
    }
}

async fn the_database_notice_at_start_is_debug(backend: Backend) {
    let db = TestDb::new(backend).await;
    // The migrations' notices: on a first start, and on every later one.
    for _ in 0..2 {
        let lines = stop(start(&db, None));
        let notices: Vec<&String> = lines.iter().filter(|l| l.contains("sqlx::postgres::notice")).collect();
        assert!(
            notices.is_empty(),
            "no database notice at the default level: {notices:?}"
        );
        assert_eq!(events(&lines, "chatd listening").len(), 1, "{lines:?}");
    }
    let lines = stop(start(&db, Some("debug")));
    let notices = lines.iter().filter(|l| l.contains("sqlx::postgres::notice")).count();
    if backend == Backend::Postgres {
        assert!(notices > 0, "PostgreSQL's notice at debug: {lines:?}");
    }
}

/// A path of 60 KB, no credential needed: every log line it reaches holds at
/// most its first 256 bytes (the access line and the request's span); before,
/// each request wrote its path twice into one 120 KB line.
#[tokio::test]
async fn a_long_path_is_cut_in_the_log() {
    let db = TestDb::new(Backend::Sqlite).await;
    let server = start(&db, None);
    let long = format!("/{}", "x".repeat(60_000));
    let res = reqwest::Client::new()
        .get(server.url(&long))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 404);
    let lines = stop(server);
    let request = events(&lines, "request");
    let line = request
        .iter()
        .find(|e| e["path"].as_str().is_some_and(|p| p.starts_with("/xxx")))
        .expect("the request's access line");
    let path = line["path"].as_str().expect("path");
    assert!(path.len() <= 256 + '…'.len_utf8() && path.ends_with('…'), "{path}");
    let longest = lines.iter().map(String::len).max().unwrap_or(0);
    assert!(longest < 2_000, "a log line of {longest} bytes");
}
