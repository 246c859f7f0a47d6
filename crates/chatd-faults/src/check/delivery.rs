//! (d) and (e): what each device was handed, against what is stored (every
//! entry of its channels once, in order) and against itself (no watermark
//! it saw went back).

use std::collections::HashMap;

use chatd_client::chatd_proto::protocol::RecvMessage;

use super::Findings;
use crate::record::ClientLog;

/// (d): every channel's entries as `log`'s device was handed them equal
/// the stored ones, by (seq, id), each once and in order.
pub(super) fn check_delivered(f: &mut Findings, history: &HashMap<String, Vec<RecvMessage>>, log: &ClientLog) {
    for channel in &log.channels {
        let want: Vec<(i64, uuid::Uuid)> = history
            .get(channel)
            .map(|ms| ms.iter().map(|m| (m.seq, m.message_id)).collect())
            .unwrap_or_default();
        let got = log.delivered.get(channel).cloned().unwrap_or_default();
        if got != want {
            let first_diff = got.iter().zip(&want).position(|(a, b)| a != b);
            f.violation(format!(
                "(d) {} in {channel}: delivered {} entries, stored {}; first difference at index {:?}",
                log.name,
                got.len(),
                want.len(),
                first_diff
            ));
        }
    }
}

/// (e): RECEIPT seqs per (channel, user, kind) and HELLO watermarks per
/// channel never go back as one device sees them.
pub(super) fn check_watermarks(f: &mut Findings, log: &ClientLog) {
    let mut last: HashMap<(String, String, String), i64> = HashMap::new();
    for (channel, user, kind, seq) in &log.receipts {
        let k = (channel.clone(), user.clone(), format!("{kind:?}"));
        let prev = last.entry(k).or_insert(0);
        if *seq < *prev {
            f.violation(format!(
                "(e) {} saw {user}'s {kind:?} watermark in {channel} go back from {prev} to {seq}",
                log.name
            ));
        }
        *prev = (*prev).max(*seq);
    }
    let mut marks: HashMap<&str, (i64, i64)> = HashMap::new();
    for hello in &log.hellos {
        for (channel, &(delivered, read)) in hello {
            let prev = marks.entry(channel.as_str()).or_insert((0, 0));
            if delivered < prev.0 || read < prev.1 {
                f.violation(format!(
                    "(e) {}: HELLO watermarks in {channel} went back from {prev:?} to {:?}",
                    log.name,
                    (delivered, read)
                ));
            }
            if read > delivered {
                f.violation(format!(
                    "(e) {}: readSeq {read} above deliveredSeq {delivered}",
                    log.name
                ));
            }
            *prev = (delivered.max(prev.0), read.max(prev.1));
        }
    }
}
