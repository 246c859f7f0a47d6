//! Abuse under load, in a test binary of its own so no other test shares the
//! machine while it measures: one client floods sends while two others chat,
//! or one member stops reading while bulk traffic flows to it; the others'
//! send-to-receive latency must stay within 2x of the same chat without the
//! flood or the slow reader. Compared as a ratio within one run (medians).
//! Also here: a flood is refused at a bounded pace, and the resource bounds
//! and close codes that read process-wide `/metrics` counters.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chatd_testkit::{postgres_url, spawn_app_with, ws_connect_hello, ws_request, Backend, TestApp, WsClient};
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

/// Rounds of (quiet, flooded) measurement, interleaved so that other load on
/// the machine falls on both sides alike.
const ROUNDS: usize = 6;
/// Chat round trips measured per side and round.
const SAMPLES: usize = 12;

async fn chat_latencies(bob: &mut WsClient, carol: &mut WsClient, tag: &str) -> Vec<Duration> {
    let mut out = Vec::with_capacity(SAMPLES);
    for n in 0..SAMPLES {
        let started = Instant::now();
        bob.send_msg("chat", &format!("{tag}-{n}"), "hello").await;
        let recv = carol.recv_type("MSG_RECV").await;
        out.push(started.elapsed());
        assert_eq!(recv["clientMsgId"], format!("{tag}-{n}"));
        bob.recv_type("MSG_ACK").await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Alice's flood: while `flooding`, MSG_SENDs as fast as this thread can
/// write them; `refused` counts the `rate_limited` answers; `ready` is told
/// once the session is open. Returns the frames sent once `stop` is set or
/// the connection ends.
async fn flood(
    addr: std::net::SocketAddr,
    token: String,
    ready: tokio::sync::oneshot::Sender<()>,
    flooding: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    refused: Arc<AtomicU64>,
) -> u64 {
    let alice = ws_connect_hello(addr, &token).await;
    let (mut sink, mut stream) = alice.stream.split();
    let _ = ready.send(());
    let reader = tokio::spawn(async move {
        while let Some(Ok(Message::Text(text))) = stream.next().await {
            if text.as_str().contains("rate_limited") {
                refused.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        if !flooding.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        }
        for _ in 0..50 {
            // Formatted by hand: the flooder's own CPU is not what is measured.
            let frame = format!(r#"{{"type":"MSG_SEND","channelId":"flood","clientMsgId":"f{n}","body":"spam"}}"#);
            n += 1;
            if sink.feed(Message::text(frame)).await.is_err() {
                reader.abort();
                return n;
            }
        }
        if sink.flush().await.is_err() {
            break;
        }
        tokio::task::yield_now().await;
    }
    reader.abort();
    n
}

async fn flood_keeps_others_within_2x(backend: Backend) {
    // The flooder is rate-limited but never cut off, so the flood lasts.
    let app = spawn_app_with(backend, |c| c.max_rate_limited = u32::MAX).await;
    app.create_channel("chat", &["bob", "carol"]).await;
    app.create_channel("flood", &["alice"]).await;
    let mut bob = app.connect("bob").await;
    let mut carol = app.connect("carol").await;

    // The flood runs on a thread and runtime of its own: sharing the test's
    // two workers with the server and with bob and carol, the generator's
    // own scheduling would be measured, not the server's.
    let flooding = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicU64::new(0));
    let (ready, opened) = tokio::sync::oneshot::channel();
    let flooder = {
        let (stop, flooding, refused) = (stop.clone(), flooding.clone(), refused.clone());
        let (addr, token) = (app.addr, app.token("alice"));
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("flood runtime");
            runtime.block_on(flood(addr, token, ready, flooding, stop, refused))
        })
    };
    opened.await.expect("the flooder's session opened");
    let (mut quiet, mut flooded) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        flooding.store(false, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(100)).await;
        quiet.extend(chat_latencies(&mut bob, &mut carol, &format!("quiet{round}")).await);
        flooding.store(true, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(100)).await;
        flooded.extend(chat_latencies(&mut bob, &mut carol, &format!("flood{round}")).await);
    }
    stop.store(true, Ordering::Relaxed);
    let sent = tokio::task::spawn_blocking(move || flooder.join().expect("flooder"))
        .await
        .expect("join");

    let baseline = median(quiet);
    let flooded = median(flooded);
    println!(
        "{backend:?}: baseline p50 {baseline:?}, during flood p50 {flooded:?}, flood frames {sent}, refused {}",
        refused.load(Ordering::Relaxed)
    );
    assert!(sent > 1_000, "the flood was a flood ({sent} frames)");
    assert!(refused.load(Ordering::Relaxed) > 0, "the flood was rate-limited");
    assert!(
        flooded <= baseline * 2,
        "others' latency under flood {flooded:?} > 2x baseline {baseline:?}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_client_does_not_slow_the_others() {
    let _turn = SERIAL.lock().await;
    flood_keeps_others_within_2x(Backend::Sqlite).await;
    if postgres_url().is_some() {
        flood_keeps_others_within_2x(Backend::Postgres).await;
    }
}

/// A flood is refused at a bounded pace: after every 64 rate-limited frames
/// in a row the session pauses reading for a millisecond, so one connection
/// cannot keep a core busy refusing frames. Every frame is still answered.
/// 6,400 frames against a bucket of one: 6,399 refusals, so at least 99
/// pauses. Unpaced, the refusals outran this client's reading: its queue of
/// 1,024 frames filled and the session was closed with 1013 after about 100
/// had been read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_is_refused_at_a_bounded_pace() {
    const FRAMES: usize = 6_400;
    let _turn = SERIAL.lock().await;
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.rate_limit_per_sec = 1;
        c.rate_limit_burst = 1;
        c.user_rate_limit_per_sec = 0;
        c.max_rate_limited = u32::MAX;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let alice = app.connect("alice").await;
    let (mut sink, mut stream) = alice.stream.split();
    let started = Instant::now();
    let writer = tokio::spawn(async move {
        for n in 0..FRAMES {
            let frame = format!(r#"{{"type":"MSG_SEND","channelId":"room","clientMsgId":"f{n}","body":"spam"}}"#);
            sink.feed(Message::text(frame)).await.expect("send");
        }
        sink.flush().await.expect("flush");
        sink
    });
    let (mut acked, mut refused) = (0, 0);
    while acked + refused < FRAMES {
        let next = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .expect("every frame is answered");
        let Some(Ok(Message::Text(text))) = next else {
            panic!("the connection ended after {acked} ACKs and {refused} refusals: {next:?}");
        };
        let frame: serde_json::Value = serde_json::from_str(&text).expect("json");
        match frame["type"].as_str() {
            Some("MSG_ACK") => acked += 1,
            Some("ERROR") if frame["code"] == "rate_limited" => refused += 1,
            _ => panic!("unexpected frame {frame}"),
        }
    }
    let took = started.elapsed();
    let _sink = writer.await.expect("writer");
    println!("{refused} refusals took {took:?}");
    assert_eq!((acked, refused), (1, FRAMES - 1), "(ACKs, rate_limited)");
    assert!(
        took >= Duration::from_millis(((FRAMES - 1) / 64) as u64),
        "{refused} refusals in {took:?}: the flood was not paced"
    );
    app.stop().await;
}

/// The TCP state of the server's end of the connection between `server` and
/// the client port `peer_port` (`/proc/net/tcp`, Linux: `01` ESTABLISHED,
/// `04` FIN-WAIT-1, ...), `None` once the kernel holds no such socket.
fn server_end_state(server: std::net::SocketAddr, peer_port: u16) -> Option<String> {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let (local, remote) = (format!(":{:04X}", server.port()), format!(":{peer_port:04X}"));
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl, local_address, rem_address, st, ...
        (fields.len() > 3 && fields[1].ends_with(&local) && fields[2].ends_with(&remote)).then(|| fields[3].to_owned())
    })
}

