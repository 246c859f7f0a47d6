//! The real `chatd` binary: zero-configuration start, generated secrets,
//! configuration layering, `migrate`, `token`, and graceful shutdown on
//! SIGTERM / SIGINT.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use chatd_testkit::{chatd, mint_token, postgres_url, Backend, ServerProcess, TestDb, WsClient, JWT_SECRET};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

async fn get(addr: &str, path: &str, bearer: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(format!("http://{addr}{path}"));
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    request.send().await.expect("http")
}

fn read_secrets(dir: &Path) -> toml::Table {
    let text = std::fs::read_to_string(dir.join("secrets.toml")).expect("secrets file");
    toml::from_str(&text).expect("toml")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_no_configuration_uses_embedded_sqlite_and_generated_secrets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = ServerProcess::start(chatd!(dir.path()));
    let ready = get(&server.addr, "/readyz", None).await;
    assert_eq!(ready.status(), 200);
    let ready = ready.json::<Value>().await.expect("json");
    assert_eq!(ready["database"], "sqlite");
    assert!(ready.get("nats").is_none(), "no NATS detail without nats_url: {ready}");
    assert!(dir.path().join("data/chatd.db").exists(), "embedded database in ./data");
    let secrets = read_secrets(&dir.path().join("data"));
    let admin = secrets["admin_token"].as_str().expect("admin token").to_owned();
    let jwt = secrets["jwt_secret"].as_str().expect("jwt secret").to_owned();
    assert!(jwt.len() >= 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("data/secrets.toml"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let log = server.log_text();
    assert!(
        log.contains("secrets.toml"),
        "the server says where the admin token is: {log}"
    );
    assert!(!log.contains(&admin) && !log.contains(&jwt), "secrets never logged");
    // The generated admin token works on the admin API.
    assert_eq!(get(&server.addr, "/v1/channels/nope", Some(&admin)).await.status(), 404);
    server.signal("TERM");
    assert_eq!(server.wait(), 0);
    // A second start reuses the same secrets.
    let server = ServerProcess::start(chatd!(dir.path()));
    assert_eq!(
        read_secrets(&dir.path().join("data"))["admin_token"].as_str(),
        Some(admin.as_str())
    );
    server.signal("INT");
    assert_eq!(server.wait(), 0, "SIGINT also exits 0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_command_and_configuration_layers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file_secret = "f".repeat(32);
    let env_secret = "e".repeat(32);
    std::fs::write(
        dir.path().join("chatd.toml"),
        format!("jwt_secret = \"{file_secret}\"\ndata_dir = \"from-file\"\n"),
    )
    .expect("write");
    let verify = |token: &str, secret: &str| {
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.validate_aud = false;
        jsonwebtoken::decode::<Value>(
            token,
            &jsonwebtoken::DecodingKey::from_secret(secret.as_bytes()),
            &validation,
        )
        .map(|d| d.claims)
    };
    // File only.
    let out = chatd!(dir.path())
        .args(["--config", "chatd.toml", "token", "alice", "--ttl", "60"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).expect("utf8");
    assert_eq!(stdout.lines().count(), 1, "the JWT alone on one line");
    let claims = verify(stdout.trim(), &file_secret).expect("signed with the file's secret");
    assert_eq!(claims["sub"], "alice");
    let ttl = claims["exp"].as_u64().expect("exp") - claims["iat"].as_u64().expect("iat");
    assert_eq!(ttl, 60);
    // The configured jwt_secret is not written; the missing admin token is generated in the file's data_dir.
    let secrets = read_secrets(&dir.path().join("from-file"));
    assert!(secrets.get("jwt_secret").is_none());
    assert!(secrets.get("admin_token").is_some());
    // Env overrides the file.
    let out = chatd!(dir.path())
        .env("CHATD_CONFIG", "chatd.toml")
        .env("CHATD_JWT_SECRET", &env_secret)
        .args(["token", "bob"])
        .output()
        .expect("run");
    assert!(
        verify(String::from_utf8_lossy(&out.stdout).trim(), &env_secret).is_ok(),
        "env beats file"
    );
    // Flags override env.
    let out = chatd!(dir.path())
        .env("CHATD_DATA_DIR", "from-env")
        .args(["--data-dir", "from-flag", "token", "carol"])
        .output()
        .expect("run");
    assert!(out.status.success());
    assert!(dir.path().join("from-flag/secrets.toml").exists(), "flag beats env");
    // A jwt_secret made up on the spot is said: no server knows it yet.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("there was no jwt_secret, so a new one was written to"),
        "{stderr}"
    );
    let again = chatd!(dir.path())
        .args(["--data-dir", "from-flag", "token", "carol"])
        .output()
        .expect("run");
    assert!(again.status.success());
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("no jwt_secret"),
        "the second time it is read, not made"
    );
    assert!(!dir.path().join("from-env").exists());
    // Bad input gets a clear error and a failing exit code.
    let out = chatd!(dir.path()).args(["token", "not valid"]).output().expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid user id"));
    // A short secret is used as it is (the wire contract), with a warning
    // on stderr that names the length, never the secret.
    let out = chatd!(dir.path())
        .env("CHATD_JWT_SECRET", "q7x2z")
        .args(["token", "x"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(verify(String::from_utf8_lossy(&out.stdout).trim(), "q7x2z").is_ok());
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(warned.contains("weak secret: jwt_secret is 5 bytes"), "{warned}");
    assert!(
        !warned.contains("q7x2z"),
        "the warning must not show the secret: {warned}"
    );
    // A directory given as the config file, and a file as the data dir:
    // configuration errors (exit 2) that name the problem, not a misleading
    // "not found" or "database unavailable … File exists".
    let out = chatd!(dir.path())
        .arg("--config")
        .arg(dir.path())
        .args(["token", "x"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory, not a file"));
    let out = chatd!(dir.path())
        .args(["--config", "/dev/null", "token", "x"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/dev/null is not a regular file"));
    std::fs::write(dir.path().join("plain-file"), "x").expect("write");
    let out = chatd!(dir.path())
        .env("CHATD_DATA_DIR", "plain-file")
        .args(["token", "x"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("data_dir plain-file is not a directory"));
    let out = chatd!(dir.path())
        .env("CHATD_LOG", "garbage[[[")
        .args(["token", "x"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "a bad setting is a configuration error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("log"));
    // Text settings stay text even when they look like numbers.
    let out = chatd!(dir.path())
        .env("CHATD_JWT_SECRET", &env_secret)
        .env("CHATD_JWT_ISSUER", "1.50")
        .env("CHATD_JWT_AUDIENCE", "007")
        .args(["token", "dave"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let claims = verify(String::from_utf8_lossy(&out.stdout).trim(), &env_secret).expect("verify");
    assert_eq!(
        (claims["iss"].as_str(), claims["aud"].as_str()),
        (Some("1.50"), Some("007"))
    );
    // A hand-edited secrets file: a short secret is used with a warning,
    // an empty one is refused.
    let weak = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        weak.path().join("secrets.toml"),
        "jwt_secret = \"short\"\nadmin_token = \"long-enough-admin-token\"\n",
    )
    .expect("write");
    let out = chatd!(weak.path())
        .args(["--data-dir", ".", "token", "x"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(verify(String::from_utf8_lossy(&out.stdout).trim(), "short").is_ok());
    assert!(String::from_utf8_lossy(&out.stderr).contains("weak secret: jwt_secret is 5 bytes"));
    std::fs::write(
        weak.path().join("secrets.toml"),
        "jwt_secret = \"\"\nadmin_token = \"long-enough-admin-token\"\n",
    )
    .expect("write");
    let out = chatd!(weak.path())
        .args(["--data-dir", ".", "token", "x"])
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an empty secret in the file is a configuration error"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("must not be empty"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_command_applies_the_schema() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        if backend == Backend::Postgres && postgres_url().is_none() {
            continue;
        }
        let db = TestDb::new(backend).await;
        let out = chatd!(db.dir.path())
            .env("CHATD_DATABASE_URL", &db.url)
            .env("CHATD_DATA_DIR", db.dir.path())
            .arg("migrate")
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{backend:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let store = db.store().await;
        // The tables exist: a channel can be created without running migrations again.
        store
            .create_channel(&chatd::ids::ChannelId::parse("c").expect("id"), &[], 1)
            .await
            .expect("schema present");
        store.close().await;
    }
}

/// SIGTERM while a client has sends in flight: every send the server read is
/// either ACKed and stored or not stored at all; ACKed ones are all stored;
/// the session closes with 1001 and the process exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_in_flight_sends_finish_and_closes_with_1001() {
    let db = TestDb::new(if postgres_url().is_some() {
        Backend::Postgres
    } else {
        Backend::Sqlite
    })
    .await;
    let admin = "lifecycle-admin-token-0123456789";
    let secret = "lifecycle-jwt-secret-0123456789-abcdef";
    let mut cmd = chatd!(db.dir.path());
    cmd.env("CHATD_DATABASE_URL", &db.url)
        .env("CHATD_DATA_DIR", db.dir.path())
        .env("CHATD_ADMIN_TOKEN", admin)
        .env("CHATD_JWT_SECRET", secret)
        .env("CHATD_RATE_LIMIT_PER_SEC", "0")
        .env("CHATD_USER_RATE_LIMIT_PER_SEC", "0");
    let server = ServerProcess::start(cmd);
    let res = server
        .admin(admin)
        .post_channel(json!({"channelId": "room", "members": ["alice"]}))
        .await;
    assert_eq!(res.status(), 201);
    let mut ws = server.connect(&mint_token(secret, "alice", 600)).await.stream;
    const SENDS: usize = 3000;
    for n in 0..SENDS {
        let frame = json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": format!("k{n}"), "body": "x"});
        ws.feed(Message::text(frame.to_string())).await.expect("feed");
    }
    ws.flush().await.expect("flush");
    server.signal("TERM");
    let mut acked = HashSet::new();
    let close_code = loop {
        match tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("frames until close")
        {
            Some(Ok(Message::Text(text))) => {
                let frame: Value = serde_json::from_str(text.as_str()).expect("json");
                if frame["type"] == "MSG_ACK" {
                    acked.insert(frame["clientMsgId"].as_str().expect("id").to_owned());
                } else {
                    assert_eq!(frame["type"], "ERROR", "{frame}");
                    assert_eq!(frame["retryable"], true, "refusals at shutdown are retryable: {frame}");
                }
            }
            Some(Ok(Message::Close(Some(frame)))) => break u16::from(frame.code),
            Some(Ok(_)) => {}
            other => panic!("ended without a close frame: {other:?}"),
        }
    };
    assert_eq!(close_code, 1001);
    assert_eq!(server.wait(), 0);
    assert!(!acked.is_empty(), "sends read before the signal were ACKed");
    // Every ACKed message is stored, and nothing unACKed is.
    let store = db.store().await;
    let room = chatd::ids::ChannelId::parse("room").expect("id");
    let mut stored = Vec::new();
    loop {
        let after = stored.last().map_or(0, |m: &chatd::store::Entry| m.seq);
        let (page, more) = store.messages_after(&room, after, 500).await.expect("read");
        stored.extend(page);
        if !more {
            break;
        }
    }
    let stored_keys: HashSet<String> = stored.iter().map(|m| m.client_msg_id.as_str().to_owned()).collect();
    assert_eq!(stored_keys, acked, "stored exactly the ACKed sends");
    let seqs: Vec<i64> = stored.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=stored.len() as i64).collect::<Vec<_>>());
    store.close().await;
}

/// Credentials and message bodies never reach the logs, even with every log
/// level on (`trace`): not the `access_token` query parameter, not the header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_never_logged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let admin = "logging-admin-token-0123456789";
    let secret = "logging-jwt-secret-0123456789-abcdefgh";
    let mut cmd = chatd!(dir.path());
    cmd.env("CHATD_ADMIN_TOKEN", admin)
        .env("CHATD_JWT_SECRET", secret)
        .env("CHATD_LOG", "trace");
    let server = ServerProcess::start(cmd);
    let token = mint_token(secret, "alice", 600);
    server
        .admin(admin)
        .post_channel(json!({"channelId": "room", "members": ["alice"]}))
        .await;
    // The token in the query string, not the header: that is what must not be logged.
    let (stream, _) = tokio_tungstenite::connect_async(format!("ws://{}/v1/ws?access_token={token}", server.addr))
        .await
        .expect("connect");
    let mut ws = WsClient::new(stream).read_hello().await;
    ws.send_msg("room", "c", "SECRET-BODY-4711").await;
    ws.recv().await;
    let http = reqwest::Client::new();
    let base = format!("http://{}", server.addr);
    let res = http
        .get(format!("{base}/v1/channels/room/messages?access_token={token}"))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 200);
    let bad = format!("{token}x");
    let _ = tokio_tungstenite::connect_async(format!("ws://{}/v1/ws?access_token={bad}", server.addr)).await;
    drop(ws);
    server.signal("TERM");
    let lines = server.log.clone();
    assert_eq!(server.wait(), 0);
    std::thread::sleep(Duration::from_millis(200));
    let log = lines.lock().expect("log").join("\n");
    assert!(log.contains("/v1/ws"), "requests are logged: {log}");
    let signature = token.rsplit('.').next().expect("signature");
    for secret_text in [token.as_str(), signature, admin, secret, "SECRET-BODY-4711"] {
        assert!(!log.contains(secret_text), "a credential or a body reached the log");
    }
}

/// `log_format = "json"` gives one JSON object per log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_per_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatd!(dir.path());
    cmd.env("CHATD_LOG_FORMAT", "json");
    let server = ServerProcess::start(cmd);
    assert_eq!(get(&server.addr, "/healthz", None).await.status(), 200);
    server.signal("TERM");
    let lines = server.log.clone();
    assert_eq!(server.wait(), 0);
    std::thread::sleep(Duration::from_millis(200));
    let lines = lines.lock().expect("log").clone();
    assert!(lines.len() >= 2, "{lines:?}");
    for line in &lines {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}"));
        assert!(value["level"].is_string() && value["message"].is_string(), "{line}");
    }
}

/// The wire contract says a configured secret is used as it is: a server
/// started with short test secrets runs (with a warning in its log), and a
/// token signed with that secret the way PyJWT writes one (`exp` and `iat`
/// with a fraction, from `time.time()`) opens a session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_secrets_are_used_as_they_are() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatd!(dir.path());
    cmd.env("CHATD_ADMIN_TOKEN", "admin").env("CHATD_JWT_SECRET", "s3cr3t");
    let server = ServerProcess::start(cmd);
    let res = server
        .admin("admin")
        .post_channel(json!({"channelId": "room", "members": ["alice"]}))
        .await;
    assert_eq!(res.status(), 201);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64();
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "alice", "exp": now + 600.25, "iat": now}),
        &jsonwebtoken::EncodingKey::from_secret(b"s3cr3t"),
    )
    .expect("sign");
    let mut alice = server.connect(&token).await;
    assert_eq!(alice.hello["userId"], "alice");
    alice.send_msg("room", "k1", "hello").await;
    let ack = alice.recv().await;
    assert_eq!(
        (ack["type"].as_str(), ack["seq"].as_i64()),
        (Some("MSG_ACK"), Some(1)),
        "{ack}"
    );
    server.signal("TERM");
    let lines = server.log.clone();
    assert_eq!(server.wait(), 0);
    std::thread::sleep(Duration::from_millis(200));
    let log = lines.lock().expect("log").join("\n");
    assert!(log.contains("weak secret: jwt_secret is 6 bytes"), "{log}");
    assert!(log.contains("weak secret: admin_token is 5 bytes"), "{log}");
    assert!(!log.contains("s3cr3t"), "the warning must not show the secret");
}

/// With `shutdown_grace = 0`, shutdown waits neither for a TCP connection
/// that has sent nothing (no waiting for its first byte, nor for its router,
/// and no spurious "writers did not stop in time") nor, past the 5 s HTTP
/// drain, for a request still uploading its body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_does_not_wait_for_silent_or_stuck_http_connections() {
    let dir = tempfile::tempdir().expect("tempdir");
    for upload in [false, true] {
        let mut cmd = chatd!(dir.path());
        cmd.env("CHATD_SHUTDOWN_GRACE", "0")
            .env("CHATD_ADMIN_TOKEN", "shutdown-admin-token-0123456789");
        let server = ServerProcess::start(cmd);
        let mut tcp = tokio::net::TcpStream::connect(&server.addr).await.expect("connect");
        if upload {
            use tokio::io::AsyncWriteExt;
            let head = "POST /v1/channels HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer shutdown-admin-token-0123456789\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{";
            tcp.write_all(head.as_bytes()).await.expect("head");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let started = std::time::Instant::now();
        server.signal("TERM");
        let lines = server.log.clone();
        assert_eq!(server.wait(), 0);
        let took = started.elapsed();
        let most = if upload {
            Duration::from_millis(5_900)
        } else {
            Duration::from_secs(2)
        };
        assert!(took < most, "upload {upload}: exit took {took:?}");
        std::thread::sleep(Duration::from_millis(200));
        let log = lines.lock().expect("log").join("\n");
        assert!(!log.contains("writers did not stop in time"), "{log}");
        drop(tcp);
    }
}

/// A client that gives up in the middle of its WebSocket handshake (the
/// upgrade request sent, the connection reset before the 101 is read) is
/// logged at debug level, not as a warning: anyone with a token could
/// write thousands of warning lines a second that way. Checked at the
/// default level, `info`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborted_websocket_handshakes_are_not_warnings() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatd!(dir.path());
    cmd.env("CHATD_JWT_SECRET", JWT_SECRET);
    let server = ServerProcess::start(cmd);
    let token = mint_token(JWT_SECRET, "alice", 3600);
    let request = format!(
        "GET /v1/ws HTTP/1.1\r\nHost: chatd\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Authorization: Bearer {token}\r\n\r\n"
    );
    for _ in 0..50 {
        let mut tcp = tokio::net::TcpStream::connect(&server.addr).await.expect("tcp");
        tcp.write_all(request.as_bytes()).await.expect("upgrade request");
        tcp.set_zero_linger().expect("SO_LINGER 0");
        drop(tcp);
    }
    // A whole session after them: the server has taken every one.
    let mut alice = server.connect(&token).await;
    alice.stream.close(None).await.expect("close");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = server.log_text();
    assert!(
        !log.contains("websocket upgrade failed"),
        "aborted handshakes logged at the default level:\n{log}"
    );
    server.signal("TERM");
    assert_eq!(server.wait(), 0);
}
