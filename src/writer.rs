//! The send path after validation: group commit, ACK, fan-out.
//!
//! Sends are routed to one of `writer_shards` writer tasks by a hash of their
//! channel id, so every send of a channel goes through the same task, in the
//! order the sessions submitted them. A writer takes the first queued send and
//! whatever else is already waiting (up to `max_batch`; no artificial delay
//! when idle), stores them in one transaction with one durable commit
//! ([`crate::store::Store::write_batch`]), and only then, send by send in
//! batch order:
//! 1. queues MSG_ACK (or the ERROR) to the sending session,
//! 2. fans the message, if new, out as MSG_RECV to the channel's members
//!    (with NATS: publishes it and hands it to the channel's sequencer, see
//!    [`crate::cluster`]);
//!
//! and last signals each session that its send is finished.
//!
//! Because a channel's batches are committed and fanned out by one task, every
//! session receives a channel's MSG_RECV in `seq` order.
//!
//! Every send is answered within the store's timeout (`db_timeout_ms`) of the
//! moment its frame was read, however the database fails: a send that already
//! waited that long in the queue is refused with `unavailable` without touching
//! the database, and a batch (its deadlock retries included) is abandoned at the
//! deadline of its oldest send ([`Store::write_batch_by`]). `unavailable` means
//! the batch's `COMMIT` was never sent, so nothing was stored; when the
//! connection failed or the deadline passed with the `COMMIT` in flight the
//! outcome is unknown and the sends get `internal` instead (also retryable: a
//! retry with the same `clientMsgId` gets the original ACK if it was stored).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio_util::task::TaskTracker;

use crate::cluster::Cluster;
use crate::fanout::{Hub, SessionHandle};
use crate::ids::{now_ms, ChannelId, UserId};
use crate::protocol::{ErrorCode, ErrorFrame, ServerFrame};
use crate::store::{BatchOutcome, NewMessage, SendOutcome, Store, StoreError};
use crate::telemetry;

/// Attempts of a batch that lost a deadlock before its sends get `internal`.
const RETRIES: usize = 3;

/// Sends waiting per writer before submitters wait (backpressure to sessions).
const QUEUE: usize = 4096;

/// The ERROR message when the batch's commit was never sent.
const NOT_STORED: &str = "the message was not stored; retry";
/// The ERROR message (`internal`) when the commit was in flight as the database failed.
const IN_DOUBT: &str =
    "the database failed while storing the message; it may have been stored: retry with the same clientMsgId";

/// One send on its way to the store.
#[derive(Debug)]
pub struct SendJob {
    /// The validated message.
    pub message: NewMessage,
    /// The sending session: gets the ACK, and is skipped by the fan-out.
    pub session: SessionHandle,
    /// When the frame was read, for the send-to-ACK latency.
    pub received: Instant,
    /// Completed after the ACK (or ERROR) was queued and the fan-out done.
    pub done: oneshot::Sender<()>,
}

/// Handle to the writer tasks. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Writers {
    shards: Arc<[mpsc::Sender<SendJob>]>,
}

/// The writers have stopped (shutdown).
#[derive(Debug, thiserror::Error)]
#[error("the writers have stopped")]
pub struct WritersStopped(pub SendJob);

impl Writers {
    /// Starts `shards` writer tasks on `tracker`. They stop when every
    /// [`Writers`] clone is dropped and their queues are empty. New messages
    /// go to `hub`, or through `cluster` when NATS is configured.
    pub fn spawn(
        store: Store,
        hub: Arc<Hub>,
        cluster: Option<Cluster>,
        shards: usize,
        max_batch: usize,
        tracker: &TaskTracker,
    ) -> Self {
        let senders: Vec<_> = (0..shards.max(1))
            .map(|_| {
                let (tx, rx) = mpsc::channel(QUEUE);
                let fanout = Fanout {
                    hub: hub.clone(),
                    cluster: cluster.clone(),
                };
                tracker.spawn(run_writer(rx, store.clone(), fanout, max_batch.max(1)));
                tx
            })
            .collect();
        Self { shards: senders.into() }
    }

    /// Queues a send on its channel's writer, waiting while that queue is full.
    ///
    /// # Errors
    /// [`WritersStopped`] with the job when the writers are gone.
    pub async fn submit(&self, job: SendJob) -> Result<(), WritersStopped> {
        let mut hasher = DefaultHasher::new();
        job.message.channel_id.hash(&mut hasher);
        let shard = (hasher.finish() % self.shards.len() as u64) as usize;
        self.shards[shard].send(job).await.map_err(|e| WritersStopped(e.0))
    }
}

/// Where a writer hands its new messages.
struct Fanout {
    hub: Arc<Hub>,
    cluster: Option<Cluster>,
}

