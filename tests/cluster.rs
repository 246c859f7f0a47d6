//! Several `chatd` processes on one PostgreSQL database and NATS: every
//! guarantee of the wire contract across nodes (issue #4). A test binary of
//! its own: real processes (the `chatd` binary), a fresh database per test, the
//! machine's NATS at 127.0.0.1:4222 (a unique subject prefix per test, so
//! parallel tests never see each other), or a NATS server a test starts itself.
//!
//! Without `CHATD_TEST_DATABASE_URL` every test returns at once after a notice
//! (a failure with `CHATD_REQUIRE_POSTGRES=1`), like the PostgreSQL tests of
//! `tests/api`. NATS must be running (`.ci/run` starts it).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chatd_testkit::{
    postgres_url, require_nats, seqs, subject_prefix, sync, Admin, Backend, NatsNode, ServerProcess, TestDb, WsClient,
    NATS_URL,
};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// The `nats-server` program (Debian's package puts it in /usr/sbin).
fn nats_server() -> &'static str {
    if std::path::Path::new("/usr/sbin/nats-server").exists() {
        "/usr/sbin/nats-server"
    } else {
        "nats-server"
    }
}

/// Long enough to be sure a frame is not coming (cross-node delivery takes
/// milliseconds).
const SILENCE: Duration = Duration::from_millis(800);

/// One `chatd serve` process.
struct Node {
    process: ServerProcess,
    admin: Admin,
}

impl Node {
    /// Starts a node on `db` with NATS at `nats_url` and waits for its address.
    fn start(db: &TestDb, nats_url: &str, prefix: &str, extra: &[(&str, &str)]) -> Self {
        let NatsNode { process, admin } =
            NatsNode::start(chatd_testkit::chatd!(db.dir.path()), db, nats_url, prefix, extra);
        Self { process, admin }
    }

    /// Connects `user` and reads HELLO.
    async fn connect(&self, user: &str) -> WsClient {
        self.process
            .connect(&chatd_testkit::mint_token(chatd_testkit::JWT_SECRET, user, 3600))
            .await
            .tolerating_late_adds()
    }

    async fn create_channel(&self, id: &str, members: &[&str]) {
        self.admin.create_channel(id, members).await;
    }

    async fn set_member(&self, channel: &str, user: &str, add: bool) {
        let status = if add {
            self.admin.put_member(channel, user).await
        } else {
            self.admin.delete_member(channel, user).await
        };
        assert_eq!(status, 204);
    }

    /// Every stored message of a channel (admin history route, paged).
    async fn history(&self, channel: &str) -> Vec<Value> {
        self.admin.all_messages(channel).await
    }

    async fn readyz(&self) -> (u16, Value) {
        self.admin.readyz().await
    }

    /// The value of one metric series (`name` with its labels, as rendered),
    /// 0 when the series does not exist yet.
    async fn metric(&self, series: &str) -> f64 {
        self.admin.metric(series).await
    }

    /// Waits until `/readyz` reports `nats` as `state`.
    async fn wait_nats(&self, state: &str) {
        let started = Instant::now();
        loop {
            let (status, body) = self.readyz().await;
            assert_eq!(status, 200, "readiness follows the database, not NATS: {body}");
            if body["nats"] == state {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "NATS never became {state}: {body}\n{}",
                self.log_text()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn kill(&mut self) {
        self.process.kill();
    }

    fn log_text(&self) -> String {
        self.process.log_text()
    }
}

/// A database of its own, a unique subject prefix, and nodes on both.
struct Cluster {
    nodes: Vec<Node>,
    /// The nodes' NATS subject prefix.
    prefix: String,
    /// Kept for the nodes' lifetime: dropping it drops the database.
    _db: TestDb,
}

impl Cluster {
    /// `None` when PostgreSQL tests are skipped.
    async fn start(nodes: usize, extra: &[(&str, &str)]) -> Option<Self> {
        postgres_url()?;
        require_nats();
        Self::start_on(nodes, NATS_URL, extra).await
    }

    async fn start_on(nodes: usize, nats_url: &str, extra: &[(&str, &str)]) -> Option<Self> {
        postgres_url()?;
        let db = TestDb::new(Backend::Postgres).await;
        let prefix = subject_prefix();
        // The first node applies the migrations; the others start together.
        let mut started = vec![Node::start(&db, nats_url, &prefix, extra)];
        let rest: Vec<Node> = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..nodes)
                .map(|_| scope.spawn(|| Node::start(&db, nats_url, &prefix, extra)))
                .collect();
            handles.into_iter().map(|h| h.join().expect("node start")).collect()
        });
        started.extend(rest);
        Some(Self {
            nodes: started,
            prefix,
            _db: db,
        })
    }
}

impl Cluster {
    /// Publishes `envelopes` in order on `user`'s NATS subject, as another
    /// node's publications arrive there (NATS keeps one publisher's order).
    async fn publish_to_user(&self, user: &str, envelopes: &[chatd::delivery::nats::UserEnvelope]) {
        let nats = async_nats::connect(NATS_URL).await.expect("connect to NATS");
        let subject = chatd::delivery::nats::user_subject(&self.prefix, &chatd::ids::UserId::parse(user).expect("id"));
        for envelope in envelopes {
            let payload = serde_json::to_vec(envelope).expect("envelope");
            nats.publish(subject.clone(), payload.into()).await.expect("publish");
        }
        nats.flush().await.expect("flush");
    }
}

/// A membership change of a user in `channel` as a node publishes it.
fn membership_event(channel: &str, add: bool, seq: i64) -> chatd::delivery::nats::UserEnvelope {
    chatd::delivery::nats::UserEnvelope::Membership {
        channel_id: channel.into(),
        add,
        seq,
    }
}

/// A frame for every session of a user: an ERROR whose message is "marker".
/// Once a session has it, the node has handled what was published before it.
fn marker_event() -> chatd::delivery::nats::UserEnvelope {
    chatd::delivery::nats::UserEnvelope::Frame {
        frame_type: "ERROR".into(),
        channel_id: None,
        text: json!({"type": "ERROR", "code": "internal", "message": "marker", "retryable": true}).to_string(),
    }
}

/// Reads the next MSG_ACK, skipping MSG_RECV (another session of the same
/// user may store a message first: a session gets the MSG_RECV of its
/// user's messages stored through other sessions).
async fn next_ack(client: &mut WsClient) -> Value {
    loop {
        let frame = client.recv().await;
        match frame["type"].as_str() {
            Some("MSG_ACK") => return frame,
            Some("MSG_RECV") => assert_eq!(frame["senderId"], "alice", "{frame}"),
            _ => panic!("expected MSG_ACK, got {frame}"),
        }
    }
}

