//! Readers: while the workload runs, one task per channel reads pages of
//! the channel's log the three ways a client can (`SYNC` on a WebSocket of
//! its own, the history route after a seq, and the history route's newest
//! page, `latest=true`) and checks each page against what the primary had
//! committed when the read began (the channel's `lastSeq` from the admin's
//! channel route, which reads the primary only, asked just before):
//!
//! - **(l)** no page holds a `seq` while a lower one is missing: an
//!   `afterSeq` page starts at `afterSeq + 1` and its seqs follow one
//!   another, as do a newest page's (guarantee 4);
//! - **(m)** no read misses what was committed before it began: an
//!   `afterSeq` page below that `lastSeq` holds `min(limit, lastSeq -
//!   afterSeq)` entries at least, a newest page reaches that `lastSeq`, and
//!   a SYNC_BATCH's own `lastSeq` is not below it (read your writes, and
//!   anyone's writes: with `database_replica_url`, a standby that has not
//!   replayed them must not answer).
//!
//! The devices' own SYNCs (after each reconnect) are checked by (d), but the
//! client library holds entries above a gap and asks again, so a page with a
//! gap would not show there; these readers look at every page as it is.
//! A read that fails (chatd restarting, a database fault) is counted and
//! tried again; only the pages that came back are judged.

use std::time::Duration;

use anyhow::{bail, Context};
use chatd_client::admin::AdminClient;
use chatd_client::chatd_proto::protocol::{RecvMessage, ServerFrame, TaggedMessage};
use futures_util::{SinkExt, StreamExt};
use rand::Rng;
use serde::Serialize;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::Phase;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The longest one read may take before it counts as failed.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What the readers did and found (summed over channels).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadCheck {
    /// Pages read by SYNC, by the history route after a seq, and newest
    /// pages (`latest=true`), that came back.
    pub sync_pages: u64,
    pub history_pages: u64,
    pub latest_pages: u64,
    /// Entries in those pages.
    pub entries_read: u64,
    /// Reads that failed (chatd or its database down meanwhile).
    pub failed_reads: u64,
    #[serde(skip)]
    pub violations: Vec<String>,
}

impl ReadCheck {
    fn violation(&mut self, v: String) {
        if self.violations.len() < 20 {
            self.violations.push(v);
        }
    }

    /// Adds `other`'s counts and violations to these.
    pub fn merge(&mut self, other: ReadCheck) {
        self.sync_pages += other.sync_pages;
        self.history_pages += other.history_pages;
        self.latest_pages += other.latest_pages;
        self.entries_read += other.entries_read;
        self.failed_reads += other.failed_reads;
        for v in other.violations {
            self.violation(v);
        }
    }
}

/// Where and as whom a reader reads.
pub struct Reader {
    /// `ws://127.0.0.1:<port>/v1/ws`.
    pub ws_url: String,
    /// Reads the channel's `lastSeq` (admin token: the primary).
    pub admin: AdminClient,
    /// The history route with the reader's token (a member of the channel).
    pub member: AdminClient,
    /// The reader's user token.
    pub token: String,
    pub channel: String,
    /// Mean pause between two reads.
    pub every: Duration,
}

/// How one read asks.
#[derive(Debug, Clone, Copy)]
enum Way {
    Sync,
    History,
    Latest,
}

/// Reads until the phase is `Drain` or later.
pub async fn run(reader: Reader, mut phase: watch::Receiver<Phase>) -> ReadCheck {
    let mut check = ReadCheck::default();
    let mut socket: Option<Socket> = None;
    loop {
        if !matches!(*phase.borrow_and_update(), Phase::Idle | Phase::Load | Phase::Storm(_)) {
            break;
        }
        let pause = reader.every.mul_f64(rand::rng().random_range(0.5..1.5));
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            _ = phase.changed() => continue,
        }
        let way = match rand::rng().random_range(0..3) {
            0 => Way::Sync,
            1 => Way::History,
            _ => Way::Latest,
        };
        let outcome = tokio::time::timeout(READ_TIMEOUT, read_once(&reader, &mut socket, way, &mut check)).await;
        if !matches!(outcome, Ok(Ok(()))) {
            check.failed_reads += 1;
            socket = None;
        }
    }
    if let Some(mut s) = socket {
        let _ = s.close(None).await;
    }
    check
}

/// One read the given way, judged into `check`.
async fn read_once(
    reader: &Reader,
    socket: &mut Option<Socket>,
    way: Way,
    check: &mut ReadCheck,
) -> anyhow::Result<()> {
    let channel = reader.channel.as_str();
    // Committed on the primary before the read begins.
    let committed = reader.admin.channel(channel).await?.last_seq;
    let limit: u32 = if rand::rng().random_bool(0.2) {
        500
    } else {
        rand::rng().random_range(1..=100)
    };
    // Mostly near the end, where the standby may lag.
    let after = (committed - rand::rng().random_range(0..=(i64::from(limit) + 20))).max(0);
    match way {
        Way::Sync => {
            if socket.is_none() {
                *socket = Some(connect(&reader.ws_url, &reader.token).await?);
            }
            let s = socket.as_mut().context("socket")?;
            let (page, last_seq) = sync_page(s, channel, after, limit).await?;
            check.sync_pages += 1;
            judge_after(check, "SYNC", channel, committed, after, limit, &page);
            if let Some(last) = last_seq {
                if last < committed {
                    check.violation(format!(
                        "(m) SYNC in {channel} after {after}: lastSeq {last}, below the {committed} committed before the read"
                    ));
                }
            }
        }
        Way::History => {
            let (page, _) = reader.member.history_page(channel, after, limit).await?;
            check.history_pages += 1;
            judge_after(check, "history", channel, committed, after, limit, &page);
        }
        Way::Latest => {
            let (page, _) = reader.member.history_before(channel, None, limit).await?;
            check.latest_pages += 1;
            check.entries_read += page.len() as u64;
            judge_consecutive(check, "latest page", channel, &page);
            let top = page.last().map_or(0, |m| m.seq);
            if top < committed {
                check.violation(format!(
                    "(m) latest page of {channel}: ends at {top}, below the {committed} committed before the read"
                ));
            }
        }
    }
    Ok(())
}

