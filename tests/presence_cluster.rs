//! Typing and presence across `chatd` processes on one PostgreSQL database
//! and the machine's NATS (127.0.0.1:4222), each test with a subject prefix
//! of its own: TYPING and PRESENCE cross nodes, a node killed with SIGKILL
//! takes its users offline on the others within `presence_ttl_ms`, and a
//! restarted node does not announce the users of its former life.
//!
//! Without `CHATD_TEST_DATABASE_URL` every test returns at once (a failure
//! with `CHATD_REQUIRE_POSTGRES=1`), as in `tests/cluster.rs`.

use std::time::{Duration, Instant};

use chatd_testkit::{postgres_url, require_nats, subject_prefix, Backend, NatsNode, TestDb, WsClient, NATS_URL};
use serde_json::{json, Value};

/// Small, so a test waits seconds, not the default 30.
const TTL_MS: u64 = 1500;
const GRACE_MS: u64 = 300;

struct Node {
    node: NatsNode,
}

impl Node {
    fn start(db: &TestDb, prefix: &str) -> Self {
        let (ttl, grace) = (TTL_MS.to_string(), GRACE_MS.to_string());
        let settings = [
            ("CHATD_PRESENCE_TTL_MS", ttl.as_str()),
            ("CHATD_PRESENCE_GRACE_MS", grace.as_str()),
            ("CHATD_TYPING_THROTTLE_MS", "0"),
        ];
        let node = NatsNode::start(chatd_testkit::chatd!(db.dir.path()), db, NATS_URL, prefix, &settings);
        Self { node }
    }

    async fn connect(&self, user: &str) -> WsClient {
        self.node.connect(user).await
    }

    /// A node with NATS whose `CHATD_CLUSTER_GAP_WAIT_MS` is `gap_wait_ms`.
    fn with_gap_wait(db: &TestDb, prefix: &str, gap_wait_ms: u64) -> Self {
        let (ttl, grace, wait) = (TTL_MS.to_string(), GRACE_MS.to_string(), gap_wait_ms.to_string());
        let settings = [
            ("CHATD_PRESENCE_TTL_MS", ttl.as_str()),
            ("CHATD_PRESENCE_GRACE_MS", grace.as_str()),
            ("CHATD_TYPING_THROTTLE_MS", "0"),
            ("CHATD_CLUSTER_GAP_WAIT_MS", wait.as_str()),
        ];
        let node = NatsNode::start(chatd_testkit::chatd!(db.dir.path()), db, NATS_URL, prefix, &settings);
        Self { node }
    }

    async fn create_channel(&self, id: &str, members: &[&str]) {
        self.node.admin.create_channel(id, members).await;
    }

    /// SIGKILL: no shutdown, no goodbye.
    fn kill(&mut self) {
        let _ = self.node.process.child.kill();
        let _ = self.node.process.child.wait();
    }
}

/// A database and a subject prefix of the test's own; `None` when
/// PostgreSQL tests are skipped.
async fn setup() -> Option<(TestDb, String)> {
    postgres_url()?;
    require_nats();
    let db = TestDb::new(Backend::Postgres).await;
    Some((db, subject_prefix()))
}

/// Reads PRESENCE frames of `user` until one says `status`, skipping
/// earlier ones (a snapshot taken before another node's news arrived).
async fn wait_presence(client: &mut WsClient, user: &str, status: &str) -> Value {
    loop {
        let frame = client.recv_type("PRESENCE").await;
        assert_eq!(frame["userId"], user, "{frame}");
        if frame["status"] == status {
            return frame;
        }
    }
}

