//! Webhooks (protocol §12, issue 21): every stored log entry POSTed to a
//! real HTTP receiver on a real port in this process, in `seq` order per
//! channel, at least once, signed (checked by Python's `hmac`, an
//! implementation independent of ours), with `offlineMembers`; retried on
//! failure, resumed from the durable cursor after a restart, skipped after
//! `webhook_max_retry_secs`; and, with several nodes, driven by one node at a
//! time and taken over when it is SIGKILLed (`cluster` below).
//!
//! A test binary of its own: the `cluster` tests run real processes on
//! PostgreSQL and NATS (skipped without `CHATD_TEST_DATABASE_URL`, a failure
//! with `CHATD_REQUIRE_POSTGRES=1`).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chatd_testkit::{on_both_stores, spawn_app_with, Backend, TestApp};
use serde_json::{json, Value};

/// The webhook secret of every test.
const SECRET: &str = "whsec-test-0123456789abcdef";

/// How long a test waits for the receiver to be told something.
const WAIT: Duration = Duration::from_secs(30);

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Request {
    signature: String,
    body: Vec<u8>,
    json: Value,
    /// What the receiver answered.
    status: u16,
}

#[derive(Default)]
struct Script {
    /// Answers to give, in order; then `otherwise`.
    next: VecDeque<u16>,
    otherwise: u16,
    requests: Vec<Request>,
    /// How long each answer waits.
    delay: Duration,
}

/// A webhook receiver: axum on a real port, answering by script.
struct Receiver {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    task: tokio::task::JoinHandle<()>,
}

async fn hook(State(script): State<Arc<Mutex<Script>>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let delay = script.lock().expect("script").delay;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut script = script.lock().expect("script");
    let status = script.next.pop_front().unwrap_or(script.otherwise);
    script.requests.push(Request {
        signature: headers
            .get("chatd-signature")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned(),
        body: body.to_vec(),
        json,
        status,
    });
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

impl Receiver {
    /// A receiver answering `first` in order, then `otherwise`.
    async fn start(first: &[u16], otherwise: u16) -> Self {
        Self::start_on("127.0.0.1:0", first, otherwise).await
    }

    async fn start_on(addr: &str, first: &[u16], otherwise: u16) -> Self {
        let script = Arc::new(Mutex::new(Script {
            next: first.iter().copied().collect(),
            otherwise,
            requests: Vec::new(),
            delay: Duration::ZERO,
        }));
        let listener = tokio::net::TcpListener::bind(addr).await.expect("bind receiver");
        let addr = listener.local_addr().expect("addr");
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .with_state(script.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, script, task }
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    fn set_otherwise(&self, status: u16) {
        self.script.lock().expect("script").otherwise = status;
    }

    fn set_delay(&self, delay: Duration) {
        self.script.lock().expect("script").delay = delay;
    }

    fn requests(&self) -> Vec<Request> {
        self.script.lock().expect("script").requests.clone()
    }

    /// The entries of every request answered 2xx, in the order received:
    /// `{"entry": MSG_RECV, "offlineMembers": [...]}` each.
    fn accepted(&self) -> Vec<Value> {
        self.requests()
            .iter()
            .filter(|r| (200..300).contains(&r.status))
            .flat_map(|r| entries_of(&r.json))
            .collect()
    }

    /// Waits until the accepted entries hold every seq of `1..=n`.
    async fn wait_accepted(&self, n: i64) -> Vec<Value> {
        poll_until(|| {
            let accepted = self.accepted();
            let mut seqs: Vec<i64> = accepted.iter().map(seq_of).collect();
            seqs.sort_unstable();
            seqs.dedup();
            if seqs.len() as i64 >= n {
                return Ok(accepted);
            }
            Err(format!(
                "the receiver got seqs {seqs:?} of 1..={n} in time; requests: {:?}",
                self.requests()
                    .iter()
                    .map(|r| (r.status, r.json.to_string()))
                    .collect::<Vec<_>>()
            ))
        })
        .await
    }

    fn stop(self) {
        self.task.abort();
    }
}

/// The `{entry, offlineMembers}` items of a webhook body of either shape.
fn entries_of(body: &Value) -> Vec<Value> {
    match body["type"].as_str() {
        Some("entry") => vec![json!({"entry": body["entry"], "offlineMembers": body["offlineMembers"],
                                     "notify": body["notify"]})],
        Some("entries") => body["entries"].as_array().cloned().unwrap_or_default(),
        _ => panic!("not a webhook body: {body}"),
    }
}

fn seq_of(item: &Value) -> i64 {
    item["entry"]["seq"].as_i64().expect("seq")
}

/// Whether Python's `hmac` accepts `signature` for `body` with `secret`, and
/// its `t` is within 5 minutes of now (the tolerance docs/protocol.md gives
/// receivers).
fn python_verifies(secret: &str, signature: &str, body: &[u8]) -> bool {
    use std::io::Write;
    let script = r#"
import hashlib, hmac, sys, time
secret, header = sys.argv[1].encode(), sys.argv[2]
body = sys.stdin.buffer.read()
parts = dict(p.split("=", 1) for p in header.split(","))
t = parts["t"]
expected = hmac.new(secret, t.encode() + b"." + body, hashlib.sha256).hexdigest()
fresh = abs(time.time() * 1000 - int(t)) < 300_000
print("ok" if hmac.compare_digest(expected, parts["v1"]) and fresh else "bad")
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script, secret, signature])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    child.stdin.take().expect("stdin").write_all(body).expect("write");
    let out = child.wait_with_output().expect("python3 output");
    String::from_utf8_lossy(&out.stdout).trim() == "ok"
}

