//! Test harness: a real chatd on a random port over a real database of its
//! own (a fresh PostgreSQL database, dropped afterwards, or a fresh SQLite file
//! in a temporary directory), driven through real WebSocket and HTTP clients.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chatd::auth::Auth;
use chatd::config::Config;
use chatd::ids::UserId;
use chatd::startup::Application;
use chatd::state::AppState;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

/// How long a test waits for a frame it expects.
pub const FRAME_TIMEOUT: Duration = Duration::from_secs(10);
pub const JWT_SECRET: &str = "test-secret-test-secret-test-secret!";
pub const ADMIN_TOKEN: &str = "test-admin-token-0123456789";

/// Which store a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The maintenance URL of the test PostgreSQL, from `CHATD_TEST_DATABASE_URL`.
/// Without it, PostgreSQL tests are skipped (said once on stderr), unless
/// `CHATD_REQUIRE_POSTGRES=1`, which makes them fail.
pub fn postgres_url() -> Option<String> {
    static NOTICE: Once = Once::new();
    match std::env::var("CHATD_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("CHATD_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "CHATD_REQUIRE_POSTGRES=1 but CHATD_TEST_DATABASE_URL is not set"
            );
            NOTICE.call_once(|| {
                // Straight to the stderr handle: the test harness captures eprintln!.
                let _ = writeln!(
                    std::io::stderr(),
                    "\n*** PostgreSQL tests SKIPPED: set CHATD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres to run them ***\n"
                );
            });
            None
        }
    }
}

/// A connection to the test PostgreSQL's maintenance database.
pub async fn pg_admin() -> sqlx::PgConnection {
    let url = postgres_url().expect("postgres tests need CHATD_TEST_DATABASE_URL");
    <sqlx::PgConnection as sqlx::Connection>::connect(&url)
        .await
        .expect("cannot reach the test PostgreSQL (CHATD_TEST_DATABASE_URL)")
}

/// Runs each named `async fn name(backend: Backend)` once per store:
/// `sqlite::name` and `postgres::name`.
#[macro_export]
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::helpers::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if $crate::helpers::postgres_url().is_some() {
                        super::$name($crate::helpers::Backend::Postgres).await;
                    }
                }
            )*
        }
    };
}

/// A database of the test's own, removed when dropped.
pub struct TestDb {
    pub url: String,
    pg: Option<(String, String)>,
    pub dir: tempfile::TempDir,
}

impl TestDb {
    pub async fn new(backend: Backend) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        match backend {
            Backend::Sqlite => Self {
                url: format!("sqlite://{}", dir.path().join("chatd.db").display()),
                pg: None,
                dir,
            },
            Backend::Postgres => Self::postgres_with("").await,
        }
    }

    /// A PostgreSQL database of the test's own, created with `options`
    /// appended to `CREATE DATABASE` (e.g. another collation).
    pub async fn postgres_with(options: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let admin_url = postgres_url().expect("postgres tests need CHATD_TEST_DATABASE_URL");
        let name = format!("chatd_test_{}", uuid::Uuid::now_v7().simple());
        let mut conn = pg_admin().await;
        sqlx::query(&format!("CREATE DATABASE \"{name}\" {options}"))
            .execute(&mut conn)
            .await
            .expect("create test database");
        let (base, _) = admin_url.rsplit_once('/').expect("database URL has a path");
        Self {
            url: format!("{base}/{name}"),
            pg: Some((admin_url, name)),
            dir,
        }
    }
}

impl TestDb {
    /// A database the test manages itself (e.g. its own PostgreSQL server),
    /// with a fresh data directory; nothing is dropped afterwards.
    pub fn external(url: String) -> Self {
        Self {
            url,
            pg: None,
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((admin_url, name)) = self.pg.take() else {
            return;
        };
        // Drop may run inside a runtime: use a thread with its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                if let Ok(mut conn) = <sqlx::PgConnection as sqlx::Connection>::connect(&admin_url).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                        .execute(&mut conn)
                        .await;
                }
            });
        })
        .join();
    }
}

