//! `chatd-bench`: a load generator for a running chatd server.
//!
//! It sets up its own users, channels and tokens through the admin API (ids
//! carry a per-run prefix, so runs never collide), drives the server through
//! the project's client library (`chatd-client`), and reports acked sends/s,
//! delivered MSG_RECV/s, send→ACK and send→RECV latency percentiles (HDR
//! histograms), errors by code and the server's RSS. After the run it reads
//! every channel it used back through the history route and checks that
//! every ACKed message is stored exactly once and every channel's `seq` is
//! gapless. Exit status 1 when that check fails.
//!
//! Latency is measured from a send's *intended* time: in closed-loop mode
//! (`--in-flight W`) that is when the send was handed to the client; in
//! fixed-rate mode (`--rate R`) it is the send's slot in the schedule (the
//! connections' schedules are offset from each other, so together they send
//! a steady stream of R per second), so a stall that delays later sends shows
//! in their latency (no coordinated omission; Gil Tene, "How NOT to Measure
//! Latency"). The intended time
//! travels in the first 17 bytes of the body, so a receiver can measure
//! send→RECV without a side channel.
//!
//! Usage is in README.md ("Benchmarks") and docs/performance.md.

mod big_channel;
mod directory;
mod directory_seed;
mod entries;
mod ephemeral;
mod history;
mod reads;
mod search;
mod search_seed;
mod seed;
mod stats;
mod thread;
mod webhook;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use chatd_client::admin::AdminClient;
use chatd_client::{Ack, Client, ClientConfig, EntryRequest, Event, SendError, SendOptions, StartFrom};
use clap::{Parser, Subcommand};
use futures_util::stream::{FuturesUnordered, StreamExt};
use hdrhistogram::Histogram;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::entries::{Change, ChangeKind, Kind, Mix, Op, Picker};
use crate::stats::{histogram, record, CpuSample, CpuSplit, Percentiles, Report, Verification};

