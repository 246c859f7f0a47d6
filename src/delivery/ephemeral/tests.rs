//! Unit tests of the node's typing and presence state.

use std::collections::HashSet;

use std::sync::atomic::Ordering;

use axum::extract::ws::Utf8Bytes;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::*;
use crate::outbound::{CloseSignal, QueuedBytes};
use crate::protocol::TypingState;

/// Short timers: these tests sleep for real.
fn settings() -> Settings {
    Settings {
        typing_ttl: Duration::from_millis(300),
        typing_throttle: Duration::from_millis(100),
        typing_max_members: 1000,
        presence_grace: Duration::from_millis(5000),
        presence_ttl: Duration::from_millis(600),
    }
}

async fn advance(by: Duration) {
    tokio::time::sleep(by).await;
}

fn user(id: &str) -> UserId {
    UserId::parse(id).unwrap()
}

fn watcher(id: &str) -> (SessionHandle, mpsc::Receiver<Utf8Bytes>) {
    let (tx, rx) = mpsc::channel(64);
    let handle = SessionHandle::new(
        uuid::Uuid::now_v7().to_string().into(),
        user(id),
        tx,
        Arc::new(QueuedBytes::new(usize::MAX)),
        Arc::new(CloseSignal::default()),
    );
    (handle, rx)
}

fn frames(rx: &mut mpsc::Receiver<Utf8Bytes>) -> Vec<serde_json::Value> {
    std::iter::from_fn(|| rx.try_recv().ok())
        .map(|t| serde_json::from_str(t.as_str()).unwrap())
        .collect()
}

/// `checks` as (watching user, watched users), each list sorted.
fn by_user(checks: Vec<SharingCheck>) -> Vec<(String, Vec<String>)> {
    let mut by_user: Vec<(String, Vec<String>)> = checks
        .into_iter()
        .map(|c| {
            let mut users: Vec<String> = c.users.iter().map(|u| u.as_str().to_owned()).collect();
            users.sort();
            (c.session.user_id.as_str().to_owned(), users)
        })
        .collect();
    by_user.sort();
    by_user
}

#[tokio::test]
async fn typing_is_throttled_and_stopped_once() {
    let e = Ephemeral::new(settings());
    let (alice, room) = (user("alice"), ChannelId::parse("room").unwrap());
    let members: Arc<[UserId]> = Arc::from([user("alice"), user("bob")]);
    assert!(matches!(
        e.typing(&alice, &room, true, &members),
        TypingDecision::Forward(TypingState::Start, Some(_))
    ));
    assert_eq!(
        e.typing(&alice, &room, true, &members),
        TypingDecision::Drop,
        "throttled"
    );
    advance(Duration::from_millis(110)).await;
    assert!(matches!(
        e.typing(&alice, &room, true, &members),
        TypingDecision::Forward(TypingState::Start, _)
    ));
    assert_eq!(
        e.typing(&alice, &room, false, &members),
        TypingDecision::Forward(TypingState::Stop, None)
    );
    assert_eq!(
        e.typing(&alice, &room, false, &members),
        TypingDecision::Drop,
        "one stop"
    );
    assert!(e.typing_ends_with_message(&alice, &room).is_none(), "nothing to stop");
    advance(Duration::from_millis(110)).await;
    e.typing(&alice, &room, true, &members);
    assert_eq!(e.typing_ends_with_message(&alice, &room).as_deref(), Some(&members[..]));
    advance(Duration::from_millis(350)).await;
    e.expire(Instant::now());
    assert_eq!(e.typing_entries.load(Ordering::Acquire), 0, "swept");
}

#[tokio::test]
async fn a_start_right_after_a_message_is_not_throttled() {
    // A throttle no test run outlasts.
    let e = Ephemeral::new(Settings {
        typing_throttle: Duration::from_secs(60),
        ..settings()
    });
    let (alice, room) = (user("alice"), ChannelId::parse("room").unwrap());
    let members: Arc<[UserId]> = Arc::from([user("alice"), user("bob")]);
    assert!(matches!(
        e.typing(&alice, &room, true, &members),
        TypingDecision::Forward(TypingState::Start, _)
    ));
    assert_eq!(e.typing_ends_with_message(&alice, &room).as_deref(), Some(&members[..]));
    // Typing the next message within the throttle: shown at once.
    assert!(matches!(
        e.typing(&alice, &room, true, &members),
        TypingDecision::Forward(TypingState::Start, _)
    ));
    assert_eq!(
        e.typing(&alice, &room, true, &members),
        TypingDecision::Drop,
        "throttled again"
    );
}

