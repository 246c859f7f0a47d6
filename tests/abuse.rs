//! Abuse under load, in a test binary of its own so no other test shares the
//! machine while it measures: one client floods sends while two others chat;
//! the others' send-to-receive latency must stay within 2x of the same chat
//! without the flood. Compared as a ratio within one run (medians).

#[path = "api/helpers.rs"]
mod helpers;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use helpers::{postgres_url, spawn_app_with, Backend};
use tokio_tungstenite::tungstenite::Message;

/// Rounds of (quiet, flooded) measurement, interleaved so that other load on
/// the machine falls on both sides alike.
const ROUNDS: usize = 6;
/// Chat round trips measured per side and round.
const SAMPLES: usize = 12;

async fn chat_latencies(bob: &mut helpers::WsClient, carol: &mut helpers::WsClient, tag: &str) -> Vec<Duration> {
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

async fn flood_keeps_others_within_2x(backend: Backend) {
    // The flooder is rate-limited but never cut off, so the flood lasts.
    let app = spawn_app_with(backend, |c| c.max_rate_limited = u32::MAX).await;
    app.create_channel("chat", &["bob", "carol"]).await;
    app.create_channel("flood", &["alice"]).await;
    let mut bob = app.connect("bob").await;
    let mut carol = app.connect("carol").await;

    let alice = app.connect("alice").await;
    let (mut sink, mut stream) = alice.stream.split();
    let flooding = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicU64::new(0));
    let reader = {
        let refused = refused.clone();
        tokio::spawn(async move {
            while let Some(Ok(Message::Text(text))) = stream.next().await {
                if text.as_str().contains("rate_limited") {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let flooder = {
        let (stop, flooding) = (stop.clone(), flooding.clone());
        tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if !flooding.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                }
                for _ in 0..50 {
                    // Formatted by hand: the flooder's own CPU is not what is measured.
                    let frame =
                        format!(r#"{{"type":"MSG_SEND","channelId":"flood","clientMsgId":"f{n}","body":"spam"}}"#);
                    n += 1;
                    if sink.feed(Message::text(frame)).await.is_err() {
                        return n;
                    }
                }
                if sink.flush().await.is_err() {
                    return n;
                }
                tokio::task::yield_now().await;
            }
            n
        })
    };
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
    let sent = flooder.await.expect("flooder");
    reader.abort();

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
    flood_keeps_others_within_2x(Backend::Sqlite).await;
    if postgres_url().is_some() {
        flood_keeps_others_within_2x(Backend::Postgres).await;
    }
}
