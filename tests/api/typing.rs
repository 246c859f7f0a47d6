//! TYPING (protocol.md section 9): to the other members' sessions only,
//! throttled, expiring, stopped by the server on a stop, a stored message or
//! the typer's last session closing; never stored; refusals leave the
//! connection open; a TYPING flood does not slow another connection's sends.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend, WsClient};

on_both_stores!(
    typing_reaches_the_other_members_sessions_only,
    starts_are_throttled_per_user_and_channel,
    the_server_stops_on_stop_on_a_stored_message_and_on_the_last_close,
    bad_typing_is_refused_and_the_connection_stays_open,
    no_typing_fan_out_in_channels_over_typing_max_members,
    a_typing_flood_does_not_slow_another_connections_sends,
    typing_counts_toward_the_connections_frame_rate,
    typing_in_a_channel_just_deleted_is_refused,
    a_start_sent_while_a_message_is_stored_follows_its_stop,
);

fn typing(channel: &str, state: &str) -> Value {
    json!({"type": "TYPING", "channelId": channel, "state": state})
}

/// The next TYPING frame, which must be `state` from `user` in `channel`.
async fn recv_typing(client: &mut WsClient, channel: &str, user: &str, state: &str) -> Value {
    let frame = client.recv_type("TYPING").await;
    assert_eq!(frame["channelId"], channel, "{frame}");
    assert_eq!(frame["userId"], user, "{frame}");
    assert_eq!(frame["state"], state, "{frame}");
    frame
}

async fn typing_reaches_the_other_members_sessions_only(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice = app.connect("alice").await;
    let mut alice_other = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let mut carol = app.connect("carol").await;
    let mut eve = app.connect("eve").await;
    let before = chatd::ids::now_ms();
    alice.send_json(typing("room", "start")).await;
    for client in [&mut bob, &mut carol] {
        let frame = recv_typing(client, "room", "alice", "start").await;
        let expires = frame["expiresAt"].as_i64().expect("expiresAt");
        assert!(
            (before + 6000..=chatd::ids::now_ms() + 6000).contains(&expires),
            "expiresAt is typing_ttl_ms (6000) after the start: {frame}"
        );
        assert_eq!(frame.as_object().map(|o| o.len()), Some(5), "{frame}");
    }
    // Not the typer's own sessions, never a non-member; and no answer.
    alice.expect_silence(Duration::from_millis(300)).await;
    alice_other.expect_silence(Duration::from_millis(50)).await;
    eve.expect_silence(Duration::from_millis(50)).await;
    // Never stored, never given a seq.
    let (status, body) = app.history("room", chatd_testkit::ADMIN_TOKEN, "").await;
    assert_eq!(status, 200);
    assert_eq!(body["messages"], json!([]));
    let again = app.connect("bob").await;
    assert_eq!(again.hello["channels"][0]["lastSeq"], 0);
    app.stop().await;
}

async fn starts_are_throttled_per_user_and_channel(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.typing_throttle_ms = 500).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    app.create_channel("other", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut carol = app.connect("carol").await;
    let mut bob = app.connect("bob").await;
    for _ in 0..5 {
        alice.send_json(typing("room", "start")).await;
    }
    // Another channel, and another user, have throttles of their own.
    alice.send_json(typing("other", "start")).await;
    carol.send_json(typing("room", "start")).await;
    let mut got = Vec::new();
    for _ in 0..3 {
        let frame = bob.recv_type("TYPING").await;
        got.push((frame["userId"].clone(), frame["channelId"].clone()));
    }
    // The server forwarded alice's first start before bob got it.
    let forwarded_by = Instant::now();
    got.sort_by_key(|g| g.0.to_string() + &g.1.to_string());
    assert_eq!(
        got,
        [
            (json!("alice"), json!("other")),
            (json!("alice"), json!("room")),
            (json!("carol"), json!("room"))
        ]
    );
    // The other four starts were dropped silently; alice sees only carol.
    bob.expect_silence(Duration::from_millis(200)).await;
    recv_typing(&mut alice, "room", "carol", "start").await;
    alice.expect_silence(Duration::from_millis(10)).await;
    // Once the throttle has passed, a start (a renewal) goes out again.
    tokio::time::sleep_until((forwarded_by + Duration::from_millis(550)).into()).await;
    alice.send_json(typing("room", "start")).await;
    recv_typing(&mut bob, "room", "alice", "start").await;
    app.stop().await;
}

