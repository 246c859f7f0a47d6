//! `chatd-faults`: runs a chat workload on the client library against a
//! chatd process it controls, injects faults while the workload runs, and
//! then checks the whole recorded history (see [`check::check`]). The
//! workload sends messages and, for a share of its actions (`--entries`),
//! edits, deletes and reacts (`docs/protocol.md` §8); beside it, users of
//! their own are removed from and added back to a channel they keep sending
//! to (`--churners`, [`churn`]).
//!
//! Faults (`--faults`, comma-separated):
//! - `kill`: `kill -9` of chatd at a random moment, restart after 0–300 ms;
//! - `term`: SIGTERM (graceful shutdown under load), restart;
//! - `dbconn`: terminate every PostgreSQL connection of chatd
//!   (`pg_terminate_backend`; PostgreSQL only);
//! - `storm`: every client drops its connection at once and reconnects
//!   (each then syncs its gaps), without a server fault;
//! - `failover`: the run uses a PostgreSQL primary with a synchronous
//!   standby of its own (two `initdb` clusters, [`pg_cluster::PgPair`]) and
//!   chatd's URL names both; the fault kills the primary with SIGKILL
//!   mid-stream, promotes the standby, and brings the old primary back as
//!   the new one's synchronous standby from a fresh base backup (`dbconn`
//!   then terminates chatd's connections on the current primary).
//!
//! With `--replica-reads` (needs `failover`), chatd reads history, `SYNC`
//! and search from the standby (`database_replica_url`), through an
//! endpoint that follows the standby across failovers
//! ([`standby_endpoint`]); the report gives chatd's counts of the reads
//! the standby served and of those that went to the primary ([`metrics`]).
//! Beside the devices, readers page every channel by `SYNC` and the history
//! route and check each page ([`reads`]: no seq while a lower one is
//! missing, nothing committed before the read missing).
//!
//! Every restart is also a reconnect storm: all clients reconnect at once
//! and sync. Exit status 1 when the checker finds a violation. Usage:
//! README.md and docs/reliability.md.

mod check;
mod churn;
mod device;
mod metrics;
mod model;
mod reads;
mod record;
mod sdk;
mod server;
mod standby_endpoint;
mod threads;
mod workload;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use chatd_client::admin::AdminClient;
use chatd_client::{Client, ClientConfig, StartFrom};
use clap::Parser;
use rand::seq::IndexedRandom;
use rand::Rng;
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;

use chatd_faults::pg_cluster::{self, PgPair};

use crate::device::{device, DeviceClient};
use crate::record::{ClientLog, UserReads};
use crate::sdk::SdkDevice;
use crate::server::{PgDatabase, Server};
use crate::standby_endpoint::StandbyEndpoint;
use crate::workload::Workload;

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
    /// Share of a device's actions that are log entries about a message
    /// instead of sends: of those, 60 % reactions (add or remove), 30 % edits
    /// and 10 % deletes of the device's own messages. 0 sends messages only.
    #[arg(long, default_value_t = 0.3)]
    entries: f64,
    /// Share of a device's messages that are replies (§14), once a message
    /// of the channel has been handed over: half answer in the thread of a
    /// recent root (`threadId`), a third of those also quote it, the others
    /// quote a recent message (`replyTo`). 0 sends no replies.
    #[arg(long, default_value_t = 0.2)]
    replies: f64,
    /// Faults to inject.
    #[arg(long, default_value = "kill,term,dbconn,storm", value_delimiter = ',')]
    faults: Vec<String>,
    /// Mean time between faults.
    #[arg(long, default_value = "4s", value_parser = humantime::parse_duration)]
    fault_every: Duration,
    /// Run devices through the TypeScript SDK too: the path of its fault
    /// driver (`clients/typescript/build/test/faults/driver.js`, built by
    /// `npm run build:test`), run with `node`, one process per device.
    #[arg(long)]
    sdk_driver: Option<PathBuf>,
    /// With `--sdk-driver`: how many of each user's devices (the first ones)
    /// use the SDK; the others use the Rust client. Default: all.
    #[arg(long)]
    sdk_devices: Option<usize>,
    /// Users removed from and added back to a channel of their own while
    /// they send to it (membership changes racing sends; 0: none).
    #[arg(long, default_value_t = 2)]
    churners: usize,
    /// With `failover`: chatd reads history, `SYNC` and search from the
    /// standby (`database_replica_url` naming an endpoint that follows the
    /// standby through the failovers); the report counts the reads the
    /// standby served, and a run where it served none is a violation.
    #[arg(long)]
    replica_reads: bool,
    /// Mean time between two reads of each channel's reader (a `SYNC`, a
    /// history page after a seq, or the newest page, each checked); 0s: no
    /// readers.
    #[arg(long, default_value = "20ms", value_parser = humantime::parse_duration)]
    read_every: Duration,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The user the readers read as, a member of every channel.
