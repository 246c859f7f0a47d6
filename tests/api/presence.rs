//! PRESENCE_SUB and PRESENCE (protocol.md section 9): a snapshot right after
//! the subscription, then changes; offline only `presence_grace_ms` after the
//! last session closed (a reconnect inside it does not flap); strangers are
//! always offline with no lastSeenAt; lastSeenAt kept across restarts; bad
//! subscriptions refused with the connection left open; a user who stops
//! sharing a channel with the subscriber is shown offline and reported no
//! more, and one who starts sharing one is shown and reported, without a new
//! subscription (unless it blocks the subscriber).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app_with, Backend, WsClient, ADMIN_TOKEN};

on_both_stores!(
    a_snapshot_follows_the_subscription_then_one_frame_per_change,
    a_reconnect_within_the_grace_does_not_flap,
    strangers_are_always_offline_without_last_seen,
    a_new_subscription_replaces_the_old_and_an_empty_one_ends_it,
    bad_subscriptions_are_refused_and_the_connection_stays_open,
    last_seen_is_kept_across_a_restart,
    a_presence_sub_counts_one_frame_per_ten_ids,
    a_refused_presence_sub_retried_after_retry_after_ms_is_accepted,
    a_flood_of_refused_presence_subs_is_closed_like_any_flood,
    a_subscription_stops_reporting_users_who_no_longer_share_a_channel,
    a_deleted_channel_ends_the_reports_of_the_users_it_alone_shared,
    a_user_who_starts_sharing_a_channel_is_reported_without_a_new_subscription,
    a_blocker_is_not_shown_on_a_new_shared_channel_until_it_unblocks,
);

fn sub(ids: &[&str]) -> Value {
    json!({"type": "PRESENCE_SUB", "userIds": ids})
}

/// `n` user ids that share no channel with anyone (`u0`, `u1`, ...).
fn strangers(n: usize) -> Vec<String> {
    (0..n).map(|n| format!("u{n}")).collect()
}

/// Sends ten PRESENCE_SUBs of `ids` (100 ids: weight 10 each, so the whole
/// bucket of 100) and reads their snapshots.
async fn take_the_bucket(bob: &mut WsClient, ids: &[&str]) {
    for _ in 0..10 {
        bob.send_json(sub(ids)).await;
    }
    for _ in 0..10 * ids.len() {
        bob.recv_type("PRESENCE").await;
    }
}

/// The next frame: PRESENCE of `user` with `status`.
async fn recv_presence(client: &mut WsClient, user: &str, status: &str) -> Value {
    let frame = client.recv_type("PRESENCE").await;
    assert_eq!(frame["userId"], user, "{frame}");
    assert_eq!(frame["status"], status, "{frame}");
    frame
}

async fn a_snapshot_follows_the_subscription_then_one_frame_per_change(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.presence_grace_ms = 300).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut bob = app.connect("bob").await;
    let alice = app.connect("alice").await;
    bob.send_json(sub(&["alice", "carol", "bob"])).await;
    let online = recv_presence(&mut bob, "alice", "online").await;
    assert!(online.get("lastSeenAt").is_none(), "{online}");
    let never = recv_presence(&mut bob, "carol", "offline").await;
    assert!(never.get("lastSeenAt").is_none(), "never seen: {never}");
    recv_presence(&mut bob, "bob", "online").await;
    bob.expect_silence(Duration::from_millis(200)).await;

    // carol comes: one frame; alice goes: offline after the grace.
    let carol = app.connect("carol").await;
    recv_presence(&mut bob, "carol", "online").await;
    let closed = chatd::ids::now_ms();
    let left = Instant::now();
    drop(alice);
    let offline = recv_presence(&mut bob, "alice", "offline").await;
    assert!(left.elapsed() >= Duration::from_millis(250), "not before the grace");
    let seen = offline["lastSeenAt"].as_i64().expect("lastSeenAt");
    assert!((closed - 50..=closed + 1000).contains(&seen), "{seen} vs {closed}");
    drop(carol);
    let offline = recv_presence(&mut bob, "carol", "offline").await;
    assert!(offline["lastSeenAt"].is_i64());
    bob.expect_silence(Duration::from_millis(500)).await;
    app.stop().await;
}

async fn a_reconnect_within_the_grace_does_not_flap(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.presence_grace_ms = 1500).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    let alice = app.connect("alice").await;
    bob.send_json(sub(&["alice"])).await;
    recv_presence(&mut bob, "alice", "online").await;
    drop(alice);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let alice = app.connect("alice").await;
    bob.expect_silence(Duration::from_millis(2000)).await;
    drop(alice);
    recv_presence(&mut bob, "alice", "offline").await;
    app.stop().await;
}

