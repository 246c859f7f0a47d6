//! `webhook`: the `send` load three times in one run, against a webhook
//! receiver that this generator serves itself (start the server with
//! `CHATD_WEBHOOK_URL=http://<--listen>/hook`): first healthy (200 at once),
//! then slow (200 after `--slow-ms`), then down (nothing listens). Each
//! phase prints the `send` figures (acked/s, send→ACK percentiles), what the
//! receiver took during it (entries/s) and the server's webhook lag gauges
//! (the highest seen, sampled every 500 ms); then the receiver comes back
//! healthy and the backlog left by the slow and down phases is timed until
//! every entry of the run's channels has arrived (entries/s while draining).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::{load, mode_for, send_layout, Cli, Ctx};

/// What the receiver saw.
#[derive(Default)]
struct Seen {
    slow: AtomicBool,
    slow_for: Mutex<Duration>,
    entries: AtomicU64,
    requests: AtomicU64,
    /// Per channel, the seqs received (a set: at least once may repeat one).
    seqs: Mutex<HashMap<String, std::collections::BTreeSet<i64>>>,
}

async fn hook(State(seen): State<Arc<Seen>>, body: Bytes) -> StatusCode {
    if seen.slow.load(Ordering::Relaxed) {
        let wait = *seen.slow_for.lock().unwrap_or_else(|e| e.into_inner());
        tokio::time::sleep(wait).await;
    }
    let Ok(json) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    let items: Vec<Value> = match json["type"].as_str() {
        Some("entry") => vec![json],
        Some("entries") => json["entries"].as_array().cloned().unwrap_or_default(),
        _ => return StatusCode::BAD_REQUEST,
    };
    seen.requests.fetch_add(1, Ordering::Relaxed);
    seen.entries.fetch_add(items.len() as u64, Ordering::Relaxed);
    let mut seqs = seen.seqs.lock().unwrap_or_else(|e| e.into_inner());
    for item in items {
        if let (Some(channel), Some(seq)) = (item["entry"]["channelId"].as_str(), item["entry"]["seq"].as_i64()) {
            seqs.entry(channel.to_owned()).or_default().insert(seq);
        }
    }
    StatusCode::OK
}

/// The receiver: serving, or stopped (connections refused).
struct Receiver {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Receiver {
    async fn up(addr: SocketAddr, seen: Arc<Seen>) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listen on {addr}"))?;
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .with_state(seen.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self {
            addr,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// Stops listening and closes every connection (in-flight answers finish).
    async fn down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
        }
    }
}

/// The highest values of the server's webhook lag gauges while `until` runs.
async fn lag_while<T>(url: &str, until: impl std::future::Future<Output = T>) -> (T, f64, f64) {
    let http = reqwest::Client::new();
    let metrics = format!("{}/metrics", url.trim_end_matches('/'));
    let gauge = |text: &str, name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or(0.0)
    };
    let (mut entries, mut seconds) = (0.0f64, 0.0f64);
    tokio::pin!(until);
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    loop {
        tokio::select! {
            out = &mut until => return (out, entries, seconds),
            _ = tick.tick() => {
                if let Ok(text) = async { http.get(&metrics).send().await?.text().await }.await {
                    entries = entries.max(gauge(&text, "chatd_webhook_lag_entries"));
                    seconds = seconds.max(gauge(&text, "chatd_webhook_lag_seconds"));
                }
            }
        }
    }
}

/// Runs the scenario; see the module documentation.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    cli: &Cli,
    ctx: &Arc<Ctx>,
    pid: Option<u32>,
    listen: SocketAddr,
    connections: usize,
    channels: usize,
    members: usize,
    in_flight: usize,
    slow_ms: u64,
    drain_timeout: Duration,
) -> anyhow::Result<Value> {
    let seen = Arc::new(Seen::default());
    *seen.slow_for.lock().unwrap_or_else(|e| e.into_inner()) = Duration::from_millis(slow_ms);
    let mut receiver = Receiver::up(listen, seen.clone()).await?;
    let mut phases = Vec::new();
    let mut all_channels = Vec::new();
    for phase in ["healthy", "slow", "down"] {
        match phase {
            "slow" => seen.slow.store(true, Ordering::Relaxed),
            "down" => {
                seen.slow.store(false, Ordering::Relaxed);
                receiver.down().await;
            }
            _ => {}
        }
        let run = format!("{}-{phase}", ctx.run);
        let phase_ctx = Arc::new(Ctx {
            admin: ctx.admin.clone(),
            ws_urls: ctx.ws_urls.clone(),
            source_addrs: ctx.source_addrs.clone(),
            run: run.clone(),
            base: ctx.base,
            measure_from: ctx.base,
            measure_to: ctx.base,
            body_bytes: ctx.body_bytes,
            text_bodies: ctx.text_bodies,
        });
        let members = members.clamp(1, connections.max(1));
        let mode = mode_for(None, connections, in_flight);
        let (layout, plans) = send_layout(&run, connections, channels, members, mode, None);
        all_channels.extend(layout.iter().map(|(c, _)| c.clone()));
        let settings = json!({"phase": phase, "connections": connections, "channels": channels, "members": members, "inFlight": in_flight});
        let taken_before = seen.entries.load(Ordering::Relaxed);
        let started = Instant::now();
        let (report, lag_entries, lag_seconds) =
            lag_while(&cli.url, load(cli, phase_ctx, pid, "send", settings, layout, plans)).await;
        let report = report?;
        let taken = seen.entries.load(Ordering::Relaxed) - taken_before;
        let elapsed = started.elapsed().as_secs_f64();
        println!("--- webhook receiver {phase} ---");
        print!("{}", report.table());
        phases.push(json!({
            "phase": phase,
            "ackedPerSec": report.acked_per_sec,
            "sendToAckMs": report.send_to_ack_ms,
            "verified": report.verification.ok,
            "receiverEntriesPerSec": taken as f64 / elapsed,
            "maxLagEntries": lag_entries,
            "maxLagSeconds": lag_seconds,
        }));
    }
    // The backlog: every entry of the run's channels not yet received.
    let mut last_seqs = HashMap::new();
    for channel in &all_channels {
        let info = ctx.admin.channel(channel).await.context("read a channel")?;
        last_seqs.insert(channel.clone(), info.last_seq);
    }
    let total: i64 = last_seqs.values().sum();
    let missing = |seen: &Seen| -> i64 {
        let seqs = seen.seqs.lock().unwrap_or_else(|e| e.into_inner());
        last_seqs
            .iter()
            .map(|(c, last)| last - seqs.get(c).map_or(0, |s| s.range(1..=*last).count() as i64))
            .sum()
    };
    let backlog = missing(&seen);
    receiver = Receiver::up(receiver.addr, seen.clone()).await?;
    let started = Instant::now();
    let taken_before = seen.entries.load(Ordering::Relaxed);
    while missing(&seen) > 0 && started.elapsed() < drain_timeout {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let drained_in = started.elapsed().as_secs_f64();
    let left = missing(&seen);
    let taken = seen.entries.load(Ordering::Relaxed) - taken_before;
    receiver.down().await;
    Ok(json!({
        "scenario": "webhook",
        "slowMs": slow_ms,
        "phases": phases,
        "entriesInRun": total,
        "drain": {
            "backlogEntries": backlog,
            "seconds": drained_in,
            "entriesTaken": taken,
            "entriesPerSec": taken as f64 / drained_in.max(1e-9),
            "leftUndelivered": left,
        },
        "receiverRequests": seen.requests.load(Ordering::Relaxed),
    }))
}