impl TestDb {
    /// Opens the database with the server's store code (no migrations run).
    pub async fn store(&self) -> chatd::store::Store {
        chatd::store::Store::connect(&chatd::store::StoreOptions {
            url: self.url.clone(),
            max_connections: 4,
            timeout: Duration::from_secs(5),
        })
        .await
        .expect("connect to the test database")
    }
}

/// The configuration every test server starts from.
pub fn test_config(db: &TestDb) -> Config {
    Config {
        listen: "127.0.0.1:0".into(),
        database_url: Some(db.url.clone()),
        data_dir: db.dir.path().to_path_buf(),
        jwt_secret: Some(JWT_SECRET.into()),
        admin_token: Some(ADMIN_TOKEN.into()),
        shutdown_grace: 5,
        ..Config::default()
    }
}

/// A running server.
pub struct TestApp {
    pub addr: SocketAddr,
    pub state: AppState,
    pub shutdown: CancellationToken,
    pub handle: tokio::task::JoinHandle<Result<(), chatd::startup::StartupError>>,
    pub http: reqwest::Client,
    auth: Auth,
    pub db: TestDb,
}

pub async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, |_| {}).await
}

pub async fn spawn_app_with(backend: Backend, adjust: impl FnOnce(&mut Config)) -> TestApp {
    spawn_app_on(TestDb::new(backend).await, adjust).await
}

/// A server on `db`, with `adjust` applied to the test configuration.
pub async fn spawn_app_on(db: TestDb, adjust: impl FnOnce(&mut Config)) -> TestApp {
    if std::env::var_os("TEST_LOG").is_some() {
        let _ = chatd::telemetry::init_tracing("chatd=debug,info", chatd::config::LogFormat::Pretty);
    }
    let mut config = test_config(&db);
    adjust(&mut config);
    let app = Application::build(config).await.expect("build app");
    let addr = app.local_addr().expect("addr");
    let state = app.state().clone();
    let shutdown = app.shutdown_token();
    let handle = tokio::spawn(app.run_until_stopped(std::future::pending()));
    TestApp {
        addr,
        state,
        shutdown,
        handle,
        http: reqwest::Client::new(),
        auth: Auth::new(JWT_SECRET, ADMIN_TOKEN, None, None, 0),
        db,
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// A valid token for `user`, valid for an hour.
    pub fn token(&self, user: &str) -> String {
        self.auth
            .mint(&UserId::parse(user).expect("user id"), 3600)
            .expect("mint")
            .0
    }

    pub fn token_ttl(&self, user: &str, ttl: u64) -> String {
        self.auth
            .mint(&UserId::parse(user).expect("user id"), ttl)
            .expect("mint")
            .0
    }

    /// Any HTTP request; returns the status and the JSON body (`Null` when none).
    pub async fn request(&self, method: &str, path: &str, bearer: Option<&str>, body: Option<&str>) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self.http.request(method, self.url(path));
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_owned());
        }
        let res = request.send().await.expect("http");
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    pub async fn post_channel(&self, body: Value) -> reqwest::Response {
        self.http
            .post(self.url("/v1/channels"))
            .bearer_auth(ADMIN_TOKEN)
            .json(&body)
            .send()
            .await
            .expect("http")
    }

    /// Creates a channel and asserts 201.
    pub async fn create_channel(&self, id: &str, members: &[&str]) {
        let res = self.post_channel(json!({"channelId": id, "members": members})).await;
        assert_eq!(
            res.status(),
            201,
            "create channel {id}: {}",
            res.text().await.unwrap_or_default()
        );
    }

    pub async fn put_member(&self, channel: &str, user: &str) -> reqwest::StatusCode {
        let url = self.url(&format!("/v1/channels/{channel}/members/{user}"));
        self.http
            .put(url)
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .expect("http")
            .status()
    }

    pub async fn delete_member(&self, channel: &str, user: &str) -> reqwest::StatusCode {
        let url = self.url(&format!("/v1/channels/{channel}/members/{user}"));
        self.http
            .delete(url)
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .expect("http")
            .status()
    }

    /// GET history with `bearer`; returns status and JSON body.
    pub async fn history(&self, channel: &str, bearer: &str, query: &str) -> (u16, Value) {
        let url = self.url(&format!("/v1/channels/{channel}/messages?{query}"));
        let res = self.http.get(url).bearer_auth(bearer).send().await.expect("http");
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// Every message of a channel, paging through the history route as admin.
    pub async fn all_messages(&self, channel: &str) -> Vec<Value> {
        all_messages_at(&self.http, &self.url(""), channel).await
    }

    /// Connects `user` and reads HELLO.
    pub async fn connect(&self, user: &str) -> WsClient {
        ws_connect_hello(self.addr, &self.token(user)).await
    }

    /// Opens a WebSocket with `token` in the Authorization header.
    pub async fn connect_raw(&self, token: &str) -> Result<WsClient, tokio_tungstenite::tungstenite::Error> {
        ws_connect(self.addr, token).await
    }

    /// Stops the server gracefully and starts a new one on the same address
    /// and database (what a client sees as a server restart).
    pub async fn restart(self, adjust: impl FnOnce(&mut Config)) -> TestApp {
        let TestApp {
            addr,
            shutdown,
            handle,
            db,
            ..
        } = self;
        shutdown.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(20), handle).await;
        spawn_app_on(db, |config| {
            config.listen = addr.to_string();
            adjust(config);
        })
        .await
    }

    /// The WebSocket URL of this server.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/v1/ws", self.addr)
    }

    /// Stops the server gracefully and waits for it.
    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(20), self.handle).await;
    }
}

