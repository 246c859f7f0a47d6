//! The bound on reactions per message (protocol §8,
//! `max_reactions_per_message`): an `add` of an emoji no one holds on a
//! message that holds the bound is refused `invalid_field` (`field:
//! "emoji"`, `reason: "too_many_reactions"`) and stores nothing; a +1 of a
//! held emoji and a `remove` still work; racing adds for the last slot get
//! one ACK; reads return at most the bound of a message's reactions, the
//! first by first use, also for a message stored over it (an export returns
//! them all). The bound is 3 here.

use chatd::ids::{ChannelId, ClientMsgId, UserId};
use chatd::store::{Change, EntryOutcome, NewEntry, Store};
use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app_with, sync, Backend, TestApp, TestDb, WsClient, ADMIN_TOKEN};

on_both_stores!(
    the_bound_refuses_a_new_emoji_and_stores_nothing,
    a_held_emoji_is_added_at_the_bound_and_a_remove_frees_a_slot,
    pipelined_adds_racing_for_the_last_slot_get_one_ack,
    reads_cut_a_message_stored_over_the_bound,
    one_batch_decides_the_bound_in_commit_order_on_every_path,
    the_rust_client_reads_the_refusals_reason,
);

/// The bound of these tests.
const BOUND: usize = 3;

fn react(key: &str, target: &Value, emoji: &str, op: &str) -> Value {
    json!({"type": "MSG_REACT", "clientMsgId": key, "messageId": target, "emoji": emoji, "op": op})
}

/// Reads frames until the MSG_ACK or ERROR of `key` (skipping MSG_RECVs
/// and the answers of other keys).
async fn answer_of(ws: &mut WsClient, key: &str) -> Value {
    loop {
        let frame = ws.recv().await;
        if (frame["type"] == "MSG_ACK" || frame["type"] == "ERROR") && frame["clientMsgId"] == key {
            return frame;
        }
    }
}

async fn acked(ws: &mut WsClient, frame: Value) -> Value {
    let key = frame["clientMsgId"].as_str().expect("key").to_owned();
    ws.send_json(frame.clone()).await;
    let got = answer_of(ws, &key).await;
    assert_eq!(got["type"], "MSG_ACK", "{frame} answered {got}");
    got
}

/// The channel's last seq, as the admin reads it.
async fn last_seq(app: &TestApp, channel: &str) -> i64 {
    let (status, body) = app
        .request("GET", &format!("/v1/channels/{channel}"), Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 200, "{body}");
    body["lastSeq"].as_i64().expect("lastSeq")
}

/// The `reactions` of message `id` in `user`'s history of `channel`.
async fn reactions_read(app: &TestApp, channel: &str, user: &str, id: &Value) -> Value {
    let (status, body) = app.history(channel, &app.token(user), "afterSeq=0&limit=500").await;
    assert_eq!(status, 200, "{body}");
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["messageId"] == *id)
        .expect("the message in the read")["reactions"]
        .clone()
}

/// The emoji of a `reactions` list, in order.
fn emoji_of(reactions: &Value) -> Vec<String> {
    reactions
        .as_array()
        .expect("reactions")
        .iter()
        .map(|r| r["emoji"].as_str().expect("emoji").to_owned())
        .collect()
}

/// A room of alice and bob, with alice's message `m1`; alice connected.
async fn room(backend: Backend, bound: usize) -> (TestApp, WsClient, Value) {
    let app = spawn_app_with(backend, |c| c.max_reactions_per_message = bound).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let id = alice.send_and_ack("room", "m1", "react to me").await["messageId"].clone();
    (app, alice, id)
}

/// The refusal of a new emoji at the bound, exactly.
fn assert_too_many(got: &Value, key: &str, id: &Value) {
    assert_eq!(got["type"], "ERROR", "{got}");
    assert_eq!(got["code"], "invalid_field", "{got}");
    assert_eq!(got["field"], "emoji", "{got}");
    assert_eq!(got["reason"], "too_many_reactions", "{got}");
    assert_eq!(got["clientMsgId"], key, "{got}");
    assert_eq!(got["messageId"], *id, "{got}");
    assert_eq!(got["retryable"], false, "{got}");
    assert!(got.get("channelId").is_none(), "{got}");
}

