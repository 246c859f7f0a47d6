//! The `search` scenario (protocol §18): `GET /v1/me/search` on N stored
//! messages of realistic multilingual text ([`crate::search_seed`]), and the
//! send rate with and without the search index, on the same server in the
//! same run.
//!
//! 1. Seeds N messages into `--channels` channels straight into the
//!    server's database (`--seed-database-url`), or reuses them (`--name`).
//! 2. As a member of every channel, `--queries` first pages (`limit` 20) of
//!    each query kind, one at a time: a common word, a rare word, a CJK
//!    term of 3 characters, a CJK term of 2 (no trigram), a term with `-`,
//!    and two terms; p50/p99 per kind. Each page is checked: every result
//!    holds every term (case folded), and a kind that must match finds.
//! 3. The `send` load (`--duration` after `--warmup`) with the index, then
//!    with it dropped (SQLite: its triggers and the server's indexer, which
//!    keeps it after each send's commit; PostgreSQL: the GIN index), then
//!    the index is put back (SQLite: the triggers, and the rows sent
//!    without them are indexed; PostgreSQL: `CREATE INDEX`); with
//!    `--send-rounds` above 1, again in the other order (ABBA), and so on.
//!    Reports the mean rates, each phase's rate and CPU, and the ratio.

use std::sync::Arc;

use anyhow::{bail, Context};
use chatd_client::admin::{AdminClient, SearchQuery};
use serde_json::json;
use sqlx::{Connection, Executor};
use tokio::time::Instant;

use crate::search_seed::{self, CJK, CJK_SHORT, COMMON, HYPHEN, RARE};
use crate::stats::{histogram, record, Percentiles, Report};
use crate::{Cli, Ctx, Mode};

/// The migration that creates the index, whose statements the scenario
/// drops and puts back.
/// SQLite: the triggers as migration 0025 left them (the index kept after
/// each send's commit by the server's indexer, up to `search_indexed.upto`).
const SQLITE_MIGRATION: &str = include_str!("../../../migrations/sqlite/0025_search_after_commit.sql");
const PG_MIGRATION: &str = include_str!("../../../migrations/postgres/0015_search.sql");

/// The `search` scenario's settings.
#[derive(clap::Args, Debug, Clone)]
pub struct SearchArgs {
    /// Messages stored (spread over `--channels`).
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(i64).range(100..))]
    messages: i64,
    /// Channels the messages are spread over (the searcher is in all).
    #[arg(long, default_value_t = 10)]
    channels: usize,
    /// The server's database (`postgres://…` or `sqlite://path`): seeding,
    /// and dropping and restoring the index for the send comparison.
    #[arg(long)]
    seed_database_url: String,
    /// Reuse channels `{name}-s{k}` when they hold the messages already.
    #[arg(long)]
    name: Option<String>,
    /// Rows per seeding transaction.
    #[arg(long, default_value_t = 5000)]
    batch: i64,
    /// Timed first pages per query kind.
    #[arg(long, default_value_t = 100)]
    queries: usize,
    /// Skip the send comparison.
    #[arg(long)]
    no_send: bool,
    /// `send` phases: connections, channels, members, sends in flight each.
    #[arg(long, default_value_t = 16)]
    send_connections: usize,
    #[arg(long, default_value_t = 16)]
    send_channels: usize,
    #[arg(long, default_value_t = 4)]
    send_members: usize,
    #[arg(long, default_value_t = 8)]
    send_in_flight: usize,
    /// Rounds of the send comparison: with then without the index, then
    /// without then with (ABBA), and so on; rates are the phases' mean.
    #[arg(long, default_value_t = 1)]
    send_rounds: usize,
}

/// The query kinds: name, `q`, whether it must find something.
fn kinds() -> Vec<(&'static str, String, bool)> {
    vec![
        ("common", COMMON.to_owned(), true),
        ("rare", RARE.to_owned(), true),
        ("cjk", CJK.to_owned(), true),
        ("cjk_2_chars", CJK_SHORT.to_owned(), true),
        ("hyphen", HYPHEN.to_owned(), true),
        ("two_terms", format!("{COMMON} meeting"), true),
        ("no_match", "zzqqxx".to_owned(), false),
    ]
}