fn sub(ids: &[&str]) -> Value {
    json!({"type": "PRESENCE_SUB", "userIds": ids})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_and_presence_cross_nodes() {
    let Some((db, prefix)) = setup().await else { return };
    let a = Node::start(&db, &prefix);
    let b = Node::start(&db, &prefix);
    a.create_channel("room", &["alice", "bob"]).await;
    let mut bob = b.connect("bob").await;
    bob.send_json(sub(&["alice"])).await;
    let first = bob.recv_type("PRESENCE").await;
    assert_eq!(first["status"], "offline", "{first}");
    let mut alice = a.connect("alice").await;
    wait_presence(&mut bob, "alice", "online").await;

    alice
        .send_json(json!({"type": "TYPING", "channelId": "room", "state": "start"}))
        .await;
    let typing = bob.recv_type("TYPING").await;
    assert_eq!(
        (typing["userId"].as_str(), typing["state"].as_str()),
        (Some("alice"), Some("start"))
    );
    assert!(typing["expiresAt"].is_i64());
    alice.send_and_ack("room", "m1", "hi").await;
    // The message, then the server's stop it causes: both travel on the
    // channel's subject, the stop behind the message.
    let recv = bob.recv().await;
    assert_eq!(
        (recv["type"].as_str(), &recv["seq"]),
        (Some("MSG_RECV"), &json!(1)),
        "{recv}"
    );
    let stop = bob.recv().await;
    assert_eq!(
        (stop["type"].as_str(), stop["state"].as_str()),
        (Some("TYPING"), Some("stop")),
        "a stored message stops the typing: {stop}"
    );

    // alice moves from A to B inside the grace: no flap on either node.
    let mut carol_on_a = a.connect("bob").await;
    carol_on_a.send_json(sub(&["alice"])).await;
    wait_presence(&mut carol_on_a, "alice", "online").await;
    drop(alice);
    let alice_on_b = b.connect("alice").await;
    bob.expect_silence(Duration::from_millis(GRACE_MS + TTL_MS)).await;
    carol_on_a.expect_silence(Duration::from_millis(10)).await;
    drop(alice_on_b);
    let started = Instant::now();
    let offline = wait_presence(&mut carol_on_a, "alice", "offline").await;
    assert!(offline["lastSeenAt"].is_i64(), "{offline}");
    assert!(
        started.elapsed() < Duration::from_millis(TTL_MS),
        "announced, not expired"
    );
    wait_presence(&mut bob, "alice", "offline").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_takes_its_users_offline_elsewhere_within_presence_ttl() {
    let Some((db, prefix)) = setup().await else { return };
    let mut a = Node::start(&db, &prefix);
    let b = Node::start(&db, &prefix);
    a.create_channel("room", &["alice", "bob"]).await;
    let _alice = a.connect("alice").await;
    let mut bob = b.connect("bob").await;
    bob.send_json(sub(&["alice"])).await;
    wait_presence(&mut bob, "alice", "online").await;
    // Some heartbeats go by: alice stays online.
    bob.expect_silence(Duration::from_millis(2 * TTL_MS)).await;

    a.kill();
    let killed = Instant::now();
    let offline = wait_presence(&mut bob, "alice", "offline").await;
    let took = killed.elapsed();
    // Within presence_ttl_ms of the kill (a little slack for the test's own
    // reading of the socket on a shared machine).
    assert!(
        took <= Duration::from_millis(TTL_MS + 250),
        "offline {took:?} after SIGKILL (presence_ttl_ms {TTL_MS})"
    );
    assert!(offline["lastSeenAt"].is_i64(), "{offline}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_node_does_not_announce_its_old_users() {
    let Some((db, prefix)) = setup().await else { return };
    let mut a = Node::start(&db, &prefix);
    let b = Node::start(&db, &prefix);
    a.create_channel("room", &["alice", "bob", "carol"]).await;
    let _alice = a.connect("alice").await;
    let mut bob = b.connect("bob").await;
    bob.send_json(sub(&["alice"])).await;
    wait_presence(&mut bob, "alice", "online").await;

    a.kill();
    let a = Node::start(&db, &prefix);
    // The new process speaks for nobody: alice goes offline on B, and stays so.
    wait_presence(&mut bob, "alice", "offline").await;
    bob.expect_silence(Duration::from_millis(2 * TTL_MS)).await;
    let mut carol = a.connect("carol").await;
    carol.send_json(sub(&["alice", "bob"])).await;
    assert_eq!(carol.recv_type("PRESENCE").await["status"], "offline", "alice");
    let bob_seen = carol.recv_type("PRESENCE").await;
    assert_eq!(bob_seen["userId"], "bob");
    assert_eq!(bob_seen["status"], "online", "bob is on B: {bob_seen}");
}

/// A member removed, or a channel deleted, on one node: the node the user
/// types on refuses the next TYPING (`forbidden`) instead of taking it by
/// the member list it cached for up to a second. The removal travels on the
/// user's NATS subject; a RECEIPT published after it on the same subject
/// tells the test it has arrived.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_after_a_removal_on_another_node_is_refused() {
    let Some((db, prefix)) = setup().await else { return };
    let a = Node::start(&db, &prefix);
    let b = Node::start(&db, &prefix);
    a.create_channel("room", &["bob", "dave"]).await;
    a.create_channel("side", &["alice", "bob"]).await;
    let mut bob_on_b = b.connect("bob").await;
    let mut dave_on_b = b.connect("dave").await;
    let mut bob_on_a = a.connect("bob").await;
    let mut alice = a.connect("alice").await;
    let ack = alice.send_and_ack("side", "s1", "read me").await;
    bob_on_a.recv_type("MSG_RECV").await;
    bob_on_b.recv_type("MSG_RECV").await;

    // Node B reads room's members for bob's TYPING and keeps them.
    bob_on_b
        .send_json(json!({"type": "TYPING", "channelId": "room", "state": "start"}))
        .await;
    assert_eq!(dave_on_b.recv_type("TYPING").await["state"], "start");

    let status = a.node.admin.delete_member("room", "bob").await;
    assert_eq!(status, 204);
    // Every session concerned is told, on both nodes.
    for ws in [&mut bob_on_b, &mut bob_on_a] {
        assert_eq!(ws.recv_type("MEMBER").await["op"], "leave");
        assert_eq!(ws.recv_type("CHANNEL_REMOVED").await["reason"], "removed");
    }
    assert_eq!(dave_on_b.recv_type("MEMBER").await["userId"], "bob");
    bob_on_a
        .send_json(json!({"type": "MSG_READ", "messageId": ack["messageId"]}))
        .await;
    assert_eq!(bob_on_b.recv_type("RECEIPT").await["kind"], "read");
    bob_on_b
        .send_json(json!({"type": "TYPING", "channelId": "room", "state": "stop"}))
        .await;
    let error = bob_on_b.recv_type("ERROR").await;
    assert_eq!(
        (error["code"].as_str(), error["channelId"].as_str()),
        (Some("forbidden"), Some("room")),
        "{error}"
    );
    dave_on_b.expect_silence(Duration::from_millis(300)).await;

    // The channel deleted on A: dave, on B, reads CHANNEL_REMOVED, then types.
    dave_on_b
        .send_json(json!({"type": "TYPING", "channelId": "room", "state": "start"}))
        .await;
    let (status, _) = a
        .node
        .admin
        .request(reqwest::Method::DELETE, "/v1/channels/room", None)
        .await;
    assert_eq!(status, 204);
    assert_eq!(dave_on_b.recv_type("CHANNEL_REMOVED").await["channelId"], "room");
    dave_on_b
        .send_json(json!({"type": "TYPING", "channelId": "room", "state": "stop"}))
        .await;
    let error = dave_on_b.recv_type("ERROR").await;
    assert_eq!(error["code"], "forbidden", "{error}");
}

/// A block made on one node hides the blocker from the blocked user's open
/// presence subscription on another node at once (§17): `offline`, no
/// `lastSeenAt`, without a new PRESENCE_SUB. Before, only the next
/// PRESENCE_SUB judged the block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_on_one_node_hides_the_blocker_from_a_subscription_on_another() {
    let Some((db, prefix)) = setup().await else { return };
    let a = Node::start(&db, &prefix);
    let b = Node::start(&db, &prefix);
    a.create_channel("room", &["alice", "bob"]).await;
    let _bob = a.connect("bob").await;
    let mut alice = b.connect("alice").await;
    alice.send_json(sub(&["bob"])).await;
    wait_presence(&mut alice, "bob", "online").await;
    let status = reqwest::Client::new()
        .put(a.node.process.url("/v1/me/blocks/alice"))
        .bearer_auth(chatd_testkit::mint_token(chatd_testkit::JWT_SECRET, "bob", 3600))
        .send()
        .await
        .expect("http")
        .status();
    assert_eq!(status, 204);
    let presence = alice.recv_type("PRESENCE").await;
    assert_eq!(
        presence,
        json!({"type": "PRESENCE", "userId": "bob", "status": "offline"}),
        "at once, on the other node, no lastSeenAt"
    );
}

/// Waits up to `within` for a line of `node`'s log holding every one of `needles`.
async fn wait_log(node: &Node, needles: &[&str], within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let log = node.node.process.log_text();
        if let Some(line) = log.lines().find(|l| needles.iter().all(|n| l.contains(n))) {
            return line.to_owned();
        }
        assert!(Instant::now() < deadline, "no line with {needles:?} in: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `chatd_nats_peers` on `node`.
async fn peers(node: &Node) -> f64 {
    let text = reqwest::get(node.node.process.url("/metrics"))
        .await
        .expect("http")
        .text()
        .await
        .expect("text");
    text.lines()
        .find_map(|l| l.strip_prefix("chatd_nats_peers "))
        .and_then(|v| v.parse().ok())
        .expect("chatd_nats_peers")
}

/// At the default level a node logs the others joining, leaving (a clean
/// stop) and lost (SIGKILL: no heartbeat within `presence_ttl_ms`), with no
/// user connected anywhere; `chatd_nats_peers` counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_logs_its_peers_joining_leaving_and_lost() {
    let Some((db, prefix)) = setup().await else { return };
    let a = Node::start(&db, &prefix);
    assert_eq!(peers(&a).await, 0.0);
    let mut b = Node::start(&db, &prefix);
    let c = Node::start(&db, &prefix);
    let within = Duration::from_millis(TTL_MS * 3);
    wait_log(&a, &["INFO", "peer node joined", "peers=2"], within).await;
    assert_eq!(peers(&a).await, 2.0);
    c.node.process.signal("TERM");
    let left = wait_log(&a, &["INFO", "peer node left"], within).await;
    assert!(left.contains("peers=1"), "{left}");
    assert_eq!(c.node.process.wait(), 0);
    b.kill();
    let killed = Instant::now();
    let lost = wait_log(&a, &["WARN", "peer node lost"], within).await;
    assert!(lost.contains("peers=0"), "{lost}");
    assert!(
        killed.elapsed() <= Duration::from_millis(TTL_MS + TTL_MS / 2),
        "lost within presence_ttl_ms (and a heartbeat): {:?}",
        killed.elapsed()
    );
    assert_eq!(peers(&a).await, 0.0);
}

fn typing(state: &str) -> Value {
    json!({"type": "TYPING", "channelId": "room", "state": state})
}

/// Rounds of what a client typing its messages does: alice, typing in
/// `room`, sends a message (`body(round)`), and once she has its ACK types
/// again. bob must get, each round, the message's MSG_RECV, then the `stop`
/// it causes, then alice's new `start` (clients drop the typer's indicator
/// when its message arrives: a `start` before the message would be lost).
/// Panics with the rounds out of that order.
async fn typing_follows_each_message(
    alice: &mut WsClient,
    bob: &mut WsClient,
    rounds: std::ops::Range<i64>,
    body: impl Fn(i64) -> String,
) {
    alice.send_json(typing("start")).await;
    let first = bob.recv_type("TYPING").await;
    assert_eq!(first["state"], "start", "{first}");
    let total = rounds.end - rounds.start;
    let mut out_of_order = Vec::new();
    for round in rounds {
        let ack = alice.send_and_ack("room", &format!("m{round}"), &body(round)).await;
        alice.send_json(typing("start")).await;
        let frames = [bob.recv().await, bob.recv().await, bob.recv().await];
        let seen: Vec<String> = frames
            .iter()
            .map(|f| match f["type"].as_str() {
                Some("MSG_RECV") => format!("MSG_RECV {}", f["seq"]),
                Some("TYPING") => format!(
                    "TYPING {} {}",
                    f["userId"].as_str().unwrap_or("?"),
                    f["state"].as_str().unwrap_or("?")
                ),
                _ => f.to_string(),
            })
            .collect();
        let expected = [
            format!("MSG_RECV {}", ack["seq"]),
            "TYPING alice stop".to_owned(),
            "TYPING alice start".to_owned(),
        ];
        if seen != expected {
            out_of_order.push(format!("round {round}: {seen:?}"));
        }
    }
    assert!(
        out_of_order.is_empty(),
        "out of order in {} of {total} rounds: {out_of_order:#?}",
        out_of_order.len()
    );
}

/// One node with NATS: the message goes to the other member through the
/// channel's task, and so do the `stop` it causes and the typer's next
/// `start`, behind it (before, TYPING went straight to the sessions and
/// overtook the message nearly every round).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_one_node_typing_follows_the_message_it_ends() {
    let Some((db, prefix)) = setup().await else { return };
    let a = Node::start(&db, &prefix);
    a.create_channel("room", &["alice", "bob"]).await;
    let mut alice = a.connect("alice").await;
    let mut bob = a.connect("bob").await;
    typing_follows_each_message(&mut alice, &mut bob, 1..51, |round| format!("message {round}")).await;
}

/// Two nodes: alice's `stop` and next `start` travel on the channel's
/// subject, behind her message, and wait on bob's node for it. Made certain
/// with the test hook that publishes a message 400 ms late (the TYPING
/// frames are not delayed), then 50 ordinary rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_nodes_typing_follows_the_message_it_ends() {
    let Some((db, prefix)) = setup().await else { return };
    // A long gap wait: bob's node must release the frames when the late
    // message arrives, not by reading the database.
    let a = Node::with_gap_wait(&db, &prefix, 3000);
    let b = Node::with_gap_wait(&db, &prefix, 3000);
    a.create_channel("room", &["alice", "bob"]).await;
    let mut bob = b.connect("bob").await;
    let mut alice = a.connect("alice").await;
    let late = chatd::delivery::nats::TEST_NATS_DELAY;
    typing_follows_each_message(&mut alice, &mut bob, 1..4, |round| format!("{late} message {round}")).await;
    typing_follows_each_message(&mut alice, &mut bob, 4..54, |round| format!("message {round}")).await;
}

