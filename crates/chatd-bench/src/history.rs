//! The `history` scenario: render-ready reads (protocol §8) of a channel of
//! N entries of which 10 % are edits and reactions, against a channel of N
//! plain messages, on the same server in the same run.
//!
//! Both channels have the same two members, a writer and a reader, and the
//! entries of [`crate::seed`]'s pattern, written either through the server
//! (MSG_SEND, MSG_EDIT, MSG_REACT; fine for thousands) or straight into its
//! database (`--seed-database-url`; for a million). Then, as the reader
//! (so every page computes the reader's `me`), interleaving the channels:
//! `--reads` pages of `--limit` each of `latest=true`, `beforeSeq` and
//! `afterSeq` at scattered seqs through `GET /v1/channels/{id}/messages`,
//! and `--sync-rounds` SYNC catch-ups of the last `--catch-up` entries
//! (the client library's SYNC pages of 500). Every page and every synced
//! entry is checked against the pattern: the seqs asked for, each message's
//! current text, `editedAt`, and `reactions` (`[{👍, 1, me: true}]` on the
//! reacted ones, `[]` elsewhere), and each change's `targetId`.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{bail, Context};
use chatd_client::chatd_proto::protocol::{EntryKind, ReactOp, RecvMessage, TaggedMessage};
use chatd_client::{Client, EntryRequest, Event};
use futures_util::stream::{FuturesOrdered, StreamExt};
use hdrhistogram::Histogram;
use serde_json::json;
use tokio::time::Instant;

use crate::seed::{self, Entry};
use crate::stats::{histogram, record, Percentiles, Report, Verification};
use crate::{Cli, Ctx};

/// The `history` scenario's settings.
#[derive(clap::Args, Debug, Clone)]
pub struct HistoryArgs {
    /// Entries in each of the two channels.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(i64).range(20..))]
    entries: i64,
    /// Write the entries straight into the server's database at this URL
    /// (`postgres://…`, or `sqlite://path` of the server's own file) instead
    /// of through the server's frames.
    #[arg(long)]
    seed_database_url: Option<String>,
    /// Channels `{name}-plain` and `{name}-mixed` (users `{name}-w`,
    /// `{name}-r`): reused when they already hold `--entries` entries, so
    /// one seeding serves several runs (default: fresh ones for this run).
    #[arg(long)]
    name: Option<String>,
    /// Pages read of each kind per channel.
    #[arg(long, default_value_t = 300)]
    reads: usize,
    /// Entries per page (1..=500).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=500))]
    limit: u32,
    /// Entries each SYNC catch-up reads (the last K of a channel); 0: none.
    #[arg(long, default_value_t = 20_000)]
    catch_up: i64,
    /// SYNC catch-ups per channel (alternating between the channels).
    #[arg(long, default_value_t = 2)]
    sync_rounds: usize,
}

/// A page as the history route returns it.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    messages: Vec<TaggedMessage>,
    #[serde(default)]
    has_more: bool,
}

/// The two channels and their members.
struct Names {
    plain: String,
    mixed: String,
    writer: String,
    reader: String,
}

