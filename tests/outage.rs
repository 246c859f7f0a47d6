//! Storage outages (issue #5, point 2): while the database is down, hung or
//! losing its connections, a send is answered within `db_timeout_ms` with a
//! retryable ERROR and never ACKed, `/readyz` says 503, and once the database
//! is back the same server serves again, without a restart: the retried sends
//! are ACKed and every message is stored exactly once, with gapless seqs.
//!
//! `unavailable` promises that nothing was stored, so wherever a send got it,
//! its first successful retry must be a fresh store (`duplicate: false`).
//!
//! Some tests run a PostgreSQL server of their own (`initdb` into a temporary
//! directory, a free port), so that they can stop, restart and freeze it;
//! they are skipped with a notice when `initdb` is not installed, unless
//! `CHATD_REQUIRE_POSTGRES=1`. The others use the shared test PostgreSQL
//! (`CHATD_TEST_DATABASE_URL`), with the usual skip rules.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chatd_testkit::{
    own_postgres, postgres_url, spawn_app_on, spawn_app_with, sync, Backend, TestApp, TestDb, WsClient, ADMIN_TOKEN,
};
use serde_json::{json, Value};
use sqlx::Connection;

/// `db_timeout_ms` in these tests.
const DB_TIMEOUT_MS: u64 = 1000;
/// What an answer may take beyond `db_timeout_ms` (scheduling, a debug build
/// on a busy machine).
const SLACK: Duration = Duration::from_millis(600);

fn bound() -> Duration {
    Duration::from_millis(DB_TIMEOUT_MS) + SLACK
}

fn notice(text: &str) {
    // Straight to the stderr handle: the test harness captures eprintln!.
    let _ = writeln!(std::io::stderr(), "\n*** {text} ***\n");
}

// ---------------------------------------------------------------------------
// A TCP proxy between the server and PostgreSQL that can fail one COMMIT.

/// What the proxy does to the next `COMMIT` it relays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CommitFault {
    /// Relay it, let PostgreSQL commit, then close the connection before the
    /// answer reaches the server (the network failed during the commit).
    Cut,
    /// Relay it and then drop every byte both ways for a while (a partition
    /// after the commit was sent): the server's timeout has to end the wait.
    BlackHole,
}

/// Relays PostgreSQL connections (plaintext: the server connects with
/// `sslmode=disable`) and reads the frontend messages, to recognise `COMMIT`
/// (sqlx sends it as a simple `Query`).
struct CommitProxy {
    addr: std::net::SocketAddr,
    armed: Arc<std::sync::Mutex<Option<CommitFault>>>,
    /// COMMITs failed so far.
    failed: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl CommitProxy {
    async fn start(upstream: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr");
        let armed = Arc::new(std::sync::Mutex::new(None));
        let failed = Arc::new(AtomicU64::new(0));
        let task = tokio::spawn({
            let (armed, failed) = (armed.clone(), failed.clone());
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    let (upstream, armed, failed) = (upstream.clone(), armed.clone(), failed.clone());
                    tokio::spawn(async move {
                        if let Ok(server) = tokio::net::TcpStream::connect(&upstream).await {
                            let _ = relay(client, server, armed, failed).await;
                        }
                    });
                }
            }
        });
        Self {
            addr,
            armed,
            failed,
            task,
        }
    }

    /// Fails the next COMMIT that passes, as `fault` says.
    fn arm(&self, fault: CommitFault) {
        *self.armed.lock().expect("lock") = Some(fault);
    }

    fn failed(&self) -> u64 {
        self.failed.load(Ordering::SeqCst)
    }
}