/// Runs the scenario (see the module documentation).
pub async fn run(cli: &Cli, ctx: &Arc<Ctx>, pid: Option<u32>, args: SearchArgs) -> anyhow::Result<Report> {
    let name = args.name.clone().unwrap_or_else(|| format!("{}-s", ctx.run));
    let channels: Vec<String> = (0..args.channels.max(1)).map(|k| format!("{name}-s{k}")).collect();
    let writer = format!("{name}-w");
    let reader = format!("{name}-r");
    let members = [writer.clone(), reader.clone()];
    let mut fresh = 0;
    for channel in &channels {
        match ctx.admin.channel(channel).await {
            Ok(_) => {}
            Err(_) => {
                ctx.admin
                    .create_channel(Some(channel), &members)
                    .await
                    .with_context(|| format!("create {channel}"))?;
                fresh += 1;
            }
        }
    }
    let seed_secs = match fresh {
        0 => None,
        n if n == channels.len() => Some(
            search_seed::seed(
                &args.seed_database_url,
                &channels,
                args.messages,
                &writer,
                &name,
                args.batch,
            )
            .await?,
        ),
        _ => bail!("some channels of {name} exist and some do not: use another --name"),
    };
    let token = ctx.admin.token(&reader, Some(86_400)).await?;
    let searcher = AdminClient::new(ctx.admin.base(), token);

    // Warm-up: one of each.
    for (_, q, _) in kinds() {
        searcher.search_page(&SearchQuery::new(q), None).await?;
    }
    let mut queries = serde_json::Map::new();
    let mut problems = Vec::new();
    for (kind, q, must_find) in kinds() {
        let mut h = histogram();
        let mut found = 0;
        let query = SearchQuery::new(q.clone());
        for i in 0..args.queries {
            let started = Instant::now();
            let page = searcher.search_page(&query, None).await?;
            record(&mut h, started.elapsed());
            if i == 0 {
                found = page.results.len();
                let terms: Vec<String> = q.split_whitespace().map(str::to_lowercase).collect();
                for m in &page.results {
                    let body = m.body.to_lowercase();
                    if !terms.iter().all(|t| body.contains(t.as_str())) {
                        problems.push(format!("{kind}: {:?} does not hold {q:?}", m.body));
                    }
                }
                if must_find && found == 0 {
                    problems.push(format!("{kind}: nothing found for {q:?}"));
                }
            }
        }
        queries.insert(
            kind.into(),
            json!({"q": q, "firstPageResults": found, "ms": Percentiles::of(&h)}),
        );
    }

    let mut report = Report {
        scenario: "search".into(),
        settings: json!({
            "messages": args.messages, "channels": channels.len(), "queries": args.queries,
            "limit": 20, "seededBy": if seed_secs.is_some() { "sql" } else { "reused" },
            "sendConnections": args.send_connections, "sendChannels": args.send_channels,
            "sendMembers": args.send_members, "sendInFlight": args.send_in_flight,
            "sendRounds": args.send_rounds, "textBodies": cli.text_bodies,
        }),
        ..Report::default()
    };
    report.extra.insert("queries".into(), json!(queries));
    report.extra.insert("seed_secs".into(), json!(seed_secs));
    if !args.no_send {
        let rounds = compare_sends(cli, ctx, pid, &args).await?;
        let rate = |phases: &[Report]| phases.iter().map(|r| r.acked_per_sec).sum::<f64>() / phases.len().max(1) as f64;
        let (with_rate, without_rate) = (rate(&rounds.with), rate(&rounds.without));
        let ratio = with_rate / without_rate.max(1e-9);
        let each = |phases: &[Report]| phases.iter().map(|r| r.acked_per_sec.round()).collect::<Vec<_>>();
        let cpus = |phases: &[Report]| phases.iter().map(|r| r.cpu.clone()).collect::<Vec<_>>();
        report
            .extra
            .insert("restore_index_secs".into(), json!(rounds.restore_secs));
        report
            .extra
            .insert("index_catch_up_secs".into(), json!(rounds.catch_up_secs));
        report.extra.insert(
            "send".into(),
            json!({
                "order": rounds.order,
                "withIndexPerSec": with_rate.round(),
                "withoutIndexPerSec": without_rate.round(),
                "withOverWithout": (ratio * 1000.0).round() / 1000.0,
                "withEachPerSec": each(&rounds.with),
                "withoutEachPerSec": each(&rounds.without),
                "withAckMs": rounds.with.iter().map(|r| r.send_to_ack_ms.clone()).collect::<Vec<_>>(),
                "withoutAckMs": rounds.without.iter().map(|r| r.send_to_ack_ms.clone()).collect::<Vec<_>>(),
                "withCpu": cpus(&rounds.with),
                "withoutCpu": cpus(&rounds.without),
            }),
        );
        let all = rounds.with.iter().chain(&rounds.without);
        report.acked = all.clone().map(|r| r.acked).sum();
        report.cpu = rounds.with.first().and_then(|r| r.cpu.clone());
        report.verification.ok = true;
        for phase in all {
            report.verification.ok &= !phase.verification.ran || phase.verification.ok;
            report
                .verification
                .problems
                .extend(phase.verification.problems.iter().cloned());
        }
    } else {
        // No send phase to judge: the queries' checks alone decide.
        report.verification.ok = true;
    }
    report.verification.ran = true;
    report.verification.ok &= problems.is_empty();
    report.verification.problems.extend(problems);
    Ok(report)
}

/// The send phases of [`compare_sends`], in the order they ran.
struct Rounds {
    with: Vec<Report>,
    without: Vec<Report>,
    /// `"with"`/`"without"` per phase, as run.
    order: Vec<&'static str>,
    /// Seconds each restore of the index took.
    restore_secs: Vec<f64>,
    /// SQLite: seconds after each phase with the index until the server's
    /// indexer had indexed every message sent in it (0 when it kept up).
    catch_up_secs: Vec<f64>,
}

