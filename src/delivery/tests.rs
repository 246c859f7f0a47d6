//! Unit tests of local delivery: how frames reach the hub's sessions, and
//! what a full or slow queue does.

use tokio::sync::mpsc;

use super::*;
use crate::close_code;
use crate::ids::ClientMsgId;
use crate::outbound::{CloseSignal, QueuedBytes, SessionHandle, WatermarkKey};

struct Session {
    handle: SessionHandle,
    rx: mpsc::Receiver<Utf8Bytes>,
    close: Arc<CloseSignal>,
}

fn session(hub: &Hub, user: &str, n: usize) -> Session {
    let (tx, rx) = mpsc::channel(n);
    let close = Arc::new(CloseSignal::default());
    let handle = SessionHandle::new(
        uuid::Uuid::now_v7().to_string().into(),
        UserId::parse(user).unwrap(),
        tx,
        Arc::new(QueuedBytes::new(usize::MAX)),
        close.clone(),
    );
    hub.register(handle.clone());
    Session { handle, rx, close }
}

fn message() -> Entry {
    Entry {
        message_id: uuid::Uuid::now_v7(),
        channel_id: ChannelId::parse("room").unwrap(),
        sender_id: UserId::parse("alice").unwrap(),
        client_msg_id: ClientMsgId::parse("c1").unwrap(),
        by_admin: false,
        via_http: false,
        seq: 1,
        body: "hello".into(),
        ts: 1,
        kind: crate::store::EntryKind::Message,
        target_id: None,
        emoji: None,
        add: None,
        edited_body: None,
        edited_at: None,
        deleted: false,
        expired: false,
        noop: false,
        reactions: Vec::new(),
        reply_to: None,
        thread_id: None,
        reply_preview: None,
        thread: None,
        mentions: Vec::new(),
        mention_all: false,
        mentions_asked: None,
        attachments: Vec::new(),
    }
}

fn local() -> (Arc<Hub>, Delivery) {
    let hub = Arc::new(Hub::default());
    (hub.clone(), Delivery::Local(hub))
}

#[test]
fn msg_recv_is_serialised_once_and_shared() {
    let (hub, delivery) = local();
    let mut sender = session(&hub, "alice", 4);
    let mut other = session(&hub, "alice", 4);
    let mut b1 = session(&hub, "bob", 4);
    let mut b2 = session(&hub, "bob", 4);
    let mut eve = session(&hub, "eve", 4);
    let members: Arc<[UserId]> = Arc::from([UserId::parse("alice").unwrap(), UserId::parse("bob").unwrap()]);
    delivery.entry_committed(&message(), &members, Some(&sender.handle.id));
    let frames: Vec<Utf8Bytes> = [&mut other.rx, &mut b1.rx, &mut b2.rx]
        .into_iter()
        .map(|rx| rx.try_recv().unwrap())
        .collect();
    assert!(
        frames
            .iter()
            .all(|f| f.as_str().as_ptr() == frames[0].as_str().as_ptr()),
        "one buffer for all"
    );
    assert!(frames[0].as_str().contains("\"MSG_RECV\""));
    assert!(sender.rx.try_recv().is_err(), "not the sending session");
    assert!(eve.rx.try_recv().is_err(), "never a non-member");
}

#[test]
fn a_receipt_below_one_already_queued_is_dropped() {
    let (hub, delivery) = local();
    let mut alice_session = session(&hub, "alice", 8);
    let key = (ChannelId::parse("room").unwrap(), UserId::parse("bob").unwrap(), true);
    let alice = UserId::parse("alice").unwrap();
    let receipt = |key: &WatermarkKey, seq, text| ReceiptFrame {
        key: key.clone(),
        seq,
        text: Utf8Bytes::from_static(text),
    };
    for (seq, text) in [(5, "r5"), (3, "r3"), (5, "r5-again"), (6, "r6")] {
        delivery.receipt(&alice, &receipt(&key, seq, text), None);
    }
    let other_kind = (key.0.clone(), key.1.clone(), false);
    delivery.receipt(&alice, &receipt(&other_kind, 4, "d4"), None);
    let got: Vec<String> = std::iter::from_fn(|| alice_session.rx.try_recv().ok())
        .map(|t| t.to_string())
        .collect();
    assert_eq!(
        got,
        ["r5", "r6", "d4"],
        "stale and repeated receipts dropped, kinds apart"
    );
}

#[test]
fn channel_removed_reaches_every_session_of_each_member_only() {
    let (hub, delivery) = local();
    let mut a1 = session(&hub, "alice", 4);
    let mut a2 = session(&hub, "alice", 4);
    let mut eve = session(&hub, "eve", 4);
    let room = ChannelId::parse("room").unwrap();
    delivery.channel_removed(&room, &[UserId::parse("alice").unwrap(), UserId::parse("bob").unwrap()]);
    for rx in [&mut a1.rx, &mut a2.rx] {
        assert_eq!(
            rx.try_recv().unwrap().as_str(),
            r#"{"type":"CHANNEL_REMOVED","channelId":"room","reason":"deleted"}"#
        );
    }
    assert!(eve.rx.try_recv().is_err(), "never a non-member");
}

