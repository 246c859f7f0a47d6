//! The `thread` scenario: reading one thread of a long channel (protocol
//! §14) next to reading the channel itself, in the same run. A channel of
//! `--entries` messages is written straight into the server's database
//! ([`crate::seed`], the `history` scenario's plain pattern); then every
//! `--every`-th message (seq `s` with `s % every == 0`) is made a reply in
//! the thread of the message at seq 1, and the root gets its summary, as
//! the write path would have kept it (so 1,000,000 entries and `--every
//! 100` make a thread of 10,000 replies spread over the whole channel).
//!
//! Timed, in blocks of `--reads` per kind and `--rounds` rounds in rotating
//! order ([`crate::reads`]), as the channel's reader through `GET
//! /v1/channels/{id}/messages` with `limit=--limit`:
//! - `channel_latest`: `latest=true`, the channel's newest page;
//! - `thread_latest`: `threadId=ROOT&latest=true`, the thread's newest page;
//! - `thread_before`: `threadId=ROOT&beforeSeq=S` at seqs spread over the
//!   thread, an older page of it.
//!
//! Checked on the first and last request of each block: the channel page
//! is the last `limit` seqs; a thread page holds only replies of the root
//! (`threadId`), the right seqs (multiples of `every`) in order, and
//! `hasMore` as the thread says.

use std::time::Duration;

use anyhow::{bail, Context};
use chatd_client::chatd_proto::protocol::{RecvMessage, TaggedMessage};
use serde_json::json;
use sqlx::{Connection, Executor};
use tokio::time::Instant;

use crate::reads::{rotation, Meter, Series};
use crate::seed;
use crate::stats::{CpuSplit, Report, Verification};
use crate::{Cli, Ctx};

/// The `thread` scenario's settings.
#[derive(clap::Args, Debug, Clone)]
pub struct ThreadArgs {
    /// Entries (messages) in the channel.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(i64).range(200..))]
    entries: i64,
    /// Every this-many-th message is a reply in the thread of seq 1.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i64).range(2..))]
    every: i64,
    /// The server's database (`postgres://…`, or `sqlite://path` of the
    /// server's own file): the channel is written there.
    #[arg(long)]
    seed_database_url: String,
    /// Requests per kind per round.
    #[arg(long, default_value_t = 100)]
    reads: usize,
    /// Rounds (the kinds' order rotates each round).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Entries per page (1..=500).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=500))]
    limit: u32,
}

/// A page as the history route returns it.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    messages: Vec<TaggedMessage>,
    #[serde(default)]
    has_more: bool,
}

/// The kinds timed, in their base order.
const KINDS: [&str; 3] = ["channel_latest", "thread_latest", "thread_before"];

