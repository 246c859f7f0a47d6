//! Group commit: the send path after validation, up to the ACK and the
//! fan-out.
//!
//! Sends are routed to one of `writer_shards` commit tasks by a hash of their
//! channel id, so every send of a channel goes through the same task, in the
//! order the sessions submitted them. A commit task takes the first queued send and
//! whatever else is already waiting (up to `max_batch`; no artificial delay
//! when idle), stores them in one transaction with one durable commit
//! ([`crate::store::Store::write_batch`]), and only then, send by send in
//! batch order:
//! 1. answers it ([`answer::SendAnswer`]): a session gets its MSG_ACK or
//!    ERROR queued at once; an HTTP caller gets the typed answer when the
//!    batch is done,
//! 2. fans the message, if new, out as MSG_RECV to the channel's members
//!    ([`Delivery::entry_committed`]), and ends the sender's typing in that
//!    channel ([`Delivery::message_sent`]);
//!
//! and last signals each session that its send is finished. With webhooks
//! on, the batch also stores each new entry's `offlineMembers` (asked of
//! [`Delivery`] under the channel's lock) and, after the commit, tells the
//! webhook feed which channels grew ([`webhook::Signal`]): one lock and a
//! wake-up, never a wait; the feed's HTTP requests run in tasks of their own.
//!
//! Because a channel's batches are committed and fanned out by one task, every
//! session receives a channel's MSG_RECV in `seq` order.
//!
//! A membership change of a channel is a job of the same task
//! ([`membership`]): the sends queued before it are committed and fanned out
//! first, then it is stored and announced, then the sends queued after it
//! go on, so its frames stand between the right MSG_RECV.
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

use crate::delivery::Delivery;
use crate::ids::{now_ms, ChannelId, UserId};
use crate::outbound::{SessionHandle, SessionId};
use crate::protocol::ErrorCode;
use crate::store::{BatchOutcome, EntryKind, NewEntry, Store, StoreError};
use crate::telemetry;
use crate::view;
use crate::webhook;

pub mod answer;
pub mod membership;

use answer::{Echo, SendAnswer};
pub use membership::{MembershipError, MembershipJob};

/// Attempts of a batch that lost a deadlock before its sends get `internal`.
const RETRIES: usize = 3;

/// Sends waiting per commit task before submitters wait (backpressure to sessions).
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
    pub message: NewEntry,
    /// Who gets the answer.
    pub reply_to: ReplyTo,
    /// When the frame (or request) was read, for the send-to-ACK latency.
    pub received: Instant,
}

/// Who gets a send's answer.
#[derive(Debug)]
pub enum ReplyTo {
    /// A WebSocket session: its MSG_ACK or ERROR is queued on it as soon as
    /// the batch is decided, in batch order (before the fan-out of later
    /// sends), and the fan-out skips it (it has the ACK); `done` fires once
    /// the whole batch is answered and fanned out.
    Session {
        /// The sending session.
        session: SessionHandle,
        /// Completed after the answer was queued and the fan-out done.
        done: oneshot::Sender<()>,
    },
    /// An HTTP request: gets the typed answer once the whole batch is
    /// answered and fanned out.
    Caller(oneshot::Sender<SendAnswer>),
}

impl SendJob {
    /// Gives `answer` to a session at once (and counts it); a caller's
    /// answer is counted now and handed over by [`SendJob::finish`].
    fn answer(&self, answer: &SendAnswer) {
        match &self.reply_to {
            ReplyTo::Session { session, .. } => {
                answer::to_session(session, answer, Echo::of(&self.message), Some(self.received))
            }
            ReplyTo::Caller(_) => answer::count(answer, Some(self.received)),
        }
    }

    /// The session the fan-out skips: the one whose copy was stored.
    fn except(&self) -> Option<&SessionId> {
        match &self.reply_to {
            ReplyTo::Session { session, .. } => Some(&session.id),
            ReplyTo::Caller(_) => None,
        }
    }

    /// The job is over: a session's `done` fires, a caller gets `answer`.
    fn finish(self, answer: SendAnswer) {
        match self.reply_to {
            ReplyTo::Session { done, .. } => {
                let _ = done.send(());
            }
            ReplyTo::Caller(caller) => {
                let _ = caller.send(answer);
            }
        }
    }

    /// Answers and finishes the job with `answer` (a refusal before the
    /// database was asked).
    fn answer_and_finish(self, answer: SendAnswer) {
        self.answer(&answer);
        self.finish(answer);
    }
}