impl Drop for CommitProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(
    client: tokio::net::TcpStream,
    server: tokio::net::TcpStream,
    armed: Arc<std::sync::Mutex<Option<CommitFault>>>,
    failed: Arc<AtomicU64>,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut from_client, to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    // Set once a COMMIT is being failed: nothing more reaches the client.
    let swallow = Arc::new(AtomicBool::new(false));
    let down = tokio::spawn({
        let swallow = swallow.clone();
        let mut to_client = to_client;
        async move {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                let n = from_server.read(&mut buf).await?;
                if n == 0 {
                    return Ok::<_, std::io::Error>(());
                }
                if !swallow.load(Ordering::SeqCst) {
                    to_client.write_all(&buf[..n]).await?;
                }
            }
        }
    });
    let result = async {
        // The startup message: a length, no type byte.
        let len = from_client.read_u32().await?;
        let mut startup = vec![0u8; len as usize - 4];
        from_client.read_exact(&mut startup).await?;
        to_server.write_all(&len.to_be_bytes()).await?;
        to_server.write_all(&startup).await?;
        loop {
            let kind = from_client.read_u8().await?;
            let len = from_client.read_u32().await?;
            let mut body = vec![0u8; len as usize - 4];
            from_client.read_exact(&mut body).await?;
            let mut message = vec![kind];
            message.extend_from_slice(&len.to_be_bytes());
            message.extend_from_slice(&body);
            let fault = if kind == b'Q' && body == b"COMMIT\0" {
                armed.lock().expect("lock").take()
            } else {
                None
            };
            let Some(fault) = fault else {
                to_server.write_all(&message).await?;
                continue;
            };
            swallow.store(true, Ordering::SeqCst);
            to_server.write_all(&message).await?;
            failed.fetch_add(1, Ordering::SeqCst);
            match fault {
                CommitFault::Cut => {
                    // Long enough for PostgreSQL to commit and answer (into the void).
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                CommitFault::BlackHole => {
                    let mut sink = vec![0u8; 16 * 1024];
                    let _ = tokio::time::timeout(Duration::from_secs(4), async {
                        while from_client.read(&mut sink).await? > 0 {}
                        Ok::<_, std::io::Error>(())
                    })
                    .await;
                }
            }
            return Ok(());
        }
    }
    .await;
    // Close both sides: the server sees the connection end, PostgreSQL too.
    down.abort();
    drop(from_client);
    let _ = to_server.shutdown().await;
    result
}