/// The generator decodes every MSG_RECV its connections get (half a million a
/// second in `hot`), which is allocation-heavy; mimalloc makes that cheaper
/// than glibc's malloc, so the generator limits fewer runs. The server keeps
/// the system allocator: figures describe chatd as shipped.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(name = "chatd-bench", version, about = "Load generator for chatd")]
struct Cli {
    /// The server's base URL (admin API, and WebSocket connections).
    #[arg(long, default_value = "http://127.0.0.1:8080", global = true)]
    url: String,
    /// More nodes of the same cluster (comma-separated base URLs): connection
    /// `i` goes to node `i mod n` of `--url` followed by these, so a
    /// multi-node run spreads its clients over the nodes.
    #[arg(long, value_delimiter = ',', global = true)]
    nodes: Vec<String>,
    /// Source addresses of the WebSocket connections (comma-separated, e.g.
    /// 127.0.0.2,127.0.0.3): connection `i` binds `source_addrs[i mod n]`
    /// before connecting. One source address has about 28,000 ports to one
    /// server address (Linux's `ip_local_port_range`), so 100,000
    /// connections need at least four; any address of 127.0.0.0/8 is
    /// local on Linux. Default: the system chooses.
    #[arg(long, value_delimiter = ',', global = true)]
    source_addrs: Vec<std::net::IpAddr>,
    /// The server's admin token (or CHATD_ADMIN_TOKEN).
    #[arg(long, env = "CHATD_ADMIN_TOKEN", hide_env_values = true, global = true)]
    admin_token: Option<String>,
    /// Measured time, after the warm-up (e.g. 10s, 1m).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration, global = true)]
    duration: Duration,
    /// Time before measuring starts (load runs, figures are not kept).
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration, global = true)]
    warmup: Duration,
    /// Message body size in bytes (at least 17: the send time travels in it).
    #[arg(long, default_value_t = 100, global = true)]
    body_bytes: usize,
    /// Fill message bodies after the send time with chat text (the `search`
    /// scenario's multilingual words, about `--body-bytes` in all) instead
    /// of `x`s, so that a text index sees realistic sends.
    #[arg(long, global = true)]
    text_bodies: bool,
    /// The server's pid, to read its RSS (default: the only process named `chatd`).
    #[arg(long, global = true)]
    server_pid: Option<u32>,
    /// The server's PostgreSQL database, to report the CPU of its backends
    /// (processes `postgres: … <name> …` on this machine).
    #[arg(long, global = true)]
    pg_database: Option<String>,
    /// Print one JSON object instead of the table.
    #[arg(long, global = true)]
    json: bool,
    /// Skip the post-run history check.
    #[arg(long, global = true)]
    no_verify: bool,
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Subcommand, Debug, Clone)]
enum Scenario {
    /// C connections (one user each), K channels of M members; each
    /// connection sends into its user's channels in turn.
    Send {
        #[arg(long, default_value_t = 64)]
        connections: usize,
        #[arg(long, default_value_t = 100)]
        channels: usize,
        #[arg(long, default_value_t = 8)]
        members: usize,
        /// Closed loop: sends in flight per connection.
        #[arg(long, default_value_t = 16)]
        in_flight: usize,
        /// Open loop: total sends per second at fixed intervals (overrides --in-flight).
        #[arg(long, value_parser = positive_rate)]
        rate: Option<f64>,
    },
    /// The `send` layout writing a mix of log entries (default 70 % MSG_SEND,
    /// 20 % MSG_REACT, 10 % MSG_EDIT), measured against plain `send` in the
    /// same run: each round runs `send`, then the mix, on fresh channels and
    /// connections (`--warmup` and `--duration` each). Reports entries/s and
    /// send→ACK per phase and the ratio, and checks every channel's state
    /// read back (latest edit, reaction counts in first-use order).
    Mix {
        #[arg(long, default_value_t = 64)]
        connections: usize,
        #[arg(long, default_value_t = 100)]
        channels: usize,
        #[arg(long, default_value_t = 8)]
        members: usize,
        #[arg(long, default_value_t = 16)]
        in_flight: usize,
        /// Open loop: total entries per second (overrides --in-flight).
        #[arg(long, value_parser = positive_rate)]
        rate: Option<f64>,
        /// MSG_REACT per 100 entries.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(0..=100))]
        react_pct: u32,
        /// MSG_EDIT per 100 entries.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=100))]
        edit_pct: u32,
        /// Thread replies (MSG_SEND with `threadId` and `replyTo` of one of
        /// the connection's own recent messages, §14) per 100 entries.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100))]
        reply_pct: u32,
        /// Rounds of a plain `send` phase and a mix phase; send goes first in
        /// even rounds and second in odd ones, so the later phase's bigger
        /// tables and the machine's drift do not all fall on one side (use
        /// an even number).
        #[arg(long, default_value_t = 2)]
        rounds: usize,
    },
    /// Render-ready history reads of two channels of N entries each: one of
    /// plain messages, one where every 10th entry is an edit or a reaction
    /// (alternately) of a message of its block. Pages through the history
    /// route (as a member, so `me` is computed) and SYNC catch-ups, both
    /// channels interleaved; reports p50/p99 per channel and their ratio.
    History(history::HistoryArgs),
    /// `GET /v1/me/search` on N messages of multilingual text seeded
    /// straight into the server's database: p50/p99 per query kind (a
    /// common word, a rare word, CJK terms of 3 and 2 characters, a term
    /// with `-`, two terms), each page checked; and the `send` rate with
    /// and without the search index in the same run.
    Search(search::SearchArgs),
    /// `GET /v1/directory` over N channels (80 % public, 10 % private, 10 %
    /// direct) seeded straight into the server's database: every page
    /// walked and checked (no private or direct channel listed), then the
    /// first page, a deep keyset page, and a `q` matching few and one
    /// matching many channels, timed, with CPU per request.
    Directory(directory::DirectoryArgs),
    /// HELLO (connect to first frame), `GET /v1/channels/{id}` (version 1's
    /// full `members` array) and the members route, for a channel of N
    /// members next to one of 8 in the same run, with sizes and CPU per
    /// request.
    BigChannel(big_channel::BigChannelArgs),
    /// One thread of a long channel (§14): a channel of N messages written
    /// straight into the database, every K-th a reply in the thread of the
    /// first; the thread's newest and older pages timed next to the
    /// channel's newest page in the same run, with CPU per request.
    Thread(thread::ThreadArgs),
    /// Every connection sends into one channel (all are its members).
    Hot {
        #[arg(long, default_value_t = 64)]
        connections: usize,
        #[arg(long, default_value_t = 16)]
        in_flight: usize,
        #[arg(long, value_parser = positive_rate)]
        rate: Option<f64>,
    },
    /// One channel with N connected members; `senders` of them send.
    Fanout {
        #[arg(long, default_value_t = 1000)]
        members: usize,
        #[arg(long, default_value_t = 1)]
        senders: usize,
        #[arg(long, default_value_t = 4)]
        in_flight: usize,
        /// Total sends per second (recommended: deliveries = rate × (members − 1)).
        #[arg(long, value_parser = positive_rate)]
        rate: Option<f64>,
    },
    /// Hold N connections open; report the server's RSS per connection.
    Idle {
        #[arg(long, default_value_t = 10_000)]
        connections: usize,
        /// Connections per user (the server allows 100 per user by default).
        #[arg(long, default_value_t = 50)]
        per_user: usize,
        /// Connections opened at once while connecting (each waits for
        /// its HELLO).
        #[arg(long, default_value_t = 64)]
        connect_concurrency: usize,
        /// After the hold, wait this long for the server to go away (the
        /// operator's `kill -9` and restart; "holding" on stderr says when),
        /// and time the reconnection: each client reconnects by itself with
        /// its backoff and full jitter (50 ms doubling to 5 s), as any
        /// client of the library does. 0: no storm.
        #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
        storm_wait: Duration,
    },
    /// A member that missed X messages catches up with SYNC; then random
    /// history pages are read through the HTTP route.
    Sync {
        #[arg(long, default_value_t = 100_000)]
        messages: usize,
        /// Reuse this channel (created and filled on first use) instead of a fresh one.
        #[arg(long)]
        channel: Option<String>,
        /// History pages to read after the catch-up.
        #[arg(long, default_value_t = 200)]
        history_reads: usize,
        /// The member missed only the last N messages (default: all of them),
        /// so catching up in a long channel can be timed apart from its length.
        #[arg(long)]
        catch_up: Option<usize>,
    },
    /// Pages of 100 read back through the history route on an existing
    /// (large) channel: `latest=true`, `beforeSeq` at scattered seqs, and,
    /// for comparison, `afterSeq` at the same seqs.
    PageBack {
        /// The channel to read (its lastSeq sets the range).
        #[arg(long)]
        channel: String,
        /// Pages read of each kind.
        #[arg(long, default_value_t = 500)]
        reads: usize,
    },
    /// One channel of M connected members, T of them typing (on and off
    /// every --toggle-ms): TYPING frames queued and received per second and
    /// server CPU per frame, typing alone; with --send-connections, the
    /// plain send figure without and with that typing load, --rounds pairs
    /// in alternating order (use an even number; `--duration` each phase).
    Typing {
        #[arg(long, default_value_t = 1000)]
        members: usize,
        #[arg(long, default_value_t = 50)]
        typers: usize,
        #[arg(long, default_value_t = 500)]
        toggle_ms: u64,
        #[arg(long, default_value_t = 0)]
        send_connections: usize,
        #[arg(long, default_value_t = 2)]
        rounds: usize,
    },
    /// The `send` load with a webhook receiver served here (the server runs
    /// with `CHATD_WEBHOOK_URL=http://<listen>/hook`), healthy, then slow
    /// (answers after --slow-ms), then down, in one run; then the backlog's
    /// drain once it is healthy again.
    Webhook {
        /// Where the receiver listens.
        #[arg(long, default_value = "127.0.0.1:9911")]
        listen: std::net::SocketAddr,
        #[arg(long, default_value_t = 64)]
        connections: usize,
        #[arg(long, default_value_t = 100)]
        channels: usize,
        #[arg(long, default_value_t = 8)]
        members: usize,
        #[arg(long, default_value_t = 16)]
        in_flight: usize,
        /// How long the slow receiver takes to answer, ms.
        #[arg(long, default_value_t = 2000)]
        slow_ms: u64,
        /// Longest wait for the backlog to drain.
        #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
        drain_timeout: Duration,
    },
    /// N connections in channels of G members, each subscribed to its G;
    /// then R of them (spread over the groups) reconnect at once, then
    /// leave: PRESENCE frames and the time until every subscriber holds the
    /// right state, per phase, for each G of --group (e.g. 10,50,100).
    Presence {
        #[arg(long, default_value_t = 2000)]
        connections: usize,
        #[arg(long, value_delimiter = ',', default_value = "100")]
        group: Vec<usize>,
        #[arg(long, default_value_t = 200)]
        reconnect: usize,
        /// The first subscriptions go in waves of this many connections,
        /// each waited for (0: all at once).
        #[arg(long, default_value_t = 1000)]
        subscribe_wave: usize,
    },
}

/// Shared by every worker of a run.
struct Ctx {
    admin: AdminClient,
    /// WebSocket URLs, one per node; connection `i` uses `ws_urls[i % n]`.
    ws_urls: Vec<String>,
    /// Source addresses; connection `i` binds `source_addrs[i % n]` (none:
    /// the system chooses).
    source_addrs: Vec<std::net::IpAddr>,
    run: String,
    base: Instant,
    measure_from: Instant,
    measure_to: Instant,
    body_bytes: usize,
    /// Chat text instead of `x`s after the send time (`--text-bodies`).
    text_bodies: bool,
}

impl Ctx {
    /// The same server, with run prefix `{run}-{suffix}` (a phase's own
    /// users, channels and keys).
    fn phase(&self, suffix: &str) -> Ctx {
        Ctx {
            admin: self.admin.clone(),
            ws_urls: self.ws_urls.clone(),
            source_addrs: self.source_addrs.clone(),
            run: format!("{}-{suffix}", self.run),
            base: self.base,
            measure_from: self.measure_from,
            measure_to: self.measure_to,
            body_bytes: self.body_bytes,
            text_bodies: self.text_bodies,
        }
    }

    fn in_window(&self, t: Instant) -> bool {
        t >= self.measure_from && t < self.measure_to
    }

    fn body(&self, intended: Instant) -> String {
        let nanos = intended.duration_since(self.base).as_nanos() as u64;
        let mut body = format!("{nanos:016x}.");
        if self.text_bodies {
            return search_seed::text_body(body, nanos, self.body_bytes);
        }
        body.extend(std::iter::repeat_n('x', self.body_bytes.saturating_sub(body.len())));
        body
    }

