//! The send path after validation: group commit, ACK, fan-out.
//!
//! Sends are routed to one of `writer_shards` writer tasks by a hash of their
//! channel id, so every send of a channel goes through the same task, in the
//! order the sessions submitted them. A writer takes the first queued send and
//! whatever else is already waiting (up to `max_batch`; no artificial delay
//! when idle), stores them in one transaction with one durable commit
//! ([`crate::store::Store::write_batch`]), and only then, in order:
//! 1. queues MSG_ACK (or the ERROR) to each sending session,
//! 2. fans each new message out as MSG_RECV to the channel's members (with
//!    NATS: publishes it and hands it to the channel's sequencer, see
//!    [`crate::cluster`]),
//! 3. signals the session that the send is finished.
//!
//! Because a channel's batches are committed and fanned out by one task, every
//! session receives a channel's MSG_RECV in `seq` order.

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
    /// Fans each message the batch stored out to its channel's members.
    fn stored(&self, jobs: &[SendJob], batch: &BatchOutcome) {
        let stored = jobs
            .iter()
            .zip(&batch.outcomes)
            .filter_map(|(job, outcome)| match outcome {
                SendOutcome::Stored(message) => Some((job, message)),
                _ => None,
            });
        match &self.cluster {
            None => {
                for (job, message) in stored {
                    let members = batch
                        .members
                        .iter()
                        .find(|(channel, _)| channel == &message.channel_id)
                        .map(|(_, members)| members.as_slice())
                        .unwrap_or_default();
                    self.hub.publish_message(message, members, &job.session.id);
                }
            }
            Some(cluster) => {
                // One shared member list per channel of the batch.
                let members: Vec<(&ChannelId, Arc<[UserId]>)> = batch
                    .members
                    .iter()
                    .map(|(channel, members)| (channel, Arc::from(members.as_slice())))
                    .collect();
                let none: Arc<[UserId]> = Arc::from(Vec::new());
                for (job, message) in stored {
                    let members = members
                        .iter()
                        .find(|(channel, _)| *channel == &message.channel_id)
                        .map_or(&none, |(_, members)| members);
                    cluster.committed(message, members, &job.session.id);
                }
            }
        }
    }
}

async fn run_writer(mut rx: mpsc::Receiver<SendJob>, store: Store, fanout: Fanout, max_batch: usize) {
    let mut jobs = Vec::with_capacity(max_batch);
    while rx.recv_many(&mut jobs, max_batch).await > 0 {
        telemetry::batch(jobs.len());
        let sends: Vec<NewMessage> = jobs.iter().map(|j| j.message.clone()).collect();
        let mut result = store.write_batch(&sends, now_ms()).await;
        for attempt in 1..RETRIES {
            if !matches!(result, Err(StoreError::Retry(_))) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5 * attempt as u64)).await;
            result = store.write_batch(&sends, now_ms()).await;
        }
        match result {
            Ok(batch) => {
                for (job, outcome) in jobs.iter().zip(&batch.outcomes) {
                    acknowledge(job, outcome);
                }
                fanout.stored(&jobs, &batch);
            }
            Err(error) => {
                let code = error.wire_code();
                tracing::error!(error = %error, cause = ?std::error::Error::source(&error), sends = jobs.len(), "batch not stored");
                for job in &jobs {
                    refuse(job, code, "the message was not stored; retry");
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
                "this clientMsgId was already used for another message",
            )
        }
        SendOutcome::Forbidden => return refuse(job, ErrorCode::Forbidden, "not a member of this channel"),
    };
    job.session.send(&ServerFrame::MsgAck {
        client_msg_id: message.client_msg_id.as_str().to_owned(),
        message_id: message.message_id,
        channel_id: message.channel_id.as_str().to_owned(),
        seq: message.seq,
        ts: message.ts,
        duplicate,
    });
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