/// A send whose COMMIT failed in flight must get `internal`, not
/// `unavailable`: it was in fact stored, as its retry shows.
async fn commit_in_doubt(fault: CommitFault) {
    if postgres_url().is_none() {
        return;
    }
    let db = TestDb::new(Backend::Postgres).await;
    let upstream = reqwest::Url::parse(&db.url).expect("database url");
    let upstream_addr = format!(
        "{}:{}",
        upstream.host_str().expect("host"),
        upstream.port().unwrap_or(5432)
    );
    let proxy = CommitProxy::start(upstream_addr).await;
    let mut via_proxy = upstream.clone();
    via_proxy.set_host(Some("127.0.0.1")).expect("host");
    via_proxy.set_port(Some(proxy.addr.port())).expect("port");
    via_proxy.set_query(Some("sslmode=disable"));
    let app = spawn_app_on(db, |c| {
        c.database_url = Some(via_proxy.to_string());
        c.db_timeout_ms = DB_TIMEOUT_MS;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    send_acked(&mut alice, "room", "d-1").await;

    proxy.arm(fault);
    let started = Instant::now();
    alice.send_msg("room", "d-2", &body_of("d-2")).await;
    let Answer::Error(error) = answer(&mut alice).await else {
        panic!("a send whose COMMIT failed was ACKed");
    };
    let took = started.elapsed();
    assert_eq!(proxy.failed(), 1, "the proxy failed no COMMIT");
    assert_refused(&error, "d-2", "internal");
    assert!(took <= bound(), "answered after {took:?}");
    alice.expect_silence(Duration::from_millis(300)).await;

    // It was stored: the retry gets the original, once.
    let ack = send_acked(&mut alice, "room", "d-2").await;
    assert_eq!(
        (ack["duplicate"].clone(), ack["seq"].clone()),
        (Value::from(true), Value::from(2)),
        "{ack}"
    );
    send_acked(&mut alice, "room", "d-3").await;
    assert_history(&app, "room", &keys(&["d-1", "d-2", "d-3"])).await;

    // The same for the admin API: 500 internal, and the channel exists.
    proxy.arm(fault);
    let res = app
        .post_channel(serde_json::json!({"channelId": "later", "members": ["alice"]}))
        .await;
    assert_eq!(proxy.failed(), 2);
    assert_eq!(res.status(), 500);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error"]["code"], "internal", "{body}");
    assert_eq!(
        app.post_channel(serde_json::json!({"channelId": "later"}))
            .await
            .status(),
        409
    );
    assert_eq!(readyz(&app).await.0, 200);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_lost_during_commit() {
    commit_in_doubt(CommitFault::Cut).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_to_a_commit() {
    commit_in_doubt(CommitFault::BlackHole).await;
}

// ---------------------------------------------------------------------------
// Client-side checks.

/// What became of one send.
#[derive(Debug)]
enum Answer {
    Ack(Value),
    Error(Value),
}

/// The next ACK or ERROR, skipping other frames (MSG_RECV, RECEIPT).
async fn answer(client: &mut WsClient) -> Answer {
    loop {
        let frame = client.recv().await;
        match frame["type"].as_str() {
            Some("MSG_ACK") => return Answer::Ack(frame),
            Some("ERROR") => return Answer::Error(frame),
            _ => continue,
        }
    }
}

/// Sends and waits for the answer, which must be a retryable ERROR `code`
/// for this send, within the bound; returns how long it took.
async fn send_refused(client: &mut WsClient, channel: &str, key: &str, code: &str) -> Duration {
    let started = Instant::now();
    client.send_msg(channel, key, &body_of(key)).await;
    let answer = answer(client).await;
    let took = started.elapsed();
    let Answer::Error(error) = answer else {
        panic!("send {key} during the outage was answered {answer:?}");
    };
    assert_refused(&error, key, code);
    assert!(
        took <= bound(),
        "send {key} answered after {took:?}, bound {:?}",
        bound()
    );
    took
}

fn assert_refused(error: &Value, key: &str, code: &str) {
    assert_eq!(error["code"], code, "{error}");
    assert_eq!(error["retryable"], true, "{error}");
    assert_eq!(error["clientMsgId"], key, "{error}");
}

/// The body every test sends under a key (a retry must repeat it).
fn body_of(key: &str) -> String {
    format!("body of {key}")
}

/// Sends and expects a MSG_ACK (nothing else) for it; returns the ACK.
async fn send_acked(client: &mut WsClient, channel: &str, key: &str) -> Value {
    client.send_msg(channel, key, &body_of(key)).await;
    match answer(client).await {
        Answer::Ack(ack) => {
            assert_eq!(ack["clientMsgId"], key, "{ack}");
            ack
        }
        Answer::Error(error) => panic!("send {key} refused: {error}"),
    }
}

/// A retry after the database came back: a fresh store, since the send was
/// refused with `unavailable` (nothing stored).
async fn retry_stored(client: &mut WsClient, channel: &str, key: &str, seq: i64) {
    let ack = send_acked(client, channel, key).await;
    assert_eq!(
        ack["duplicate"], false,
        "{key} was stored although refused with unavailable: {ack}"
    );
    assert_eq!(ack["seq"], seq, "{ack}");
}

/// GET /readyz: the status and how long it took.
async fn readyz(app: &TestApp) -> (u16, Duration) {
    let started = Instant::now();
    let (status, _) = app.admin().readyz().await;
    (status, started.elapsed())
}

/// The channel's history holds exactly `keys`, once each, at seqs 1..=n in
/// this order, with their bodies.
async fn assert_history(app: &TestApp, channel: &str, keys: &[String]) {
    let messages = app.all_messages(channel).await;
    let got: Vec<(i64, String, String)> = messages
        .iter()
        .map(|m| {
            (
                m["seq"].as_i64().expect("seq"),
                m["clientMsgId"].as_str().expect("clientMsgId").to_owned(),
                m["body"].as_str().expect("body").to_owned(),
            )
        })
        .collect();
    let want: Vec<(i64, String, String)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (i as i64 + 1, k.clone(), body_of(k)))
        .collect();
    assert_eq!(got, want, "history of {channel}");
}

fn keys(names: &[&str]) -> Vec<String> {
    names.iter().map(|k| (*k).to_owned()).collect()
}

// ---------------------------------------------------------------------------

#[test]
fn the_default_db_timeout_is_at_most_five_seconds() {
    let config = chatd::config::Config::default();
    assert!(config.db_timeout_ms <= 5000, "db_timeout_ms = {}", config.db_timeout_ms);
    assert!(config.db_timeout_ms > 0);
}

/// Stop the database (`pg_ctl stop -m fast`) under a running server, then
/// start it again on the same port and data directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_and_restarting_postgres() {
    let Some(pg) = own_postgres() else { return };
    let app = spawn_app_on(TestDb::external(pg.url()), |c| c.db_timeout_ms = DB_TIMEOUT_MS).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    send_acked(&mut alice, "room", "a-1").await;
    send_acked(&mut alice, "room", "a-2").await;
    assert_eq!(readyz(&app).await.0, 200);

    pg.stop("fast");

    // One send, then two more while the first is still waiting for the
    // database: each is answered within the bound of its own send, not after
    // the batches queued before it.
    send_refused(&mut alice, "room", "a-3", "unavailable").await;
    let started = Instant::now();
    alice.send_msg("room", "a-4", &body_of("a-4")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = Instant::now();
    alice.send_msg("room", "a-5", &body_of("a-5")).await;
    for (key, sent) in [("a-4", started), ("a-5", second)] {
        let Answer::Error(error) = answer(&mut alice).await else {
            panic!("send {key} during the outage was ACKed");
        };
        assert_refused(&error, key, "unavailable");
        assert!(
            sent.elapsed() <= bound(),
            "send {key} answered after {:?}",
            sent.elapsed()
        );
    }
    // No late ACK for any of them.
    alice.expect_silence(Duration::from_millis(500)).await;

    let (status, took) = readyz(&app).await;
    assert_eq!(status, 503, "/readyz with the database stopped");
    assert!(took <= bound(), "/readyz took {took:?}");

    // Reads are bounded and refused the same way.
    let started = Instant::now();
    alice.send_json(sync("room", 0, None)).await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(error["code"], "unavailable", "{error}");
    assert_eq!(error["retryable"], true, "{error}");
    // named, so the client asks that read again (before, the ERROR named
    // nothing and a client's catch-up waited for its reply watchdog)
    assert_eq!(error["channelId"], "room", "{error}");
    assert!(
        started.elapsed() <= bound(),
        "SYNC answered after {:?}",
        started.elapsed()
    );
    // A refused send is looked up by its key first; with the database down
    // that lookup fails, and the answer is `unavailable` (retryable), not the
    // frame's own final refusal: the key may be stored, and a final
    // `invalid_field` would tell the client to give up on a message that the
    // server holds.
    alice
        .send_json(json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "a-1", "body": ""}))
        .await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(
        (
            error["code"].as_str(),
            error["retryable"].as_bool(),
            error["clientMsgId"].as_str()
        ),
        (Some("unavailable"), Some(true), Some("a-1")),
        "{error}"
    );
    let started = Instant::now();
    let (status, body) = app.history("room", ADMIN_TOKEN, "afterSeq=0").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (503, &Value::from("unavailable")),
        "{body}"
    );
    assert!(
        started.elapsed() <= bound(),
        "history answered after {:?}",
        started.elapsed()
    );
    // A session opened now gets ERROR unavailable instead of HELLO, and 1011.
    let started = Instant::now();
    let mut carol = app.connect_raw(&app.token("bob")).await.expect("upgrade");
    let error = carol.recv_type("ERROR").await;
    assert_eq!(error["code"], "unavailable", "{error}");
    assert!(
        started.elapsed() <= bound(),
        "HELLO's ERROR after {:?}",
        started.elapsed()
    );
    assert_eq!(carol.recv_close_code().await, 1011);

    pg.start();

    // The same server, the same session: the retries are stored, once.
    for (key, seq) in [("a-3", 3), ("a-4", 4), ("a-5", 5)] {
        retry_stored(&mut alice, "room", key, seq).await;
    }
    send_acked(&mut alice, "room", "a-6").await;
    assert_eq!(readyz(&app).await.0, 200, "/readyz after the database came back");
    // A new session works too (HELLO reads the store).
    let mut bob = app.connect("bob").await;
    assert_eq!(bob.hello["channels"][0]["lastSeq"], 6, "{}", bob.hello);
    // And a retry of an ACKed send is a duplicate.
    let ack = send_acked(&mut alice, "room", "a-3").await;
    assert_eq!(
        (ack["duplicate"].clone(), ack["seq"].clone()),
        (Value::from(true), Value::from(3))
    );
    bob.expect_silence(Duration::from_millis(200)).await;
    assert_history(&app, "room", &keys(&["a-1", "a-2", "a-3", "a-4", "a-5", "a-6"])).await;
    app.stop().await;
}

