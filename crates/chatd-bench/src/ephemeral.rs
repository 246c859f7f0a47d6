//! The `typing` and `presence` scenarios: signals that are never stored.
//!
//! - `typing`: one channel of `members` connected members, `typers` of them
//!   typing (on, then off, each `--toggle-ms`, through the client's
//!   `typing(channel, bool)`). First typing alone for `--duration`: the
//!   TYPING frames the server queued per second (its
//!   `chatd_frames_out_total{type="TYPING"}`), the TYPING events the
//!   members' clients received, the frames it dropped for slow sessions,
//!   and the server's CPU per frame (its utime + stime from
//!   `/proc/<pid>/stat` over the window, divided by the frames). Then, with
//!   `--send-connections`, `--rounds` pairs of plain closed-loop send phases
//!   (in channels of their own, pairs of users) without and with that typing
//!   load, the order alternating per round (`stats::phase_order`), `--duration` each. Checks that every member received
//!   typing from every other typer and never its own.
//! - `presence`: for each `--group` G, `connections` users in channels of G
//!   members, each subscribed to its G (its own id among them: G
//!   subscriptions per user). Then `reconnect` of them, spread evenly (every
//!   `connections / reconnect`-th), drop and reconnect at once (inside
//!   `presence_grace_ms`, so no subscriber may see them go offline), then
//!   the same ones leave for good. Per phase: PRESENCE frames the server
//!   queued, PRESENCE events the clients received, and the time from the
//!   phase's start to the last event it needed, once every subscriber holds
//!   the right state (checked after the events stop). Several G in one run
//!   show how both grow with subscriptions per user. The first
//!   subscriptions go in waves of `--subscribe-wave` (each PRESENCE_SUB
//!   reads the members table; 10,000 at once time out on SQLite's pool of
//!   16 readers and are refused `unavailable`); ERRORs received are counted
//!   and fail the check.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use chatd_client::{Client, Event};
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::json;
use tokio::sync::{mpsc, Semaphore};
use tokio::time::Instant;

use crate::stats::{phase_order, CpuSample, CpuSplit};
use crate::Ctx;

/// The server's counter `name` for frames of `frame_type`, read from `/metrics`.
async fn counter(base_url: &str, name: &str, frame_type: &str) -> anyhow::Result<f64> {
    let text = reqwest::get(format!("{}/metrics", base_url.trim_end_matches('/')))
        .await
        .context("GET /metrics")?
        .text()
        .await?;
    let series = format!("{name}{{type=\"{frame_type}\"}} ");
    Ok(text
        .lines()
        .find_map(|l| l.strip_prefix(&series)?.trim().parse().ok())
        .unwrap_or(0.0))
}

/// Frames of `frame_type` the server queued to sessions so far.
async fn frames_out(base_url: &str, frame_type: &str) -> anyhow::Result<f64> {
    counter(base_url, "chatd_frames_out_total", frame_type).await
}

/// TYPING or PRESENCE frames the server dropped for slow sessions so far.
async fn frames_dropped(base_url: &str, frame_type: &str) -> anyhow::Result<f64> {
    counter(base_url, "chatd_ephemeral_dropped_total", frame_type).await
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
        let mut config = ctx.client_config(i, tokens.get(user).cloned().unwrap_or_default());
        // Thousands of idle clients: a small event queue each is plenty.
        config.event_capacity = 4096;
        let limit = limit.clone();
        connecting.push(async move {
            let _permit = limit.acquire().await;
            (i, Client::connect(config).await)
        });
    }
    let mut clients: Vec<Option<Connected>> = (0..users.len()).map(|_| None).collect();
    while let Some((i, result)) = connecting.next().await {
        clients[i] = Some(result.with_context(|| format!("connect {}", users[i]))?);
    }
    Ok(clients.into_iter().flatten().collect())
}

/// What one member saw of typing: events received, who was seen typing, and
/// whether its own typing ever came back to it.
#[derive(Default)]
struct TypingSeen {
    events: AtomicU64,
    typers: Mutex<HashSet<String>>,
    own: AtomicBool,
}

