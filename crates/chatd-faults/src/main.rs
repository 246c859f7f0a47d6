//! `chatd-faults`: runs a chat workload on the client library against a
//! chatd process it controls, injects faults while the workload runs, and
//! then checks the whole recorded history (see [`check::check`]).
//!
//! Faults (`--faults`, comma-separated):
//! - `kill`: `kill -9` of chatd at a random moment, restart after 0–300 ms;
//! - `term`: SIGTERM (graceful shutdown under load), restart;
//! - `dbconn`: terminate every PostgreSQL connection of chatd
//!   (`pg_terminate_backend`; PostgreSQL only);
//! - `storm`: every client drops its connection at once and reconnects
//!   (each then syncs its gaps), without a server fault.
//!
//! Every restart is also a reconnect storm: all clients reconnect at once
//! and sync. Exit status 1 when the checker finds a violation. Usage:
//! README.md and docs/reliability.md.

mod check;
mod server;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use chatd_client::admin::AdminClient;
use chatd_client::{Client, ClientConfig, Event, StartFrom};
use clap::Parser;
use futures_util::stream::{FuturesUnordered, StreamExt};
use rand::seq::IndexedRandom;
use rand::Rng;
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::check::{ClientLog, Sent};
use crate::server::{PgDatabase, Server};