/// A hung database: every PostgreSQL process stopped with SIGSTOP, so
/// connections stay open and nothing answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_postgres() {
    let Some(pg) = own_postgres() else { return };
    let app = spawn_app_on(TestDb::external(pg.url()), |c| c.db_timeout_ms = DB_TIMEOUT_MS).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    send_acked(&mut alice, "room", "f-1").await;

    pg.freeze();
    send_refused(&mut alice, "room", "f-2", "unavailable").await;
    send_refused(&mut alice, "room", "f-3", "unavailable").await;
    let (status, took) = readyz(&app).await;
    assert_eq!(status, 503, "/readyz with the database frozen");
    assert!(took <= bound(), "/readyz took {took:?}");
    let started = Instant::now();
    let (status, _) = app.history("room", ADMIN_TOKEN, "afterSeq=0").await;
    assert_eq!(status, 503);
    assert!(
        started.elapsed() <= bound(),
        "history answered after {:?}",
        started.elapsed()
    );
    alice.expect_silence(Duration::from_millis(300)).await;

    pg.thaw();
    retry_stored(&mut alice, "room", "f-2", 2).await;
    retry_stored(&mut alice, "room", "f-3", 3).await;
    assert_eq!(readyz(&app).await.0, 200, "/readyz after the database woke up");
    assert_history(&app, "room", &keys(&["f-1", "f-2", "f-3"])).await;
    app.stop().await;
}

