//! The `directory` scenario: `GET /v1/directory` (protocol §13.2) over N
//! channels of which most are public and some private or direct, as a
//! user who is a member of none of them.
//!
//! Seeds the channels of [`crate::directory_seed`] straight into the
//! server's database, then makes three more through the server itself (a
//! public and a private group with the admin token, a direct channel with
//! a user's), so the checks cover rows the server wrote too. Then:
//!
//! 1. **Walks** the whole directory in pages of 500, and every page of
//!    `q=zebra` (few matches) and `q=bravo` (many), checking that the run's
//!    channels in them are exactly its public ones (the server-made public
//!    one included; no private or direct channel, ever), in byte order of
//!    the id, with the pattern's name and `memberCount`. This is also the
//!    warm-up.
//! 2. **Times** four kinds of page of `--limit`, in blocks of `--reads`
//!    each, `--rounds` rounds in rotating order ([`crate::reads`]): the
//!    first page; a deep keyset page (`after` = the id of channel N − 150,
//!    near the end); `q=zebra`; `q=bravo`. Each answer is checked as in the
//!    walk, and its keyset position too.

use std::time::Duration;

use anyhow::Context;
use chatd_client::admin::{AdminClient, DirectoryChannel, DirectoryPage, NewChannel};
use chatd_client::chatd_proto::protocol::Visibility;
use serde_json::json;
use tokio::time::Instant;

use crate::directory_seed::{self as pattern, Kind};
use crate::reads::{rotation, Meter, Series};
use crate::stats::{CpuSplit, Report, Verification};
use crate::{Cli, Ctx};

/// The `directory` scenario's settings.
#[derive(clap::Args, Debug, Clone)]
pub struct DirectoryArgs {
    /// Channels to seed (80 % public, 10 % private, 10 % direct).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(200..=1_000_000))]
    channels: u32,
    /// The server's database (`postgres://…`, or `sqlite://path` of the
    /// server's own file), where the channels are written. Use a fresh
    /// database: the directory lists every public channel in it.
    #[arg(long)]
    seed_database_url: String,
    /// Requests per kind of page per round.
    #[arg(long, default_value_t = 200)]
    reads: usize,
    /// Rounds (the kinds' order rotates each round).
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Channels per timed page (`limit`, 1..=500).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=500))]
    limit: u32,
    /// Channels `{name}-d000000` …: reused when the first exists (seeded
    /// by an earlier run with the same `--channels`), so a second run can
    /// read them after, say, a `VACUUM` (default: fresh ones for this run).
    #[arg(long)]
    name: Option<String>,
}

/// The `q` that matches few channels (10 public in 100,000).
const Q_FEW: &str = "zebra";
/// The `q` that matches many (14,990 of 100,000 channels: 19 % of the public ones).
const Q_MANY: &str = "bravo";

/// A public channel the run expects to see: id, name, member count.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expected {
    id: String,
    name: Option<String>,
    member_count: i64,
}

/// What the checks compare the answers with.
struct World {
    prefix: String,
    /// The run's public channels in byte order of the id.
    public: Vec<Expected>,
    /// Ids of the run's channels that must never appear.
    hidden: std::collections::HashSet<String>,
}

impl World {
    /// The run's public channels that a `q` matches (case-insensitively).
    fn matching(&self, q: Option<&str>) -> Vec<Expected> {
        let Some(q) = q.map(str::to_lowercase) else {
            return self.public.clone();
        };
        self.public
            .iter()
            .filter(|e| {
                e.id.to_lowercase().contains(&q) || e.name.as_deref().is_some_and(|n| n.to_lowercase().contains(&q))
            })
            .cloned()
            .collect()
    }

    /// Checks one page asked with `q` after `after` against the pattern:
    /// ids ascending; no hidden channel; the run's channels in it are the
    /// next ones of `want` after `after`, with their names and counts; all
    /// the rest of them when `hasMore` is false.
    fn check(&self, problems: &mut Vec<String>, what: &str, page: &DirectoryPage, want: &[Expected], after: &str) {
        if problems.len() >= 20 {
            return;
        }
        let ids: Vec<&str> = page.channels.iter().map(|c| c.channel_id.as_str()).collect();
        if ids.windows(2).any(|w| w[0] >= w[1]) {
            problems.push(format!("{what}: ids not in ascending byte order"));
        }
        if let Some(bad) = ids.iter().find(|id| self.hidden.contains(**id)) {
            problems.push(format!("{what}: the private or direct channel {bad} is listed"));
        }
        if ids.first().is_some_and(|id| *id <= after) {
            problems.push(format!("{what}: a channel at or before after={after}"));
        }
        let ours: Vec<&DirectoryChannel> = page
            .channels
            .iter()
            .filter(|c| c.channel_id.starts_with(&self.prefix))
            .collect();
        let start = want.partition_point(|e| e.id.as_str() <= after);
        let next = &want[start..];
        let same = |c: &&DirectoryChannel, e: &Expected| {
            c.channel_id == e.id && c.name == e.name && c.member_count == e.member_count && c.last_seq == 0
        };
        if ours.len() > next.len() || !ours.iter().zip(next).all(|(c, e)| same(c, e)) {
            problems.push(format!(
                "{what}: got {:?}…, want {:?}…",
                ours.first().map(|c| (&c.channel_id, &c.name, c.member_count)),
                next.first()
            ));
        } else if !page.has_more && ours.len() != next.len() {
            problems.push(format!("{what}: hasMore false after {} of {}", ours.len(), next.len()));
        }
    }
}