/// Runs the scenario (see the module documentation).
pub async fn run(cli: &Cli, ctx: &Ctx, pid: Option<u32>, args: ThreadArgs) -> anyhow::Result<Report> {
    let (n, every, limit) = (args.entries, args.every, i64::from(args.limit));
    let replies = n / every;
    if replies < limit {
        bail!("the thread would hold {replies} replies, fewer than a page of {limit}: lower --every");
    }
    let channel = format!("{}-thread", ctx.run);
    let (writer, reader) = (format!("{channel}-w"), format!("{channel}-r"));
    ctx.admin
        .create_channel(Some(&channel), &[writer.clone(), reader.clone()])
        .await
        .with_context(|| format!("create {channel}"))?;
    let id_tag = uuid::Uuid::now_v7().simple().to_string()[24..].to_owned();
    let target = seed::Target {
        channel_id: &channel,
        mixed: false,
        id_tag: id_tag.clone(),
    };
    let seed_secs = seed::sql(&args.seed_database_url, &[target], n, &writer, &reader).await?;
    let root = uuid::Uuid::parse_str(&format!("{id_tag}-0000-7000-8000-{:012x}", 1))?;
    let thread_secs = make_thread(&args.seed_database_url, &channel, root, every, &writer).await?;
    let token = ctx.admin.token(&reader, Some(86_400)).await?;

    let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build()?;
    let base = format!("{}/v1/channels/{channel}/messages", cli.url.trim_end_matches('/'));
    let meter = Meter {
        server: pid,
        database: cli.pg_database.clone(),
    };
    let last_reply = replies * every;
    let mut problems = Vec::new();
    let mut series: Vec<Series> = KINDS.iter().map(|k| Series::new(*k)).collect();
    let run_before = meter.sample();
    let run_started = Instant::now();
    for round in 0..args.rounds.max(1) {
        for k in rotation(KINDS.len(), round) {
            let before = meter.sample();
            let started = Instant::now();
            for i in 0..args.reads {
                // thread_before: a seq inside the thread with a full page below it.
                let span = (replies - limit).max(1) as u64;
                let nth = limit + 1 + ((i as u64 + round as u64 * 7919).wrapping_mul(2_654_435_761) % span) as i64;
                let before_seq = nth * every;
                let query = match k {
                    0 => "latest=true".to_owned(),
                    1 => format!("threadId={root}&latest=true"),
                    _ => format!("threadId={root}&beforeSeq={before_seq}"),
                };
                let url = format!("{base}?{query}&limit={limit}");
                let t = Instant::now();
                let response = http.get(&url).bearer_auth(&token).send().await?;
                let status = response.status();
                let bytes = response.bytes().await?;
                series[k].record(t.elapsed(), bytes.len());
                if i != 0 && i + 1 != args.reads {
                    continue;
                }
                if !status.is_success() {
                    problems.push(format!("{query}: HTTP {status}"));
                    continue;
                }
                let page: Page = serde_json::from_slice(&bytes).with_context(|| query.clone())?;
                let got: Vec<RecvMessage> = page.messages.into_iter().map(|TaggedMessage::MsgRecv(m)| m).collect();
                let (want, more, thread) = match k {
                    0 => ((n - limit + 1..=n).collect::<Vec<_>>(), n > limit, None),
                    1 => (
                        (replies - limit + 1..=replies).map(|r| r * every).collect(),
                        replies > limit,
                        Some(root),
                    ),
                    _ => (
                        (nth - limit..nth).map(|r| r * every).collect(),
                        nth - limit > 1,
                        Some(root),
                    ),
                };
                problems.extend(check_page(&query, &got, &want, page.has_more, more, thread));
            }
            series[k].add_block(&before, &meter.sample(), started.elapsed().as_secs_f64());
        }
    }
    let measured = run_started.elapsed();
    problems.truncate(20);
    let mut report = Report {
        scenario: "thread".into(),
        settings: json!({"entries": n, "every": every, "replies": replies, "lastReplySeq": last_reply,
            "reads": args.reads, "rounds": args.rounds, "limit": limit, "channel": channel,
            "seedSecs": seed_secs, "threadSecs": thread_secs}),
        measured_secs: measured.as_secs_f64(),
        connections: 1,
        cpu: Some(CpuSplit::between(&run_before, &meter.sample())),
        ..Report::default()
    };
    for s in &series {
        report.extra.insert(s.name.clone(), s.summary());
    }
    let pct = |k: usize, p: fn(&crate::stats::Percentiles) -> f64| p(&series[k].percentiles());
    let ratio = |a: usize, b: usize, p: fn(&crate::stats::Percentiles) -> f64| {
        (pct(a, p) / pct(b, p).max(1e-3) * 100.0).round() / 100.0
    };
    report.extra.insert(
        "over_channel_latest".into(),
        json!({
            "threadLatestP50": ratio(1, 0, |p| p.p50),
            "threadLatestP99": ratio(1, 0, |p| p.p99),
            "threadBeforeP50": ratio(2, 0, |p| p.p50),
            "threadBeforeP99": ratio(2, 0, |p| p.p99),
        }),
    );
    report.verification = Verification {
        ran: true,
        ok: problems.is_empty(),
        channels: 1,
        problems,
        ..Verification::default()
    };
    Ok(report)
}