/// Runs the scenario (see the module documentation).
pub async fn run(cli: &Cli, ctx: &Ctx, args: HistoryArgs) -> anyhow::Result<Report> {
    let name = args.name.clone().unwrap_or_else(|| format!("{}-h", ctx.run));
    let names = Names {
        plain: format!("{name}-plain"),
        mixed: format!("{name}-mixed"),
        writer: format!("{name}-w"),
        reader: format!("{name}-r"),
    };
    let n = args.entries;
    let members = [names.writer.clone(), names.reader.clone()];
    let mut to_seed = Vec::new();
    for (channel, mixed) in [(&names.plain, false), (&names.mixed, true)] {
        match ctx.admin.channel(channel).await {
            Ok(c) if c.last_seq == n => {}
            Ok(c) => bail!("{channel} holds {} entries, not {n}: use another --name", c.last_seq),
            Err(_) => {
                ctx.admin
                    .create_channel(Some(channel), &members)
                    .await
                    .with_context(|| format!("create {channel}"))?;
                to_seed.push((channel.clone(), mixed));
            }
        }
    }
    let reader_token = ctx.admin.token(&names.reader, Some(86_400)).await?;
    let seeded_by = if to_seed.is_empty() {
        "reused"
    } else if args.seed_database_url.is_some() {
        "sql"
    } else {
        "frames"
    };
    let seed_started = Instant::now();
    if let Some(url) = &args.seed_database_url {
        let targets: Vec<seed::Target> = to_seed
            .iter()
            .map(|(channel, mixed)| seed::Target {
                channel_id: channel,
                mixed: *mixed,
                // The random tail of a UUIDv7: unique per channel and run.
                id_tag: uuid::Uuid::now_v7().simple().to_string()[24..].to_owned(),
            })
            .collect();
        if !targets.is_empty() {
            seed::sql(url, &targets, n, &names.writer, &names.reader).await?;
        }
    } else {
        for (channel, mixed) in &to_seed {
            seed_by_frames(ctx, &names, &reader_token, channel, *mixed, n).await?;
        }
    }
    let seed_secs = seed_started.elapsed().as_secs_f64();
    for channel in [&names.plain, &names.mixed] {
        let last = ctx.admin.channel(channel).await?.last_seq;
        anyhow::ensure!(last == n, "{channel} holds {last} entries after seeding, not {n}");
    }

    let mut problems = Vec::new();
    let http = reqwest::Client::new();
    let base = cli.url.trim_end_matches('/').to_owned();
    let limit = i64::from(args.limit);
    // Per channel (0 plain, 1 mixed): latest, beforeSeq, afterSeq.
    let mut pages: [[Histogram<u64>; 3]; 2] = std::array::from_fn(|_| std::array::from_fn(|_| histogram()));
    let reads_started = Instant::now();
    for i in 0..args.reads {
        let span = (n - 2 * limit).max(1) as u64;
        let seq = limit + 1 + ((i as u64).wrapping_mul(2_654_435_761) % span) as i64;
        // Alternate which channel goes first, so neither always reads warm.
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for c in order {
            let (channel, mixed) = if c == 0 {
                (&names.plain, false)
            } else {
                (&names.mixed, true)
            };
            let queries = [
                ("latest=true".to_owned(), n - limit + 1),
                (format!("beforeSeq={seq}"), seq - limit),
                (format!("afterSeq={seq}"), seq + 1),
            ];
            for (k, (query, first)) in queries.iter().enumerate() {
                let url = format!("{base}/v1/channels/{channel}/messages?{query}&limit={}", args.limit);
                let t = Instant::now();
                let response = http.get(&url).bearer_auth(&reader_token).send().await?;
                let status = response.status();
                let bytes = response.bytes().await?;
                record(&mut pages[c][k], t.elapsed());
                if !status.is_success() {
                    problems.push(format!("{channel} {query}: HTTP {status}"));
                    continue;
                }
                let page: Page = serde_json::from_slice(&bytes).with_context(|| format!("{channel} {query}"))?;
                let entries: Vec<RecvMessage> = page.messages.into_iter().map(|TaggedMessage::MsgRecv(m)| m).collect();
                let want_more = if k == 2 { first + limit - 1 < n } else { *first > 1 };
                if page.has_more != want_more {
                    problems.push(format!("{channel} {query}: hasMore {}", page.has_more));
                }
                check_entries(&mut problems, channel, &entries, Some((*first, limit)), n, mixed);
            }
        }
    }
    let reads_secs = reads_started.elapsed().as_secs_f64();

    // SYNC catch-ups of the last K entries, alternating the channels.
    let catch_up = args.catch_up.clamp(0, n);
    let mut syncs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    if catch_up > 0 {
        for round in 0..args.sync_rounds {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for c in order {
                let (channel, mixed) = if c == 0 {
                    (&names.plain, false)
                } else {
                    (&names.mixed, true)
                };
                let mut config = ctx.client_config(0, reader_token.clone());
                config.resume = vec![(channel.clone(), n - catch_up)];
                let started = Instant::now();
                let (client, mut events) = Client::connect(config).await?;
                let mut got = Vec::with_capacity(catch_up as usize);
                while (got.len() as i64) < catch_up {
                    match tokio::time::timeout(Duration::from_secs(60), events.recv()).await {
                        Ok(Some(Event::Message(m))) if &m.channel_id == channel => got.push(*m),
                        Ok(Some(_)) => {}
                        _ => break,
                    }
                }
                syncs[c].push(started.elapsed().as_secs_f64());
                client.close().await;
                if got.len() as i64 != catch_up {
                    problems.push(format!("{channel}: SYNC delivered {} of {catch_up}", got.len()));
                }
                check_entries(
                    &mut problems,
                    channel,
                    &got,
                    Some((n - catch_up + 1, catch_up)),
                    n,
                    mixed,
                );
            }
        }
    }

    problems.truncate(20);
    let mut report = Report {
        scenario: "history".into(),
        settings: json!({"entries": n, "limit": args.limit, "reads": args.reads, "catchUp": catch_up, "syncRounds": args.sync_rounds, "plain": names.plain, "mixed": names.mixed, "seededBy": seeded_by}),
        measured_secs: reads_secs,
        connections: 1,
        ..Report::default()
    };
    let kinds = ["latest", "before_seq", "after_seq"];
    for (c, label) in [(0, "plain"), (1, "mixed")] {
        for (k, kind) in kinds.iter().enumerate() {
            report.extra.insert(
                format!("{label}_{kind}_page_ms"),
                serde_json::to_value(Percentiles::of(&pages[c][k]))?,
            );
        }
    }
    let p99 = |c: usize, k: usize| pages[c][k].value_at_quantile(0.99) as f64;
    let ratios: HashMap<&str, f64> = kinds
        .iter()
        .enumerate()
        .map(|(k, kind)| (*kind, (p99(1, k) / p99(0, k).max(1.0) * 100.0).round() / 100.0))
        .collect();
    report.extra.insert("mixed_over_plain_p99".into(), json!(ratios));
    if catch_up > 0 {
        let rate = |secs: &[f64]| secs.iter().map(|s| (catch_up as f64 / s).round()).collect::<Vec<_>>();
        report.extra.insert(
            "sync_catch_up".into(),
            json!({"plainSecs": syncs[0], "mixedSecs": syncs[1], "plainEntriesPerSec": rate(&syncs[0]), "mixedEntriesPerSec": rate(&syncs[1])}),
        );
    }
    report
        .extra
        .insert("seed_secs".into(), json!((seed_secs * 10.0).round() / 10.0));
    report.verification = Verification {
        ran: true,
        ok: problems.is_empty(),
        channels: 2,
        stored: (2 * n) as usize,
        problems,
        ..Verification::default()
    };
    Ok(report)
}