/// Reads `n` MSG_RECV, failing on any other frame.
async fn recv_msgs(client: &mut WsClient, n: usize) -> Vec<Value> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        out.push(client.recv_type("MSG_RECV").await);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_reaches_members_on_every_node_and_the_senders_other_sessions() {
    let Some(cluster) = Cluster::start(3, &[]).await else {
        return;
    };
    let [a, b, c] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice = a.connect("alice").await;
    let mut alice_on_a = a.connect("alice").await;
    let mut alice_on_c = c.connect("alice").await;
    let mut bob = b.connect("bob").await;
    let mut carol = c.connect("carol").await;
    let mut eve = b.connect("eve").await;
    for node in [a, b, c] {
        assert_eq!(node.readyz().await.1["nats"], "connected");
    }

    let ack = alice.send_and_ack("room", "m1", "hello from A").await;
    assert_eq!(
        (ack["seq"].as_i64(), ack["duplicate"].as_bool()),
        (Some(1), Some(false))
    );
    for (who, client) in [
        ("bob on B", &mut bob),
        ("carol on C", &mut carol),
        ("alice's session on C", &mut alice_on_c),
        ("alice's other session on A", &mut alice_on_a),
    ] {
        let recv = client.recv_type("MSG_RECV").await;
        assert_eq!(recv["messageId"], ack["messageId"], "{who}");
        assert_eq!(recv["seq"], 1, "{who}");
        assert_eq!(recv["body"], "hello from A", "{who}");
        assert_eq!(recv["senderId"], "alice", "{who}");
    }
    alice.expect_silence(SILENCE).await;
    eve.expect_silence(Duration::from_millis(10)).await;

    // And the other way round: from C to A and B.
    let ack = carol.send_and_ack("room", "c1", "hello from C").await;
    assert_eq!(ack["seq"], 2);
    for client in [&mut alice, &mut alice_on_a, &mut alice_on_c, &mut bob] {
        let recv = client.recv_type("MSG_RECV").await;
        assert_eq!(
            (recv["seq"].as_i64(), recv["senderId"].as_str()),
            (Some(2), Some("carol"))
        );
    }
    carol.expect_silence(SILENCE).await;
    eve.expect_silence(Duration::from_millis(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_another_node_gets_the_original_ack_and_stores_nothing() {
    let Some(cluster) = Cluster::start(3, &[]).await else {
        return;
    };
    let [a, b, c] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob"]).await;
    let mut bob = c.connect("bob").await;
    let mut alice = a.connect("alice").await;
    let first = alice.send_and_ack("room", "k1", "once").await;
    assert_eq!(first["duplicate"], false);
    assert_eq!(bob.recv_type("MSG_RECV").await["messageId"], first["messageId"]);

    // The connection drops; the client retries on another node.
    drop(alice);
    let mut alice = b.connect("alice").await;
    let retry = alice.send_and_ack("room", "k1", "once").await;
    assert_eq!(retry["duplicate"], true);
    for field in ["messageId", "seq", "ts", "channelId"] {
        assert_eq!(retry[field], first[field], "{field}");
    }
    // The same key with another body is a conflict, on any node.
    alice.send_msg("room", "k1", "something else").await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(error["code"], "idempotency_conflict");

    // Concurrent copies of one send on two nodes: one stored, both the same ids.
    let mut alice_b = b.connect("alice").await;
    let mut alice_c = c.connect("alice").await;
    alice_b.send_msg("room", "k2", "twice").await;
    alice_c.send_msg("room", "k2", "twice").await;
    let (x, y) = tokio::join!(next_ack(&mut alice_b), next_ack(&mut alice_c));
    assert_eq!(x["messageId"], y["messageId"]);
    assert_eq!(x["seq"], y["seq"]);
    let duplicates: Vec<bool> = [&x, &y]
        .iter()
        .map(|a| a["duplicate"].as_bool().expect("bool"))
        .collect();
    assert_eq!(
        duplicates.iter().filter(|d| !**d).count(),
        1,
        "exactly one copy stored: {duplicates:?}"
    );

    // Bob got each message once; the store holds two.
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(recv["messageId"], x["messageId"]);
    bob.expect_silence(SILENCE).await;
    let stored = c.history("room").await;
    assert_eq!(seqs(&stored), vec![1, 2]);
    assert_eq!(
        stored
            .iter()
            .map(|m| m["clientMsgId"].as_str().expect("id"))
            .collect::<Vec<_>>(),
        vec!["k1", "k2"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_senders_on_different_nodes_get_gapless_seqs_and_everyone_sees_them_in_order() {
    const PER_SENDER: usize = 60;
    let Some(cluster) = Cluster::start(3, &[]).await else {
        return;
    };
    let members = ["s0", "s1", "s2", "r0", "r1", "r2"];
    cluster.nodes[0].create_channel("busy", &members).await;
    let mut receivers = Vec::new();
    let mut senders = Vec::new();
    for (i, node) in cluster.nodes.iter().enumerate() {
        receivers.push(node.connect(&format!("r{i}")).await);
        senders.push(node.connect(&format!("s{i}")).await);
    }
    let total = PER_SENDER * senders.len();
    let sending = senders.into_iter().enumerate().map(|(i, mut sender)| async move {
        for n in 0..PER_SENDER {
            let frame = json!({"type": "MSG_SEND", "channelId": "busy", "clientMsgId": format!("s{i}-{n}"), "body": format!("{i}/{n}")});
            sender
                .stream
                .feed(Message::text(frame.to_string()))
                .await
                .expect("feed");
        }
        sender.stream.flush().await.expect("flush");
        let (mut acked, mut received) = (Vec::new(), Vec::new());
        while acked.len() < PER_SENDER {
            let frame = sender.recv().await;
            match frame["type"].as_str() {
                Some("MSG_ACK") => acked.push(frame["seq"].as_i64().expect("seq")),
                Some("MSG_RECV") => received.push(frame["seq"].as_i64().expect("seq")),
                _ => panic!("unexpected {frame}"),
            }
        }
        (acked, received)
    });
    let receiving = receivers.into_iter().map(|mut receiver| async move {
        let got = recv_msgs(&mut receiver, total).await;
        seqs(&got)
    });
    let (sent, received) = tokio::join!(
        futures_util::future::join_all(sending),
        futures_util::future::join_all(receiving)
    );
    let mut all_acked: Vec<i64> = Vec::new();
    for (acked, seen) in &sent {
        assert!(
            acked.windows(2).all(|w| w[0] < w[1]),
            "a pipeline's ACKs increase: {acked:?}"
        );
        assert!(
            seen.windows(2).all(|w| w[0] < w[1]),
            "a sender sees others in order: {seen:?}"
        );
        all_acked.extend(acked);
    }
    all_acked.sort_unstable();
    let expected: Vec<i64> = (1..=total as i64).collect();
    assert_eq!(all_acked, expected, "gapless, each seq once, across nodes");
    for (i, got) in received.iter().enumerate() {
        assert_eq!(got, &expected, "receiver on node {i}: every message, in seq order");
    }
    assert_eq!(seqs(&cluster.nodes[2].history("busy").await), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn membership_changed_on_one_node_applies_on_another_at_once() {
    let Some(cluster) = Cluster::start(3, &[]).await else {
        return;
    };
    let [a, b, c] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob"]).await;
    let mut alice = b.connect("alice").await;
    let mut bob = c.connect("bob").await;
    let mut carol = c.connect("carol").await;
    alice.send_and_ack("room", "m1", "before").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["seq"], 1);

    // Removed through node A: bob on C is told (MEMBER, CHANNEL_REMOVED),
    // alice on B sees it, and bob gets nothing after that.
    a.set_member("room", "bob", false).await;
    let leave = bob.recv_type("MEMBER").await;
    assert_eq!((&leave["op"], &leave["afterSeq"]), (&json!("leave"), &json!(1)));
    assert_eq!(bob.recv_type("CHANNEL_REMOVED").await["reason"], "removed");
    assert_eq!(alice.recv_type("MEMBER").await, leave);
    alice.send_and_ack("room", "m2", "after the removal").await;
    // Added through node A: carol on C is told first, then gets the next
    // message at once.
    a.set_member("room", "carol", true).await;
    let added = carol.recv_type("CHANNEL_ADDED").await;
    assert_eq!(
        (&added["channel"]["channelId"], &added["channel"]["lastSeq"]),
        (&json!("room"), &json!(2))
    );
    let join = carol.recv_type("MEMBER").await;
    assert_eq!((&join["op"], &join["afterSeq"]), (&json!("join"), &json!(2)));
    assert_eq!(alice.recv_type("MEMBER").await, join);
    let ack = alice.send_and_ack("room", "m3", "after the add").await;
    let recv = carol.recv_type("MSG_RECV").await;
    assert_eq!(recv["seq"], ack["seq"]);
    assert_eq!(recv["body"], "after the add");
    bob.expect_silence(SILENCE).await;
    carol.expect_silence(Duration::from_millis(10)).await;

    // Bob back in: receives again (node C subscribes the channel anew for him).
    a.set_member("room", "bob", true).await;
    assert_eq!(bob.recv_type("CHANNEL_ADDED").await["channel"]["lastSeq"], 3);
    assert_eq!(bob.recv_type("MEMBER").await["op"], "join");
    assert_eq!(alice.recv_type("MEMBER").await["userId"], "bob");
    assert_eq!(carol.recv_type("MEMBER").await["userId"], "bob");
    let ack = alice.send_and_ack("room", "m4", "bob is back").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);
    assert_eq!(carol.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);
}

/// With NATS, a channel created with members whose sessions are already open
/// reaches them live on every node: creating a channel is a membership
/// change like PUT/DELETE, not only something a node learns when a session
/// starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_created_after_its_members_connected_reaches_them_at_once() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    let mut alice = a.connect("alice").await;
    let mut alice_phone = a.connect("alice").await;
    let mut bob = b.connect("bob").await;
    a.create_channel("fresh", &["alice", "bob"]).await;
    assert_eq!(alice.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], "fresh");
    let ack = alice.send_and_ack("fresh", "f1", "first words").await;
    assert_eq!(ack["seq"], 1);
    for (who, session) in [("bob on B", &mut bob), ("alice's phone on A", &mut alice_phone)] {
        let added = session.recv_type("CHANNEL_ADDED").await;
        assert_eq!(added["channel"]["channelId"], "fresh", "{who}: CHANNEL_ADDED first");
        let recv = session.recv_type("MSG_RECV").await;
        assert_eq!(
            (recv["seq"].as_i64(), recv["body"].as_str()),
            (Some(1), Some("first words")),
            "{who}: {recv}"
        );
    }
}

/// Membership changes made on different nodes reach a node in any order (each
/// node applies its own at once; the others' come through NATS). A removal
/// that committed before an add but arrives after it must not end the
/// member's delivery: the database decides, not the order of arrival. The
/// late removal is published by hand, as a slow node's would arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_removal_that_arrives_after_a_later_add_does_not_stop_delivery() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice"]).await;
    let mut bob = a.connect("bob").await;
    let mut alice = b.connect("alice").await;
    // Added through node A, which takes the channel for bob at once.
    a.set_member("room", "bob", true).await;
    assert_eq!(bob.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], "room");
    assert_eq!(bob.recv_type("MEMBER").await["op"], "join");
    assert_eq!(alice.recv_type("MEMBER").await["userId"], "bob");
    let ack = alice.send_and_ack("room", "m1", "first").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);

    // A removal from before that add arrives late, then a marker frame on the
    // same subject: NATS keeps one publisher's order, so once bob has the
    // marker, node A has handled the removal.
    cluster
        .publish_to_user("bob", &[membership_event("room", false, 0), marker_event()])
        .await;
    assert_eq!(bob.recv_type("ERROR").await["message"], "marker");
    // The removal is checked against the database by the user's membership
    // task, beside the frames: give that read a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;

    // Bob is still a member (the database says so): he keeps receiving.
    let ack = alice.send_and_ack("room", "m2", "second").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);
}