/// Drains an event stream in the background, counting typing events of
/// `me`'s channel mates into `seen`.
fn drain(mut events: mpsc::Receiver<Event>, seen: Arc<TypingSeen>, me: String) {
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let Event::Typing { user_id, typing, .. } = event {
                seen.events.fetch_add(1, Ordering::Relaxed);
                if user_id == me {
                    seen.own.store(true, Ordering::Relaxed);
                } else if typing {
                    seen.typers.lock().unwrap_or_else(|e| e.into_inner()).insert(user_id);
                }
            }
        }
    });
}

/// Closed-loop sends from `senders` for `duration`, `in_flight` each:
/// acked sends/s and failed sends.
async fn send_phase(senders: &[(Client, String)], in_flight: usize, duration: Duration) -> (f64, u64) {
    let until = Instant::now() + duration;
    let mut workers = Vec::new();
    for (client, channel) in senders {
        for _ in 0..in_flight {
            let (client, channel) = (client.clone(), channel.clone());
            workers.push(tokio::spawn(async move {
                let (mut acked, mut failed) = (0u64, 0u64);
                let body = "x".repeat(100);
                while Instant::now() < until {
                    match client.send(&channel, body.clone()).await {
                        Ok(_) => acked += 1,
                        Err(_) => failed += 1,
                    }
                }
                (acked, failed)
            }));
        }
    }
    let (mut acked, mut failed) = (0, 0);
    for worker in workers {
        let (a, f) = worker.await.unwrap_or((0, 1));
        acked += a;
        failed += f;
    }
    (acked as f64 / duration.as_secs_f64(), failed)
}

/// The `typing` scenario's settings.
pub struct TypingArgs {
    /// Members of the typing channel, all connected.
    pub members: usize,
    /// How many of them type.
    pub typers: usize,
    /// Each typer turns typing on, then off, every this many ms.
    pub toggle_ms: u64,
    /// Sending connections (pairs, in channels of their own); 0: no send phases.
    pub send_connections: usize,
    /// Without/with pairs of send phases.
    pub rounds: usize,
}

/// Figures of the typing load over one window.
struct TypingWindow {
    secs: f64,
    queued: f64,
    dropped: f64,
    received: u64,
    cpu: CpuSplit,
}

impl TypingWindow {
    fn json(&self) -> serde_json::Value {
        let per_sec = self.queued / self.secs.max(1e-9);
        let micros = self
            .cpu
            .server_core_pct
            .map(|pct| ((pct / 100.0 * 1e6 / per_sec.max(1e-9)) * 100.0).round() / 100.0);
        json!({
            "secs": (self.secs * 100.0).round() / 100.0,
            "typingFramesQueued": self.queued,
            "typingFramesQueuedPerSec": per_sec.round(),
            "typingFramesDropped": self.dropped,
            "typingEventsReceivedPerSec": (self.received as f64 / self.secs.max(1e-9)).round(),
            "serverCpuCorePct": self.cpu.server_core_pct,
            "serverCpuMicrosPerTypingFrame": micros,
            "generatorCpuCorePct": self.cpu.generator_core_pct,
            "machineBusyPct": self.cpu.machine_busy_pct,
        })
    }
}

