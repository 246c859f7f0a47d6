//! The client library (`crates/chatd-client`) against the real server: safe
//! retries, reconnects, gap filling, ordered once-only delivery, receipts.

use std::collections::HashMap;
use std::time::Duration;

use chatd_client::admin::AdminClient;
use chatd_client::{Client, ClientConfig, ConnectError, Event, SendError, StartFrom};
use chatd_proto::protocol::{ErrorCode, ReceiptKind, RecvMessage};
use tokio::sync::mpsc;

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(
    pipelined_sends_are_acked_and_every_member_gets_them_once_in_order,
    a_send_in_flight_across_a_server_restart_is_stored_exactly_once,
    a_reconnecting_client_fills_the_gap_from_its_cursor_with_sync,
    receipts_reach_the_sender_and_refusals_are_not_retried,
    rate_limited_sends_are_retried_until_stored_once,
    a_refused_token_fails_connect_without_retrying,
    a_reconnect_storm_completes_without_errors,
    the_members_route_pages_for_the_admin_and_for_a_member,
    a_user_finds_joins_and_leaves_a_public_channel_through_the_client,
    membership_frames_become_typed_events_in_order,
    the_client_creates_channels_with_owners_visibility_and_roles,
);

fn config(app: &TestApp, user: &str) -> ClientConfig {
    let mut config = ClientConfig::new(app.ws_url(), app.token(user));
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(500);
    config
}

fn admin(app: &TestApp) -> AdminClient {
    AdminClient::new(format!("http://{}", app.addr), ADMIN_TOKEN)
}

/// Collects `n` messages of `channel` from the event stream (panics after 20 s).
async fn messages(events: &mut mpsc::Receiver<Event>, channel: &str, n: usize) -> Vec<RecvMessage> {
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while got.len() < n {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| panic!("only {} of {n} messages arrived", got.len()))
            .expect("event stream open");
        if let Event::Message(m) = event {
            if m.channel_id == channel {
                got.push(*m);
            }
        }
    }
    got
}

fn assert_seqs(messages: &[RecvMessage], from: i64, to: i64) {
    let seqs: Vec<i64> = messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (from..=to).collect::<Vec<_>>(), "once each, in seq order");
}