/// A TCP relay to PostgreSQL that can stall: while paused, nothing is
/// forwarded either way, so the node behind it sees its database hang.
struct PausableProxy {
    addr: std::net::SocketAddr,
    paused: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl PausableProxy {
    async fn start(upstream: String) -> Self {
        use std::sync::atomic::Ordering;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr");
        let paused = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let task = tokio::spawn({
            let paused = paused.clone();
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    let (upstream, paused) = (upstream.clone(), paused.clone());
                    tokio::spawn(async move {
                        let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                            return;
                        };
                        let (cr, cw) = client.into_split();
                        let (sr, sw) = server.into_split();
                        let pump =
                            |mut from: tokio::net::tcp::OwnedReadHalf,
                             mut to: tokio::net::tcp::OwnedWriteHalf,
                             paused: std::sync::Arc<std::sync::atomic::AtomicBool>| async move {
                                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                                let mut buf = vec![0u8; 16 * 1024];
                                loop {
                                    let Ok(n) = from.read(&mut buf).await else { return };
                                    if n == 0 {
                                        return;
                                    }
                                    while paused.load(Ordering::SeqCst) {
                                        tokio::time::sleep(Duration::from_millis(20)).await;
                                    }
                                    if to.write_all(&buf[..n]).await.is_err() {
                                        return;
                                    }
                                }
                            };
                        let up = tokio::spawn(pump(cr, sw, paused.clone()));
                        let down = tokio::spawn(pump(sr, cw, paused));
                        let _ = tokio::join!(up, down);
                    });
                }
            }
        });
        Self { addr, paused, task }
    }

    fn pause(&self, paused: bool) {
        self.paused.store(paused, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for PausableProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A node that cannot read a membership from the database keeps the
/// channel: applying the event as sent would trust arrival order, and a
/// stale removal would end a current member's delivery for good, while a
/// channel held for a non-member costs only traffic. The user's other frames
/// (a RECEIPT from another node) do not wait behind that read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_cannot_read_a_membership_keeps_the_channel() {
    let Some(cluster) = Cluster::start(1, &[]).await else {
        return;
    };
    let a = &cluster.nodes[0];
    // Node D reaches PostgreSQL through a proxy that can stall, with a short
    // database timeout.
    let upstream = url_host_port(&cluster._db.url);
    let proxy = PausableProxy::start(upstream.clone()).await;
    let proxied = cluster._db.url.replacen(&upstream, &proxy.addr.to_string(), 1);
    let d = Node::start(
        &cluster._db,
        NATS_URL,
        &cluster.prefix,
        &[
            ("CHATD_DATABASE_URL", proxied.as_str()),
            ("CHATD_DB_TIMEOUT_MS", "2000"),
        ],
    );
    a.create_channel("room", &["alice", "dave"]).await;
    let mut dave = d.connect("dave").await;
    let mut alice = a.connect("alice").await;
    let ack = alice.send_and_ack("room", "m1", "first").await;
    assert_eq!(dave.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);

    // D's database stalls, and a stale removal of dave arrives: D cannot
    // check it against the database (dave is still a member there).
    proxy.pause(true);
    let paused_at = Instant::now();
    cluster
        .publish_to_user("dave", &[membership_event("room", false, 0), marker_event()])
        .await;
    // A frame for dave behind the removal is not held up by the stalled
    // read (which takes D's 2 s database timeout to fail).
    let marker = tokio::time::timeout(Duration::from_secs(1), dave.recv_type("ERROR"))
        .await
        .expect("the user's frames wait for a membership read");
    assert_eq!(marker["message"], "marker");
    // Well past D's database timeout: the read has failed by now.
    tokio::time::sleep_until((paused_at + Duration::from_secs(4)).into()).await;
    proxy.pause(false);

    let ack = alice.send_and_ack("room", "m2", "second").await;
    assert_eq!(dave.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);
    drop(d);
}

/// A member who joins late is handed nothing stored before the join: a
/// node's catch-up starts at the join's own seq, from the database
/// (`members.joined_seq`), not at the seq of the event that made the node
/// take the channel, which may be stale and older than the join.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_who_joins_late_is_not_handed_what_came_before_the_join() {
    use sqlx::Connection;
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, d] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice"]).await;
    let mut dave = d.connect("dave").await;
    let mut alice = a.connect("alice").await;
    alice.send_and_ack("room", "m1", "before dave").await;
    alice.send_and_ack("room", "m2", "still before dave").await;
    // Dave joins when the last seq is 2; the join's own event has not reached
    // node D yet, but an older add (seq 0, from an earlier membership) does,
    // after its CHANNEL_ADDED (which opens the channel to dave's session).
    let mut db = sqlx::PgConnection::connect(&cluster._db.url).await.expect("connect");
    sqlx::query("INSERT INTO members (channel_id, user_id, joined_at, joined_seq) VALUES ('room', 'dave', 0, 2)")
        .execute(&mut db)
        .await
        .expect("join");
    let added = chatd::delivery::nats::UserEnvelope::Frame {
        frame_type: "CHANNEL_ADDED".into(),
        channel_id: Some("room".into()),
        text: json!({"type": "CHANNEL_ADDED", "channel": {"channelId": "room", "lastSeq": 0}}).to_string(),
    };
    cluster
        .publish_to_user("dave", &[added, membership_event("room", true, 0)])
        .await;
    assert_eq!(dave.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], "room");
    // Node D takes the channel for dave (a catch-up from before the join
    // would arrive now).
    tokio::time::sleep(Duration::from_millis(800)).await;
    let ack = alice.send_and_ack("room", "m3", "after dave joined").await;
    let first = dave.recv_type("MSG_RECV").await;
    assert_eq!(
        first["seq"], ack["seq"],
        "dave got a message from before his join: {first}"
    );
}

/// `host:port` of a `postgres://user@host:port/db` URL.
fn url_host_port(url: &str) -> String {
    let rest = url.split_once('@').map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipts_reach_the_sender_and_the_readers_other_sessions_on_other_nodes() {
    let Some(cluster) = Cluster::start(3, &[]).await else {
        return;
    };
    let [a, b, c] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob"]).await;
    let mut alice = a.connect("alice").await;
    let mut bob = b.connect("bob").await;
    let mut bob_on_c = c.connect("bob").await;
    let ack = alice.send_and_ack("room", "m1", "read me").await;
    let id = ack["messageId"].as_str().expect("id").to_owned();
    bob.recv_type("MSG_RECV").await;
    bob_on_c.recv_type("MSG_RECV").await;

    bob.send_json(json!({"type": "MSG_DELIVERED", "messageId": id})).await;
    let receipt = alice.recv_type("RECEIPT").await;
    assert_eq!(
        (
            receipt["kind"].as_str(),
            receipt["userId"].as_str(),
            receipt["seq"].as_i64()
        ),
        (Some("delivered"), Some("bob"), Some(1))
    );
    bob.send_json(json!({"type": "MSG_READ", "messageId": id})).await;
    let receipt = alice.recv_type("RECEIPT").await;
    assert_eq!(receipt["kind"], "read");
    assert_eq!(receipt["messageId"], ack["messageId"]);
    // The reader's other session (on C) gets the read receipt; not the delivered one.
    let other = bob_on_c.recv_type("RECEIPT").await;
    assert_eq!(
        (other["kind"].as_str(), other["userId"].as_str()),
        (Some("read"), Some("bob"))
    );
    bob.expect_silence(SILENCE).await;
    bob_on_c.expect_silence(Duration::from_millis(10)).await;
    alice.expect_silence(Duration::from_millis(10)).await;
}

/// Test hook (`test-hooks`): a message published to NATS 400 ms late reaches
/// another node after its successor; the successor is held and both are
/// delivered in order when the late one arrives (no fill: the wait is 3 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_seq_that_arrives_first_is_held_until_the_earlier_one() {
    let Some(cluster) = Cluster::start(2, &[("CHATD_CLUSTER_GAP_WAIT_MS", "3000")]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob"]).await;
    let mut alice = a.connect("alice").await;
    let mut bob = b.connect("bob").await;
    let delayed = format!("{} one", chatd::delivery::nats::TEST_NATS_DELAY);
    alice.send_and_ack("room", "m1", &delayed).await;
    alice.send_and_ack("room", "m2", "two").await;
    let started = Instant::now();
    let got = recv_msgs(&mut bob, 2).await;
    assert_eq!(seqs(&got), vec![1, 2], "in seq order");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "released by the late message, not by the fill: {:?}",
        started.elapsed()
    );
    assert!(b.metric("chatd_cluster_held_total").await >= 1.0, "seq 2 was held on B");
    assert_eq!(b.metric("chatd_cluster_filled_total{reason=\"gap\"}").await, 0.0);
}