/// The `typing` scenario (see the module documentation).
pub async fn typing(
    ctx: &Ctx,
    base_url: &str,
    pid: Option<u32>,
    duration: Duration,
    args: TypingArgs,
) -> anyhow::Result<serde_json::Value> {
    let TypingArgs {
        members,
        typers,
        toggle_ms,
        send_connections,
        rounds,
    } = args;
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
    let mut seen = Vec::new();
    let mut handles = Vec::new();
    for ((client, events), user) in clients.into_iter().zip(&users) {
        let s = Arc::new(TypingSeen::default());
        drain(events, s.clone(), user.clone());
        seen.push(s);
        handles.push(client);
    }
    let mut send_pairs = Vec::new();
    for (i, (client, events)) in send_clients.into_iter().enumerate() {
        drain(events, Arc::default(), senders[i].clone());
        let pair = &senders[i - i % 2];
        send_pairs.push((client, format!("{}-{pair}", ctx.run)));
    }
    let received = |seen: &[Arc<TypingSeen>]| seen.iter().map(|s| s.events.load(Ordering::Relaxed)).sum::<u64>();

    // The typists run for the whole scenario; `active` turns their typing on and off.
    let active = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut typists = Vec::new();
    for client in handles.iter().take(typers) {
        let (client, channel, active, stop) = (client.clone(), channel.clone(), active.clone(), stop.clone());
        typists.push(tokio::spawn(async move {
            let mut on = false;
            while !stop.load(Ordering::Relaxed) {
                let want = active.load(Ordering::Relaxed) && !on;
                if want != on {
                    client.typing(&channel, want).await;
                    on = want;
                }
                tokio::time::sleep(Duration::from_millis(toggle_ms)).await;
            }
            client.typing(&channel, false).await;
        }));
    }
    // Typing alone.
    active.store(true, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (q0, d0, r0) = (
        frames_out(base_url, "TYPING").await?,
        frames_dropped(base_url, "TYPING").await?,
        received(&seen),
    );
    let cpu_a = CpuSample::take(pid, None);
    let started = Instant::now();
    tokio::time::sleep(duration).await;
    let alone = TypingWindow {
        secs: started.elapsed().as_secs_f64(),
        cpu: CpuSplit::between(&cpu_a, &CpuSample::take(pid, None)),
        queued: frames_out(base_url, "TYPING").await? - q0,
        dropped: frames_dropped(base_url, "TYPING").await? - d0,
        received: received(&seen) - r0,
    };
    active.store(false, Ordering::Relaxed);

    // Send without and with typing, in alternating order (stats::phase_order).
    let mut rounds_out = Vec::new();
    let mut ratios = Vec::new();
    let mut send_failed = 0;
    if !send_pairs.is_empty() {
        for round in 0..rounds.max(1) {
            let (mut without, mut with) = (0.0, 0.0);
            for with_typing in phase_order(round) {
                active.store(with_typing, Ordering::Relaxed);
                // Let the typists' state settle (and expiring indicators lapse) before measuring.
                tokio::time::sleep(Duration::from_millis(toggle_ms * 2 + 500)).await;
                let (q0, r0) = (frames_out(base_url, "TYPING").await?, received(&seen));
                let cpu_a = CpuSample::take(pid, None);
                let started = Instant::now();
                let (rate, failed) = send_phase(&send_pairs, 16, duration).await;
                let secs = started.elapsed().as_secs_f64();
                let cpu = CpuSplit::between(&cpu_a, &CpuSample::take(pid, None));
                let queued = frames_out(base_url, "TYPING").await? - q0;
                send_failed += failed;
                if with_typing {
                    with = rate;
                } else {
                    without = rate;
                }
                rounds_out.push(json!({
                    "round": round,
                    "typing": with_typing,
                    "sendAckedPerSec": rate.round(),
                    "sendFailed": failed,
                    "typingFramesQueuedPerSec": (queued / secs).round(),
                    "typingEventsReceivedPerSec": ((received(&seen) - r0) as f64 / secs).round(),
                    "serverCpuCorePct": cpu.server_core_pct,
                    "machineBusyPct": cpu.machine_busy_pct,
                }));
            }
            ratios.push((with / f64::max(without, 1e-9) * 1000.0).round() / 1000.0);
        }
    }
    active.store(false, Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    for typist in typists {
        let _ = typist.await;
    }

    // Every member saw every other typer; no typer saw itself.
    let typer_ids: HashSet<&String> = users.iter().take(typers).collect();
    let mut problems = Vec::new();
    for (user, s) in users.iter().zip(&seen) {
        let got = s.typers.lock().unwrap_or_else(|e| e.into_inner()).len();
        let want = typers - usize::from(typer_ids.contains(user));
        if got != want {
            problems.push(format!("{user} saw {got} of the {want} other typers"));
        }
        if s.own.load(Ordering::Relaxed) {
            problems.push(format!("{user} received its own typing"));
        }
        if problems.len() >= 20 {
            break;
        }
    }
    if send_failed > 0 {
        problems.push(format!("{send_failed} sends failed"));
    }
    if alone.queued <= 0.0 {
        problems.push("no TYPING frame was queued".into());
    }
    for client in handles.iter().chain(send_pairs.iter().map(|(c, _)| c)) {
        client.close().await;
    }
    Ok(json!({
        "scenario": "typing",
        "settings": {"members": members, "typers": typers, "toggleMs": toggle_ms, "sendConnections": send_connections, "rounds": rounds, "secs": duration.as_secs_f64()},
        "typingAlone": alone.json(),
        "send": rounds_out,
        "sendWithOverWithoutTyping": ratios,
        "verification": {"ran": true, "ok": problems.is_empty(), "problems": problems},
    }))
}

/// What one subscriber knows: user → online, and how many PRESENCE events
/// and offline-while-not-expected events it received.
#[derive(Default)]
struct View {
    online: HashMap<String, bool>,
    events: u64,
    flaps: u64,
}

type Shared = Arc<Mutex<View>>;

/// Counters shared by every watcher: PRESENCE events received, and when
/// the last one arrived (ns since `base`).
struct Clock {
    base: Instant,
    events: AtomicU64,
    last: AtomicU64,
    /// ERRORs the clients received (a refused PRESENCE_SUB: `unavailable`
    /// when the server's membership read timed out).
    errors: AtomicU64,
    /// Users who may be seen offline now (the leave phase).
    leaving: Mutex<HashSet<String>>,
}

fn watch(mut events: mpsc::Receiver<Event>, view: Shared, clock: Arc<Clock>) {
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let Event::Error(_) = event {
                clock.errors.fetch_add(1, Ordering::Relaxed);
            }
            if let Event::Presence { user_id, online, .. } = event {
                let at = clock.base.elapsed().as_nanos() as u64;
                let mut view = view.lock().unwrap_or_else(|e| e.into_inner());
                if !online
                    && !clock
                        .leaving
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .contains(&user_id)
                {
                    view.flaps += 1;
                }
                view.online.insert(user_id, online);
                view.events += 1;
                drop(view);
                clock.events.fetch_add(1, Ordering::Relaxed);
                clock.last.fetch_max(at, Ordering::Relaxed);
            }
        }
    });
}