/// A connection of the test's own to the server's database.
enum Locker {
    Postgres(sqlx::PgConnection),
    Sqlite(sqlx::SqliteConnection),
}

impl Locker {
    async fn connect(backend: Backend, url: &str) -> Self {
        match backend {
            Backend::Postgres => Self::Postgres(sqlx::PgConnection::connect(url).await.expect("connect")),
            Backend::Sqlite => Self::Sqlite(sqlx::SqliteConnection::connect(url).await.expect("connect")),
        }
    }

    async fn execute(&mut self, sql: &str) {
        let result = match self {
            Self::Postgres(c) => sqlx::query(sql).execute(c).await.map(drop),
            Self::Sqlite(c) => sqlx::query(sql).execute(c).await.map(drop),
        };
        result.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Another connection holds the lock a send needs (PostgreSQL: the channel's
/// row, as a stuck transaction of another node would; SQLite: the database's
/// write lock): the send must still be answered within the bound, and leave
/// nothing behind.
async fn a_send_blocked_on_a_lock(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.db_timeout_ms = DB_TIMEOUT_MS).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    send_acked(&mut alice, "room", "l-1").await;

    let mut locker = Locker::connect(backend, &app.db.url).await;
    match backend {
        Backend::Postgres => {
            locker.execute("BEGIN").await;
            locker
                .execute("SELECT 1 FROM channels WHERE channel_id = 'room' FOR UPDATE")
                .await;
        }
        Backend::Sqlite => {
            locker.execute("BEGIN IMMEDIATE").await;
            locker
                .execute("INSERT INTO channels (channel_id, created_at) VALUES ('lock', 0)")
                .await;
        }
    }

    send_refused(&mut alice, "room", "l-2", "unavailable").await;
    alice.expect_silence(Duration::from_millis(300)).await;
    // Reads still answer.
    assert_eq!(readyz(&app).await.0, 200);

    locker.execute("ROLLBACK").await;
    retry_stored(&mut alice, "room", "l-2", 2).await;
    send_acked(&mut alice, "room", "l-3").await;
    assert_history(&app, "room", &keys(&["l-1", "l-2", "l-3"])).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_blocked_on_a_lock_postgres() {
    if postgres_url().is_some() {
        a_send_blocked_on_a_lock(Backend::Postgres).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_blocked_on_a_lock_sqlite() {
    a_send_blocked_on_a_lock(Backend::Sqlite).await;
}

/// `pg_terminate_backend` on every connection to the test's database, over
/// and over, while a client sends: each send ends ACKed or with a retryable
/// ERROR; retried with the same key, each errored one ends ACKed; each message
/// is stored once, gapless; the server serves on without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminating_the_servers_connections() {
    const SENDS: usize = 300;
    const WINDOW: usize = 4;
    if postgres_url().is_none() {
        return;
    }
    let app = spawn_app_with(Backend::Postgres, |c| c.db_timeout_ms = 2000).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let database = app.db.url.rsplit_once('/').expect("url").1.to_owned();
    let mut alice = app.connect("alice").await;

    let stop = Arc::new(AtomicBool::new(false));
    let terminated = Arc::new(AtomicU64::new(0));
    let killer = tokio::spawn({
        let (stop, terminated, database) = (stop.clone(), terminated.clone(), database.clone());
        async move {
            let mut admin = chatd_testkit::pg_admin().await;
            while !stop.load(Ordering::Relaxed) {
                let killed: i64 = sqlx::query_scalar(
                    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity \
                     WHERE datname = $1 AND pid <> pg_backend_pid()",
                )
                .bind(&database)
                .fetch_one(&mut admin)
                .await
                .expect("terminate");
                terminated.fetch_add(killed as u64, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(15)).await;
            }
        }
    });

    let all: Vec<String> = (0..SENDS).map(|n| format!("t-{n:04}")).collect();
    // Per key: the code of each refusal, then the ACK.
    let mut refusals: HashMap<String, Vec<String>> = HashMap::new();
    let mut acks: BTreeMap<String, Value> = BTreeMap::new();
    for window in all.chunks(WINDOW) {
        for key in window {
            alice.send_msg("room", key, &body_of(key)).await;
        }
        for _ in window {
            match answer(&mut alice).await {
                Answer::Ack(ack) => {
                    let key = ack["clientMsgId"].as_str().expect("key").to_owned();
                    assert!(acks.insert(key, ack).is_none(), "two ACKs");
                }
                Answer::Error(error) => {
                    let key = error["clientMsgId"].as_str().expect("clientMsgId").to_owned();
                    let code = error["code"].as_str().unwrap_or_default().to_owned();
                    assert!(
                        matches!(code.as_str(), "unavailable" | "internal") && error["retryable"] == true,
                        "not a retryable store error: {error}"
                    );
                    refusals.entry(key).or_default().push(code);
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    killer.await.expect("killer task");
    let terminated = terminated.load(Ordering::Relaxed);
    assert!(terminated > 0, "no connection was terminated");
    assert!(
        !refusals.is_empty(),
        "{terminated} connections terminated, but no send failed"
    );

    // Kill everything once more, so the pool holds only dead connections.
    let mut admin = chatd_testkit::pg_admin().await;
    sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
    )
    .bind(&database)
    .execute(&mut admin)
    .await
    .expect("terminate");
    assert_eq!(
        readyz(&app).await.0,
        200,
        "/readyz after every connection was terminated"
    );

    // Retry every refused send with its key until it is ACKed.
    let mut refused: Vec<&String> = refusals.keys().collect();
    refused.sort();
    for key in refused {
        let ack = send_acked(&mut alice, "room", key).await;
        if refusals[key].iter().all(|c| c == "unavailable") {
            assert_eq!(
                ack["duplicate"], false,
                "{key}: refused with unavailable, yet stored: {ack}"
            );
        }
        assert!(
            acks.insert(key.clone(), ack).is_none(),
            "{key} ACKed before its refusal"
        );
    }
    assert_eq!(acks.len(), SENDS);

    // Stored once each, gapless, with the seqs their ACKs named.
    let messages = app.all_messages("room").await;
    assert_eq!(chatd_testkit::seqs(&messages), (1..=SENDS as i64).collect::<Vec<_>>());
    let mut seen = std::collections::HashSet::new();
    for m in &messages {
        let key = m["clientMsgId"].as_str().expect("key");
        assert!(seen.insert(key.to_owned()), "{key} stored twice");
        assert_eq!(m["body"], body_of(key));
        assert_eq!(m["seq"], acks[key]["seq"], "{key}: history and ACK disagree");
        assert_eq!(m["messageId"], acks[key]["messageId"], "{key}");
    }

    // The same server keeps serving: a new session, a send, a SYNC.
    let mut bob = app.connect("bob").await;
    assert_eq!(bob.hello["channels"][0]["lastSeq"], SENDS as i64);
    let ack = send_acked(&mut bob, "room", "b-last").await;
    assert_eq!(ack["seq"], SENDS as i64 + 1);
    bob.send_json(sync("room", SENDS as i64, None)).await;
    let batch = bob.recv_type("SYNC_BATCH").await;
    assert_eq!(batch["messages"][0]["clientMsgId"], "b-last");
    let codes: Vec<&String> = refusals.values().flatten().collect();
    notice(&format!(
        "terminating connections: {terminated} terminated, {} sends refused ({} unavailable, {} internal)",
        refusals.len(),
        codes.iter().filter(|c| c.as_str() == "unavailable").count(),
        codes.iter().filter(|c| c.as_str() == "internal").count(),
    ));
    app.stop().await;
}