#[tokio::test]
async fn a_typer_whose_last_session_closes_is_stopped() {
    let e = Ephemeral::new(settings());
    let (alice, room) = (user("alice"), ChannelId::parse("room").unwrap());
    let members: Arc<[UserId]> = Arc::from([user("alice"), user("bob")]);
    let (s1, _) = watcher("alice");
    let (s2, _) = watcher("alice");
    e.session_opened(&alice);
    e.session_opened(&alice);
    e.typing(&alice, &room, true, &members);
    assert!(e.session_closed(&alice, &s1.id).typing_stops.is_empty(), "one left");
    let closed = e.session_closed(&alice, &s2.id);
    assert_eq!(closed.typing_stops.len(), 1);
    assert!(closed.grace.is_some());
}

#[tokio::test]
async fn presence_goes_offline_after_the_grace_and_a_reconnect_does_not_flap() {
    let e = Ephemeral::new(settings());
    let (bob, mut rx) = watcher("bob");
    let alice = user("alice");
    let visible: HashSet<UserId> = [alice.clone()].into();
    e.subscribe(&bob, &[alice.clone(), user("eve")], &visible, &[(alice.clone(), 5)]);
    let snapshot = frames(&mut rx);
    assert_eq!(snapshot[0]["status"], "offline");
    assert_eq!(snapshot[0]["lastSeenAt"], 5);
    assert_eq!(snapshot[1]["userId"], "eve");
    assert!(snapshot[1].get("lastSeenAt").is_none());

    let (a1, _) = watcher("alice");
    assert!(e.session_opened(&alice));
    assert_eq!(frames(&mut rx)[0]["status"], "online");
    let gen = e.session_closed(&alice, &a1.id).grace.unwrap();
    assert!(frames(&mut rx).is_empty(), "no offline during the grace");
    // A reconnect within the grace: the old period is void, and the
    // other nodes are told the user has a session again.
    assert!(e.session_opened(&alice), "announced: a session again");
    let (a2, _) = watcher("alice");
    assert!(!e.session_opened(&alice), "a second session changes nothing");
    e.session_closed(&alice, &a2.id);
    assert_eq!(e.grace_over(&alice, gen), None);
    assert!(frames(&mut rx).is_empty(), "no flap");
    let gen = e.session_closed(&alice, &a1.id).grace.unwrap();
    let seen = e.grace_over(&alice, gen).expect("released");
    let offline = frames(&mut rx);
    assert_eq!(offline.len(), 1);
    assert_eq!(offline[0]["status"], "offline");
    assert_eq!(offline[0]["lastSeenAt"], seen);
    assert_eq!(e.take_pending_last_seen(), vec![(alice.clone(), seen)]);
}

#[tokio::test]
async fn another_nodes_users_expire_without_heartbeats() {
    let e = Ephemeral::new(settings());
    let (bob, mut rx) = watcher("bob");
    let alice = user("alice");
    e.subscribe(&bob, std::slice::from_ref(&alice), &[alice.clone()].into(), &[]);
    frames(&mut rx);
    let other: NodeId = "other".into();
    e.remote_held(&other, std::slice::from_ref(&alice));
    assert_eq!(frames(&mut rx)[0]["status"], "online");
    advance(Duration::from_millis(200)).await;
    e.remote_held(&other, std::slice::from_ref(&alice));
    advance(Duration::from_millis(200)).await;
    e.expire(Instant::now());
    assert!(frames(&mut rx).is_empty(), "refreshed by the heartbeat");
    advance(settings().remote_lifetime()).await;
    e.expire(Instant::now());
    let offline = frames(&mut rx);
    assert_eq!(offline[0]["status"], "offline");
    assert!(offline[0]["lastSeenAt"].is_i64());
    // Our own heartbeats are not another node's.
    e.remote_held(e.node(), std::slice::from_ref(&alice));
    assert!(frames(&mut rx).is_empty());
}

