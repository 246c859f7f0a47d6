//! The feed's tasks: one scheduler, and one driver per channel with
//! entries past its cursor (at most `webhook_concurrency` sending at once).
//!
//! The scheduler renews the leases ([`super::lease`]), and starts a
//! channel's driver when the channel grew on this node ([`super::Signal`]),
//! or when its scan of the cursors (every [`SCAN_EVERY`]: entries committed
//! by other nodes, and what was left when a node stopped) finds the channel
//! behind; only for channels whose bucket this node holds. It also sets the
//! lag gauges from that scan.
//!
//! A driver reads the cursor, then loops: read entries after it (256 at a
//! time), POST them `webhook_batch_max` at a time until a 2xx (retrying
//! with backoff, for at most `webhook_max_retry_secs` from the first
//! failure; then they are skipped, logged and counted), and move the cursor
//! from the value stored to the last seq answered 2xx (a compare-and-set: if
//! an operator or another node moved it meanwhile, go on from what is
//! stored) after every 2xx, before the next request. It ends when nothing is left, when this node loses the
//! channel's lease, or at shutdown. A crash between a 2xx and the cursor's
//! write sends those entries again: at least once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::body;
use super::lease::{self, Leases};
use super::sender::{self, Sender, SenderError};
use super::settings::Settings;
use super::signal::Signal;
use crate::ids::{now_ms, ChannelId};
use crate::store::Store;
use crate::telemetry;

/// How often the scheduler scans the cursors of every channel.
pub const SCAN_EVERY: Duration = Duration::from_secs(1);

/// A pause after a database error in a driver.
const AFTER_STORE_ERROR: Duration = Duration::from_secs(1);

/// The running feed. Dropping it does not stop it: call [`Feed::shutdown`].
#[derive(Debug)]
pub struct Feed {
    signal: Signal,
    stop: CancellationToken,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    leases: Arc<Leases>,
    store: Store,
    /// Posts flags (§17), one task per flag ([`Feed::post_flag`]).
    flags: Sender,
    max_retry: Duration,
}

struct Shared {
    store: Store,
    sender: Sender,
    settings: Settings,
    leases: Arc<Leases>,
    sending: Semaphore,
}

impl Feed {
    /// Starts the feed over `store` with `settings` (on the current runtime).
    ///
    /// # Errors
    /// [`SenderError`] when `webhook_url` does not parse or the HTTP client
    /// cannot be built.
    pub fn start(settings: Settings, store: Store) -> Result<Self, SenderError> {
        let sender = Sender::new(&settings.url, &settings.secret, settings.timeout)?;
        telemetry::feature_on(telemetry::catalog::When::Webhooks);
        let leases = Arc::new(Leases::new());
        let signal = Signal::default();
        let stop = CancellationToken::new();
        let flags = sender.clone();
        let max_retry = settings.max_retry;
        let shared = Arc::new(Shared {
            store: store.clone(),
            sender,
            sending: Semaphore::new(settings.concurrency),
            settings,
            leases: leases.clone(),
        });
        let task = tokio::spawn(schedule(shared, signal.clone(), stop.clone()));
        Ok(Self {
            signal,
            stop,
            task: Mutex::new(Some(task)),
            leases,
            store,
            flags,
            max_retry,
        })
    }

    /// POSTs a flag's `{"type":"flag",…}` on a task of its own, retried
    /// with the feed's backoff for up to `webhook_max_retry_secs` until a
    /// 2xx; given up at shutdown. `render` makes the body before each
    /// attempt from what is stored then (the message's text as now, so a
    /// delete or an erasure made meanwhile is never sent); `None` (the flag
    /// is gone: its reporter was erased) ends it unsent, and a render that
    /// fails counts as a failed attempt. Not durable: a flag whose POST has
    /// not succeeded before the node stops is not sent again (it stays in
    /// `GET /v1/flags`).
    pub fn post_flag<F, Fut>(&self, render: F)
    where
        F: Fn() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<Option<Vec<u8>>, crate::store::StoreError>> + Send,
    {
        let sender = self.flags.clone();
        let stop = self.stop.clone();
        let max_retry = self.max_retry;
        tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            let mut failures = 0;
            loop {
                let result = match render().await {
                    Ok(Some(body)) => tokio::select! {
                        () = stop.cancelled() => return,
                        result = sender.post(body) => result,
                    },
                    Ok(None) => return,
                    Err(error) => {
                        tracing::warn!(%error, "webhook: a flag's message not read again");
                        Err(sender::Failure::Store)
                    }
                };
                let Err(failure) = result else { return };
                failures += 1;
                let spent = started.elapsed();
                if spent >= max_retry {
                    tracing::warn!(failure = %failure.label(), "webhook: a flag was not delivered; given up");
                    return;
                }
                let wait = sender::backoff(failures).min(max_retry - spent);
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(wait) => {}
                }
            }
        });
    }

    /// The commit path's handle ([`Signal::grew`]).
    pub fn signal(&self) -> Signal {
        self.signal.clone()
    }

    /// Stops every task (a request in flight is abandoned: its entries are
    /// sent again by whoever drives the channel next) and gives the leases
    /// back. Waits at most 2 s.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
        self.leases.release(&self.store).await;
    }
}