/// Test hook: a message never published to NATS leaves a gap on the other
/// node; its successor is held for `cluster_gap_wait_ms`, then the gap is
/// read from the database and both are delivered in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gap_that_does_not_close_is_filled_from_the_database_after_the_wait() {
    let Some(cluster) = Cluster::start(2, &[("CHATD_CLUSTER_GAP_WAIT_MS", "400")]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob"]).await;
    let mut alice = a.connect("alice").await;
    let mut alice_on_a = a.connect("alice").await;
    let mut bob = b.connect("bob").await;
    let lost = format!("{} lost on the way", chatd::delivery::nats::TEST_NATS_DROP);
    alice.send_and_ack("room", "m1", &lost).await;
    // Local delivery does not depend on NATS.
    assert_eq!(alice_on_a.recv_type("MSG_RECV").await["seq"], 1);
    bob.expect_silence(Duration::from_millis(300)).await;
    let started = Instant::now();
    alice.send_and_ack("room", "m2", "two").await;
    let first = bob.recv_type("MSG_RECV").await;
    let waited = started.elapsed();
    let second = bob.recv_type("MSG_RECV").await;
    assert_eq!((first["seq"].as_i64(), second["seq"].as_i64()), (Some(1), Some(2)));
    assert_eq!(first["body"], lost.as_str(), "read from the database");
    assert!(
        waited >= Duration::from_millis(350),
        "held for the gap wait first: {waited:?}"
    );
    assert!(b.metric("chatd_cluster_filled_total{reason=\"gap\"}").await >= 1.0);
}

/// A NATS server of the test's own, on a free port.
struct NatsServer {
    child: Child,
    port: u16,
}

impl NatsServer {
    fn start(port: u16) -> Self {
        let child = Command::new(nats_server())
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nats-server");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "nats-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Two nodes on a nats-server of their own (on a free port), for tests
/// that kill and restart it; `None` without PostgreSQL.
async fn two_nodes_on_their_own_nats() -> Option<(NatsServer, Cluster)> {
    postgres_url()?;
    let nats = NatsServer::start(free_port());
    let url = format!("nats://127.0.0.1:{}", nats.port);
    let cluster = Cluster::start_on(2, &url, &[]).await?;
    Some((nats, cluster))
}

/// NATS goes away: nodes keep storing, ACKing and delivering locally, and say
/// so (`/readyz` detail, gauge); when it is back on the same port they
/// resubscribe by themselves, remote members get what was sent during the
/// outage (catch-up) and what is sent after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_outage_degrades_to_local_delivery_and_recovers_after_restart() {
    let Some((mut nats, cluster)) = two_nodes_on_their_own_nats().await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice = a.connect("alice").await;
    let mut carol = a.connect("carol").await;
    let mut bob = b.connect("bob").await;
    alice.send_and_ack("room", "m1", "before").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["seq"], 1);
    assert_eq!(carol.recv_type("MSG_RECV").await["seq"], 1);
    assert_eq!(a.metric("chatd_nats_connected").await, 1.0);

    nats.kill();
    a.wait_nats("disconnected").await;
    b.wait_nats("disconnected").await;
    assert_eq!(a.metric("chatd_nats_connected").await, 0.0);
    let during = alice.send_and_ack("room", "m2", "during the outage").await;
    assert_eq!(during["seq"], 2, "still stored and ACKed");
    assert_eq!(
        carol.recv_type("MSG_RECV").await["seq"],
        2,
        "still delivered on the node"
    );
    // A session starting during the outage still gets its HELLO.
    let late = b.connect("carol").await;
    assert_eq!(late.hello["channels"][0]["lastSeq"], 2);
    drop(late);
    bob.expect_silence(Duration::from_millis(300)).await;

    let _nats = NatsServer::start(nats.port);
    a.wait_nats("connected").await;
    b.wait_nats("connected").await;
    assert_eq!(b.metric("chatd_nats_connected").await, 1.0);
    // What was sent during the outage reaches bob without anything new.
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(recv["messageId"], during["messageId"]);
    // And the subscriptions are back: live delivery in both directions.
    let ack = alice.send_and_ack("room", "m3", "after").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);
    let ack = bob.send_and_ack("room", "b1", "from B").await;
    assert_eq!(alice.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);
    assert_eq!(carol.recv_type("MSG_RECV").await["seq"], 3);
    assert_eq!(carol.recv_type("MSG_RECV").await["seq"], 4);
    bob.expect_silence(SILENCE).await;
}

/// An erasure made on node A while NATS is down (§19; tenth hostile run,
/// finding 2): the user's session on node B still closes with 1008 within
/// a few seconds, by B's own read of the erasure watermarks (the erasing
/// node's message travels only on NATS). Another user's session stays, and
/// so does a session of the user with a token issued after the erasure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erasure_during_a_nats_outage_closes_the_users_sessions_on_other_nodes() {
    let Some((mut nats, cluster)) = two_nodes_on_their_own_nats().await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["xavier", "bob"]).await;
    let mut xavier = b.connect("xavier").await;
    let mut bob = b.connect("bob").await;

    nats.kill();
    a.wait_nats("disconnected").await;
    b.wait_nats("disconnected").await;
    let erased = Instant::now();
    let (status, body) = a.admin.request(reqwest::Method::DELETE, "/v1/users/xavier", None).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(xavier.recv_close_code().await, 1008, "{}", b.log_text());
    assert!(
        erased.elapsed() < Duration::from_secs(6),
        "closed only after {:?}",
        erased.elapsed()
    );
    bob.expect_silence(SILENCE).await;

    // A token issued after the erasure (`iat` is in whole seconds) opens a
    // session that later watermark reads leave open.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let mut again = b.connect("xavier").await;
    again.expect_silence(Duration::from_millis(2500)).await;
    bob.expect_silence(SILENCE).await;
}

