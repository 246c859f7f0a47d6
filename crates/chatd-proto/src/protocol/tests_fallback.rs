//! The decoder's fallback (`decode.rs`, `known_fields`): a frame serde_json
//! cannot read whole only because of a value in an unknown field (a number
//! beyond f64, nesting past 128) is decoded from its own fields, with the
//! same refusals as the main path.

use super::*;

const CMID: &str = "k1";

fn duplicate(field: &'static str) -> FrameError {
    FrameError::InvalidField {
        field,
        reason: "appears more than once".into(),
        client_msg_id: Some(CMID.into()),
    }
}

/// `depth` arrays around `1`.
fn arrays(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// `depth` objects around `null`.
fn objects(depth: usize) -> String {
    format!("{}null{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

#[test]
fn a_field_given_twice_is_refused_beside_a_number_beyond_f64() {
    for (frame, field) in [
        (
            r#""channelId":"c","clientMsgId":"k1","body":"first","body":"second""#,
            "body",
        ),
        (
            r#""channelId":"nope","channelId":"c","clientMsgId":"k1","body":"b""#,
            "channelId",
        ),
        (r#""channelId":"c","clientMsgId":"k1","body":1,"body":"second""#, "body"),
        (
            r#""channelId":"c","clientMsgId":"k1","clientMsgId":"k1","body":"b""#,
            "clientMsgId",
        ),
    ] {
        // The main path's refusal, then the same frame beside 1e400 anywhere.
        let main = format!(r#"{{"type":"MSG_SEND",{frame}}}"#);
        assert_eq!(decode_client_frame(&main), Err(duplicate(field)), "{main}");
        for text in [
            format!(r#"{{"type":"MSG_SEND",{frame},"x":1e400}}"#),
            format!(r#"{{"x":[-1e999],"type":"MSG_SEND",{frame}}}"#),
        ] {
            assert_eq!(decode_client_frame(&text), Err(duplicate(field)), "{text}");
        }
    }
    let read = r#"{"x":1e400,"type":"MSG_READ","messageId":"a","messageId":"b"}"#;
    assert_eq!(field_of(decode_client_frame(read)), "messageId");
    let types = r#"{"type":"MSG_READ","type":"MSG_READ","messageId":"m","x":1e400}"#;
    assert_eq!(field_of(decode_client_frame(types)), "type");
    // An unknown field may still repeat.
    let unknown = r#"{"type":"MSG_READ","messageId":"m","x":1e400,"x":2}"#;
    assert_eq!(
        decode_client_frame(unknown),
        Ok(ClientFrame::MsgRead { message_id: "m".into() })
    );
}

#[test]
fn an_unknown_field_of_any_depth_is_ignored() {
    for depth in [128, 129, 200, 30_000] {
        for deep in [arrays(depth), objects(depth)] {
            let read = format!(r#"{{"type":"MSG_READ","x":{deep},"messageId":"m"}}"#);
            assert_eq!(
                decode_client_frame(&read),
                Ok(ClientFrame::MsgRead { message_id: "m".into() }),
                "depth {depth}"
            );
            let send = format!(r#"{{"x":{deep},"type":"MSG_SEND","channelId":"c","clientMsgId":"k1","body":"b"}}"#);
            match decode_client_frame(&send) {
                Ok(ClientFrame::MsgSend { body, .. }) => assert_eq!(body, "b"),
                other => panic!("depth {depth}: {other:?}"),
            }
            // Beside it, a field given twice is refused as on the main path.
            let twice =
                format!(r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k1","body":"a","body":"b","x":{deep}}}"#);
            assert_eq!(decode_client_frame(&twice), Err(duplicate("body")), "depth {depth}");
            // And a mistyped field is named.
            let mistyped = format!(r#"{{"type":"MSG_SEND","channelId":7,"clientMsgId":"k1","body":"b","x":{deep}}}"#);
            assert_eq!(field_of(decode_client_frame(&mistyped)), "channelId", "depth {depth}");
        }
    }
}

#[test]
fn a_lone_surrogate_beside_a_number_beyond_f64_is_bad_frame_as_on_the_main_path() {
    let main = r#"{"type":"MSG_READ","messageId":"m","y":"\ud800"}"#;
    let e = decode_client_frame(main).unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadFrame);
    let fallback = r#"{"type":"MSG_READ","messageId":"m","x":1e400,"y":["\ud800"]}"#;
    assert_eq!(decode_client_frame(fallback).unwrap_err().code(), ErrorCode::BadFrame);
}

#[test]
fn a_deep_value_that_is_not_json_stays_bad_frame() {
    let open = format!(r#"{{"type":"MSG_READ","messageId":"m","x":{}"#, "[".repeat(30_000));
    let crossed = format!(
        r#"{{"type":"MSG_READ","messageId":"m","x":{}1{}}}"#,
        "[".repeat(300),
        "}".repeat(300)
    );
    let surrogate = format!(
        r#"{{"type":"MSG_READ","messageId":"m","x":{}"\udc00"{}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    let trailing = format!(r#"{{"type":"MSG_READ","messageId":"m","x":{}}} x"#, arrays(300));
    for text in [open, crossed, surrogate, trailing] {
        let e = decode_client_frame(&text).unwrap_err();
        assert_eq!(e.code(), ErrorCode::BadFrame);
        assert!(e.to_string().contains("not valid JSON"), "{e}");
    }
    // A deep array as the whole frame: valid JSON, not an object.
    let e = decode_client_frame(&arrays(30_000)).unwrap_err();
    assert_eq!(e, FrameError::BadFrame("not a JSON object".into()));
}

#[test]
fn an_own_field_nested_too_deep_is_refused_and_named() {
    for depth in [200, 30_000] {
        let deep = arrays(depth);
        for (field, reason) in [
            ("body", "must be a string"),
            ("mentions", "is nested too deep"),
            ("replyTo", "must be a string"),
        ] {
            let mut frame = serde_json::json!({"type": "MSG_SEND", "channelId": "c", "clientMsgId": "k1", "body": "b"});
            frame[field] = serde_json::Value::Null;
            let text = frame.to_string().replace("null", &deep);
            assert_eq!(
                decode_client_frame(&text),
                Err(FrameError::InvalidField {
                    field,
                    reason: reason.into(),
                    client_msg_id: Some(CMID.into()),
                }),
                "{field} at depth {depth}"
            );
        }
        let sync = format!(r#"{{"type":"SYNC","channelId":"c","afterSeq":{deep}}}"#);
        assert_eq!(field_of(decode_client_frame(&sync)), "afterSeq");
        let ty = format!(r#"{{"type":{deep},"messageId":"m"}}"#);
        assert_eq!(
            decode_client_frame(&ty),
            Err(FrameError::BadFrame("no string field \"type\"".into()))
        );
    }
}

#[test]
fn a_deep_unknown_field_leaves_the_key_readable() {
    // A refused send is answered by its stored key (§5), and `rate_limited`
    // echoes its clientMsgId, whatever the depth of an unknown field (the
    // peeks skip it with serde's `IgnoredAny`, which serde_json reads
    // without recursion: a guard, this passed before the fallback's fix).
    let deep = arrays(30_000);
    let send = format!(r#"{{"type":"MSG_SEND","x":{deep},"channelId":"c","clientMsgId":"k1","body":"b"}}"#);
    assert_eq!(peek_client_msg_id(&send).as_deref(), Some(CMID));
    let key = peek_send_key(&send).expect("the key of a deep send");
    assert_eq!(
        (
            key.client_msg_id.as_str(),
            key.channel_id.as_deref(),
            key.body.as_deref()
        ),
        (CMID, Some("c"), Some("b"))
    );
    // Still no key for a field given twice, nor for a key nested too deep.
    let twice =
        format!(r#"{{"type":"MSG_SEND","x":{deep},"channelId":"c","channelId":"d","clientMsgId":"k1","body":"b"}}"#);
    assert_eq!(peek_send_key(&twice), None);
    let own = format!(r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":{deep},"body":"b"}}"#);
    assert_eq!((peek_send_key(&own), peek_client_msg_id(&own)), (None, None));
}

fn field_of(result: Result<ClientFrame, FrameError>) -> &'static str {
    match result {
        Err(FrameError::InvalidField { field, .. }) => field,
        other => panic!("expected invalid_field, got {other:?}"),
    }
}