/// The scheduler; see the module documentation.
async fn schedule(shared: Arc<Shared>, signal: Signal, stop: CancellationToken) {
    let drivers = TaskTracker::new();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<ChannelId>();
    let mut active: HashSet<ChannelId> = HashSet::new();
    // Channels that grew while their driver ran: started again when it ends.
    let mut again: HashSet<ChannelId> = HashSet::new();
    let mut renew = tokio::time::interval(lease::RENEW_EVERY);
    let mut scan = tokio::time::interval(SCAN_EVERY);
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    scan.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let start = |channel: ChannelId, active: &mut HashSet<ChannelId>, again: &mut HashSet<ChannelId>| {
        if !shared.leases.holds(lease::bucket(&channel)) {
            return;
        }
        if active.contains(&channel) {
            again.insert(channel);
            return;
        }
        active.insert(channel.clone());
        let done = done_tx.clone();
        let shared = shared.clone();
        let stop = stop.clone();
        drivers.spawn(async move {
            drive(&shared, &channel, &stop).await;
            let _ = done.send(channel);
        });
    };
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            _ = renew.tick() => shared.leases.renew(&shared.store).await,
            Some(channel) = done_rx.recv() => {
                active.remove(&channel);
                if again.remove(&channel) {
                    start(channel, &mut active, &mut again);
                }
            }
            _ = signal.wait() => {
                for channel in signal.take() {
                    start(channel, &mut active, &mut again);
                }
            }
            _ = scan.tick() => match shared.store.webhook_backlog().await {
                Ok(backlog) => {
                    let now = now_ms();
                    let (mut entries, mut oldest) = (0i64, None::<i64>);
                    for row in backlog {
                        if !shared.leases.holds(lease::bucket(&row.channel_id)) {
                            continue;
                        }
                        entries += row.last_seq - row.delivered_seq;
                        if let Some(ts) = row.first_ts {
                            oldest = Some(oldest.map_or(ts, |o: i64| o.min(ts)));
                        }
                        if !active.contains(&row.channel_id) {
                            start(row.channel_id, &mut active, &mut again);
                        }
                    }
                    let seconds = oldest.map_or(0.0, |ts| (now - ts).max(0) as f64 / 1000.0);
                    telemetry::webhook_lag(entries, seconds);
                }
                Err(error) => tracing::warn!(%error, "webhook backlog not read"),
            },
        }
    }
    drivers.close();
    let _ = tokio::time::timeout(Duration::from_secs(1), drivers.wait()).await;
}

/// What became of a batch of entries.
enum Sent {
    /// A 2xx.
    Delivered,
    /// Retried for `webhook_max_retry_secs` without a 2xx: skipped.
    Skipped,
    /// Shutdown, or the lease is gone: the cursor stays.
    Stopped,
}

/// Entries read ahead per database read (at least `webhook_batch_max`).
const READ_AHEAD: u32 = 256;

/// A driver's cursor: what is stored, and what has been answered 2xx
/// (written after every 2xx, before the next request: so a crash repeats
/// at most the last request, and a receiver never sees a seq below one it
/// already got, but for that repeat).
struct Cursor {
    stored: i64,
    sent: i64,
}

impl Cursor {
    /// Writes `sent` (compare-and-set from `stored`). When the stored cursor
    /// was moved by someone else (an operator's replay, another node) or the
    /// write's outcome is unknown, goes on from what is stored, and returns
    /// false (entries read ahead are to be dropped). `Err` when even the
    /// read fails.
    async fn write(&mut self, store: &Store, channel: &ChannelId) -> Result<bool, crate::store::StoreError> {
        if self.sent == self.stored {
            return Ok(true);
        }
        if let Ok(true) = store
            .move_webhook_cursor(channel, self.stored, self.sent, now_ms())
            .await
        {
            self.stored = self.sent;
            return Ok(true);
        }
        let stored = store.webhook_cursor(channel).await?;
        self.stored = stored;
        self.sent = stored;
        Ok(false)
    }
}

