//! Erasing a user (protocol.md §19) across `chatd` processes on one
//! PostgreSQL database and the machine's NATS: the erased user's sessions
//! close with 1008 on every node, its earlier tokens are refused by every
//! node once the erasure is answered, and the other members on another node
//! see its `MEMBER` `leave` and its messages deleted.
//!
//! Without `CHATD_TEST_DATABASE_URL` every test returns at once (a failure
//! with `CHATD_REQUIRE_POSTGRES=1`), as in `tests/cluster.rs`.

use chatd_testkit::{
    mint_token, postgres_url, require_nats, subject_prefix, Backend, NatsNode, TestDb, ADMIN_TOKEN, JWT_SECRET,
    NATS_URL,
};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erasure_on_one_node_closes_sessions_and_refuses_tokens_on_every_node() {
    if postgres_url().is_none() {
        return;
    }
    require_nats();
    let db = TestDb::new(Backend::Postgres).await;
    let prefix = subject_prefix();
    let a = NatsNode::start(chatd_testkit::chatd!(db.dir.path()), &db, NATS_URL, &prefix, &[]);
    let b = NatsNode::start(chatd_testkit::chatd!(db.dir.path()), &db, NATS_URL, &prefix, &[]);
    a.admin.create_channel("room", &["alice", "bob"]).await;
    let old = mint_token(JWT_SECRET, "alice", 3600);
    let mut alice_on_a = a.process.connect(&old).await;
    let mut alice_on_b = b.process.connect(&old).await;
    let mut bob_on_b = b.connect("bob").await;
    let sent = alice_on_a.send_and_ack("room", "a-1", "ERASED-across-nodes").await;
    let recv = bob_on_b.recv_type("MSG_RECV").await;
    assert_eq!(recv["messageId"], sent["messageId"]);

    let res = reqwest::Client::new()
        .delete(a.process.url("/v1/users/alice"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 204);

    // Every node refuses the old token as soon as the erasure is answered.
    for node in [&a, &b] {
        let res = reqwest::Client::new()
            .get(node.process.url("/v1/me/channels"))
            .bearer_auth(&old)
            .send()
            .await
            .expect("http");
        assert_eq!(res.status().as_u16(), 401, "{}", node.process.addr);
    }
    assert_eq!(alice_on_a.recv_close_code().await, 1008);
    assert_eq!(alice_on_b.recv_close_code().await, 1008);
    // Bob, on the other node, sees the delete and the leave, in that order.
    let delete = bob_on_b.recv_type("MSG_RECV").await;
    assert_eq!(delete["kind"], "delete");
    assert_eq!(delete["targetId"], sent["messageId"]);
    assert_eq!(delete["byAdmin"], true);
    let member = bob_on_b.recv_type("MEMBER").await;
    assert_eq!(
        (member["userId"].as_str(), member["op"].as_str()),
        (Some("alice"), Some("leave"))
    );
    assert_eq!(member["afterSeq"], delete["seq"]);
    let history: Vec<Value> = b.admin.all_messages("room").await;
    assert_eq!(history[0]["deleted"], true);
    assert_eq!(history[0]["body"], "");
}
