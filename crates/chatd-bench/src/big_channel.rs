//! The `big-channel` scenario: what a channel of many members costs the
//! reads that show it (protocol §13.1), next to a small channel in the
//! same run. Both channels are made through the server (`POST
//! /v1/channels`, one call each, members in the body), so their rows are
//! the server's own; both hold no messages.
//!
//! Timed, in blocks of `--reads` per kind and `--rounds` rounds in
//! rotating order ([`crate::reads`]):
//! - `hello_big` / `hello_small`: a WebSocket connect (TCP, upgrade with
//!   the user's token) to the first frame, HELLO, as a member of only the
//!   big (or only the small) channel; its size in bytes;
//! - `channel_big` / `channel_small`: `GET /v1/channels/{id}` with the admin
//!   token, version 1's channel object with the full `members` array;
//! - `members_page_big` / `members_page_small`: the first page (100) of
//!   `GET /v1/channels/{id}/members` with the member's token;
//! - `members_all_big`: every member through that route, pages of 500
//!   (one sample per walk; `--reads / 10` walks a round).
//!
//! Checked: HELLO's one channel entry with the right `memberCount`; the
//! channel object's `members` has every member and `memberCount` agrees;
//! the pages hold the first members in byte order with `hasMore`; the walk
//! finds every member once.

use std::time::Duration;

use anyhow::{bail, Context};
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

use crate::reads::{rotation, Meter, Series};
use crate::stats::{CpuSplit, Report, Verification};
use crate::{Cli, Ctx};