async fn the_bound_refuses_a_new_emoji_and_stores_nothing(backend: Backend) {
    let (app, mut alice, id) = room(backend, BOUND).await;
    for (n, emoji) in ["a", "b", "c"].iter().enumerate() {
        acked(&mut alice, react(&format!("r{n}"), &id, emoji, "add")).await;
    }
    let before = last_seq(&app, "room").await;
    assert_eq!(before, 4);

    alice.send_json(react("r3", &id, "d", "add")).await;
    assert_too_many(&answer_of(&mut alice, "r3").await, "r3", &id);
    assert_eq!(last_seq(&app, "room").await, before, "no entry, no seq used");
    assert_eq!(
        emoji_of(&reactions_read(&app, "room", "alice", &id).await),
        ["a", "b", "c"]
    );

    // The key decides first: a retry of a stored add is its original ACK,
    // bound or not; the refused key was not stored.
    let retry = acked(&mut alice, react("r2", &id, "c", "add")).await;
    assert_eq!(
        (&retry["duplicate"], &retry["seq"]),
        (&json!(true), &json!(4)),
        "{retry}"
    );
    alice.send_json(react("r3", &id, "d", "add")).await;
    assert_too_many(&answer_of(&mut alice, "r3").await, "r3", &id);
    assert_eq!(last_seq(&app, "room").await, before);
}

async fn a_held_emoji_is_added_at_the_bound_and_a_remove_frees_a_slot(backend: Backend) {
    let (app, mut alice, id) = room(backend, BOUND).await;
    let mut bob = app.connect("bob").await;
    for (n, emoji) in ["a", "b", "c"].iter().enumerate() {
        acked(&mut alice, react(&format!("r{n}"), &id, emoji, "add")).await;
    }
    // Another user's +1 of a held emoji, at the bound.
    let plus_one = acked(&mut bob, react("b1", &id, "b", "add")).await;
    assert_eq!(plus_one["duplicate"], false, "{plus_one}");
    bob.send_json(react("b2", &id, "d", "add")).await;
    assert_too_many(&answer_of(&mut bob, "b2").await, "b2", &id);
    // A remove always works; the last holder of `a` frees its slot.
    acked(&mut alice, react("r3", &id, "a", "remove")).await;
    assert_eq!(
        reactions_read(&app, "room", "bob", &id).await,
        json!([
            {"emoji": "b", "count": 2, "me": true},
            {"emoji": "c", "count": 1, "me": false},
        ])
    );
    acked(&mut bob, react("b3", &id, "d", "add")).await;
    assert_eq!(
        emoji_of(&reactions_read(&app, "room", "bob", &id).await),
        ["b", "c", "d"]
    );
    // Full again.
    alice.send_json(react("r4", &id, "a", "add")).await;
    assert_too_many(&answer_of(&mut alice, "r4").await, "r4", &id);
    // bob's `b` goes, alice still holds it: still three distinct, still full.
    acked(&mut bob, react("b4", &id, "b", "remove")).await;
    bob.send_json(react("b5", &id, "e", "add")).await;
    assert_too_many(&answer_of(&mut bob, "b5").await, "b5", &id);
}

async fn pipelined_adds_racing_for_the_last_slot_get_one_ack(backend: Backend) {
    let (app, mut alice, id) = room(backend, BOUND).await;
    let mut bob = app.connect("bob").await;
    acked(&mut alice, react("r0", &id, "a", "add")).await;
    acked(&mut alice, react("r1", &id, "b", "add")).await;
    let before = last_seq(&app, "room").await;
    // Six new emoji for the last slot, sent without waiting for answers
    // (the commit task takes what is queued as one batch), from two users.
    let racers = ["c", "d", "e", "f", "g", "h"];
    for (n, emoji) in racers.iter().enumerate() {
        let (ws, key) = if n % 2 == 0 {
            (&mut alice, format!("x{n}"))
        } else {
            (&mut bob, format!("x{n}"))
        };
        ws.send_json(react(&key, &id, emoji, "add")).await;
    }
    let mut acks = Vec::new();
    for (n, emoji) in racers.iter().enumerate() {
        let key = format!("x{n}");
        let ws = if n % 2 == 0 { &mut alice } else { &mut bob };
        let got = answer_of(ws, &key).await;
        if got["type"] == "MSG_ACK" {
            acks.push(*emoji);
        } else {
            assert_too_many(&got, &key, &id);
        }
    }
    assert_eq!(acks.len(), 1, "exactly one add took the last slot: {acks:?}");
    assert_eq!(last_seq(&app, "room").await, before + 1);
    assert_eq!(
        emoji_of(&reactions_read(&app, "room", "alice", &id).await),
        ["a", "b", acks[0]]
    );
}

