//! The client library's mentions and notification settings (protocol §16)
//! against the real server: `send_with` mentions users (the server keeps
//! the members), a mention of all from a member is a `Refused` send, the
//! "mentioned me" flag, `unreadMentions` in the channel list (HELLO and
//! `my_channels`), and settings set through one client reaching the user's
//! other client as `Event::Settings`.

use std::time::Duration;

use chatd_client::admin::AdminClient;
use chatd_client::{Client, ClientConfig, Event, SendError, SendOptions};
use chatd_proto::protocol::{ErrorCode, Notify, RecvMessage};
use serde_json::json;
use tokio::sync::mpsc;

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(the_client_mentions_counts_and_keeps_settings);

fn config(app: &TestApp, user: &str) -> ClientConfig {
    let mut config = ClientConfig::new(app.ws_url(), app.token(user));
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(500);
    config
}

/// The next message event (other events skipped).
async fn next_message(events: &mut mpsc::Receiver<Event>) -> RecvMessage {
    loop {
        match tokio::time::timeout(Duration::from_secs(20), events.recv()).await {
            Ok(Some(Event::Message(m))) => return *m,
            Ok(Some(_)) => {}
            Ok(None) => panic!("events closed"),
            Err(_) => panic!("no message in time"),
        }
    }
}

async fn the_client_mentions_counts_and_keeps_settings(backend: Backend) {
    let app = spawn_app(backend).await;
    let res = app
        .post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "bob"]}))
        .await;
    assert_eq!(res.status(), 201);
    let (alice, _alice_events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let (olive, _olive_events) = Client::connect(config(&app, "olive")).await.expect("olive");
    let (_bob, mut bob_events) = Client::connect(config(&app, "bob")).await.expect("bob");

    let to_bob = SendOptions {
        mentions: vec!["bob".into(), "zed".into()],
        ..SendOptions::default()
    };
    let sent = alice.send_with("room", "@bob", to_bob).await.expect("send");
    let got = next_message(&mut bob_events).await;
    assert_eq!(got.message_id, sent.message_id);
    assert_eq!(got.mentions, vec!["bob".to_owned()], "zed is no member");
    assert!(got.mentions_user("bob") && !got.mentions_user("alice"));

    let all = SendOptions {
        mention_all: true,
        ..SendOptions::default()
    };
    match alice.send_with("room", "@all", all.clone()).await {
        Err(SendError::Refused { code, .. }) => assert_eq!(code, ErrorCode::Forbidden),
        other => panic!("a member's mention of all: {other:?}"),
    }
    olive.send_with("room", "@all", all).await.expect("a moderator's");
    let got = next_message(&mut bob_events).await;
    assert!(got.mention_all && got.mentions_user("bob") && got.mentions_user("alice"));

    // The channel list: HELLO of a new client and my_channels.
    let (bob_phone, mut phone_events) = Client::connect(config(&app, "bob")).await.expect("phone");
    let hello = loop {
        match phone_events.recv().await.expect("events") {
            Event::Connected { channels, .. } => break channels,
            _ => continue,
        }
    };
    assert_eq!((hello[0].unread, hello[0].unread_mentions), (2, 2));
    let base = format!("http://{}", app.addr);
    let bob_http = AdminClient::new(&base, app.token("bob"));
    let listed = bob_http.my_channels().await.expect("my channels");
    assert_eq!(listed[0].unread_mentions, 2);
    assert_eq!(listed[0].notify, Notify::All);

    let settings = bob_http
        .set_settings("room", Some(Notify::Mentions), Some(Some(4_102_444_800_000)))
        .await
        .expect("settings");
    assert_eq!(
        (settings.notify, settings.snooze_until),
        (Notify::Mentions, Some(4_102_444_800_000))
    );
    let changed = loop {
        match tokio::time::timeout(Duration::from_secs(20), phone_events.recv()).await {
            Ok(Some(Event::Settings {
                channel_id,
                notify,
                snooze_until,
            })) => break (channel_id, notify, snooze_until),
            Ok(Some(_)) => {}
            other => panic!("no settings event: {other:?}"),
        }
    };
    assert_eq!(changed, ("room".to_owned(), Notify::Mentions, Some(4_102_444_800_000)));
    let refused = AdminClient::new(&base, app.token("dave"))
        .set_settings("room", Some(Notify::None), None)
        .await;
    assert!(refused.is_err(), "dave is no member");
    assert_eq!(bob_http.my_channels().await.expect("list")[0].notify, Notify::Mentions);
    drop(bob_phone);
    app.stop().await;
}