#[tokio::test]
async fn a_user_in_its_grace_on_another_node_is_online_but_has_no_session() {
    let e = Ephemeral::new(settings());
    let (bob, mut rx) = watcher("bob");
    let alice = user("alice");
    e.subscribe(&bob, std::slice::from_ref(&alice), &[alice.clone()].into(), &[]);
    frames(&mut rx);
    let other: NodeId = "other".into();
    e.remote_held(&other, std::slice::from_ref(&alice));
    assert_eq!(frames(&mut rx)[0]["status"], "online");
    assert!(
        e.offline_among(std::slice::from_ref(&alice)).is_empty(),
        "a session there"
    );
    e.remote_idle(&other, std::slice::from_ref(&alice));
    assert!(frames(&mut rx).is_empty(), "no flap: still online in the grace");
    assert_eq!(
        e.offline_among(std::slice::from_ref(&alice)),
        vec![alice.clone()],
        "no session"
    );
    e.remote_held(&other, std::slice::from_ref(&alice));
    assert!(
        e.offline_among(std::slice::from_ref(&alice)).is_empty(),
        "a session again"
    );
    assert!(frames(&mut rx).is_empty());
}

/// What [`Ephemeral::sharing_may_have_ended`] notes for a user: the
/// sessions watching it (for it) and its own sessions (for all they
/// watch), one check per session, never the session's own user.
#[tokio::test]
async fn sharing_checks_cover_the_watchers_and_the_users_own_sessions() {
    let e = Ephemeral::new(settings());
    let (alice, mut alice_rx) = watcher("alice");
    let (bob, _bob_rx) = watcher("bob");
    let (carol, _carol_rx) = watcher("carol");
    let all: HashSet<UserId> = ["alice", "bob", "carol", "dave"].into_iter().map(user).collect();
    e.subscribe(&alice, &[user("bob"), user("alice")], &all, &[]);
    e.subscribe(&bob, &[user("alice"), user("dave")], &all, &[]);
    e.subscribe(&carol, &[user("dave")], &all, &[]);
    frames(&mut alice_rx);
    e.sharing_may_have_ended(&[user("bob")]);
    let checks = by_user(e.take_sharing_checks());
    assert_eq!(
        checks,
        vec![
            ("alice".to_owned(), vec!["bob".to_owned()]),
            ("bob".to_owned(), vec!["alice".to_owned(), "dave".to_owned()]),
        ]
    );
    assert!(e.take_sharing_checks().is_empty(), "taken once");
}

/// A check hides what it found unshared (an `offline` frame without
/// `lastSeenAt`, then nothing more of that user), unless the session
/// subscribed again after the check was taken: its new subscription was
/// judged on a read of its own.
#[tokio::test]
async fn a_sharing_check_of_an_older_subscription_hides_nothing() {
    let e = Ephemeral::new(settings());
    let (alice, mut alice_rx) = watcher("alice");
    let all: HashSet<UserId> = ["bob", "carol"].into_iter().map(user).collect();
    e.subscribe(&alice, &[user("bob"), user("carol")], &all, &[]);
    frames(&mut alice_rx);

    e.sharing_may_have_ended(&[user("bob")]);
    let stale = e.take_sharing_checks().pop().unwrap();
    e.subscribe(&alice, &[user("bob"), user("carol")], &all, &[]);
    frames(&mut alice_rx);
    assert_eq!(e.hide_unshared(&stale, &[user("bob")]), 0);
    assert!(frames(&mut alice_rx).is_empty());

    e.sharing_may_have_ended(&[user("bob")]);
    let fresh = e.take_sharing_checks().pop().unwrap();
    assert_eq!(e.hide_unshared(&fresh, &[user("bob")]), 1);
    assert_eq!(
        frames(&mut alice_rx),
        vec![serde_json::json!({"type": "PRESENCE", "userId": "bob", "status": "offline"})]
    );
    // bob's sessions come and go unseen; carol is still reported.
    e.session_opened(&user("bob"));
    e.session_opened(&user("carol"));
    assert_eq!(
        frames(&mut alice_rx),
        vec![serde_json::json!({"type": "PRESENCE", "userId": "carol", "status": "online"})]
    );
}

/// What [`Ephemeral::sharing_may_have_started`] notes for a user: the
/// sessions that requested it hidden (for it) and its own sessions (for
/// what they requested); a taken check holds only the ids hidden then.
#[tokio::test]
async fn start_checks_cover_the_hidden_requests_and_the_users_own_sessions() {
    let e = Ephemeral::new(settings());
    let (alice, mut alice_rx) = watcher("alice");
    let (bob, _bob_rx) = watcher("bob");
    let (carol, _carol_rx) = watcher("carol");
    let shared: HashSet<UserId> = ["dave"].into_iter().map(user).collect();
    e.subscribe(&alice, &[user("bob"), user("dave")], &shared, &[]);
    e.subscribe(&bob, &[user("alice"), user("dave"), user("eve")], &shared, &[]);
    e.subscribe(&carol, &[user("dave")], &shared, &[]);
    frames(&mut alice_rx);
    e.sharing_may_have_started(&[user("bob")]);
    let checks = by_user(e.take_start_checks());
    assert_eq!(
        checks,
        vec![
            ("alice".to_owned(), vec!["bob".to_owned()]),
            // dave is shown to bob already: not judged again.
            ("bob".to_owned(), vec!["alice".to_owned(), "eve".to_owned()]),
        ]
    );
    assert!(e.take_start_checks().is_empty(), "taken once");
    assert!(e.take_sharing_checks().is_empty(), "no ended check");
}

