//! The client library's attachments (protocol §15) against the real
//! server: `AdminClient::upload` with a user token returns the stored
//! attachment, `send_with` carries it (an empty body allowed), the
//! receiver's message event holds it with signed URLs that read the bytes
//! without a token, and an upload of someone else is a refused send; an
//! upload past `max_unclaimed_upload_bytes` is a typed 429 `rate_limited`.

use std::time::Duration;

use chatd_client::admin::AdminClient;
use chatd_client::{Client, ClientConfig, Event, SendError, SendOptions};
use chatd_proto::protocol::{ErrorCode, RecvMessage};
use tokio::sync::mpsc;

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

use crate::attachments::png;

on_both_stores!(
    the_client_uploads_sends_and_receives_attachments,
    an_upload_past_the_unclaimed_bound_is_a_typed_rate_limited_error,
);

fn config(app: &TestApp, user: &str) -> ClientConfig {
    let mut config = ClientConfig::new(app.ws_url(), app.token(user));
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(500);
    config
}

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

async fn the_client_uploads_sends_and_receives_attachments(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let base = format!("http://{}", app.addr);
    let alice_http = AdminClient::new(&base, app.token("alice"));
    let image = png(64, 48);
    let photo = alice_http
        .upload("room", "image/png", image.clone(), Some("cat.png"))
        .await
        .expect("upload");
    assert_eq!(
        (
            photo.channel_id.as_str(),
            photo.content_type.as_str(),
            photo.size,
            photo.width,
            photo.height
        ),
        ("room", "image/png", image.len() as i64, Some(64), Some(48))
    );
    assert_eq!(photo.filename.as_deref(), Some("cat.png"));
    assert_eq!(alice_http.download(photo.attachment_id).await.expect("download"), image);

    let (alice, _alice_events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let (_bob, mut bob_events) = Client::connect(config(&app, "bob")).await.expect("bob");
    let with_photo = SendOptions {
        attachments: vec![photo.attachment_id],
        ..SendOptions::default()
    };
    let sent = alice.send_with("room", "", with_photo).await.expect("send");
    let got = next_message(&mut bob_events).await;
    assert_eq!(got.message_id, sent.message_id);
    assert_eq!(got.body, "");
    let carried = got.attachments.first().expect("an attachment");
    assert_eq!(
        (carried.attachment_id, carried.content_type.as_str(), carried.width),
        (photo.attachment_id, "image/png", Some(64))
    );
    let anonymous = AdminClient::new(&base, "");
    assert_eq!(anonymous.fetch_signed(&carried.url).await.expect("signed url"), image);
    let thumb = carried.thumbnail_url.as_deref().expect("thumbnailUrl");
    assert!(!anonymous.fetch_signed(thumb).await.expect("thumbnail").is_empty());

    // Bob's upload in Alice's send: refused, naming the field.
    let bob_http = AdminClient::new(&base, app.token("bob"));
    let bobs = bob_http
        .upload("room", "text/plain", b"mine".to_vec(), None)
        .await
        .expect("bob's upload");
    let stolen = SendOptions {
        attachments: vec![bobs.attachment_id],
        ..SendOptions::default()
    };
    match alice.send_with("room", "look", stolen).await {
        Err(SendError::Refused { code, message, .. }) => {
            assert_eq!(code, ErrorCode::InvalidField);
            assert!(message.starts_with("attachments"), "{message}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// `AdminClient::upload` past the server's `max_unclaimed_upload_bytes`
/// fails with [`chatd_client::admin::AdminError::Status`] 429 whose
/// `api_error()` is `rate_limited` (retryable, naming the bound). Before,
/// there was no bound (201) and no typed reading of the body.
async fn an_upload_past_the_unclaimed_bound_is_a_typed_rate_limited_error(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_unclaimed_upload_bytes = 1_000).await;
    app.create_channel("room", &["alice"]).await;
    let alice = AdminClient::new(format!("http://{}", app.addr), app.token("alice"));
    alice
        .upload("room", "application/pdf", vec![b'p'; 800], None)
        .await
        .expect("fits");
    let error = alice
        .upload("room", "application/pdf", vec![b'p'; 800], None)
        .await
        .expect_err("past the bound");
    let api = error.api_error().expect("the spec's error shape");
    assert_eq!(
        (api.status, api.code.as_str(), api.retryable()),
        (429, "rate_limited", true),
        "{api:?}"
    );
    assert!(
        api.message.contains("max_unclaimed_upload_bytes (1000 bytes)"),
        "{api:?}"
    );
    assert_eq!(api.retry_after_ms, None);
}
