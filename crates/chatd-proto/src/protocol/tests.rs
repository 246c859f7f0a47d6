//! Tests of the codec: every frame type decodes, validates and encodes as
//! the contract says; property tests; the server frames' fast decoding.

use serde_json::{Map, Value};

use super::*;
use crate::ids::{ChannelId, ClientMsgId, UserId, MAX_SEQ};

mod codec {
    use super::*;

    #[test]
    fn every_frame_type_name_is_listed_once() {
        let mut names = ServerFrame::TYPE_NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ServerFrame::TYPE_NAMES.len(), "a name listed twice");
        let frame = ServerFrame::decode(r#"{"type":"ERROR","code":"bad_frame","message":"m","retryable":false}"#)
            .expect("an ERROR frame");
        assert_eq!(ServerFrame::known_type_name(frame.type_name()), Some("ERROR"));
        assert_eq!(ServerFrame::known_type_name("MSG_SEND"), None, "a client frame");
    }

    /// `ClientFrame::TYPE_NAMES` is the decoder's table of types (`CLIENT_TYPES`),
    /// in the same order, and each name is what the frame serializes as.
    #[test]
    fn every_client_frame_type_name_is_the_decoders() {
        let table: Vec<&str> = CLIENT_TYPES.iter().map(|(name, _)| *name).collect();
        assert_eq!(ClientFrame::TYPE_NAMES, table.as_slice());
        let frame = ClientFrame::Typing {
            channel_id: "room".into(),
            state: "start".into(),
        };
        let json = serde_json::to_value(&frame).expect("json");
        assert_eq!(json["type"], frame.type_name());
        let frame = ClientFrame::PresenceSub { user_ids: Vec::new() };
        assert_eq!(serde_json::to_value(&frame).expect("json")["type"], frame.type_name());
    }