/// A session closed while its writer is stuck on a peer that takes nothing
/// (here the idle limit, with about 10 MB queued for a client that never
/// reads) gives its writer 10 s more, then ends it: the server's end of the
/// connection goes with the session, so neither the socket's buffers nor
/// its place under the connection caps outlive it (a writer left running
/// for as long as the peer keeps the connection open would hold megabytes a
/// socket, uncounted). The socket is reset, not closed: a normal close
/// leaves it in FIN-WAIT-1 with its unsent data in kernel memory for
/// minutes. `chatd_connections_open` counts the session until its socket is
/// gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_stuck_on_a_peer_that_takes_nothing_ends_with_its_session() {
    let _turn = SERIAL.lock().await;
    let app = spawn_app_with(Backend::Sqlite, |c| c.ping_interval_secs = 1).await;
    app.create_channel("room", &["alice", "carol"]).await;
    let open_before = metric(&app, "chatd_connections_open").await;
    let carol = stalled_session(&app, "carol").await;
    let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = carol.stream.get_ref() else {
        panic!("plain TCP expected");
    };
    let port = tcp.local_addr().expect("local address").port();
    let mut alice = app.connect("alice").await;
    let body = "x".repeat(16_000);
    // Far past the kernel's socket buffers, below carol's queue bounds
    // (1024 frames, 16 MiB), so her session ends by the idle limit (3 s).
    for n in 0..600 {
        alice.send_and_ack("room", &format!("m{n}"), &body).await;
    }
    assert_eq!(
        server_end_state(app.addr, port).as_deref(),
        Some("01"),
        "carol is connected"
    );
    // Idle limit, then the writer's 10 s; give it 30 s in all.
    // `chatd_connections_open` counts carol until her socket is gone: read
    // first, a count without her means the socket is already gone.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let open = metric(&app, "chatd_connections_open").await;
        let state = server_end_state(app.addr, port);
        if open <= open_before {
            assert_eq!(state, None, "connections_open {open} while carol's socket is held");
        }
        if state.is_none() || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        server_end_state(app.addr, port),
        None,
        "the server's end of the stalled connection outlived its session (TCP state)"
    );
    drop(carol);
    app.stop().await;
}