/// (l) and (m) for a page read after `after` with `limit`.
fn judge_after(
    check: &mut ReadCheck,
    how: &str,
    channel: &str,
    committed: i64,
    after: i64,
    limit: u32,
    page: &[RecvMessage],
) {
    check.entries_read += page.len() as u64;
    if let Some(first) = page.first() {
        if first.seq != after + 1 {
            check.violation(format!(
                "(l) {how} in {channel} after {after}: the page starts at {}",
                first.seq
            ));
        }
    }
    judge_consecutive(check, how, channel, page);
    let owed = (committed - after).clamp(0, i64::from(limit));
    if (page.len() as i64) < owed {
        check.violation(format!(
            "(m) {how} in {channel} after {after} (limit {limit}): {} entries, {owed} were committed before the read",
            page.len()
        ));
    }
}

/// (l): the page's seqs follow one another.
fn judge_consecutive(check: &mut ReadCheck, how: &str, channel: &str, page: &[RecvMessage]) {
    if let Some(i) = page.windows(2).position(|w| w[1].seq != w[0].seq + 1) {
        check.violation(format!(
            "(l) {how} in {channel}: seq {} follows {} (a lower seq missing)",
            page[i + 1].seq,
            page[i].seq
        ));
    }
}

async fn connect(url: &str, token: &str) -> anyhow::Result<Socket> {
    let mut request = url.into_client_request()?;
    request
        .headers_mut()
        .insert("authorization", HeaderValue::from_str(&format!("Bearer {token}"))?);
    let (socket, _) = tokio_tungstenite::connect_async(request).await?;
    Ok(socket)
}

/// Sends one SYNC and returns its SYNC_BATCH's entries and `lastSeq`,
/// skipping every other frame (HELLO, live MSG_RECVs, receipts).
async fn sync_page(
    socket: &mut Socket,
    channel: &str,
    after: i64,
    limit: u32,
) -> anyhow::Result<(Vec<RecvMessage>, Option<i64>)> {
    let frame = serde_json::json!({"type": "SYNC", "channelId": channel, "afterSeq": after, "limit": limit});
    socket.send(Message::text(frame.to_string())).await?;
    while let Some(message) = socket.next().await {
        let Message::Text(text) = message? else {
            continue;
        };
        match ServerFrame::decode(&text) {
            Ok(ServerFrame::SyncBatch {
                channel_id,
                messages,
                last_seq,
                ..
            }) if channel_id == channel => {
                let page = messages.into_iter().map(|TaggedMessage::MsgRecv(m)| m).collect();
                return Ok((page, last_seq));
            }
            Ok(ServerFrame::Error(e)) => bail!("SYNC refused: {:?} {}", e.code, e.message),
            _ => {}
        }
    }
    bail!("the connection closed before the SYNC_BATCH")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(seqs: &[i64]) -> Vec<RecvMessage> {
        seqs.iter()
            .map(|&seq| {
                serde_json::from_value(serde_json::json!({
                    "messageId": uuid::Uuid::now_v7(), "channelId": "c", "senderId": "u",
                    "seq": seq, "body": "b", "ts": 1,
                }))
                .expect("a MSG_RECV")
            })
            .collect()
    }

    #[test]
    fn a_whole_page_passes() {
        let mut check = ReadCheck::default();
        judge_after(&mut check, "history", "c", 7, 4, 10, &page(&[5, 6, 7]));
        judge_after(&mut check, "history", "c", 7, 4, 2, &page(&[5, 6]));
        // Committed meanwhile: more than was owed is fine.
        judge_after(&mut check, "history", "c", 7, 4, 10, &page(&[5, 6, 7, 8]));
        assert!(check.violations.is_empty(), "{:?}", check.violations);
        assert_eq!(check.entries_read, 9);
    }

    #[test]
    fn a_page_with_a_hole_is_caught() {
        let mut check = ReadCheck::default();
        judge_after(&mut check, "SYNC", "c", 7, 4, 10, &page(&[5, 7]));
        assert!(check
            .violations
            .iter()
            .any(|v| v.starts_with("(l)") && v.contains("seq 7 follows 5")));
        let mut check = ReadCheck::default();
        judge_after(&mut check, "SYNC", "c", 7, 4, 10, &page(&[6, 7]));
        assert!(check
            .violations
            .iter()
            .any(|v| v.starts_with("(l)") && v.contains("starts at 6")));
    }

    #[test]
    fn a_page_missing_what_was_committed_is_caught() {
        let mut check = ReadCheck::default();
        judge_after(&mut check, "history", "c", 7, 4, 10, &page(&[5, 6]));
        assert!(
            check.violations.iter().any(|v| v.starts_with("(m)")),
            "{:?}",
            check.violations
        );
        let mut check = ReadCheck::default();
        judge_after(&mut check, "history", "c", 7, 4, 10, &page(&[]));
        assert!(
            check.violations.iter().any(|v| v.starts_with("(m)")),
            "{:?}",
            check.violations
        );
    }
}