/// What a commit task is asked to do, in its channel's commit order.
#[derive(Debug)]
// Sends are nearly every job: boxing them would add an allocation per send
// to spare the rare membership job some bytes of its slot in the queue.
#[allow(clippy::large_enum_variant)]
enum Job {
    /// Store a send (batched with the sends queued next to it).
    Send(SendJob),
    /// Change a membership: after the sends queued before it are committed
    /// and fanned out, before those queued after it.
    Membership(MembershipJob),
}

/// Handle to the commit tasks. Cheap to clone.
#[derive(Debug, Clone)]
pub struct GroupCommit {
    shards: Arc<[mpsc::Sender<Job>]>,
}

/// The commit tasks have stopped (shutdown).
#[derive(Debug, thiserror::Error)]
#[error("the commit tasks have stopped")]
pub struct CommitStopped(pub SendJob);

impl GroupCommit {
    /// Starts `shards` commit tasks on `tracker`, each storing up to
    /// `max_batch` sends per transaction. They stop when every
    /// [`GroupCommit`] clone is dropped and their queues are empty. New
    /// messages are fanned out through `delivery`; with `webhook` (webhooks
    /// on) they are stored with their `offlineMembers` and signalled to the feed.
    pub fn spawn(
        store: Store,
        delivery: Delivery,
        shards: usize,
        max_batch: usize,
        webhook: Option<webhook::Signal>,
        tracker: &TaskTracker,
    ) -> Self {
        let senders: Vec<_> = (0..shards.max(1))
            .map(|_| {
                let (tx, rx) = mpsc::channel(QUEUE);
                tracker.spawn(run_commits(
                    rx,
                    store.clone(),
                    delivery.clone(),
                    max_batch.max(1),
                    webhook.clone(),
                ));
                tx
            })
            .collect();
        Self { shards: senders.into() }
    }

    /// Queues a send on its channel's commit task, waiting while that queue
    /// is full.
    ///
    /// # Errors
    /// [`CommitStopped`] with the job when the commit tasks are gone.
    pub async fn submit(&self, job: SendJob) -> Result<(), CommitStopped> {
        let shard = self.shard(&job.message.channel_id);
        match shard.send(Job::Send(job)).await {
            Err(mpsc::error::SendError(Job::Send(job))) => Err(CommitStopped(job)),
            _ => Ok(()),
        }
    }

    /// Changes a membership on its channel's commit task (§13.3): after the
    /// sends of that channel queued before it are committed and fanned out,
    /// it is stored under the channel lock and announced (`CHANNEL_ADDED`,
    /// `MEMBER`, `CHANNEL_REMOVED`, [`Delivery::membership_committed`])
    /// before any later send of the channel is fanned out.
    ///
    /// # Errors
    /// The store's refusal or failure ([`crate::store::Store::change_membership`]),
    /// or [`MembershipError::Stopped`] at shutdown.
    pub async fn change_membership(
        &self,
        channel: &ChannelId,
        user: &UserId,
        change: crate::store::MembershipChange,
        by: Option<&UserId>,
    ) -> Result<crate::store::MembershipOutcome, MembershipError> {
        let (reply, answer) = oneshot::channel();
        let job = MembershipJob {
            channel: channel.clone(),
            user: user.clone(),
            change,
            by: by.cloned(),
            reply,
        };
        self.shard(channel)
            .send(Job::Membership(job))
            .await
            .map_err(|_| MembershipError::Stopped)?;
        Ok(answer.await.map_err(|_| MembershipError::Stopped)??)
    }

    /// The commit task of `channel`.
    fn shard(&self, channel: &ChannelId) -> &mpsc::Sender<Job> {
        let mut hasher = DefaultHasher::new();
        channel.hash(&mut hasher);
        &self.shards[(hasher.finish() % self.shards.len() as u64) as usize]
    }
}

/// Answers each send of a committed batch in batch order, and fans each new
/// message out right after its own ACK. Interleaving keeps a session's view
/// of a channel in seq order when it both sends and receives in one batch:
/// its ACK for seq n never arrives before the MSG_RECV of seq n-1, which a
/// client would take for a gap. Returns the answers, in batch order.
fn committed(delivery: &Delivery, jobs: &[SendJob], batch: BatchOutcome) -> Vec<SendAnswer> {
    // The member list of each channel of the batch, found by channel id,
    // shared by every message of that channel.
    let members: HashMap<ChannelId, Arc<[UserId]>> = batch
        .members
        .into_iter()
        .map(|(channel, members)| (channel, Arc::from(members)))
        .collect();
    let nobody: Arc<[UserId]> = Arc::from(Vec::new());
    let mut answers = Vec::with_capacity(jobs.len());
    for (job, outcome) in jobs.iter().zip(batch.outcomes) {
        let answer = SendAnswer::of_outcome(outcome);
        job.answer(&answer);
        if let Some(message) = answer.stored() {
            let list = members.get(&message.channel_id).unwrap_or(&nobody);
            delivery.entry_committed(message, list, job.except());
            // After the fan-out, a `message` entry (not an edit, delete or
            // reaction: §9) ends the sender's typing there, if any (one
            // atomic load when nobody types on this node).
            if message.kind == EntryKind::Message {
                delivery.message_sent(&message.sender_id, &message.channel_id, message.seq);
            }
        }
        answers.push(answer);
    }
    answers
}

