//! Hostile input and abuse: authorization on every frame and route, rate and
//! connection limits, slow and silent peers, bad-token floods, and a corpus of
//! naughty strings that must round-trip byte-identical on both stores.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, sync, Backend, ADMIN_TOKEN};

on_both_stores!(
    outsiders_and_non_members_are_forbidden_everywhere_alike,
    frames_past_the_rate_get_rate_limited_then_1008,
    connection_limits_per_user_and_per_node,
    a_slow_handshake_is_cut_off,
    an_idle_or_dribbling_peer_is_closed,
    bad_token_floods_are_refused_and_the_server_keeps_serving,
    protocol_violations_close_with_1002_or_1007,
    a_panicking_session_affects_no_other,
    naughty_strings_round_trip_byte_identical,
    a_websocket_key_that_is_not_16_bytes_in_base64_is_refused,
);

async fn outsiders_and_non_members_are_forbidden_everywhere_alike(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    app.create_channel("elsewhere", &["nonmember"]).await;
    let mut alice = app.connect("alice").await;
    let ack = alice.send_and_ack("room", "a1", "secret").await;
    let message_id = ack["messageId"].clone();
    for who in ["nonmember", "outsider"] {
        let mut c = app.connect(who).await;
        let mut answers = Vec::new();
        for channel in ["room", "no-such-channel"] {
            c.send_msg(channel, &format!("{who}-{channel}"), "hi").await;
            let send = c.recv_type("ERROR").await;
            c.send_json(sync(channel, 0, None)).await;
            let synced = c.recv_type("ERROR").await;
            let (status, history) = app.history(channel, &app.token(who), "").await;
            assert_eq!(status, 403, "{who} history of {channel}");
            answers.push((
                send["code"].clone(),
                send["message"].clone(),
                synced["code"].clone(),
                synced["message"].clone(),
                history,
            ));
        }
        assert_eq!(
            answers[0], answers[1],
            "{who}: an unknown channel looks exactly like a foreign one"
        );
        assert_eq!(answers[0].0, "forbidden");
        assert_eq!(answers[0].2, "forbidden");
        for kind in ["MSG_DELIVERED", "MSG_READ"] {
            c.send_json(json!({"type": kind, "messageId": message_id})).await;
            assert_eq!(c.recv_type("ERROR").await["code"], "forbidden", "{who} {kind}");
        }
    }
    // Nothing leaked to alice, nothing stored.
    alice.expect_silence(Duration::from_millis(300)).await;
    assert_eq!(app.all_messages("room").await.len(), 1);
    app.stop().await;
}