/// A started check shows what the read found visible (its current status,
/// `lastSeenAt` as a snapshot has it, then every change), unless the
/// session subscribed again after the check was taken; a user hidden by an
/// ended check can be shown again by a later start.
#[tokio::test]
async fn a_start_check_shows_hidden_users_once_and_respects_generations() {
    let e = Ephemeral::new(settings());
    let (alice, mut alice_rx) = watcher("alice");
    let none = HashSet::new();
    e.subscribe(&alice, &[user("bob"), user("carol")], &none, &[]);
    frames(&mut alice_rx);
    e.session_opened(&user("bob"));
    assert!(frames(&mut alice_rx).is_empty(), "hidden: nothing");

    e.sharing_may_have_started(&[user("bob")]);
    let stale = e.take_start_checks().pop().unwrap();
    e.subscribe(&alice, &[user("bob"), user("carol")], &none, &[]);
    frames(&mut alice_rx);
    assert_eq!(e.show_shared(&stale, &[user("bob")], &[]), 0);
    assert!(frames(&mut alice_rx).is_empty());

    e.sharing_may_have_started(&[user("bob"), user("carol")]);
    let fresh = e.take_start_checks().pop().unwrap();
    // carol is offline with a stored lastSeenAt; only bob and carol are in the check.
    let shown = [user("bob"), user("carol"), user("dave")];
    assert_eq!(e.show_shared(&fresh, &shown, &[(user("carol"), 42)]), 2);
    assert_eq!(e.show_shared(&fresh, &shown, &[]), 0, "shown once");
    let mut got = frames(&mut alice_rx);
    got.sort_by(|a, b| a["userId"].as_str().cmp(&b["userId"].as_str()));
    assert_eq!(
        got,
        vec![
            serde_json::json!({"type": "PRESENCE", "userId": "bob", "status": "online"}),
            serde_json::json!({"type": "PRESENCE", "userId": "carol", "status": "offline", "lastSeenAt": 42}),
        ]
    );
    e.session_opened(&user("carol"));
    assert_eq!(frames(&mut alice_rx)[0]["status"], "online", "then every change");

    // Hidden by an ended check, shown again by a later start.
    e.sharing_may_have_ended(&[user("bob")]);
    let ended = e.take_sharing_checks().pop().unwrap();
    assert_eq!(e.hide_unshared(&ended, &[user("bob")]), 1);
    frames(&mut alice_rx);
    e.sharing_may_have_started(&[user("bob")]);
    let again = e.take_start_checks().pop().unwrap();
    assert_eq!(again.users, vec![user("bob")]);
    assert_eq!(e.show_shared(&again, &[user("bob")], &[]), 1);
    assert_eq!(frames(&mut alice_rx)[0]["status"], "online");
}

/// Nothing of a subscription is left once its session closed or it was
/// replaced by an empty one: shown and hidden ids, their indexes, the
/// generations and the checks noted for it (no leak per session).
#[tokio::test]
async fn no_subscription_state_is_left_after_the_sessions_close() {
    let e = Ephemeral::new(settings());
    let (alice, _alice_rx) = watcher("alice");
    let (bob, _bob_rx) = watcher("bob");
    let shared: HashSet<UserId> = ["bob", "alice"].into_iter().map(user).collect();
    e.session_opened(&user("alice"));
    e.session_opened(&user("bob"));
    e.subscribe(&alice, &[user("bob"), user("carol"), user("alice")], &shared, &[]);
    e.subscribe(&bob, &[user("alice"), user("dave")], &shared, &[]);
    e.hide_blocker(&user("bob"), &user("alice"));
    e.sharing_may_have_ended(&[user("bob")]);
    e.sharing_may_have_started(&[user("carol"), user("dave")]);
    assert!(!e.lock().no_subscriptions());
    e.subscribe(&bob, &[], &shared, &[]);
    e.session_closed(&user("alice"), &alice.id);
    e.session_closed(&user("bob"), &bob.id);
    assert!(e.lock().no_subscriptions(), "{:?}", *e.lock());
}