/// The next PRESENCE frame, skipping the membership frames around it.
async fn next_presence(client: &mut WsClient) -> Value {
    client
        .recv_type_skipping("PRESENCE", &["MEMBER", "CHANNEL_ADDED", "CHANNEL_REMOVED"])
        .await
}

/// A removal committed on node A ends, on node B too, the presence reports
/// between the removed user and a user with whom the channel was the only
/// one shared (§9): alice's subscription on B shows bob `offline` and
/// reports nothing more of him, and bob's on A shows alice `offline`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removal_on_one_node_ends_presence_reports_on_another() {
    let Some((db, prefix)) = setup().await else { return };
    let a = Node::start(&db, &prefix);
    let b = Node::start(&db, &prefix);
    a.create_channel("room", &["alice", "bob"]).await;
    let mut bob = a.connect("bob").await;
    let mut alice = b.connect("alice").await;
    alice.send_json(sub(&["bob"])).await;
    wait_presence(&mut alice, "bob", "online").await;
    bob.send_json(sub(&["alice"])).await;
    wait_presence(&mut bob, "alice", "online").await;
    let (status, body) = a
        .node
        .admin
        .request(reqwest::Method::DELETE, "/v1/channels/room/members/bob", None)
        .await;
    assert_eq!(status, 204, "{body}");
    let hidden = next_presence(&mut alice).await;
    assert_eq!(
        hidden,
        json!({"type": "PRESENCE", "userId": "bob", "status": "offline"})
    );
    let hidden = next_presence(&mut bob).await;
    assert_eq!(
        hidden,
        json!({"type": "PRESENCE", "userId": "alice", "status": "offline"})
    );
    // bob leaving (past the grace and the TTL) tells alice nothing more.
    drop(bob);
    tokio::time::sleep(Duration::from_millis(GRACE_MS + TTL_MS)).await;
    let _bob = a.connect("bob").await;
    alice.expect_silence(Duration::from_millis(800)).await;
}