    #[test]
    fn frames_are_objects_never_arrays() {
        for text in [
            r#"["MSG_SEND","room","k","hi"]"#,
            "\n\t [\"SYNC\",\"room\",0]",
            r#"["MSG_READ","01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e55"]"#,
        ] {
            match decode_client_frame(text) {
                Err(FrameError::BadFrame(reason)) => assert_eq!(reason, "not a JSON object", "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(matches!(decode_client_frame("[1,"), Err(FrameError::BadFrame(r)) if r.starts_with("not valid JSON")));
        assert!(decode_client_frame(" \r\n{\"type\":\"SYNC\",\"channelId\":\"room\",\"afterSeq\":0}").is_ok());
    }

    #[test]
    fn a_send_key_is_peeked_only_from_an_unambiguous_send() {
        let key = peek_send_key(r#"{"type":"MSG_SEND","clientMsgId":"k","channelId":"no room","body":7,"x":[1]}"#)
            .expect("a send");
        assert_eq!(key.client_msg_id.as_str(), "k");
        assert_eq!(key.channel_id.as_deref(), Some("no room"));
        assert_eq!(key.body, None, "a body that is not a string");
        for text in [
            r#"{"type":"MSG_READ","clientMsgId":"k"}"#,
            r#"{"type":"MSG_SEND","clientMsgId":"has space"}"#,
            r#"{"type":"MSG_SEND","body":"b"}"#,
            r#"{"type":"MSG_SEND","clientMsgId":"k","body":"a","body":"b"}"#,
            r#"{"type":"MSG_SEND","clientMsgId":"k","body":"\ud800"}"#,
            r#"["MSG_SEND","k"]"#,
            r#" ["MSG_SEND","k",null,"b"]"#,
            "not json",
        ] {
            assert_eq!(peek_send_key(text), None, "{text}");
        }
    }

    fn field_of(err: FrameError) -> &'static str {
        match err {
            FrameError::InvalidField { field, .. } => field,
            other => panic!("expected invalid_field, got {other:?}"),
        }
    }

    #[test]
    fn sync_pages_back_from_before_seq_or_the_newest() {
        let page = |text: &str| match decode_client_frame(text).and_then(|f| f.validate(16)) {
            Ok(Command::Sync { page, .. }) => Ok(page),
            Ok(other) => panic!("{other:?}"),
            Err(FrameError::InvalidField { field, .. }) => Err(field),
            Err(other) => panic!("{other:?}"),
        };
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","latest":true}"#),
            Ok(Page::Before(i64::MAX))
        );
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","beforeSeq":7,"afterSeq":3}"#),
            Ok(Page::Before(7))
        );
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","afterSeq":3,"latest":false}"#),
            Ok(Page::After(3))
        );
        assert_eq!(page(r#"{"type":"SYNC","channelId":"c"}"#), Err("afterSeq"));
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","beforeSeq":0}"#),
            Err("beforeSeq")
        );
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","beforeSeq":-1}"#),
            Err("beforeSeq")
        );
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","beforeSeq":"x"}"#),
            Err("beforeSeq")
        );
        assert_eq!(page(r#"{"type":"SYNC","channelId":"c","latest":1}"#), Err("latest"));
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","latest":true,"beforeSeq":5}"#),
            Err("latest")
        );
    }

    #[test]
    fn bad_frames_are_classified() {
        assert_eq!(decode_client_frame("nope").unwrap_err().code(), ErrorCode::BadFrame);
        assert_eq!(decode_client_frame("[1]").unwrap_err().code(), ErrorCode::BadFrame);
        assert_eq!(decode_client_frame("{}").unwrap_err().code(), ErrorCode::BadFrame);
        assert_eq!(
            decode_client_frame(r#"{"type":1}"#).unwrap_err().code(),
            ErrorCode::BadFrame
        );
        assert_eq!(
            decode_client_frame(r#"{"type":"msg_send"}"#).unwrap_err(),
            FrameError::UnknownType
        );
        let deep = "[".repeat(10_000);
        assert_eq!(decode_client_frame(&deep).unwrap_err().code(), ErrorCode::BadFrame);
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let e = decode_client_frame(r#"{"type":"MSG_SEND","clientMsgId":"c1","channelId":"x"}"#).unwrap_err();
        assert_eq!(field_of(e), "body");
        let e = decode_client_frame(r#"{"type":"MSG_SEND","clientMsgId":"c1","channelId":7,"body":"b"}"#).unwrap_err();
        match e {
            FrameError::InvalidField {
                field, client_msg_id, ..
            } => {
                assert_eq!(field, "channelId");
                assert_eq!(client_msg_id.as_deref(), Some("c1"));
            }
            other => panic!("{other:?}"),
        }
        let e = decode_client_frame(r#"{"type":"SYNC","channelId":"c","afterSeq":1.5}"#).unwrap_err();
        assert_eq!(field_of(e), "afterSeq");
        let e = decode_client_frame(r#"{"type":"SYNC","channelId":"c","afterSeq":1,"limit":"x"}"#).unwrap_err();
        assert_eq!(field_of(e), "limit");
    }

    #[test]
    fn a_field_given_twice_is_refused_and_named() {
        let e =
            decode_client_frame(r#"{"type":"MSG_SEND","clientMsgId":"c1","channelId":"a","channelId":"b","body":"x"}"#)
                .unwrap_err();
        match e {
            FrameError::InvalidField {
                field,
                reason,
                client_msg_id,
            } => {
                assert_eq!(field, "channelId");
                assert_eq!(reason, "appears more than once");
                assert_eq!(client_msg_id.as_deref(), Some("c1"));
            }
            other => panic!("{other:?}"),
        }
        let e = decode_client_frame(r#"{"type":"SYNC","channelId":"c","afterSeq":1,"afterSeq":2}"#).unwrap_err();
        assert_eq!(field_of(e), "afterSeq");
        // two different types: refused in either order, never taken as the last one
        for text in [
            r#"{"type":"FOO","type":"MSG_SEND","channelId":"a","clientMsgId":"c1","body":"x"}"#,
            r#"{"type":"MSG_SEND","type":"FOO","channelId":"a","clientMsgId":"c1","body":"x"}"#,
            r#"{"type":"MSG_READ","channelId":"a","type":"MSG_SEND","clientMsgId":"c1","body":"x"}"#,
        ] {
            let e = decode_client_frame(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidField, "{text}");
            assert_eq!(field_of(e), "type", "{text}");
        }
        // `"type"` inside a value is not a second type
        let f = decode_client_frame(r#"{"type":"MSG_SEND","channelId":"a","clientMsgId":"c1","body":"\"type\""}"#);
        assert!(f.is_ok(), "{f:?}");
        let e = decode_client_frame(r#"{"type":"MSG_READ","type":"MSG_READ","messageId":"m"}"#).unwrap_err();
        assert_eq!(field_of(e), "type");
        // An unknown field may repeat: unknown fields are ignored.
        assert!(decode_client_frame(r#"{"type":"MSG_READ","messageId":"m","x":1,"x":2}"#).is_ok());
    }

    #[test]
    fn client_msg_id_can_be_peeked() {
        let send = r#"{"type":"MSG_SEND","channelId":"r","clientMsgId":"c-1","body":"b","x":[1,{"y":2}]}"#;
        assert_eq!(peek_client_msg_id(send).as_deref(), Some("c-1"));
        assert_eq!(
            peek_client_msg_id(r#"{"type":"MSG_SEND","clientMsgId":"bad id"}"#),
            None
        );
        assert_eq!(peek_client_msg_id(r#"{"type":"SYNC","clientMsgId":"c-1"}"#), None);
        assert_eq!(peek_client_msg_id("nope"), None);
    }

    #[test]
    fn fast_and_slow_paths_agree() {
        // Duplicate keys: the typed decoder refuses them, and so does the
        // slow path (it used to take the last one), naming the field.
        let dup = r#"{"type":"MSG_READ","messageId":"a","messageId":"b"}"#;
        assert_eq!(field_of(decode_client_frame(dup).unwrap_err()), "messageId");
        let ok = r#"{"type":"SYNC","channelId":"c","afterSeq":3}"#;
        assert_eq!(
            decode_client_frame(ok).unwrap(),
            ClientFrame::Sync {
                channel_id: "c".into(),
                after_seq: Some(3),
                limit: None,
                before_seq: None,
                latest: None,
                thread_id: None,
            }
        );
    }

    #[test]
    fn a_number_beyond_f64_in_an_unknown_field_is_ignored() {
        // serde_json cannot read 1e400 as a value; an unknown field is still ignored (§5).
        let f = decode_client_frame(r#"{"type":"MSG_READ","extra":1e400,"messageId":"m","y":[-1e999]}"#);
        assert_eq!(f.unwrap(), ClientFrame::MsgRead { message_id: "m".into() });
        let send = r#"{"extra":1e400,"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"b"}"#;
        assert!(matches!(decode_client_frame(send), Ok(ClientFrame::MsgSend { .. })));
        // In a field the frame has, it is that field's refusal, with the key echoed.
        let sync = r#"{"type":"SYNC","channelId":"c","afterSeq":1e400}"#;
        let e = decode_client_frame(sync).unwrap_err();
        assert_eq!((e.code(), field_of(e)), (ErrorCode::InvalidField, "afterSeq"));
        let send = r#"{"type":"MSG_SEND","channelId":"c","clientMsgId":"k1","body":"b","mentions":[1e400]}"#;
        match decode_client_frame(send).unwrap_err() {
            FrameError::InvalidField {
                field, client_msg_id, ..
            } => assert_eq!((field, client_msg_id.as_deref()), ("mentions", Some("k1"))),
            other => panic!("{other:?}"),
        }
        // Still not JSON: bad_frame.
        for text in [
            r#"{"type":"MSG_READ","messageId":"m","x":1e400"#,
            r#"{"type":"MSG_READ","x":01}"#,
        ] {
            let e = decode_client_frame(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::BadFrame, "{text}");
        }
    }

    #[test]
    fn an_integral_number_in_an_integer_field_is_that_integer() {
        for (given, seq) in [("-0", 0), ("0.0", 0), ("3.0", 3), ("3e0", 3), ("1e3", 1000)] {
            let text = format!(r#"{{"type":"SYNC","channelId":"c","afterSeq":{given}}}"#);
            match decode_client_frame(&text) {
                Ok(ClientFrame::Sync { after_seq, .. }) => assert_eq!(after_seq, Some(seq), "{given}"),
                other => panic!("{given}: {other:?}"),
            }
        }
        for given in ["0.5", "-1.25", "1e300"] {
            let text = format!(r#"{{"type":"SYNC","channelId":"c","afterSeq":{given}}}"#);
            let e = decode_client_frame(&text).unwrap_err();
            assert_eq!(
                (e.code(), field_of(e)),
                (ErrorCode::InvalidField, "afterSeq"),
                "{given}"
            );
        }
    }

    #[test]
    fn a_fraction_whose_double_is_integral_is_refused() {
        // The tenth hostile run: the parsed f64 of each is 1.0, 0.0 or 3.0.
        for (field, given) in [
            ("afterSeq", "0.99999999999999999"),
            ("afterSeq", "1e-400"),
            ("afterSeq", " 1.0000000000000000001 "),
            ("limit", "2.9999999999999999"),
        ] {
            let text = format!(r#"{{"type":"SYNC","channelId":"c","{field}":{given}}}"#);
            let e = decode_client_frame(&text).unwrap_err();
            assert_eq!((e.code(), field_of(e)), (ErrorCode::InvalidField, field), "{text}");
        }
        // The same numbers inside another field's value are not looked at.
        let text = r#"{"type":"SYNC","channelId":"c","afterSeq":2e0,"x":{"afterSeq":0.99999999999999999}}"#;
        match decode_client_frame(text) {
            Ok(ClientFrame::Sync { after_seq, .. }) => assert_eq!(after_seq, Some(2)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let f = decode_client_frame(r#"{"type":"MSG_READ","messageId":"m","ts":5,"x":{"y":[]}}"#).unwrap();
        assert_eq!(f, ClientFrame::MsgRead { message_id: "m".into() });
    }

    #[test]
    fn reply_to_and_thread_id_are_message_ids_named_when_wrong() {
        let id = "0190a6e2-7b1c-7f00-8000-000000000001";
        let text = format!(
            r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"b","replyTo":"{id}","threadId":null}}"#
        );
        match decode_client_frame(&text).and_then(|f| f.validate(16)) {
            Ok(Command::Send {
                reply_to, thread_id, ..
            }) => {
                assert_eq!(reply_to.map(|u| u.to_string()).as_deref(), Some(id));
                assert_eq!(thread_id, None, "null is absent");
            }
            other => panic!("refused: {other:?}"),
        }
        for (field, value) in [
            ("replyTo", "\"x\""),
            ("threadId", "7"),
            ("threadId", "\"0190A6E2-7B1C-7F00-8000-000000000001\""),
        ] {
            let text =
                format!(r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"b","{field}":{value}}}"#);
            let error = decode_client_frame(&text).and_then(|f| f.validate(16)).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidField, "{text}");
            let frame = error.to_error_frame();
            assert_eq!(frame.field.as_deref(), Some(field), "{text}");
            assert_eq!(frame.client_msg_id.as_deref(), Some("k"), "{text}");
        }
        let sync = format!(r#"{{"type":"SYNC","channelId":"c","latest":true,"threadId":"{id}"}}"#);
        assert!(matches!(
            decode_client_frame(&sync).and_then(|f| f.validate(16)),
            Ok(Command::Sync { thread_id: Some(_), .. })
        ));
        let bad = r#"{"type":"SYNC","channelId":"c","latest":true,"threadId":"nope"}"#;
        assert_eq!(
            field_of(decode_client_frame(bad).and_then(|f| f.validate(16)).unwrap_err()),
            "threadId"
        );
        let key = peek_send_key(&format!(
            r#"{{"type":"MSG_SEND","clientMsgId":"k","replyTo":5,"threadId":"{id}"}}"#
        ))
        .unwrap();
        assert_eq!(key.reply_to.as_deref(), Some("5"));
        assert_eq!(key.thread_id.as_deref(), Some(id));
    }

    #[test]
    fn previews_are_cut_at_a_character_boundary() {
        assert_eq!(preview_text("short"), "short");
        assert_eq!(preview_text(&"x".repeat(300)).len(), PREVIEW_BYTES);
        // 'é' is two bytes: 199 bytes of 'x' then 'é' would end at 201.
        let text = format!("{}é", "x".repeat(199));
        assert_eq!(preview_text(&text), "x".repeat(199));
        let emoji = "🙂".repeat(60);
        assert_eq!(preview_text(&emoji).len(), 200, "50 four-byte characters");
    }

    #[test]
    fn attachments_are_checked_and_let_the_body_be_empty() {
        let id = "01a24a0f-85e2-7144-875a-7b61f7db7d78";
        let check = |fields: &str| {
            decode_client_frame(&format!(
                r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k",{fields}}}"#
            ))
            .and_then(|f| f.validate(16))
        };
        let ok = check(&format!(r#""body":"","attachments":["{id}"]"#)).expect("an empty body with attachments");
        assert!(matches!(&ok, Command::Send { attachments, .. } if attachments.len() == 1));
        assert_eq!(field_of(ok.with_attachments_within(0).unwrap_err()), "attachments");
        for bad in [
            format!(r#""body":"hi","attachments":["{id}","{id}"]"#),
            r#""body":"hi","attachments":["x"]"#.to_owned(),
            r#""body":"hi","attachments":[1]"#.to_owned(),
        ] {
            assert_eq!(field_of(check(&bad).unwrap_err()), "attachments", "{bad}");
        }
        assert_eq!(field_of(check(r#""body":"","attachments":[]"#).unwrap_err()), "body");
        assert_eq!(attachments_key_of(None), "[]");
        let listed = serde_json::json!([id]);
        assert_eq!(attachments_key_of(Some(&listed)), format!(r#"["{id}"]"#));
        assert_eq!(
            attachment_ids_key(&[uuid::Uuid::parse_str(id).expect("uuid")]),
            attachments_key_of(Some(&listed))
        );
    }

    #[test]
    fn mentions_are_checked_deduplicated_and_counted() {
        let decode = |text: &str| decode_client_frame(text).and_then(|f| f.validate(100));
        let ok = decode(
            r#"{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"hi","mentions":["bob","amy","bob"],"mentionAll":true}"#,
        );
        match ok {
            Ok(Command::Send {
                mentions, mention_all, ..
            }) => {
                assert_eq!(
                    mentions,
                    vec![UserId::parse("bob").unwrap(), UserId::parse("amy").unwrap()]
                );
                assert!(mention_all);
            }
            other => panic!("{other:?}"),
        }
        for bad in [
            r#""mentions":"bob""#,
            r#""mentions":[1]"#,
            r#""mentions":["b o b"]"#,
            r#""mentions":[".."]"#,
        ] {
            let text = format!(r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"hi",{bad}}}"#);
            let e = decode(&text).unwrap_err();
            assert_eq!(field_of(e.clone()), "mentions", "{bad}");
            assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("k"), "{bad}");
        }
        let e = decode(r#"{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"hi","mentionAll":"yes"}"#);
        assert_eq!(field_of(e.unwrap_err()), "mentionAll");
        let three =
            decode(r#"{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"hi","mentions":["a","b","c","a"]}"#)
                .unwrap();
        assert!(three.clone().with_mentions_within(3).is_ok());
        assert_eq!(field_of(three.with_mentions_within(2).unwrap_err()), "mentions");
    }

    #[test]
    fn validation_checks_grammar_and_limits() {
        let send = |body: &str, cid: &str| ClientFrame::MsgSend {
            channel_id: "room".into(),
            client_msg_id: cid.into(),
            body: body.into(),
            reply_to: None,
            thread_id: None,
            mentions: None,
            mention_all: None,
            attachments: None,
        };
        assert!(matches!(send("hi", "c1").validate(16), Ok(Command::Send { .. })));
        assert_eq!(field_of(send("", "c1").validate(16).unwrap_err()), "body");
        assert_eq!(field_of(send("a\0b", "c1").validate(16).unwrap_err()), "body");
        assert_eq!(field_of(send("hi", "c 1").validate(16).unwrap_err()), "clientMsgId");
        let e = send(&"x".repeat(17), "c1").validate(16).unwrap_err();
        assert_eq!(e.code(), ErrorCode::BodyTooLarge);
        assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("c1"));
        assert!(send(&"é".repeat(8), "c1").validate(16).is_ok());
        assert_eq!(
            send(&"é".repeat(9), "c1").validate(16).unwrap_err().code(),
            ErrorCode::BodyTooLarge
        );

        let sync = |after: i64, limit: Option<i64>| ClientFrame::Sync {
            channel_id: "room".into(),
            after_seq: Some(after),
            limit,
            before_seq: None,
            latest: None,
            thread_id: None,
        };
        assert!(matches!(
            sync(0, None).validate(16),
            Ok(Command::Sync { limit: 100, .. })
        ));
        assert_eq!(field_of(sync(-1, None).validate(16).unwrap_err()), "afterSeq");
        assert_eq!(field_of(sync(MAX_SEQ + 1, None).validate(16).unwrap_err()), "afterSeq");
        assert_eq!(field_of(sync(0, Some(0)).validate(16).unwrap_err()), "limit");
        assert_eq!(field_of(sync(0, Some(501)).validate(16).unwrap_err()), "limit");
        assert!(sync(MAX_SEQ, Some(500)).validate(16).is_ok());
    }

    #[test]
    fn entry_frames_decode_and_validate() {
        let id = "01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e55";
        let target = uuid::Uuid::try_parse(id).unwrap();
        let edit = format!(r#"{{"type":"MSG_EDIT","clientMsgId":"k1","messageId":"{id}","body":"fixed"}}"#);
        assert_eq!(
            decode_client_frame(&edit).unwrap().validate(16).unwrap(),
            Command::Entry {
                client_msg_id: ClientMsgId::parse("k1").unwrap(),
                target,
                change: EntryChange::Edit { body: "fixed".into() },
            }
        );
        let delete = format!(r#"{{"type":"MSG_DELETE","clientMsgId":"k2","messageId":"{id}"}}"#);
        assert!(matches!(
            decode_client_frame(&delete).unwrap().validate(16),
            Ok(Command::Entry {
                change: EntryChange::Delete,
                ..
            })
        ));
        let react = |emoji: &str, op: &str| {
            let text = serde_json::json!({"type":"MSG_REACT","clientMsgId":"k3","messageId":id,"emoji":emoji,"op":op})
                .to_string();
            decode_client_frame(&text).and_then(|f| f.validate(16))
        };
        assert_eq!(
            react("👍", "remove").unwrap(),
            Command::Entry {
                client_msg_id: ClientMsgId::parse("k3").unwrap(),
                target,
                change: EntryChange::React {
                    emoji: "👍".into(),
                    add: false
                },
            }
        );
        assert!(react(&"a".repeat(64), "add").is_ok());
        // Emoji sequences keep their joiner and variation selector.
        assert!(react("👩\u{200d}💻", "add").is_ok());
        assert!(react("❤\u{fe0f}", "add").is_ok());
        for (emoji, op, field) in [
            ("", "add", "emoji"),
            (&*"a".repeat(65), "add", "emoji"),
            ("a b", "add", "emoji"),
            ("a\u{7}", "add", "emoji"),
            ("a\u{3000}", "add", "emoji"),
            // Invisible characters that make a reaction show as another or
            // as nothing (accepted before; fifth breaker run).
            ("\u{202e}👍", "add", "emoji"),
            ("👍\u{2066}", "add", "emoji"),
            ("\u{200f}👍", "add", "emoji"),
            ("\u{200b}", "add", "emoji"),
            // Others that show as nothing or make a look-alike (sixth run).
            ("👍\u{2060}", "add", "emoji"),
            ("👍\u{e0020}", "add", "emoji"),
            ("\u{feff}", "add", "emoji"),
            ("\u{3164}", "add", "emoji"),
            ("\u{200d}", "add", "emoji"),
            // Lone combining marks and placeholders (tenth run).
            ("\u{301}", "add", "emoji"),
            ("\u{20dd}", "add", "emoji"),
            ("\u{e31}", "add", "emoji"),
            ("\u{1d16d}", "add", "emoji"),
            ("\u{fffc}", "add", "emoji"),
            ("\u{1d159}", "add", "emoji"),
            ("👍", "toggle", "op"),
            ("👍", "ADD", "op"),
        ] {
            let e = react(emoji, op).unwrap_err();
            assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("k3"));
            assert_eq!(field_of(e), field, "{emoji:?} {op:?}");
        }
        // An empty edit body is judged by the server with its target
        // (allowed for a message with attachments, §15); grammar errors of
        // the body and the target, echoing the key.
        assert!(decode_client_frame(&format!(
            r#"{{"type":"MSG_EDIT","clientMsgId":"k1","messageId":"{id}","body":""}}"#
        ))
        .unwrap()
        .validate(16)
        .is_ok());
        let e = decode_client_frame(&format!(
            r#"{{"type":"MSG_EDIT","clientMsgId":"k1","messageId":"{id}","body":"a\u0000"}}"#
        ))
        .unwrap()
        .validate(16)
        .unwrap_err();
        assert_eq!(field_of(e), "body");
        let e = decode_client_frame(&format!(
            r#"{{"type":"MSG_EDIT","clientMsgId":"k1","messageId":"{id}","body":"{}"}}"#,
            "x".repeat(17)
        ))
        .unwrap()
        .validate(16)
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::BodyTooLarge);
        assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("k1"));
        let e = decode_client_frame(r#"{"type":"MSG_DELETE","clientMsgId":"k1","messageId":"NOPE"}"#)
            .unwrap()
            .validate(16)
            .unwrap_err();
        assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("k1"));
        assert_eq!(field_of(e), "messageId");
        // Missing and mistyped fields are named by the decoder.
        let e =
            decode_client_frame(r#"{"type":"MSG_REACT","clientMsgId":"k1","messageId":"m","emoji":"x"}"#).unwrap_err();
        assert_eq!(field_of(e), "op");
        let e = decode_client_frame(r#"{"type":"MSG_EDIT","clientMsgId":"k1","messageId":5,"body":"x"}"#).unwrap_err();
        assert_eq!(field_of(e), "messageId");
        assert_eq!(
            peek_client_msg_id(r#"{"type":"MSG_REACT","clientMsgId":"k9"}"#).as_deref(),
            Some("k9")
        );
    }

    #[test]
    fn recv_carries_kind_and_read_state() {
        let target = uuid::Uuid::now_v7();
        let reaction = RecvMessage {
            kind: EntryKind::Reaction,
            target_id: Some(target),
            emoji: Some("🎉".into()),
            op: Some(ReactOp::Add),
            ..Default::default()
        };
        let v: Value = serde_json::to_value(&reaction).unwrap();
        assert_eq!(v["kind"], "reaction");
        assert_eq!(v["targetId"], target.to_string());
        assert_eq!(v["op"], "add");
        assert!(v.get("deleted").is_none() && v.get("editedAt").is_none() && v.get("reactions").is_none());
        let read = RecvMessage {
            deleted: true,
            edited_at: Some(7),
            reactions: Some(vec![ReactionCount {
                emoji: "👍".into(),
                count: 2,
                me: true,
            }]),
            ..Default::default()
        };
        let v: Value = serde_json::to_value(&read).unwrap();
        assert_eq!(v["kind"], "message");
        assert_eq!(v["deleted"], true);
        assert_eq!(v["editedAt"], 7);
        assert_eq!(v["reactions"][0]["me"], true);
        // A v1 MSG_RECV (no kind) decodes as a message.
        let old = r#"{"type":"MSG_RECV","messageId":"01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e55","channelId":"c","senderId":"u","seq":1,"body":"b","ts":1,"clientMsgId":"k"}"#;
        match ServerFrame::decode(old).unwrap() {
            ServerFrame::MsgRecv(m) => assert_eq!(m.kind, EntryKind::Message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn typing_frames_are_validated() {
        let typing = |text: &str| decode_client_frame(text).and_then(|f| f.validate(16));
        assert_eq!(
            typing(r#"{"type":"TYPING","channelId":"room","state":"start"}"#).unwrap(),
            Command::Typing {
                channel_id: ChannelId::parse("room").unwrap(),
                start: true
            }
        );
        assert!(matches!(
            typing(r#"{"type":"TYPING","channelId":"room","state":"stop","x":1}"#),
            Ok(Command::Typing { start: false, .. })
        ));
        for (text, field) in [
            (r#"{"type":"TYPING","channelId":"room","state":"START"}"#, "state"),
            (r#"{"type":"TYPING","channelId":"room","state":"typing"}"#, "state"),
            (r#"{"type":"TYPING","channelId":"room","state":true}"#, "state"),
            (r#"{"type":"TYPING","channelId":"room"}"#, "state"),
            (
                r#"{"type":"TYPING","channelId":"no room","state":"start"}"#,
                "channelId",
            ),
            (r#"{"type":"TYPING","channelId":7,"state":"start"}"#, "channelId"),
            (r#"{"type":"TYPING","state":"start"}"#, "channelId"),
        ] {
            let e = typing(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidField, "{text}");
            assert_eq!(field_of(e), field, "{text}");
        }
    }

    #[test]
    fn presence_subscriptions_are_validated() {
        let sub = |text: &str| decode_client_frame(text).and_then(|f| f.validate(16));
        match sub(r#"{"type":"PRESENCE_SUB","userIds":["bob","carol","bob"]}"#).unwrap() {
            Command::PresenceSub { user_ids } => {
                let ids: Vec<&str> = user_ids.iter().map(UserId::as_str).collect();
                assert_eq!(ids, ["bob", "carol"], "repeats removed, order kept");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            sub(r#"{"type":"PRESENCE_SUB","userIds":[]}"#).unwrap(),
            Command::PresenceSub { user_ids: Vec::new() }
        );
        for text in [
            r#"{"type":"PRESENCE_SUB","userIds":["ok","not ok"]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":[".."]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":[""]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":[7]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":[["bob"]]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":"bob"}"#,
            r#"{"type":"PRESENCE_SUB","userIds":null}"#,
            r#"{"type":"PRESENCE_SUB"}"#,
        ] {
            let e = sub(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidField, "{text}");
            assert_eq!(field_of(e), "userIds", "{text}");
        }
        let long = format!(r#"{{"type":"PRESENCE_SUB","userIds":["{}"]}}"#, "a".repeat(129));
        assert_eq!(field_of(sub(&long).unwrap_err()), "userIds");
        assert!(check_presence_count(500, 500).is_ok());
        let e = check_presence_count(501, 500).unwrap_err();
        assert_eq!(e.to_error_frame().field.as_deref(), Some("userIds"));
        assert_eq!(e.code(), ErrorCode::InvalidField);
    }

    #[test]
    fn typing_and_presence_frames_have_the_wire_shape() {
        let start = ServerFrame::Typing {
            channel_id: "room".into(),
            user_id: "alice".into(),
            state: TypingState::Start,
            expires_at: Some(42),
        };
        assert_eq!(
            start.encode(),
            r#"{"type":"TYPING","channelId":"room","userId":"alice","state":"start","expiresAt":42}"#
        );
        let stop = ServerFrame::Typing {
            channel_id: "room".into(),
            user_id: "alice".into(),
            state: TypingState::Stop,
            expires_at: None,
        };
        assert_eq!(
            stop.encode(),
            r#"{"type":"TYPING","channelId":"room","userId":"alice","state":"stop"}"#
        );
        let online = ServerFrame::Presence {
            user_id: "bob".into(),
            status: PresenceStatus::Online,
            last_seen_at: None,
        };
        assert_eq!(
            online.encode(),
            r#"{"type":"PRESENCE","userId":"bob","status":"online"}"#
        );
        let offline = ServerFrame::Presence {
            user_id: "bob".into(),
            status: PresenceStatus::Offline,
            last_seen_at: Some(7),
        };
        assert_eq!(
            offline.encode(),
            r#"{"type":"PRESENCE","userId":"bob","status":"offline","lastSeenAt":7}"#
        );
        for frame in [start, stop, online, offline] {
            assert_eq!(ServerFrame::decode(&frame.encode()).unwrap(), frame);
        }
    }

    #[test]
    fn lone_surrogates_are_refused() {
        let e = decode_client_frame(r#"{"type":"MSG_SEND","clientMsgId":"c","channelId":"r","body":"\ud800"}"#)
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::BadFrame);
    }

    #[test]
    fn server_frames_have_the_wire_shape() {
        let id = uuid::Uuid::now_v7();
        let ack = ServerFrame::MsgAck(AckFrame {
            client_msg_id: "c1".into(),
            message_id: id,
            channel_id: "room".into(),
            seq: 3,
            ts: 10,
            duplicate: false,
        });
        let v: Value = serde_json::from_str(&ack.encode()).unwrap();
        assert_eq!(v["type"], "MSG_ACK");
        assert_eq!(v["clientMsgId"], "c1");
        assert_eq!(v["messageId"], id.to_string());
        assert_eq!(v["duplicate"], false);
        let msg = RecvMessage {
            message_id: id,
            channel_id: "room".into(),
            sender_id: "alice".into(),
            seq: 1,
            body: "hi".into(),
            ts: 5,
            client_msg_id: Some("c1".into()),
            ..Default::default()
        };
        // A frame's entry: its key, no `byAdmin`; one made through an HTTP
        // route with the admin token: `byAdmin`, no key (§12).
        let v: Value = serde_json::from_str(&ServerFrame::MsgRecv(Box::new(msg.clone())).encode()).unwrap();
        assert_eq!((&v["clientMsgId"], v.get("byAdmin")), (&Value::from("c1"), None));
        let by_admin = RecvMessage {
            client_msg_id: None,
            by_admin: true,
            ..msg.clone()
        };
        let v: Value = serde_json::from_str(&ServerFrame::MsgRecv(Box::new(by_admin.clone())).encode()).unwrap();
        assert_eq!((v.get("clientMsgId"), &v["byAdmin"]), (None, &Value::Bool(true)));
        match serde_json::from_value::<ServerFrame>(v).unwrap() {
            ServerFrame::MsgRecv(back) => assert_eq!(*back, by_admin),
            other => panic!("{other:?}"),
        }
        let batch = ServerFrame::SyncBatch {
            channel_id: "room".into(),
            messages: vec![TaggedMessage::MsgRecv(msg.clone())],
            has_more: false,
            last_seq: Some(1),
            thread_id: None,
        };
        let v: Value = serde_json::from_str(&batch.encode()).unwrap();
        assert_eq!(v["messages"][0]["type"], "MSG_RECV");
        assert_eq!(v["messages"][0]["senderId"], "alice");
        assert_eq!(v["hasMore"], false);
        let e = ServerFrame::Error(ErrorFrame::new(ErrorCode::RateLimited, "slow down"));
        let v: Value = serde_json::from_str(&e.encode()).unwrap();
        assert_eq!(v["code"], "rate_limited");
        assert_eq!(v["retryable"], true);
        assert!(v.get("field").is_none());
        let back: ServerFrame = serde_json::from_str(&ServerFrame::MsgRecv(Box::new(msg)).encode()).unwrap();
        assert!(matches!(back, ServerFrame::MsgRecv(_)));
    }

    /// A MSG_RECV with every field of [`RecvMessage`] set, pinned to its
    /// exact text (field order, names, the flags left out when false), and
    /// decoded back equal by both decoders: the frame's Rust shape may
    /// change (the message boxed, fields grouped) without its bytes
    /// changing.
    #[test]
    fn msg_recv_with_every_field_set_keeps_its_exact_text() {
        let id = |n: u128| uuid::Uuid::from_u128(n);
        let message = RecvMessage {
            message_id: id(1),
            channel_id: "room".into(),
            sender_id: "alice".into(),
            seq: 2,
            body: "hi \"you\"".into(),
            ts: 3,
            client_msg_id: Some("k1".into()),
            by_admin: true,
            kind: EntryKind::Reaction,
            target_id: Some(id(4)),
            emoji: Some("👍".into()),
            op: Some(ReactOp::Remove),
            noop: true,
            edited_at: Some(5),
            deleted: true,
            expired: true,
            reactions: Some(vec![ReactionCount {
                emoji: "🎉".into(),
                count: 6,
                me: true,
            }]),
            reply_to: Some(id(7)),
            reply_preview: Some(ReplyPreview {
                sender_id: "bob".into(),
                body: "quoted".into(),
                deleted: true,
            }),
            thread_id: Some(id(8)),
            thread: Some(ThreadSummary {
                reply_count: 9,
                last_reply_at: 10,
                last_reply_seq: 11,
                participants: vec!["bob".into(), "carol".into()],
            }),
            mentions: vec!["bob".into()],
            mention_all: true,
            attachments: vec![AttachmentObject {
                attachment_id: id(12),
                content_type: "image/png".into(),
                size: 13,
                filename: Some("a.png".into()),
                width: Some(14),
                height: Some(15),
                url: "/v1/attachments/x?exp=1&sig=s".into(),
                thumbnail_url: Some("/v1/attachments/x/thumbnail?exp=1&sig=s".into()),
            }],
        };
        let expected = concat!(
            r#"{"type":"MSG_RECV","messageId":"00000000-0000-0000-0000-000000000001","channelId":"room","#,
            r#""senderId":"alice","seq":2,"body":"hi \"you\"","ts":3,"clientMsgId":"k1","byAdmin":true,"#,
            r#""kind":"reaction","targetId":"00000000-0000-0000-0000-000000000004","emoji":"👍","op":"remove","#,
            r#""noop":true,"editedAt":5,"deleted":true,"expired":true,"#,
            r#""reactions":[{"emoji":"🎉","count":6,"me":true}],"#,
            r#""replyTo":"00000000-0000-0000-0000-000000000007","#,
            r#""replyPreview":{"senderId":"bob","body":"quoted","deleted":true},"#,
            r#""threadId":"00000000-0000-0000-0000-000000000008","#,
            r#""thread":{"replyCount":9,"lastReplyAt":10,"lastReplySeq":11,"participants":["bob","carol"]},"#,
            r#""mentions":["bob"],"mentionAll":true,"#,
            r#""attachments":[{"attachmentId":"00000000-0000-0000-0000-00000000000c","contentType":"image/png","#,
            r#""size":13,"filename":"a.png","width":14,"height":15,"url":"/v1/attachments/x?exp=1&sig=s","#,
            r#""thumbnailUrl":"/v1/attachments/x/thumbnail?exp=1&sig=s"}]}"#
        );
        let frame = ServerFrame::MsgRecv(message.clone().into());
        assert_eq!(frame.encode(), expected);
        assert_eq!(ServerFrame::encode_msg_recv(&message), expected);
        assert_eq!(ServerFrame::decode(expected).expect("fast decode"), frame);
        assert_eq!(
            serde_json::from_str::<ServerFrame>(expected).expect("serde decode"),
            frame
        );
        // The same entry inside SYNC_BATCH and history: the same fields
        // after the tag.
        let tagged = serde_json::to_string(&TaggedMessage::MsgRecv(message.clone())).expect("tagged");
        assert_eq!(tagged, expected);
        assert_eq!(
            serde_json::from_str::<TaggedMessage>(expected).expect("tagged decode"),
            TaggedMessage::MsgRecv(message)
        );
    }
}

mod properties {
    //! Property tests: the decoder and validator never panic, refuse with a
    //! spec code, and accept every well-formed frame unchanged.
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn name_id() -> impl Strategy<Value = String> {
        "[A-Za-z0-9._:@-]{1,128}".prop_filter("not . or ..", |s| s != "." && s != "..")
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            ".{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(".{0,12}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn frame_like() -> impl Strategy<Value = Value> {
        let ty = prop_oneof![
            Just("MSG_SEND".to_owned()),
            Just("MSG_DELIVERED".to_owned()),
            Just("MSG_READ".to_owned()),
            Just("SYNC".to_owned()),
            ".{0,12}",
        ];
        let field = prop_oneof![
            Just("channelId".to_owned()),
            Just("clientMsgId".to_owned()),
            Just("body".to_owned()),
            Just("messageId".to_owned()),
            Just("afterSeq".to_owned()),
            Just("limit".to_owned()),
            ".{0,10}",
        ];
        (ty, prop::collection::vec((field, json_value()), 0..6)).prop_map(|(ty, fields)| {
            let mut map: Map<String, Value> = fields.into_iter().collect();
            map.insert("type".into(), Value::String(ty));
            Value::Object(map)
        })
    }

    fn check(text: &str) -> Result<(), TestCaseError> {
        match decode_client_frame(text).and_then(|f| f.validate(16_384)) {
            Ok(_) => Ok(()),
            Err(e) => {
                let frame = e.to_error_frame();
                prop_assert!(!frame.retryable, "refusals of bad input are not retryable");
                if frame.code == ErrorCode::InvalidField {
                    prop_assert!(frame.field.is_some(), "invalid_field names its field");
                }
                Ok(())
            }
        }
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,300}") {
            check(&text)?;
        }

        #[test]
        fn arbitrary_frame_shaped_json_never_panics(value in frame_like()) {
            check(&value.to_string())?;
        }

        #[test]
        fn well_formed_sends_are_accepted_unchanged(
            channel in name_id(),
            key in "[!-~]{1,128}",
            body in any::<String>().prop_filter("1..=16384 bytes without NUL", |b| !b.is_empty() && b.len() <= 16_384 && !b.contains('\0')),
        ) {
            let text = json!({"type": "MSG_SEND", "channelId": channel, "clientMsgId": key, "body": body}).to_string();
            let command = decode_client_frame(&text).and_then(|f| f.validate(16_384));
            match command {
                Ok(Command::Send { channel_id, client_msg_id, body: got, .. }) => {
                    prop_assert_eq!(channel_id.as_str(), channel.as_str());
                    prop_assert_eq!(client_msg_id.as_str(), key.as_str());
                    prop_assert_eq!(got.as_bytes(), body.as_bytes());
                }
                other => prop_assert!(false, "refused a well-formed send: {:?}", other),
            }
        }

        #[test]
        fn sync_bounds_are_exact(after in any::<i64>(), limit in proptest::option::of(any::<i64>())) {
            let mut frame = json!({"type": "SYNC", "channelId": "room", "afterSeq": after});
            if let Some(limit) = limit {
                frame["limit"] = json!(limit);
            }
            let result = decode_client_frame(&frame.to_string()).and_then(|f| f.validate(16));
            let after_ok = (0..=MAX_SEQ).contains(&after);
            let limit_ok = limit.is_none_or(|l| (1..=500).contains(&l));
            prop_assert_eq!(result.is_ok(), after_ok && limit_ok);
        }
    }
}

mod server_frame_decode {
    //! `ServerFrame::decode` must agree with the generic serde decode on
    //! every frame the server encodes and on malformed text.
    use proptest::prelude::*;

    use super::*;

    fn recv(text: String, n: i64) -> RecvMessage {
        RecvMessage {
            message_id: uuid::Uuid::from_u128(n as u128),
            channel_id: format!("c{n}"),
            sender_id: "u\"1".into(),
            seq: n,
            body: text,
            ts: n.wrapping_mul(7),
            client_msg_id: Some("k\\1".into()),
            ..Default::default()
        }
    }

    fn frames(text: String, n: i64, flag: bool) -> Vec<ServerFrame> {
        let mut error = ErrorFrame::new(ErrorCode::RateLimited, text.clone());
        error.retry_after_ms = Some(n.unsigned_abs());
        error.client_msg_id = flag.then(|| text.clone());
        vec![
            ServerFrame::MsgRecv(Box::new(recv(text.clone(), n))),
            ServerFrame::MsgAck(AckFrame {
                client_msg_id: text.clone(),
                message_id: uuid::Uuid::from_u128(n as u128),
                channel_id: "room".into(),
                seq: n,
                ts: -n,
                duplicate: flag,
            }),
            ServerFrame::Error(error),
            ServerFrame::Error(ErrorFrame::new(ErrorCode::BadFrame, "x")),
            ServerFrame::Receipt {
                channel_id: text.clone(),
                user_id: "u".into(),
                kind: ReceiptKind::Read,
                message_id: uuid::Uuid::nil(),
                seq: n,
                ts: n,
            },
            ServerFrame::SyncBatch {
                channel_id: "room".into(),
                messages: vec![TaggedMessage::MsgRecv(recv(text.clone(), n))],
                has_more: flag,
                last_seq: flag.then_some(n),
                thread_id: None,
            },
            ServerFrame::Hello {
                user_id: text,
                session_id: "s".into(),
                server_ts: n,
                channels: Vec::new(),
            },
        ]
    }

    proptest! {
        #[test]
        fn decode_round_trips_every_frame(text in any::<String>(), n in any::<i64>(), flag in any::<bool>()) {
            for frame in frames(text.clone(), n, flag) {
                let encoded = frame.encode();
                prop_assert_eq!(ServerFrame::decode(&encoded).ok(), Some(frame));
            }
        }

        #[test]
        fn decode_agrees_with_serde_on_field_order_and_extra_fields(n in any::<i64>(), text in ".{0,20}") {
            for frame in frames(text.clone(), n, true) {
                let mut value = serde_json::to_value(&frame).expect("value");
                let map = value.as_object_mut().expect("object");
                // Reversed field order ("type" last) and an unknown field.
                let mut fields: Vec<_> = std::mem::take(map).into_iter().collect();
                fields.reverse();
                fields.push(("futureField".into(), serde_json::json!([1, {"a": text.clone()}])));
                let text = Value::Object(fields.into_iter().collect()).to_string();
                prop_assert_eq!(
                    ServerFrame::decode(&text).ok(),
                    serde_json::from_str::<ServerFrame>(&text).ok()
                );
                prop_assert_eq!(ServerFrame::decode(&text).ok(), Some(frame));
            }
        }
    }

    #[test]
    fn malformed_frames_are_errors_as_with_serde() {
        let cases = [
            "",
            "null",
            "[]",
            "{}",
            r#"{"type":"MSG_RECV"}"#,
            r#"{"type":"MSG_RECV","messageId":"nope","channelId":"c","senderId":"u","seq":1,"body":"b","ts":1,"clientMsgId":"k"}"#,
            r#"{"type":"MSG_ACK","clientMsgId":"k","messageId":"00000000-0000-0000-0000-000000000000","channelId":"c","seq":"1","ts":1,"duplicate":false}"#,
            r#"{"type":"ERROR","code":"no_such_code","message":"m","retryable":false}"#,
            r#"{"type":"NEW_FRAME_TYPE","x":1}"#,
            r#"{"type":7}"#,
            r#"{"type":"MSG_ACK""#,
        ];
        for text in cases {
            assert!(ServerFrame::decode(text).is_err(), "{text}");
            assert!(serde_json::from_str::<ServerFrame>(text).is_err(), "{text}");
        }
    }
}