    fn intended_of(&self, body: &str) -> Option<Instant> {
        let nanos = u64::from_str_radix(body.get(..16)?, 16).ok()?;
        Some(self.base + Duration::from_nanos(nanos))
    }

    fn client_config(&self, index: usize, token: String) -> ClientConfig {
        let url = self.ws_urls[index % self.ws_urls.len()].clone();
        let mut config = ClientConfig::new(url, token);
        config.ack_timeout = Duration::from_secs(30);
        config.connect_timeout = Duration::from_secs(30);
        config.event_capacity = 65_536;
        // No scenario reads the client's folded message state (each checks
        // what the server stored), and keeping it costs memory and CPU per
        // received frame that would be charged to the server's figures.
        config.fold_messages = false;
        if !self.source_addrs.is_empty() {
            config.local_addr = Some(self.source_addrs[index % self.source_addrs.len()]);
        }
        config
    }
}

/// How a connection sends.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// Keep this many sends in flight.
    Closed(usize),
    /// One send every this long, on a fixed schedule.
    Open(Duration),
    /// Receive only.
    Silent,
}

/// One connection of the run.
struct Plan {
    user: String,
    targets: Vec<String>,
    mode: Mode,
    /// Write a mix of entries instead of sends only (`mix`).
    mix: Option<Mix>,
}

impl Plan {
    /// Whether this connection sends at all.
    fn sends(&self) -> bool {
        !self.targets.is_empty() && !matches!(self.mode, Mode::Silent)
    }
}

/// The first slot of the sending connection `rank` (0-based) of `senders`, in
/// fixed-rate mode where each sends once every `every`: the schedules are
/// spread evenly over one interval, so the connections together send once
/// every `every / senders`, a steady stream at the requested total rate
/// (rather than a burst of `senders` sends at once every `every`).
fn first_slot(start: Instant, every: Duration, rank: usize, senders: usize) -> Instant {
    start + every.mul_f64(rank as f64 / senders.max(1) as f64)
}

/// What one connection measured.
#[derive(Default)]
struct Tally {
    ack: Option<Histogram<u64>>,
    recv: Option<Histogram<u64>>,
    acked: u64,
    delivered: u64,
    retried: u64,
    errors: BTreeMap<String, u64>,
    acks: Vec<Ack>,
    /// `mix`: send→ACK and ACKed entries in the window, per kind.
    by_kind: BTreeMap<Kind, (u64, Histogram<u64>)>,
    /// `mix`: every ACKed edit and reaction, for the state check.
    changes: Vec<Change>,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        merge_hist(&mut self.ack, other.ack);
        merge_hist(&mut self.recv, other.recv);
        self.acked += other.acked;
        self.delivered += other.delivered;
        self.retried += other.retried;
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        self.acks.extend(other.acks);
        for (kind, (n, h)) in other.by_kind {
            let (m, into) = self.by_kind.entry(kind).or_insert_with(|| (0, histogram()));
            *m += n;
            let _ = into.add(h);
        }
        self.changes.extend(other.changes);
    }
}

fn merge_hist(into: &mut Option<Histogram<u64>>, from: Option<Histogram<u64>>) {
    match (into.as_mut(), from) {
        (Some(a), Some(b)) => {
            let _ = a.add(b);
        }
        (None, Some(b)) => *into = Some(b),
        _ => {}
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if cli.body_bytes < 17 {
        bail!("--body-bytes must be at least 17");
    }
    let admin_token = cli
        .admin_token
        .clone()
        .context("the admin token is needed: --admin-token or CHATD_ADMIN_TOKEN")?;
    // A connection is a descriptor: the soft limit up to the hard one.
    raise_fd_limit();
    let base = Instant::now();
    let run = format!(
        "b{}",
        uuid::Uuid::now_v7().simple().to_string().get(20..).unwrap_or("0")
    );
    let ctx = Arc::new(Ctx {
        admin: AdminClient::new(&cli.url, admin_token),
        ws_urls: std::iter::once(&cli.url)
            .chain(&cli.nodes)
            .map(|u| format!("{}/v1/ws", u.trim_end_matches('/').replacen("http", "ws", 1)))
            .collect(),
        source_addrs: cli.source_addrs.clone(),
        run,
        base,
        measure_from: base,
        measure_to: base,
        body_bytes: cli.body_bytes,
        text_bodies: cli.text_bodies,
    });
    let pid = cli.server_pid.or_else(stats::find_server_pid);
    let ephemeral = match cli.scenario.clone() {
        Scenario::Typing {
            members,
            typers,
            toggle_ms,
            send_connections,
            rounds,
        } => Some(
            ephemeral::typing(
                &ctx,
                &cli.url,
                pid,
                cli.duration,
                ephemeral::TypingArgs {
                    members,
                    typers: typers.min(members),
                    toggle_ms,
                    send_connections: send_connections & !1,
                    rounds,
                },
            )
            .await?,
        ),
        Scenario::Presence {
            connections,
            group,
            reconnect,
            subscribe_wave,
        } => Some(ephemeral::presence(&ctx, &cli.url, connections, &group, reconnect, subscribe_wave).await?),
        Scenario::Webhook {
            listen,
            connections,
            channels,
            members,
            in_flight,
            slow_ms,
            drain_timeout,
        } => Some(
            webhook::run(
                &cli,
                &ctx,
                pid,
                listen,
                connections,
                channels,
                members,
                in_flight,
                slow_ms,
                drain_timeout,
            )
            .await?,
        ),
        _ => None,
    };
    if let Some(figures) = ephemeral {
        println!("{}", serde_json::to_string_pretty(&figures)?);
        if figures["verification"]["ok"] != json!(true) {
            std::process::exit(1);
        }
        return Ok(());
    }
    let mut report = match cli.scenario.clone() {
        Scenario::Send {
            connections,
            channels,
            members,
            in_flight,
            rate,
        } => {
            let members = members.clamp(1, connections.max(1));
            let mode = mode_for(rate, connections, in_flight);
            let (layout, plans) = send_layout(&ctx.run, connections, channels, members, mode, None);
            let settings = json!({"connections": connections, "channels": channels, "members": members, "inFlight": in_flight, "rate": rate, "bodyBytes": cli.body_bytes});
            load(&cli, ctx, pid, "send", settings, layout, plans).await?
        }
        Scenario::Hot {
            connections,
            in_flight,
            rate,
        } => {
            let users: Vec<String> = (0..connections).map(|i| format!("{}-u{i}", ctx.run)).collect();
            let channel = format!("{}-hot", ctx.run);
            let mode = mode_for(rate, connections, in_flight);
            let plans = users
                .iter()
                .map(|u| Plan {
                    user: u.clone(),
                    targets: vec![channel.clone()],
                    mode,
                    mix: None,
                })
                .collect();
            let settings =
                json!({"connections": connections, "inFlight": in_flight, "rate": rate, "bodyBytes": cli.body_bytes});
            load(&cli, ctx, pid, "hot", settings, vec![(channel, users)], plans).await?
        }
        Scenario::Fanout {
            members,
            senders,
            in_flight,
            rate,
        } => {
            let users: Vec<String> = (0..members.max(1)).map(|i| format!("{}-u{i}", ctx.run)).collect();
            let channel = format!("{}-fan", ctx.run);
            let senders = senders.clamp(1, users.len());
            let send_mode = mode_for(rate, senders, in_flight);
            let plans = users
                .iter()
                .enumerate()
                .map(|(i, u)| Plan {
                    user: u.clone(),
                    targets: vec![channel.clone()],
                    mode: if i < senders { send_mode } else { Mode::Silent },
                    mix: None,
                })
                .collect();
            let settings = json!({"members": members, "senders": senders, "inFlight": in_flight, "rate": rate, "bodyBytes": cli.body_bytes});
            load(&cli, ctx, pid, "fanout", settings, vec![(channel, users)], plans).await?
        }
        Scenario::Idle {
            connections,
            per_user,
            connect_concurrency,
            storm_wait,
        } => {
            let args = IdleArgs {
                connections,
                per_user: per_user.max(1),
                connect_concurrency: connect_concurrency.max(1),
                storm_wait,
            };
            idle(&cli, ctx, pid, args).await?
        }
        Scenario::Sync {
            messages,
            channel,
            history_reads,
            catch_up,
        } => sync(&cli, ctx, messages, channel, history_reads, catch_up).await?,
        Scenario::PageBack { channel, reads } => page_back(ctx, channel, reads).await?,
        Scenario::Mix {
            connections,
            channels,
            members,
            in_flight,
            rate,
            react_pct,
            edit_pct,
            reply_pct,
            rounds,
        } => {
            if react_pct + edit_pct + reply_pct > 100 {
                bail!("--react-pct, --edit-pct and --reply-pct add up to more than 100");
            }
            let members = members.clamp(1, connections.max(1));
            let mix = Mix {
                react_pct,
                edit_pct,
                reply_pct,
            };
            let settings = json!({"connections": connections, "channels": channels, "members": members, "inFlight": in_flight, "rate": rate, "bodyBytes": cli.body_bytes, "sendPct": 100 - react_pct - edit_pct - reply_pct, "reactPct": react_pct, "editPct": edit_pct, "replyPct": reply_pct, "rounds": rounds});
            let mode = mode_for(rate, connections, in_flight);
            mix_rounds(&cli, &ctx, pid, settings, rounds.max(1), |run: &str, mix_on: bool| {
                send_layout(run, connections, channels, members, mode, mix_on.then_some(mix))
            })
            .await?
        }
        Scenario::History(args) => history::run(&cli, &ctx, args).await?,
        Scenario::Search(args) => search::run(&cli, &ctx, pid, args).await?,
        Scenario::Directory(args) => directory::run(&cli, &ctx, pid, args).await?,
        Scenario::BigChannel(args) => big_channel::run(&cli, &ctx, pid, args).await?,
        Scenario::Thread(args) => thread::run(&cli, &ctx, pid, args).await?,
        Scenario::Typing { .. } | Scenario::Presence { .. } | Scenario::Webhook { .. } => {
            unreachable!("handled above")
        }
    };
    if let Some(settings) = report.settings.as_object_mut() {
        settings.insert("nodes".into(), json!(1 + cli.nodes.len()));
    }
    if report.server_rss_bytes.is_none() {
        report.server_rss_bytes = pid.and_then(stats::rss_bytes);
    }
    if cli.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", report.table());
    }
    if report.verification.ran && !report.verification.ok {
        std::process::exit(1);
    }
    Ok(())
}

