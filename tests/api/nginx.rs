//! The nginx configuration of `docs/security.md` ("Running behind TLS"),
//! taken from the document itself, run with Debian's nginx (a child process
//! with its own prefix in a temporary directory, on a free port) in front of
//! chatd: the Rust client connects and sends through it, the console loads
//! through it, every user route of `/v1/openapi.json` reaches chatd and
//! every admin route is stopped by nginx.
//!
//! Without nginx the test says so and passes, unless `CHATD_REQUIRE_NGINX=1`
//! (CI sets it, and installs nginx).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use chatd_client::{Client, ClientConfig};
use serde_json::{json, Value};

use chatd_testkit::*;

/// What the test changes in the documented block, each of which must be in
/// it: TLS off (no certificate here), chatd's and nginx's ports, the access
/// and error logs' paths.
const DOC_LISTEN: &str = "listen 443 ssl;";
const DOC_UPSTREAM: &str = "server 127.0.0.1:8080;";
const DOC_ACCESS_LOG: &str = "/var/log/nginx/chatd.access.log";
const DOC_ERROR_LOG: &str = "/var/log/nginx/chatd.error.log";

/// The routes that nginx must not pass on besides [`chatd::http::ADMIN_ROUTES`]:
/// the probes and the document, for the private network only.
const PRIVATE: &[&str] = &["/healthz", "/readyz", "/v1/openapi.json"];

/// The nginx binary: Debian's, or one on `PATH`.
fn nginx_binary() -> Option<PathBuf> {
    let debian = PathBuf::from("/usr/sbin/nginx");
    if debian.is_file() {
        return Some(debian);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("nginx"))
            .find(|candidate| candidate.is_file())
    })
}

/// The nginx binary, or `None` after a notice that the test is skipped;
/// with `CHATD_REQUIRE_NGINX=1` (CI) a missing nginx fails the test.
fn nginx_or_skip() -> Option<PathBuf> {
    let binary = nginx_binary();
    if binary.is_none() {
        assert!(
            std::env::var("CHATD_REQUIRE_NGINX").as_deref() != Ok("1"),
            "CHATD_REQUIRE_NGINX=1 but there is no nginx (/usr/sbin/nginx or on PATH)"
        );
        eprintln!("SKIPPED: no nginx (/usr/sbin/nginx or on PATH): the documented nginx configuration was not run; apt-get install nginx");
    }
    binary
}

/// The one ```` ```nginx ```` block of `docs/security.md`.
fn documented_config() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/security.md"))
        .expect("read docs/security.md");
    let mut blocks = doc.split("```nginx\n").skip(1);
    let block = blocks.next().expect("a ```nginx block in docs/security.md");
    assert!(blocks.next().is_none(), "one ```nginx block in docs/security.md");
    let block = &block[..block.find("\n```").expect("the block's end")];
    for needle in [DOC_LISTEN, DOC_UPSTREAM, DOC_ACCESS_LOG, DOC_ERROR_LOG] {
        assert!(
            block.contains(needle),
            "docs/security.md's nginx block has no `{needle}`"
        );
    }
    block.to_owned()
}