/// Every message of `channel` on the server at `base` (`http://host:port`),
/// paging through the history route as admin until `hasMore` is false.
pub async fn all_messages_at(http: &reqwest::Client, base: &str, channel: &str) -> Vec<Value> {
    let mut after = 0;
    let mut out = Vec::new();
    loop {
        let url = format!("{base}/v1/channels/{channel}/messages?afterSeq={after}&limit=500");
        let res = http.get(url).bearer_auth(ADMIN_TOKEN).send().await.expect("http");
        let status = res.status().as_u16();
        let body = res.json::<Value>().await.unwrap_or(Value::Null);
        assert_eq!(status, 200, "{body}");
        let page = body["messages"].as_array().expect("messages").clone();
        if let Some(last) = page.last() {
            after = last["seq"].as_i64().expect("seq");
        }
        out.extend(page);
        if body["hasMore"] == false {
            return out;
        }
    }
}

/// Opens a WebSocket to the server at `addr` (`host:port`) with `token` in
/// the Authorization header; HELLO is not read yet.
pub async fn ws_connect(
    addr: impl std::fmt::Display,
    token: &str,
) -> Result<WsClient, tokio_tungstenite::tungstenite::Error> {
    let mut request = format!("ws://{addr}/v1/ws").into_client_request()?;
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().expect("header"));
    let (stream, _) = tokio_tungstenite::connect_async(request).await?;
    Ok(WsClient {
        stream,
        hello: Value::Null,
    })
}

/// Connects to `addr` with `token` and reads HELLO, asserting it is one.
pub async fn ws_connect_hello(addr: impl std::fmt::Display, token: &str) -> WsClient {
    let mut client = ws_connect(addr, token).await.expect("connect");
    let hello = client.recv().await;
    assert_eq!(hello["type"], "HELLO", "first frame: {hello}");
    client.hello = hello;
    client
}