fn with_webhook(
    url: String,
    adjust: impl FnOnce(&mut chatd::config::Config),
) -> impl FnOnce(&mut chatd::config::Config) {
    move |c| {
        c.webhook_url = Some(url);
        c.webhook_secret = Some(SECRET.into());
        adjust(c);
    }
}

async fn app_for(backend: Backend, receiver: &Receiver, adjust: impl FnOnce(&mut chatd::config::Config)) -> TestApp {
    spawn_app_with(backend, with_webhook(receiver.url(), adjust)).await
}

/// Sends `frame` on `client` and returns its MSG_ACK (skipping MSG_RECVs).
async fn entry_ack(client: &mut chatd_testkit::WsClient, frame: Value) -> Value {
    client.send_json(frame).await;
    loop {
        let answer = client.recv().await;
        match answer["type"].as_str() {
            Some("MSG_ACK") => return answer,
            Some("MSG_RECV") => continue,
            _ => panic!("expected MSG_ACK, got {answer}"),
        }
    }
}

/// Waits until the node has `n` open sessions (`/readyz` counts them).
async fn wait_sessions(app: &TestApp, n: u64) {
    let started = Instant::now();
    loop {
        let (_, body) = app.admin().readyz().await;
        if body["sessions"].as_u64() == Some(n) {
            // The presence state is updated in the same close path.
            tokio::time::sleep(Duration::from_millis(100)).await;
            return;
        }
        assert!(started.elapsed() < WAIT, "sessions never became {n}: {body}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Messages, edits, reactions and deletes are all POSTed, once each (the
/// receiver answers 200), in seq order, as MSG_RECV objects, signed (Python
/// checks every signature), with `offlineMembers` as of each commit: a
/// member with an open session is not listed, one who never connected is,
/// the sender never is, and a member whose session closed is again.
async fn every_entry_is_posted_in_order_signed_with_its_offline_members(backend: Backend) {
    let receiver = Receiver::start(&[], 200).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let bob = app.connect("bob").await;
    let mut alice = app.connect("alice").await;
    let ack = alice.send_and_ack("room", "m1", "hello").await;
    let target = ack["messageId"].clone();
    entry_ack(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": target, "body": "hello!"}),
    )
    .await;
    entry_ack(
        &mut alice,
        json!({"type": "MSG_REACT", "clientMsgId": "r1", "messageId": target, "emoji": "👍", "op": "add"}),
    )
    .await;
    entry_ack(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": target}),
    )
    .await;
    drop(bob);
    wait_sessions(&app, 1).await;
    alice.send_and_ack("room", "m2", "are you there?").await;

    let accepted = receiver.wait_accepted(5).await;
    let seqs: Vec<i64> = accepted.iter().map(seq_of).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4, 5], "each entry once, in seq order");
    let kinds: Vec<&str> = accepted
        .iter()
        .map(|e| e["entry"]["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, vec!["message", "edit", "reaction", "delete", "message"]);
    for item in &accepted[..4] {
        assert_eq!(item["entry"]["type"], "MSG_RECV");
        assert_eq!(item["entry"]["channelId"], "room");
        assert_eq!(item["entry"]["senderId"], "alice");
        assert_eq!(
            item["offlineMembers"],
            json!(["carol"]),
            "bob had a session open: {item}"
        );
    }
    assert_eq!(accepted[1]["entry"]["targetId"], target);
    assert_eq!(accepted[2]["entry"]["emoji"], "👍");
    assert_eq!(
        accepted[4]["offlineMembers"],
        json!(["bob", "carol"]),
        "bob's session had closed"
    );
    assert_eq!(accepted[4]["entry"]["body"], "are you there?");

    let requests = receiver.requests();
    for request in &requests {
        assert_eq!(
            request.json["type"], "entry",
            "webhook_batch_max 1: one entry per request"
        );
        assert!(
            python_verifies(SECRET, &request.signature, &request.body),
            "Python's hmac refused {:?} for {}",
            request.signature,
            String::from_utf8_lossy(&request.body)
        );
        assert!(!python_verifies("another secret", &request.signature, &request.body));
    }
    let delivered = app.admin().metric("chatd_webhook_deliveries_total").await;
    assert!(delivered >= 5.0, "deliveries counted: {delivered}");
    app.stop().await;
    receiver.stop();
}

/// A receiver that answers 500 (and 503) before it answers 200 gets every
/// entry again until it takes it: nothing lost, in order, each retry the
/// same entry. Meanwhile sends are ACKed and `/readyz` stays 200.
async fn a_failing_receiver_gets_every_entry_again_until_it_answers_2xx(backend: Backend) {
    let receiver = Receiver::start(&[500, 500, 503], 200).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for n in 1..=5 {
        alice.send_and_ack("room", &format!("k{n}"), &format!("m{n}")).await;
    }
    let (status, _) = app.admin().readyz().await;
    assert_eq!(status, 200, "the receiver's health is not chatd's");
    let accepted = receiver.wait_accepted(5).await;
    let seqs: Vec<i64> = accepted.iter().map(seq_of).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4, 5]);
    let all: Vec<(u16, i64)> = receiver
        .requests()
        .iter()
        .map(|r| (r.status, seq_of(&entries_of(&r.json)[0])))
        .collect();
    assert_eq!(
        &all[..4],
        &[(500, 1), (500, 1), (503, 1), (200, 1)],
        "seq 1 retried until a 2xx"
    );
    assert!(all.windows(2).all(|w| w[0].1 <= w[1].1), "never out of order: {all:?}");
    assert!(app.admin().metric("chatd_webhook_failures_total{status=\"500\"}").await >= 2.0);
    app.stop().await;
    receiver.stop();
}

/// A receiver that is down (nothing listens on its port): sends are ACKed,
/// `/readyz` is 200; once it listens, it gets everything, in order.
async fn a_receiver_that_is_down_gets_everything_once_it_is_up(backend: Backend) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("port")
        .local_addr()
        .expect("addr");
    let url = format!("http://{port}/hook");
    let app = spawn_app_with(backend, with_webhook(url, |_| {})).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for n in 1..=4 {
        alice.send_and_ack("room", &format!("k{n}"), "hi").await;
    }
    let (status, body) = app.admin().readyz().await;
    assert_eq!(status, 200, "{body}");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        app.admin()
            .metric("chatd_webhook_failures_total{status=\"connect\"}")
            .await
            >= 1.0
    );
    let receiver = Receiver::start_on(&port.to_string(), &[], 200).await;
    let seqs: Vec<i64> = receiver.wait_accepted(4).await.iter().map(seq_of).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
    app.stop().await;
    receiver.stop();
}