async fn reads_cut_a_message_stored_over_the_bound(backend: Backend) {
    // Five emoji stored under a bound of 5 on a message and on a thread
    // reply, then the server restarted with the bound at 3.
    let (app, mut alice, id) = room(backend, 5).await;
    alice
        .send_json(
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "t1", "body": "a reply", "threadId": id}),
        )
        .await;
    let reply = answer_of(&mut alice, "t1").await;
    assert_eq!(reply["type"], "MSG_ACK", "{reply}");
    let reply = reply["messageId"].clone();
    let five = ["a", "b", "c", "d", "e"];
    for (n, emoji) in five.iter().enumerate() {
        acked(&mut alice, react(&format!("r{n}"), &id, emoji, "add")).await;
        acked(&mut alice, react(&format!("t{n}x"), &reply, emoji, "add")).await;
    }
    drop(alice);
    let app = app.restart(|c| c.max_reactions_per_message = BOUND).await;
    let first = ["a", "b", "c"];

    // History.
    assert_eq!(emoji_of(&reactions_read(&app, "room", "alice", &id).await), first);
    // SYNC.
    let mut alice = app.connect("alice").await;
    alice.send_json(sync("room", 0, None)).await;
    let batch = alice.recv_type("SYNC_BATCH").await;
    let message = batch["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["messageId"] == id)
        .expect("in the batch")
        .clone();
    assert_eq!(
        message["reactions"],
        json!([
            {"emoji": "a", "count": 1, "me": true},
            {"emoji": "b", "count": 1, "me": true},
            {"emoji": "c", "count": 1, "me": true},
        ])
    );
    // A thread page.
    let (status, page) = app
        .history(
            "room",
            &app.token("bob"),
            &format!("threadId={}", id.as_str().expect("id")),
        )
        .await;
    assert_eq!(status, 200, "{page}");
    let in_thread = page["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["messageId"] == reply)
        .expect("the reply in its thread")
        .clone();
    assert_eq!(emoji_of(&in_thread["reactions"]), first);
    // Search results.
    let (status, found) = app
        .request("GET", "/v1/me/search?q=react", Some(&app.token("bob")), None)
        .await;
    assert_eq!(status, 200, "{found}");
    let hit = found["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|m| m["messageId"] == id)
        .expect("the message found")
        .clone();
    assert_eq!(emoji_of(&hit["reactions"]), first);
    // The export is the user's own data: all five.
    let res = app
        .http
        .get(app.url("/v1/users/alice/export"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 200);
    let text = res.text().await.expect("body");
    let exported = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON"))
        .find(|l| l["type"] == "message" && l["messageId"] == id)
        .expect("the message exported");
    assert_eq!(emoji_of(&exported["reactions"]), five);
    // A remove still works on it; a new emoji does not, until it is under
    // the bound (five held, then four).
    acked(&mut alice, react("r9", &id, "e", "remove")).await;
    alice.send_json(react("r10", &id, "z", "add")).await;
    assert_too_many(&answer_of(&mut alice, "r10").await, "r10", &id);
    acked(&mut alice, react("r11", &id, "a", "add")).await;
}

/// A store on a fresh database with the bound at `most`, a channel `room`
/// of alice, bob and carol, and alice's message in it (seq 1).
async fn store_with_message(backend: Backend, most: usize) -> (Store, TestDb, uuid::Uuid) {
    let db = TestDb::new(backend).await;
    let store = db.store().await.with_max_reactions_per_message(most);
    store.migrate().await.expect("migrate");
    let member = |u: &str| UserId::parse(u).expect("user");
    store
        .create_channel(
            &ChannelId::parse("room").expect("channel"),
            &[member("alice"), member("bob"), member("carol")],
            1,
        )
        .await
        .expect("create");
    let out = store
        .write_batch(&[entry("alice", "m1", Change::Message)], 10)
        .await
        .expect("seed");
    let EntryOutcome::Stored(message) = &out.outcomes[0] else {
        panic!("seed: {:?}", out.outcomes[0]);
    };
    (store, db, message.message_id)
}

fn entry(sender: &str, key: &str, change: Change) -> NewEntry {
    NewEntry {
        sender_id: UserId::parse(sender).expect("user"),
        channel_id: ChannelId::parse("room").expect("channel"),
        client_msg_id: ClientMsgId::parse(key).expect("key"),
        body: if change == Change::Message {
            "hi".into()
        } else {
            String::new()
        },
        change,
        mentions: Default::default(),
        origin: Default::default(),
        attachments: Vec::new(),
    }
}

/// One batch, bound 2, decided in commit order against what its earlier
/// entries left: the set-based path (PostgreSQL) and the per-row path
/// (SQLite; PostgreSQL's fallback) decide it alike, entry by entry.
async fn one_batch_decides_the_bound_in_commit_order_on_every_path(backend: Backend) {
    let paths: &[Option<bool>] = match backend {
        Backend::Sqlite => &[None],
        Backend::Postgres => &[Some(true), Some(false)],
    };
    for path in paths {
        let (store, _db, t) = store_with_message(backend, 2).await;
        let react = |sender: &str, key: &str, emoji: &str, add: bool| {
            entry(
                sender,
                key,
                Change::React {
                    target: t,
                    emoji: emoji.into(),
                    add,
                },
            )
        };
        let batch = vec![
            react("alice", "a1", "a", true),
            react("bob", "b1", "b", true),
            react("carol", "c1", "c", true),  // full: refused
            react("carol", "c2", "a", true),  // a +1 at the bound
            react("alice", "a2", "a", false), // carol still holds a
            react("bob", "b2", "d", true),    // still full: refused
            react("bob", "b3", "b", false),   // b's last holder: a slot frees
            react("bob", "b4", "d", true),    // takes it
            react("carol", "c3", "e", true),  // full again: refused
            react("carol", "c4", "e", false), // a remove of one not held: a no-op entry
        ];
        let out = match path {
            Some(set_based) => store
                .write_batch_on_path(&batch, 20, *set_based)
                .await
                .expect("batch")
                .expect("the path decided"),
            None => store.write_batch(&batch, 20).await.expect("batch"),
        };
        let got: Vec<String> = out
            .outcomes
            .iter()
            .map(|o| match o {
                EntryOutcome::Stored(m) => format!("seq {}{}", m.seq, if m.noop { " noop" } else { "" }),
                other => format!("{other:?}"),
            })
            .collect();
        let refused = "TooManyReactions { most: 2 }";
        assert_eq!(
            got,
            [
                "seq 2",
                "seq 3",
                refused,
                "seq 4",
                "seq 5",
                refused,
                "seq 6",
                "seq 7",
                refused,
                "seq 8 noop"
            ],
            "{path:?}"
        );
        let page = store
            .entries_after(&ChannelId::parse("room").expect("channel"), 0, 100, None)
            .await
            .expect("read");
        let held: Vec<(&str, i64)> = page.entries[0]
            .reactions
            .iter()
            .map(|r| (r.emoji.as_str(), r.count))
            .collect();
        assert_eq!(held, [("a", 1), ("d", 1)], "{path:?}");
        assert_eq!(page.last_seq, 8, "{path:?}: no seq for a refusal");
    }
}

/// `chatd-client`'s `react` refused at the bound: `SendError::Refused` with
/// `invalid_field` and the reason; a +1 of a held emoji is stored.
async fn the_rust_client_reads_the_refusals_reason(backend: Backend) {
    use chatd_client::{Client, ClientConfig, SendError};
    use chatd_proto::protocol::ErrorCode;

    let app = spawn_app_with(backend, |c| c.max_reactions_per_message = 1).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (alice, _a) = Client::connect(ClientConfig::new(app.ws_url(), app.token("alice")))
        .await
        .expect("alice");
    let (bob, _b) = Client::connect(ClientConfig::new(app.ws_url(), app.token("bob")))
        .await
        .expect("bob");
    let message = alice.send("room", "hi").await.expect("stored");
    alice.react(message.message_id, "a", true).await.expect("the one place");
    match bob.react(message.message_id, "b", true).await {
        Err(SendError::Refused {
            code: ErrorCode::InvalidField,
            reason: Some(reason),
            ..
        }) => assert_eq!(reason, "too_many_reactions"),
        other => panic!("expected too_many_reactions, got {other:?}"),
    }
    bob.react(message.message_id, "a", true)
        .await
        .expect("a +1 at the bound");
}
