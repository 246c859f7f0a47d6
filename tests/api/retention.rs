//! Retention (protocol.md §19, guarantee 14), on both stores: the sweep
//! erases expired `message` entries as a delete does (text, edits,
//! previews, mentions, reactions, search index rows, attachment rows and
//! bytes) with no new entry, reads show them `deleted` and `expired`, seqs
//! stay gapless, newer messages are untouched; a channel's `retentionSecs`
//! overrides `retention_secs`, bad values are refused; the task runs every
//! `retention_sweep_secs`. The sweep is called directly with a chosen
//! `now` (`chatd::retention::sweep`), so no test waits for a clock.

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app_with, sync, Backend, TestApp, WsClient, ADMIN_TOKEN};

use crate::attachments::{count, id_of, png, stored_files, upload};
use crate::entries::rows_holding;
use chatd_testkit::eventually;

on_both_stores!(
    an_expired_message_is_erased_everywhere_with_no_new_entry,
    a_channels_retention_overrides_the_servers_and_bad_values_are_refused,
    the_sweep_task_runs_every_retention_sweep_secs,
);

/// Reads frames until the MSG_ACK (or ERROR) of `key`.
async fn answer_of(ws: &mut WsClient, key: &str) -> Value {
    loop {
        let frame = ws.recv().await;
        if (frame["type"] == "MSG_ACK" || frame["type"] == "ERROR") && frame["clientMsgId"] == key {
            return frame;
        }
    }
}

/// Sends `frame` (with `clientMsgId` `key`) and returns its MSG_ACK.
async fn acked(ws: &mut WsClient, key: &str, mut frame: Value) -> Value {
    frame["clientMsgId"] = json!(key);
    ws.send_json(frame).await;
    let answer = answer_of(ws, key).await;
    assert_eq!(answer["type"], "MSG_ACK", "{answer}");
    answer
}

/// Every entry of `channel` as the admin reads it.
async fn history(app: &TestApp, channel: &str) -> Vec<Value> {
    let (status, body) = app.history(channel, ADMIN_TOKEN, "afterSeq=0&limit=500").await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().expect("messages").clone()
}

fn by_id<'a>(entries: &'a [Value], id: &Value) -> &'a Value {
    entries.iter().find(|e| &e["messageId"] == id).expect("the entry")
}

async fn patch(app: &TestApp, channel: &str, body: Value) -> (u16, Value) {
    app.request(
        "PATCH",
        &format!("/v1/channels/{channel}"),
        Some(ADMIN_TOKEN),
        Some(&body.to_string()),
    )
    .await
}