async fn strangers_are_always_offline_without_last_seen(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.presence_grace_ms = 100).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("elsewhere", &["eve", "mallory"]).await;
    let eve = app.connect("eve").await;
    let mut bob = app.connect("bob").await;
    bob.send_json(sub(&["eve", "nobody"])).await;
    for user in ["eve", "nobody"] {
        let frame = recv_presence(&mut bob, user, "offline").await;
        assert!(frame.get("lastSeenAt").is_none(), "{frame}");
    }
    // Nothing when the stranger comes and goes.
    drop(eve);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _eve = app.connect("eve").await;
    bob.expect_silence(Duration::from_millis(500)).await;
    app.stop().await;
}

async fn a_new_subscription_replaces_the_old_and_an_empty_one_ends_it(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.presence_grace_ms = 100).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut bob = app.connect("bob").await;
    bob.send_json(sub(&["alice"])).await;
    recv_presence(&mut bob, "alice", "offline").await;
    bob.send_json(sub(&["carol"])).await;
    recv_presence(&mut bob, "carol", "offline").await;
    let alice = app.connect("alice").await;
    bob.expect_silence(Duration::from_millis(300)).await;
    let carol = app.connect("carol").await;
    recv_presence(&mut bob, "carol", "online").await;
    bob.send_json(sub(&[])).await;
    drop(carol);
    drop(alice);
    bob.expect_silence(Duration::from_millis(500)).await;
    app.stop().await;
}

async fn bad_subscriptions_are_refused_and_the_connection_stays_open(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_presence_subscriptions = 3).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    for frame in [
        sub(&["a", "b", "c", "d"]),
        sub(&["alice", "not a user"]),
        sub(&[".."]),
        json!({"type": "PRESENCE_SUB", "userIds": [7]}),
        json!({"type": "PRESENCE_SUB", "userIds": "alice"}),
        json!({"type": "PRESENCE_SUB"}),
    ] {
        bob.send_json(frame.clone()).await;
        let error = bob.recv_type("ERROR").await;
        assert_eq!(error["code"], "invalid_field", "{frame}: {error}");
        assert_eq!(error["field"], "userIds", "{frame}: {error}");
    }
    // Exactly the limit is fine (repeats count once), and the session works.
    bob.send_json(sub(&["alice", "x", "y", "alice"])).await;
    for user in ["alice", "x", "y"] {
        recv_presence(&mut bob, user, "offline").await;
    }
    bob.send_and_ack("room", "m1", "still here").await;
    app.stop().await;
}

async fn last_seen_is_kept_across_a_restart(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.presence_grace_ms = 100).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    bob.send_json(sub(&["alice"])).await;
    recv_presence(&mut bob, "alice", "offline").await;
    let alice = app.connect("alice").await;
    recv_presence(&mut bob, "alice", "online").await;
    drop(alice);
    let offline = recv_presence(&mut bob, "alice", "offline").await;
    let seen = offline["lastSeenAt"].as_i64().expect("lastSeenAt");
    drop(bob);
    let app = app.restart(|c| c.presence_grace_ms = 100).await;
    let mut bob = app.connect("bob").await;
    bob.send_json(sub(&["alice"])).await;
    let after = recv_presence(&mut bob, "alice", "offline").await;
    assert_eq!(after["lastSeenAt"], seen, "{after}");
    app.stop().await;
}

/// A PRESENCE_SUB is answered with one PRESENCE per id, so it counts against
/// the rate limits as one frame per ten ids (`limits::PRESENCE_IDS_PER_FRAME`):
/// within its frame rate a connection cannot make the server send hundreds of
/// times as many frames. A refused one changes nothing.
async fn a_presence_sub_counts_one_frame_per_ten_ids(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 1;
        c.rate_limit_burst = 60;
        c.user_rate_limit_per_sec = 0;
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    let many = strangers(250);
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    // Two of 250 ids weigh 2 × 25 of the 60 frames: both are answered.
    for _ in 0..2 {
        bob.send_json(sub(&many)).await;
        for user in &many {
            recv_presence(&mut bob, user, "offline").await;
        }
    }
    // A third would take 25 of the 10 left: refused, retryable, nothing sent.
    bob.send_json(sub(&many)).await;
    let error = bob.recv().await;
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["code"], "rate_limited", "{error}");
    assert_eq!(error["retryable"], true, "{error}");
    assert!(error["retryAfterMs"].as_u64().expect("retryAfterMs") > 0, "{error}");
    bob.expect_silence(Duration::from_millis(200)).await;
    // One id weighs one frame: still within the bucket.
    bob.send_json(sub(&["alice"])).await;
    recv_presence(&mut bob, "alice", "offline").await;
    app.stop().await;
}