async fn frames_past_the_rate_get_rate_limited_then_1008(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 1;
        c.rate_limit_burst = 10;
        c.max_rate_limited = 5;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    for n in 0..16 {
        alice.send_msg("room", &format!("k{n}"), "x").await;
    }
    let mut acked = HashSet::new();
    let mut limited = 0;
    for _ in 0..16 {
        let frame = alice.recv().await;
        match frame["type"].as_str() {
            Some("MSG_ACK") => {
                acked.insert(frame["clientMsgId"].as_str().expect("id").to_owned());
            }
            Some("ERROR") => {
                assert_eq!(frame["code"], "rate_limited");
                assert_eq!(frame["retryable"], true);
                assert!(frame["retryAfterMs"].as_u64().expect("retryAfterMs") > 0);
                assert!(frame["clientMsgId"].is_string(), "echoes the send's id: {frame}");
                limited += 1;
            }
            _ => panic!("{frame}"),
        }
    }
    assert_eq!(acked.len(), 10, "the burst is served");
    assert_eq!(limited, 6);
    // Keeping on past max_rate_limited closes the connection with 1008.
    assert_eq!(alice.recv_close_code().await, 1008);
    let stored: HashSet<String> = app
        .all_messages("room")
        .await
        .iter()
        .map(|m| m["clientMsgId"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(stored, acked, "nothing rate-limited was stored");
    app.stop().await;
}

async fn connection_limits_per_user_and_per_node(backend: Backend) {
    use tokio_tungstenite::tungstenite::Error;
    let app = spawn_app_with(backend, |c| {
        c.max_connections_per_user = 2;
        c.max_connections = 3;
    })
    .await;
    let status = |r: Result<chatd_testkit::WsClient, Error>| match r {
        Err(Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("{other:?}"),
        Ok(_) => 101,
    };
    let a1 = app.connect("alice").await;
    let _a2 = app.connect("alice").await;
    assert_eq!(status(app.connect_raw(&app.token("alice")).await), 429);
    let _b1 = app.connect("bob").await;
    assert_eq!(status(app.connect_raw(&app.token("carol")).await), 503);
    drop(a1);
    // The place is free again once the session has ended.
    let mut ok = false;
    for _ in 0..50 {
        if status(app.connect_raw(&app.token("carol")).await) == 101 {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ok);
    app.stop().await;
}

async fn a_slow_handshake_is_cut_off(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.handshake_timeout_ms = 500).await;
    // A request head sent one byte at a time, never finished.
    let mut slow = TcpStream::connect(app.addr).await.expect("connect");
    let started = std::time::Instant::now();
    let mut closed = false;
    for byte in b"GET /v1/ws HTTP/1.1\r\nHost: x\r\n".iter().cycle().take(200) {
        if slow.write_all(&[*byte]).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut buf = [0u8; 512];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(1), slow.read(&mut buf)).await {
            // The server answered (408) or closed (0 bytes): either way it gave up.
            let _ = n;
            closed = true;
            break;
        }
    }
    assert!(
        closed,
        "the server kept a slow handshake open for {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // A client that opens a connection and sends nothing is closed too.
    let mut silent = TcpStream::connect(app.addr).await.expect("connect");
    let mut buf = [0u8; 512];
    let read = tokio::time::timeout(Duration::from_secs(5), silent.read(&mut buf)).await;
    assert!(read.is_ok(), "silent connection not closed");
    // HTTP/2 is not served: an h2c prior-knowledge connection (preface and an
    // empty SETTINGS frame, then nothing) ends at once. Kept open, enough of
    // them would lock every client out.
    let mut h2 = TcpStream::connect(app.addr).await.expect("connect");
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .expect("preface");
    let mut seen = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(5), h2.read_to_end(&mut seen)).await;
    assert!(ended.is_ok(), "an idle HTTP/2 connection stayed open");
    // A client that pipelines requests and never reads a response does not
    // hold its connection forever: a write that waits `handshake_timeout_ms`
    // for the peer ends it, so the client's own writes start failing.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let mut greedy = socket.connect(app.addr).await.expect("connect");
    let requests = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".repeat(1000);
    let flood = tokio::spawn(async move {
        for _ in 0..2000 {
            if greedy.write_all(requests.as_bytes()).await.is_err() {
                return true;
            }
        }
        false
    });
    let cut = tokio::time::timeout(Duration::from_secs(8), flood).await;
    assert!(
        matches!(cut, Ok(Ok(true))),
        "a client that reads no responses kept its connection: {cut:?}"
    );
    // A request whose body trickles in cannot hold the connection: without
    // credentials it is refused (401) before its body is read; with them it
    // gets 408 at the request deadline.
    for (auth, expect) in [
        (String::new(), "HTTP/1.1 401"),
        (format!("Authorization: Bearer {ADMIN_TOKEN}\r\n"), "HTTP/1.1 408"),
    ] {
        let mut trickle = TcpStream::connect(app.addr).await.expect("connect");
        let head = format!(
            "POST /v1/channels HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
        );
        trickle.write_all(head.as_bytes()).await.expect("head");
        let started = std::time::Instant::now();
        let mut response = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), trickle.read_to_end(&mut response)).await;
        let response = String::from_utf8_lossy(&response);
        assert!(response.starts_with(expect), "slow body not cut off: {response:?}");
        assert!(response.contains("\"code\":"), "{response}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }
    // The server still serves.
    let mut alice = app.connect("alice").await;
    alice.send_json(sync("nope", 0, None)).await;
    assert_eq!(alice.recv_type("ERROR").await["code"], "forbidden");
    app.stop().await;
}

async fn an_idle_or_dribbling_peer_is_closed(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.ping_interval_secs = 1).await;
    // Idle: connected, reads nothing (so never answers pings), sends nothing.
    let mut idle = app.connect("idle").await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(idle.recv_close_code().await, 1008);
    // Dribbling: a WebSocket frame sent one byte every 400 ms never completes.
    let mut raw = raw_websocket(&app, "dribbler").await;
    // Text frame, FIN, masked, 100-byte payload: header then a byte at a time.
    raw.write_all(&[0x81, 0x80 | 100, 1, 2, 3, 4])
        .await
        .expect("frame header");
    let started = std::time::Instant::now();
    let mut alive = true;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        if raw.write_all(b"x").await.is_err() {
            alive = false;
            break;
        }
        let mut buf = [0u8; 65536];
        if let Ok(Ok(0)) = tokio::time::timeout(Duration::from_millis(1), raw.read(&mut buf)).await {
            alive = false;
            break;
        }
    }
    assert!(!alive, "a dribbling peer was kept open");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "closed after {:?}",
        started.elapsed()
    );
    app.stop().await;
}

