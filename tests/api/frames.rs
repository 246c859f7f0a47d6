//! Malformed and refused frames: each gets the spec's ERROR code, the
//! connection stays open, and the next valid frame works. Oversized messages
//! close with 1009.

use futures_util::SinkExt;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend};

on_both_stores!(
    a_client_close_is_answered_with_a_close_frame,
    every_bad_frame_gets_its_error_and_the_connection_survives,
    frames_over_the_limit_close_with_1009_and_at_the_limit_are_accepted,
    too_many_bad_frames_in_a_row_close_with_1008,
    nothing_stored_is_changed_by_bad_input,
    a_control_frame_over_125_bytes_closes_with_1002,
    an_oversized_frame_read_late_still_gets_its_close,
    a_field_given_twice_beside_a_number_beyond_f64_is_refused,
    an_unknown_field_nested_30000_deep_is_ignored,
);

async fn a_client_close_is_answered_with_a_close_frame(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    // Also with a send in flight whose ACK the client will not read.
    alice.send_msg("room", "last", "x").await;
    alice.stream.send(Message::Close(None)).await.expect("close");
    // RFC 6455 §5.5.1: the server answers the close frame before closing TCP.
    let reply = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        futures_util::StreamExt::next(&mut alice.stream),
    )
    .await
    .expect("reply in time");
    let mut reply = reply;
    // The ACK may still come first; then the close reply.
    if matches!(reply, Some(Ok(Message::Text(_)))) {
        reply = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            futures_util::StreamExt::next(&mut alice.stream),
        )
        .await
        .expect("reply in time");
    }
    assert!(matches!(reply, Some(Ok(Message::Close(_)))), "got {reply:?}");
    app.stop().await;
}

async fn every_bad_frame_gets_its_error_and_the_connection_survives(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let long_id = "x".repeat(129);
    let cases: Vec<(String, &str, Option<&str>)> = vec![
        ("not json".into(), "bad_frame", None),
        ("[1,2]".into(), "bad_frame", None),
        // A frame is a JSON object: an array with the same values in order
        // is refused and stores nothing (the last send below checks seq 1).
        (
            r#"["MSG_SEND","room","arr-1","stored from an array"]"#.into(),
            "bad_frame",
            None,
        ),
        (r#" ["SYNC","room",0]"#.into(), "bad_frame", None),
        ("\"MSG_SEND\"".into(), "bad_frame", None),
        ("{}".into(), "bad_frame", None),
        (r#"{"type":42}"#.into(), "bad_frame", None),
        (format!("{}{}", "[".repeat(5000), "]".repeat(5000)), "bad_frame", None),
        (r#"{"type":"msg_send"}"#.into(), "unknown_type", None),
        (r#"{"type":"PING"}"#.into(), "unknown_type", None),
        (
            r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"c1"}"#.into(),
            "invalid_field",
            Some("body"),
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"c1","body":""}"#.into(),
            "invalid_field",
            Some("body"),
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"c1","body":"a\u0000b"}"#.into(),
            "invalid_field",
            Some("body"),
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"c1","body":"\ud800"}"#.into(),
            "bad_frame",
            None,
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"ro om","clientMsgId":"c1","body":"b"}"#.into(),
            "invalid_field",
            Some("channelId"),
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"..","clientMsgId":"c1","body":"b"}"#.into(),
            "invalid_field",
            Some("channelId"),
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"c 1","body":"b"}"#.into(),
            "invalid_field",
            Some("clientMsgId"),
        ),
        (
            format!(r#"{{"type":"MSG_SEND","channelId":"room","clientMsgId":"{long_id}","body":"b"}}"#),
            "invalid_field",
            Some("clientMsgId"),
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":7,"body":"b"}"#.into(),
            "invalid_field",
            Some("clientMsgId"),
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"room","channelId":"room","clientMsgId":"c1","body":"b"}"#.into(),
            "invalid_field",
            Some("channelId"),
        ),
        (
            r#"{"type":"MSG_READ","messageId":"nope"}"#.into(),
            "invalid_field",
            Some("messageId"),
        ),
        (r#"{"type":"MSG_DELIVERED"}"#.into(), "invalid_field", Some("messageId")),
        (
            r#"{"type":"SYNC","channelId":"room","afterSeq":-1}"#.into(),
            "invalid_field",
            Some("afterSeq"),
        ),
        (
            r#"{"type":"SYNC","channelId":"room","afterSeq":9007199254740992}"#.into(),
            "invalid_field",
            Some("afterSeq"),
        ),
        (
            r#"{"type":"SYNC","channelId":"room","afterSeq":0,"limit":501}"#.into(),
            "invalid_field",
            Some("limit"),
        ),
        (
            r#"{"type":"SYNC","channelId":"room","afterSeq":"0"}"#.into(),
            "invalid_field",
            Some("afterSeq"),
        ),
        (
            r#"{"type":"SYNC","channelId":"room","afterSeq":18446744073709551615}"#.into(),
            "invalid_field",
            Some("afterSeq"),
        ),
        (
            r#"{"type":"SYNC","channelId":"room","afterSeq":0,"limit":18446744073709551615}"#.into(),
            "invalid_field",
            Some("limit"),
        ),
    ];
    for (text, code, field) in &cases {
        alice.send_text(text).await;
        let err = alice.recv_type("ERROR").await;
        assert_eq!(err["code"], *code, "frame {text}: {err}");
        assert_eq!(err["retryable"], false);
        if let Some(field) = field {
            assert_eq!(err["field"], *field, "frame {text}: {err}");
        }
    }
    // Sends refused for a bad field echo a valid clientMsgId.
    alice
        .send_text(r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"echo-me"}"#)
        .await;
    assert_eq!(alice.recv_type("ERROR").await["clientMsgId"], "echo-me");
    let big = "x".repeat(16_385);
    alice.send_msg("room", "too-big", &big).await;
    let err = alice.recv_type("ERROR").await;
    assert_eq!(err["code"], "body_too_large");
    assert_eq!(err["clientMsgId"], "too-big");
    alice
        .stream
        .send(Message::binary(vec![1u8, 2, 3]))
        .await
        .expect("send binary");
    assert_eq!(alice.recv_type("ERROR").await["code"], "bad_frame");
    // The connection still works.
    let ack = alice.send_and_ack("room", "ok-1", &"y".repeat(16_384)).await;
    assert_eq!(ack["seq"], 1);
    app.stop().await;
}