/// Checks entries read from a channel of `n` entries of the pattern: when
/// `span` is `(first, count)`, they are exactly seqs `first..first+count`
/// (clipped to `n`); each message reads in its state
/// ([`seed::message_state`]) with `reactions` present, and each change is of
/// its kind with the `targetId` of the message 9 seqs before when that is
/// among `entries`.
fn check_entries(
    problems: &mut Vec<String>,
    channel: &str,
    entries: &[RecvMessage],
    span: Option<(i64, i64)>,
    n: i64,
    mixed: bool,
) {
    if problems.len() >= 20 {
        return;
    }
    if let Some((first, count)) = span {
        let last = (first + count - 1).min(n);
        let seqs_ok = entries.len() as i64 == last - first + 1
            && entries.iter().enumerate().all(|(i, m)| m.seq == first + i as i64);
        if !seqs_ok {
            problems.push(format!(
                "{channel}: asked for seqs {first}..={last}, got {} entries from {:?} to {:?}",
                entries.len(),
                entries.first().map(|m| m.seq),
                entries.last().map(|m| m.seq)
            ));
            return;
        }
    }
    let ids: HashMap<i64, uuid::Uuid> = entries.iter().map(|m| (m.seq, m.message_id)).collect();
    for m in entries {
        let wrong = match seed::entry(m.seq, mixed) {
            Entry::Message(_) => {
                let (body, edited, reacted) = seed::message_state(m.seq, n, mixed);
                let reactions_ok = match (&m.reactions, reacted) {
                    (Some(r), false) => r.is_empty(),
                    (Some(r), true) => r.len() == 1 && r[0].emoji == seed::EMOJI && r[0].count == 1 && r[0].me,
                    (None, _) => false,
                };
                m.kind != EntryKind::Message
                    || m.body != body
                    || m.edited_at.is_some() != edited
                    || m.deleted
                    || !reactions_ok
            }
            Entry::Edit { target, body } => {
                m.kind != EntryKind::Edit
                    || m.body != body
                    || ids.get(&target).is_some_and(|id| m.target_id != Some(*id))
            }
            Entry::React { target } => {
                m.kind != EntryKind::Reaction
                    || m.emoji.as_deref() != Some(seed::EMOJI)
                    || m.op != Some(ReactOp::Add)
                    || ids.get(&target).is_some_and(|id| m.target_id != Some(*id))
            }
        };
        if wrong {
            problems.push(format!(
                "{channel} seq {}: read as kind {:?} body {:?} editedAt {:?} reactions {:?}",
                m.seq,
                m.kind,
                m.body.get(..11).unwrap_or(&m.body),
                m.edited_at,
                m.reactions
            ));
            if problems.len() >= 20 {
                return;
            }
        }
    }
}

