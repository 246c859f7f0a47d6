//! Replies and threads (protocol §14) across `chatd` processes on one
//! PostgreSQL database and the machine's NATS (127.0.0.1:4222), each test
//! with a subject prefix of its own: a reply and a thread reply sent on one
//! node reach sessions on another with `replyTo`, `replyPreview` and
//! `threadId` (live, and when that node fills a gap from the database);
//! reads on the other node show the root's `thread` summary, an edit of the
//! quoted message, its deletion (a preview with `deleted: true` and no
//! text), and a thread's pages by the history route and `SYNC`; the Rust
//! client's thread store shows its own reply ACKed above a gap as pending
//! until the gap is filled, then once as a reply.
//!
//! The cluster runs on PostgreSQL only (SQLite is one process's database).
//! Without `CHATD_TEST_DATABASE_URL` every test returns at once (a failure
//! with `CHATD_REQUIRE_POSTGRES=1`), as in `tests/cluster.rs`.

use std::time::Duration;

use chatd_client::{Client, ClientConfig, Event, SendOptions};
use chatd_testkit::{
    postgres_url, reply, require_nats, subject_prefix, thread_until, Backend, NatsNode, TestDb, WsClient, NATS_URL,
};
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// One `chatd serve` process.
struct Node {
    node: NatsNode,
}

impl Node {
    fn start(db: &TestDb, prefix: &str, extra: &[(&str, &str)]) -> Self {
        let node = NatsNode::start(chatd_testkit::chatd!(db.dir.path()), db, NATS_URL, prefix, extra);
        Self { node }
    }

    async fn connect(&self, user: &str) -> WsClient {
        self.node.connect(user).await
    }

    fn token(user: &str) -> String {
        chatd_testkit::mint_token(chatd_testkit::JWT_SECRET, user, 3600)
    }

    /// The history route as `user` on this node.
    async fn history(&self, user: &str, query: &str) -> Value {
        let url = self.node.process.url(&format!("/v1/channels/room/messages?{query}"));
        let res = reqwest::Client::new()
            .get(url)
            .bearer_auth(Self::token(user))
            .send()
            .await
            .expect("history");
        assert_eq!(res.status(), 200);
        res.json().await.expect("json")
    }
}

/// A database and a subject prefix of the test's own, and `count` nodes
/// on them; `None` when PostgreSQL tests are skipped.
async fn cluster(count: usize, extra: &[(&str, &str)]) -> Option<(TestDb, Vec<Node>)> {
    postgres_url()?;
    require_nats();
    let db = TestDb::new(Backend::Postgres).await;
    let prefix = subject_prefix();
    let nodes = (0..count).map(|_| Node::start(&db, &prefix, extra)).collect();
    Some((db, nodes))
}

/// Sends `frame` and returns its MSG_ACK, skipping other frames.
async fn acked(client: &mut WsClient, frame: Value) -> Value {
    client.send_json(frame.clone()).await;
    loop {
        let got = client.recv().await;
        match got["type"].as_str() {
            Some("MSG_ACK") => return got,
            Some("ERROR") => panic!("{frame} refused: {got}"),
            _ => {}
        }
    }
}

fn by_id<'a>(messages: &'a Value, id: &Value) -> &'a Value {
    messages["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["messageId"] == *id)
        .expect("in the read")
}

fn seqs(page: &Value) -> Vec<i64> {
    chatd_testkit::seqs(page["messages"].as_array().expect("messages"))
}

/// Reads frames until a SYNC_BATCH.
async fn sync_batch(client: &mut WsClient, frame: Value) -> Value {
    client.send_json(frame).await;
    client.recv_type("SYNC_BATCH").await
}