async fn frames_over_the_limit_close_with_1009_and_at_the_limit_are_accepted(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    // Exactly max_frame_bytes (65536): padded with an ignored field.
    let base =
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "exact", "body": "b", "pad": ""}).to_string();
    let pad = 65_536 - base.len();
    let exact =
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "exact", "body": "b", "pad": "p".repeat(pad)})
            .to_string();
    assert_eq!(exact.len(), 65_536);
    alice.send_text(&exact).await;
    assert_eq!(alice.recv_type("MSG_ACK").await["clientMsgId"], "exact");
    let over = json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "overs", "body": "b", "pad": "p".repeat(pad + 1)}).to_string();
    assert_eq!(over.len(), 65_537);
    alice.send_text(&over).await;
    assert_eq!(alice.recv_close_code().await, 1009);
    // The server is fine and nothing of the oversized frame was stored.
    let mut again = app.connect("alice").await;
    assert_eq!(again.send_and_ack("room", "after", "b").await["seq"], 2);
    app.stop().await;
}

async fn too_many_bad_frames_in_a_row_close_with_1008(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_bad_frames = 20).await;
    let mut alice = app.connect("alice").await;
    // The spec's floor: at least 20 bad frames in a row are answered.
    for _ in 0..20 {
        alice.send_text("garbage").await;
        assert_eq!(alice.recv_type("ERROR").await["code"], "bad_frame");
    }
    alice.send_text("garbage").await;
    assert_eq!(alice.recv_close_code().await, 1008);
    app.stop().await;
}

async fn nothing_stored_is_changed_by_bad_input(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let ack = alice.send_and_ack("room", "keep", "original").await;
    for frame in [
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "keep", "body": "overwrite"}),
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "keep", "body": ""}),
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "keep", "body": "a\u{0}b"}),
    ] {
        alice.send_json(frame).await;
        assert_eq!(alice.recv_type("ERROR").await["type"], "ERROR");
    }
    let stored = app.all_messages("room").await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["body"], "original");
    assert_eq!(stored[0]["messageId"], ack["messageId"]);
    app.stop().await;
}

/// A ping with a 126-byte payload breaks RFC 6455 §5.5 (control frames carry
/// at most 125 bytes): 1002, protocol error, not 1009 (which is for messages
/// over `max_frame_bytes`; it was 1009 before).
async fn a_control_frame_over_125_bytes_closes_with_1002(backend: Backend) {
    use tokio::io::AsyncWriteExt;
    let app = spawn_app(backend).await;
    let mut alice = app.connect("alice").await;
    // FIN + ping, masked, 16-bit length 126, zero mask key, payload.
    let mut frame = vec![0x89, 0x80 | 126, 0, 126, 0, 0, 0, 0];
    frame.extend(std::iter::repeat_n(b'p', 126));
    let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = alice.stream.get_mut() else {
        panic!("plain TCP expected");
    };
    tcp.write_all(&frame).await.expect("write");
    assert_eq!(alice.recv_close_code().await, 1002);
    app.stop().await;
}