/// SIGKILL of a node while a client pipelines sends into it: the client
/// reconnects to another node, syncs, and resends what was not ACKed (same
/// clientMsgIds). Every ACKed message is stored once with the ids of its ACK,
/// nothing is stored twice, and seqs are gapless.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_node_loses_no_acked_message_and_its_clients_catch_up_elsewhere() {
    const SENDS: usize = 400;
    let Some(mut cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    cluster.nodes[0].create_channel("room", &["alice", "bob"]).await;
    let mut bob = cluster.nodes[1].connect("bob").await;
    let mut alice = cluster.nodes[0].connect("alice").await;
    for n in 0..SENDS {
        let frame =
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": format!("k{n}"), "body": format!("n{n}")});
        alice.stream.feed(Message::text(frame.to_string())).await.expect("feed");
    }
    alice.stream.flush().await.expect("flush");
    // Read ACKs for a while, then the node dies mid-stream.
    let mut acked: HashMap<String, Value> = HashMap::new();
    while acked.len() < 40 {
        let ack = alice.recv_type("MSG_ACK").await;
        acked.insert(ack["clientMsgId"].as_str().expect("id").to_owned(), ack);
    }
    cluster.nodes[0].kill();
    while let Ok(Some(Ok(Message::Text(text)))) =
        tokio::time::timeout(Duration::from_secs(2), alice.stream.next()).await
    {
        let frame: Value = serde_json::from_str(text.as_str()).expect("json");
        if frame["type"] == "MSG_ACK" {
            acked.insert(frame["clientMsgId"].as_str().expect("id").to_owned(), frame);
        }
    }
    assert!(acked.len() < SENDS, "the node died before answering everything");

    // Reconnect to B, catch up with SYNC, resend what was not ACKed.
    let b = &cluster.nodes[1];
    let mut alice = b.connect("alice").await;
    let last_seq = alice.hello["channels"][0]["lastSeq"].as_i64().expect("lastSeq");
    assert!(last_seq >= acked.len() as i64, "HELLO counts every ACKed message");
    let mut synced = Vec::new();
    loop {
        alice.send_json(sync("room", synced.len() as i64, Some(500))).await;
        // A MSG_RECV may come first: B delivers what A stored but had not
        // yet published once it finds the gap, whenever that is.
        let batch = loop {
            let frame = alice.recv().await;
            if frame["type"] == "SYNC_BATCH" {
                break frame;
            }
            assert_eq!(frame["type"], "MSG_RECV", "unexpected frame {frame}");
        };
        synced.extend(batch["messages"].as_array().expect("messages").clone());
        if batch["hasMore"] == false {
            break;
        }
    }
    assert_eq!(seqs(&synced), (1..=last_seq).collect::<Vec<_>>(), "SYNC: gapless");
    for n in 0..SENDS {
        let key = format!("k{n}");
        alice.send_msg("room", &key, &format!("n{n}")).await;
        // MSG_RECV may come in between: what node A stored but had not yet
        // published when it died reaches B's sessions when B finds the gap.
        let ack = next_ack(&mut alice).await;
        assert_eq!(ack["clientMsgId"], key.as_str());
        if let Some(before) = acked.get(&key) {
            assert_eq!(ack["duplicate"], true, "{key}");
            assert_eq!(ack["messageId"], before["messageId"], "{key}: the ids of the first ACK");
            assert_eq!(ack["seq"], before["seq"], "{key}");
        }
    }
    let stored = b.history("room").await;
    assert_eq!(seqs(&stored), (1..=SENDS as i64).collect::<Vec<_>>(), "gapless");
    let keys: HashSet<&str> = stored.iter().map(|m| m["clientMsgId"].as_str().expect("id")).collect();
    assert_eq!(keys.len(), SENDS, "each send stored exactly once");
    let by_key: HashMap<&str, &Value> = stored
        .iter()
        .map(|m| (m["clientMsgId"].as_str().expect("id"), m))
        .collect();
    for (key, ack) in &acked {
        assert_eq!(
            by_key[key.as_str()]["messageId"],
            ack["messageId"],
            "{key} stored as ACKed"
        );
    }
    // Bob, on the surviving node, saw increasing seqs throughout.
    let mut seen = BTreeSet::new();
    let mut last = 0;
    while let Ok(Some(Ok(Message::Text(text)))) =
        tokio::time::timeout(Duration::from_millis(500), bob.stream.next()).await
    {
        let frame: Value = serde_json::from_str(text.as_str()).expect("json");
        if frame["type"] == "MSG_RECV" {
            let seq = frame["seq"].as_i64().expect("seq");
            assert!(seq > last, "bob's MSG_RECV increase: {seq} after {last}");
            last = seq;
            seen.insert(seq);
        }
    }
    assert!(!seen.is_empty(), "bob received live messages");
}

/// What the subscription round trip relies on: a request nobody subscribed to
/// comes back at once as "no responders", also on a `no_echo` connection, so
/// its reply proves the server has processed every earlier SUB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_nobody_answers_comes_back_at_once_on_a_no_echo_connection() {
    require_nats();
    let client = async_nats::ConnectOptions::new()
        .no_echo()
        .connect(NATS_URL)
        .await
        .expect("connect to NATS");
    let prefix = subject_prefix();
    let started = Instant::now();
    let reply = tokio::time::timeout(
        Duration::from_secs(2),
        client.request(chatd::delivery::nats::ping_subject(&prefix), Default::default()),
    )
    .await
    .expect("an answer in time");
    let error = reply.expect_err("nobody answers");
    assert_eq!(error.kind(), async_nats::client::RequestErrorKind::NoResponders);
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
}

/// Log entries across nodes (protocol §8, guarantee 8): a reaction and an
/// edit stored on one node reach the members on the others in seq order,
/// concurrent copies of one entry on two nodes store one, and a retry on
/// another node gets the original ACK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_and_reactions_reach_every_node_and_copies_store_one_entry() {
    let Some(cluster) = Cluster::start(3, &[]).await else {
        return;
    };
    let [a, b, c] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice = a.connect("alice").await;
    let mut bob = b.connect("bob").await;
    let mut carol = c.connect("carol").await;
    let sent = alice.send_and_ack("room", "m1", "hello").await;
    let id = sent["messageId"].clone();
    recv_msgs(&mut bob, 1).await;
    recv_msgs(&mut carol, 1).await;

    bob.send_json(json!({"type": "MSG_REACT", "clientMsgId": "r1", "messageId": id, "emoji": "👍", "op": "add"}))
        .await;
    let ack = bob.recv_type("MSG_ACK").await;
    assert_eq!(ack["seq"], 2);
    for client in [&mut alice, &mut carol] {
        let recv = client.recv_type("MSG_RECV").await;
        assert_eq!(
            (recv["kind"].as_str(), recv["seq"].as_i64(), recv["emoji"].as_str()),
            (Some("reaction"), Some(2), Some("👍"))
        );
        assert_eq!(recv["targetId"], id);
    }

    // Concurrent copies of one edit on B and C: one entry.
    let mut alice_b = b.connect("alice").await;
    let mut alice_c = c.connect("alice").await;
    let edit = json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": id, "body": "hello, edited"});
    alice_b.send_json(edit.clone()).await;
    alice_c.send_json(edit.clone()).await;
    let (x, y) = tokio::join!(next_ack(&mut alice_b), next_ack(&mut alice_c));
    assert_eq!((&x["messageId"], &x["seq"]), (&y["messageId"], &y["seq"]));
    assert_eq!(x["seq"], 3);
    assert_ne!(x["duplicate"], y["duplicate"], "one stored, one duplicate");
    for client in [&mut bob, &mut carol, &mut alice] {
        let recv = client.recv_type("MSG_RECV").await;
        assert_eq!(
            (recv["kind"].as_str(), recv["body"].as_str()),
            (Some("edit"), Some("hello, edited"))
        );
    }
    bob.expect_silence(SILENCE).await;
    // A retry on the third node.
    alice.send_json(edit).await;
    let retry = next_ack(&mut alice).await;
    assert_eq!((retry["duplicate"].as_bool(), &retry["seq"]), (Some(true), &x["seq"]));

    let stored = c.history("room").await;
    assert_eq!(seqs(&stored), vec![1, 2, 3]);
    assert_eq!(stored[0]["body"], "hello, edited");
    assert_eq!(stored[0]["reactions"][0]["count"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_post_and_a_channel_delete_reach_sessions_on_every_node() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob"]).await;
    let mut alice_on_a = a.connect("alice").await;
    let mut bob_on_b = b.connect("bob").await;
    let mut alice_on_b = b.connect("alice").await;

    // Posted on B, as alice: every session of every member, on both nodes.
    let body = json!({"senderId": "alice", "clientMsgId": "h1", "body": "from the backend"});
    let (status, ack) = b
        .admin
        .request(reqwest::Method::POST, "/v1/channels/room/messages", Some(body.clone()))
        .await;
    assert_eq!(status, 201, "{ack}");
    for client in [&mut alice_on_a, &mut bob_on_b, &mut alice_on_b] {
        let recv = client.recv_type("MSG_RECV").await;
        assert_eq!(recv["messageId"], ack["messageId"]);
    }
    // The retry on the other node is answered from the store.
    let (status, again) = a
        .admin
        .request(reqwest::Method::POST, "/v1/channels/room/messages", Some(body))
        .await;
    assert_eq!((status, again["duplicate"].clone()), (200, json!(true)));
    assert_eq!(again["messageId"], ack["messageId"]);

    // Deleted on A: the sessions on B are told too, and get nothing more.
    let (status, _) = a
        .admin
        .request(reqwest::Method::DELETE, "/v1/channels/room", None)
        .await;
    assert_eq!(status, 204);
    for client in [&mut alice_on_a, &mut bob_on_b, &mut alice_on_b] {
        let removed = client.recv_type("CHANNEL_REMOVED").await;
        assert_eq!(
            removed,
            json!({"type": "CHANNEL_REMOVED", "channelId": "room", "reason": "deleted"})
        );
    }
    let (status, _) = b.admin.request(reqwest::Method::GET, "/v1/channels/room", None).await;
    assert_eq!(status, 404);
}

/// Guarantee of §13.2: the direct channel of a pair is made once, also when
/// both users ask for it at the same moment on two nodes; both sides get the
/// same channel, 201 for exactly one call, and each user's sessions on the
/// other node get its CHANNEL_ADDED once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_calls_racing_on_two_nodes_make_one_channel() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    let as_user = |node: &Node, user: &str| {
        node.process
            .admin(&chatd_testkit::mint_token(chatd_testkit::JWT_SECRET, user, 3600))
    };
    let race = |x: String, y: String| {
        let (from_x, from_y) = (as_user(a, &x), as_user(b, &y));
        let (to_y, to_x) = (format!("/v1/me/direct/{y}"), format!("/v1/me/direct/{x}"));
        async move {
            tokio::join!(
                from_x.request(reqwest::Method::PUT, &to_y, None),
                from_y.request(reqwest::Method::PUT, &to_x, None),
            )
        }
    };
    for round in 0..5 {
        let pair = race(format!("x{round}"), format!("y{round}"));
        let (one, two) = pair.await;
        let mut statuses = [one.0, two.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 201], "round {round}: {one:?} {two:?}");
        assert_eq!(one.1["channelId"], two.1["channelId"], "round {round}: one channel");
    }
    // A pair with live sessions on the other node each.
    let mut alice_on_b = b.connect("alice").await;
    let mut bob_on_a = a.connect("bob").await;
    let pair = race("bob".to_owned(), "alice".to_owned());
    let (one, two) = pair.await;
    assert_eq!(one.1["channelId"], two.1["channelId"]);
    let id = one.1["channelId"].clone();
    for ws in [&mut alice_on_b, &mut bob_on_a] {
        assert_eq!(ws.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], id);
        ws.expect_silence(SILENCE).await;
    }
}