/// Parses `--rate`: a finite number of sends per second above 0 and at
/// most 10,000,000 (a 0 used to fall back to the closed loop silently).
fn positive_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 10_000_000.0 => Ok(r),
        Ok(_) => Err("must be a number of sends per second above 0 and at most 10000000".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn mode_for(rate: Option<f64>, senders: usize, in_flight: usize) -> Mode {
    match rate {
        Some(r) => Mode::Open(Duration::from_secs_f64(senders.max(1) as f64 / r)),
        None => Mode::Closed(in_flight.max(1)),
    }
}

/// The `send` layout: `connections` users, `channels` channels of `members`
/// (channel `k` holds users `k·members … k·members + members − 1`, mod the
/// user count); each user writes into its channels in turn.
fn send_layout(
    run: &str,
    connections: usize,
    channels: usize,
    members: usize,
    mode: Mode,
    mix: Option<Mix>,
) -> (Vec<(String, Vec<String>)>, Vec<Plan>) {
    let users: Vec<String> = (0..connections).map(|i| format!("{run}-u{i}")).collect();
    let layout: Vec<(String, Vec<String>)> = (0..channels)
        .map(|k| {
            let ids = (0..members)
                .map(|j| users[(k * members + j) % users.len()].clone())
                .collect();
            (format!("{run}-c{k}"), ids)
        })
        .collect();
    let plans = users
        .iter()
        .map(|u| Plan {
            user: u.clone(),
            targets: layout
                .iter()
                .filter(|(_, m)| m.contains(u))
                .map(|(c, _)| c.clone())
                .collect(),
            mode,
            mix,
        })
        .collect();
    (layout, plans)
}

/// The `mix` scenario: `rounds` pairs of a plain `send` phase and a mix
/// phase, in the order of [`stats::phase_order`], each on its own users and
/// channels (`layout(run, mix_on)`), on the same server. The report is the
/// last mix phase's, with every phase's figures and the per-round mix/send
/// ratios in `extra`, and the verification of all phases.
async fn mix_rounds(
    cli: &Cli,
    ctx: &Arc<Ctx>,
    pid: Option<u32>,
    settings: serde_json::Value,
    rounds: usize,
    layout: impl Fn(&str, bool) -> (Vec<(String, Vec<String>)>, Vec<Plan>),
) -> anyhow::Result<Report> {
    let mut phases = Vec::new();
    let mut ratios = Vec::new();
    let mut verification = Verification {
        ran: !cli.no_verify,
        ok: true,
        ..Verification::default()
    };
    let mut last = None;
    for round in 0..rounds {
        let (mut send_rate, mut mix_rate) = (None, None);
        for mix_on in stats::phase_order(round) {
            let name = if mix_on { "mix" } else { "send" };
            let phase = Arc::new(ctx.phase(&format!("r{round}{}", &name[..1])));
            let (channels, plans) = layout(&phase.run, mix_on);
            let report = load(cli, phase, pid, name, settings.clone(), channels, plans).await?;
            phases.push(json!({
                "round": round,
                "phase": name,
                "entriesPerSec": report.acked_per_sec.round(),
                "sendToAckMs": report.send_to_ack_ms,
                "sendToRecvMs": report.send_to_recv_ms,
                "entriesByKind": report.extra.get("entries_by_kind"),
                "ackMsByKind": report.extra.get("send_to_ack_ms_by_kind"),
                "errors": report.errors,
                "cpu": report.cpu,
            }));
            let v = &report.verification;
            verification.channels += v.channels;
            verification.stored += v.stored;
            verification.acked += v.acked;
            verification.ok &= !v.ran || v.ok;
            verification.problems.extend(v.problems.iter().cloned());
            if mix_on {
                mix_rate = Some(report.acked_per_sec);
                last = Some(report);
            } else {
                send_rate = Some(report.acked_per_sec);
            }
        }
        if let (Some(send), Some(mix)) = (send_rate, mix_rate) {
            ratios.push((mix / send.max(1e-9) * 1000.0).round() / 1000.0);
        }
    }
    let mut report = last.context("no round ran")?;
    report.scenario = "mix".into();
    report.extra.insert("phases".into(), json!(phases));
    report
        .extra
        .insert("mix_over_send_entries_per_sec".into(), json!(ratios));
    verification.problems.truncate(20);
    report.verification = verification;
    Ok(report)
}

/// Creates the channels, mints one token per user (32 requests at a time).
async fn setup(
    ctx: &Ctx,
    layout: &[(String, Vec<String>)],
    users: &[String],
    ttl: u64,
) -> anyhow::Result<HashMap<String, String>> {
    for (channel, members) in layout {
        ctx.admin
            .create_channel(Some(channel), members)
            .await
            .with_context(|| format!("create channel {channel}"))?;
    }
    let limit = Arc::new(Semaphore::new(32));
    let mut minting = FuturesUnordered::new();
    for user in users {
        let admin = ctx.admin.clone();
        let limit = limit.clone();
        let user = user.clone();
        minting.push(async move {
            let _permit = limit.acquire().await;
            let token = admin.token(&user, Some(ttl)).await;
            (user, token)
        });
    }
    let mut tokens = HashMap::new();
    while let Some((user, token)) = minting.next().await {
        tokens.insert(user, token.context("mint a token")?);
    }
    Ok(tokens)
}

async fn connect_all(
    ctx: &Arc<Ctx>,
    plans: &[Plan],
    tokens: &HashMap<String, String>,
) -> anyhow::Result<Vec<(Client, tokio::sync::mpsc::Receiver<Event>)>> {
    connect_all_with(ctx, plans, tokens, 64, |_| {}).await
}

/// [`connect_all`] with `concurrency` connections opened at once, each
/// client's settings adjusted by `adjust` first.
async fn connect_all_with(
    ctx: &Arc<Ctx>,
    plans: &[Plan],
    tokens: &HashMap<String, String>,
    concurrency: usize,
    adjust: impl Fn(&mut ClientConfig),
) -> anyhow::Result<Vec<(Client, tokio::sync::mpsc::Receiver<Event>)>> {
    let limit = Arc::new(Semaphore::new(concurrency));
    let mut connecting = FuturesUnordered::new();
    for (i, plan) in plans.iter().enumerate() {
        let mut config = ctx.client_config(i, tokens.get(&plan.user).cloned().unwrap_or_default());
        adjust(&mut config);
        let limit = limit.clone();
        connecting.push(async move {
            let _permit = limit.acquire().await;
            (i, Client::connect(config).await)
        });
    }
    let mut clients: Vec<Option<(Client, tokio::sync::mpsc::Receiver<Event>)>> =
        (0..plans.len()).map(|_| None).collect();
    while let Some((i, result)) = connecting.next().await {
        clients[i] = Some(result.context("connect")?);
    }
    Ok(clients.into_iter().flatten().collect())
}

async fn load(
    cli: &Cli,
    ctx: Arc<Ctx>,
    pid: Option<u32>,
    scenario: &str,
    settings: serde_json::Value,
    layout: Vec<(String, Vec<String>)>,
    plans: Vec<Plan>,
) -> anyhow::Result<Report> {
    let users: Vec<String> = plans.iter().map(|p| p.user.clone()).collect();
    let ttl = (cli.warmup + cli.duration).as_secs() + 3600;
    let tokens = setup(&ctx, &layout, &users, ttl).await?;
    let clients = connect_all(&ctx, &plans, &tokens).await?;
    let start = Instant::now() + Duration::from_millis(200);
    let ctx = Arc::new(Ctx {
        admin: ctx.admin.clone(),
        ws_urls: ctx.ws_urls.clone(),
        source_addrs: ctx.source_addrs.clone(),
        run: ctx.run.clone(),
        base: ctx.base,
        measure_from: start + cli.warmup,
        measure_to: start + cli.warmup + cli.duration,
        body_bytes: ctx.body_bytes,
        text_bodies: ctx.text_bodies,
    });
    // CPU counters at the start and the end of the measured window.
    let cpu = {
        let (from, to) = (ctx.measure_from, ctx.measure_to);
        let database = cli.pg_database.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(from).await;
            let a = CpuSample::take(pid, database.as_deref());
            tokio::time::sleep_until(to).await;
            CpuSplit::between(&a, &CpuSample::take(pid, database.as_deref()))
        })
    };
    // In fixed-rate mode the sending connections' schedules are offset from
    // each other, so together they send at evenly spaced times.
    let sending = plans.iter().filter(|p| p.sends()).count();
    let mut rank = 0;
    let mut workers = Vec::new();
    for (i, (plan, (client, events))) in plans.into_iter().zip(clients).enumerate() {
        let ctx = ctx.clone();
        let first = match plan.mode {
            Mode::Open(every) if plan.sends() => {
                rank += 1;
                first_slot(start, every, rank - 1, sending)
            }
            _ => start,
        };
        workers.push(tokio::spawn(async move {
            connection(ctx, i, plan, client, events, first).await
        }));
    }
    let mut tally = Tally::default();
    for worker in workers {
        tally.merge(worker.await.context("worker")?);
    }
    let measured = cli.duration.as_secs_f64();
    let mut report = Report {
        scenario: scenario.into(),
        settings,
        measured_secs: measured,
        acked: tally.acked,
        acked_per_sec: tally.acked as f64 / measured,
        delivered: tally.delivered,
        delivered_per_sec: tally.delivered as f64 / measured,
        send_to_ack_ms: tally.ack.as_ref().map(Percentiles::of).unwrap_or_default(),
        send_to_recv_ms: tally.recv.as_ref().map(Percentiles::of).unwrap_or_default(),
        errors: tally.errors.clone(),
        retried: tally.retried,
        connections: users.len(),
        cpu: cpu.await.ok(),
        ..Report::default()
    };
    if !tally.by_kind.is_empty() {
        let counts: BTreeMap<&str, u64> = tally.by_kind.iter().map(|(k, (n, _))| (k.name(), *n)).collect();
        let latency: BTreeMap<&str, Percentiles> = tally
            .by_kind
            .iter()
            .map(|(k, (_, h))| (k.name(), Percentiles::of(h)))
            .collect();
        report.extra.insert("entries_by_kind".into(), json!(counts));
        report.extra.insert("send_to_ack_ms_by_kind".into(), json!(latency));
    }
    if !cli.no_verify {
        let channels: Vec<String> = layout.iter().map(|(c, _)| c.clone()).collect();
        report.verification = verify(&ctx.admin, &channels, &tally.acks, &tally.changes).await?;
    }
    Ok(report)
}