/// `--send-rounds` rounds of a phase with the index and one without:
/// with-without, then without-with, and so on (ABBA), so that a drift of
/// the machine or of the database over the run weighs on both sides.
async fn compare_sends(cli: &Cli, ctx: &Arc<Ctx>, pid: Option<u32>, args: &SearchArgs) -> anyhow::Result<Rounds> {
    let mut rounds = Rounds {
        with: Vec::new(),
        without: Vec::new(),
        order: Vec::new(),
        restore_secs: Vec::new(),
        catch_up_secs: Vec::new(),
    };
    for round in 0..args.send_rounds.max(1) {
        let order = if round % 2 == 0 { [true, false] } else { [false, true] };
        for indexed in order {
            if indexed {
                rounds
                    .with
                    .push(send_phase(cli, ctx, pid, args, &format!("with{round}")).await?);
                rounds.order.push("with");
                rounds.catch_up_secs.push(wait_indexed(&args.seed_database_url).await?);
            } else {
                let mark = set_index(&args.seed_database_url, None).await?;
                let phase = send_phase(cli, ctx, pid, args, &format!("without{round}")).await;
                let restore_started = Instant::now();
                set_index(&args.seed_database_url, Some(mark)).await?;
                rounds.restore_secs.push(restore_started.elapsed().as_secs_f64());
                rounds.without.push(phase?);
                rounds.order.push("without");
            }
        }
    }
    Ok(rounds)
}

/// One closed-loop `send` phase on its own users and channels.
async fn send_phase(
    cli: &Cli,
    ctx: &Arc<Ctx>,
    pid: Option<u32>,
    args: &SearchArgs,
    name: &str,
) -> anyhow::Result<Report> {
    let phase = Arc::new(ctx.phase(&format!("send-{name}")));
    let members = args.send_members.clamp(1, args.send_connections.max(1));
    let (layout, plans) = crate::send_layout(
        &phase.run,
        args.send_connections,
        args.send_channels,
        members,
        Mode::Closed(args.send_in_flight),
        None,
    );
    crate::load(cli, phase, pid, "send", json!({}), layout, plans).await
}

/// SQLite: waits until the server's indexer has indexed every stored
/// message (`search_indexed.upto` at the highest rowid); the seconds it
/// took. Nothing on PostgreSQL (its index is kept in the send's
/// transaction).
async fn wait_indexed(url: &str) -> anyhow::Result<f64> {
    if url.starts_with("postgres") {
        return Ok(0.0);
    }
    let started = Instant::now();
    let mut db = sqlx::SqliteConnection::connect(url).await?;
    loop {
        let behind: i64 = sqlx::query_scalar(
            "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM messages) - (SELECT upto FROM search_indexed)",
        )
        .fetch_one(&mut db)
        .await?;
        if behind <= 0 {
            return Ok(started.elapsed().as_secs_f64());
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Drops the search index of the database at `url` (`restore` `None`;
/// returns SQLite's highest rowid then) or restores it (`Some` of that
/// rowid: SQLite indexes the rows stored after it). SQLite: dropping is
/// the triggers and the server's indexer (the watermark set past every
/// rowid, so it finds nothing to do); restoring, the triggers, the rows
/// sent meanwhile indexed, and the watermark at the highest rowid.
async fn set_index(url: &str, restore: Option<i64>) -> anyhow::Result<i64> {
    let mut mark = 0;
    if url.starts_with("postgres") {
        let mut db = sqlx::PgConnection::connect(url).await?;
        if restore.is_some() {
            let create = PG_MIGRATION
                .split(';')
                .find(|s| s.contains("CREATE INDEX messages_search"))
                .context("the index statement")?;
            db.execute("SET maintenance_work_mem = '256MB'").await?;
            db.execute(create).await?;
        } else {
            db.execute("DROP INDEX messages_search").await?;
        }
    } else {
        let mut db = sqlx::SqliteConnection::connect(url).await?;
        if let Some(after) = restore {
            let mut tx = db.begin().await?;
            for trigger in SQLITE_MIGRATION.split("CREATE TRIGGER").skip(1) {
                tx.execute(format!("CREATE TRIGGER{trigger}").as_str()).await?;
            }
            // The rows stored while the index was off.
            sqlx::query(
                "INSERT INTO message_search (rowid, text) \
                 SELECT rowid, COALESCE(edited_body, body) FROM messages \
                 WHERE kind = 'message' AND NOT deleted AND rowid > $1",
            )
            .bind(after)
            .execute(&mut *tx)
            .await?;
            tx.execute("UPDATE search_indexed SET upto = (SELECT COALESCE(MAX(rowid), 0) FROM messages)")
                .await?;
            tx.commit().await?;
        } else {
            let mut tx = db.begin().await?;
            for trigger in [
                "message_search_insert",
                "message_search_update",
                "message_search_delete",
            ] {
                tx.execute(format!("DROP TRIGGER {trigger}").as_str()).await?;
            }
            mark = sqlx::query_scalar("SELECT COALESCE(MAX(rowid), 0) FROM messages")
                .fetch_one(&mut *tx)
                .await?;
            tx.execute("UPDATE search_indexed SET upto = 9223372036854775807")
                .await?;
            tx.commit().await?;
        }
    }
    Ok(mark)
}