/// An HTTP client that asks for a large history page and reads nothing: once
/// the server lets go of the connection (its write deadline, or the idle
/// keep-alive close after the page went whole into the kernel's buffer,
/// both `handshake_timeout_ms`), the kernel holds nothing of it within
/// seconds: a waiting write resets the socket, and `TCP_USER_TIMEOUT` drops
/// a closed one whose peer takes nothing. Left in FIN-WAIT-1, each socket
/// would keep its unsent page in kernel memory for minutes (220 such
/// requests, 227 MB).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_response_nobody_reads_does_not_outlive_its_connection() {
    use tokio::io::AsyncWriteExt;
    let _turn = SERIAL.lock().await;
    let app = spawn_app_with(Backend::Sqlite, |c| c.handshake_timeout_ms = 1_000).await;
    let _alice = alice_in_a_room_of_100_large_messages(&app).await;
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let mut tcp = socket.connect(app.addr).await.expect("tcp");
    let port = tcp.local_addr().expect("local address").port();
    let request = format!(
        "GET /v1/channels/room/messages?limit=100 HTTP/1.1\r\nHost: chatd\r\nAuthorization: Bearer {}\r\n\r\n",
        app.token("alice")
    );
    tcp.write_all(request.as_bytes()).await.expect("request");
    // A page of about 1 MiB, far past what a 4 KiB window lets through.
    let deadline = Instant::now() + Duration::from_secs(15);
    while server_end_state(app.addr, port).is_some() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        server_end_state(app.addr, port),
        None,
        "the server's end of an HTTP connection that read nothing (TCP state)"
    );
    drop(tcp);
    app.stop().await;
}

/// Alice's session in channel `room` (hers alone), which holds 100 of her
/// messages of 16,000 bytes: about 1.6 MB, SYNC and history pages of about
/// 1 MiB (`max_page_bytes`).
async fn alice_in_a_room_of_100_large_messages(app: &TestApp) -> WsClient {
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let body = "x".repeat(16_000);
    for n in 0..100 {
        alice.send_and_ack("room", &format!("big{n}"), &body).await;
    }
    alice
}

/// The server's count of sessions closed with 1013 (`/metrics`).
async fn closes_1013(app: &TestApp) -> u64 {
    closes_with(app, 1013).await
}

/// The server's count of sessions closed with `code` (`/metrics`,
/// process-wide: only meaningful while no other test runs, see [`SERIAL`]).
async fn closes_with(app: &TestApp, code: u16) -> u64 {
    metric(app, &format!("chatd_sessions_closed_total{{code=\"{code}\"}}")).await
}