/// A quote and thread replies sent on A (and one on B) reach the other
/// node's sessions render-ready; reads on B show the summary, an edit, and
/// after a delete on A the preview erased; a thread is paged on B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_and_threads_sent_on_one_node_read_the_same_on_another() {
    let Some((_db, nodes)) = cluster(2, &[]).await else {
        return;
    };
    let [a, b] = &nodes[..] else { unreachable!() };
    a.node.admin.create_channel("room", &["alice", "bob"]).await;
    let mut alice = a.connect("alice").await;
    let mut bob = b.connect("bob").await;

    let root = alice.send_and_ack("room", "root", "SECRET-root-7d1").await;
    let root_id = root["messageId"].clone();
    bob.recv_type("MSG_RECV").await;

    let quote = acked(&mut alice, reply("q1", "quoting", Some(&root_id), None)).await;
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(recv["messageId"], quote["messageId"]);
    assert_eq!(
        (&recv["replyTo"], &recv["replyPreview"]),
        (&root_id, &json!({"senderId": "alice", "body": "SECRET-root-7d1"})),
        "on B: {recv}"
    );
    assert!(recv.get("threadId").is_none(), "{recv}");

    let t1 = acked(
        &mut alice,
        reply("t1", "in the thread", Some(&quote["messageId"]), Some(&root_id)),
    )
    .await;
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(
        (&recv["messageId"], &recv["threadId"], &recv["replyTo"]),
        (&t1["messageId"], &root_id, &quote["messageId"]),
        "on B: {recv}"
    );
    assert_eq!(recv["replyPreview"], json!({"senderId": "alice", "body": "quoting"}));

    // A thread reply from B reaches A.
    let t2 = acked(&mut bob, reply("t2", "bob in the thread", None, Some(&root_id))).await;
    let recv = alice.recv_type("MSG_RECV").await;
    assert_eq!(
        (&recv["messageId"], &recv["threadId"]),
        (&t2["messageId"], &root_id),
        "on A: {recv}"
    );

    let read = b.history("bob", "afterSeq=0&limit=100").await;
    assert_eq!(
        by_id(&read, &root_id)["thread"],
        json!({"replyCount": 2, "lastReplyAt": t2["ts"], "lastReplySeq": t2["seq"],
               "participants": ["alice", "bob"]}),
        "the root's summary read on B"
    );
    assert!(by_id(&read, &t1["messageId"]).get("thread").is_none());

    // A thread page on B: the history route and SYNC, forward and latest.
    let root_str = root_id.as_str().expect("id");
    let page = b
        .history("bob", &format!("threadId={root_str}&afterSeq=0&limit=1"))
        .await;
    assert_eq!((seqs(&page), page["hasMore"].as_bool()), (vec![3], Some(true)));
    let page = b
        .history("bob", &format!("threadId={root_str}&latest=true&limit=10"))
        .await;
    assert_eq!((seqs(&page), page["hasMore"].as_bool()), (vec![3, 4], Some(false)));
    assert_eq!(page["messages"][0]["replyPreview"]["body"], "quoting", "render-ready");
    let batch = sync_batch(
        &mut bob,
        json!({"type": "SYNC", "channelId": "room", "threadId": root_id, "afterSeq": 3}),
    )
    .await;
    assert_eq!((seqs(&batch), &batch["threadId"]), (vec![4], &root_id));
    let batch = sync_batch(
        &mut bob,
        json!({"type": "SYNC", "channelId": "room", "threadId": root_id, "latest": true, "limit": 1}),
    )
    .await;
    assert_eq!((seqs(&batch), batch["hasMore"].as_bool()), (vec![4], Some(true)));

    // An edit on A shows in B's reads of the quote.
    acked(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": root_id, "body": "SECRET-edit-7d1"}),
    )
    .await;
    assert_eq!(bob.recv_type("MSG_RECV").await["kind"], "edit");
    let read = b.history("bob", "afterSeq=0&limit=100").await;
    assert_eq!(
        by_id(&read, &quote["messageId"])["replyPreview"]["body"],
        "SECRET-edit-7d1"
    );

    // A delete on A: B's reads show the preview deleted, with no text.
    acked(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": root_id}),
    )
    .await;
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!((&recv["kind"], &recv["targetId"]), (&json!("delete"), &root_id));
    let erased = json!({"senderId": "alice", "body": "", "deleted": true});
    let read = b.history("bob", "afterSeq=0&limit=100").await;
    assert_eq!(by_id(&read, &quote["messageId"])["replyPreview"], erased);
    assert!(!read.to_string().contains("SECRET-"), "{read}");
    assert_eq!(
        by_id(&read, &root_id)["thread"]["replyCount"],
        2,
        "a deleted root keeps its thread"
    );
    let batch = sync_batch(&mut bob, json!({"type": "SYNC", "channelId": "room", "afterSeq": 0})).await;
    assert_eq!(by_id(&batch, &quote["messageId"])["replyPreview"], erased);
    assert!(!batch.to_string().contains("SECRET-"), "{batch}");
    let page = b.history("bob", &format!("threadId={root_str}&afterSeq=0")).await;
    assert_eq!(seqs(&page), vec![3, 4], "the thread of a deleted root is still read");
    // A session connected on B after the delete reads the same.
    let mut late = b.connect("bob").await;
    let batch = sync_batch(&mut late, json!({"type": "SYNC", "channelId": "room", "latest": true})).await;
    assert_eq!(by_id(&batch, &quote["messageId"])["replyPreview"], erased);
}