/// Writes the pattern into `channel` through the server: the writer's
/// messages and edits, the reader's reactions, in seq order (each block of
/// ten is pipelined up to its change, which waits for the block's ACKs).
async fn seed_by_frames(
    ctx: &Ctx,
    names: &Names,
    reader_token: &str,
    channel: &str,
    mixed: bool,
    n: i64,
) -> anyhow::Result<()> {
    let writer_token = ctx.admin.token(&names.writer, Some(86_400)).await?;
    let (writer, writer_events) = Client::connect(ctx.client_config(0, writer_token)).await?;
    let (reader, reader_events) = Client::connect(ctx.client_config(0, reader_token.to_owned())).await?;
    // Undrained, a client's event queue fills and it stops reading its socket.
    let drains = [writer_events, reader_events]
        .map(|mut events| tokio::spawn(async move { while events.recv().await.is_some() {} }));
    let mut ids: HashMap<i64, uuid::Uuid> = HashMap::new();
    let mut s = 1;
    while s <= n {
        // Messages up to the next change (or 500 of them), pipelined.
        let mut pending = FuturesOrdered::new();
        while s <= n && pending.len() < 500 {
            match seed::entry(s, mixed) {
                Entry::Message(body) => {
                    pending.push_back(writer.submit(channel, &seed::key(s, mixed), body).await?);
                    s += 1;
                }
                _ => break,
            }
        }
        let first = s - pending.len() as i64;
        let mut at = first;
        while let Some(ack) = pending.next().await {
            let ack = ack?;
            anyhow::ensure!(ack.seq == at, "{channel}: message {at} stored as seq {}", ack.seq);
            if mixed {
                ids.insert(at, ack.message_id);
            }
            at += 1;
        }
        if s > n {
            break;
        }
        let target_of = |seq: i64| ids.get(&seq).copied().context("the change's target was not stored");
        let (client, entry) = match seed::entry(s, mixed) {
            Entry::Edit { target, body } => (
                &writer,
                EntryRequest::Edit {
                    message_id: target_of(target)?,
                    body,
                },
            ),
            Entry::React { target } => (
                &reader,
                EntryRequest::React {
                    message_id: target_of(target)?,
                    emoji: seed::EMOJI.to_owned(),
                    add: true,
                },
            ),
            Entry::Message(_) => continue,
        };
        let ack = client.submit_entry(&seed::key(s, mixed), entry).await?.await?;
        anyhow::ensure!(ack.seq == s, "{channel}: change {s} stored as seq {}", ack.seq);
        ids.retain(|seq, _| *seq > s);
        s += 1;
    }
    writer.close().await;
    reader.close().await;
    for drain in drains {
        let _ = drain.await;
    }
    Ok(())
}