/// Waits until `expected` more PRESENCE events than `from` arrived, or none
/// arrived for `quiet` (at most `limit` in all); returns the events and the
/// time from `start` to the last one.
async fn settle(clock: &Clock, from: u64, expected: u64, start: Instant, quiet: Duration) -> (u64, f64) {
    let limit = start + Duration::from_secs(300);
    let mut seen = clock.events.load(Ordering::Relaxed);
    let mut changed = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = clock.events.load(Ordering::Relaxed);
        if now != seen {
            seen = now;
            changed = Instant::now();
        }
        if seen - from >= expected || changed.elapsed() >= quiet || Instant::now() >= limit {
            break;
        }
    }
    // Stragglers beyond the expected count would show here.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let events = clock.events.load(Ordering::Relaxed) - from;
    let last = clock.base + Duration::from_nanos(clock.last.load(Ordering::Relaxed));
    (events, last.saturating_duration_since(start).as_secs_f64())
}

/// The `presence` scenario (see the module documentation): one run per group size.
pub async fn presence(
    ctx: &Ctx,
    base_url: &str,
    connections: usize,
    groups: &[usize],
    reconnect: usize,
    wave: usize,
) -> anyhow::Result<serde_json::Value> {
    let mut runs = Vec::new();
    let mut problems = Vec::new();
    for (k, &group) in groups.iter().enumerate() {
        let (run, mut wrong) = presence_once(ctx, base_url, connections, group, reconnect, wave, k).await?;
        problems.append(&mut wrong);
        runs.push(run);
    }
    problems.truncate(20);
    // Growth against the first group size.
    let field = |run: &serde_json::Value, phase: &str, name: &str| run[phase][name].as_f64().unwrap_or(0.0);
    let growth: Vec<serde_json::Value> = runs
        .iter()
        .map(|run| {
            let ratio = |phase: &str, name: &str| {
                let base = field(&runs[0], phase, name);
                (field(run, phase, name) / base.max(1e-9) * 100.0).round() / 100.0
            };
            json!({
                "subscriptionsPerUser": run["settings"]["subscriptionsPerUser"],
                "snapshotFrames": ratio("snapshot", "presenceFramesQueued"),
                "snapshotSecs": ratio("snapshot", "secsUntilAllRight"),
                "reconnectFrames": ratio("massReconnect", "presenceFramesQueued"),
                "reconnectSecs": ratio("massReconnect", "secsUntilAllRight"),
                "leaveFrames": ratio("leave", "presenceFramesQueued"),
                "leaveSecs": ratio("leave", "secsUntilAllRight"),
            })
        })
        .collect();
    Ok(json!({
        "scenario": "presence",
        "runs": runs,
        "growthAgainstFirst": growth,
        "verification": {"ran": true, "ok": problems.is_empty(), "problems": problems},
    }))
}

