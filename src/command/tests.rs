//! The reader and the commands without a socket: a stream of WebSocket
//! messages in, the session's outbound queue out, over a real SQLite store
//! in a temporary directory.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use super::Context;
use crate::auth::{Auth, AuthUser};
use crate::config::Config;
use crate::http::ws::reader::Reader;
use crate::ids::{ChannelId, UserId};
use crate::outbound::{CloseSignal, QueuedBytes, SessionHandle};
use crate::state::AppState;
use crate::store::{Store, StoreOptions};

/// A server's state over a fresh SQLite store (the directory lives as long
/// as the returned guard), with `room` holding alice and bob.
async fn state() -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::connect(&StoreOptions {
        url: format!("sqlite://{}", dir.path().join("chatd.db").display()),
        max_connections: 2,
        timeout: Duration::from_secs(5),
    })
    .await
    .expect("store");
    store.migrate().await.expect("migrate");
    let members = [UserId::parse("alice").unwrap(), UserId::parse("bob").unwrap()];
    store
        .create_channel(&ChannelId::parse("room").unwrap(), &members, 1)
        .await
        .expect("channel");
    let auth = Auth::new("unit-test-secret-unit-test-secret", "admin", None, None, 0);
    let state = AppState::new(
        Config::default(),
        store,
        auth,
        crate::telemetry::metrics_handle(),
        &TaskTracker::new(),
    )
    .await
    .expect("state");
    (state, dir)
}

/// One session of `user` registered with the hub: its handle, close switch
/// and the receiving end of its outbound queue.
struct TestSession {
    user: AuthUser,
    handle: SessionHandle,
    close: Arc<CloseSignal>,
    out: mpsc::Receiver<Utf8Bytes>,
}

impl TestSession {
    fn open(state: &AppState, user: &str) -> Self {
        let (tx, out) = mpsc::channel(64);
        let close = Arc::new(CloseSignal::default());
        let user = AuthUser {
            user_id: UserId::parse(user).unwrap(),
            expires_at_ms: u64::MAX / 2,
            issued_at_ms: None,
        };
        let handle = SessionHandle::new(
            uuid::Uuid::now_v7().to_string().into(),
            user.user_id.clone(),
            tx,
            Arc::new(QueuedBytes::new(1 << 20)),
            close.clone(),
        );
        state.hub.register(handle.clone());
        Self {
            user,
            handle,
            close,
            out,
        }
    }

    /// Runs a reader over `frames`, then a close frame (so it waits for the
    /// sends in flight), to completion.
    async fn read(&self, state: &AppState, frames: &[Value]) {
        let ctx = Context {
            state,
            user: &self.user,
            session: &self.handle,
            close: &self.close,
        };
        let messages: Vec<Result<Message, std::convert::Infallible>> = frames
            .iter()
            .map(|f| Ok(Message::Text(f.to_string().into())))
            .chain([Ok(Message::Close(None))])
            .collect();
        let mut stream = futures_util::stream::iter(messages);
        Reader::new(ctx).run(&mut stream).await;
    }

    /// Every frame queued to this session so far, decoded.
    fn frames(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.out.try_recv().ok())
            .map(|t| serde_json::from_str(t.as_str()).expect("JSON"))
            .collect()
    }
}

/// A MSG_SEND to `room`.
fn send(key: &str, body: &str) -> Value {
    json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": key, "body": body})
}

#[tokio::test]
async fn a_send_is_acked_then_a_retry_is_a_duplicate_and_bob_gets_one_recv() {
    let (state, _dir) = state().await;
    let mut alice = TestSession::open(&state, "alice");
    let mut bob = TestSession::open(&state, "bob");
    alice.read(&state, &[send("k1", "hi"), send("k1", "hi")]).await;
    let acks = alice.frames();
    assert_eq!(acks.len(), 2, "{acks:?}");
    assert_eq!(acks[0]["type"], "MSG_ACK");
    assert_eq!(acks[0]["duplicate"], false);
    assert_eq!(acks[1]["duplicate"], true);
    assert_eq!(acks[0]["messageId"], acks[1]["messageId"]);
    assert_eq!(acks[0]["seq"], 1);
    let recvs = bob.frames();
    assert_eq!(recvs.len(), 1, "one MSG_RECV, none for the retry: {recvs:?}");
    assert_eq!(recvs[0]["type"], "MSG_RECV");
    assert_eq!(recvs[0]["body"], "hi");
}