/// The `big-channel` scenario's settings.
#[derive(clap::Args, Debug, Clone)]
pub struct BigChannelArgs {
    /// Members of the big channel.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    members: u32,
    /// Members of the small channel.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=500))]
    small: u32,
    /// Requests per kind per round (walks: a tenth of it).
    #[arg(long, default_value_t = 200)]
    reads: usize,
    /// Rounds (the kinds' order rotates each round).
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Channels `{name}-big` and `{name}-small` (members `{name}-bu…`,
    /// `{name}-su…`): reused when they already have their members, so a
    /// second run can read them after, say, a `VACUUM` (default: fresh
    /// ones for this run).
    #[arg(long)]
    name: Option<String>,
}

/// A channel of the run: its id, members, and a member's token.
struct Subject {
    id: String,
    members: Vec<String>,
    token: String,
    /// Made by an earlier run (`--name`).
    reused: bool,
}

/// The kinds timed, in their base order.
const KINDS: [&str; 7] = [
    "hello_big",
    "hello_small",
    "channel_big",
    "channel_small",
    "members_page_big",
    "members_page_small",
    "members_all_big",
];

/// Runs the scenario (see the module documentation).
pub async fn run(cli: &Cli, ctx: &Ctx, pid: Option<u32>, args: BigChannelArgs) -> anyhow::Result<Report> {
    let admin_token = cli.admin_token.clone().context("the admin token is needed")?;
    let name = args.name.clone().unwrap_or_else(|| ctx.run.clone());
    let big = subject(ctx, &name, "big", "bu", args.members).await?;
    let small = subject(ctx, &name, "small", "su", args.small).await?;
    let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build()?;
    let base = cli.url.trim_end_matches('/').to_owned();
    let ws_url = ctx.ws_urls.first().context("no WebSocket URL")?.clone();
    let meter = Meter {
        server: pid,
        database: cli.pg_database.clone(),
    };
    let mut problems = Vec::new();
    let mut series: Vec<Series> = KINDS.iter().map(|k| Series::new(*k)).collect();
    let run_before = meter.sample();
    let run_started = Instant::now();
    for round in 0..args.rounds.max(1) {
        for k in rotation(KINDS.len(), round) {
            let subject = if KINDS[k].ends_with("big") { &big } else { &small };
            let count = if k == 6 { (args.reads / 10).max(1) } else { args.reads };
            let before = meter.sample();
            let started = Instant::now();
            for i in 0..count {
                let check = i == 0 || i + 1 == count;
                let what = format!("{} ({})", KINDS[k], subject.id);
                let Fetched { elapsed, bytes, answer } = match k {
                    0 | 1 => hello(&ws_url, &subject.token).await?,
                    2 | 3 => {
                        let url = format!("{base}/v1/channels/{}", subject.id);
                        get(&http, &url, &admin_token).await?
                    }
                    4 | 5 => {
                        let url = format!("{base}/v1/channels/{}/members?limit=100", subject.id);
                        get(&http, &url, &subject.token).await?
                    }
                    _ => walk(&http, &base, subject).await?,
                };
                series[k].record(elapsed, bytes);
                if check {
                    let problem = match k {
                        0 | 1 => check_hello(&answer, subject),
                        2 | 3 => check_channel(&answer, subject),
                        4 | 5 => check_page(&answer, subject),
                        _ => check_walk(&answer, subject),
                    };
                    problems.extend(problem.map(|p| format!("{what}: {p}")));
                }
            }
            series[k].add_block(&before, &meter.sample(), started.elapsed().as_secs_f64());
        }
    }
    let measured = run_started.elapsed();
    problems.truncate(20);
    let mut report = Report {
        scenario: "big-channel".into(),
        settings: json!({"members": args.members, "small": args.small, "reads": args.reads, "rounds": args.rounds,
            "bigChannel": big.id, "smallChannel": small.id, "reused": big.reused && small.reused}),
        measured_secs: measured.as_secs_f64(),
        connections: 1,
        cpu: Some(CpuSplit::between(&run_before, &meter.sample())),
        ..Report::default()
    };
    for s in &series {
        report.extra.insert(s.name.clone(), s.summary());
    }
    let p50 = |k: usize| series[k].percentiles().p50;
    let ratio = |a: usize, b: usize| (p50(a) / p50(b).max(1e-3) * 100.0).round() / 100.0;
    report.extra.insert(
        "big_over_small_p50".into(),
        json!({"hello": ratio(0, 1), "channel": ratio(2, 3), "membersPage": ratio(4, 5)}),
    );
    report.verification = Verification {
        ran: true,
        ok: problems.is_empty(),
        channels: 2,
        problems,
        ..Verification::default()
    };
    Ok(report)
}

/// Channel `{prefix}-{which}` with `n` members `{prefix}-{tag}{j:05}`,
/// made through the server unless it exists with them, and a token for its
/// first member.
async fn subject(ctx: &Ctx, prefix: &str, which: &str, tag: &str, n: u32) -> anyhow::Result<Subject> {
    let id = format!("{prefix}-{which}");
    let members: Vec<String> = (0..n).map(|j| format!("{prefix}-{tag}{j:05}")).collect();
    let (made, reused) = match ctx.admin.channel(&id).await {
        Ok(existing) => (existing, true),
        Err(_) => (
            ctx.admin
                .create_channel(Some(&id), &members)
                .await
                .with_context(|| format!("create {id} with {n} members"))?,
            false,
        ),
    };
    if made.member_count != i64::from(n) {
        bail!("{id} has {} members, not {n}: use another --name", made.member_count);
    }
    let first = members.first().context("a channel without members")?;
    let token = ctx.admin.token(first, Some(86_400)).await?;
    Ok(Subject {
        id,
        members,
        token,
        reused,
    })
}

/// One timed answer.
struct Fetched {
    /// From the request to the answer's last byte (HELLO: its first frame).
    elapsed: Duration,
    /// The answer's size in bytes.
    bytes: usize,
    /// The answer as JSON, parsed after the timing.
    answer: Value,
}

/// A WebSocket connect with `token` up to the first frame (timed), its
/// size in bytes and the frame as JSON. The connection is closed afterwards.
///
/// # Errors
/// A refused or failed connect, a first frame that is not text JSON.
async fn hello(url: &str, token: &str) -> anyhow::Result<Fetched> {
    let started = Instant::now();
    let mut request = url.into_client_request()?;
    request
        .headers_mut()
        .insert("authorization", HeaderValue::from_str(&format!("Bearer {token}"))?);
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .context("WebSocket connect")?;
    let frame = loop {
        match tokio::time::timeout(Duration::from_secs(30), socket.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => break text,
            Ok(Some(Ok(Message::Close(frame)))) => bail!("closed before the first frame: {frame:?}"),
            Ok(Some(Ok(_))) => continue,
            Ok(Some(Err(e))) => return Err(anyhow::Error::new(e).context("reading the first frame")),
            Ok(None) => bail!("closed before the first frame"),
            Err(_) => bail!("no first frame in 30 s"),
        }
    };
    let elapsed = started.elapsed();
    let answer = serde_json::from_str(frame.as_str()).context("the first frame is not JSON")?;
    let _ = socket.close(None).await;
    Ok(Fetched {
        elapsed,
        bytes: frame.len(),
        answer,
    })
}

/// `GET url` with `token`, timed to the body's last byte.
///
/// # Errors
/// A failed request, a status other than 200, a body that is not JSON.
async fn get(http: &reqwest::Client, url: &str, token: &str) -> anyhow::Result<Fetched> {
    let started = Instant::now();
    let response = http
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .with_context(|| format!("GET {url}"))?;
    let status = response.status();
    let body = response.bytes().await?;
    let elapsed = started.elapsed();
    if !status.is_success() {
        bail!("GET {url}: HTTP {status}: {}", String::from_utf8_lossy(&body));
    }
    let answer = serde_json::from_slice(&body).with_context(|| format!("GET {url}: not JSON"))?;
    Ok(Fetched {
        elapsed,
        bytes: body.len(),
        answer,
    })
}

/// Every member of `subject` through the members route, pages of 500:
/// the pages' times and bytes added up, and the user ids as a JSON array.
async fn walk(http: &reqwest::Client, base: &str, subject: &Subject) -> anyhow::Result<Fetched> {
    let (mut elapsed, mut bytes) = (Duration::ZERO, 0);
    let (mut ids, mut after) = (Vec::new(), None::<String>);
    loop {
        let mut url = format!("{base}/v1/channels/{}/members?limit=500", subject.id);
        if let Some(after) = &after {
            url.push_str(&format!("&after={after}"));
        }
        let page = get(http, &url, &subject.token).await?;
        elapsed += page.elapsed;
        bytes += page.bytes;
        let page = page.answer;
        let members = page["members"].as_array().context("a members page without members")?;
        ids.extend(members.iter().map(|m| m["userId"].clone()));
        match (page["hasMore"].as_bool(), ids.last().and_then(Value::as_str)) {
            (Some(true), Some(last)) => after = Some(last.to_owned()),
            _ => break,
        }
    }
    Ok(Fetched {
        elapsed,
        bytes,
        answer: Value::Array(ids),
    })
}

/// HELLO with one channel entry, `subject`'s, with its `memberCount`.
fn check_hello(frame: &Value, subject: &Subject) -> Option<String> {
    let channels = frame["channels"].as_array();
    let entry = channels.and_then(|c| c.first());
    let ok = frame["type"] == "HELLO"
        && channels.map(Vec::len) == Some(1)
        && entry.is_some_and(|e| e["channelId"] == subject.id.as_str() && e["memberCount"] == subject.members.len());
    (!ok).then(|| format!("HELLO is not the one channel with its memberCount: {}", short(frame)))
}

/// The channel object with every member and `memberCount`.
fn check_channel(channel: &Value, subject: &Subject) -> Option<String> {
    let mut members: Vec<&str> = channel["members"]
        .as_array()
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    members.sort_unstable();
    let mut want: Vec<&str> = subject.members.iter().map(String::as_str).collect();
    want.sort_unstable();
    let ok = members == want && channel["memberCount"] == subject.members.len();
    (!ok).then(|| {
        format!(
            "{} members listed, memberCount {}",
            members.len(),
            channel["memberCount"]
        )
    })
}

/// The first page: the first 100 members in byte order, `hasMore` when
/// more follow.
fn check_page(page: &Value, subject: &Subject) -> Option<String> {
    let got: Vec<&str> = page["members"]
        .as_array()
        .map(|m| m.iter().filter_map(|m| m["userId"].as_str()).collect())
        .unwrap_or_default();
    let mut want: Vec<&str> = subject.members.iter().map(String::as_str).collect();
    want.sort_unstable();
    want.truncate(100);
    let more = subject.members.len() > 100;
    let ok = got == want && page["hasMore"].as_bool() == Some(more);
    (!ok).then(|| format!("{} members, hasMore {}", got.len(), page["hasMore"]))
}

/// Every member once, in byte order.
fn check_walk(ids: &Value, subject: &Subject) -> Option<String> {
    let got: Vec<&str> = ids
        .as_array()
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut want: Vec<&str> = subject.members.iter().map(String::as_str).collect();
    want.sort_unstable();
    (got != want).then(|| format!("the walk found {} members, want {}", got.len(), want.len()))
}

/// The start of a frame, for a problem line.
fn short(value: &Value) -> String {
    let text = value.to_string();
    text.chars().take(200).collect()
}