/// The server restarts in the middle of a backlog (the receiver took 3
/// entries, then answers 503): after the restart delivery goes on from the
/// durable cursor: every entry arrives, never out of order (an entry may
/// come twice: at least once).
async fn a_restart_in_the_middle_of_a_backlog_resumes_from_the_cursor(backend: Backend) {
    let receiver = Receiver::start(&[200, 200, 200], 503).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for n in 1..=10 {
        alice.send_and_ack("room", &format!("k{n}"), &format!("m{n}")).await;
    }
    receiver.wait_accepted(3).await;
    drop(alice);
    let url = receiver.url();
    let app = app.restart(with_webhook(url, |_| {})).await;
    receiver.set_otherwise(200);
    let accepted = receiver.wait_accepted(10).await;
    let seqs: Vec<i64> = accepted.iter().map(seq_of).collect();
    assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "in order: {seqs:?}");
    let mut unique = seqs.clone();
    unique.dedup();
    assert_eq!(unique, (1..=10).collect::<Vec<_>>());
    assert!(
        seqs.len() <= 11,
        "only the entry in flight at the restart may come twice: {seqs:?}"
    );
    app.stop().await;
    receiver.stop();
}

/// `webhook_batch_max` > 1: a backlog goes in `entries` bodies of at most
/// that many entries, in seq order.
async fn a_backlog_goes_in_batches_of_webhook_batch_max(backend: Backend) {
    let receiver = Receiver::start(&[], 503).await;
    let app = app_for(backend, &receiver, |c| c.webhook_batch_max = 4).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for n in 1..=10 {
        alice.send_and_ack("room", &format!("k{n}"), "hi").await;
    }
    receiver.set_otherwise(200);
    let accepted = receiver.wait_accepted(10).await;
    let seqs: Vec<i64> = accepted.iter().map(seq_of).collect();
    assert_eq!(seqs, (1..=10).collect::<Vec<_>>());
    let sizes: Vec<usize> = receiver
        .requests()
        .iter()
        .filter(|r| r.status == 200)
        .map(|r| {
            assert_eq!(r.json["type"], "entries");
            assert!(python_verifies(SECRET, &r.signature, &r.body));
            r.json["entries"].as_array().map_or(0, Vec::len)
        })
        .collect();
    assert!(sizes.iter().all(|&n| (1..=4).contains(&n)), "{sizes:?}");
    assert!(sizes.iter().any(|&n| n > 1), "a backlog is batched: {sizes:?}");
    app.stop().await;
    receiver.stop();
}