#[tokio::test]
async fn a_changed_retry_is_an_idempotency_conflict_echoing_the_key() {
    let (state, _dir) = state().await;
    let mut alice = TestSession::open(&state, "alice");
    alice.read(&state, &[send("k1", "hi"), send("k1", "changed")]).await;
    let frames = alice.frames();
    assert_eq!(frames[1]["type"], "ERROR");
    assert_eq!(frames[1]["code"], "idempotency_conflict");
    assert_eq!(frames[1]["clientMsgId"], "k1");
    assert_eq!(frames[1]["channelId"], "room");
}

#[tokio::test]
async fn bad_frames_get_their_codes_and_the_session_reads_on() {
    let (state, _dir) = state().await;
    let mut alice = TestSession::open(&state, "alice");
    alice
        .read(
            &state,
            &[
                json!(["not", "an", "object"]),
                json!({"type": "NOPE"}),
                send("k2", ""),
                json!({"type": "MSG_SEND", "channelId": "elsewhere", "clientMsgId": "k3", "body": "x"}),
                json!({"type": "SYNC", "channelId": "room", "afterSeq": 0}),
            ],
        )
        .await;
    let frames = alice.frames();
    let codes: Vec<&str> = frames.iter().filter_map(|f| f["code"].as_str()).collect();
    assert_eq!(
        codes,
        ["bad_frame", "unknown_type", "invalid_field", "forbidden"],
        "{frames:?}"
    );
    assert_eq!(frames[2]["clientMsgId"], "k2", "a refused send echoes its key");
    let batch = frames.last().expect("SYNC answered");
    assert_eq!(batch["type"], "SYNC_BATCH");
    assert_eq!(batch["messages"], json!([]), "nothing was stored");
    assert!(!alice.close.is_kicked());
}

#[tokio::test]
async fn a_read_receipt_reaches_the_sender_and_never_goes_back() {
    let (state, _dir) = state().await;
    let mut alice = TestSession::open(&state, "alice");
    let mut bob = TestSession::open(&state, "bob");
    alice.read(&state, &[send("a1", "one"), send("a2", "two")]).await;
    let acks = alice.frames();
    let (first, second) = (acks[0]["messageId"].clone(), acks[1]["messageId"].clone());
    bob.frames();
    bob.read(
        &state,
        &[
            json!({"type": "MSG_READ", "messageId": second}),
            json!({"type": "MSG_READ", "messageId": first}),
        ],
    )
    .await;
    let receipts = alice.frames();
    assert_eq!(receipts.len(), 1, "the second read moved nothing: {receipts:?}");
    assert_eq!(receipts[0]["type"], "RECEIPT");
    assert_eq!(receipts[0]["kind"], "read");
    assert_eq!(receipts[0]["seq"], 2);
    assert!(bob.frames().is_empty(), "no RECEIPT to the reader's own session");
}

#[tokio::test]
async fn a_receipt_for_an_unknown_message_is_not_found_with_its_id() {
    let (state, _dir) = state().await;
    let mut bob = TestSession::open(&state, "bob");
    let id = uuid::Uuid::now_v7().to_string();
    bob.read(&state, &[json!({"type": "MSG_DELIVERED", "messageId": id})])
        .await;
    let frames = bob.frames();
    assert_eq!(frames[0]["code"], "not_found");
    assert_eq!(frames[0]["messageId"], id.as_str());
}
