//! The Rust client's moderation support (protocol.md §17) against the real
//! server: mute, ban, bans, channel settings and the delete route through
//! `AdminClient` (an owner's token and the admin's), and refusals with their
//! `reason` and `retryAfterMs` in `SendError::Refused`; a slow-mode refusal
//! is retried by the client after `retryAfterMs` and then stored.

use std::time::{Duration, Instant};

use chatd_client::admin::{AdminClient, ChannelSettings};
use chatd_client::{Client, ClientConfig, Event, SendError};
use chatd_proto::protocol::{ErrorCode, Role};
use serde_json::json;

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(
    the_client_moderates_and_reads_each_refusals_reason,
    the_client_reads_channel_rules_in_hello_and_when_they_change
);

fn config(app: &TestApp, user: &str) -> ClientConfig {
    let mut config = ClientConfig::new(app.ws_url(), app.token(user));
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(500);
    config
}

async fn the_client_moderates_and_reads_each_refusals_reason(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "visibility": "public", "owners": ["olive"],
        "members": ["alice", "bob"]}))
        .await;
    let base = format!("http://{}", app.addr);
    let olive = AdminClient::new(&base, app.token("olive"));
    let admin = AdminClient::new(&base, ADMIN_TOKEN);
    let (alice, _events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let kept = alice.send("room", "hello").await.expect("stored");

    // Muted: refused with its reason and the time left.
    let until = chatd::ids::now_ms() + 60_000;
    olive.mute("room", "alice", Some(until)).await.expect("mute");
    let (members, _) = admin.all_members("room").await.expect("members");
    let row = members.iter().find(|m| m.user_id == "alice").expect("alice");
    assert_eq!(row.muted_until, Some(until));
    match alice.send("room", "while muted").await {
        Err(SendError::Refused {
            code: ErrorCode::Forbidden,
            reason: Some(reason),
            retry_after_ms: Some(left),
            ..
        }) => {
            assert_eq!(reason, "muted");
            assert!((1..=60_000).contains(&left), "{left}");
        }
        other => panic!("expected muted, got {other:?}"),
    }
    olive.mute("room", "alice", None).await.expect("unmute");

    // Slow mode: the client waits retryAfterMs and its retry is stored.
    let channel = olive
        .set_channel_settings(
            "room",
            &ChannelSettings {
                slow_mode_ms: Some(400),
                ..ChannelSettings::default()
            },
        )
        .await
        .expect("slow mode");
    assert_eq!((channel.slow_mode_ms, channel.posting_role), (400, Role::Member));
    let first = alice.send("room", "one").await.expect("one");
    let started = Instant::now();
    let second = alice.send("room", "two").await.expect("two, after the wait");
    assert!(second.seq > first.seq);
    assert!(started.elapsed() >= Duration::from_millis(200), "it waited");

    // An announcement channel: read_only.
    let settings = ChannelSettings {
        posting_role: Some(Role::Moderator),
        slow_mode_ms: Some(0),
    };
    olive.set_channel_settings("room", &settings).await.expect("read only");
    match alice.send("room", "me too").await {
        Err(SendError::Refused { reason, .. }) => assert_eq!(reason.as_deref(), Some("read_only")),
        other => panic!("expected read_only, got {other:?}"),
    }

    // A flag, listed for the admin.
    let alice_http = AdminClient::new(&base, app.token("alice"));
    let (flag, created) = alice_http
        .flag(&kept.message_id.to_string(), "spam", Some("ads"))
        .await
        .expect("flag");
    assert!(created);
    let (again, created) = alice_http
        .flag(&kept.message_id.to_string(), "abuse", None)
        .await
        .expect("flag again");
    assert_eq!((&again, created), (&flag, false));
    let page = admin.flags_page(None, 10).await.expect("flags");
    assert_eq!(page.flags, vec![flag]);

    // A moderator's delete by route; a ban, listed, then lifted.
    olive
        .delete_message("room", &kept.message_id.to_string())
        .await
        .expect("delete");
    let error = olive
        .delete_message("room", &kept.message_id.to_string())
        .await
        .expect_err("deleted already");
    assert!(matches!(
        error,
        chatd_client::admin::AdminError::Status { status: 404, .. }
    ));
    olive.ban("room", "bob").await.expect("ban");
    let page = olive.bans_page("room", None, 10).await.expect("bans");
    assert_eq!(page.bans.len(), 1);
    assert_eq!(
        (page.bans[0].user_id.as_str(), page.bans[0].actor_id.as_deref()),
        ("bob", Some("olive"))
    );
    let bob = AdminClient::new(&base, app.token("bob"));
    let refused = bob.join("room").await.expect_err("banned");
    match refused {
        chatd_client::admin::AdminError::Status { status, body } => {
            assert_eq!(status, 403);
            assert!(body.contains("\"banned\""), "{body}");
        }
        other => panic!("{other:?}"),
    }
    admin.lift_ban("room", "bob").await.expect("lift");
    bob.join("room").await.expect("joins again");
    // Blocks, with a user's token.
    bob.block("alice").await.expect("block");
    bob.block("zed").await.expect("block");
    assert_eq!(bob.blocks().await.expect("blocks"), ["alice", "zed"]);
    bob.unblock("zed").await.expect("unblock");
    assert_eq!(bob.blocks().await.expect("blocks"), ["alice"]);
    alice.close().await;
    app.stop().await;
}

/// `postingRole` and `slowModeMs` reach a member's client in HELLO
/// (`Event::Connected`) and, when an owner changes them, at once as
/// `Event::ChannelUpdated` (the server's `CHANNEL_UPDATED`).
async fn the_client_reads_channel_rules_in_hello_and_when_they_change(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice"]}))
        .await;
    let (status, _) = app
        .request(
            "PATCH",
            "/v1/channels/room",
            Some(&app.token("olive")),
            Some(r#"{"postingRole":"moderator"}"#),
        )
        .await;
    assert_eq!(status, 200);
    let (alice, mut events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let hello = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
    let Ok(Some(Event::Connected { channels, .. })) = hello else {
        panic!("expected Connected, got {hello:?}");
    };
    assert_eq!(
        (channels[0].posting_role, channels[0].slow_mode_ms),
        (Role::Moderator, 0)
    );
    let (status, _) = app
        .request(
            "PATCH",
            "/v1/channels/room",
            Some(&app.token("olive")),
            Some(r#"{"postingRole":"member","slowModeMs":1000}"#),
        )
        .await;
    assert_eq!(status, 200);
    loop {
        match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
            Ok(Some(Event::ChannelUpdated {
                channel_id,
                posting_role,
                slow_mode_ms,
                ..
            })) => {
                assert_eq!(
                    (channel_id.as_str(), posting_role, slow_mode_ms),
                    ("room", Role::Member, 1000)
                );
                break;
            }
            Ok(Some(_)) => {}
            other => panic!("expected ChannelUpdated, got {other:?}"),
        }
    }
    alice.close().await;
    app.stop().await;
}
