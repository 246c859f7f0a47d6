//! The sequencer inside a channel's task, fed directly (no NATS): a later
//! seq that arrives first waits for the earlier one; a gap that does not
//! close is filled from a real database after the wait.

use super::*;
use crate::ids::ClientMsgId;
use crate::outbound::{CloseSignal, SessionHandle};
use crate::store::{EntryOutcome, NewEntry, StoreOptions};

struct Fixture {
    store: Store,
    hub: Arc<Hub>,
    bob: mpsc::Receiver<Utf8Bytes>,
    stored: Vec<Entry>,
    members: Arc<[UserId]>,
    _dir: tempfile::TempDir,
}

async fn fixture(messages: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&StoreOptions {
        url: format!("sqlite://{}", dir.path().join("t.db").display()),
        max_connections: 2,
        timeout: Duration::from_secs(5),
    })
    .await
    .unwrap();
    store.migrate().await.unwrap();
    let room = ChannelId::parse("room").unwrap();
    let members = vec![UserId::parse("alice").unwrap(), UserId::parse("bob").unwrap()];
    store.create_channel(&room, &members, 1).await.unwrap();
    let sends: Vec<NewEntry> = (0..messages)
        .map(|n| NewEntry {
            sender_id: members[0].clone(),
            channel_id: room.clone(),
            client_msg_id: ClientMsgId::parse(&format!("m{n}")).unwrap(),
            body: format!("body {n}"),
            change: crate::store::Change::Message,
            mentions: Default::default(),
            origin: Default::default(),
            attachments: Vec::new(),
        })
        .collect();
    let batch = store.write_batch(&sends, 10).await.unwrap();
    let stored = batch
        .outcomes
        .into_iter()
        .map(|o| match o {
            EntryOutcome::Stored(m) => m,
            other => panic!("{other:?}"),
        })
        .collect();
    let hub = Arc::new(Hub::default());
    let bob = session(&hub, "bob-1", &members[1]);
    Fixture {
        store,
        hub,
        bob,
        stored,
        members: members.into(),
        _dir: dir,
    }
}

fn envelope(message: &Entry, members: &[UserId]) -> Bytes {
    let envelope = ChannelEnvelope::message(
        crate::view::recv(message),
        Some(members.iter().map(|m| m.as_str().to_owned()).collect()),
    );
    Bytes::from(serde_json::to_vec(&envelope).unwrap())
}

fn seq_of(frame: &Utf8Bytes) -> i64 {
    let value: serde_json::Value = serde_json::from_str(frame.as_str()).unwrap();
    assert_eq!(value["type"], "MSG_RECV");
    value["seq"].as_i64().unwrap()
}

async fn next_seq(rx: &mut mpsc::Receiver<Utf8Bytes>) -> i64 {
    let frame = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a MSG_RECV in time")
        .expect("queue open");
    seq_of(&frame)
}

