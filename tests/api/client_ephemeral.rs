//! The client library's typing and presence: `typing(channel, bool)` with
//! client-side throttling and renewal, indicators that lapse at `expiresAt`
//! without a stop, and presence subscriptions kept across reconnects.

use std::time::{Duration, Instant};

use chatd_client::{Client, ClientConfig, Event};
use serde_json::json;
use tokio::sync::mpsc;

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(
    typing_is_throttled_and_renewed_by_the_client,
    typing_on_after_a_send_is_shown_again_at_once,
    an_indicator_lapses_at_expires_at_without_a_stop,
    a_presence_subscription_survives_a_reconnect,
    a_presence_subscription_refused_rate_limited_is_sent_again,
);

fn config(app: &TestApp, user: &str) -> ClientConfig {
    let mut config = ClientConfig::new(app.ws_url(), app.token(user));
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(200);
    config
}

/// The next event that is not a message, connect or receipt.
async fn next_event(events: &mut mpsc::Receiver<Event>) -> Event {
    loop {
        let event = tokio::time::timeout(FRAME_TIMEOUT, events.recv())
            .await
            .expect("an event in time")
            .expect("events open");
        match event {
            Event::Connected { .. } | Event::Message(_) | Event::Receipt { .. } | Event::Disconnected { .. } => {}
            other => return other,
        }
    }
}

async fn typing_is_throttled_and_renewed_by_the_client(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.typing_throttle_ms = 100).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    let mut cfg = config(&app, "alice");
    cfg.typing_renew = Duration::from_millis(400);
    let (alice, _events) = Client::connect(cfg).await.expect("connect");
    let started = Instant::now();
    for _ in 0..20 {
        alice.typing("room", true).await;
    }
    assert_eq!(bob.recv_type("TYPING").await["state"], "start");
    // One start per typing_renew: the next is the renewal.
    let renewal = bob.recv_type("TYPING").await;
    assert_eq!(renewal["state"], "start");
    assert!(
        started.elapsed() >= Duration::from_millis(350),
        "{:?}",
        started.elapsed()
    );
    alice.typing("room", false).await;
    assert_eq!(bob.recv_type("TYPING").await["state"], "stop");
    alice.typing("room", false).await;
    bob.expect_silence(Duration::from_millis(600)).await;
    alice.close().await;
    app.stop().await;
}

/// The application still says the user types after a message is stored
/// (the next message): the server's `stop` for the message is followed at
/// once by a `start`, not after `typing_renew` (3 s by default). Before the
/// fix the client waited for the renewal.
async fn typing_on_after_a_send_is_shown_again_at_once(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    let (alice, _events) = Client::connect(config(&app, "alice")).await.expect("connect");
    alice.typing("room", true).await;
    assert_eq!(bob.recv_type("TYPING").await["state"], "start");
    for n in 1..=2 {
        alice.send("room", format!("message {n}")).await.expect("stored");
        let sent = Instant::now();
        assert_eq!(bob.recv_type("MSG_RECV").await["seq"], n);
        assert_eq!(bob.recv_type("TYPING").await["state"], "stop");
        assert_eq!(bob.recv_type("TYPING").await["state"], "start");
        assert!(
            sent.elapsed() < Duration::from_millis(1500),
            "the start came {:?} after the ACK (the renewal is 3 s)",
            sent.elapsed()
        );
    }
    alice.close().await;
    app.stop().await;
}

async fn an_indicator_lapses_at_expires_at_without_a_stop(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.typing_ttl_ms = 400).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (_bob, mut events) = Client::connect(config(&app, "bob")).await.expect("connect");
    let mut alice = app.connect("alice").await;
    alice
        .send_json(json!({"type": "TYPING", "channelId": "room", "state": "start"}))
        .await;
    let Event::Typing {
        typing: true,
        expires_at: Some(expires_at),
        ref user_id,
        ..
    } = next_event(&mut events).await
    else {
        panic!("expected a typing indicator");
    };
    assert_eq!(user_id, "alice");
    // No stop is ever sent: the client turns it off at expiresAt.
    match next_event(&mut events).await {
        Event::Typing {
            typing: false,
            channel_id,
            user_id,
            ..
        } => assert_eq!((channel_id.as_str(), user_id.as_str()), ("room", "alice")),
        other => panic!("expected the indicator to lapse, got {other:?}"),
    }
    assert!(chatd::ids::now_ms() >= expires_at, "not before expiresAt");
    app.stop().await;
}

async fn a_presence_subscription_survives_a_reconnect(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.presence_grace_ms = 100).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (bob, mut events) = Client::connect(config(&app, "bob")).await.expect("connect");
    bob.subscribe_presence(["alice"]).await;
    assert_eq!(
        next_event(&mut events).await,
        Event::Presence {
            user_id: "alice".into(),
            online: false,
            last_seen_at: None
        }
    );
    let alice = app.connect("alice").await;
    assert!(matches!(
        next_event(&mut events).await,
        Event::Presence { online: true, .. }
    ));
    bob.reconnect().await;
    // The subscription is sent again: a new snapshot.
    assert!(matches!(
        next_event(&mut events).await,
        Event::Presence { online: true, .. }
    ));
    drop(alice);
    match next_event(&mut events).await {
        Event::Presence {
            online: false,
            last_seen_at: Some(_),
            ..
        } => {}
        other => panic!("expected offline, got {other:?}"),
    }
    bob.close().await;
    app.stop().await;
}

/// Over the real frame rate a PRESENCE_SUB is refused `rate_limited` with an
/// ERROR that names nothing: the client sends it again (not before
/// `retryAfterMs`) until its snapshot is complete.
async fn a_presence_subscription_refused_rate_limited_is_sent_again(backend: Backend) {
    // 5 frames/s, burst 25; a PRESENCE_SUB of 100 ids counts as 10 frames
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 5;
        c.rate_limit_burst = 25;
        c.user_rate_limit_per_sec = 0;
    })
    .await;
    // The default test backoff (at most 200 ms): retryAfterMs covers the
    // whole weight, so a resend after it is accepted.
    let (bob, mut events) = Client::connect(config(&app, "bob")).await.expect("connect");
    let ids = |p: &str| (0..100).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
    bob.subscribe_presence(ids("a")).await;
    bob.subscribe_presence(ids("b")).await;
    bob.subscribe_presence(ids("c")).await;
    let wanted: std::collections::HashSet<String> = ids("c").into_iter().collect();
    let mut seen = std::collections::HashSet::new();
    let mut refused_at: Option<(Instant, u64)> = None;
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.len() < wanted.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = tokio::time::timeout(left, events.recv())
            .await
            .unwrap_or_else(|_| panic!("snapshot incomplete: {}/100 of c, refused {refused_at:?}", seen.len()))
            .expect("events open");
        match event {
            Event::Error(e) if e.code == chatd_proto::protocol::ErrorCode::RateLimited => {
                assert!(e.client_msg_id.is_none() && e.channel_id.is_none());
                refused_at.get_or_insert((Instant::now(), e.retry_after_ms.unwrap_or(0)));
            }
            Event::Presence { user_id, online, .. } if wanted.contains(&user_id) => {
                assert!(!online);
                if seen.is_empty() {
                    let (at, ms) = refused_at.expect("refused before the snapshot");
                    assert!(
                        at.elapsed() + Duration::from_millis(50) >= Duration::from_millis(ms),
                        "sent again before retryAfterMs ({ms} ms): {:?}",
                        at.elapsed()
                    );
                }
                seen.insert(user_id);
            }
            _ => {}
        }
    }
    bob.close().await;
    app.stop().await;
}