/// Runs one connection: sends per its mode from `first` (its first slot in
/// fixed-rate mode) until the window ends, receives until shortly after, and
/// tallies what it saw.
async fn connection(
    ctx: Arc<Ctx>,
    index: usize,
    plan: Plan,
    client: Client,
    mut events: tokio::sync::mpsc::Receiver<Event>,
    first: Instant,
) -> Tally {
    let seen = entries::Seen::default();
    let receiver = {
        let ctx = ctx.clone();
        let user = plan.user.clone();
        let seen = plan.mix.map(|_| seen.clone());
        tokio::spawn(async move {
            let mut h = histogram();
            let mut delivered = 0u64;
            let until = ctx.measure_to + Duration::from_secs(3);
            while let Ok(Some(event)) = tokio::time::timeout_at(until, events.recv()).await {
                if let Event::Message(m) = event {
                    if m.sender_id == user {
                        continue;
                    }
                    if let Some(seen) = &seen {
                        entries::saw(seen, &m);
                    }
                    let now = Instant::now();
                    if let Some(intended) = ctx.intended_of(&m.body) {
                        if ctx.in_window(intended) {
                            record(&mut h, now.saturating_duration_since(intended));
                            delivered += 1;
                        }
                    }
                }
            }
            (h, delivered)
        })
    };
    let mut tally = Tally {
        ack: Some(histogram()),
        ..Tally::default()
    };
    let mut picker = plan.mix.map(|mix| Picker::new(mix, index, seen));
    if plan.sends() {
        let mut in_flight = FuturesUnordered::new();
        let mut counter = 0u64;
        let mut slot = first;
        tokio::time::sleep_until(first).await;
        loop {
            let now = Instant::now();
            let want = match plan.mode {
                Mode::Closed(w) => now < ctx.measure_to && in_flight.len() < w,
                Mode::Open(_) => slot < ctx.measure_to && slot <= now,
                Mode::Silent => false,
            };
            if want {
                let intended = match plan.mode {
                    Mode::Open(every) => {
                        let s = slot;
                        slot += every;
                        s
                    }
                    _ => now,
                };
                let target = &plan.targets[(counter as usize) % plan.targets.len()];
                let key = format!("{}-{index}-{counter}", ctx.run);
                let op = picker.as_mut().map_or(Op::Send, |p| p.next(counter));
                counter += 1;
                let body = ctx.body(intended);
                let submitted = match &op {
                    Op::Send => client.submit(target, &key, body.clone()).await,
                    Op::Edit(id) => {
                        let entry = EntryRequest::Edit {
                            message_id: *id,
                            body: body.clone(),
                        };
                        client.submit_entry(&key, entry).await
                    }
                    Op::React(id, emoji, add) => {
                        let entry = EntryRequest::React {
                            message_id: *id,
                            emoji: (*emoji).to_owned(),
                            add: *add,
                        };
                        client.submit_entry(&key, entry).await
                    }
                    Op::Reply { channel_id, root } => {
                        let options = SendOptions {
                            reply_to: Some(*root),
                            thread_id: Some(*root),
                            ..SendOptions::default()
                        };
                        client.submit_with(channel_id, &key, body.clone(), options).await
                    }
                };
                match submitted {
                    Ok(pending) => in_flight.push(async move { (intended, op, body, pending.await) }),
                    Err(e) => count_error(&mut tally, &e),
                }
                continue;
            }
            let done_sending = match plan.mode {
                Mode::Closed(_) => now >= ctx.measure_to,
                Mode::Open(_) => slot >= ctx.measure_to,
                Mode::Silent => true,
            };
            if done_sending && in_flight.is_empty() {
                break;
            }
            let wake = match plan.mode {
                Mode::Open(_) if !done_sending => slot,
                _ => ctx.measure_to.max(now) + Duration::from_secs(60),
            };
            tokio::select! {
                Some((intended, op, body, result)) = in_flight.next(), if !in_flight.is_empty() => {
                    let now = Instant::now();
                    match result {
                        Ok(ack) => {
                            if ctx.in_window(intended) {
                                if let Some(h) = tally.ack.as_mut() {
                                    record(h, now.saturating_duration_since(intended));
                                }
                                if !ack.duplicate {
                                    tally.acked += 1;
                                }
                                if plan.mix.is_some() {
                                    let (n, h) = tally.by_kind.entry(op.kind()).or_insert_with(|| (0, histogram()));
                                    record(h, now.saturating_duration_since(intended));
                                    *n += u64::from(!ack.duplicate);
                                }
                            }
                            let what = match op {
                                Op::Send => {
                                    if let Some(p) = picker.as_mut() {
                                        p.stored(&ack.channel_id, ack.message_id);
                                    }
                                    None
                                }
                                Op::Reply { root, .. } => Some((root, ChangeKind::Reply)),
                                Op::Edit(target) => Some((target, ChangeKind::Edit(body))),
                                Op::React(target, emoji, add) => Some((
                                    target,
                                    ChangeKind::React {
                                        user: plan.user.clone(),
                                        emoji: emoji.to_owned(),
                                        add,
                                    },
                                )),
                            };
                            if let Some((target, what)) = what {
                                tally.changes.push(Change {
                                    channel_id: ack.channel_id.clone(),
                                    seq: ack.seq,
                                    target,
                                    what,
                                });
                            }
                            tally.retried += u64::from(ack.attempts > 1);
                            tally.acks.push(ack);
                        }
                        Err(e) => count_error(&mut tally, &e),
                    }
                }
                () = tokio::time::sleep_until(wake) => {
                    if done_sending {
                        // Sends still unanswered a minute after the end.
                        *tally.errors.entry("timeout".into()).or_default() += in_flight.len() as u64;
                        break;
                    }
                }
            }
        }
    }
    let (h, delivered) = receiver.await.unwrap_or_else(|_| (histogram(), 0));
    tally.recv = Some(h);
    tally.delivered = delivered;
    client.close().await;
    tally
}