async fn presence_once(
    ctx: &Ctx,
    base_url: &str,
    connections: usize,
    group: usize,
    reconnect: usize,
    wave: usize,
    k: usize,
) -> anyhow::Result<(serde_json::Value, Vec<String>)> {
    let group = group.clamp(1, connections.max(1));
    let users: Vec<String> = (0..connections).map(|i| format!("{}-g{k}p{i}", ctx.run)).collect();
    let groups: Vec<Vec<String>> = users.chunks(group).map(<[String]>::to_vec).collect();
    for (g, members) in groups.iter().enumerate() {
        ctx.admin
            .create_channel(Some(&format!("{}-g{k}c{g}", ctx.run)), members)
            .await
            .context("create channel")?;
    }
    let tokens = tokens(ctx, &users).await?;
    let connect_started = Instant::now();
    let clients = connect(ctx, &users, &tokens).await?;
    let connect_secs = connect_started.elapsed().as_secs_f64();
    let clock = Arc::new(Clock {
        base: Instant::now(),
        events: AtomicU64::new(0),
        last: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        leaving: Mutex::default(),
    });
    let mut views: Vec<Shared> = Vec::new();
    let mut handles = Vec::new();
    let my_group = |i: usize| &groups[i / group];
    // Every view should list its group; subscriptions of the last, smaller group are its size.
    let expected_snapshot: u64 = (0..connections).map(|i| my_group(i).len() as u64).sum();
    let q0 = frames_out(base_url, "PRESENCE").await?;
    let d0 = frames_dropped(base_url, "PRESENCE").await?;
    for (client, events) in clients {
        let view: Shared = Arc::default();
        watch(events, view.clone(), clock.clone());
        views.push(view);
        handles.push(client);
    }
    // Subscribe in waves of `wave` (0: all at once), each waited for: each
    // PRESENCE_SUB reads the members table.
    let wave = if wave == 0 { connections.max(1) } else { wave };
    let started = Instant::now();
    let mut snapshot_events = 0;
    for first in (0..connections).step_by(wave) {
        let last = (first + wave).min(connections);
        let expected: u64 = (first..last).map(|i| my_group(i).len() as u64).sum();
        let from = clock.events.load(Ordering::Relaxed);
        for (i, client) in handles.iter().enumerate().take(last).skip(first) {
            client.subscribe_presence(my_group(i).clone()).await;
        }
        snapshot_events += settle(&clock, from, expected, started, Duration::from_secs(5)).await.0;
    }
    let snapshot_secs = clock
        .base
        .checked_add(Duration::from_nanos(clock.last.load(Ordering::Relaxed)))
        .map_or(0.0, |last| last.saturating_duration_since(started).as_secs_f64());
    let snapshot_frames = frames_out(base_url, "PRESENCE").await? - q0;
    let snapshot_errors = clock.errors.load(Ordering::Relaxed);
    let mut problems = Vec::new();
    let everyone_online =
        |view: &View, i: usize| my_group(i).iter().all(|u| view.online.get(u) == Some(&true)) && view.flaps == 0;
    for (i, view) in views.iter().enumerate() {
        if !everyone_online(&view.lock().unwrap_or_else(|e| e.into_inner()), i) {
            problems.push(format!(
                "G={group}: {} does not see its whole group online after the snapshot",
                users[i]
            ));
            break;
        }
    }

    // A mass reconnect inside the grace, spread over the groups: the
    // clients' own reconnect (they subscribe again by themselves).
    let reconnect = reconnect.min(connections);
    let stride = connections / reconnect.max(1);
    let chosen: Vec<usize> = (0..reconnect).map(|j| j * stride.max(1)).collect();
    let before_events: HashMap<usize, u64> = chosen
        .iter()
        .map(|&i| (i, views[i].lock().unwrap_or_else(|e| e.into_inner()).events))
        .collect();
    let expected_reconnect: u64 = chosen.iter().map(|&i| my_group(i).len() as u64).sum();
    let q0 = frames_out(base_url, "PRESENCE").await?;
    let from = clock.events.load(Ordering::Relaxed);
    let started = Instant::now();
    for &i in &chosen {
        handles[i].reconnect().await;
    }
    let (reconnect_events, reconnect_secs) =
        settle(&clock, from, expected_reconnect, started, Duration::from_secs(5)).await;
    let reconnect_errors = clock.errors.load(Ordering::Relaxed) - snapshot_errors;
    let reconnect_frames = frames_out(base_url, "PRESENCE").await? - q0;
    let mut flaps = 0;
    for (i, view) in views.iter().enumerate() {
        let view = view.lock().unwrap_or_else(|e| e.into_inner());
        flaps += view.flaps;
        let fresh = before_events
            .get(&i)
            .is_none_or(|before| view.events - before >= my_group(i).len() as u64);
        if (!everyone_online(&view, i) || !fresh) && problems.len() < 5 {
            problems.push(format!(
                "G={group}: {} does not hold the right state after the mass reconnect (fresh snapshot: {fresh})",
                users[i]
            ));
        }
    }

    // The same users leave for good: their watchers see them offline after the grace.
    let gone: HashSet<String> = chosen.iter().map(|&i| users[i].clone()).collect();
    *clock.leaving.lock().unwrap_or_else(|e| e.into_inner()) = gone.clone();
    let watchers: Vec<usize> = (0..connections).filter(|i| !gone.contains(&users[*i])).collect();
    let expected_leave: u64 = watchers
        .iter()
        .map(|&i| my_group(i).iter().filter(|u| gone.contains(*u)).count() as u64)
        .sum();
    let q0 = frames_out(base_url, "PRESENCE").await?;
    let from = clock.events.load(Ordering::Relaxed);
    let started = Instant::now();
    for &i in &chosen {
        handles[i].close().await;
    }
    let (leave_events, leave_secs) = settle(&clock, from, expected_leave, started, Duration::from_secs(15)).await;
    let leave_frames = frames_out(base_url, "PRESENCE").await? - q0;
    for &i in &watchers {
        let view = views[i].lock().unwrap_or_else(|e| e.into_inner());
        let right = my_group(i)
            .iter()
            .all(|u| view.online.get(u) == Some(&!gone.contains(u)));
        if !right && problems.len() < 10 {
            problems.push(format!(
                "G={group}: {} does not hold the right state after the leave",
                users[i]
            ));
        }
    }
    if flaps > 0 {
        problems.push(format!(
            "G={group}: {flaps} PRESENCE offline seen for users who never left"
        ));
    }
    let dropped = frames_dropped(base_url, "PRESENCE").await? - d0;
    for client in &handles {
        client.close().await;
    }
    let phase = |frames: f64, events: u64, expected: u64, secs: f64, errors: u64| json!({"presenceFramesQueued": frames, "presenceEventsReceived": events, "expectedEvents": expected, "secsUntilAllRight": (secs * 1000.0).round() / 1000.0, "errorsReceived": errors});
    let leave_errors = clock.errors.load(Ordering::Relaxed) - snapshot_errors - reconnect_errors;
    if snapshot_errors + reconnect_errors + leave_errors > 0 {
        problems.push(format!(
            "G={group}: ERRORs received (refused PRESENCE_SUBs): {snapshot_errors} subscribing, {reconnect_errors} after the mass reconnect"
        ));
    }
    let out = json!({
        "settings": {"connections": connections, "subscriptionsPerUser": group, "reconnect": reconnect, "subscribeWave": wave, "connectSecs": (connect_secs * 10.0).round() / 10.0},
        "snapshot": phase(snapshot_frames, snapshot_events, expected_snapshot, snapshot_secs, snapshot_errors),
        "massReconnect": phase(reconnect_frames, reconnect_events, expected_reconnect, reconnect_secs, reconnect_errors),
        "leave": phase(leave_frames, leave_events, expected_leave, leave_secs, leave_errors),
        "flapsSeen": flaps,
        "presenceFramesDropped": dropped,
    });
    Ok((out, problems))
}