async fn the_server_stops_on_stop_on_a_stored_message_and_on_the_last_close(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.typing_throttle_ms = 0).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;

    // An explicit stop, once.
    alice.send_json(typing("room", "start")).await;
    recv_typing(&mut bob, "room", "alice", "start").await;
    alice.send_json(typing("room", "stop")).await;
    let stop = recv_typing(&mut bob, "room", "alice", "stop").await;
    assert!(stop.get("expiresAt").is_none(), "{stop}");
    alice.send_json(typing("room", "stop")).await;
    bob.expect_silence(Duration::from_millis(200)).await;

    // A message from the typer in that channel.
    alice.send_json(typing("room", "start")).await;
    recv_typing(&mut bob, "room", "alice", "start").await;
    let first = alice.send_and_ack("room", "m1", "hello").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["seq"], 1);
    recv_typing(&mut bob, "room", "alice", "stop").await;

    // An edit or a reaction is not a message: the typer types on.
    alice.send_json(typing("room", "start")).await;
    recv_typing(&mut bob, "room", "alice", "start").await;
    alice
        .send_json(json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": first["messageId"], "body": "hello!"}))
        .await;
    alice.recv_type("MSG_ACK").await;
    alice
        .send_json(json!({"type": "MSG_REACT", "clientMsgId": "r1", "messageId": first["messageId"], "emoji": "👍", "op": "add"}))
        .await;
    alice.recv_type("MSG_ACK").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["kind"], "edit");
    assert_eq!(bob.recv_type("MSG_RECV").await["kind"], "reaction");
    bob.expect_silence(Duration::from_millis(200)).await;
    alice.send_json(typing("room", "stop")).await;
    recv_typing(&mut bob, "room", "alice", "stop").await;

    // The typer's last session closing (not an earlier one).
    let mut alice_other = app.connect("alice").await;
    alice.send_json(typing("room", "start")).await;
    recv_typing(&mut bob, "room", "alice", "start").await;
    alice_other.stream.close(None).await.expect("close");
    bob.expect_silence(Duration::from_millis(300)).await;
    alice.stream.close(None).await.expect("close");
    recv_typing(&mut bob, "room", "alice", "stop").await;
    app.stop().await;
}

async fn bad_typing_is_refused_and_the_connection_stays_open(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("theirs", &["bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    for channel in ["theirs", "unknown"] {
        alice.send_json(typing(channel, "start")).await;
        let error = alice.recv_type("ERROR").await;
        assert_eq!(error["code"], "forbidden", "{error}");
        assert_eq!(error["channelId"], channel, "{error}");
        assert_eq!(error["retryable"], false);
    }
    for (frame, field) in [
        (typing("room", "typing"), "state"),
        (json!({"type": "TYPING", "channelId": "room"}), "state"),
        (json!({"type": "TYPING", "channelId": "room", "state": 1}), "state"),
        (typing("bad room", "start"), "channelId"),
    ] {
        alice.send_json(frame).await;
        let error = alice.recv_type("ERROR").await;
        assert_eq!(error["code"], "invalid_field", "{error}");
        assert_eq!(error["field"], field, "{error}");
    }
    bob.expect_silence(Duration::from_millis(200)).await;
    // Still open, and still typing.
    alice.send_json(typing("room", "start")).await;
    recv_typing(&mut bob, "room", "alice", "start").await;
    alice.send_and_ack("room", "m1", "still here").await;
    app.stop().await;
}

/// The channel's members are cached for TYPING (`MEMBERS_FRESH`, 1 s): a
/// deletion must forget them, or a TYPING right after it would still be
/// taken and fanned out to the former members.
async fn typing_in_a_channel_just_deleted_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_json(typing("room", "start")).await;
    recv_typing(&mut bob, "room", "alice", "start").await;
    let (status, _) = app
        .admin()
        .request(reqwest::Method::DELETE, "/v1/channels/room", None)
        .await;
    assert_eq!(status, 204);
    assert_eq!(alice.recv_type("CHANNEL_REMOVED").await["channelId"], "room");
    alice.send_json(typing("room", "stop")).await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(error["code"], "forbidden", "{error}");
    assert_eq!(error["channelId"], "room", "{error}");
    assert_eq!(bob.recv_type("CHANNEL_REMOVED").await["channelId"], "room");
    bob.expect_silence(Duration::from_millis(200)).await;
    app.stop().await;
}