/// RFC 6455 §4.2.1: the key is 16 bytes in base64. Anything else is 400
/// and opens no session (the thirteenth hostile run: a 5,000-character key
/// was upgraded); the RFC's own sample key is upgraded.
async fn a_websocket_key_that_is_not_16_bytes_in_base64_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    let long = "A".repeat(5_000);
    for (key, upgraded) in [
        ("dGhlIHNhbXBsZSBub25jZQ==", true),
        (long.as_str(), false),
        ("dGhlIHNhbXBsZSBub25jZQ", false),
        ("dGhlIHNhbXBsZSBub25jZQ=!", false),
        ("dGhlIHNhbXBsZSBub25j*Q==", false),
        ("aGVsbG8=", false),
    ] {
        let mut raw = TcpStream::connect(app.addr).await.expect("connect");
        let request = format!(
            "GET /v1/ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {}\r\n\r\n",
            app.addr,
            app.token("alice")
        );
        raw.write_all(request.as_bytes()).await.expect("handshake");
        let mut head = vec![0u8; 4096];
        let n = raw.read(&mut head).await.expect("response");
        let head = String::from_utf8_lossy(&head[..n]);
        let want = if upgraded { "HTTP/1.1 101" } else { "HTTP/1.1 400" };
        assert!(head.starts_with(want), "key {:.40}…: {head}", key);
    }
    app.stop().await;
}

/// A WebSocket opened over a plain TCP stream, past the 101 response and the
/// HELLO frame, for sending frames no client library would.
async fn raw_websocket(app: &chatd_testkit::TestApp, user: &str) -> TcpStream {
    let mut raw = TcpStream::connect(app.addr).await.expect("connect");
    let request = format!(
        "GET /v1/ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {}\r\n\r\n",
        app.addr,
        app.token(user)
    );
    raw.write_all(request.as_bytes()).await.expect("handshake");
    let mut head = vec![0u8; 4096];
    let n = raw.read(&mut head).await.expect("response");
    assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 101"));
    raw
}

/// Reads raw frames until a close frame and returns its code.
async fn raw_close_code(raw: &mut TcpStream) -> u16 {
    let mut data = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        // Walk the unmasked server frames read so far.
        let mut at = 0;
        while at + 2 <= data.len() {
            let opcode = data[at] & 0x0f;
            let (len, header) = match data[at + 1] & 0x7f {
                126 if at + 4 <= data.len() => (usize::from(u16::from_be_bytes([data[at + 2], data[at + 3]])), 4),
                127 => panic!("unexpected huge frame"),
                126 => break,
                n => (usize::from(n), 2),
            };
            if at + header + len > data.len() {
                break;
            }
            if opcode == 0x8 {
                return u16::from_be_bytes([data[at + header], data[at + header + 1]]);
            }
            at += header + len;
        }
        let n = tokio::time::timeout(Duration::from_secs(5), raw.read(&mut buf))
            .await
            .expect("frame in time")
            .expect("read");
        assert!(n > 0, "closed without a close frame");
        data.extend_from_slice(&buf[..n]);
    }
}

async fn protocol_violations_close_with_1002_or_1007(backend: Backend) {
    let app = spawn_app(backend).await;
    // A text frame whose payload is not UTF-8 (masked with a zero key).
    let mut raw = raw_websocket(&app, "alice").await;
    raw.write_all(&[0x81, 0x82, 0, 0, 0, 0, 0xff, 0xfe])
        .await
        .expect("write");
    assert_eq!(raw_close_code(&mut raw).await, 1007);
    // An unmasked client frame.
    let mut raw = raw_websocket(&app, "alice").await;
    raw.write_all(&[0x81, 0x02, b'h', b'i']).await.expect("write");
    assert_eq!(raw_close_code(&mut raw).await, 1002);
    // A reserved opcode.
    let mut raw = raw_websocket(&app, "alice").await;
    raw.write_all(&[0x83, 0x80, 0, 0, 0, 0]).await.expect("write");
    assert_eq!(raw_close_code(&mut raw).await, 1002);
    app.stop().await;
}