async fn an_expired_message_is_erased_everywhere_with_no_new_entry(backend: Backend) {
    // The task stays out of the way (a day apart); the test sweeps itself.
    let app = spawn_app_with(backend, |c| {
        c.retention_secs = 60;
        c.retention_sweep_secs = 86_400;
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;

    // An old message with an image, a mention, an edit and a reaction, in a
    // thread with a reply.
    let img = id_of(
        &upload(&app, "alice", "room", Some("image/png"), png(20, 10), None)
            .await
            .1,
    );
    assert_eq!(stored_files(&app).len(), 2, "bytes and thumbnail");
    let old = acked(
        &mut alice,
        "a1",
        json!({"type": "MSG_SEND", "channelId": "room", "body": "zebraquartz original",
            "attachments": [img], "mentions": ["bob"]}),
    )
    .await;
    let old_id = old["messageId"].clone();
    acked(
        &mut alice,
        "e1",
        json!({"type": "MSG_EDIT", "messageId": old_id, "body": "zebraquartz edited"}),
    )
    .await;
    acked(
        &mut bob,
        "r1",
        json!({"type": "MSG_REACT", "messageId": old_id, "emoji": "👍", "op": "add"}),
    )
    .await;
    let reply = acked(
        &mut bob,
        "b1",
        json!({"type": "MSG_SEND", "channelId": "room", "body": "yakfjord thread reply", "threadId": old_id}),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    // A newer message quoting the old one: kept, its preview follows.
    let new = acked(
        &mut alice,
        "a2",
        json!({"type": "MSG_SEND", "channelId": "room", "body": "newer words stay", "replyTo": old_id}),
    )
    .await;
    let before = history(&app, "room").await;
    assert_eq!(
        by_id(&before, &new["messageId"])["replyPreview"]["body"],
        "zebraquartz edited"
    );
    assert!(
        !rows_holding(&app, backend, "zebraquartz").await.is_empty(),
        "the probe finds live text"
    );

    // Now is 60 s after the newer message: everything before it expired.
    let now = new["ts"].as_i64().expect("ts") + 60_000;
    let report = chatd::retention::sweep(&app.state.store, 60, now).await.expect("sweep");
    assert_eq!(report.erased, 2, "the old message and the thread reply: {report:?}");

    let after = history(&app, "room").await;
    assert_eq!(after.len(), before.len(), "no new entry");
    let seqs: Vec<i64> = after.iter().map(|e| e["seq"].as_i64().expect("seq")).collect();
    assert_eq!(seqs, (1..=before.len() as i64).collect::<Vec<_>>(), "gapless");
    let (_, channel) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(channel["lastSeq"], before.len());
    for id in [&old_id, &reply["messageId"]] {
        let gone = by_id(&after, id);
        assert_eq!(gone["deleted"], true, "{gone}");
        assert_eq!(gone["expired"], true, "{gone}");
        assert_eq!(gone["body"], "");
        assert_eq!(gone["reactions"], json!([]));
        assert!(
            gone.get("attachments").is_none() || gone["attachments"] == json!([]),
            "{gone}"
        );
        assert!(
            gone.get("mentions").is_none() || gone["mentions"] == json!([]),
            "{gone}"
        );
    }
    // The edit entry stays in the log, its text gone.
    assert!(after.iter().all(|e| e["kind"] != "edit" || e["body"] == ""));
    let kept = by_id(&after, &new["messageId"]);
    assert_eq!(kept["body"], "newer words stay");
    assert!(kept.get("expired").is_none() && kept.get("deleted").is_none(), "{kept}");
    assert_eq!(
        kept["replyPreview"],
        json!({"senderId": "alice", "body": "", "deleted": true})
    );
    // The root's thread summary counts no reply left.
    assert_eq!(by_id(&after, &old_id)["thread"]["replyCount"], 0);

    // SYNC shows the same.
    alice.send_json(sync("room", 0, None)).await;
    let batch = loop {
        let frame = alice.recv().await;
        if frame["type"] == "SYNC_BATCH" {
            break frame;
        }
    };
    let synced = batch["messages"].as_array().expect("messages");
    assert_eq!(by_id(synced, &old_id)["expired"], true);

    // Erased means erased: no table's live row, no search result, no bytes.
    for text in ["zebraquartz", "yakfjord"] {
        assert_eq!(rows_holding(&app, backend, text).await, Vec::<String>::new(), "{text}");
        let (status, found) = app
            .request(
                "GET",
                &format!("/v1/me/search?q={text}"),
                Some(&app.token("alice")),
                None,
            )
            .await;
        assert_eq!((status, &found["results"]), (200, &json!([])), "{text}");
    }
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 0);
    assert_eq!(count(&app, backend, "SELECT count(*) FROM mentions").await, 0);
    eventually("the attachment bytes are removed", || async {
        stored_files(&app).is_empty()
    })
    .await;
    if backend == Backend::Sqlite {
        // secure_delete and the checkpoint: not in the file's bytes either.
        let dir = app.db.dir.path();
        for name in ["chatd.db", "chatd.db-wal"] {
            if let Ok(bytes) = std::fs::read(dir.join(name)) {
                assert!(
                    !bytes.windows(11).any(|w| w == b"zebraquartz"),
                    "{name} holds the erased text"
                );
            }
        }
    }

    // Again: nothing left to erase; a newer message is still kept.
    let again = chatd::retention::sweep(&app.state.store, 60, now).await.expect("sweep");
    assert_eq!(again.erased, 0);
    assert_eq!(history(&app, "room").await, after);
}

async fn a_channels_retention_overrides_the_servers_and_bad_values_are_refused(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.retention_sweep_secs = 86_400).await;
    app.create_channel("keep", &["alice"]).await;
    app.create_channel("short", &["alice"]).await;
    let (_, shown) = app.request("GET", "/v1/channels/short", Some(ADMIN_TOKEN), None).await;
    assert!(shown.get("retentionSecs").is_none(), "unset: {shown}");

    for bad in [
        json!(-1),
        json!("60"),
        json!(1.5),
        json!(3_155_760_001_i64),
        json!(true),
    ] {
        let (status, body) = patch(&app, "short", json!({"retentionSecs": bad})).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "invalid_field", "{body}");
        assert_eq!(body["error"]["field"], "retentionSecs", "{body}");
    }
    let (status, body) = patch(&app, "short", json!({"retentionSecs": 60})).await;
    assert_eq!((status, &body["retentionSecs"]), (200, &json!(60)), "{body}");
    let (_, shown) = app.request("GET", "/v1/channels/short", Some(ADMIN_TOKEN), None).await;
    assert_eq!(shown["retentionSecs"], 60);
    // A plain member (alice) may not set it.
    let (status, _) = app
        .request(
            "PATCH",
            "/v1/channels/short",
            Some(&app.token("alice")),
            Some(r#"{"retentionSecs": 1}"#),
        )
        .await;
    assert_eq!(status, 403);

    let mut alice = app.connect("alice").await;
    // Shown where the channel's rules are: /v1/me/channels (and HELLO).
    let (_, mine) = app
        .request("GET", "/v1/me/channels", Some(&app.token("alice")), None)
        .await;
    let mine = mine["channels"].as_array().expect("channels").clone();
    let find = |id: &str| mine.iter().find(|c| c["channelId"] == id).expect("channel").clone();
    assert_eq!(find("short")["retentionSecs"], 60);
    assert!(find("keep").get("retentionSecs").is_none());
    let k = acked(
        &mut alice,
        "k",
        json!({"type": "MSG_SEND", "channelId": "keep", "body": "kept text"}),
    )
    .await;
    let s = acked(
        &mut alice,
        "s",
        json!({"type": "MSG_SEND", "channelId": "short", "body": "short text"}),
    )
    .await;
    let now = s["ts"].as_i64().expect("ts") + 61_000;

    // The server keeps forever (0); the channel's 60 s applies to it alone.
    let report = chatd::retention::sweep(&app.state.store, 0, now).await.expect("sweep");
    assert_eq!(report.erased, 1, "{report:?}");
    assert_eq!(history(&app, "short").await[0]["expired"], true);
    assert_eq!(history(&app, "keep").await[0]["body"], "kept text");

    // A channel's 0 keeps forever whatever the server says.
    let (status, body) = patch(&app, "keep", json!({"retentionSecs": 0})).await;
    assert_eq!((status, &body["retentionSecs"]), (200, &json!(0)));
    // Members' sessions are told (CHANNEL_UPDATED).
    let updated = loop {
        let frame = alice.recv().await;
        if frame["type"] == "CHANNEL_UPDATED" {
            break frame;
        }
    };
    assert_eq!(
        (&updated["channelId"], &updated["retentionSecs"]),
        (&json!("keep"), &json!(0))
    );
    let report = chatd::retention::sweep(&app.state.store, 60, now).await.expect("sweep");
    assert_eq!(report.erased, 0);
    assert_eq!(history(&app, "keep").await[0]["messageId"], k["messageId"]);
    assert_eq!(history(&app, "keep").await[0]["body"], "kept text");

    // null clears it: the server's retention applies again.
    let (status, body) = patch(&app, "keep", json!({"retentionSecs": null})).await;
    assert_eq!(status, 200);
    assert!(body.get("retentionSecs").is_none(), "{body}");
    let report = chatd::retention::sweep(&app.state.store, 60, now).await.expect("sweep");
    assert_eq!(report.erased, 1);
    let gone = &history(&app, "keep").await[0];
    assert_eq!(
        (&gone["deleted"], &gone["expired"], &gone["body"]),
        (&json!(true), &json!(true), &json!(""))
    );
}

async fn the_sweep_task_runs_every_retention_sweep_secs(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.retention_secs = 1;
        c.retention_sweep_secs = 1;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    acked(
        &mut alice,
        "a1",
        json!({"type": "MSG_SEND", "channelId": "room", "body": "fleeting"}),
    )
    .await;
    eventually("the task sweeps the expired message", || async {
        history(&app, "room").await[0]["expired"] == true
    })
    .await;
    let (status, _) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 200);
    let metrics = app
        .http
        .get(app.url("/metrics"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .expect("http")
        .text()
        .await
        .expect("text");
    assert!(metrics.contains("chatd_retention_erased_total"), "{metrics}");
    assert!(metrics.contains("chatd_retention_last_complete_seconds"), "{metrics}");
}