/// What is wrong with a page: its seqs against `want` (ascending), each
/// entry's `threadId` against `thread`, and `hasMore`.
fn check_page(
    query: &str,
    got: &[RecvMessage],
    want: &[i64],
    has_more: bool,
    more: bool,
    thread: Option<uuid::Uuid>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let seqs: Vec<i64> = got.iter().map(|m| m.seq).collect();
    if seqs != want {
        problems.push(format!(
            "{query}: seqs {:?}…{:?} ({}), want {:?}…{:?} ({})",
            seqs.first(),
            seqs.last(),
            seqs.len(),
            want.first(),
            want.last(),
            want.len()
        ));
    }
    if let Some(root) = thread {
        if let Some(m) = got.iter().find(|m| m.thread_id != Some(root)) {
            problems.push(format!("{query}: seq {} is not a reply of the thread", m.seq));
        }
    }
    if has_more != more {
        problems.push(format!("{query}: hasMore {has_more}, want {more}"));
    }
    problems
}

/// Makes every `every`-th message of `channel` a reply in `root`'s thread
/// and gives the root the summary the write path would keep (reply count,
/// latest reply's ts and seq, `[writer]` as participants); then `ANALYZE`.
/// Returns the seconds it took.
async fn make_thread(url: &str, channel: &str, root: uuid::Uuid, every: i64, writer: &str) -> anyhow::Result<f64> {
    let started = std::time::Instant::now();
    let participants = serde_json::to_string(&[writer])?;
    if url.starts_with("postgres") {
        let mut db = sqlx::PgConnection::connect(url)
            .await
            .context("connect to PostgreSQL")?;
        let mut tx = db.begin().await?;
        sqlx::query("UPDATE messages SET thread_id = $2::uuid WHERE channel_id = $1 AND seq % $3 = 0 AND seq > 1")
            .bind(channel)
            .bind(root.to_string())
            .bind(every)
            .execute(&mut *tx)
            .await?;
        sqlx::query(&ROOT_SUMMARY.replace("$1", "$1::uuid"))
            .bind(root.to_string())
            .bind(&participants)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        db.execute("ANALYZE messages").await?;
    } else {
        let mut db = sqlx::SqliteConnection::connect(url)
            .await
            .context("open the SQLite database")?;
        let mut tx = db.begin().await?;
        sqlx::query("UPDATE messages SET thread_id = $2 WHERE channel_id = $1 AND seq % $3 = 0 AND seq > 1")
            .bind(channel)
            .bind(root.to_string())
            .bind(every)
            .execute(&mut *tx)
            .await?;
        sqlx::query(ROOT_SUMMARY)
            .bind(root.to_string())
            .bind(&participants)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        db.execute("ANALYZE").await?;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// The root's ($1) summary from its replies; $2 the participants (JSON).
const ROOT_SUMMARY: &str = "UPDATE messages SET \
     reply_count = (SELECT count(*) FROM messages r WHERE r.thread_id = $1), \
     last_reply_at = (SELECT max(r.ts) FROM messages r WHERE r.thread_id = $1), \
     last_reply_seq = (SELECT max(r.seq) FROM messages r WHERE r.thread_id = $1), \
     participants = $2 \
     WHERE message_id = $1";

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(seq: i64, thread: Option<uuid::Uuid>) -> RecvMessage {
        RecvMessage {
            seq,
            thread_id: thread,
            ..RecvMessage::default()
        }
    }

    #[test]
    fn a_page_is_checked_for_its_seqs_its_thread_and_has_more() {
        let root = uuid::Uuid::now_v7();
        let page = vec![reply(100, Some(root)), reply(200, Some(root))];
        assert!(check_page("q", &page, &[100, 200], true, true, Some(root)).is_empty());
        assert_eq!(check_page("q", &page, &[200, 300], true, true, Some(root)).len(), 1);
        assert_eq!(check_page("q", &page, &[100, 200], false, true, Some(root)).len(), 1);
        let stray = vec![reply(100, Some(root)), reply(150, None)];
        assert_eq!(check_page("q", &stray, &[100, 150], true, true, Some(root)).len(), 1);
    }
}
