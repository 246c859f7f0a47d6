//! Reads from a standby (`database_replica_url`, issue #36 point 4): chatd
//! over a PostgreSQL primary and a streaming standby of the test's own
//! (`PgPair`, asynchronous replication, so the standby may lag), with
//! history, `SYNC` and search allowed to read from the standby.
//!
//! - a user's own send is in the history, `SYNC` and search read right after
//!   its ACK (read your writes), and those reads are served by the standby
//!   when it has caught up;
//! - with the standby's replay paused, the same reads still return the
//!   user's writes, from the primary, and the fallback is counted;
//! - a read that fails on the standby is answered by the primary;
//! - with the standby down, they go to the primary, and back to the standby
//!   once it is up again;
//! - guarantee 4: while sends commit, no read (most of them served by the
//!   standby) returns a seq while a lower one is missing.
//!
//! Skipped with a notice when PostgreSQL's programs (`initdb`) are not
//! installed, unless `CHATD_REQUIRE_POSTGRES=1`.

use chatd_testkit::ws::sync;
use chatd_testkit::{pg_server, spawn_app_on, PgPair, TestApp, TestDb, WsClient};
use serde_json::Value;

/// The next frame of type `ty`, skipping others (the sender's own MSG_RECV).
async fn next_of(client: &mut WsClient, ty: &str) -> Value {
    loop {
        let frame = client.recv().await;
        if frame["type"] == ty {
            return frame;
        }
        assert_ne!(frame["type"], "ERROR", "{frame}");
    }
}

async fn send_acked(client: &mut WsClient, key: &str, body: &str) -> i64 {
    client.send_msg("room", key, body).await;
    let ack = next_of(client, "MSG_ACK").await;
    assert_eq!(ack["clientMsgId"], key, "{ack}");
    ack["seq"].as_i64().expect("seq")
}

fn seqs(messages: &Value) -> Vec<i64> {
    messages
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["seq"].as_i64().expect("seq"))
        .collect()
}

/// A server on `pair`'s primary reading from its standby.
async fn server(pair: &PgPair) -> TestApp {
    let standby = pair.standby.url();
    spawn_app_on(TestDb::external(pair.primary.url()), move |c| {
        c.db_timeout_ms = 2000;
        c.database_replica_url = Some(standby);
    })
    .await
}

/// The metric series `series`' value now.
async fn metric(app: &TestApp, series: &str) -> f64 {
    app.admin().metric(series).await
}

/// Held by every test here for its whole run: the replica metrics are the
/// process's (one registry), and `cargo test` runs a binary's tests on
/// threads of one process, so a test counting its reads must not count
/// another's (CI once saw 45 reads where one test made 20).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const READS: &str = "chatd_db_replica_reads_total";
const BEHIND: &str = "chatd_db_replica_fallbacks_total{reason=\"behind\"}";
const FAILED: &str = "chatd_db_replica_fallbacks_total{reason=\"error\"}";

/// After each send, the history route, SYNC and search by the sender return
/// it at once. Asserts it for `rounds` sends, keys `{prefix}-{n}`.
async fn own_writes_are_read(app: &TestApp, alice: &mut WsClient, prefix: &str, rounds: usize) {
    let token = app.token("alice");
    for n in 0..rounds {
        let key = format!("{prefix}-{n}");
        let body = format!("word{prefix}x{n} replica");
        let seq = send_acked(alice, &key, &body).await;
        let (status, page) = app.history("room", &token, &format!("afterSeq={}", seq - 1)).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(seqs(&page["messages"]), [seq], "history after {key}: {page}");
        alice.send_json(sync("room", seq - 1, None)).await;
        let batch = next_of(alice, "SYNC_BATCH").await;
        assert_eq!(seqs(&batch["messages"]), [seq], "SYNC after {key}: {batch}");
        let (status, found) = app
            .request("GET", &format!("/v1/me/search?q=word{prefix}x{n}"), Some(&token), None)
            .await;
        assert_eq!(status, 200, "{found}");
        assert_eq!(seqs(&found["results"]), [seq], "search after {key}: {found}");
    }
}

/// Read your writes, and the reads go to the standby: its `pg_stat_activity`
/// shows chatd's replica connections, and the metric counts the reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_writes_are_read_back_and_reads_go_to_the_standby() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(pair) = PgPair::start(false) else { return };
    let app = server(&pair).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let reads_before = metric(&app, READS).await;
    own_writes_are_read(&app, &mut alice, "a", 20).await;
    let reads = metric(&app, READS).await - reads_before;
    assert!(reads >= 30.0, "only {reads} of 60 reads served by the standby");
    let on_standby = pair
        .standby
        .sql(&format!(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{}'",
            chatd::store::REPLICA_APPLICATION
        ))
        .expect("standby's pg_stat_activity");
    assert_ne!(on_standby, "0", "no chatd connection on the standby");
    app.stop().await;
}