impl Fanout {
    /// Answers each send of a committed batch in batch order, and fans each
    /// new message out right after its own ACK. Interleaving keeps a
    /// session's view of a channel in seq order when it both sends and
    /// receives in one batch: its ACK for seq n never arrives before the
    /// MSG_RECV of seq n-1, which a client would take for a gap.
    fn committed(&self, jobs: &[SendJob], batch: &BatchOutcome) {
        // The member list of each channel of the batch, found by channel id;
        // with NATS, one shared copy per channel.
        let members: HashMap<&ChannelId, &[UserId]> = batch
            .members
            .iter()
            .map(|(channel, members)| (channel, members.as_slice()))
            .collect();
        let shared: HashMap<&ChannelId, Arc<[UserId]>> = match self.cluster {
            Some(_) => members
                .iter()
                .map(|(&channel, &list)| (channel, Arc::from(list)))
                .collect(),
            None => HashMap::new(),
        };
        for (job, outcome) in jobs.iter().zip(&batch.outcomes) {
            acknowledge(job, outcome);
            let SendOutcome::Stored(message) = outcome else {
                continue;
            };
            match &self.cluster {
                None => {
                    let list = members.get(&message.channel_id).copied().unwrap_or_default();
                    self.hub.publish_message(message, list, &job.session.id);
                }
                Some(cluster) => {
                    let list = shared
                        .get(&message.channel_id)
                        .cloned()
                        .unwrap_or_else(|| Arc::from(Vec::new()));
                    cluster.committed(message, &list, &job.session.id);
                }
            }
        }
    }
}

async fn run_writer(mut rx: mpsc::Receiver<SendJob>, store: Store, fanout: Fanout, max_batch: usize) {
    let mut jobs = Vec::with_capacity(max_batch);
    while rx.recv_many(&mut jobs, max_batch).await > 0 {
        // Sends whose answer is already due (they waited in the queue behind
        // a stalled database) are refused without another attempt.
        let timeout = store.timeout();
        let started = Instant::now();
        let due = |job: &SendJob| started.duration_since(job.received) >= timeout;
        if jobs.iter().any(due) {
            let (late, ready): (Vec<_>, Vec<_>) = jobs.drain(..).partition(due);
            jobs.extend(ready);
            for job in late {
                refuse(&job, ErrorCode::Unavailable, NOT_STORED);
                let _ = job.done.send(());
            }
        }
        let Some(oldest) = jobs.iter().map(|j| j.received).min() else {
            continue;
        };
        let deadline = tokio::time::Instant::from_std(oldest + timeout);
        telemetry::batch(jobs.len());
        let sends: Vec<NewMessage> = jobs.iter().map(|j| j.message.clone()).collect();
        let mut result = store.write_batch_by(&sends, now_ms(), deadline).await;
        for attempt in 1..RETRIES {
            if !matches!(result, Err(StoreError::Retry(_))) {
                break;
            }
            let pause = Duration::from_millis(5 * attempt as u64);
            if tokio::time::Instant::now() + pause >= deadline {
                break;
            }
            tokio::time::sleep(pause).await;
            result = store.write_batch_by(&sends, now_ms(), deadline).await;
        }
        match result {
            Ok(batch) => fanout.committed(&jobs, &batch),
            Err(error) => {
                let code = error.wire_code();
                let message = if matches!(error, StoreError::InDoubt(_)) {
                    tracing::error!(error = %error, cause = ?std::error::Error::source(&error), sends = jobs.len(), "batch outcome unknown");
                    IN_DOUBT
                } else {
                    tracing::error!(error = %error, cause = ?std::error::Error::source(&error), sends = jobs.len(), "batch not stored");
                    NOT_STORED
                };
                for job in &jobs {
                    refuse(job, code, message);
                }
            }
        }
        for job in jobs.drain(..) {
            let _ = job.done.send(());
        }
    }
}

fn acknowledge(job: &SendJob, outcome: &SendOutcome) {
    let (message, duplicate) = match outcome {
        SendOutcome::Stored(m) => (m, false),
        SendOutcome::Duplicate(m) => (m, true),
        SendOutcome::Conflict => {
            return refuse(
                job,
                ErrorCode::IdempotencyConflict,
                crate::store::KEY_USED_FOR_ANOTHER_MESSAGE,
            )
        }
        SendOutcome::Forbidden => return refuse(job, ErrorCode::Forbidden, "not a member of this channel"),
    };
    job.session.send(&ServerFrame::MsgAck(message.to_ack(duplicate)));
    let result = if duplicate { "duplicate" } else { "stored" };
    telemetry::send_result(result, "", Some(job.received.elapsed()));
}

fn refuse(job: &SendJob, code: ErrorCode, message: &str) {
    let mut frame = ErrorFrame::new(code, message);
    frame.client_msg_id = Some(job.message.client_msg_id.as_str().to_owned());
    frame.channel_id = Some(job.message.channel_id.as_str().to_owned());
    job.session.send(&ServerFrame::Error(frame));
    telemetry::send_result("refused", code.as_str(), None);
}