async fn run_commits(
    mut rx: mpsc::Receiver<Job>,
    store: Store,
    delivery: Delivery,
    max_batch: usize,
    webhook: Option<webhook::Signal>,
) {
    let task = CommitTask {
        store,
        delivery,
        webhook,
    };
    let mut queued = Vec::with_capacity(max_batch);
    let mut sends = Vec::with_capacity(max_batch);
    while rx.recv_many(&mut queued, max_batch).await > 0 {
        for job in queued.drain(..) {
            match job {
                Job::Send(send) => sends.push(send),
                Job::Membership(change) => {
                    // The sends queued before the change go first.
                    task.commit_sends(&mut sends).await;
                    change.run(&task.store, &task.delivery).await;
                }
            }
        }
        task.commit_sends(&mut sends).await;
    }
}

/// What a commit task works with.
struct CommitTask {
    store: Store,
    delivery: Delivery,
    webhook: Option<webhook::Signal>,
}

impl CommitTask {
    /// Stores `jobs` in one batch, answers and fans them out, and empties it.
    async fn commit_sends(&self, jobs: &mut Vec<SendJob>) {
        let (store, delivery, webhook) = (&self.store, &self.delivery, &self.webhook);
        let offline: Option<&dyn crate::store::OfflineMembers> = webhook.as_ref().map(|_| delivery as _);
        // Sends whose answer is already due (they waited in the queue behind
        // a stalled database) are refused without another attempt.
        let timeout = store.timeout();
        let started = Instant::now();
        let due = |job: &SendJob| started.duration_since(job.received) >= timeout;
        if jobs.iter().any(due) {
            let (late, ready): (Vec<_>, Vec<_>) = jobs.drain(..).partition(due);
            jobs.extend(ready);
            for job in late {
                job.answer_and_finish(SendAnswer::refused(ErrorCode::Unavailable, NOT_STORED));
            }
        }
        let Some(oldest) = jobs.iter().map(|j| j.received).min() else {
            return;
        };
        let deadline = tokio::time::Instant::from_std(oldest + timeout);
        telemetry::batch(jobs.len());
        let sends: Vec<NewEntry> = jobs.iter().map(|j| j.message.clone()).collect();
        let mut result = store.write_batch_with(&sends, now_ms(), deadline, offline).await;
        for attempt in 1..RETRIES {
            if !matches!(result, Err(StoreError::Retry(_))) {
                break;
            }
            let pause = Duration::from_millis(5 * attempt as u64);
            if tokio::time::Instant::now() + pause >= deadline {
                break;
            }
            tokio::time::sleep(pause).await;
            result = store.write_batch_with(&sends, now_ms(), deadline, offline).await;
        }
        let answers = match result {
            Ok(batch) => {
                if let Some(signal) = &webhook {
                    signal.grew(batch.members.iter().map(|(channel, _)| channel));
                }
                committed(delivery, jobs, batch)
            }
            Err(error) => {
                let code = view::wire_code(&error);
                let message = if matches!(error, StoreError::InDoubt(_)) {
                    tracing::error!(error = %error, cause = ?std::error::Error::source(&error), sends = jobs.len(), "batch outcome unknown");
                    IN_DOUBT
                } else {
                    tracing::error!(error = %error, cause = ?std::error::Error::source(&error), sends = jobs.len(), "batch not stored");
                    NOT_STORED
                };
                let answer = SendAnswer::refused(code, message);
                jobs.iter()
                    .map(|job| {
                        job.answer(&answer);
                        answer.clone()
                    })
                    .collect()
            }
        };
        // A job left without an answer (a batch that returned fewer outcomes
        // than it was given) is dropped with the drain: its session's reader
        // or its caller sees its sender dropped.
        for (job, answer) in jobs.drain(..).zip(answers) {
            job.finish(answer);
        }
    }
}