/// Test hook (`test-hooks`): a thread reply never published to NATS leaves
/// a gap on B; B fills it from the database, and the reply it reads there
/// carries its `replyTo`, `replyPreview` and `threadId` like the live one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_filled_from_the_database_on_another_node_is_render_ready() {
    let Some((_db, nodes)) = cluster(2, &[("CHATD_CLUSTER_GAP_WAIT_MS", "300")]).await else {
        return;
    };
    let [a, b] = &nodes[..] else { unreachable!() };
    a.node.admin.create_channel("room", &["alice", "bob"]).await;
    let mut alice = a.connect("alice").await;
    let mut bob = b.connect("bob").await;
    let root_id = alice.send_and_ack("room", "root", "the root").await["messageId"].clone();
    bob.recv_type("MSG_RECV").await;

    let lost = format!("{} a reply", chatd::delivery::nats::TEST_NATS_DROP);
    let stored = acked(&mut alice, reply("r1", &lost, Some(&root_id), Some(&root_id))).await;
    acked(&mut alice, reply("m3", "after it", None, None)).await;
    let filled = bob.recv_type("MSG_RECV").await;
    assert_eq!(filled["messageId"], stored["messageId"], "{filled}");
    assert_eq!(
        (&filled["replyTo"], &filled["threadId"], &filled["replyPreview"]),
        (&root_id, &root_id, &json!({"senderId": "alice", "body": "the root"})),
        "read from the database on B: {filled}"
    );
    assert_eq!(bob.recv_type("MSG_RECV").await["seq"], 3);
}

/// The Rust client on B answers in a thread while an earlier message (sent
/// on A, never published to NATS) is missing: its reply is ACKed above the
/// gap and shows as pending with its seq, not as a reply, until the gap is
/// filled (here by the SYNC after a reconnect; B's own fill and the
/// client's gap SYNC are set to wait a minute); then once, as a reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_reply_acked_above_a_gap_is_pending_until_delivered_in_order() {
    let Some((_db, nodes)) = cluster(2, &[("CHATD_CLUSTER_GAP_WAIT_MS", "60000")]).await else {
        return;
    };
    let [a, b] = &nodes[..] else { unreachable!() };
    a.node.admin.create_channel("room", &["alice", "bob"]).await;
    let mut bob = a.connect("bob").await;
    let mut config = ClientConfig::new(format!("ws://{}/v1/ws", b.node.process.addr), Node::token("alice"));
    config.backoff_initial = Duration::from_millis(20);
    config.gap_sync_delay = Duration::from_secs(60);
    let (client, mut events) = Client::connect(config).await.expect("connect");

    let root_id = bob.send_and_ack("room", "root", "the root").await["messageId"].clone();
    let root = uuid::Uuid::parse_str(root_id.as_str().expect("id")).expect("uuid");
    wait_message(&mut events, 1).await;
    let opened = client.open_thread("room", root).await.expect("open");
    assert_eq!((opened.replies.len(), opened.pending.len()), (0, 0));

    let lost = format!("{} missing on B", chatd::delivery::nats::TEST_NATS_DROP);
    assert_eq!(bob.send_and_ack("room", "gap", &lost).await["seq"], 2);
    let options = SendOptions {
        thread_id: Some(root),
        ..SendOptions::default()
    };
    let ack = client.send_with("room", "my reply", options).await.expect("acked");
    assert_eq!(ack.seq, 3);

    let thread = client.thread("room", root).await.expect("opened");
    assert_eq!(thread.replies, Vec::new(), "above the gap: not delivered yet");
    let pending: Vec<_> = thread
        .pending
        .iter()
        .map(|p| (p.client_msg_id.as_str(), p.message_id, p.seq, p.body.as_str()))
        .collect();
    assert_eq!(
        pending,
        vec![(ack.client_msg_id.as_str(), Some(ack.message_id), Some(3), "my reply")],
        "pending with its seq"
    );

    client.reconnect().await;
    let thread = thread_until(&client, &mut events, "room", root, "the reply delivered", |t| {
        !t.replies.is_empty()
    })
    .await;
    let replies: Vec<_> = thread.replies.iter().map(|m| (m.seq, m.body.as_str())).collect();
    assert_eq!(replies, vec![(3, "my reply")], "once, as a reply");
    assert_eq!(thread.pending, Vec::new());
    client.close().await;
}

/// Reads events until the message at `seq` was delivered.
async fn wait_message(events: &mut mpsc::Receiver<Event>, seq: i64) {
    loop {
        match tokio::time::timeout(Duration::from_secs(20), events.recv()).await {
            Ok(Some(Event::Message(m))) if m.seq == seq => return,
            Ok(Some(_)) => {}
            Ok(None) => panic!("events closed"),
            Err(_) => panic!("no message at {seq} in time"),
        }
    }
}