fn count_error(tally: &mut Tally, error: &SendError) {
    let key = match error {
        SendError::Refused { code, .. } => code.as_str().to_owned(),
        SendError::Invalid { .. } => "invalid".into(),
        SendError::DeadlineExceeded => "deadline".into(),
        SendError::Closed(_) => "closed".into(),
    };
    *tally.errors.entry(key).or_default() += 1;
}

/// Every ACKed entry stored once, with the ACK's seq and id; every
/// channel's seqs 1..=N; no idempotency key twice; every message read back
/// in the state its ACKed `changes` give it ([`entries::check_state`]: no
/// changes, no `editedAt` and no reactions).
async fn verify(
    admin: &AdminClient,
    channels: &[String],
    acks: &[Ack],
    changes: &[Change],
) -> anyhow::Result<Verification> {
    let mut v = Verification {
        ran: true,
        channels: channels.len(),
        acked: acks.len(),
        ..Verification::default()
    };
    // The generator's keys are unique across its connections, so a key
    // alone names one intended message.
    let mut stored: HashMap<String, (i64, uuid::Uuid)> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for channel in channels {
        let history = admin
            .history(channel)
            .await
            .with_context(|| format!("history of {channel}"))?;
        v.stored += history.len();
        for (i, m) in history.iter().enumerate() {
            if m.seq != i as i64 + 1 {
                v.problems
                    .push(format!("{channel}: position {} holds seq {}", i + 1, m.seq));
                break;
            }
        }
        v.problems.extend(entries::check_state(channel, &history, changes));
        for m in history {
            // An entry made through an HTTP route shows no key (§12).
            let Some(key) = m.client_msg_id else { continue };
            if !seen.insert((m.sender_id.clone(), key.clone())) {
                v.problems
                    .push(format!("{channel}: key {key} of {} stored twice", m.sender_id));
            }
            stored.insert(key, (m.seq, m.message_id));
        }
    }
    let mut acked_keys = std::collections::HashSet::new();
    for ack in acks {
        acked_keys.insert(ack.client_msg_id.clone());
        match stored.get(&ack.client_msg_id) {
            Some(&(seq, id)) if seq == ack.seq && id == ack.message_id => {}
            Some((seq, id)) => v.problems.push(format!(
                "{}: ACKed as seq {} / {}, stored as seq {seq} / {id}",
                ack.client_msg_id, ack.seq, ack.message_id
            )),
            None => v.problems.push(format!("{}: ACKed but not stored", ack.client_msg_id)),
        }
    }
    if acked_keys.len() != acks.len() {
        v.problems.push("a key was ACKed twice".into());
    }
    v.problems.truncate(20);
    v.ok = v.problems.is_empty();
    Ok(v)
}

/// The `idle` scenario's settings.
struct IdleArgs {
    connections: usize,
    per_user: usize,
    connect_concurrency: usize,
    storm_wait: Duration,
}