#[test]
fn a_full_queue_closes_the_session_with_1013() {
    let (hub, delivery) = local();
    let sender = session(&hub, "alice", 1);
    let slow = session(&hub, "bob", 1);
    let members: Arc<[UserId]> = Arc::from([UserId::parse("bob").unwrap()]);
    delivery.entry_committed(&message(), &members, Some(&sender.handle.id));
    assert!(!slow.close.is_kicked());
    delivery.entry_committed(&message(), &members, Some(&sender.handle.id));
    assert!(slow.close.is_kicked());
    assert_eq!(slow.close.reason().map(|r| r.code), Some(close_code::TRY_AGAIN_LATER));
}

#[test]
fn a_slow_session_drops_typing_first_and_is_closed_only_for_messages() {
    let (hub, delivery) = local();
    let typer = session(&hub, "alice", 8);
    let slow = session(&hub, "bob", 8);
    let members: Arc<[UserId]> = Arc::from([UserId::parse("alice").unwrap(), UserId::parse("bob").unwrap()]);
    let room = ChannelId::parse("room").unwrap();
    let alice = UserId::parse("alice").unwrap();
    // Four frames (half the queue) go in; past that, typing is dropped.
    for _ in 0..20 {
        delivery.typing(&room, &alice, TypingState::Start, Some(1), &members);
    }
    assert!(!slow.close.is_kicked(), "never closed for a typing frame");
    // Messages still fit, up to the full queue: then 1013.
    for _ in 0..4 {
        delivery.entry_committed(&message(), &members, Some(&typer.handle.id));
    }
    assert!(!slow.close.is_kicked());
    delivery.entry_committed(&message(), &members, Some(&typer.handle.id));
    assert!(slow.close.is_kicked(), "a message that does not fit closes it");
    let mut slow = slow;
    let frames: Vec<String> = std::iter::from_fn(|| slow.rx.try_recv().ok())
        .map(|t| t.to_string())
        .collect();
    assert_eq!(
        frames.iter().filter(|f| f.contains("\"TYPING\"")).count(),
        4,
        "{frames:?}"
    );
    assert_eq!(frames.iter().filter(|f| f.contains("\"MSG_RECV\"")).count(), 4);
    let mut typer = typer;
    assert!(
        std::iter::from_fn(|| typer.rx.try_recv().ok()).all(|f| !f.contains("TYPING")),
        "not to the typer's own sessions"
    );
}

/// A gated session (a WebSocket session's handle) through the hub: channel
/// frames wait for the HELLO, a channel's frames wait for its
/// CHANNEL_ADDED, and none pass after its CHANNEL_REMOVED (§13.3).
#[test]
fn a_gated_session_gets_a_channels_frames_only_between_its_add_and_its_removal() {
    let (hub, delivery) = local();
    let (tx, mut rx) = mpsc::channel(16);
    let handle = SessionHandle::new(
        "s1".into(),
        UserId::parse("bob").unwrap(),
        tx,
        Arc::new(QueuedBytes::new(usize::MAX)),
        Arc::new(CloseSignal::default()),
    )
    .gated();
    hub.register(handle.clone());
    let members: Arc<[UserId]> = Arc::from([UserId::parse("bob").unwrap()]);
    let room = ChannelId::parse("room").unwrap();
    let bob = UserId::parse("bob").unwrap();
    let frame = |text: &'static str| Utf8Bytes::from_static(text);
    let drain = |rx: &mut mpsc::Receiver<Utf8Bytes>| -> Vec<String> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|t| t.to_string())
            .collect()
    };
    // Before the HELLO: held; the HELLO has `room`.
    delivery.entry_committed(&message(), &members, None);
    assert!(drain(&mut rx).is_empty());
    handle.hello([&room]);
    assert_eq!(drain(&mut rx).len(), 1, "released after the HELLO");
    // Removed: nothing more of it (unless it is added again).
    hub.send_to_user(&bob, Some(&room), &frame("removed"), "CHANNEL_REMOVED", None);
    delivery.entry_committed(&message(), &members, None);
    delivery.typing(
        &room,
        &UserId::parse("alice").unwrap(),
        TypingState::Start,
        Some(1),
        &members,
    );
    assert_eq!(drain(&mut rx), ["removed"]);
    // A message before the rejoin's CHANNEL_ADDED follows it.
    hub.send_to_user(&bob, Some(&room), &frame("added"), "CHANNEL_ADDED", None);
    let got = drain(&mut rx);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], "added");
    assert!(got[1].contains("\"MSG_RECV\""));
}