/// The value of the counter `needle` (name and labels) on `/metrics`, 0 when
/// absent (process-wide, see [`SERIAL`]).
async fn metric(app: &TestApp, needle: &str) -> u64 {
    app.admin().metric(needle).await as u64
}

/// Peers that go away without a close handshake, one with a FIN and one
/// with a reset, are recorded as 1006 (abnormal closure, never sent; spec
/// section 6), not as a protocol error (1002) or a normal close (1000).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_is_recorded_as_1006() {
    let _turn = SERIAL.lock().await;
    let app = spawn_app_with(Backend::Sqlite, |_| {}).await;
    let before: Vec<u64> = futures_util::future::join_all([1000, 1002, 1006].map(|c| closes_with(&app, c))).await;
    for reset in [false, true] {
        let client = stalled_session(&app, "alice").await;
        let tcp = match client.stream.get_ref() {
            tokio_tungstenite::MaybeTlsStream::Plain(tcp) => tcp,
            _ => unreachable!("a plain connection"),
        };
        if reset {
            tcp.set_zero_linger().expect("SO_LINGER 0");
        }
        // Dropped without a close frame: the socket closes with a FIN, or
        // with a reset when lingering is off.
        drop(client);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while closes_with(&app, 1006).await < before[2] + 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after: Vec<u64> = futures_util::future::join_all([1000, 1002, 1006].map(|c| closes_with(&app, c))).await;
    assert_eq!(
        (after[0] - before[0], after[1] - before[1], after[2] - before[2]),
        (0, 0, 2),
        "sessions closed with (1000, 1002, 1006)"
    );
    app.stop().await;
}

/// A session that asks for SYNC pages of large messages and never reads them
/// is closed with 1013 once its outbound queue holds `outbound_queue_bytes`,
/// long before its 1024-frame bound: one user cannot pin gigabytes of server
/// memory that way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_never_reads_its_sync_pages_is_closed() {
    let _turn = SERIAL.lock().await;
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.outbound_queue_bytes = 2 * 1024 * 1024;
        // SYNC waits for the queue to drain at most this long (x3).
        c.ping_interval_secs = 1;
    })
    .await;
    let alice = alice_in_a_room_of_100_large_messages(&app).await;
    let before = closes_1013(&app).await;
    let mut stalled = stalled_session(&app, "alice").await;
    // 40 pages of about 1 MiB each: far past 2 MiB, far below 1024 frames.
    for _ in 0..40 {
        stalled
            .send_json(serde_json::json!({"type": "SYNC", "channelId": "room", "afterSeq": 0, "limit": 100}))
            .await;
    }
    stalled_was_closed_and_a_new_session_works(&app, alice, before).await;
    app.stop().await;
}

/// Asserts that one more session was closed with 1013 than `closed_before`,
/// waiting for the count: it is taken when the session has ended, after the
/// idle limit (3 s with a 1 s ping interval), the close frame's timeout
/// (5 s) and the linger (2 s). Then a new session of alice's works (`alice`,
/// idle past the idle limit too, is closed).
async fn stalled_was_closed_and_a_new_session_works(app: &TestApp, alice: WsClient, closed_before: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while closes_1013(app).await == closed_before && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        closes_1013(app).await,
        closed_before + 1,
        "the stalled session was closed with 1013"
    );
    drop(alice);
    let mut again = app.connect("alice").await;
    again.send_and_ack("room", "after", "still here").await;
}

/// The server's count of frames of `type_name` it queued (`/metrics`).
async fn frames_out(app: &TestApp, type_name: &str) -> u64 {
    metric(app, &format!("chatd_frames_out_total{{type=\"{type_name}\"}}")).await
}