async fn bad_token_floods_are_refused_and_the_server_keeps_serving(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let addr = app.addr;
    let mut tasks = Vec::new();
    for worker in 0..20 {
        tasks.push(tokio::spawn(async move {
            let mut refused = 0;
            for n in 0..100 {
                let url = format!("ws://{addr}/v1/ws?access_token=bad.{worker}.{n}");
                match tokio_tungstenite::connect_async(url).await {
                    Err(tokio_tungstenite::tungstenite::Error::Http(r)) if r.status() == 401 => refused += 1,
                    other => panic!("bad token not refused: {:?}", other.map(|_| ())),
                }
            }
            refused
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.expect("task");
    }
    assert_eq!(total, 2000);
    let ack = alice.send_and_ack("room", "still", "working").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);
    app.stop().await;
}

async fn naughty_strings_round_trip_byte_identical(backend: Backend) {
    let corpus: Vec<String> =
        serde_json::from_str(include_str!("../data/naughty_strings.json")).expect("corpus is a JSON array of strings");
    let app = spawn_app_with(backend, |c| c.rate_limit_per_sec = 0).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    for (n, body) in corpus.iter().enumerate() {
        alice.send_and_ack("room", &format!("n{n}"), body).await;
        let recv = bob.recv_type("MSG_RECV").await;
        assert_eq!(
            recv["body"].as_str().expect("body").as_bytes(),
            body.as_bytes(),
            "MSG_RECV of #{n}"
        );
    }
    let history = app.all_messages("room").await;
    let mut synced: Vec<Value> = Vec::new();
    let mut after = 0;
    loop {
        bob.send_json(sync("room", after, Some(500))).await;
        let batch = bob.recv_type("SYNC_BATCH").await;
        let page = batch["messages"].as_array().expect("messages").clone();
        after = page.last().map_or(after, |m| m["seq"].as_i64().expect("seq"));
        synced.extend(page);
        if batch["hasMore"] == false {
            break;
        }
    }
    assert_eq!(history.len(), corpus.len());
    assert_eq!(synced.len(), corpus.len());
    for (n, body) in corpus.iter().enumerate() {
        assert_eq!(
            history[n]["body"].as_str().expect("body").as_bytes(),
            body.as_bytes(),
            "history of #{n}"
        );
        assert_eq!(
            synced[n]["body"].as_str().expect("body").as_bytes(),
            body.as_bytes(),
            "SYNC of #{n}"
        );
    }
    // U+0000 is refused on every store, never altered or an internal error.
    alice.send_msg("room", "nul", "before\u{0}after").await;
    let err = alice.recv_type("ERROR").await;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("invalid_field"), Some("body"))
    );
    let (_, channel) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(channel["lastSeq"], corpus.len() as i64);
    app.stop().await;
}

async fn a_panicking_session_affects_no_other(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let mut carol = app.connect("carol").await;
    assert_eq!(app.state.hub.session_count(), 3);
    alice.send_text(chatd::http::ws::session::TEST_PANIC_FRAME).await;
    // Alice's session ends with 1011 (internal error) and is unregistered.
    assert_eq!(alice.recv_close_code().await, 1011);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while app.state.hub.session_count() != 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the panicked session stayed registered"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Everyone else carries on, and alice can come back.
    let ack = bob.send_and_ack("room", "after-panic", "still here").await;
    assert_eq!(carol.recv_type("MSG_RECV").await["messageId"], ack["messageId"]);
    let mut alice = app.connect("alice").await;
    alice.send_json(sync("room", 0, None)).await;
    assert_eq!(
        alice.recv_type("SYNC_BATCH").await["messages"][0]["messageId"],
        ack["messageId"]
    );
    app.stop().await;
}

/// With `max_sends_in_flight` sends waiting on the store, the server stops
/// reading the connection (the client's writes back up) instead of queueing
/// without bound; once the store moves again, every send is ACKed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_in_flight_are_bounded_by_not_reading() {
    use futures_util::SinkExt;
    use sqlx::Connection;
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.max_sends_in_flight = 1;
        c.rate_limit_per_sec = 0;
        c.user_rate_limit_per_sec = 0;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let alice = app.connect("alice").await;
    // Hold SQLite's write lock from outside, so the first send cannot commit.
    let mut blocker = sqlx::SqliteConnection::connect(&app.db.url)
        .await
        .expect("second connection");
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut blocker)
        .await
        .expect("take the write lock");
    const FRAMES: usize = 400;
    let (mut sink, mut stream) = futures_util::StreamExt::split(alice.stream);
    let writer = tokio::spawn(async move {
        let pad = "p".repeat(60_000);
        for n in 0..FRAMES {
            let frame = json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": format!("k{n}"), "body": "x", "pad": pad});
            sink.send(tokio_tungstenite::tungstenite::Message::text(frame.to_string()))
                .await
                .expect("send");
        }
        sink
    });
    // 400 frames of 60 KB (24 MB) cannot all fit in socket buffers: the writes back up.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert!(
        !writer.is_finished(),
        "the server kept reading past its in-flight limit"
    );
    sqlx::query("ROLLBACK")
        .execute(&mut blocker)
        .await
        .expect("release the lock");
    let _sink = tokio::time::timeout(Duration::from_secs(60), writer)
        .await
        .expect("writes resume")
        .expect("writer");
    let mut acks = 0;
    while acks < FRAMES {
        let next = tokio::time::timeout(Duration::from_secs(30), futures_util::StreamExt::next(&mut stream)).await;
        let Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text)))) = next else {
            panic!("{next:?}")
        };
        let frame: Value = serde_json::from_str(text.as_str()).expect("json");
        assert_eq!(frame["type"], "MSG_ACK", "{frame}");
        assert_eq!(frame["clientMsgId"], format!("k{acks}"));
        acks += 1;
    }
    app.stop().await;
}
