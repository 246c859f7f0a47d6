//! The `typing` and `presence` scenarios: signals that are never stored.
//!
//! - `typing`: one channel of `members` connected members, `typers` of them
//!   typing (start, then stop, each `--toggle-ms`, through the client's
//!   `typing(channel, bool)`); reports the TYPING frames the server queued
//!   per second (its `chatd_frames_out_total{type="TYPING"}`) and the
//!   server's CPU per frame. With `--send-connections`, the plain closed-loop
//!   send figure is measured in the same run without and with that typing
//!   load, in channels of their own.
//! - `presence`: `connections` users in channels of `group` members, each
//!   subscribed to its group (so `group` subscriptions per user); then
//!   `reconnect` of them drop and reconnect at once (inside
//!   `presence_grace_ms`: no subscriber may see a flap), then the same ones
//!   leave for good. Reports PRESENCE frames sent per phase and the time
//!   until every subscriber held the right state.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chatd_client::{Client, Event};
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::json;
use tokio::sync::{mpsc, Semaphore};
use tokio::time::Instant;

use crate::stats::{CpuSample, CpuSplit};
use crate::Ctx;

/// The server's counter of queued frames of `frame_type`, read from `/metrics`.
async fn frames_out(base_url: &str, frame_type: &str) -> anyhow::Result<f64> {
    let text = reqwest::get(format!("{}/metrics", base_url.trim_end_matches('/')))
        .await
        .context("GET /metrics")?
        .text()
        .await?;
    let series = format!("chatd_frames_out_total{{type=\"{frame_type}\"}} ");
    Ok(text
        .lines()
        .find_map(|l| l.strip_prefix(&series)?.trim().parse().ok())
        .unwrap_or(0.0))
}

async fn tokens(ctx: &Ctx, users: &[String]) -> anyhow::Result<HashMap<String, String>> {
    let limit = Arc::new(Semaphore::new(32));
    let mut minting = FuturesUnordered::new();
    for user in users {
        let (admin, limit, user) = (ctx.admin.clone(), limit.clone(), user.clone());
        minting.push(async move {
            let _permit = limit.acquire().await;
            let token = admin.token(&user, Some(7200)).await;
            (user, token)
        });
    }
    let mut out = HashMap::new();
    while let Some((user, token)) = minting.next().await {
        out.insert(user, token.context("mint a token")?);
    }
    Ok(out)
}

type Connected = (Client, mpsc::Receiver<Event>);

async fn connect(ctx: &Ctx, users: &[String], tokens: &HashMap<String, String>) -> anyhow::Result<Vec<Connected>> {
    let limit = Arc::new(Semaphore::new(64));
    let mut connecting = FuturesUnordered::new();
    for (i, user) in users.iter().enumerate() {
        let config = ctx.client_config(i, tokens.get(user).cloned().unwrap_or_default());
        let limit = limit.clone();
        connecting.push(async move {
            let _permit = limit.acquire().await;
            (i, Client::connect(config).await)
        });
    }
    let mut clients: Vec<Option<Connected>> = (0..users.len()).map(|_| None).collect();
    while let Some((i, result)) = connecting.next().await {
        clients[i] = Some(result.context("connect")?);
    }
    Ok(clients.into_iter().flatten().collect())
}

/// Drains an event stream in the background, counting typing events.
fn drain(mut events: mpsc::Receiver<Event>, typing: Arc<std::sync::atomic::AtomicU64>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if matches!(event, Event::Typing { .. }) {
                typing.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    })
}

/// Closed-loop sends from `senders` for `duration`, `in_flight` each: acked sends/s.
async fn send_phase(senders: &[(Client, String)], in_flight: usize, duration: Duration) -> f64 {
    let until = Instant::now() + duration;
    let mut workers = Vec::new();
    for (client, channel) in senders {
        for _ in 0..in_flight {
            let (client, channel) = (client.clone(), channel.clone());
            workers.push(tokio::spawn(async move {
                let mut acked = 0u64;
                while Instant::now() < until {
                    if client.send(&channel, "x".repeat(100)).await.is_ok() {
                        acked += 1;
                    }
                }
                acked
            }));
        }
    }
    let mut total = 0;
    for worker in workers {
        total += worker.await.unwrap_or(0);
    }
    total as f64 / duration.as_secs_f64()
}