/// Guarantee 12 across nodes: a member sending on node B while node A
/// removes it, and a non-member sending on B while A adds it. Each send is
/// judged with the membership in force at its seq: every stored entry of
/// the removed member is at or below the removal's `afterSeq`, every one of
/// the added member above the join's, and the answers switch once (one
/// send at a time, so nothing is stored after the first refusal, nor
/// refused after the first ACK).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_racing_a_removal_and_a_join_on_another_node_are_judged_in_order() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob"]).await;
    let mut bob = b.connect("bob").await;
    let mut carol = b.connect("carol").await;
    let mut alice = a.connect("alice").await;

    /// Sends `n` messages one at a time, each answered before the next,
    /// returning per send its seq (ACKed) or `None` (refused `forbidden`);
    /// other frames are skipped.
    async fn sends(ws: &mut WsClient, key: &str, n: usize) -> Vec<Option<i64>> {
        let mut answers = Vec::new();
        for i in 0..n {
            ws.send_msg("room", &format!("{key}{i}"), "x").await;
            loop {
                let frame = ws.recv().await;
                match frame["type"].as_str() {
                    Some("MSG_ACK") => break answers.push(frame["seq"].as_i64()),
                    Some("ERROR") => {
                        assert_eq!(frame["code"], "forbidden", "{frame}");
                        break answers.push(None);
                    }
                    _ => {}
                }
            }
        }
        answers
    }
    let changes = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        a.set_member("room", "bob", false).await;
        a.set_member("room", "carol", true).await;
    };
    let (bobs, carols, ()) = tokio::join!(sends(&mut bob, "b", 80), sends(&mut carol, "c", 80), changes);

    // The afterSeqs, as alice (a member throughout, on node A) is told.
    let mut after = HashMap::new();
    while after.len() < 2 {
        let frame = alice.recv().await;
        if frame["type"] == "MEMBER" {
            after.insert(
                frame["userId"].as_str().expect("userId").to_owned(),
                frame["afterSeq"].as_i64().expect("afterSeq"),
            );
        }
    }
    let (left_at, joined_at) = (after["bob"], after["carol"]);
    let stored_then_refused = |answers: &[Option<i64>]| {
        let first_refusal = answers.iter().position(Option::is_none).unwrap_or(answers.len());
        answers[first_refusal..].iter().all(Option::is_none)
    };
    assert!(stored_then_refused(&bobs), "bob: {bobs:?}");
    assert!(
        bobs.iter().flatten().all(|seq| *seq <= left_at),
        "bob left after {left_at}: {bobs:?}"
    );
    assert!(
        bobs.last().is_some_and(Option::is_none),
        "bob's last sends refused: {bobs:?}"
    );
    let first_ack = carols.iter().position(Option::is_some).unwrap_or(carols.len());
    assert!(carols[first_ack..].iter().all(Option::is_some), "carol: {carols:?}");
    assert!(
        carols.iter().flatten().all(|seq| *seq > joined_at),
        "carol joined after {joined_at}: {carols:?}"
    );
    assert!(
        carols.last().is_some_and(Option::is_some),
        "carol's last sends stored: {carols:?}"
    );
}

/// Guarantee 12 for moderation (protocol.md §17) across nodes: a member
/// sending on node B while node A mutes it, then bans another member who
/// sends on B too. Every stored entry of the muted member is at or below
/// the mute's `afterSeq` and every later one is refused `muted`; every
/// stored entry of the banned member is at or below the ban's; the
/// answers switch once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_racing_a_mute_and_a_ban_on_another_node_are_judged_in_order() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut bob = b.connect("bob").await;
    let mut carol = b.connect("carol").await;
    let mut alice = a.connect("alice").await;

    /// Sends `n` messages one at a time, each answered before the next:
    /// per send its seq (ACKed) or the refusal's reason (`banned` for a
    /// plain `forbidden` of a non-member).
    async fn sends(ws: &mut WsClient, key: &str, n: usize) -> Vec<Result<i64, String>> {
        let mut answers = Vec::new();
        for i in 0..n {
            ws.send_msg("room", &format!("{key}{i}"), "x").await;
            loop {
                let frame = ws.recv().await;
                match frame["type"].as_str() {
                    Some("MSG_ACK") => break answers.push(Ok(frame["seq"].as_i64().expect("seq"))),
                    Some("ERROR") => {
                        assert_eq!(frame["code"], "forbidden", "{frame}");
                        let reason = frame["reason"].as_str().unwrap_or("banned").to_owned();
                        break answers.push(Err(reason));
                    }
                    _ => {}
                }
            }
        }
        answers
    }
    let changes = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let until = chatd::ids::now_ms() + 600_000;
        let (status, _) = a
            .admin
            .request(
                reqwest::Method::PUT,
                "/v1/channels/room/members/bob",
                Some(json!({ "mutedUntil": until })),
            )
            .await;
        assert_eq!(status, 204);
        let (status, _) = a
            .admin
            .request(
                reqwest::Method::DELETE,
                "/v1/channels/room/members/carol?ban=true",
                None,
            )
            .await;
        assert_eq!(status, 204);
    };
    let (bobs, carols, ()) = tokio::join!(sends(&mut bob, "b", 80), sends(&mut carol, "c", 80), changes);

    let mut after = HashMap::new();
    while after.len() < 2 {
        let frame = alice.recv().await;
        if frame["type"] == "MEMBER" {
            after.insert(
                frame["op"].as_str().expect("op").to_owned(),
                frame["afterSeq"].as_i64().expect("afterSeq"),
            );
        }
    }
    let (muted_at, banned_at) = (after["mute"], after["ban"]);
    for (who, answers, at, reason) in [
        ("bob", &bobs, muted_at, "muted"),
        ("carol", &carols, banned_at, "banned"),
    ] {
        let first_refusal = answers.iter().position(Result::is_err).unwrap_or(answers.len());
        assert!(
            answers[first_refusal..]
                .iter()
                .all(|a| a.as_ref().err().map(String::as_str) == Some(reason)),
            "{who}: {answers:?}"
        );
        assert!(
            answers.iter().flatten().all(|seq| *seq <= at),
            "{who} stored nothing after {at}: {answers:?}"
        );
        assert!(
            answers.last().is_some_and(Result::is_err),
            "{who}'s last sends refused: {answers:?}"
        );
    }
    // Nothing of either is stored above its change.
    for message in a.history("room").await {
        let seq = message["seq"].as_i64().expect("seq");
        match message["senderId"].as_str() {
            Some("bob") => assert!(seq <= muted_at, "{message}"),
            Some("carol") => assert!(seq <= banned_at, "{message}"),
            _ => {}
        }
    }
}