/// SYNC has backpressure: a session that asks for many large pages and does
/// not read them gets at most about two queued (the server reads the next
/// page only once at most one waits), not `outbound_queue_bytes` (16 MiB)
/// of them, and is closed with 1013 once it has taken nothing for the idle
/// limit. Before, 100 such connections of one user held 1.7 GB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_pages_wait_for_the_client_to_read() {
    let _turn = SERIAL.lock().await;
    let app = spawn_app_with(Backend::Sqlite, |c| c.ping_interval_secs = 1).await;
    let alice = alice_in_a_room_of_100_large_messages(&app).await;
    let pages_before = frames_out(&app, "SYNC_BATCH").await;
    let closed_before = closes_1013(&app).await;
    let mut stalled = stalled_session(&app, "alice").await;
    for _ in 0..40 {
        stalled
            .send_json(serde_json::json!({"type": "SYNC", "channelId": "room", "afterSeq": 0, "limit": 100}))
            .await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pages = frames_out(&app, "SYNC_BATCH").await - pages_before;
    // Two in the queue, one with the session's writer, and what the kernel's
    // socket buffers took (up to a few MB on loopback); before, 16 MiB of
    // pages were queued on top.
    assert!(
        (1..=8).contains(&pages),
        "{pages} SYNC pages of about 1 MiB queued for a client that reads nothing"
    );
    stalled_was_closed_and_a_new_session_works(&app, alice, closed_before).await;
    app.stop().await;
}

/// A client that never reads and floods pings: the server answers each with
/// a pong that cannot be sent. Those pongs are bounded by the session's byte
/// bound (tungstenite's write buffer was unbounded: the process grew by
/// about the pings' size, 48 MB here). Rate limits are off, so only the
/// bound holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood_from_a_client_that_never_reads_stays_bounded() {
    use tokio::io::AsyncWriteExt;
    let _turn = SERIAL.lock().await;
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.outbound_queue_bytes = 2 * 1024 * 1024;
        c.rate_limit_per_sec = 0;
        c.user_rate_limit_per_sec = 0;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut stalled = stalled_session(&app, "alice").await;
    // Masked pings with a 125-byte payload and a zero mask key (RFC 6455
    // §5.2), written straight to the socket: 1 MiB of them per write.
    let mut ping = vec![0x89, 0x80 | 125, 0, 0, 0, 0];
    ping.extend(std::iter::repeat_n(b'p', 125));
    let chunk: Vec<u8> = ping.iter().copied().cycle().take(ping.len() * 8_000).collect();
    let before = chatd_testkit::resident_bytes();
    let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = stalled.stream.get_mut() else {
        panic!("plain TCP expected");
    };
    for _ in 0..48 {
        tcp.write_all(&chunk).await.expect("the server keeps reading pings");
    }
    // Let the server read the last ones.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let grown = chatd_testkit::resident_bytes().saturating_sub(before);
    assert!(
        grown < 16 * 1024 * 1024,
        "48 MB of pings to a client that never reads grew the process by {} MiB",
        grown / (1024 * 1024)
    );
    // Another session still works.
    let mut alice = app.connect("alice").await;
    alice.send_and_ack("room", "after", "still here").await;
    drop(stalled);
    app.stop().await;
}

/// Pings count against the frame rate limit: a ping flood is answered with
/// `rate_limited` and closed with 1008, like a flood of any other frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood_is_rate_limited_and_closed() {
    let _turn = SERIAL.lock().await;
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.rate_limit_per_sec = 5;
        c.rate_limit_burst = 10;
        c.max_rate_limited = 5;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut flooder = app.connect("alice").await;
    for _ in 0..100 {
        if flooder.stream.send(Message::Ping(vec![1u8; 8].into())).await.is_err() {
            break;
        }
    }
    let mut limited = 0;
    let code = loop {
        let next = tokio::time::timeout(Duration::from_secs(10), flooder.stream.next())
            .await
            .expect("the server answers the flood");
        match next {
            Some(Ok(Message::Text(text))) => {
                let frame: serde_json::Value = serde_json::from_str(&text).expect("json");
                if frame["code"] == "rate_limited" {
                    limited += 1;
                }
            }
            Some(Ok(Message::Close(Some(frame)))) => break u16::from(frame.code),
            Some(Ok(_)) => {}
            other => panic!("connection ended without a close frame: {other:?}"),
        }
    };
    assert_eq!(code, 1008, "a ping flood is closed as a policy violation");
    assert!(limited > 0, "the flood got rate_limited first");
    app.stop().await;
}