async fn idle(cli: &Cli, ctx: Arc<Ctx>, pid: Option<u32>, args: IdleArgs) -> anyhow::Result<Report> {
    let IdleArgs {
        connections,
        per_user,
        connect_concurrency,
        storm_wait,
    } = args;
    let users: Vec<String> = (0..connections.div_ceil(per_user))
        .map(|i| format!("{}-i{i}", ctx.run))
        .collect();
    let tokens = setup(&ctx, &[], &users, cli.duration.as_secs() + storm_wait.as_secs() + 3600).await?;
    let before = pid.and_then(stats::rss_bytes);
    let plans: Vec<Plan> = (0..connections)
        .map(|i| Plan {
            user: users[i / per_user].clone(),
            targets: Vec::new(),
            mode: Mode::Silent,
            mix: None,
        })
        .collect();
    let own_before = stats::rss_bytes(std::process::id());
    let started = Instant::now();
    // Idle clients get one small frame (HELLO with no channel) and pings:
    // a 1 KiB read buffer keeps the generator's own memory per connection
    // small (it runs on the same machine). Frames larger than the buffer
    // are still read whole (tungstenite grows it for them).
    let clients = connect_all_with(&ctx, &plans, &tokens, connect_concurrency, |config| {
        config.read_buffer_bytes = 1024;
        config.write_buffer_bytes = 1024;
    })
    .await?;
    let connect_secs = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = pid.and_then(stats::rss_bytes);
    let own_after = stats::rss_bytes(std::process::id());
    tokio::time::sleep(cli.duration).await;
    let still = clients.iter().filter(|(c, _)| c.is_connected()).count();
    let mut report = Report {
        scenario: "idle".into(),
        settings: json!({"connections": connections, "perUser": per_user, "connectConcurrency": connect_concurrency, "sourceAddrs": ctx.source_addrs.len()}),
        measured_secs: cli.duration.as_secs_f64(),
        connections: clients.len(),
        server_rss_bytes: after,
        rss_per_connection_bytes: match (before, after) {
            (Some(b), Some(a)) if connections > 0 => Some((a.saturating_sub(b)) as f64 / connections as f64),
            _ => None,
        },
        ..Report::default()
    };
    report.extra.insert("connect_secs".into(), json!(connect_secs));
    report.extra.insert("still_connected".into(), json!(still));
    report.extra.insert("server_rss_before_bytes".into(), json!(before));
    report.extra.insert(
        "generator_rss_per_connection_bytes".into(),
        json!(match (own_before, own_after) {
            (Some(b), Some(a)) if connections > 0 => Some(a.saturating_sub(b) as f64 / connections as f64),
            _ => None,
        }),
    );
    let mut problems = Vec::new();
    if still != connections {
        problems.push(format!("{} of {connections} connections dropped", connections - still));
    }
    if !storm_wait.is_zero() && still == connections {
        let storm = reconnect_storm(&clients, storm_wait).await;
        if let Some(problem) = &storm.problem {
            problems.push(problem.clone());
        }
        report.extra.insert("storm".into(), storm.to_json());
    }
    report.verification = Verification {
        ran: !cli.no_verify,
        ok: problems.is_empty(),
        problems,
        ..Verification::default()
    };
    for (client, _) in &clients {
        client.close().await;
    }
    Ok(report)
}

/// What [`reconnect_storm`] saw.
struct Storm {
    /// From the first client seen disconnected to every client HELLOed again.
    secs_to_all: Option<f64>,
    /// Seconds (from the first disconnection) at which these shares of the
    /// clients were connected again: 50 %, 90 %, 99 %, 100 %.
    milestones: Vec<(u32, f64)>,
    /// Fewest clients connected at one time during the storm.
    fewest_connected: usize,
    problem: Option<String>,
}

impl Storm {
    fn to_json(&self) -> serde_json::Value {
        json!({
            "secsToAll": self.secs_to_all,
            "connectedAfterSecs": self.milestones.iter().map(|(pct, s)| json!({"pct": pct, "secs": s})).collect::<Vec<_>>(),
            "fewestConnected": self.fewest_connected,
        })
    }
}