/// Mentions and notification settings (protocol §16) across nodes: a
/// message's `mentions` (kept for the members under the channel lock) and
/// `mentionAll` (judged on the sender's role) reach members on every node;
/// `unreadMentions` reads the same from any node; a settings change made
/// through one node reaches the user's session on another as
/// `CHANNEL_SETTINGS`, and that node's HELLO shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mentions_and_settings_reach_every_node() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    let res = a
        .admin
        .post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "bob"]}))
        .await;
    assert_eq!(res.status(), 201);
    let mut alice = a.connect("alice").await;
    let mut olive = b.connect("olive").await;
    let mut bob_on_b = b.connect("bob").await;

    alice
        .send_json(
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "m1", "body": "@bob",
                          "mentions": ["bob", "zed"]}),
        )
        .await;
    assert_eq!(next_ack(&mut alice).await["seq"], 1);
    let recv = bob_on_b.recv_type("MSG_RECV").await;
    assert_eq!(recv["mentions"], json!(["bob"]), "on B: {recv}");
    olive.recv_type("MSG_RECV").await;

    olive
        .send_json(
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "o1", "body": "@all",
                          "mentionAll": true}),
        )
        .await;
    assert_eq!(next_ack(&mut olive).await["seq"], 2);
    assert_eq!(alice.recv_type("MSG_RECV").await["mentionAll"], true, "on A");
    assert_eq!(bob_on_b.recv_type("MSG_RECV").await["mentionAll"], true);
    alice
        .send_json(
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "m2", "body": "@all",
                          "mentionAll": true}),
        )
        .await;
    let refused = alice.recv_type("ERROR").await;
    assert_eq!(refused["code"], "forbidden", "{refused}");

    for node in [a, b] {
        let bob = node.connect("bob").await;
        let room = &bob.hello["channels"][0];
        assert_eq!(
            (room["unread"].as_i64(), room["unreadMentions"].as_i64()),
            (Some(2), Some(2)),
            "{room}"
        );
    }

    let token = chatd_testkit::mint_token(chatd_testkit::JWT_SECRET, "bob", 3600);
    let res = reqwest::Client::new()
        .put(a.process.url("/v1/me/channels/room/settings"))
        .bearer_auth(&token)
        .json(&json!({"notify": "mentions"}))
        .send()
        .await
        .expect("put settings");
    assert_eq!(res.status(), 200);
    let frame = bob_on_b.recv_type("CHANNEL_SETTINGS").await;
    assert_eq!(
        frame,
        json!({"type": "CHANNEL_SETTINGS", "channelId": "room", "notify": "mentions", "snoozeUntil": null})
    );
    let bob = b.connect("bob").await;
    assert_eq!(bob.hello["channels"][0]["notify"], "mentions");

    // The owner makes it an announcement channel on A: members on B are
    // told (CHANNEL_UPDATED travels on their NATS subjects), and HELLO
    // there carries it.
    let owner = chatd_testkit::mint_token(chatd_testkit::JWT_SECRET, "olive", 3600);
    let res = reqwest::Client::new()
        .patch(a.process.url("/v1/channels/room"))
        .bearer_auth(&owner)
        .json(&json!({"postingRole": "moderator", "slowModeMs": 500}))
        .send()
        .await
        .expect("patch");
    assert_eq!(res.status(), 200);
    for ws in [&mut bob_on_b, &mut olive] {
        let frame = ws.recv_type("CHANNEL_UPDATED").await;
        assert_eq!(
            (&frame["channelId"], &frame["postingRole"], &frame["slowModeMs"]),
            (&json!("room"), &json!("moderator"), &json!(500)),
            "{frame}"
        );
    }
    let bob = b.connect("bob").await;
    let room = &bob.hello["channels"][0];
    assert_eq!(
        (&room["postingRole"], &room["slowModeMs"]),
        (&json!("moderator"), &json!(500))
    );
}

/// Protocol.md §13.3 as one session of a user sees one channel, frame by
/// frame: nothing of the channel before its `CHANNEL_ADDED` (a `MSG_RECV`
/// or `MEMBER` first is a frame the session was not told it may get), and
/// nothing after its `CHANNEL_REMOVED` until the next `CHANNEL_ADDED`.
struct ToldOrder {
    channel: &'static str,
    told: bool,
    added: usize,
    removed: usize,
    recvs: usize,
    /// Each frame out of order, described.
    wrong: Vec<String>,
}

impl ToldOrder {
    fn new(channel: &'static str) -> Self {
        Self {
            channel,
            told: false,
            added: 0,
            removed: 0,
            recvs: 0,
            wrong: Vec::new(),
        }
    }

    fn see(&mut self, frame: &Value) {
        match frame["type"].as_str() {
            Some("CHANNEL_ADDED") if frame["channel"]["channelId"] == self.channel => {
                self.told = true;
                self.added += 1;
            }
            Some("CHANNEL_REMOVED") if frame["channelId"] == self.channel => {
                self.told = false;
                self.removed += 1;
            }
            Some("MSG_RECV" | "MEMBER") if frame["channelId"] == self.channel => {
                if frame["type"] == "MSG_RECV" {
                    self.recvs += 1;
                }
                if !self.told {
                    let when = if self.removed == self.added {
                        "after CHANNEL_REMOVED"
                    } else {
                        "before CHANNEL_ADDED"
                    };
                    self.wrong.push(format!("{when} (adds {}): {frame}", self.added));
                }
            }
            _ => {}
        }
    }

    /// Reads `ws` until it is quiet for [`SILENCE`], checking every frame.
    async fn read_until_quiet(&mut self, ws: &mut WsClient) {
        while let Ok(frame) = tokio::time::timeout(SILENCE, ws.recv()).await {
            self.see(&frame);
        }
    }
}

/// Sends `n` messages with `body` at once (pipelined) and waits for their
/// `MSG_ACK`s, skipping other frames.
async fn burst(ws: &mut WsClient, key: &str, n: usize, body: &str) {
    for i in 0..n {
        ws.send_msg("room", &format!("{key}-{i}"), body).await;
    }
    let mut acked = 0;
    while acked < n {
        let frame = ws.recv().await;
        assert_ne!(frame["type"], "ERROR", "{frame}");
        if frame["type"] == "MSG_ACK" {
            acked += 1;
        }
    }
}

/// §13.3 across nodes, adds and removals racing messages: xavier has a
/// session on node B (which carries `room` for dave) and one on node A
/// (which carries it for alice); each round adds, then removes, xavier on
/// node A while dave sends a burst on node B and alice one on A. A message
/// stored on B right after the add reaches xavier's session on B at once,
/// while the `CHANNEL_ADDED` may still travel from A through NATS; one
/// stored on B right before the removal reaches xavier's session on A
/// through NATS (400 ms late: dave's messages use the test hook), while A
/// told it `CHANNEL_REMOVED` at once. Every session of xavier sees the
/// `CHANNEL_ADDED` before any `MSG_RECV` or `MEMBER` of the channel, and
/// nothing of it after the `CHANNEL_REMOVED` (but after the next round's
/// `CHANNEL_ADDED`, a rejoin, it may: the gate holds a removed channel's
/// frames for a rejoin). Without the gate (its check run once, with
/// `SessionHandle::gated` a no-op), xavier's session on A got late
/// `MSG_RECV`s after its `CHANNEL_REMOVED` from the fifth round on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_add_and_a_removal_on_another_node_frame_the_channels_frames_on_every_session() {
    // Gaps behind a late message wait for it, not for a fill.
    let Some(cluster) = Cluster::start(2, &[("CHATD_CLUSTER_GAP_WAIT_MS", "3000")]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "dave"]).await;
    let late = format!("{} from dave", chatd::delivery::nats::TEST_NATS_DELAY);
    let mut dave = b.connect("dave").await;
    let mut alice = a.connect("alice").await;
    let mut x_on_b = b.connect("xavier").await;
    let mut x_on_a = a.connect("xavier").await;
    const ROUNDS: usize = 12;
    const BURST: usize = 12;
    let (mut order_b, mut order_a) = (ToldOrder::new("room"), ToldOrder::new("room"));
    for round in 0..ROUNDS {
        for add in [true, false] {
            let (dave_key, alice_key) = (format!("d{round}{add}"), format!("a{round}{add}"));
            tokio::join!(
                a.set_member("room", "xavier", add),
                burst(&mut dave, &dave_key, BURST, &late),
                burst(&mut alice, &alice_key, BURST, "from alice"),
            );
            if add {
                // One message surely stored while xavier is a member, and
                // the removal only once xavier's session on A has it: node
                // A's copies of alice's messages wait behind dave's, which
                // reach A 400 ms late (TEST_NATS_DELAY_MS), so on a quick
                // machine the whole window between the add and the removal
                // could pass before A delivered anything of it, and the
                // gate rightly drops what comes after CHANNEL_REMOVED.
                let key = format!("inside{round}");
                // Its ACK among the frames alice gets meanwhile (xavier's
                // MEMBER, dave's messages): `burst` skips those.
                burst(&mut alice, &key, 1, "inside").await;
                let key = format!("{key}-0");
                loop {
                    let frame = x_on_a.recv().await;
                    order_a.see(&frame);
                    if frame["type"] == "MSG_RECV" && frame["clientMsgId"] == key.as_str() {
                        break;
                    }
                }
            }
        }
        // Read as it comes, so no queue fills.
        while let Ok(frame) = tokio::time::timeout(Duration::from_millis(1), x_on_b.recv()).await {
            order_b.see(&frame);
        }
        while let Ok(frame) = tokio::time::timeout(Duration::from_millis(1), x_on_a.recv()).await {
            order_a.see(&frame);
        }
    }
    order_b.read_until_quiet(&mut x_on_b).await;
    order_a.read_until_quiet(&mut x_on_a).await;
    for (name, order) in [("B", &order_b), ("A", &order_a)] {
        assert!(order.wrong.is_empty(), "xavier on node {name}: {:#?}", order.wrong);
        assert_eq!((order.added, order.removed), (ROUNDS, ROUNDS), "xavier on node {name}");
        assert!(order.recvs > 0, "xavier on node {name} got messages");
    }
}