/// A client that waits `retryAfterMs` and resends the refused PRESENCE_SUB
/// (protocol.md sections 5 and 8) gets through once the bucket has refilled:
/// the wait covers the whole weight, including the one frame every retry
/// pays again.
async fn a_refused_presence_sub_retried_after_retry_after_ms_is_accepted(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 10;
        c.rate_limit_burst = 100;
        c.user_rate_limit_per_sec = 0;
    })
    .await;
    let mut bob = app.connect("bob").await;
    let ids = strangers(100);
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    take_the_bucket(&mut bob, &ids).await;
    bob.send_json(sub(&ids)).await;
    let mut error = bob.recv().await;
    assert_eq!(error["type"], "ERROR", "the eleventh is refused: {error}");
    let started = Instant::now();
    let mut retries = 0;
    while error["type"] == "ERROR" {
        assert_eq!(error["code"], "rate_limited", "{error}");
        retries += 1;
        assert!(
            retries <= 20,
            "still refused after {retries} retries in {:?}, each after retryAfterMs (the bucket refills 10/s, the frame weighs 10): {error}",
            started.elapsed()
        );
        let wait = error["retryAfterMs"].as_u64().expect("retryAfterMs");
        tokio::time::sleep(Duration::from_millis(wait)).await;
        bob.send_json(sub(&ids)).await;
        error = bob.recv().await;
    }
    assert_eq!(error["type"], "PRESENCE", "{error}");
    app.stop().await;
}

/// More than `max_rate_limited` refused frames in a row close the connection
/// with 1008 (protocol.md section 5), also when each is a PRESENCE_SUB that
/// passes the one-frame check and is refused for its weight.
async fn a_flood_of_refused_presence_subs_is_closed_like_any_flood(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 10;
        c.rate_limit_burst = 100;
        c.user_rate_limit_per_sec = 0;
        c.max_rate_limited = 5;
    })
    .await;
    let mut bob = app.connect("bob").await;
    let ids = strangers(100);
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    take_the_bucket(&mut bob, &ids).await;
    // 30 frames/s against a refill of 10/s: none can be acted on (each
    // weighs 10), so the 6th refused in a row must close the connection.
    for _ in 0..12 {
        bob.send_json(sub(&ids)).await;
        tokio::time::sleep(Duration::from_millis(33)).await;
    }
    assert_eq!(bob.recv_close_code().await, 1008, "closed: rate limit exceeded");
    app.stop().await;
}

/// The next PRESENCE frame, skipping the membership frames around it.
async fn next_presence(client: &mut WsClient) -> Value {
    client
        .recv_type_skipping("PRESENCE", &["MEMBER", "CHANNEL_ADDED", "CHANNEL_REMOVED"])
        .await
}

/// No PRESENCE frame for `wait` (membership frames are skipped).
async fn no_presence(client: &mut WsClient, wait: Duration) {
    let until = Instant::now() + wait;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match tokio::time::timeout(left, client.recv()).await {
            Err(_) => return,
            Ok(frame) => assert_ne!(frame["type"], "PRESENCE", "{frame}"),
        }
    }
}