#[derive(Parser, Debug)]
#[command(
    name = "chatd-faults",
    version,
    about = "Fault-injection harness and history checker for chatd"
)]
struct Cli {
    /// The chatd binary to run (e.g. target/release/chatd).
    #[arg(long, default_value = "target/debug/chatd")]
    chatd: PathBuf,
    /// Run on a fresh database on this PostgreSQL server (an admin URL such as
    /// postgres://postgres@127.0.0.1:5432/postgres); default: embedded SQLite.
    #[arg(long)]
    postgres: Option<String>,
    /// How long the workload and the faults run.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Users; each has `--devices` connected clients.
    #[arg(long, default_value_t = 4)]
    users: usize,
    #[arg(long, default_value_t = 2)]
    devices: usize,
    #[arg(long, default_value_t = 3)]
    channels: usize,
    /// Mean time between two sends of one device.
    #[arg(long, default_value = "40ms", value_parser = humantime::parse_duration)]
    send_every: Duration,
    /// Sends in flight per device at most.
    #[arg(long, default_value_t = 8)]
    in_flight: usize,
    /// Faults to inject.
    #[arg(long, default_value = "kill,term,dbconn,storm", value_delimiter = ',')]
    faults: Vec<String>,
    /// Mean time between faults.
    #[arg(long, default_value = "4s", value_parser = humantime::parse_duration)]
    fault_every: Duration,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// What the coordinator tells the devices.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// Send and receive.
    Load,
    /// Stop sending; finish what is in flight.
    Drain,
    /// Receive until each channel reaches its final `seq`.
    Final(Arc<HashMap<String, i64>>),
    /// Drop the connection now and reconnect (a storm).
    Storm(u64),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    for fault in &cli.faults {
        if !["kill", "term", "dbconn", "storm"].contains(&fault.as_str()) {
            bail!("unknown fault {fault:?}");
        }
    }
    let dir = std::env::temp_dir().join(format!("chatd-faults-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir)?;
    let database = match &cli.postgres {
        Some(url) => Some(PgDatabase::create(url).await?),
        None => None,
    };
    let mut server = Server::new(cli.chatd.clone(), dir.clone(), database.as_ref().map(|d| d.url.clone()))?;
    server.start().await?;
    let result = run(&cli, &mut server, database.as_ref()).await;
    let _ = server.terminate().await;
    if let Some(db) = &database {
        let _ = db.drop_database().await;
    }
    let (report, ok) = result?;
    if ok {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("server log kept in {}", dir.display());
    }
    if cli.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
        println!("{}", if ok { "no violations" } else { "VIOLATIONS FOUND" });
    }
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

async fn run(
    cli: &Cli,
    server: &mut Server,
    database: Option<&PgDatabase>,
) -> anyhow::Result<(serde_json::Value, bool)> {
    let admin = AdminClient::new(server.base(), server.admin_token.clone());
    let users: Vec<String> = (0..cli.users.max(2)).map(|i| format!("user{i}")).collect();
    let channels: Vec<String> = (0..cli.channels.max(1)).map(|i| format!("chan{i}")).collect();
    // Each channel gets every user but one (rotating), so memberships overlap
    // without being all the same.
    let mut membership: HashMap<String, Vec<String>> = HashMap::new();
    for (k, channel) in channels.iter().enumerate() {
        let members: Vec<String> = users
            .iter()
            .enumerate()
            .filter(|(i, _)| users.len() < 3 || *i != k % users.len())
            .map(|(_, u)| u.clone())
            .collect();
        admin.create_channel(Some(channel), &members).await?;
        for m in &members {
            membership.entry(m.clone()).or_default().push(channel.clone());
        }
    }
    let (phase_tx, phase_rx) = watch::channel(Phase::Load);
    let drained = Arc::new(AtomicUsize::new(0));
    let mut devices = Vec::new();
    for user in &users {
        let token = admin.token(user, Some(86_400)).await?;
        for d in 0..cli.devices.max(1) {
            let mut config = ClientConfig::new(format!("ws://127.0.0.1:{}/v1/ws", server.port), token.clone());
            config.start_from = StartFrom::Beginning;
            config.auto_delivered = true;
            config.ack_timeout = Duration::from_secs(5);
            config.backoff_initial = Duration::from_millis(20);
            config.backoff_max = Duration::from_millis(1000);
            config.connect_timeout = Duration::from_secs(5);
            let (client, events) = Client::connect(config).await.context("connect a device")?;
            let log = ClientLog {
                name: format!("{user}/{d}"),
                user: user.clone(),
                channels: membership.get(user).cloned().unwrap_or_default(),
                ..ClientLog::default()
            };
            let phase = phase_rx.clone();
            let (every, in_flight) = (cli.send_every, cli.in_flight.max(1));
            let drained = drained.clone();
            devices.push(tokio::spawn(device(
                client, events, log, phase, every, in_flight, drained,
            )));
        }
    }

    // Faults while the load runs.
    let mut injected: BTreeMap<String, u64> = BTreeMap::new();
    let end = Instant::now() + cli.duration;
    let mut storms = 0u64;
    loop {
        let wait = cli.fault_every.mul_f64(rand::rng().random_range(0.5..1.5));
        if Instant::now() + wait >= end {
            tokio::time::sleep_until(end).await;
            break;
        }
        tokio::time::sleep(wait).await;
        let Some(fault) = cli.faults.choose(&mut rand::rng()).cloned() else {
            continue;
        };
        match fault.as_str() {
            "kill" => {
                server.kill().await?;
                let pause = rand::rng().random_range(0..300);
                tokio::time::sleep(Duration::from_millis(pause)).await;
                server.start().await?;
            }
            "term" => {
                server.terminate().await?;
                server.start().await?;
            }
            "dbconn" => match database {
                Some(db) => db.terminate_connections().await?,
                None => continue,
            },
            "storm" => {
                storms += 1;
                let _ = phase_tx.send(Phase::Storm(storms));
                tokio::time::sleep(Duration::from_millis(50)).await;
                let _ = phase_tx.send(Phase::Load);
            }
            _ => continue,
        }
        *injected.entry(fault).or_default() += 1;
    }

    // Drain: every send in flight must end ACKed (the clients retry).
    let _ = phase_tx.send(Phase::Drain);
    let drain_deadline = Instant::now() + Duration::from_secs(120);
    while drained.load(Ordering::SeqCst) < devices.len() && Instant::now() < drain_deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Final targets, read after the last send could have been stored.
    let mut history = HashMap::new();
    let mut targets = HashMap::new();
    tokio::time::sleep(Duration::from_secs(1)).await;
    for _ in 0..60 {
        let mut stable = true;
        for channel in &channels {
            let last = admin.channel(channel).await?.last_seq;
            if targets.insert(channel.clone(), last) != Some(last) {
                stable = false;
            }
        }
        if stable {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let _ = phase_tx.send(Phase::Final(Arc::new(targets.clone())));
    let mut logs = Vec::new();
    for d in devices {
        logs.push(d.await.context("device task")?);
    }
    for channel in &channels {
        history.insert(channel.clone(), admin.history(channel).await?);
    }
    let findings = check::check(&history, &logs);
    let ok = findings.violations.is_empty();
    let sessions: usize = logs.iter().map(|l| l.sessions).sum();
    let report = json!({
        "store": if database.is_some() { "postgres" } else { "sqlite" },
        "durationSecs": cli.duration.as_secs_f64(),
        "devices": logs.len(),
        "channels": channels.len(),
        "faultsInjected": injected,
        "sessionsStarted": sessions,
        "sends": findings.sends,
        "acks": findings.acks,
        "duplicateAcks": findings.duplicate_acks,
        "messagesStored": findings.messages_stored,
        "finalSeqs": targets,
        "violations": findings.violations,
    });
    Ok((report, ok))
}

/// One device: sends at random intervals into its user's channels while
/// the phase is `Load`, records everything, and at the end receives until
/// it has every channel up to its final `seq`.
async fn device(
    client: Client,
    mut events: tokio::sync::mpsc::Receiver<Event>,
    mut log: ClientLog,
    mut phase: watch::Receiver<Phase>,
    every: Duration,
    max_in_flight: usize,
    drained: Arc<AtomicUsize>,
) -> ClientLog {
    let mut reported_drained = false;
    let mut in_flight = FuturesUnordered::new();
    let mut next_send = Instant::now();
    let mut counter = 0u64;
    let mut targets: Option<Arc<HashMap<String, i64>>> = None;
    let mut final_deadline = None;
    loop {
        let current = phase.borrow().clone();
        if let Phase::Final(t) = &current {
            if targets.is_none() {
                targets = Some(t.clone());
                final_deadline = Some(Instant::now() + Duration::from_secs(60));
            }
        }
        if let Some(t) = &targets {
            let caught_up = log.channels.iter().all(|c| {
                let want = t.get(c).copied().unwrap_or(0);
                log.delivered.get(c).and_then(|v| v.last()).map_or(0, |m| m.0) >= want
            });
            if (caught_up && in_flight.is_empty()) || final_deadline.is_some_and(|d| Instant::now() > d) {
                break;
            }
        }
        if current == Phase::Drain && in_flight.is_empty() && !reported_drained {
            reported_drained = true;
            drained.fetch_add(1, Ordering::SeqCst);
        }
        let sending = matches!(current, Phase::Load | Phase::Storm(_)) && !log.channels.is_empty();
        tokio::select! {
            () = tokio::time::sleep_until(next_send), if sending && in_flight.len() < max_in_flight => {
                let channel = log.channels[(counter as usize) % log.channels.len()].clone();
                let key = format!("{}-{}-{counter}", log.user, log.name.replace('/', "d"));
                counter += 1;
                let body = format!("{key} {}", "x".repeat(rand::rng().random_range(1..200)));
                log.sent.push(Sent { key: key.clone(), channel: channel.clone(), body: body.clone() });
                match client.submit(&channel, &key, body).await {
                    Ok(pending) => in_flight.push(async move { (key, pending.await) }),
                    Err(e) => log.failed.push((key, e.to_string())),
                }
                next_send = Instant::now() + every.mul_f64(rand::rng().random_range(0.2..1.8));
            }
            Some((key, result)) = in_flight.next(), if !in_flight.is_empty() => match result {
                Ok(ack) => log.acks.push(ack),
                Err(e) => log.failed.push((key, e.to_string())),
            },
            event = events.recv() => match event {
                Some(event) => record(&client, &mut log, event).await,
                None => break,
            },
            changed = phase.changed() => {
                if changed.is_err() {
                    break;
                }
                let storm = matches!(*phase.borrow(), Phase::Storm(_));
                if storm {
                    client.reconnect().await;
                }
            }
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
    client.close().await;
    log
}

async fn record(client: &Client, log: &mut ClientLog, event: Event) {
    match event {
        Event::Connected { channels, .. } => {
            log.sessions += 1;
            log.hellos.push(
                channels
                    .into_iter()
                    .map(|c| (c.channel_id, (c.delivered_seq, c.read_seq)))
                    .collect(),
            );
        }
        Event::Message(m) => {
            let from_other = m.sender_id != log.user;
            log.delivered
                .entry(m.channel_id.clone())
                .or_default()
                .push((m.seq, m.message_id));
            if from_other && rand::rng().random_bool(0.2) {
                client.mark_read(m.message_id).await;
            }
        }
        Event::Receipt {
            channel_id,
            user_id,
            kind,
            seq,
            ..
        } => log.receipts.push((channel_id, user_id, kind, seq)),
        Event::Error(_)
        | Event::Changed { .. }
        | Event::Disconnected { .. }
        | Event::Stopped { .. }
        | Event::Typing { .. }
        | Event::Presence { .. } => {}
    }
}