/// Runs the scenario (see the module documentation).
pub async fn run(cli: &Cli, ctx: &Ctx, pid: Option<u32>, args: DirectoryArgs) -> anyhow::Result<Report> {
    let prefix = args.name.clone().unwrap_or_else(|| ctx.run.clone());
    let n = args.channels;
    let seed_started = Instant::now();
    let reused = ctx.admin.channel(&pattern::channel_id(&prefix, 0)).await.is_ok();
    let member_rows = if reused {
        0
    } else {
        pattern::sql(&args.seed_database_url, &prefix, n).await?
    };
    let seed_secs = seed_started.elapsed().as_secs_f64();
    let world = controls(ctx, &cli.url, &prefix, n).await?;
    let reader = Reader {
        http: reqwest::Client::builder().timeout(Duration::from_secs(60)).build()?,
        url: format!("{}/v1/directory", cli.url.trim_end_matches('/')),
        token: ctx.admin.token(&format!("{prefix}-reader"), Some(86_400)).await?,
    };
    let meter = Meter {
        server: pid,
        database: cli.pg_database.clone(),
    };
    let mut problems = Vec::new();

    // 1. The walks: every page, checked (and the caches warmed).
    let mut walks = Vec::new();
    for q in [None, Some(Q_FEW), Some(Q_MANY)] {
        let want = world.matching(q);
        let mut series = Series::new(format!("walk q={}", q.unwrap_or("")));
        let (mut after, mut seen, mut pages) = (String::new(), 0usize, 0usize);
        let before = meter.sample();
        let started = Instant::now();
        loop {
            let (elapsed, body) = reader.get(q, &after, 500).await?;
            series.record(elapsed, body.len());
            let page = parse(&body, q, &after)?;
            world.check(
                &mut problems,
                &format!("walk q={q:?} page {pages}"),
                &page,
                &want,
                &after,
            );
            pages += 1;
            seen += page
                .channels
                .iter()
                .filter(|c| c.channel_id.starts_with(&world.prefix))
                .count();
            match page.channels.last() {
                Some(last) if page.has_more => after = last.channel_id.clone(),
                _ => break,
            }
        }
        series.add_block(&before, &meter.sample(), started.elapsed().as_secs_f64());
        if seen != want.len() {
            problems.push(format!(
                "walk q={q:?}: {seen} of the run's channels, want {}",
                want.len()
            ));
        }
        let mut summary = series.summary();
        summary["pages"] = json!(pages);
        summary["runChannels"] = json!(seen);
        summary["secs"] = json!((started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0);
        walks.push(summary);
    }

    // 2. The timed pages: the body is read inside the timing, parsed and
    // checked outside it (the first and last of each block).
    let deep_after = pattern::channel_id(&prefix, n - 150);
    let kinds: [(&str, Option<&str>, &str); 4] = [
        ("first", None, ""),
        ("deep", None, &deep_after),
        ("q_few", Some(Q_FEW), ""),
        ("q_many", Some(Q_MANY), ""),
    ];
    let wants: Vec<Vec<Expected>> = kinds.iter().map(|(_, q, _)| world.matching(*q)).collect();
    let mut series: Vec<Series> = kinds.iter().map(|(name, _, _)| Series::new(*name)).collect();
    let run_before = meter.sample();
    let run_started = Instant::now();
    for round in 0..args.rounds.max(1) {
        for k in rotation(kinds.len(), round) {
            let (name, q, after) = kinds[k];
            let before = meter.sample();
            let started = Instant::now();
            for i in 0..args.reads {
                let (elapsed, body) = reader.get(q, after, args.limit).await?;
                series[k].record(elapsed, body.len());
                if i == 0 || i + 1 == args.reads {
                    let page = parse(&body, q, after)?;
                    world.check(&mut problems, name, &page, &wants[k], after);
                }
            }
            series[k].add_block(&before, &meter.sample(), started.elapsed().as_secs_f64());
        }
    }
    let measured = run_started.elapsed();

    problems.truncate(20);
    let mut report = Report {
        scenario: "directory".into(),
        settings: json!({"channels": n, "reads": args.reads, "rounds": args.rounds, "limit": args.limit,
            "qFew": Q_FEW, "qMany": Q_MANY, "deepAfter": deep_after}),
        measured_secs: measured.as_secs_f64(),
        connections: 1,
        cpu: Some(CpuSplit::between(&run_before, &meter.sample())),
        ..Report::default()
    };
    for s in &series {
        report.extra.insert(s.name.clone(), s.summary());
    }
    report.extra.insert("walks".into(), json!(walks));
    let count = |kind: Kind| (0..n).filter(|&k| pattern::kind(k) == kind).count();
    report.extra.insert(
        "seeded".into(),
        json!({"channels": n, "public": count(Kind::Public), "private": count(Kind::Private),
            "direct": count(Kind::Direct), "memberRows": member_rows, "secs": (seed_secs * 10.0).round() / 10.0, "reused": reused,
            "qFewMatches": world.matching(Some(Q_FEW)).len(), "qManyMatches": world.matching(Some(Q_MANY)).len()}),
    );
    report.verification = Verification {
        ran: true,
        ok: problems.is_empty(),
        channels: n as usize + 3,
        problems,
        ..Verification::default()
    };
    Ok(report)
}

/// Makes the server-made channels (a public group named by no pattern
/// word, a private group, a direct channel) and returns what the checks
/// expect: the run's public channels in byte order, and the ids never to
/// be listed.
async fn controls(ctx: &Ctx, url: &str, prefix: &str, n: u32) -> anyhow::Result<World> {
    let two = vec![pattern::pool_user(prefix, 0), pattern::pool_user(prefix, 1)];
    let made_public = format!("{}-api", pattern::channel_id(prefix, 500.min(n - 1)));
    let made_private = format!("{}-api", pattern::channel_id(prefix, 600.min(n - 1)));
    for (id, visibility) in [(&made_public, Visibility::Public), (&made_private, Visibility::Private)] {
        if ctx.admin.channel(id).await.is_ok() {
            continue; // made by the run that seeded these channels (`--name`)
        }
        ctx.admin
            .create(&NewChannel {
                channel_id: Some(id.clone()),
                members: two.clone(),
                visibility: Some(visibility),
                ..NewChannel::default()
            })
            .await
            .with_context(|| format!("create {id}"))?;
    }
    let user = AdminClient::new(url, ctx.admin.token(&two[0], Some(3_600)).await?);
    let (direct, _) = user.open_direct(&two[1]).await.context("open a direct channel")?;

    let mut public: Vec<Expected> = (0..n)
        .filter(|&k| pattern::kind(k) == Kind::Public)
        .map(|k| Expected {
            id: pattern::channel_id(prefix, k),
            name: pattern::name(k),
            member_count: pattern::members(prefix, k).len() as i64,
        })
        .collect();
    public.push(Expected {
        id: made_public,
        name: None,
        member_count: 2,
    });
    public.sort_by(|a, b| a.id.as_bytes().cmp(b.id.as_bytes()));
    let mut hidden: std::collections::HashSet<String> = (0..n)
        .filter(|&k| pattern::kind(k) != Kind::Public)
        .map(|k| pattern::channel_id(prefix, k))
        .collect();
    hidden.insert(made_private);
    hidden.insert(direct.channel_id);
    Ok(World {
        prefix: format!("{prefix}-"),
        public,
        hidden,
    })
}

/// Reads directory pages with a user's token.
struct Reader {
    http: reqwest::Client,
    /// `…/v1/directory`.
    url: String,
    token: String,
}

impl Reader {
    /// One page (`after` empty: from the first): the time to the whole
    /// body, and the body.
    ///
    /// # Errors
    /// A failed request, or a status other than 200 (with its body).
    async fn get(&self, q: Option<&str>, after: &str, limit: u32) -> anyhow::Result<(Duration, Vec<u8>)> {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(q) = q {
            query.push(("q", q.to_owned()));
        }
        if !after.is_empty() {
            query.push(("after", after.to_owned()));
        }
        let started = Instant::now();
        let response = self
            .http
            .get(&self.url)
            .query(&query)
            .bearer_auth(&self.token)
            .send()
            .await
            .with_context(|| format!("GET /v1/directory q={q:?} after={after}"))?;
        let status = response.status();
        let body = response.bytes().await?;
        let elapsed = started.elapsed();
        let body = body.to_vec();
        if !status.is_success() {
            anyhow::bail!(
                "GET /v1/directory q={q:?} after={after}: HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        Ok((elapsed, body))
    }
}

/// A directory answer, parsed.
fn parse(body: &[u8], q: Option<&str>, after: &str) -> anyhow::Result<DirectoryPage> {
    serde_json::from_slice(body).with_context(|| format!("the directory page q={q:?} after={after}"))
}