/// §9: only users who share a channel with the subscriber are reported.
/// When bob is removed from the one channel he shared with alice, each
/// one's open subscription shows the other `offline` (no `lastSeenAt`) and
/// reports nothing more of them; carol, still sharing another channel with
/// alice, stays reported, and dave, who also shares a second channel with
/// alice, is not hidden by his removal from the first. Before, both
/// subscriptions kept reporting the other until they were renewed.
async fn a_subscription_stops_reporting_users_who_no_longer_share_a_channel(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.presence_grace_ms = 100;
        c.presence_ttl_ms = 2000;
    })
    .await;
    app.create_channel("room", &["alice", "bob", "dave"]).await;
    app.create_channel("other", &["alice", "carol", "dave"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let dave = app.connect("dave").await;
    alice.send_json(sub(&["bob", "carol", "dave"])).await;
    recv_presence(&mut alice, "bob", "online").await;
    recv_presence(&mut alice, "carol", "offline").await;
    recv_presence(&mut alice, "dave", "online").await;
    bob.send_json(sub(&["alice"])).await;
    recv_presence(&mut bob, "alice", "online").await;

    for user in ["bob", "dave"] {
        let path = format!("/v1/channels/room/members/{user}");
        assert_eq!(app.request("DELETE", &path, Some(ADMIN_TOKEN), None).await.0, 204);
    }
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
    no_presence(&mut alice, Duration::from_millis(1500)).await;

    // bob coming and going tells alice nothing; carol and dave still do.
    drop(bob);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let bob = app.connect("bob").await;
    let carol = app.connect("carol").await;
    recv_presence(&mut alice, "carol", "online").await;
    drop(dave);
    recv_presence(&mut alice, "dave", "offline").await;
    no_presence(&mut alice, Duration::from_millis(500)).await;
    drop((bob, carol));
    app.stop().await;
}

/// A deleted channel that was the only one two users shared ends their
/// reports of each other like a removal does.
async fn a_deleted_channel_ends_the_reports_of_the_users_it_alone_shared(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.presence_grace_ms = 100;
        c.presence_ttl_ms = 2000;
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let bob = app.connect("bob").await;
    alice.send_json(sub(&["bob"])).await;
    recv_presence(&mut alice, "bob", "online").await;
    assert_eq!(
        app.request("DELETE", "/v1/channels/room", Some(ADMIN_TOKEN), None)
            .await
            .0,
        204
    );
    let hidden = next_presence(&mut alice).await;
    assert_eq!(
        hidden,
        json!({"type": "PRESENCE", "userId": "bob", "status": "offline"})
    );
    drop(bob);
    no_presence(&mut alice, Duration::from_millis(800)).await;
    app.stop().await;
}

/// §9, the other way: a user the subscriber requested while they shared no
/// channel (shown `offline`, no `lastSeenAt`) is shown, within about a
/// second and without a new PRESENCE_SUB, once they start sharing one: its
/// current status, then every change. Both ways: carol added to alice's
/// channel; eve and alice put in a new channel together. Before, only the
/// next PRESENCE_SUB showed them.
async fn a_user_who_starts_sharing_a_channel_is_reported_without_a_new_subscription(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.presence_grace_ms = 100;
        c.presence_ttl_ms = 2000;
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("elsewhere", &["carol", "eve"]).await;
    let mut alice = app.connect("alice").await;
    let mut carol = app.connect("carol").await;
    let eve = app.connect("eve").await;
    alice.send_json(sub(&["carol", "eve"])).await;
    for user in ["carol", "eve"] {
        let frame = recv_presence(&mut alice, user, "offline").await;
        assert!(frame.get("lastSeenAt").is_none(), "{frame}");
    }
    carol.send_json(sub(&["alice"])).await;
    recv_presence(&mut carol, "alice", "offline").await;

    let added = app
        .request("PUT", "/v1/channels/room/members/carol", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(added.0, 204, "{added:?}");
    assert_eq!(
        next_presence(&mut alice).await,
        json!({"type": "PRESENCE", "userId": "carol", "status": "online"})
    );
    assert_eq!(
        next_presence(&mut carol).await,
        json!({"type": "PRESENCE", "userId": "alice", "status": "online"})
    );
    // Then every change: carol's offline after the grace, with lastSeenAt.
    drop(carol);
    let gone = next_presence(&mut alice).await;
    assert_eq!((&gone["userId"], &gone["status"]), (&json!("carol"), &json!("offline")));
    assert!(gone["lastSeenAt"].is_i64(), "{gone}");

    // A new channel with both shows eve.
    app.create_channel("fresh", &["alice", "eve"]).await;
    assert_eq!(
        next_presence(&mut alice).await,
        json!({"type": "PRESENCE", "userId": "eve", "status": "online"})
    );
    no_presence(&mut alice, Duration::from_millis(800)).await;
    drop(eve);
    recv_presence(&mut alice, "eve", "offline").await;
    app.stop().await;
}

/// A user who blocks the subscriber stays hidden from it when they start
/// sharing a channel (the read of a PRESENCE_SUB judges: §17), and is shown
/// once the block is lifted, without a new PRESENCE_SUB.
async fn a_blocker_is_not_shown_on_a_new_shared_channel_until_it_unblocks(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.presence_grace_ms = 100;
        c.presence_ttl_ms = 2000;
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    let carol_token = app.token("carol");
    let blocked = app
        .request("PUT", "/v1/me/blocks/alice", Some(&carol_token), None)
        .await;
    assert_eq!(blocked.0, 204, "{blocked:?}");
    let mut alice = app.connect("alice").await;
    let _carol = app.connect("carol").await;
    alice.send_json(sub(&["carol"])).await;
    recv_presence(&mut alice, "carol", "offline").await;

    let added = app
        .request("PUT", "/v1/channels/room/members/carol", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(added.0, 204, "{added:?}");
    no_presence(&mut alice, Duration::from_millis(1500)).await;

    let unblocked = app
        .request("DELETE", "/v1/me/blocks/alice", Some(&carol_token), None)
        .await;
    assert_eq!(unblocked.0, 204, "{unblocked:?}");
    assert_eq!(
        next_presence(&mut alice).await,
        json!({"type": "PRESENCE", "userId": "carol", "status": "online"})
    );
    app.stop().await;
}