/// With the standby's replay paused, every read of the user's own writes
/// goes to the primary after a short wait, and says so in the metrics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_standby_sends_reads_to_the_primary() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(pair) = PgPair::start(false) else { return };
    let app = server(&pair).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    send_acked(&mut alice, "p-first", "first").await;
    pair.wait_replayed();
    pair.standby.sql("SELECT pg_wal_replay_pause()").expect("pause replay");
    let behind_before = metric(&app, BEHIND).await;
    let reads_before = metric(&app, READS).await;
    own_writes_are_read(&app, &mut alice, "p", 5).await;
    assert_eq!(metric(&app, BEHIND).await - behind_before, 15.0);
    assert_eq!(
        metric(&app, READS).await,
        reads_before,
        "a read went to the paused standby"
    );
    // What the paused standby itself holds: none of them.
    let mut standby = pg_server::connect(&pair.standby.url()).await;
    let held: i64 = sqlx::query_scalar("SELECT count(*) FROM messages WHERE client_msg_id LIKE 'p-%'")
        .fetch_one(&mut standby)
        .await
        .expect("count on the standby");
    assert_eq!(held, 1, "only p-first was replayed");
    drop(standby);
    pair.standby
        .sql("SELECT pg_wal_replay_resume()")
        .expect("resume replay");
    app.stop().await;
}

/// A standby that is down: every read goes to the primary, without waiting
/// for the standby each time (counted as `error`), and back to the standby
/// once it is up again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_that_is_down_sends_reads_to_the_primary_until_it_is_back() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(pair) = PgPair::start(false) else { return };
    let app = server(&pair).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    own_writes_are_read(&app, &mut alice, "u", 2).await;
    pair.standby.stop("fast");
    let failed_before = metric(&app, FAILED).await;
    let reads_before = metric(&app, READS).await;
    let started = std::time::Instant::now();
    own_writes_are_read(&app, &mut alice, "d", 5).await;
    let took = started.elapsed();
    assert_eq!(metric(&app, FAILED).await - failed_before, 15.0);
    assert_eq!(
        metric(&app, READS).await,
        reads_before,
        "a read went to the stopped standby"
    );
    assert!(took < std::time::Duration::from_secs(5), "15 reads took {took:?}");
    pair.standby.start();
    pair.wait_streaming(false);
    pair.wait_replayed();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let reads_before = metric(&app, READS).await;
    own_writes_are_read(&app, &mut alice, "b", 3).await;
    let reads = metric(&app, READS).await - reads_before;
    assert!(reads >= 5.0, "only {reads} of 9 reads by the standby once it was back");
    app.stop().await;
}

/// A read that fails on the standby (here: the replica URL names a
/// database of the standby without chatd's tables, replayed like the rest)
/// is answered from the primary, and the next reads skip the standby.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_that_fails_on_the_standby_is_answered_by_the_primary() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(pair) = PgPair::start(false) else { return };
    pair.primary.sql("CREATE DATABASE empty").expect("create database");
    pair.wait_replayed();
    let standby = format!("postgres://postgres@127.0.0.1:{}/empty", pair.standby.port());
    let app = spawn_app_on(TestDb::external(pair.primary.url()), move |c| {
        c.db_timeout_ms = 2000;
        c.database_replica_url = Some(standby);
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let failed_before = metric(&app, FAILED).await;
    own_writes_are_read(&app, &mut alice, "f", 1).await;
    assert_eq!(metric(&app, FAILED).await - failed_before, 3.0);
    assert_eq!(metric(&app, READS).await, 0.0, "a failed read counted as the standby's");
    app.stop().await;
}

/// Guarantee 4 with reads on the standby: three senders commit while a
/// reader pages the whole channel again and again; every page is exactly
/// 1..=k for some k (no seq returned while a lower one is missing), k never
/// goes down, and most reads were the standby's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_read_returns_a_seq_while_a_lower_one_is_missing() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(pair) = PgPair::start(false) else { return };
    let app = server(&pair).await;
    app.create_channel("room", &["alice", "bob", "carol", "dave"]).await;
    let reads_before = metric(&app, READS).await;
    let mut senders = Vec::new();
    for user in ["alice", "bob", "carol"] {
        let mut client = app.connect(user).await;
        senders.push(tokio::spawn(async move {
            for n in 0..60 {
                send_acked(&mut client, &format!("{user}-{n}"), "load").await;
            }
        }));
    }
    let token = app.token("dave");
    let mut highest = 0;
    let mut pages = 0;
    while senders.iter().any(|s| !s.is_finished()) || pages < 5 {
        let (status, page) = app.history("room", &token, "afterSeq=0&limit=500").await;
        assert_eq!(status, 200, "{page}");
        let got = seqs(&page["messages"]);
        let k = got.len() as i64;
        assert_eq!(got, (1..=k).collect::<Vec<_>>(), "a gap in a page read during sends");
        assert!(k >= highest, "a page went back from {highest} to {k}");
        highest = k;
        pages += 1;
    }
    for sender in senders {
        sender.await.expect("sender");
    }
    let reads = metric(&app, READS).await - reads_before;
    eprintln!("{pages} pages read during the sends, {reads} by the standby, up to seq {highest}");
    assert!(
        reads * 2.0 >= pages as f64,
        "only {reads} of {pages} reads by the standby"
    );
    app.stop().await;
}

/// An SQLite store has no standby: the setting is refused at load.
#[test]
fn the_setting_needs_postgres() {
    let config = chatd::config::Config {
        database_replica_url: Some("postgres://postgres@127.0.0.1:5433/postgres".into()),
        ..chatd::config::Config::default()
    };
    let error = config.validate().expect_err("SQLite with a replica");
    assert!(error.to_string().contains("database_replica_url"), "{error}");
}