/// The tests of this binary take turns: the ratio and pace measurements must
/// not share the machine with each other, and several read process-wide
/// counters or the process's resident set.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Opens a session for `user` whose socket takes almost nothing: a 4 KiB
/// receive buffer, and the test never reads it. Reads HELLO only.
async fn stalled_session(app: &TestApp, user: &str) -> WsClient {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let tcp = socket.connect(app.addr).await.expect("tcp");
    let request = ws_request(app.addr, &app.token(user));
    let (stream, _) = tokio_tungstenite::client_async(request, tokio_tungstenite::MaybeTlsStream::Plain(tcp))
        .await
        .expect("handshake");
    WsClient::new(stream).read_hello().await
}

async fn slow_reader_keeps_others_within_2x(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.outbound_queue = 64;
        c.max_sends_in_flight = 64;
        c.rate_limit_per_sec = 0;
        c.user_rate_limit_per_sec = 0;
    })
    .await;
    app.create_channel("chat", &["bob", "carol"]).await;
    app.create_channel("bulk", &["alice", "fast", "slowpoke"]).await;
    let mut bob = app.connect("bob").await;
    let mut carol = app.connect("carol").await;

    // Bulk traffic flows the whole time, with or without the slow reader: 8 KiB
    // messages at about 300/s, read at once by `fast`.
    let alice = app.connect("alice").await;
    let fast = app.connect("fast").await;
    let stop = Arc::new(AtomicBool::new(false));
    let fast_reader = tokio::spawn(async move {
        let mut fast = fast;
        let mut got = 0u64;
        while let Some(Ok(_)) = fast.stream.next().await {
            got += 1;
        }
        got
    });
    let bulk = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let (mut sink, mut acks) = alice.stream.split();
            let ack_reader = tokio::spawn(async move { while let Some(Ok(_)) = acks.next().await {} });
            let body = "b".repeat(8192);
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..3 {
                    let frame = serde_json::json!({"type": "MSG_SEND", "channelId": "bulk", "clientMsgId": format!("b{n}"), "body": body});
                    n += 1;
                    if sink.send(Message::text(frame.to_string())).await.is_err() {
                        return n;
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            ack_reader.abort();
            n
        })
    };
    let (mut quiet, mut slowed) = (Vec::new(), Vec::new());
    let mut stalled = Vec::new();
    let closed_before = closes_1013(&app).await;
    for round in 0..ROUNDS {
        tokio::time::sleep(Duration::from_millis(100)).await;
        quiet.extend(chat_latencies(&mut bob, &mut carol, &format!("q{round}")).await);
        // A fresh member that never reads joins the bulk traffic.
        stalled.push(stalled_session(&app, "slowpoke").await);
        tokio::time::sleep(Duration::from_millis(100)).await;
        slowed.extend(chat_latencies(&mut bob, &mut carol, &format!("s{round}")).await);
    }
    // Bulk keeps flowing until every stalled session's queue filled and the
    // server closed it (bob, carol, alice and fast remain).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while app.state.hub.session_count() > 4 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "a stalled session was never closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let bulk_sent = bulk.await.expect("bulk");
    // Every stalled session was closed with 1013 once its queue filled. A
    // peer that reads nothing cannot take the close frame itself (the server
    // gives up on the closing handshake after its linger and resets), so the
    // code is read from the server's own count of closes.
    // The count is taken once a session has fully ended (after the close
    // timeout and the linger), so wait for it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut closed_1013 = closes_1013(&app).await - closed_before;
    while closed_1013 < stalled.len() as u64 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        closed_1013 = closes_1013(&app).await - closed_before;
    }
    assert!(
        closed_1013 >= stalled.len() as u64,
        "{closed_1013} closes with 1013 for {} stalled readers",
        stalled.len()
    );
    drop(stalled);
    let baseline = median(quiet);
    let slowed = median(slowed);
    println!("{backend:?}: baseline p50 {baseline:?}, with a stalled reader p50 {slowed:?}, bulk messages {bulk_sent}");
    assert!(bulk_sent > 500, "bulk traffic flowed ({bulk_sent})");
    assert!(
        slowed <= baseline * 2,
        "others' latency with a stalled reader {slowed:?} > 2x baseline {baseline:?}"
    );
    app.stop().await;
    fast_reader.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_reader_does_not_slow_the_others() {
    let _turn = SERIAL.lock().await;
    slow_reader_keeps_others_within_2x(Backend::Sqlite).await;
    if postgres_url().is_some() {
        slow_reader_keeps_others_within_2x(Backend::Postgres).await;
    }
}