/// A client that sends one frame over `max_frame_bytes` and reads a moment
/// later still gets the 1009 close frame. Before, the server dropped the
/// socket with the rest of the frame unread, the kernel reset the
/// connection, and the close frame was lost (the client saw a reset).
async fn an_oversized_frame_read_late_still_gets_its_close(backend: Backend) {
    let app = spawn_app(backend).await;
    use tokio::io::AsyncWriteExt;
    let mut alice = app.connect("alice").await;
    // A masked text frame of 70,000 bytes (64-bit length, zero mask key),
    // written in two parts, the second after the server has refused the
    // frame, as a slower client would.
    let mut frame = vec![0x81, 0x80 | 127];
    frame.extend(70_000u64.to_be_bytes());
    frame.extend([0, 0, 0, 0]);
    frame.extend(std::iter::repeat_n(b'x', 70_000));
    let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = alice.stream.get_mut() else {
        panic!("plain TCP expected");
    };
    tcp.write_all(&frame[..8_192]).await.expect("write");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let _ = tcp.write_all(&frame[8_192..]).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(alice.recv_close_code().await, 1009);
    // The connection is still open (not reset) for a while, so the client
    // can answer the close frame (RFC 6455 §7.1.1); a client library that
    // answers it (Python's websocket-client does) used to fail with a reset.
    use tokio::io::AsyncReadExt;
    let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = alice.stream.get_mut() else {
        panic!("plain TCP expected");
    };
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(std::time::Duration::from_millis(1000), tcp.read(&mut buf)).await;
    assert!(read.is_err(), "the server ended the connection at once: {read:?}");
    app.stop().await;
}

/// Which of two values counts must not depend on the parser (breaker8,
/// finding 4): a frame that also holds a number beyond f64 (decoded from its
/// own fields) refuses a repeated field as any other frame does, and stores
/// nothing.
async fn a_field_given_twice_beside_a_number_beyond_f64_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    app.create_channel("other", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    for (text, field) in [
        (
            r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"d1","body":"first","body":"second","x":1e400}"#,
            "body",
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"other","channelId":"room","clientMsgId":"d2","body":"b","x":1e400}"#,
            "channelId",
        ),
        (
            r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"d3","body":1,"body":"second"}"#,
            "body",
        ),
    ] {
        alice.send_text(text).await;
        let err = alice.recv_type("ERROR").await;
        assert_eq!(err["code"], "invalid_field", "{text}: {err}");
        assert_eq!(err["field"], field, "{text}: {err}");
        assert!(
            err["message"]
                .as_str()
                .is_some_and(|m| m.contains("appears more than once")),
            "{err}"
        );
    }
    // Nothing was stored, in either channel; the session goes on.
    assert_eq!(alice.send_and_ack("room", "after", "b").await["seq"], 1);
    assert_eq!(app.all_messages("room").await.len(), 1);
    assert_eq!(app.all_messages("other").await.len(), 0);
    app.stop().await;
}

/// §5: unknown fields are ignored, at any depth (breaker8, finding 5: past
/// serde_json's recursion limit of 128 the frame was `bad_frame`). A field
/// of the frame nested that deep is refused naming it, and stores nothing.
async fn an_unknown_field_nested_30000_deep_is_ignored(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let deep = format!("{}1{}", "[".repeat(30_000), "]".repeat(30_000));
    let refused = format!(r#"{{"type":"MSG_SEND","channelId":"room","clientMsgId":"own","body":{deep}}}"#);
    alice.send_text(&refused).await;
    let err = alice.recv_type("ERROR").await;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("invalid_field"), Some("body")),
        "{err}"
    );
    assert_eq!(err["clientMsgId"], "own");
    assert_eq!(app.all_messages("room").await.len(), 0);
    let objects = format!("{}null{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
    for (key, value) in [("deep-arrays", &deep), ("deep-objects", &objects)] {
        let text =
            format!(r#"{{"type":"MSG_SEND","x":{value},"channelId":"room","clientMsgId":"{key}","body":"{key}"}}"#);
        assert!(text.len() < 65_536);
        alice.send_text(&text).await;
        assert_eq!(alice.recv_type("MSG_ACK").await["clientMsgId"], key);
    }
    let stored = app.all_messages("room").await;
    let bodies: Vec<&str> = stored.iter().filter_map(|m| m["body"].as_str()).collect();
    assert_eq!(bodies, ["deep-arrays", "deep-objects"]);
    app.stop().await;
}