/// An entry the receiver refuses for longer than `webhook_max_retry_secs`
/// is skipped (counted), and the feed goes on with the next one.
async fn an_entry_refused_past_the_retry_budget_is_skipped(backend: Backend) {
    let receiver = Receiver::start(&[], 500).await;
    let app = app_for(backend, &receiver, |c| c.webhook_max_retry_secs = 1).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    alice.send_and_ack("room", "k1", "lost").await;
    // Skipped: the durable cursor passes seq 1 without a 2xx (the metric is
    // the process's, shared with the other tests of this binary).
    let room = chatd::ids::ChannelId::from_trusted("room".into());
    let started = Instant::now();
    while app.state.store.webhook_cursor(&room).await.expect("cursor") < 1 {
        assert!(started.elapsed() < WAIT, "seq 1 was never skipped");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let requests = receiver.requests();
    assert!(requests.len() >= 2, "retried before it was skipped");
    assert!(requests
        .iter()
        .all(|r| r.status == 500 && seq_of(&entries_of(&r.json)[0]) == 1));
    assert!(app.admin().metric("chatd_webhook_skipped_entries_total").await >= 1.0);
    receiver.set_otherwise(200);
    alice.send_and_ack("room", "k2", "kept").await;
    let started = Instant::now();
    loop {
        let accepted = receiver.accepted();
        if let Some(item) = accepted.first() {
            assert_eq!(seq_of(item), 2, "seq 1 was skipped, seq 2 comes next");
            break;
        }
        assert!(started.elapsed() < WAIT, "seq 2 never came");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.stop().await;
    receiver.stop();
}

/// Runs one SQL statement on the test's database, as an operator would.
async fn operator_sql(url: &str, sql: &str) {
    use sqlx::Connection;
    if url.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
        sqlx::query(sql).execute(&mut conn).await.expect("sql");
    } else {
        let mut conn = sqlx::SqliteConnection::connect(url).await.expect("connect");
        sqlx::query(sql).execute(&mut conn).await.expect("sql");
    }
}

/// The replay of docs/reliability.md: one `UPDATE` of the cursor, while the
/// server runs, and the receiver is told again about every entry from that
/// seq on, in order.
async fn an_operator_replays_a_channel_from_a_seq_with_one_update(backend: Backend) {
    let receiver = Receiver::start(&[], 200).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for n in 1..=5 {
        alice.send_and_ack("room", &format!("k{n}"), "hi").await;
    }
    receiver.wait_accepted(5).await;
    let room = chatd::ids::ChannelId::from_trusted("room".into());
    let started = Instant::now();
    while app.state.store.webhook_cursor(&room).await.expect("cursor") < 5 {
        assert!(started.elapsed() < WAIT, "the cursor never reached 5");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    operator_sql(
        &app.db.url,
        "UPDATE webhook_cursors SET delivered_seq = 2 WHERE channel_id = 'room'",
    )
    .await;
    let started = Instant::now();
    while receiver.accepted().len() < 8 {
        assert!(
            started.elapsed() < WAIT,
            "not replayed: {:?}",
            receiver.accepted().len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seqs: Vec<i64> = receiver.accepted().iter().map(seq_of).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4, 5, 3, 4, 5]);
    app.stop().await;
    receiver.stop();
}

/// A new flag (protocol.md §17) is POSTed as `{"type":"flag","flag",
/// "entry"}`, signed, once (a second flag by the same reporter is not new).
async fn a_new_flag_is_posted_with_its_entry(backend: Backend) {
    let receiver = Receiver::start(&[], 200).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    let ack = bob.send_and_ack("room", "b1", "buy now").await;
    let id = ack["messageId"].as_str().expect("id").to_owned();
    let path = format!("/v1/messages/{id}/flags");
    let body = json!({"reason": "spam", "note": "ads"}).to_string();
    let (status, flag) = app.request("POST", &path, Some(&app.token("alice")), Some(&body)).await;
    assert_eq!(status, 201, "{flag}");
    let (status, _) = app.request("POST", &path, Some(&app.token("alice")), Some(&body)).await;
    assert_eq!(status, 200);
    let started = Instant::now();
    let posted = loop {
        let flags: Vec<Request> = receiver
            .requests()
            .into_iter()
            .filter(|r| r.json["type"] == "flag" && r.status == 200)
            .collect();
        if let Some(first) = flags.first() {
            break first.clone();
        }
        assert!(started.elapsed() < WAIT, "no flag posted: {:?}", receiver.requests());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(posted.json["flag"], flag);
    let entry = &posted.json["entry"];
    assert_eq!(
        (&entry["type"], &entry["messageId"], &entry["body"], &entry["senderId"]),
        (&json!("MSG_RECV"), &json!(id), &json!("buy now"), &json!("bob"))
    );
    assert!(python_verifies(SECRET, &posted.signature, &posted.body));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let flag_posts = receiver.requests().iter().filter(|r| r.json["type"] == "flag").count();
    assert_eq!(flag_posts, 1, "the repeated flag is not new");
    receiver.stop();
}

/// `notify` (§16): the offline members who want each entry, computed at its
/// commit: `notify` `all` (the default) gets every message, `mentions` only
/// those that mention the user or all, `none` nothing; a snooze keeps a user
/// out until it ends (a snooze that ends lets the next message through); a
/// user who blocks the sender is never notified; entries other than
/// messages notify no one; a member with a session open is not offline.
async fn notify_follows_settings_mentions_snoozes_and_blocks(backend: Backend) {
    let receiver = Receiver::start(&[], 200).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    let res = app
        .post_channel(json!({"channelId": "room", "owners": ["olive"],
                             "members": ["a-all", "b-mentions", "c-none", "d-snoozed", "e-blocks", "f-snooze-ends", "g-online"]}))
        .await;
    assert_eq!(res.status(), 201);
    let settings = |user: &'static str, body: String| {
        let app = &app;
        async move {
            let (status, answer) = app
                .request(
                    "PUT",
                    "/v1/me/channels/room/settings",
                    Some(&app.token(user)),
                    Some(&body),
                )
                .await;
            assert_eq!(status, 200, "{user} {body}: {answer}");
        }
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    let snooze_ends = now + 3_000;
    settings("b-mentions", json!({"notify": "mentions"}).to_string()).await;
    settings("c-none", json!({"notify": "none"}).to_string()).await;
    settings("d-snoozed", json!({"snoozeUntil": now + 3_600_000}).to_string()).await;
    settings("f-snooze-ends", json!({"snoozeUntil": snooze_ends}).to_string()).await;
    let (status, _) = app
        .request("PUT", "/v1/me/blocks/olive", Some(&app.token("e-blocks")), None)
        .await;
    assert_eq!(status, 204);
    let _online = app.connect("g-online").await;
    let mut olive = app.connect("olive").await;
    wait_sessions(&app, 2).await;

    let plain = olive.send_and_ack("room", "m1", "hello").await;
    let send = |key: &str, extra: Value| {
        let mut frame = json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": key, "body": key});
        if let (Some(frame), Value::Object(extra)) = (frame.as_object_mut(), extra) {
            frame.extend(extra);
        }
        frame
    };
    entry_ack(
        &mut olive,
        send("m2", json!({"mentions": ["b-mentions", "c-none", "d-snoozed"]})),
    )
    .await;
    entry_ack(&mut olive, send("m3", json!({"mentionAll": true}))).await;
    entry_ack(
        &mut olive,
        json!({"type": "MSG_REACT", "clientMsgId": "r1", "messageId": plain["messageId"], "emoji": "👍", "op": "add"}),
    )
    .await;
    // f's snooze ends; the next message reaches f.
    let wait = snooze_ends + 200
        - std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_millis() as i64;
    tokio::time::sleep(Duration::from_millis(wait.max(0) as u64)).await;
    entry_ack(&mut olive, send("m4", json!({}))).await;

    let accepted = receiver.wait_accepted(5).await;
    let mut by_seq: Vec<&Value> = accepted.iter().collect();
    by_seq.sort_by_key(|e| seq_of(e));
    by_seq.dedup_by_key(|e| seq_of(e));
    let offline = json!([
        "a-all",
        "b-mentions",
        "c-none",
        "d-snoozed",
        "e-blocks",
        "f-snooze-ends"
    ]);
    for item in &by_seq {
        assert_eq!(item["offlineMembers"], offline, "{item}");
    }
    let notify: Vec<&Value> = by_seq.iter().map(|e| &e["notify"]).collect();
    assert_eq!(*notify[0], json!(["a-all"]), "a plain message");
    assert_eq!(
        *notify[1],
        json!(["a-all", "b-mentions"]),
        "mentions b, c (none) and d (snoozed)"
    );
    assert_eq!(*notify[2], json!(["a-all", "b-mentions"]), "mentions all");
    assert_eq!(*notify[3], json!([]), "a reaction notifies no one");
    assert_eq!(*notify[4], json!(["a-all", "f-snooze-ends"]), "f's snooze has ended");
    app.stop().await;
    receiver.stop();
}

/// A message's attachments (§15) are in its webhook entry, with a signed
/// `url` that reads the bytes without a token.
async fn an_entry_carries_its_attachments_with_signed_urls(backend: Backend) {
    let receiver = Receiver::start(&[], 200).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let uploaded: Value = app
        .http
        .post(app.url("/v1/channels/room/attachments?filename=a.txt"))
        .bearer_auth(app.token("alice"))
        .header("content-type", "text/plain")
        .body("WEBHOOK-ATTACHED")
        .send()
        .await
        .expect("upload")
        .json()
        .await
        .expect("json");
    let id = uploaded["attachmentId"].clone();
    let mut alice = app.connect("alice").await;
    entry_ack(
        &mut alice,
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "m1", "body": "", "attachments": [id]}),
    )
    .await;
    let posted = receiver.wait_accepted(1).await;
    let entry = &posted[0]["entry"];
    assert_eq!(entry["attachments"][0]["attachmentId"], id, "{entry}");
    let url = entry["attachments"][0]["url"].as_str().expect("url");
    let bytes = app
        .http
        .get(app.url(url))
        .send()
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(&bytes[..], b"WEBHOOK-ATTACHED");
    receiver.stop();
}

/// The `(channelId, seq)` of every entry the receiver accepted.
fn accepted_keys(receiver: &Receiver) -> Vec<(String, i64)> {
    receiver
        .accepted()
        .iter()
        .map(|item| {
            (
                item["entry"]["channelId"].as_str().expect("channelId").to_owned(),
                seq_of(item),
            )
        })
        .collect()
}

/// Waits until the receiver accepted every one of `keys`.
async fn wait_keys(receiver: &Receiver, keys: &[(&str, i64)]) -> Vec<(String, i64)> {
    poll_until(|| {
        let got = accepted_keys(receiver);
        if keys.iter().all(|(c, s)| got.iter().any(|(gc, gs)| gc == c && gs == s)) {
            return Ok(got);
        }
        Err(format!("the receiver got {got:?}, not all of {keys:?}"))
    })
    .await
}

/// Calls `check` every 50 ms until it gives `Ok`, and fails the test with
/// its last `Err` text once [`WAIT`] has passed.
async fn poll_until<T>(mut check: impl FnMut() -> Result<T, String>) -> T {
    let started = Instant::now();
    loop {
        match check() {
            Ok(done) => return done,
            Err(why) => assert!(started.elapsed() < WAIT, "{why}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Webhooks switched on for a database with a history (`webhook_start`
/// `now`, the default): the history is not POSTed, only what is stored
/// from then on, in the old channels (from their last seq) and in a new one
/// (from its first entry); a later start with `beginning` does not replay
/// either, since the feed started on this database already.
async fn webhooks_switched_on_for_a_history_start_now(backend: Backend) {
    let receiver = Receiver::start(&[], 200).await;
    let app = spawn_app_with(backend, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("quiet", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for n in 1..=3 {
        alice
            .send_and_ack("room", &format!("old{n}"), &format!("before {n}"))
            .await;
    }
    drop(alice);
    let app = app.restart(with_webhook(receiver.url(), |_| {})).await;
    app.create_channel("later", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    alice.send_and_ack("room", "new4", "after 4").await;
    alice.send_and_ack("quiet", "q1", "after, quiet").await;
    alice.send_and_ack("later", "l1", "after, later").await;
    wait_keys(&receiver, &[("room", 4), ("quiet", 1), ("later", 1)]).await;
    drop(alice);
    let app = app
        .restart(with_webhook(receiver.url(), |c| {
            c.webhook_start = chatd::config::WebhookStart::Beginning;
        }))
        .await;
    let mut alice = app.connect("alice").await;
    alice.send_and_ack("room", "new5", "after 5").await;
    let got = wait_keys(&receiver, &[("room", 5)]).await;
    let room: Vec<i64> = got.iter().filter(|(c, _)| c == "room").map(|(_, s)| *s).collect();
    assert!(
        room.iter().all(|s| *s > 3),
        "the history before the feed started was posted: {got:?}"
    );
    let mut unique = got.clone();
    unique.sort();
    unique.dedup();
    let expected: Vec<(String, i64)> = [("later", 1), ("quiet", 1), ("room", 4), ("room", 5)]
        .iter()
        .map(|(c, s)| ((*c).to_owned(), *s))
        .collect();
    assert_eq!(
        unique, expected,
        "nothing else was posted (at least once: a repeat may be)"
    );
    app.stop().await;
    receiver.stop();
}

/// `webhook_start = "beginning"` on a database with a history: every
/// channel's whole log is POSTed, in order.
async fn webhook_start_beginning_sends_the_history(backend: Backend) {
    let receiver = Receiver::start(&[], 200).await;
    let app = spawn_app_with(backend, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for n in 1..=3 {
        alice
            .send_and_ack("room", &format!("old{n}"), &format!("before {n}"))
            .await;
    }
    drop(alice);
    let app = app
        .restart(with_webhook(receiver.url(), |c| {
            c.webhook_start = chatd::config::WebhookStart::Beginning;
        }))
        .await;
    let accepted = receiver.wait_accepted(3).await;
    let seqs: Vec<i64> = accepted.iter().map(seq_of).collect();
    assert_eq!(seqs, vec![1, 2, 3]);
    app.stop().await;
    receiver.stop();
}

on_both_stores!(
    an_entry_carries_its_attachments_with_signed_urls,
    webhooks_switched_on_for_a_history_start_now,
    webhook_start_beginning_sends_the_history,
    notify_follows_settings_mentions_snoozes_and_blocks,
    a_new_flag_is_posted_with_its_entry,
    an_operator_replays_a_channel_from_a_seq_with_one_update,
    every_entry_is_posted_in_order_signed_with_its_offline_members,
    a_failing_receiver_gets_every_entry_again_until_it_answers_2xx,
    a_receiver_that_is_down_gets_everything_once_it_is_up,
    a_restart_in_the_middle_of_a_backlog_resumes_from_the_cursor,
    a_backlog_goes_in_batches_of_webhook_batch_max,
    an_entry_refused_past_the_retry_budget_is_skipped,
    a_retried_entry_carries_the_text_as_it_is_now,
    a_retried_flag_carries_the_message_as_it_is_now_and_an_erased_reporter_s_is_not_sent,
);

/// Waits until the receiver has answered at least one request holding
/// `text` with a non-2xx status.
async fn wait_refused_with(receiver: &Receiver, text: &str) {
    poll_until(|| {
        let refused = receiver
            .requests()
            .iter()
            .any(|r| r.status >= 300 && String::from_utf8_lossy(&r.body).contains(text));
        if refused {
            Ok(())
        } else {
            Err(format!("no refused request with {text:?}"))
        }
    })
    .await;
}

/// Guarantee 9 and 14 reach the webhook: an entry retried after a failure
/// is read again for each attempt, so a message deleted and its sender
/// erased while the receiver was failing goes out with `body` "" (the
/// delete's own entry follows it), never with the text first read. Before,
/// every retry POSTed the bytes rendered for the first attempt, for up to
/// `webhook_max_retry_secs`.
async fn a_retried_entry_carries_the_text_as_it_is_now(backend: Backend) {
    let receiver = Receiver::start(&[], 500).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let ack = alice.send_and_ack("room", "k1", "call me at 555-0100").await;
    wait_refused_with(&receiver, "555-0100").await;
    let id = ack["messageId"].clone();
    entry_ack(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": id}),
    )
    .await;
    drop(alice);
    let (status, _) = app
        .request("DELETE", "/v1/users/alice", Some(chatd_testkit::ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 204);
    receiver.set_otherwise(200);
    let accepted = receiver.wait_accepted(2).await;
    assert_eq!(accepted[0]["entry"]["messageId"], id);
    assert_eq!(accepted[0]["entry"]["body"], "", "{}", accepted[0]);
    for request in receiver.requests().iter().filter(|r| r.status == 200) {
        assert!(
            !String::from_utf8_lossy(&request.body).contains("555-0100"),
            "deleted text sent: {}",
            request.json
        );
    }
    app.stop().await;
    receiver.stop();
}

/// A flag's POST is made again from what is stored for each attempt: after
/// the flagged message was deleted, the flag goes out with the entry's body
/// "" (not the text it had when flagged); a flag whose reporter was erased
/// meanwhile (the erasure removes it, with its `note`) is not sent at all.
async fn a_retried_flag_carries_the_message_as_it_is_now_and_an_erased_reporter_s_is_not_sent(backend: Backend) {
    let receiver = Receiver::start(&[], 500).await;
    let app = app_for(backend, &receiver, |_| {}).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut bob = app.connect("bob").await;
    let ack = bob.send_and_ack("room", "b1", "buy now at evil.example").await;
    let id = ack["messageId"].as_str().expect("id").to_owned();
    let path = format!("/v1/messages/{id}/flags");
    for (reporter, note) in [("alice", "ads by bob"), ("carol", "carol's own words")] {
        let body = json!({"reason": "spam", "note": note}).to_string();
        let (status, flag) = app
            .request("POST", &path, Some(&app.token(reporter)), Some(&body))
            .await;
        assert_eq!(status, 201, "{flag}");
    }
    wait_refused_with(&receiver, "carol's own words").await;
    entry_ack(
        &mut bob,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": id}),
    )
    .await;
    let (status, _) = app
        .request("DELETE", "/v1/users/carol", Some(chatd_testkit::ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 204);
    receiver.set_otherwise(200);
    let posted = poll_until(|| {
        let flags: Vec<Request> = receiver
            .requests()
            .into_iter()
            .filter(|r| r.json["type"] == "flag" && r.status == 200)
            .collect();
        flags.first().cloned().ok_or_else(|| "no flag accepted".to_owned())
    })
    .await;
    assert_eq!(posted.json["flag"]["reporterId"], "alice", "{}", posted.json);
    assert_eq!(posted.json["entry"]["body"], "", "{}", posted.json);
    // The backoff's next attempt of carol's flag would have come by now.
    tokio::time::sleep(Duration::from_secs(3)).await;
    for request in receiver.requests().iter().filter(|r| r.status == 200) {
        let text = String::from_utf8_lossy(&request.body);
        assert!(!text.contains("evil.example"), "deleted text sent: {text}");
        assert!(
            !text.contains("carol's own words"),
            "an erased reporter's note sent: {text}"
        );
    }
    app.stop().await;
    receiver.stop();
}

/// Several nodes (PostgreSQL and NATS, real `chatd` processes).
mod cluster {
    use super::*;
    use chatd_testkit::{
        mint_token, postgres_url, require_nats, subject_prefix, Admin, NatsNode, ServerProcess, TestDb, WsClient,
        JWT_SECRET, NATS_URL,
    };

    struct Node {
        process: ServerProcess,
        admin: Admin,
    }

    impl Node {
        fn start(db: &TestDb, prefix: &str, webhook_url: &str) -> Self {
            Self::start_with(db, prefix, webhook_url, &[])
        }

        /// [`Node::start`] with more settings (`CHATD_*` variables).
        fn start_with(db: &TestDb, prefix: &str, webhook_url: &str, env: &[(&str, &str)]) -> Self {
            let mut settings = vec![("CHATD_WEBHOOK_URL", webhook_url), ("CHATD_WEBHOOK_SECRET", SECRET)];
            settings.extend_from_slice(env);
            let NatsNode { process, admin } =
                NatsNode::start(chatd_testkit::chatd!(db.dir.path()), db, NATS_URL, prefix, &settings);
            Self { process, admin }
        }

        async fn connect(&self, user: &str) -> WsClient {
            self.process
                .connect(&mint_token(JWT_SECRET, user, 3600))
                .await
                .tolerating_late_adds()
        }

        async fn leases(&self) -> f64 {
            self.admin.metric("chatd_webhook_leases_held").await
        }
    }

    /// Waits until one of `nodes` holds every lease; returns its index.
    async fn holder(nodes: &[&Node]) -> usize {
        let started = Instant::now();
        loop {
            for (i, node) in nodes.iter().enumerate() {
                if node.leases().await == 64.0 {
                    return i;
                }
            }
            assert!(started.elapsed() < WAIT, "no node took the webhook leases");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Two nodes. `offlineMembers` is cluster-wide: bob, with a session on
    /// the node that did not store the entry, is not listed. One node drives
    /// the feed (it holds all 64 leases, the other none). It is SIGKILLed in
    /// the middle of a backlog that a slow receiver drains; the other node
    /// takes the leases over within seconds and goes on from the cursor:
    /// every entry arrives, never out of order (the one in flight at the
    /// kill may come twice: at least once), and the entries sent after the
    /// kill too.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_node_driving_the_feed_is_killed_mid_backlog_and_another_takes_over() {
        if postgres_url().is_none() {
            return;
        }
        require_nats();
        let db = TestDb::new(Backend::Postgres).await;
        let prefix = subject_prefix();
        let receiver = Receiver::start(&[], 503).await;
        let mut nodes = vec![
            Node::start(&db, &prefix, &receiver.url()),
            Node::start(&db, &prefix, &receiver.url()),
        ];
        nodes[0].admin.create_channel("room", &["alice", "bob", "carol"]).await;
        let _bob = nodes[1].connect("bob").await;
        // Bob's session is announced to the other node over NATS.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut alice = nodes[0].connect("alice").await;
        for n in 1..=30 {
            alice.send_and_ack("room", &format!("k{n}"), &format!("m{n}")).await;
        }
        let driving = holder(&[&nodes[0], &nodes[1]]).await;
        let other = 1 - driving;
        assert_eq!(nodes[other].leases().await, 0.0, "one node drives each channel");
        // The backlog drains slowly; the driving node dies in its middle.
        receiver.set_delay(Duration::from_millis(100));
        receiver.set_otherwise(200);
        let started = Instant::now();
        while receiver.accepted().len() < 8 {
            assert!(started.elapsed() < WAIT, "the backlog did not start draining");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        nodes[driving].process.kill();
        let killed_at = Instant::now();
        let survivor = nodes.remove(other);
        let mut alice = survivor.connect("alice").await;
        for n in 31..=40 {
            alice.send_and_ack("room", &format!("k{n}"), &format!("m{n}")).await;
        }
        let accepted = receiver.wait_accepted(40).await;
        assert!(
            killed_at.elapsed() < Duration::from_secs(20),
            "taken over within seconds ({:?})",
            killed_at.elapsed()
        );
        assert_eq!(survivor.leases().await, 64.0);
        let seqs: Vec<i64> = accepted.iter().map(seq_of).collect();
        assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "never out of order: {seqs:?}");
        let mut unique = seqs.clone();
        unique.dedup();
        assert_eq!(unique, (1..=40).collect::<Vec<_>>(), "nothing lost");
        for item in &accepted {
            assert_eq!(
                item["offlineMembers"],
                json!(["carol"]),
                "bob was online on the other node: {item}"
            );
        }
        receiver.stop();
        drop(db);
    }

    /// `offlineMembers` counts sessions, not presence: a member whose last
    /// session on the other node closed is offline for the next entry,
    /// although presence keeps showing it online for `presence_grace_ms`
    /// (30 s here); a session reopened within that grace counts again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_member_who_left_another_node_is_offline_for_the_next_entry() {
        if postgres_url().is_none() {
            return;
        }
        require_nats();
        let db = TestDb::new(Backend::Postgres).await;
        let prefix = subject_prefix();
        let receiver = Receiver::start(&[], 200).await;
        let grace = [("CHATD_PRESENCE_GRACE_MS", "30000")];
        let nodes = [
            Node::start_with(&db, &prefix, &receiver.url(), &grace),
            Node::start_with(&db, &prefix, &receiver.url(), &grace),
        ];
        nodes[0].admin.create_channel("room", &["alice", "bob", "carol"]).await;
        let mut alice = nodes[0].connect("alice").await;
        let announced = Duration::from_millis(500);
        let bob = nodes[1].connect("bob").await;
        tokio::time::sleep(announced).await;
        alice.send_and_ack("room", "k1", "bob is here").await;
        drop(bob);
        tokio::time::sleep(announced).await;
        alice.send_and_ack("room", "k2", "bob left a moment ago").await;
        let _bob = nodes[1].connect("bob").await;
        tokio::time::sleep(announced).await;
        alice.send_and_ack("room", "k3", "bob is back").await;
        let accepted = receiver.wait_accepted(3).await;
        let offline: Vec<(i64, Value)> = accepted
            .iter()
            .map(|item| (seq_of(item), item["offlineMembers"].clone()))
            .collect();
        assert_eq!(
            offline,
            vec![
                (1, json!(["carol"])),
                (2, json!(["bob", "carol"])),
                (3, json!(["carol"]))
            ],
            "offlineMembers per seq"
        );
        receiver.stop();
        drop(db);
    }
}