/// §13.3 across nodes, deterministically (test hook): a message stored on
/// node A just before xavier's removal reaches node B 400 ms late, after
/// the `CHANNEL_REMOVED` that went on xavier's subject at once. Dave on B
/// gets it; xavier on B gets its `MEMBER` `leave`, `CHANNEL_REMOVED`, and
/// nothing more of the channel. (Before the channel gate, the late
/// `MSG_RECV` followed the `CHANNEL_REMOVED`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_late_on_nats_does_not_follow_the_removal_it_preceded() {
    let Some(cluster) = Cluster::start(2, &[("CHATD_CLUSTER_GAP_WAIT_MS", "3000")]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice", "dave", "xavier"]).await;
    let mut dave = b.connect("dave").await;
    let mut xavier = b.connect("xavier").await;
    let mut alice = a.connect("alice").await;
    let delayed = format!("{} stored before the removal", chatd::delivery::nats::TEST_NATS_DELAY);
    let ack = alice.send_and_ack("room", "m1", &delayed).await;
    a.set_member("room", "xavier", false).await;
    let leave = xavier.recv_type("MEMBER").await;
    assert_eq!((&leave["op"], &leave["userId"]), (&json!("leave"), &json!("xavier")));
    assert_eq!(xavier.recv_type("CHANNEL_REMOVED").await["channelId"], "room");
    let late = loop {
        let frame = dave.recv().await;
        if frame["type"] == "MSG_RECV" {
            break frame;
        }
    };
    assert_eq!(late["messageId"], ack["messageId"], "dave on B got the late message");
    xavier.expect_silence(SILENCE).await;
}

/// §13.3 across nodes, deterministically: a `MEMBER` and a `MSG_RECV` of a
/// channel that reach a session before the channel's `CHANNEL_ADDED` (as
/// when they come from another node than the add) are held and follow it.
/// Here the frames are published on NATS by hand, as another node would,
/// before the real add.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_of_a_channel_that_arrive_before_its_channel_added_follow_it() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("room", &["alice"]).await;
    let mut xavier = b.connect("xavier").await;
    let member = json!({"type": "MEMBER", "channelId": "room", "userId": "zoe", "op": "join",
        "role": "member", "afterSeq": 0, "ts": 1});
    cluster
        .publish_to_user(
            "xavier",
            &[chatd::delivery::nats::UserEnvelope::Frame {
                frame_type: "MEMBER".into(),
                channel_id: Some("room".into()),
                text: member.to_string(),
            }],
        )
        .await;
    xavier.expect_silence(Duration::from_millis(300)).await;
    a.set_member("room", "xavier", true).await;
    assert_eq!(xavier.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], "room");
    assert_eq!(
        xavier.recv_type("MEMBER").await,
        member,
        "the early frame, right after the add"
    );
    let join = xavier.recv_type("MEMBER").await;
    assert_eq!((&join["op"], &join["userId"]), (&json!("join"), &json!("xavier")));
}

/// One user's membership of one channel changed on two nodes in quick
/// succession: removed on node A, whose publications on users' subjects
/// reach NATS 400 ms late (test hook), then added again on node B, whose go
/// out at once. The rejoin's `CHANNEL_ADDED` reaches xavier's sessions on B
/// (local) and on C (through NATS) before the removal's `CHANNEL_REMOVED`
/// from A, which NATS does not order with B's. Each node reads such a frame
/// against the database after sending it, and follows the stale removal
/// with a `CHANNEL_ADDED`: both sessions end as members (as the database
/// has xavier) and get the channel's next `MSG_RECV`. (Before, the late
/// `CHANNEL_REMOVED` was the last word, and each session's channel gate
/// then held the message and dropped it: xavier believed it was removed
/// until it reconnected.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removal_late_from_one_node_does_not_undo_a_rejoin_on_another() {
    let Some(cluster) = Cluster::start(2, &[]).await else {
        return;
    };
    let [b, c] = &cluster.nodes[..] else { unreachable!() };
    let a = Node::start(
        &cluster._db,
        NATS_URL,
        &cluster.prefix,
        &[(chatd::delivery::nats::TEST_NATS_USER_DELAY_ENV, "400")],
    );
    b.create_channel("room", &["alice", "xavier"]).await;
    let mut alice = c.connect("alice").await;
    let mut x_on_b = b.connect("xavier").await;
    let mut x_on_c = c.connect("xavier").await;

    a.set_member("room", "xavier", false).await;
    b.set_member("room", "xavier", true).await;
    // Well past A's 400 ms: its removal has reached B and C.
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // Its ACK among xavier's MEMBER frames to alice (`burst` skips them).
    burst(&mut alice, "m1", 1, "after the rejoin").await;
    for (name, ws) in [("B", &mut x_on_b), ("C", &mut x_on_c)] {
        let mut seen = Vec::new();
        loop {
            let Ok(frame) = tokio::time::timeout(Duration::from_secs(5), ws.recv()).await else {
                panic!("xavier on {name} never got the message after its rejoin; frames: {seen:#?}");
            };
            if frame["type"] == "MSG_RECV" {
                assert_eq!(frame["clientMsgId"], "m1-0", "xavier on {name}: {frame}");
                break;
            }
            seen.push(frame);
        }
        // The removal did arrive after the rejoin (else this tests nothing).
        assert!(
            seen.iter().any(|f| f["type"] == "CHANNEL_REMOVED"),
            "xavier on {name}: {seen:#?}"
        );
        // Whatever came, the last membership frame says xavier is a member.
        let last = seen
            .iter()
            .rev()
            .find(|f| f["type"] == "CHANNEL_ADDED" || f["type"] == "CHANNEL_REMOVED");
        assert!(
            last.is_none_or(|f| f["type"] == "CHANNEL_ADDED"),
            "xavier on {name}: {seen:#?}"
        );
    }
    drop(a);
}

/// Reads `client`'s frames until it has a `CHANNEL_ADDED` of each of
/// `added` and a `CHANNEL_REMOVED` of each of `removed` (panics when a
/// frame takes longer than the kit's frame timeout).
async fn until_membership(client: &mut WsClient, added: &[&str], removed: &[&str]) {
    let mut added: HashSet<&str> = added.iter().copied().collect();
    let mut removed: HashSet<&str> = removed.iter().copied().collect();
    while !added.is_empty() || !removed.is_empty() {
        let frame = client.recv().await;
        match frame["type"].as_str() {
            Some("CHANNEL_ADDED") => {
                added.remove(frame["channel"]["channelId"].as_str().unwrap_or_default());
            }
            Some("CHANNEL_REMOVED") => {
                removed.remove(frame["channelId"].as_str().unwrap_or_default());
            }
            _ => {}
        }
    }
}

/// Membership changes made on another node while NATS was down (their
/// frames published into the outage, or held and sent before this node
/// resubscribed) reach this node's sessions once NATS is back, as the
/// database has them; and later changes reach them as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn membership_changed_on_another_node_during_a_nats_outage_reaches_sessions_after_it() {
    let Some((mut nats, cluster)) = two_nodes_on_their_own_nats().await else {
        return;
    };
    let [a, b] = &cluster.nodes[..] else { unreachable!() };
    a.create_channel("stays", &["xavier", "yann"]).await;
    a.create_channel("left", &["xavier", "yann"]).await;
    a.create_channel("joined", &["yann"]).await;
    let mut xavier = b.connect("xavier").await;

    nats.kill();
    a.wait_nats("disconnected").await;
    b.wait_nats("disconnected").await;
    a.set_member("joined", "xavier", true).await;
    a.set_member("left", "xavier", false).await;
    let _nats = NatsServer::start(nats.port);
    a.wait_nats("connected").await;
    b.wait_nats("connected").await;
    if tokio::time::timeout(
        Duration::from_secs(8),
        until_membership(&mut xavier, &["joined"], &["left"]),
    )
    .await
    .is_err()
    {
        panic!(
            "the changes made during the outage never reached xavier's session\n{}",
            b.log_text()
        );
    }
    // The channel joined during the outage delivers live.
    let mut yann = a.connect("yann").await;
    let ack = yann.send_and_ack("joined", "j1", "after the outage").await;
    loop {
        let frame = xavier.recv().await;
        if frame["type"] == "MSG_RECV" && frame["channelId"] == "joined" {
            assert_eq!(frame["messageId"], ack["messageId"]);
            break;
        }
    }
    // And a change made after the outage reaches the session as before.
    a.create_channel("later", &["yann"]).await;
    a.set_member("later", "xavier", true).await;
    if tokio::time::timeout(Duration::from_secs(8), until_membership(&mut xavier, &["later"], &[]))
        .await
        .is_err()
    {
        panic!(
            "a change made after the outage never reached xavier's session\n{}",
            b.log_text()
        );
    }
}
