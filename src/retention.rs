//! The retention sweep (protocol.md §19): every `retention_sweep_secs` it
//! erases the `message` entries older than their channel's retention
//! (`retentionSecs`, else `retention_secs`) as a delete would, but with no
//! new entry (`store/retention.rs` does one bounded batch, one transaction
//! under the channel's lock). The attachment objects the batches queue are
//! removed by the attachment sweeper (`attachments::Attachments`).
//!
//! Every node runs it: two nodes sweeping the same channel take its lock in
//! turn, and the second finds nothing left to erase.
//!
//! Metrics (`telemetry.rs`): `chatd_retention_erased_total` (messages
//! erased), `chatd_retention_channels_left` (channels the running sweep has
//! still to do: its progress), `chatd_retention_sweep_seconds` (how long a
//! sweep took) and `chatd_retention_last_complete_seconds` (unix time at
//! which the last sweep that finished without an error started: every
//! message that had expired by then is erased, so `time() -` it is the
//! sweep's lag).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::ids::ChannelId;
use crate::store::{Store, StoreError};
use crate::telemetry;

/// Channels read per page of the list of channels to sweep.
const CHANNELS_PER_PAGE: u32 = 500;

/// What one sweep did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SweepReport {
    /// Channels looked at.
    pub channels: u64,
    /// Transactions run.
    pub batches: u64,
    /// `message` entries erased.
    pub erased: u64,
}

/// One whole sweep at `now_ms` (ms since the Unix epoch) with the server's
/// retention `global_secs` (0: forever, unless a channel says otherwise):
/// every channel with a retention in force, batch after batch until none
/// is left expired. The task runs it every `retention_sweep_secs`; tests
/// call it directly, with a `now_ms` of their choosing.
///
/// # Errors
/// The first batch's error; the batches before it are kept.
pub async fn sweep(store: &Store, global_secs: u64, now_ms: i64) -> Result<SweepReport, StoreError> {
    let global_secs = i64::try_from(global_secs).unwrap_or(i64::MAX);
    let mut report = SweepReport::default();
    let mut after: Option<ChannelId> = None;
    loop {
        let channels = store
            .channels_to_sweep(global_secs, after.as_ref(), CHANNELS_PER_PAGE)
            .await?;
        let Some(last) = channels.last().cloned() else {
            telemetry::retention_channels_left(0);
            return Ok(report);
        };
        for (done, channel) in channels.iter().enumerate() {
            telemetry::retention_channels_left(channels.len() - done);
            report.channels += 1;
            loop {
                let batch = store.sweep_channel_batch(channel, global_secs, now_ms).await?;
                report.batches += 1;
                report.erased += batch.erased;
                telemetry::retention_erased(batch.erased);
                if !batch.more {
                    break;
                }
            }
        }
        after = Some(last);
    }
}

/// How long after start a node sweeps first: soon, so a node restarted
/// more often than `retention_sweep_secs` (an hour by default) still
/// sweeps, but not in the rush of the start itself.
pub const FIRST_SWEEP_AFTER: Duration = Duration::from_secs(60);

/// The wait before sweep number `round` (0 the first) of a node that sweeps
/// `every`: the first after [`FIRST_SWEEP_AFTER`] (or `every`, if shorter).
pub fn wait_before_sweep(round: u64, every: Duration) -> Duration {
    if round == 0 {
        FIRST_SWEEP_AFTER.min(every)
    } else {
        every
    }
}

/// Runs [`sweep`] until `stop`: first [`FIRST_SWEEP_AFTER`] after the
/// start, then every `retention_sweep_secs`.
pub fn spawn(store: Store, config: &Config, stop: CancellationToken) {
    let global_secs = config.retention_secs;
    let every = Duration::from_secs(config.retention_sweep_secs.max(1));
    tokio::spawn(async move {
        for round in 0u64.. {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait_before_sweep(round, every)) => {}
            }
            let started = std::time::SystemTime::now();
            let now_ms = crate::ids::now_ms();
            let clock = tokio::time::Instant::now();
            match sweep(&store, global_secs, now_ms).await {
                Ok(report) => {
                    telemetry::retention_sweep_done(clock.elapsed(), started);
                    if report.erased > 0 {
                        tracing::info!(erased = report.erased, channels = report.channels, "retention sweep");
                    }
                }
                Err(error) => tracing::warn!(%error, "the retention sweep failed; the next one goes on"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{wait_before_sweep, FIRST_SWEEP_AFTER};

    /// Found by a hostile run (breaker 8): the first sweep waited a whole
    /// `retention_sweep_secs` (an hour by default) after start, so a node
    /// restarted more often never swept.
    #[test]
    fn the_first_sweep_comes_within_a_minute_of_start_then_every_period() {
        let hour = Duration::from_secs(3_600);
        assert_eq!(wait_before_sweep(0, hour), FIRST_SWEEP_AFTER);
        assert!(FIRST_SWEEP_AFTER <= Duration::from_secs(60));
        assert_eq!(wait_before_sweep(1, hour), hour);
        assert_eq!(wait_before_sweep(7, hour), hour);
        let short = Duration::from_secs(5);
        assert_eq!(wait_before_sweep(0, short), short, "never later than a period");
    }
}