/// A catch-up hands what it reads back only to the members who joined
/// before each message, never to the current members as such: a member
/// who left and came back must not get what was stored while it was
/// away.
#[tokio::test]
async fn a_catch_up_skips_members_who_joined_after_the_message() {
    let mut f = fixture(2).await;
    let room = ChannelId::parse("room").unwrap();
    // Bob leaves and comes back when the last seq is 2; seq 3 follows.
    f.store.set_member(&room, &f.members[1], false, 20).await.unwrap();
    assert_eq!(f.store.set_member(&room, &f.members[1], true, 30).await.unwrap(), 2);
    let third = NewEntry {
        sender_id: f.members[0].clone(),
        channel_id: room.clone(),
        client_msg_id: ClientMsgId::parse("m-after").unwrap(),
        body: "after bob came back".into(),
        change: crate::store::Change::Message,
        mentions: Default::default(),
        origin: Default::default(),
        attachments: Vec::new(),
    };
    f.store.write_batch(&[third], 40).await.unwrap();
    // A catch-up from the channel's start (a NATS reconnect, or a floor
    // from a stale event).
    let (_cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let mut core = ChannelCore::new(room, f.store.clone(), f.hub.clone(), Duration::from_secs(30), 1, cmd_rx);
    core.catch_up().await;
    assert_eq!(next_seq(&mut f.bob).await, 3, "nothing from before bob came back");
    assert!(f.bob.try_recv().is_err());
}

/// The handoff of this node's commit of `f.stored[n]`, sent by session
/// `except`.
fn local(f: &Fixture, n: usize, except: Option<&str>) -> ChannelCmd {
    ChannelCmd::Local(Handoff::stored(&f.stored[n], f.members.clone(), except.map(Into::into)))
}

/// Registers a session `id` of `user` and returns its queue.
fn session(hub: &Hub, id: &str, user: &UserId) -> mpsc::Receiver<Utf8Bytes> {
    let (tx, rx) = mpsc::channel(64);
    hub.register(SessionHandle::new(
        id.into(),
        user.clone(),
        tx,
        Arc::new(crate::outbound::QueuedBytes::new(usize::MAX)),
        Arc::new(CloseSignal::default()),
    ));
    rx
}

/// A read from the database (here a catch-up after a NATS reconnect) that
/// finds a message this node committed while its handoff still waits in
/// the task's queue hands out the queued handoff: the session whose send
/// stored it has the ACK and gets no MSG_RECV; the sender's other session
/// and the other members get it once.
#[tokio::test]
async fn a_read_that_finds_a_queued_local_commit_spares_the_session_that_sent_it() {
    let mut f = fixture(1).await;
    let room = ChannelId::parse("room").unwrap();
    let mut sending = session(&f.hub, "alice-1", &f.members[0]);
    let mut other = session(&f.hub, "alice-2", &f.members[0]);
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    // Committed by alice-1 on this node; its handoff is queued, not taken yet.
    cmd_tx.send(local(&f, 0, Some("alice-1"))).unwrap();
    let mut core = ChannelCore::new(room, f.store.clone(), f.hub.clone(), Duration::from_secs(30), 1, cmd_rx);
    core.catch_up().await;
    let stop = CancellationToken::new();
    let task = tokio::spawn(core.run(futures_util::stream::pending().boxed(), stop.clone()));
    assert_eq!(next_seq(&mut f.bob).await, 1);
    assert_eq!(next_seq(&mut other).await, 1, "the sender's other session gets it");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(sending.try_recv().is_err(), "the sending session has the ACK");
    assert!(f.bob.try_recv().is_err(), "once");
    assert!(other.try_recv().is_err(), "once");
    stop.cancel();
    task.await.unwrap();
}

#[tokio::test]
async fn a_later_seq_is_held_until_the_earlier_one_arrives() {
    let mut f = fixture(3).await;
    let room = ChannelId::parse("room").unwrap();
    // A long wait: the gap must close by the late message, not by a fill.
    let (inbound_tx, inbound_rx) = mpsc::unbounded_channel::<Bytes>();
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let core = ChannelCore::new(room, f.store.clone(), f.hub.clone(), Duration::from_secs(30), 1, cmd_rx);
    let stop = CancellationToken::new();
    let task = tokio::spawn(core.run(tokio_stream_from(inbound_rx), stop.clone()));
    // seq 3 from NATS, then 1 committed locally by alice's session, then 2 from NATS.
    inbound_tx.send(envelope(&f.stored[2], &f.members)).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(f.bob.try_recv().is_err(), "seq 3 is held while 1 and 2 are missing");
    cmd_tx.send(local(&f, 0, Some("alice-1"))).unwrap();
    assert_eq!(next_seq(&mut f.bob).await, 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(f.bob.try_recv().is_err(), "seq 3 still waits for 2");
    inbound_tx.send(envelope(&f.stored[1], &f.members)).unwrap();
    assert_eq!(next_seq(&mut f.bob).await, 2);
    assert_eq!(next_seq(&mut f.bob).await, 3);
    // A copy of an old one is not delivered again.
    inbound_tx.send(envelope(&f.stored[1], &f.members)).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(f.bob.try_recv().is_err(), "seq 2 only once");
    stop.cancel();
    task.await.unwrap();
}

#[tokio::test]
async fn a_gap_that_does_not_close_is_filled_from_the_database_after_the_wait() {
    let mut f = fixture(4).await;
    let room = ChannelId::parse("room").unwrap();
    let wait = Duration::from_millis(300);
    let (inbound_tx, inbound_rx) = mpsc::unbounded_channel::<Bytes>();
    let (_cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let core = ChannelCore::new(room, f.store.clone(), f.hub.clone(), wait, 1, cmd_rx);
    let stop = CancellationToken::new();
    let task = tokio::spawn(core.run(tokio_stream_from(inbound_rx), stop.clone()));
    // Only seq 4 arrives; 1..=3 never come through NATS.
    let started = std::time::Instant::now();
    inbound_tx.send(envelope(&f.stored[3], &f.members)).unwrap();
    let seqs = [
        next_seq(&mut f.bob).await,
        next_seq(&mut f.bob).await,
        next_seq(&mut f.bob).await,
        next_seq(&mut f.bob).await,
    ];
    assert!(
        started.elapsed() >= wait,
        "held for the wait first: {:?}",
        started.elapsed()
    );
    assert_eq!(seqs, [1, 2, 3, 4], "filled from the database, in order");
    stop.cancel();
    task.await.unwrap();
}

/// A TYPING frame of alice's in the channel's order: one from another node
/// that follows seq 1 waits for seq 1 (committed here, or from NATS), and
/// one of this node's queued behind a commit goes out after it.
#[tokio::test]
async fn a_typing_frame_waits_for_the_message_it_follows() {
    let mut f = fixture(2).await;
    let room = ChannelId::parse("room").unwrap();
    let known = Arc::new(AtomicI64::new(0));
    let (inbound_tx, inbound_rx) = mpsc::unbounded_channel::<Bytes>();
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let core = ChannelCore::new(room, f.store.clone(), f.hub.clone(), Duration::from_secs(30), 1, cmd_rx)
        .sharing_known(known.clone());
    let stop = CancellationToken::new();
    let task = tokio::spawn(core.run(tokio_stream_from(inbound_rx), stop.clone()));
    let typing = |state: &str, after: i64| TypingEnvelope {
        typer: "alice".into(),
        text: format!(r#"{{"type":"TYPING","state":"{state}"}}"#),
        members: vec!["alice".into(), "bob".into()],
        after,
    };
    // From another node: the stop of seq 1, before seq 1 arrives.
    let payload = serde_json::to_vec(&ChannelEnvelope::typing(typing("stop", 1))).unwrap();
    inbound_tx.send(Bytes::from(payload)).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(f.bob.try_recv().is_err(), "the stop waits for seq 1");
    inbound_tx.send(envelope(&f.stored[0], &f.members)).unwrap();
    assert_eq!(next_seq(&mut f.bob).await, 1);
    assert_eq!(next_text(&mut f.bob).await, r#"{"type":"TYPING","state":"stop"}"#);
    assert_eq!(known.load(Ordering::Acquire), 1, "the highest seq offered");
    // This node's: a commit, then a start queued behind it that follows it.
    cmd_tx.send(local(&f, 1, None)).unwrap();
    let start = typing("start", 2);
    cmd_tx
        .send(ChannelCmd::Typing(TypingFrame {
            after: start.after,
            typer: f.members[0].clone(),
            text: Utf8Bytes::from(start.text),
            members: f.members.clone(),
        }))
        .unwrap();
    assert_eq!(next_seq(&mut f.bob).await, 2);
    assert_eq!(next_text(&mut f.bob).await, r#"{"type":"TYPING","state":"start"}"#);
    // One that follows what was handed out goes at once.
    let payload = serde_json::to_vec(&ChannelEnvelope::typing(typing("stop", 0))).unwrap();
    inbound_tx.send(Bytes::from(payload)).unwrap();
    assert_eq!(next_text(&mut f.bob).await, r#"{"type":"TYPING","state":"stop"}"#);
    stop.cancel();
    task.await.unwrap();
}

async fn next_text(rx: &mut mpsc::Receiver<Utf8Bytes>) -> String {
    let frame = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a frame in time")
        .expect("queue open");
    frame.to_string()
}

fn tokio_stream_from(mut rx: mpsc::UnboundedReceiver<Bytes>) -> BoxStream<'static, Bytes> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
}