async fn pipelined_sends_are_acked_and_every_member_gets_them_once_in_order(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (alice, mut alice_events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let (_bob, mut bob_events) = Client::connect(config(&app, "bob")).await.expect("bob");
    assert_eq!(alice.user_id(), "alice");

    let mut pending = Vec::new();
    for i in 0..50 {
        pending.push(
            alice
                .submit("room", &format!("k{i}"), format!("m{i}"))
                .await
                .expect("submit"),
        );
    }
    for (i, p) in pending.into_iter().enumerate() {
        let ack = p.await.expect("acked");
        assert_eq!(ack.seq, i as i64 + 1, "pipelined sends keep their order");
        assert!(!ack.duplicate);
        assert_eq!(ack.attempts, 1);
    }
    let got = messages(&mut bob_events, "room", 50).await;
    assert_seqs(&got, 1, 50);
    assert_eq!(got[7].body, "m7");
    assert_eq!(got[7].sender_id, "alice");
    // The sender's own stream holds its messages too, built from the ACKs.
    let own = messages(&mut alice_events, "room", 50).await;
    assert_seqs(&own, 1, 50);
    assert_eq!(own[49].client_msg_id.as_deref(), Some("k49"));
    app.stop().await;
}

async fn a_send_in_flight_across_a_server_restart_is_stored_exactly_once(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (alice, mut events) = Client::connect(config(&app, "alice")).await.expect("alice");
    // Sends keep being submitted while the server goes down and comes back.
    let sender = alice.clone();
    let sending = tokio::spawn(async move {
        let mut pending = Vec::new();
        for i in 0..300 {
            pending.push(
                sender
                    .submit("room", &format!("k{i}"), format!("m{i}"))
                    .await
                    .expect("submit"),
            );
            if i % 10 == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        let mut acks = Vec::new();
        for p in pending {
            acks.push(p.await.expect("every send ends ACKed"));
        }
        acks
    });
    tokio::time::sleep(Duration::from_millis(60)).await;
    let app = app.restart(|_| {}).await;
    let acks = tokio::time::timeout(Duration::from_secs(60), sending)
        .await
        .expect("sends finish")
        .expect("task");
    let mut disconnected = false;
    while let Ok(event) = events.try_recv() {
        disconnected |= matches!(event, Event::Disconnected { .. });
    }
    assert!(
        disconnected,
        "the restart was seen by the client (else this test proves nothing)"
    );
    // Every ACK names a distinct seq; history holds each key exactly once.
    let history = admin(&app).history("room").await.expect("history");
    assert_eq!(history.len(), 300, "each message stored once");
    let by_key: HashMap<&str, i64> = history
        .iter()
        .map(|m| (m.client_msg_id.as_deref().expect("a frame's key"), m.seq))
        .collect();
    assert_eq!(by_key.len(), 300);
    for ack in &acks {
        assert_eq!(
            by_key.get(ack.client_msg_id.as_str()),
            Some(&ack.seq),
            "ACK matches the stored row"
        );
    }
    assert_seqs(&history, 1, 300);
    app.stop().await;
}

async fn a_reconnecting_client_fills_the_gap_from_its_cursor_with_sync(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for i in 1..=620 {
        alice.send_msg("room", &format!("k{i}"), &format!("m{i}")).await;
    }
    for _ in 1..=620 {
        alice.recv_type("MSG_ACK").await;
    }
    // Bob had everything up to 3: he gets 4..=620 (two SYNC pages), once each.
    let mut resumed = config(&app, "bob");
    resumed.resume = vec![("room".into(), 3)];
    let (_bob, mut events) = Client::connect(resumed).await.expect("bob");
    let got = messages(&mut events, "room", 617).await;
    assert_seqs(&got, 4, 620);

    // A new device that wants the backlog starts at seq 1.
    let mut fresh = config(&app, "bob");
    fresh.start_from = StartFrom::Beginning;
    let (_bob2, mut events) = Client::connect(fresh).await.expect("bob2");
    let got = messages(&mut events, "room", 620).await;
    assert_seqs(&got, 1, 620);

    // One that does not starts after HELLO's lastSeq and sees only new messages.
    let (_bob3, mut events) = Client::connect(config(&app, "bob")).await.expect("bob3");
    alice.send_and_ack("room", "k621", "m621").await;
    let got = messages(&mut events, "room", 1).await;
    assert_eq!(got[0].seq, 621);
    app.stop().await;
}

async fn receipts_reach_the_sender_and_refusals_are_not_retried(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("secret", &["carol"]).await;
    let (alice, mut alice_events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let (bob, mut bob_events) = Client::connect(config(&app, "bob")).await.expect("bob");
    let ack = alice.send("room", "read me").await.expect("ack");
    let got = messages(&mut bob_events, "room", 1).await;
    bob.mark_read(got[0].message_id).await;
    let receipt = loop {
        match tokio::time::timeout(Duration::from_secs(10), alice_events.recv()).await {
            Ok(Some(Event::Receipt { kind, seq, user_id, .. })) => break (kind, seq, user_id),
            Ok(Some(_)) => continue,
            other => panic!("no receipt: {other:?}"),
        }
    };
    assert_eq!(receipt, (ReceiptKind::Read, ack.seq, "bob".to_owned()));

    let refused = alice.send("secret", "let me in").await;
    assert!(
        matches!(
            &refused,
            Err(SendError::Refused {
                code: ErrorCode::Forbidden,
                ..
            })
        ),
        "{refused:?}"
    );
    let invalid = alice.submit("room", "bad key", "x").await;
    assert!(matches!(
        invalid,
        Err(SendError::Invalid {
            field: "clientMsgId",
            ..
        })
    ));
    // The same key with another body is a conflict, not a retry.
    alice
        .submit("room", "k-same", "one")
        .await
        .expect("submit")
        .await
        .expect("ack");
    let conflict = alice.submit("room", "k-same", "two").await.expect("submit").await;
    assert!(matches!(
        conflict,
        Err(SendError::Refused {
            code: ErrorCode::IdempotencyConflict,
            ..
        })
    ));
    // The same key and body again is the original ACK, flagged duplicate.
    let again = alice
        .submit("room", "k-same", "one")
        .await
        .expect("submit")
        .await
        .expect("ack");
    assert!(again.duplicate);
    assert_eq!(admin(&app).channel("room").await.expect("channel").last_seq, 2);
    app.stop().await;
}

async fn rate_limited_sends_are_retried_until_stored_once(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 50;
        c.rate_limit_burst = 5;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let (alice, _events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let mut pending = Vec::new();
    for i in 0..40 {
        pending.push(alice.submit("room", &format!("k{i}"), "x").await.expect("submit"));
    }
    let mut retried = 0;
    for p in pending {
        let ack = tokio::time::timeout(Duration::from_secs(30), p)
            .await
            .expect("in time")
            .expect("acked");
        retried += usize::from(ack.attempts > 1);
    }
    assert!(retried > 0, "the limit was met, so some sends were retried");
    let history = admin(&app).history("room").await.expect("history");
    assert_eq!(history.len(), 40, "each stored once");
    app.stop().await;
}

async fn a_refused_token_fails_connect_without_retrying(backend: Backend) {
    let app = spawn_app(backend).await;
    let config = ClientConfig::new(app.ws_url(), "not-a-jwt");
    let started = std::time::Instant::now();
    let result = Client::connect(config).await;
    assert!(matches!(result, Err(ConnectError::Unauthorized)), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "401 is final, not retried");
    app.stop().await;
}

async fn a_reconnect_storm_completes_without_errors(backend: Backend) {
    const CLIENTS: usize = 60;
    let app = spawn_app(backend).await;
    let users: Vec<String> = (0..CLIENTS).map(|i| format!("u{i}")).collect();
    let members: Vec<&str> = users.iter().map(String::as_str).collect();
    app.create_channel("room", &members).await;
    let mut clients = Vec::new();
    for user in &users {
        let mut c = config(&app, user);
        c.start_from = StartFrom::Beginning;
        clients.push(Client::connect(c).await.expect("connect"));
    }
    for i in 0..100 {
        clients[i % CLIENTS]
            .0
            .send("room", format!("before {i}"))
            .await
            .expect("ack");
    }
    // Every client loses its connection at the same moment, reconnects at
    // once (with jittered backoff) and syncs what it missed.
    let app = app.restart(|_| {}).await;
    for i in 0..100 {
        clients[(i * 7) % CLIENTS]
            .0
            .send("room", format!("after {i}"))
            .await
            .expect("ack");
    }
    for (client, events) in &mut clients {
        let mut got = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let mut sessions = 0;
        while got.len() < 200 {
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Some(Event::Message(m))) => got.push(*m),
                Ok(Some(Event::Connected { .. })) => sessions += 1,
                Ok(Some(Event::Error(e))) => panic!("{}: error during the storm: {e:?}", client.user_id()),
                Ok(Some(Event::Stopped { reason })) => panic!("{}: stopped: {reason}", client.user_id()),
                Ok(Some(_)) => {}
                _ => panic!("{}: only {} of 200 messages", client.user_id(), got.len()),
            }
        }
        assert!(sessions >= 2, "{} reconnected after the restart", client.user_id());
        assert_seqs(&got, 1, 200);
    }
    app.stop().await;
}

async fn the_members_route_pages_for_the_admin_and_for_a_member(backend: Backend) {
    let app = spawn_app(backend).await;
    let users: Vec<String> = (0..7).map(|n| format!("u{n}")).collect();
    admin(&app).create_channel(Some("room"), &users).await.expect("channel");
    let member = AdminClient::new(format!("http://{}", app.addr), app.token("u3"));

    let first = member.members_page("room", None, 3).await.expect("page");
    let ids: Vec<&str> = first.members.iter().map(|m| m.user_id.as_str()).collect();
    assert_eq!((ids, first.has_more, first.at_seq), (vec!["u0", "u1", "u2"], true, 0));
    assert!(first
        .members
        .iter()
        .all(|m| m.role == chatd_proto::protocol::Role::Member));
    let next = member.members_page("room", Some("u2"), 3).await.expect("page");
    assert_eq!(next.members[0].user_id, "u3");

    let (all, at_seq) = admin(&app).all_members("room").await.expect("all");
    let ids: Vec<String> = all.into_iter().map(|m| m.user_id).collect();
    assert_eq!((ids, at_seq), (users, 0));

    let outsider = AdminClient::new(format!("http://{}", app.addr), app.token("eve"));
    match outsider.members_page("room", None, 10).await {
        Err(chatd_client::admin::AdminError::Status { status: 403, .. }) => {}
        other => panic!("expected 403, got {other:?}"),
    }
    app.stop().await;
}

async fn a_user_finds_joins_and_leaves_a_public_channel_through_the_client(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = admin(&app);
    let made = admin
        .create_channel(Some("town"), &["alice".to_owned()])
        .await
        .expect("channel");
    assert_eq!(made.visibility, chatd_proto::protocol::Visibility::Private);
    // Only a public channel is listed and may be joined.
    let bob = AdminClient::new(format!("http://{}", app.addr), app.token("bob"));
    assert_eq!(bob.directory_page(None, None, 10).await.expect("page").channels, []);
    match bob.join("town").await {
        Err(chatd_client::admin::AdminError::Status { status: 403, .. }) => {}
        other => panic!("expected 403, got {other:?}"),
    }
    let res = app
        .post_channel(serde_json::json!({"channelId": "plaza", "members": ["alice"], "visibility": "public"}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let page = bob.directory_page(Some("PLA"), None, 10).await.expect("page");
    let found: Vec<(&str, i64)> = page
        .channels
        .iter()
        .map(|c| (c.channel_id.as_str(), c.member_count))
        .collect();
    assert_eq!((found, page.has_more), (vec![("plaza", 1)], false));
    bob.join("plaza").await.expect("join");
    let (members, _) = admin.all_members("plaza").await.expect("members");
    assert_eq!(
        members.iter().map(|m| m.user_id.as_str()).collect::<Vec<_>>(),
        ["alice", "bob"]
    );
    bob.leave("plaza").await.expect("leave");
    bob.leave("plaza").await.expect("leaving again is a no-op");
    // A direct channel: made once, the same from the other side.
    let (direct, created) = bob.open_direct("alice").await.expect("direct");
    assert!(created);
    assert_eq!(direct.kind, chatd_proto::protocol::ChannelKind::Direct);
    let alice = AdminClient::new(format!("http://{}", app.addr), app.token("alice"));
    let (same, created) = alice.open_direct("bob").await.expect("direct");
    assert_eq!((same.channel_id, created), (direct.channel_id, false));
    let (members, _) = admin.all_members("plaza").await.expect("members");
    assert_eq!(members.len(), 1);
    app.stop().await;
}

/// The next event that is not a connection event (panics after 20 s).
async fn next_event(events: &mut mpsc::Receiver<Event>) -> Event {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
            .await
            .expect("an event within 20 s")
            .expect("event stream open");
        if !matches!(event, Event::Connected { .. } | Event::Receipt { .. }) {
            return event;
        }
    }
}

/// CHANNEL_ADDED, MEMBER and CHANNEL_REMOVED reach a client as typed
/// events: the channel added first (and then tracked: its messages arrive,
/// in order), the member changes with their `afterSeq`, the removal with its
/// reason and nothing of the channel after it.
async fn membership_frames_become_typed_events_in_order(backend: Backend) {
    use chatd_proto::protocol::{MemberOp, RemovedReason, Role};
    let app = spawn_app(backend).await;
    admin(&app)
        .create_channel(Some("room"), &["alice".to_owned()])
        .await
        .expect("channel");
    let (alice, _alice_events) = Client::connect(config(&app, "alice")).await.expect("alice");
    alice.send("room", "before bob").await.expect("send");
    let mut bob_config = config(&app, "bob");
    bob_config.start_from = StartFrom::Beginning;
    let (_bob, mut events) = Client::connect(bob_config).await.expect("bob");
    assert_eq!(app.put_member("room", "bob").await.as_u16(), 204);
    match next_event(&mut events).await {
        Event::ChannelAdded { channel } => {
            assert_eq!(
                (channel.channel_id.as_str(), channel.last_seq, channel.role),
                ("room", 1, Role::Member)
            );
        }
        other => panic!("expected ChannelAdded, got {other:?}"),
    }
    // The join's MEMBER frame, and the earlier message the client reads by
    // SYNC once the channel is added: the two come in either order (the
    // SYNC answer and the membership's fan-out are not ordered), the
    // message (seq 1, at the join's afterSeq) at most once.
    let mut early = Vec::new();
    loop {
        match next_event(&mut events).await {
            Event::Member(member) => {
                assert_eq!(
                    (member.user_id.as_str(), member.op, member.after_seq),
                    ("bob", MemberOp::Join, 1)
                );
                assert_eq!((member.role, member.actor_id), (Some(Role::Member), None));
                break;
            }
            Event::Message(message) if early.is_empty() && message.seq == 1 => early.push(*message),
            other => panic!("expected Member, got {other:?}"),
        }
    }
    // The channel is tracked from the beginning: the earlier message comes
    // by SYNC, then the new one, in order.
    alice.send("room", "after bob").await.expect("send");
    let rest = messages(&mut events, "room", 2 - early.len()).await;
    assert_seqs(&[early, rest].concat(), 1, 2);
    assert_eq!(app.delete_member("room", "bob").await.as_u16(), 204);
    match next_event(&mut events).await {
        Event::Member(member) => assert_eq!((member.op, member.after_seq), (MemberOp::Leave, 2)),
        other => panic!("expected Member, got {other:?}"),
    }
    match next_event(&mut events).await {
        Event::ChannelRemoved { channel_id, reason } => {
            assert_eq!((channel_id.as_str(), reason), ("room", Some(RemovedReason::Removed)));
        }
        other => panic!("expected ChannelRemoved, got {other:?}"),
    }
    alice.send("room", "bob is gone").await.expect("send");
    let quiet = tokio::time::timeout(Duration::from_millis(300), next_event(&mut events)).await;
    assert!(quiet.is_err(), "nothing after the removal: {quiet:?}");
    app.stop().await;
}

/// Version 1.2's creation and roles through the Rust client: the admin's
/// `create` with owners and visibility, a user's `create_mine` (its owner),
/// `set_member_role` by an owner, and a moderator's refusal to make an owner.
async fn the_client_creates_channels_with_owners_visibility_and_roles(backend: Backend) {
    use chatd_client::admin::{AdminError, NewChannel};
    use chatd_proto::protocol::{Role, Visibility};
    let app = spawn_app(backend).await;
    let as_user = |user: &str| AdminClient::new(format!("http://{}", app.addr), app.token(user));
    let made = admin(&app)
        .create(&NewChannel {
            channel_id: Some("club".to_owned()),
            members: vec!["mo".to_owned()],
            owners: vec!["olive".to_owned()],
            visibility: Some(Visibility::Public),
            ..NewChannel::default()
        })
        .await
        .expect("create");
    assert_eq!((made.visibility, made.member_count), (Visibility::Public, 2));
    let olive = as_user("olive");
    olive
        .set_member_role("club", "mo", Role::Moderator)
        .await
        .expect("promote");
    let (members, _) = olive.all_members("club").await.expect("members");
    let roles: Vec<(&str, Role)> = members.iter().map(|m| (m.user_id.as_str(), m.role)).collect();
    assert_eq!(roles, [("mo", Role::Moderator), ("olive", Role::Owner)]);
    match as_user("mo").set_member_role("club", "newbie", Role::Owner).await {
        Err(AdminError::Status { status: 403, .. }) => {}
        other => panic!("a moderator makes no owner: {other:?}"),
    }
    let mine = as_user("carol")
        .create_mine(&NewChannel {
            channel_id: Some("carols".to_owned()),
            members: vec!["dave".to_owned()],
            name: Some("Carol's".to_owned()),
            ..NewChannel::default()
        })
        .await
        .expect("create mine");
    assert_eq!(
        (mine.name.as_deref(), mine.visibility),
        (Some("Carol's"), Visibility::Private)
    );
    let (members, _) = admin(&app).all_members("carols").await.expect("members");
    let roles: Vec<(&str, Role)> = members.iter().map(|m| (m.user_id.as_str(), m.role)).collect();
    assert_eq!(roles, [("carol", Role::Owner), ("dave", Role::Member)]);
    app.stop().await;
}