/// An add committed on node A shows, on node B too, the added user to a
/// subscription that requested it while they shared no channel (§9), and
/// the other way: alice's subscription on B shows carol `online` without a
/// new PRESENCE_SUB, then her `offline` when she goes; carol's on A shows
/// alice. Before, only the next PRESENCE_SUB showed them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_add_on_one_node_starts_presence_reports_on_another() {
    let Some((db, prefix)) = setup().await else { return };
    let a = Node::start(&db, &prefix);
    let b = Node::start(&db, &prefix);
    a.create_channel("room", &["alice", "bob"]).await;
    let mut carol = a.connect("carol").await;
    let mut alice = b.connect("alice").await;
    alice.send_json(sub(&["carol"])).await;
    wait_presence(&mut alice, "carol", "offline").await;
    carol.send_json(sub(&["alice"])).await;
    wait_presence(&mut carol, "alice", "offline").await;
    let (status, body) = a
        .node
        .admin
        .request(reqwest::Method::PUT, "/v1/channels/room/members/carol", None)
        .await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(
        next_presence(&mut alice).await,
        json!({"type": "PRESENCE", "userId": "carol", "status": "online"})
    );
    assert_eq!(
        next_presence(&mut carol).await,
        json!({"type": "PRESENCE", "userId": "alice", "status": "online"})
    );
    drop(carol);
    let gone = next_presence(&mut alice).await;
    assert_eq!((&gone["userId"], &gone["status"]), (&json!("carol"), &json!("offline")));
}