async fn no_typing_fan_out_in_channels_over_typing_max_members(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.typing_max_members = 2).await;
    app.create_channel("pair", &["alice", "bob"]).await;
    app.create_channel("crowd", &["alice", "bob", "carol"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_json(typing("crowd", "start")).await;
    bob.expect_silence(Duration::from_millis(300)).await;
    alice.expect_silence(Duration::from_millis(10)).await;
    alice.send_json(typing("pair", "start")).await;
    recv_typing(&mut bob, "pair", "alice", "start").await;
    app.stop().await;
}

/// Send-to-ACK times of `n` sends, one at a time.
async fn ack_times(client: &mut WsClient, prefix: &str, n: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        client.send_msg("work", &format!("{prefix}-{i}"), "x").await;
        loop {
            let frame = client.recv().await;
            if frame["type"] == "MSG_ACK" {
                break;
            }
        }
        times.push(started.elapsed());
    }
    times
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Guarantee 11: a connection flooding TYPING (as fast as its rate limit
/// lets it, across channels with members online) does not slow another
/// connection's sends. Medians of the same run, with and without the flood.
async fn a_typing_flood_does_not_slow_another_connections_sends(backend: Backend) {
    const SENDS: usize = 60;
    let app = spawn_app_with(backend, |c| {
        c.typing_throttle_ms = 0;
        c.rate_limit_per_sec = 5_000;
        c.rate_limit_burst = 5_000;
        c.user_rate_limit_per_sec = 0;
    })
    .await;
    app.create_channel("work", &["sender", "reader"]).await;
    let rooms: Vec<String> = (0..20).map(|i| format!("room{i}")).collect();
    let members: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    let mut all: Vec<&str> = members.iter().map(String::as_str).collect();
    all.push("flooder");
    for room in &rooms {
        app.create_channel(room, &all).await;
    }
    let mut listeners = Vec::new();
    for member in &members {
        listeners.push(app.connect(member).await);
    }
    // Listeners read (and drop) everything, so their queues never fill.
    let drains: Vec<_> = listeners
        .into_iter()
        .map(|mut l| {
            tokio::spawn(async move {
                use futures_util::StreamExt;
                while let Some(Ok(_)) = l.stream.next().await {}
            })
        })
        .collect();
    let mut sender = app.connect("sender").await;
    let _reader = app.connect("reader").await;
    ack_times(&mut sender, "warm", 10).await;
    let quiet = median(ack_times(&mut sender, "quiet", SENDS).await);

    let mut flooder = app.connect("flooder").await;
    let stop = tokio_util::sync::CancellationToken::new();
    let flood_stop = stop.clone();
    let flood = tokio::spawn(async move {
        use futures_util::SinkExt;
        use tokio_tungstenite::tungstenite::Message;
        let mut sent = 0u64;
        while !flood_stop.is_cancelled() {
            for room in &rooms {
                let state = if sent.is_multiple_of(2) { "start" } else { "stop" };
                let frame = json!({"type": "TYPING", "channelId": room, "state": state}).to_string();
                flooder.stream.feed(Message::text(frame)).await.expect("feed");
                sent += 1;
            }
            flooder.stream.flush().await.expect("flush");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        sent
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let flooded = median(ack_times(&mut sender, "flooded", SENDS).await);
    stop.cancel();
    let sent = flood.await.expect("flood");
    assert!(sent > 300, "the flood ran: {sent} frames");
    // A loose bound (the machine is shared); a flood that got in the way of
    // sends (a lock, the commit path) shows as a multiple, not a fraction.
    assert!(
        flooded <= quiet * 4 + Duration::from_millis(2),
        "send median {flooded:?} with a TYPING flood vs {quiet:?} without"
    );
    for drain in drains {
        drain.abort();
    }
    app.stop().await;
}

/// TYPING is a frame like any other for the rate limits: past the burst it
/// is answered `rate_limited`, and the connection stays open.
async fn typing_counts_toward_the_connections_frame_rate(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 1;
        c.rate_limit_burst = 5;
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for _ in 0..8 {
        alice.send_json(typing("room", "start")).await;
    }
    let error = alice.recv_type("ERROR").await;
    assert_eq!(error["code"], "rate_limited", "{error}");
    assert_eq!(error["retryable"], true);
    app.stop().await;
}

/// A user typing the next message while the last is being stored (a
/// `start` sent right after the MSG_SEND, before its ACK, within the
/// throttle of the last `start`): the others get the message, its `stop`,
/// then that `start`, three times in a row. Before the fix the `start` was
/// taken before the message was stored and dropped by the throttle.
async fn a_start_sent_while_a_message_is_stored_follows_its_stop(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_json(typing("room", "start")).await;
    recv_typing(&mut bob, "room", "alice", "start").await;
    for n in 1..=3 {
        alice.send_msg("room", &format!("m{n}"), &format!("message {n}")).await;
        alice.send_json(typing("room", "start")).await;
        assert_eq!(alice.recv_type("MSG_ACK").await["seq"], n);
        let recv = bob.recv().await;
        assert_eq!(
            (recv["type"].as_str(), recv["seq"].as_i64()),
            (Some("MSG_RECV"), Some(n)),
            "{recv}"
        );
        recv_typing(&mut bob, "room", "alice", "stop").await;
        let start = bob.recv().await;
        assert_eq!(
            (start["type"].as_str(), start["state"].as_str()),
            (Some("TYPING"), Some("start")),
            "the start typed after message {n}: {start}"
        );
    }
    app.stop().await;
}