/// The `typing` scenario (see the module documentation).
#[allow(clippy::too_many_arguments)]
pub async fn typing(
    ctx: &Ctx,
    base_url: &str,
    pid: Option<u32>,
    duration: Duration,
    members: usize,
    typers: usize,
    toggle_ms: u64,
    send_connections: usize,
) -> anyhow::Result<serde_json::Value> {
    let users: Vec<String> = (0..members).map(|i| format!("{}-t{i}", ctx.run)).collect();
    let channel = format!("{}-typing", ctx.run);
    ctx.admin
        .create_channel(Some(&channel), &users)
        .await
        .context("create channel")?;
    let senders: Vec<String> = (0..send_connections).map(|i| format!("{}-s{i}", ctx.run)).collect();
    for pair in senders.chunks(2) {
        let id = format!("{}-{}", ctx.run, pair[0]);
        ctx.admin
            .create_channel(Some(&id), pair)
            .await
            .context("create channel")?;
    }
    let mut all = users.clone();
    all.extend(senders.iter().cloned());
    let tokens = tokens(ctx, &all).await?;
    let clients = connect(ctx, &users, &tokens).await?;
    let send_clients = connect(ctx, &senders, &tokens).await?;
    let typing_events = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut handles = Vec::new();
    for (client, events) in clients {
        drain(events, typing_events.clone());
        handles.push(client);
    }
    let mut send_pairs = Vec::new();
    for (i, (client, events)) in send_clients.into_iter().enumerate() {
        drain(events, typing_events.clone());
        let pair = &senders[i - i % 2];
        send_pairs.push((client, format!("{}-{pair}", ctx.run)));
    }
    let quiet_send = if send_pairs.is_empty() {
        None
    } else {
        Some(send_phase(&send_pairs, 16, duration).await)
    };

    let stop = tokio_util_stop();
    let mut typists = Vec::new();
    for client in handles.iter().take(typers) {
        let (client, channel, stop) = (client.clone(), channel.clone(), stop.clone());
        typists.push(tokio::spawn(async move {
            let mut on = true;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                client.typing(&channel, on).await;
                on = !on;
                tokio::time::sleep(Duration::from_millis(toggle_ms)).await;
            }
            client.typing(&channel, false).await;
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = frames_out(base_url, "TYPING").await?;
    let cpu_a = CpuSample::take(pid, None);
    let started = Instant::now();
    let loaded_send = if send_pairs.is_empty() {
        tokio::time::sleep(duration).await;
        None
    } else {
        Some(send_phase(&send_pairs, 16, duration).await)
    };
    let secs = started.elapsed().as_secs_f64();
    let cpu = CpuSplit::between(&cpu_a, &CpuSample::take(pid, None));
    let frames = frames_out(base_url, "TYPING").await? - before;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for typist in typists {
        let _ = typist.await;
    }
    let per_sec = frames / secs;
    let cpu_us_per_frame = cpu.server_core_pct.map(|pct| pct / 100.0 * 1e6 / per_sec.max(1e-9));
    Ok(json!({
        "scenario": "typing",
        "settings": {"members": members, "typers": typers, "toggleMs": toggle_ms, "sendConnections": send_connections, "secs": secs},
        "typingFramesQueued": frames,
        "typingFramesPerSec": per_sec.round(),
        "serverCpuCorePct": cpu.server_core_pct,
        "serverCpuMicrosPerTypingFrame": cpu_us_per_frame.map(|v| (v * 100.0).round() / 100.0),
        "generatorCpuCorePct": cpu.generator_core_pct,
        "sendAckedPerSecWithoutTyping": quiet_send.map(f64::round),
        "sendAckedPerSecWithTyping": loaded_send.map(f64::round),
    }))
}

fn tokio_util_stop() -> Arc<std::sync::atomic::AtomicBool> {
    Arc::new(std::sync::atomic::AtomicBool::new(false))
}

/// What one subscriber knows: user → online.
type View = Arc<std::sync::Mutex<HashMap<String, bool>>>;

fn watch(mut events: mpsc::Receiver<Event>, view: View, flaps: Arc<std::sync::atomic::AtomicU64>, me: String) {
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let Event::Presence { user_id, online, .. } = event {
                let mut view = view.lock().unwrap_or_else(|e| e.into_inner());
                if view.insert(user_id.clone(), online) == Some(true) && !online && user_id != me {
                    flaps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
    });
}

/// Waits until every view satisfies `right`; returns the time it took.
async fn until_right(views: &[(String, View)], right: impl Fn(&str, &HashMap<String, bool>) -> bool) -> Duration {
    let started = Instant::now();
    loop {
        let ok = views
            .iter()
            .all(|(me, view)| right(me, &view.lock().unwrap_or_else(|e| e.into_inner())));
        if ok || started.elapsed() > Duration::from_secs(120) {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The `presence` scenario (see the module documentation).
pub async fn presence(
    ctx: &Ctx,
    base_url: &str,
    connections: usize,
    group: usize,
    reconnect: usize,
) -> anyhow::Result<serde_json::Value> {
    let group = group.clamp(1, connections.max(1));
    let users: Vec<String> = (0..connections).map(|i| format!("{}-p{i}", ctx.run)).collect();
    let groups: Vec<Vec<String>> = users.chunks(group).map(<[String]>::to_vec).collect();
    for (k, members) in groups.iter().enumerate() {
        ctx.admin
            .create_channel(Some(&format!("{}-g{k}", ctx.run)), members)
            .await
            .context("create channel")?;
    }
    let tokens = tokens(ctx, &users).await?;
    let clients = connect(ctx, &users, &tokens).await?;
    let flaps = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut views = Vec::new();
    let mut handles = Vec::new();
    let before = frames_out(base_url, "PRESENCE").await?;
    let started = Instant::now();
    for (i, (client, events)) in clients.into_iter().enumerate() {
        let view: View = Arc::default();
        watch(events, view.clone(), flaps.clone(), users[i].clone());
        client.subscribe_presence(groups[i / group].clone()).await;
        views.push((users[i].clone(), view));
        handles.push(client);
    }
    let everyone_online =
        |_: &str, view: &HashMap<String, bool>| view.len() >= group.min(connections) && view.values().all(|o| *o);
    let snapshot_time = until_right(&views, everyone_online).await.max(started.elapsed());
    let snapshot_frames = frames_out(base_url, "PRESENCE").await? - before;

    // A mass reconnect inside the grace: the clients' own reconnect.
    let reconnect = reconnect.min(connections);
    let before = frames_out(base_url, "PRESENCE").await?;
    for client in handles.iter().take(reconnect) {
        client.reconnect().await;
    }
    // Everyone still sees everyone online (no flap), and each reconnected
    // client has its snapshot again.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let reconnect_time = until_right(&views, everyone_online).await + Duration::from_millis(200);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let reconnect_frames = frames_out(base_url, "PRESENCE").await? - before;
    let reconnect_flaps = flaps.load(std::sync::atomic::Ordering::Relaxed);

    // The same users leave for good: their watchers see them offline after the grace.
    let before = frames_out(base_url, "PRESENCE").await?;
    let gone: std::collections::HashSet<String> = users.iter().take(reconnect).cloned().collect();
    for client in handles.iter().take(reconnect) {
        client.close().await;
    }
    let watchers: Vec<(String, View)> = views.iter().skip(reconnect).cloned().collect();
    let leave_time = until_right(&watchers, |_, view| {
        view.iter().all(|(u, online)| *online != gone.contains(u))
    })
    .await;
    let leave_frames = frames_out(base_url, "PRESENCE").await? - before;
    Ok(json!({
        "scenario": "presence",
        "settings": {"connections": connections, "subscriptionsPerUser": group, "reconnect": reconnect},
        "snapshot": {"presenceFrames": snapshot_frames, "secsUntilAllRight": snapshot_time.as_secs_f64()},
        "massReconnect": {"presenceFrames": reconnect_frames, "secsUntilAllRight": reconnect_time.as_secs_f64(), "flapsSeen": reconnect_flaps},
        "leave": {"presenceFrames": leave_frames, "secsUntilAllRight": leave_time.as_secs_f64()},
    }))
}
