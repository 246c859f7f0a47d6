//! A server in-process: `Application::build` on a random port over a
//! [`TestDb`], with the test configuration adjusted per test.

use std::net::SocketAddr;
use std::time::Duration;

use chatd::config::Config;
use chatd::startup::Application;
use chatd::state::AppState;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{mint_token, ws_connect, ws_connect_hello, Admin, Backend, TestDb, WsClient, ADMIN_TOKEN, JWT_SECRET};

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
        db,
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// The admin HTTP API of this server, on the app's HTTP client.
    pub fn admin(&self) -> Admin {
        Admin {
            base: self.url(""),
            token: ADMIN_TOKEN.to_owned(),
            http: self.http.clone(),
        }
    }

    /// Opens a connection and writes the head of an upload of `len` bytes of
    /// `content_type` into channel `channel` as `user` (`Connection: close`);
    /// the body is the caller's to write, in whatever pieces and pace.
    pub async fn upload_head(
        &self,
        user: &str,
        channel: &str,
        content_type: &str,
        len: usize,
    ) -> tokio::net::TcpStream {
        use tokio::io::AsyncWriteExt;
        let mut socket = tokio::net::TcpStream::connect(self.addr).await.expect("connect");
        let head = format!(
            "POST /v1/channels/{channel}/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
             Content-Type: {content_type}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n",
            self.token(user)
        );
        socket.write_all(head.as_bytes()).await.expect("head");
        socket
    }

    /// A valid token for `user`, valid for an hour.
    pub fn token(&self, user: &str) -> String {
        self.token_ttl(user, 3600)
    }

    pub fn token_ttl(&self, user: &str, ttl: u64) -> String {
        mint_token(JWT_SECRET, user, ttl)
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
        self.admin().post_channel(body).await
    }

    /// Creates a channel and asserts 201.
    pub async fn create_channel(&self, id: &str, members: &[&str]) {
        self.admin().create_channel(id, members).await;
    }

    pub async fn put_member(&self, channel: &str, user: &str) -> reqwest::StatusCode {
        self.admin().put_member(channel, user).await
    }

    pub async fn delete_member(&self, channel: &str, user: &str) -> reqwest::StatusCode {
        self.admin().delete_member(channel, user).await
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
        self.admin().all_messages(channel).await
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