const READER: &str = "reader";

/// What the coordinator tells the devices.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Phase {
    /// Receive only: devices are still being started (so every device is
    /// there from the channel's first entry on).
    Idle,
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
        if !["kill", "term", "dbconn", "storm", "failover"].contains(&fault.as_str()) {
            bail!("unknown fault {fault:?}");
        }
    }
    let dir = std::env::temp_dir().join(format!("chatd-faults-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir)?;
    // With `failover`: a primary and a synchronous standby of the run's own,
    // chatd's URL naming both.
    let mut pair = None;
    if cli.faults.iter().any(|f| f == "failover") {
        let Some(started) = tokio::task::block_in_place(|| PgPair::start(true)) else {
            bail!("the failover fault needs PostgreSQL's programs (initdb, pg_ctl, pg_basebackup)");
        };
        pair = Some(started);
    }
    let database = match (&cli.postgres, &pair) {
        (Some(url), None) => Some(PgDatabase::create(url).await?),
        _ => None,
    };
    let url = match &pair {
        Some(pair) => Some(pair.url(false)),
        None => database.as_ref().map(|d| d.url.clone()),
    };
    let mut server = Server::new(cli.chatd.clone(), dir.clone(), url)?;
    let endpoint = match (&pair, cli.replica_reads) {
        (Some(pair), true) => Some(StandbyEndpoint::start(pair.standby.port()).await?),
        (None, true) => bail!("--replica-reads needs the failover fault (a primary and a standby of the run's own)"),
        (_, false) => None,
    };
    if let Some(endpoint) = &endpoint {
        server.set_replica_url(endpoint.url());
    }
    server.start().await?;
    let result = run(&cli, &mut server, database.as_ref(), pair.as_mut(), endpoint.as_ref()).await;
    let _ = server.terminate().await;
    if let Some(db) = &database {
        let _ = db.drop_database().await;
    }
    // The run's own clusters stop and go now: `process::exit` below (a
    // violation) would skip their `Drop` and leave them running.
    drop(endpoint);
    drop(pair);
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
    mut pair: Option<&mut PgPair>,
    endpoint: Option<&StandbyEndpoint>,
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
        let mut with_reader = members.clone();
        if !cli.read_every.is_zero() {
            with_reader.push(READER.to_owned());
        }
        admin.create_channel(Some(channel), &with_reader).await?;
        for m in &members {
            membership.entry(m.clone()).or_default().push(channel.clone());
        }
    }
    let (phase_tx, phase_rx) = watch::channel(Phase::Idle);
    let drained = Arc::new(AtomicUsize::new(0));
    let mut devices = Vec::new();
    let mut tokens = HashMap::new();
    let mut sdk_devices = 0usize;
    for user in &users {
        let token = admin.token(user, Some(86_400)).await?;
        tokens.insert(user.clone(), token.clone());
        for d in 0..cli.devices.max(1) {
            let url = format!("ws://127.0.0.1:{}/v1/ws", server.port);
            let user_channels = membership.get(user).cloned().unwrap_or_default();
            let on_sdk = cli.sdk_driver.is_some() && d < cli.sdk_devices.unwrap_or(usize::MAX);
            let (client, events, name) = match &cli.sdk_driver {
                Some(driver) if on_sdk => {
                    let (device, events) =
                        SdkDevice::spawn(driver, &url, &token, &user_channels, Duration::from_secs(5))
                            .await
                            .context("start an SDK device")?;
                    (DeviceClient::Sdk(Box::new(device)), events, format!("{user}/ts{d}"))
                }
                _ => {
                    let mut config = ClientConfig::new(url, token.clone());
                    config.start_from = StartFrom::Beginning;
                    config.auto_delivered = true;
                    config.ack_timeout = Duration::from_secs(5);
                    config.backoff_initial = Duration::from_millis(20);
                    config.backoff_max = Duration::from_millis(1000);
                    config.connect_timeout = Duration::from_secs(5);
                    let (client, events) = Client::connect(config).await.context("connect a device")?;
                    (DeviceClient::Rust(client), events, format!("{user}/{d}"))
                }
            };
            if on_sdk {
                sdk_devices += 1;
            }
            let log = ClientLog {
                name,
                user: user.clone(),
                channels: user_channels,
                ..ClientLog::default()
            };
            let workload = Workload {
                every: cli.send_every,
                max_in_flight: cli.in_flight.max(1),
                entries: cli.entries.clamp(0.0, 1.0),
                replies: cli.replies.clamp(0.0, 1.0),
            };
            devices.push(tokio::spawn(device(
                client,
                events,
                log,
                phase_rx.clone(),
                workload,
                drained.clone(),
            )));
        }
    }

    let churn = match cli.churners {
        0 => None,
        n => {
            let url = format!("ws://127.0.0.1:{}/v1/ws", server.port);
            Some(tokio::spawn(churn::run(admin.clone(), url, n, phase_rx.clone())))
        }
    };
    let mut readers = Vec::new();
    if !cli.read_every.is_zero() {
        let token = admin.token(READER, Some(86_400)).await?;
        for channel in &channels {
            let reader = reads::Reader {
                ws_url: format!("ws://127.0.0.1:{}/v1/ws", server.port),
                admin: admin.clone(),
                member: AdminClient::new(server.base(), token.clone()),
                token: token.clone(),
                channel: channel.clone(),
                every: cli.read_every,
            };
            readers.push(tokio::spawn(reads::run(reader, phase_rx.clone())));
        }
    }
    let _ = phase_tx.send(Phase::Load);

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
            "dbconn" => match (database, pair.as_deref()) {
                (Some(db), _) => db.terminate_connections().await?,
                (None, Some(pair)) => terminate_on(&pair.primary)?,
                (None, None) => continue,
            },
            "failover" => match pair.as_deref_mut() {
                Some(pair) => {
                    tokio::task::block_in_place(|| pair.promote_standby());
                    // The standby's endpoint names none while there is none
                    // (its health check sees the promoted one is a primary),
                    // then the old primary once it streams as the standby.
                    if let Some(endpoint) = endpoint {
                        endpoint.point_at(None);
                    }
                    tokio::task::block_in_place(|| pair.rejoin_old_primary(true));
                    if let Some(endpoint) = endpoint {
                        endpoint.point_at(Some(pair.standby.port()));
                    }
                }
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
    let mut read_check = reads::ReadCheck::default();
    for reader in readers {
        read_check.merge(reader.await.context("reader task")?);
    }
    let replica_counts = server.replica_counts().await;
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
    // Each user's render-ready read of its channels (the history route
    // takes a member's token and answers `me` for that reader).
    let mut reads = UserReads::new();
    for (user, token) in &tokens {
        let reader = AdminClient::new(server.base(), token.clone());
        let mut mine = HashMap::new();
        for channel in membership.get(user).into_iter().flatten() {
            mine.insert(channel.clone(), reader.history(channel).await?);
        }
        reads.insert(user.clone(), mine);
    }
    let mut findings = check::check(&history, &reads, &logs);
    let churned = match churn {
        Some(task) => Some(task.await.context("churn task")??),
        None => None,
    };
    for violation in churned.iter().flat_map(churn::Churn::violations) {
        findings.violations.push(violation);
    }
    findings.violations.append(&mut read_check.violations);
    if cli.replica_reads && replica_counts.standby == 0 {
        findings
            .violations
            .push("(n) --replica-reads: the standby served no read (chatd_db_replica_reads_total 0)".into());
    }
    let ok = findings.violations.is_empty();
    let sessions: usize = logs.iter().map(|l| l.sessions).sum();
    let report = json!({
        "store": if pair.is_some() {
            "postgres, primary and synchronous standby"
        } else if database.is_some() {
            "postgres"
        } else {
            "sqlite"
        },
        "durationSecs": cli.duration.as_secs_f64(),
        "devices": logs.len(),
        "sdkDevices": sdk_devices,
        "channels": channels.len(),
        "faultsInjected": injected,
        "sessionsStarted": sessions,
        "sends": findings.sends,
        "acks": findings.acks,
        "duplicateAcks": findings.duplicate_acks,
        "ackedByKind": findings.acked_by_kind,
        "noopReactions": findings.noop_reactions,
        "refusedDeletedTarget": findings.refused_deleted_target,
        "statesCompared": findings.states_compared,
        "repliesAcked": findings.replies_acked,
        "threadSummariesCompared": findings.thread_summaries_compared,
        "messagesStored": findings.messages_stored,
        "finalSeqs": targets,
        "churn": churned.as_ref().map(churn::Churn::report),
        "reads": read_check,
        "replicaReads": cli.replica_reads.then_some(replica_counts),
        "violations": findings.violations,
    });
    Ok((report, ok))
}

/// `dbconn` on a run's own primary: terminates every client connection
/// (chatd's; not the standby's replication connection).
fn terminate_on(primary: &pg_cluster::OwnPostgres) -> anyhow::Result<()> {
    primary
        .sql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        )
        .map_err(|e| anyhow::anyhow!("terminate connections: {e}"))?;
    Ok(())
}