/// Waits (up to `wait`) for the server to drop the clients, then until all
/// are connected again, each by its own reconnect loop; samples every 50 ms.
async fn reconnect_storm(clients: &[(Client, tokio::sync::mpsc::Receiver<Event>)], wait: Duration) -> Storm {
    let total = clients.len();
    let connected = || clients.iter().filter(|(c, _)| c.is_connected()).count();
    eprintln!("idle: holding {total} connections; kill the server now");
    let deadline = Instant::now() + wait;
    let mut storm = Storm {
        secs_to_all: None,
        milestones: Vec::new(),
        fewest_connected: total,
        problem: None,
    };
    let lost_at = loop {
        if connected() < total {
            break Instant::now();
        }
        if Instant::now() >= deadline {
            storm.problem = Some("the server was not stopped within --storm-wait".into());
            return storm;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    eprintln!("idle: connections lost; timing the reconnection");
    let mut next = 0;
    let shares = [50u32, 90, 99, 100];
    while Instant::now() < deadline {
        let now = connected();
        storm.fewest_connected = storm.fewest_connected.min(now);
        let secs = lost_at.elapsed().as_secs_f64();
        // Counted once at least half were seen down, so the clients that
        // had not yet noticed the loss do not count as reconnected.
        let dropped = storm.fewest_connected * 2 <= total;
        while dropped && next < shares.len() && now * 100 >= total * shares[next] as usize {
            storm.milestones.push((shares[next], secs));
            next += 1;
        }
        if dropped && now == total {
            storm.secs_to_all = Some(secs);
            eprintln!("idle: all {total} connected again after {secs:.2} s");
            // Held a moment, so the restarted server's RSS with every
            // client back can be read.
            tokio::time::sleep(Duration::from_secs(5)).await;
            return storm;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    storm.problem = Some(format!(
        "{} of {total} clients not connected again within --storm-wait",
        total - connected()
    ));
    storm
}

/// Raises this process's soft open-file limit to its hard limit (one
/// descriptor per connection); a failure is reported and the run goes on.
fn raise_fd_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    if let Err(error) = setrlimit(Resource::Nofile, raised) {
        eprintln!("chatd-bench: cannot raise the open-file limit ({limit:?}): {error}");
    }
}

async fn sync(
    cli: &Cli,
    ctx: Arc<Ctx>,
    messages: usize,
    reuse: Option<String>,
    history_reads: usize,
    catch_up: Option<usize>,
) -> anyhow::Result<Report> {
    let channel = reuse.unwrap_or_else(|| format!("{}-sync", ctx.run));
    let (writer, reader) = (format!("{channel}-w"), format!("{channel}-r"));
    let existing = ctx.admin.channel(&channel).await.ok();
    if existing.is_none() {
        ctx.admin
            .create_channel(Some(&channel), &[writer.clone(), reader.clone()])
            .await
            .context("create the sync channel")?;
    }
    let have = existing.map_or(0, |c| c.last_seq.max(0) as usize);
    let mut acks = Vec::new();
    let fill_started = Instant::now();
    if have < messages {
        let token = ctx.admin.token(&writer, Some(86_400)).await?;
        let (client, mut events) = Client::connect(ctx.client_config(0, token)).await?;
        // The client hands every own ACKed message to the application as an
        // event too; undrained, its queue fills after event_capacity messages
        // and the client stops reading the socket (the fill stalled at 65,536).
        let drain = tokio::spawn(async move { while events.recv().await.is_some() {} });
        let mut in_flight = FuturesUnordered::new();
        let mut next = have;
        while next < messages || !in_flight.is_empty() {
            while next < messages && in_flight.len() < 512 {
                let key = format!("{channel}-fill-{next}");
                in_flight.push(client.submit(&channel, &key, ctx.body(Instant::now())).await?);
                next += 1;
            }
            if let Some(result) = in_flight.next().await {
                acks.push(result?);
            }
        }
        client.close().await;
        let _ = drain.await;
    }
    let fill_secs = fill_started.elapsed().as_secs_f64();
    let token = ctx.admin.token(&reader, Some(86_400)).await?;
    // The reader on the last node: with several nodes the catch-up crosses them.
    let mut config = ctx.client_config(ctx.ws_urls.len() - 1, token);
    let catch_up = catch_up.unwrap_or(messages).min(messages);
    let skipped = (messages - catch_up) as i64;
    if skipped > 0 {
        config.resume = vec![(channel.clone(), skipped)];
    } else {
        config.start_from = StartFrom::Beginning;
    }
    let started = Instant::now();
    let (client, mut events) = Client::connect(config).await?;
    let mut got = 0usize;
    let mut last_seq = skipped;
    let mut in_order = true;
    while got < catch_up {
        match tokio::time::timeout(Duration::from_secs(60), events.recv()).await {
            Ok(Some(Event::Message(m))) if m.channel_id == channel => {
                in_order &= m.seq == last_seq + 1;
                last_seq = m.seq;
                got += 1;
            }
            Ok(Some(_)) => {}
            _ => break,
        }
    }
    let catch_up_secs = started.elapsed().as_secs_f64();
    client.close().await;
    let mut pages = histogram();
    let total = messages.max(1) as u64;
    for i in 0..history_reads {
        // Pages spread over the whole channel, in a scattered order.
        let after = (i as u64).wrapping_mul(2_654_435_761) % total;
        let t = Instant::now();
        ctx.admin.history_page(&channel, after as i64, 100).await?;
        record(&mut pages, t.elapsed());
    }
    let mut report = Report {
        scenario: "sync".into(),
        settings: json!({"messages": messages, "channel": channel, "historyReads": history_reads, "catchUp": catch_up, "bodyBytes": cli.body_bytes}),
        measured_secs: catch_up_secs,
        delivered: got as u64,
        delivered_per_sec: got as f64 / catch_up_secs.max(1e-9),
        connections: 1,
        ..Report::default()
    };
    report.extra.insert("fill_secs".into(), json!(fill_secs));
    report.extra.insert("filled".into(), json!(acks.len()));
    report.extra.insert("catch_up_secs".into(), json!(catch_up_secs));
    report.extra.insert(
        "history_page_100_ms".into(),
        serde_json::to_value(Percentiles::of(&pages))?,
    );
    if !cli.no_verify {
        let mut v = verify(&ctx.admin, std::slice::from_ref(&channel), &acks, &[]).await?;
        if got != catch_up || !in_order {
            v.problems
                .push(format!("catch-up delivered {got} of {catch_up} (in order: {in_order})"));
        }
        v.ok = v.problems.is_empty();
        report.verification = v;
    }
    Ok(report)
}

/// The page-back scenario: times `reads` history pages of 100 of each kind
/// (`latest`, `beforeSeq`, `afterSeq`) on `channel`, checking each page is
/// the 100 seqs asked for.
async fn page_back(ctx: Arc<Ctx>, channel: String, reads: usize) -> anyhow::Result<Report> {
    let last = ctx
        .admin
        .channel(&channel)
        .await
        .context("the channel to read")?
        .last_seq;
    anyhow::ensure!(last > 200, "the channel needs more than 200 messages");
    let (mut latest, mut before, mut after) = (histogram(), histogram(), histogram());
    let mut problems = Vec::new();
    let started = Instant::now();
    for i in 0..reads {
        let seq = 101 + ((i as u64).wrapping_mul(2_654_435_761) % (last as u64 - 200)) as i64;
        let t = Instant::now();
        let (page, _) = ctx.admin.history_before(&channel, None, 100).await?;
        record(&mut latest, t.elapsed());
        if page.first().map(|m| m.seq) != Some(last - 99) {
            problems.push(format!("latest page starts at {:?}", page.first().map(|m| m.seq)));
        }
        let t = Instant::now();
        let (page, more) = ctx.admin.history_before(&channel, Some(seq), 100).await?;
        record(&mut before, t.elapsed());
        let older = seq - 100 > 1;
        if page.first().map(|m| m.seq) != Some(seq - 100)
            || page.last().map(|m| m.seq) != Some(seq - 1)
            || more != older
        {
            problems.push(format!("beforeSeq={seq} page is wrong"));
        }
        let t = Instant::now();
        ctx.admin.history_page(&channel, seq, 100).await?;
        record(&mut after, t.elapsed());
    }
    let secs = started.elapsed().as_secs_f64();
    let mut report = Report {
        scenario: "page-back".into(),
        settings: json!({"channel": channel, "lastSeq": last, "reads": reads, "limit": 100}),
        measured_secs: secs,
        connections: 1,
        ..Report::default()
    };
    report
        .extra
        .insert("pages_per_sec".into(), json!((reads * 3) as f64 / secs.max(1e-9)));
    report.extra.insert(
        "latest_page_100_ms".into(),
        serde_json::to_value(Percentiles::of(&latest))?,
    );
    report.extra.insert(
        "before_seq_page_100_ms".into(),
        serde_json::to_value(Percentiles::of(&before))?,
    );
    report.extra.insert(
        "after_seq_page_100_ms".into(),
        serde_json::to_value(Percentiles::of(&after))?,
    );
    report.verification.ran = true;
    report.verification.ok = problems.is_empty();
    report.verification.problems = problems;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_rate_connections_together_send_at_even_intervals() {
        let start = Instant::now();
        let (senders, rate) = (64usize, 6000.0);
        let every = Duration::from_secs_f64(senders as f64 / rate);
        let mut slots: Vec<Instant> = (0..senders)
            .flat_map(|rank| {
                let first = first_slot(start, every, rank, senders);
                (0..3u32).map(move |k| first + every * k)
            })
            .collect();
        slots.sort();
        assert_eq!(slots[0], start);
        let gap = Duration::from_secs_f64(1.0 / rate);
        for pair in slots.windows(2) {
            let d = pair[1] - pair[0];
            assert!(d.abs_diff(gap) < Duration::from_micros(1), "gap {d:?}, want {gap:?}");
        }
    }

    #[test]
    fn a_rate_must_be_positive_and_finite() {
        assert_eq!(positive_rate("6000"), Ok(6000.0));
        assert_eq!(positive_rate("0.5"), Ok(0.5));
        for bad in ["0", "-1", "NaN", "inf", "1e300", "fast"] {
            assert!(positive_rate(bad).is_err(), "{bad}");
        }
        let cli = Cli::try_parse_from(["chatd-bench", "send", "--rate", "0"]);
        assert!(cli.is_err(), "--rate 0 is refused, not a closed loop");
    }

    #[test]
    fn one_sender_starts_at_the_start() {
        let start = Instant::now();
        assert_eq!(first_slot(start, Duration::from_millis(10), 0, 1), start);
        assert_eq!(first_slot(start, Duration::from_millis(10), 0, 0), start);
    }
}