/// A free port on 127.0.0.1 (free when asked; nginx binds it just after).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// nginx running the documented block, killed on drop.
struct Nginx {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Nginx {
    /// Starts `binary` with the documented block in front of chatd at
    /// `upstream` (`host:port`) and waits until it accepts connections.
    fn start(binary: &Path, upstream: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let prefix = dir.path().display().to_string();
        let server = documented_config()
            .replace(DOC_LISTEN, &format!("listen 127.0.0.1:{port};"))
            .replace(DOC_UPSTREAM, &format!("server {upstream};"))
            .replace(DOC_ACCESS_LOG, &format!("{prefix}/access.log"))
            .replace(DOC_ERROR_LOG, &format!("{prefix}/chatd.error.log"))
            .lines()
            .filter(|line| !line.trim_start().starts_with("ssl_certificate"))
            .collect::<Vec<_>>()
            .join("\n");
        let config = format!(
            "daemon off;\nmaster_process off;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log info;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n\
             client_body_temp_path {prefix}/client_body;\nproxy_temp_path {prefix}/proxy;\n\
             fastcgi_temp_path {prefix}/fastcgi;\nuwsgi_temp_path {prefix}/uwsgi;\nscgi_temp_path {prefix}/scgi;\n\
             {server}\n}}\n"
        );
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, &config).expect("write nginx.conf");
        let child = Command::new(binary)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nginx");
        let mut nginx = Self { child, port, dir };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return nginx;
            }
            if let Ok(Some(status)) = nginx.child.try_wait() {
                panic!("nginx exited ({status}): {}\n{config}", nginx.error_log());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("nginx did not listen on {port}: {}", nginx.error_log());
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every operation of the OpenAPI document: (method, path with its
/// parameters filled in, whether nginx must stop it).
fn operations(doc: &Value) -> Vec<(String, String, bool)> {
    let mut operations = Vec::new();
    for (template, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            let method = method.to_uppercase();
            let private = PRIVATE.contains(&template.as_str())
                || chatd::http::ADMIN_ROUTES
                    .iter()
                    .any(|(m, t)| *m == method && t == template);
            let path = template
                .replace("{channelId}", "room")
                .replace("{userId}", "bob")
                .replace("{messageId}", "0190f0f0-0000-7000-8000-000000000000")
                .replace("{attachmentId}", "0190f0f0-0000-7000-8000-000000000001");
            assert!(!path.contains('{'), "a parameter this test does not fill: {template}");
            operations.push((method, path, private));
        }
    }
    operations
}

/// While chatd is unreachable (a restart), every reconnect through the
/// documented block fails in nginx; no log of nginx holds the `access_token`
/// of those requests. Before, the block left nginx's error log at `error`,
/// which writes each failed request line, token included.
#[tokio::test]
async fn the_documented_nginx_config_logs_no_token_while_chatd_is_down() {
    let Some(binary) = nginx_or_skip() else {
        return;
    };
    // Nothing listens there: chatd is down.
    let nginx = Nginx::start(&binary, &format!("127.0.0.1:{}", free_port()));
    let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLWFsaWNl";
    let http = reqwest::Client::new();
    for path in [
        format!("/v1/ws?access_token={token}"),
        format!("/v1/channels/room/messages?latest=true&access_token={token}"),
    ] {
        let res = http.get(nginx.url(&path)).send().await.expect("http");
        assert_eq!(res.status(), 502, "{path}");
    }
    let mut logs = String::new();
    for entry in std::fs::read_dir(nginx.dir.path()).expect("nginx dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "log") {
            logs.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    assert!(logs.contains("/v1/ws"), "the access log has the requests: {logs}");
    assert!(!logs.contains(token), "a token in nginx's logs: {logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_nginx_config_passes_the_clients_and_stops_the_admin_routes() {
    let Some(binary) = nginx_or_skip() else {
        return;
    };
    // Without admin_listen: nginx alone keeps the admin routes out.
    let app = spawn_app(Backend::Sqlite).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let nginx = Nginx::start(&binary, &app.addr.to_string());
    let http = reqwest::Client::new();

    // The Rust client through the proxy: the WebSocket, a send and its ACK.
    let ws = format!("ws://127.0.0.1:{}/v1/ws", nginx.port);
    let (alice, _events) = Client::connect(ClientConfig::new(ws, app.token("alice")))
        .await
        .unwrap_or_else(|e| panic!("connect through nginx: {e:?}\n{}", nginx.error_log()));
    let ack = alice
        .submit("room", "through-nginx", "hello through the proxy")
        .await
        .expect("submit")
        .await
        .expect("acked through nginx");
    assert_eq!(ack.seq, 1);
    assert!(!ack.duplicate);

    // What the clients and the console call over HTTP.
    let res = http
        .get(nginx.url("/v1/me/channels"))
        .bearer_auth(app.token("bob"))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["channels"][0]["channelId"], "room");
    let res = http
        .get(nginx.url("/v1/channels/room/messages?afterSeq=0"))
        .bearer_auth(app.token("bob"))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["messages"][0]["body"], "hello through the proxy");
    let res = http.get(nginx.url("/console")).send().await.expect("http");
    assert_eq!(res.status(), 200);
    let csp = res.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(
        csp.contains(&format!("ws://127.0.0.1:{}", nginx.port)),
        "the console's policy names the proxy's host and port: {csp}"
    );

    // The backend's send (an admin route) is stopped by nginx, admin token or not.
    let res = http
        .post(nginx.url("/v1/channels/room/messages"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"senderId": "alice", "clientMsgId": "admin-send", "body": "must not pass"}))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 403);
    assert_eq!(app.all_messages("room").await.len(), 1, "nothing stored past nginx");

    // Every operation of the document: the user routes reach chatd (its
    // answer is JSON), the admin and private routes are nginx's 403 or 404.
    let (status, doc) = app.request("GET", "/v1/openapi.json", None, None).await;
    assert_eq!(status, 200);
    for (method, path, private) in operations(&doc) {
        let request = http.request(
            reqwest::Method::from_bytes(method.as_bytes()).expect("method"),
            nginx.url(&path),
        );
        let request = if private {
            request.bearer_auth(ADMIN_TOKEN)
        } else {
            request
        };
        let res = request
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .expect("http");
        let status = res.status().as_u16();
        let from_chatd = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if private {
            assert!(
                !from_chatd && (status == 403 || status == 404),
                "{method} {path} passed nginx: {status}"
            );
        } else {
            assert!(from_chatd, "{method} {path} stopped by nginx: {status}");
        }
    }
    drop(alice);
    drop(nginx);
    app.stop().await;
}