/// A `chatd serve` process started by a test, with its output kept.
pub struct ServerProcess {
    pub child: Child,
    /// `host:port` it listens on.
    pub addr: String,
    /// Every line of its stdout and stderr so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl ServerProcess {
    /// Starts `chatd serve --listen 127.0.0.1:0` and waits for its address.
    pub fn start(mut cmd: Command) -> Self {
        let mut child = cmd
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn chatd");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        for pipe in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let log = log.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    // The address is in the "chatd listening" line, as
                    // `addr=…` in text logs or an `addr` field in JSON logs.
                    if line.contains("chatd listening") {
                        if let Some(rest) = line.split("addr=").nth(1) {
                            let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_owned());
                        } else if let Ok(json) = serde_json::from_str::<Value>(&line) {
                            let addr = json["addr"].as_str().or(json["fields"]["addr"].as_str());
                            if let Some(addr) = addr {
                                let _ = tx.send(addr.to_owned());
                            }
                        }
                    }
                    log.lock().expect("log").push(line);
                }
            });
        }
        let addr = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!("chatd did not start: {:?}", log.lock().expect("log"));
            }
        };
        Self { child, addr, log }
    }

    /// Sends signal `name` (e.g. `TERM`) with kill(1).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Waits for exit and returns the exit code.
    pub fn wait(mut self) -> i32 {
        for _ in 0..300 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("chatd did not exit: {:?}", self.log.lock().expect("log"));
    }

    /// Its output so far, one line each.
    pub fn log_text(&self) -> String {
        self.log.lock().expect("log").join("\n")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A WebSocket client speaking JSON frames.
pub struct WsClient {
    pub stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
    pub hello: Value,
}

impl WsClient {
    pub async fn send_json(&mut self, frame: Value) {
        self.stream
            .send(Message::text(frame.to_string()))
            .await
            .expect("ws send");
    }

    pub async fn send_text(&mut self, text: &str) {
        self.stream.send(Message::text(text.to_owned())).await.expect("ws send");
    }

    pub async fn send_msg(&mut self, channel: &str, client_msg_id: &str, body: &str) {
        self.send_json(json!({"type": "MSG_SEND", "channelId": channel, "clientMsgId": client_msg_id, "body": body}))
            .await;
    }

    /// The next frame as JSON; panics on close or after [`FRAME_TIMEOUT`].
    pub async fn recv(&mut self) -> Value {
        loop {
            let next = tokio::time::timeout(FRAME_TIMEOUT, self.stream.next())
                .await
                .expect("timed out waiting for a frame");
            match next {
                Some(Ok(Message::Text(text))) => return serde_json::from_str(text.as_str()).expect("server sent JSON"),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                other => panic!("expected a text frame, got {other:?}"),
            }
        }
    }

    /// The next frame, which must have `type`.
    pub async fn recv_type(&mut self, ty: &str) -> Value {
        let frame = self.recv().await;
        assert_eq!(frame["type"], ty, "unexpected frame {frame}");
        frame
    }

    /// Sends a message and returns its MSG_ACK.
    pub async fn send_and_ack(&mut self, channel: &str, client_msg_id: &str, body: &str) -> Value {
        self.send_msg(channel, client_msg_id, body).await;
        let ack = self.recv_type("MSG_ACK").await;
        assert_eq!(ack["clientMsgId"], client_msg_id);
        ack
    }

    /// Asserts no frame arrives within `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        loop {
            match tokio::time::timeout(wait, self.stream.next()).await {
                Err(_) => return,
                Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
                Ok(other) => panic!("expected silence, got {other:?}"),
            }
        }
    }

    /// Reads until the close frame and returns its code, skipping other frames.
    pub async fn recv_close_code(&mut self) -> u16 {
        loop {
            let next = tokio::time::timeout(FRAME_TIMEOUT, self.stream.next())
                .await
                .expect("timed out waiting for close");
            match next {
                Some(Ok(Message::Close(Some(frame)))) => return u16::from(frame.code),
                Some(Ok(Message::Close(None))) => return u16::from(CloseCode::Status),
                Some(Ok(_)) => continue,
                other => panic!("connection ended without a close frame: {other:?}"),
            }
        }
    }
}

/// A SYNC frame.
pub fn sync(channel: &str, after_seq: i64, limit: Option<i64>) -> Value {
    let mut frame = json!({"type": "SYNC", "channelId": channel, "afterSeq": after_seq});
    if let Some(limit) = limit {
        frame["limit"] = json!(limit);
    }
    frame
}

/// Seqs of a list of MSG_RECV objects.
pub fn seqs(messages: &[Value]) -> Vec<i64> {
    messages.iter().map(|m| m["seq"].as_i64().expect("seq")).collect()
}