/// One channel's driver; see the module documentation.
async fn drive(shared: &Shared, channel: &ChannelId, stop: &CancellationToken) {
    let bucket = lease::bucket(channel);
    let Ok(_permit) = shared.sending.acquire().await else {
        return;
    };
    let stored = match shared.store.webhook_cursor(channel).await {
        Ok(cursor) => cursor,
        Err(error) => {
            tracing::warn!(%error, channel = %channel.as_str(), "webhook cursor not read");
            return;
        }
    };
    let mut cursor = Cursor { stored, sent: stored };
    let batch = shared.settings.batch_max as usize;
    let mut ahead: std::collections::VecDeque<crate::store::WebhookEntry> = std::collections::VecDeque::new();
    loop {
        let stopping = stop.is_cancelled() || !shared.leases.holds(bucket);
        match cursor.write(&shared.store, channel).await {
            Ok(true) => {}
            Ok(false) => ahead.clear(),
            Err(error) => {
                tracing::warn!(%error, channel = %channel.as_str(), "webhook cursor not read");
                return;
            }
        }
        if stopping {
            return;
        }
        if ahead.is_empty() {
            let limit = READ_AHEAD.max(shared.settings.batch_max);
            match shared.store.webhook_entries_after(channel, cursor.sent, limit).await {
                Ok(entries) if entries.is_empty() => return,
                Ok(entries) => ahead.extend(entries),
                Err(error) => {
                    tracing::warn!(%error, channel = %channel.as_str(), "webhook entries not read");
                    if !pause(AFTER_STORE_ERROR, stop).await {
                        return;
                    }
                    continue;
                }
            }
        }
        let entries: Vec<_> = ahead.drain(..batch.min(ahead.len())).collect();
        let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
            continue;
        };
        let what = Batch {
            seqs: (first.entry.seq, last.entry.seq),
            count: entries.len(),
        };
        let last = what.seqs.1;
        match send(shared, channel, what, bucket, stop).await {
            Sent::Delivered | Sent::Skipped => cursor.sent = last,
            // The loop's top writes what was sent and returns.
            Sent::Stopped => ahead.clear(),
        }
    }
}

/// One request's worth of entries: which ones (the read ahead copies only
/// say that; [`send`] reads them again for each attempt).
struct Batch {
    /// The first and last seq.
    seqs: (i64, i64),
    count: usize,
}

/// The payload of `batch` as the entries are now: read again right before
/// each attempt, so that text deleted, edited or erased since the entries
/// were read ahead, or since an earlier attempt, is never sent (guarantees 9
/// and 14; a deleted message's body is `""`). `Ok(None)`: none of them is
/// stored any more (the channel was deleted).
async fn render_now(
    shared: &Shared,
    channel: &ChannelId,
    batch: &Batch,
) -> Result<Option<Vec<u8>>, crate::store::StoreError> {
    let (first, last) = batch.seqs;
    let limit = u32::try_from(batch.count).unwrap_or(u32::MAX);
    let mut entries = shared.store.webhook_entries_after(channel, first - 1, limit).await?;
    entries.retain(|e| e.entry.seq <= last);
    if entries.is_empty() {
        return Ok(None);
    }
    Ok(Some(body::render(&entries, shared.settings.batch_max > 1)))
}

/// POSTs `batch` until a 2xx, the retry budget is spent, or the driver must
/// stop; each attempt's payload is read again ([`render_now`]), and a read
/// that fails counts as a failed attempt.
async fn send(shared: &Shared, channel: &ChannelId, batch: Batch, bucket: i32, stop: &CancellationToken) -> Sent {
    let seqs = batch.seqs;
    let count = batch.count;
    let mut first_failure: Option<Instant> = None;
    let mut failures = 0u32;
    loop {
        if stop.is_cancelled() || !shared.leases.holds(bucket) {
            return Sent::Stopped;
        }
        let payload = match render_now(shared, channel, &batch).await {
            Ok(Some(payload)) => Some(payload),
            Ok(None) => return Sent::Skipped,
            Err(error) => {
                tracing::warn!(%error, channel = %channel.as_str(), "webhook entries not read again");
                None
            }
        };
        let result = match payload {
            Some(payload) => tokio::select! {
                _ = stop.cancelled() => return Sent::Stopped,
                result = shared.sender.post(payload) => result,
            },
            None => Err(sender::Failure::Store),
        };
        let failure = match result {
            Ok(()) => {
                telemetry::webhook_delivered(count);
                return Sent::Delivered;
            }
            Err(failure) => failure,
        };
        telemetry::webhook_failure(&failure.label());
        failures += 1;
        let since = *first_failure.get_or_insert_with(Instant::now);
        let spent = since.elapsed();
        if spent >= shared.settings.max_retry {
            tracing::error!(
                channel = %channel.as_str(),
                seq = seqs.0,
                last_seq = seqs.1,
                attempts = failures,
                error = %failure,
                "webhook entries skipped: no 2xx within webhook_max_retry_secs (docs/reliability.md says how to replay them)"
            );
            telemetry::webhook_skipped(count);
            return Sent::Skipped;
        }
        tracing::warn!(channel = %channel.as_str(), seq = seqs.0, attempts = failures, error = %failure, "webhook request failed; retrying");
        let wait = sender::backoff(failures).min(shared.settings.max_retry - spent);
        if !pause(wait, stop).await {
            return Sent::Stopped;
        }
    }
}

/// Sleeps `wait` unless stopped first; returns false when stopped.
async fn pause(wait: Duration, stop: &CancellationToken) -> bool {
    tokio::select! {
        _ = stop.cancelled() => false,
        _ = tokio::time::sleep(wait) => true,
    }
}
