//! Threads (protocol.md §14): the replies of one root as a store with a
//! channel's guarantees: each reply once, in `seq` order, with its folded
//! state (edits, deletes, reactions, the quoted message's preview), and the
//! user's replies not yet ACKed beside them.
//!
//! A thread's replies are entries of the channel's log, so the client keeps
//! them where it keeps every message: in the channel's folded state
//! ([`crate::ChannelMessages`]), which the channel's gapless, exactly-once
//! delivery keeps current. Opening a thread reads its newest replies
//! (`SYNC` with `threadId` and `latest`) and folds the ones the client does
//! not hold into the channel's state, each as of the read's `lastSeq`; the
//! channel's later entries then fold onto them like onto any message. A read
//! older than what the channel had already delivered when its answer came
//! (a reply's edit delivered in between would be lost) is made again.
//!
//! A reply this client sent shows as pending until its ACK's message is
//! delivered in the channel's order: right after the ACK, or, when the ACK
//! came above a gap the client is still filling, once the gap is filled
//! (until then it is pending with its `seq`, never in `replies` too).

use std::collections::HashMap;

use tokio::sync::oneshot;

use crate::log::MessageState;

/// One thread as this client holds it (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// The channel.
    pub channel_id: String,
    /// The root's message id.
    pub root_id: uuid::Uuid,
    /// The replies read or received since the oldest read page, in `seq`
    /// order, each once, with their current state.
    pub replies: Vec<MessageState>,
    /// This client's replies in this thread not yet delivered: those ACKed
    /// above a gap (in `seq` order), then those not yet ACKed (in the order
    /// they were sent). Each moves to `replies` when the channel delivers
    /// it in order, and is then no longer here.
    pub pending: Vec<PendingReply>,
    /// Whether older replies than the first of `replies` can be read
    /// ([`crate::Client::load_older_replies`]).
    pub has_older: bool,
}

/// A reply handed to the client and not yet delivered: not yet ACKed, or
/// ACKed above a gap of the channel's log the client is still filling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingReply {
    /// Its idempotency key.
    pub client_msg_id: String,
    /// Once ACKed: its message id (`None` before the ACK).
    pub message_id: Option<uuid::Uuid>,
    /// Once ACKed: its position in the channel (`None` before the ACK).
    pub seq: Option<i64>,
    /// Its text.
    pub body: String,
    /// The message it quotes, if any.
    pub reply_to: Option<uuid::Uuid>,
    /// Frames sent for it so far (0: not sent yet, e.g. while offline).
    pub attempts: u32,
}

/// A thread's reads, kept by the client's task per (channel, root); `E`
/// is what a refused read tells its callers (the client's `SendError`).
#[derive(Debug)]
pub(crate) struct ThreadReads<E> {
    threads: HashMap<(String, uuid::Uuid), OpenThread<E>>,
}

impl<E> Default for ThreadReads<E> {
    fn default() -> Self {
        Self {
            threads: HashMap::new(),
        }
    }
}

/// What the task knows of one opened thread.
#[derive(Debug)]
struct OpenThread<E> {
    /// The oldest seq the read pages cover (`None`: no page came yet).
    loaded_from: Option<i64>,
    /// Whether the oldest page said older replies exist.
    has_older: bool,
    /// The read on its way, if any: `beforeSeq` (`None`: the newest page).
    in_flight: Option<Option<i64>>,
    /// Callers waiting for the read on its way.
    waiting: Vec<oneshot::Sender<Result<(), E>>>,
}

impl<E> Default for OpenThread<E> {
    fn default() -> Self {
        Self {
            loaded_from: None,
            has_older: false,
            in_flight: None,
            waiting: Vec::new(),
        }
    }
}

/// A page read for a thread: `SYNC` with `threadId`, `latest` for the
/// newest page, or `beforeSeq` for older replies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PageRead {
    pub channel_id: String,
    pub root_id: uuid::Uuid,
    pub before_seq: Option<i64>,
}

/// What the task does with a page that came back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PageOutcome {
    /// Fold the page's replies (those not held) as of its `lastSeq`.
    Take,
    /// The read is older than what the channel delivered: read again.
    ReadAgain(PageRead),
    /// Nobody asked for this page (a late answer): ignore it.
    Unasked,
}

impl<E: Clone> ThreadReads<E> {
    /// A caller asks for the newest page (`older` false) or the page before
    /// the oldest held one. Returns the read to send now, if one is not
    /// already on its way; `reply` is answered when the page is folded (at
    /// once when there is nothing older to read).
    pub fn ask(
        &mut self,
        channel_id: &str,
        root_id: uuid::Uuid,
        older: bool,
        reply: oneshot::Sender<Result<(), E>>,
    ) -> Option<PageRead> {
        let thread = self.threads.entry((channel_id.to_owned(), root_id)).or_default();
        let before_seq = match (older, thread.loaded_from) {
            (true, Some(from)) if thread.has_older => Some(from),
            (true, Some(_)) => {
                let _ = reply.send(Ok(()));
                return None;
            }
            _ => None,
        };
        thread.waiting.push(reply);
        if thread.in_flight.is_some() {
            return None;
        }
        thread.in_flight = Some(before_seq);
        Some(PageRead {
            channel_id: channel_id.to_owned(),
            root_id,
            before_seq,
        })
    }

    /// The reads on their way, to send again on a new connection.
    pub fn in_flight(&self) -> Vec<PageRead> {
        self.threads
            .iter()
            .filter_map(|((channel_id, root_id), thread)| {
                thread.in_flight.map(|before_seq| PageRead {
                    channel_id: channel_id.clone(),
                    root_id: *root_id,
                    before_seq,
                })
            })
            .collect()
    }

    /// A page of `root_id`'s thread came, read as of `last_seq`, while the
    /// channel had delivered through `delivered`.
    pub fn page_came(&self, channel_id: &str, root_id: uuid::Uuid, last_seq: i64, delivered: i64) -> PageOutcome {
        let Some(thread) = self.threads.get(&(channel_id.to_owned(), root_id)) else {
            return PageOutcome::Unasked;
        };
        let Some(before_seq) = thread.in_flight else {
            return PageOutcome::Unasked;
        };
        if last_seq < delivered {
            return PageOutcome::ReadAgain(PageRead {
                channel_id: channel_id.to_owned(),
                root_id,
                before_seq,
            });
        }
        PageOutcome::Take
    }

    /// The page was folded: its oldest reply's seq (`None`: an empty page)
    /// and whether older ones exist. Answers the waiting callers.
    pub fn page_taken(&mut self, channel_id: &str, root_id: uuid::Uuid, oldest: Option<i64>, has_more: bool) {
        let Some(thread) = self.threads.get_mut(&(channel_id.to_owned(), root_id)) else {
            return;
        };
        let newest_page = thread.in_flight.take() == Some(None);
        match (thread.loaded_from, oldest) {
            // The first page: where the shown replies start.
            (None, _) => {
                thread.loaded_from = Some(oldest.unwrap_or(i64::MAX));
                thread.has_older = has_more;
            }
            // A newer read of the newest page: the replies between it and
            // the older pages already read were delivered in the meantime.
            (Some(from), _) if newest_page => thread.loaded_from = Some(oldest.map_or(from, |o| o.min(from))),
            (Some(from), _) => {
                thread.loaded_from = Some(oldest.map_or(from, |o| o.min(from)));
                thread.has_older = has_more;
            }
        }
        for reply in thread.waiting.drain(..) {
            let _ = reply.send(Ok(()));
        }
    }

    /// The read was refused (`error`): its callers are told, and the
    /// thread may be asked for again.
    pub fn page_refused(&mut self, channel_id: &str, root_id: Option<uuid::Uuid>, error: &E) {
        for ((channel, root), thread) in &mut self.threads {
            if channel != channel_id || root_id.is_some_and(|r| r != *root) || thread.in_flight.is_none() {
                continue;
            }
            thread.in_flight = None;
            for reply in thread.waiting.drain(..) {
                let _ = reply.send(Err(error.clone()));
            }
        }
    }

    /// The seq from which `root_id`'s replies are shown, and whether older
    /// ones exist; `None` when the thread was never read.
    pub fn shown_from(&self, channel_id: &str, root_id: uuid::Uuid) -> Option<(i64, bool)> {
        let thread = self.threads.get(&(channel_id.to_owned(), root_id))?;
        let from = thread.loaded_from?;
        // Without older replies every held reply is shown.
        Some((if thread.has_older { from } else { i64::MIN }, thread.has_older))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> uuid::Uuid {
        uuid::Uuid::from_u128(7)
    }

    #[test]
    fn a_second_caller_waits_for_the_read_on_its_way() {
        let mut reads = ThreadReads::<String>::default();
        let (tx1, mut rx1) = oneshot::channel();
        let (tx2, mut rx2) = oneshot::channel();
        assert!(reads.ask("room", root(), false, tx1).is_some());
        assert_eq!(reads.ask("room", root(), false, tx2), None, "one read on the wire");
        assert_eq!(reads.page_came("room", root(), 10, 10), PageOutcome::Take);
        reads.page_taken("room", root(), Some(4), true);
        assert!(matches!(rx1.try_recv(), Ok(Ok(()))));
        assert!(matches!(rx2.try_recv(), Ok(Ok(()))));
        assert_eq!(reads.shown_from("room", root()), Some((4, true)));
    }

    #[test]
    fn a_page_older_than_the_delivered_channel_is_read_again() {
        let mut reads = ThreadReads::<String>::default();
        let (tx, _rx) = oneshot::channel();
        reads.ask("room", root(), false, tx);
        assert!(matches!(
            reads.page_came("room", root(), 9, 12),
            PageOutcome::ReadAgain(PageRead { before_seq: None, .. })
        ));
        assert_eq!(reads.page_came("other", root(), 9, 12), PageOutcome::Unasked);
    }

    #[test]
    fn older_pages_go_back_from_the_oldest_and_stop_when_none_are_left() {
        let mut reads = ThreadReads::<String>::default();
        let (tx, _rx) = oneshot::channel();
        reads.ask("room", root(), false, tx);
        reads.page_taken("room", root(), Some(50), true);
        let (tx, _rx) = oneshot::channel();
        let read = reads.ask("room", root(), true, tx).expect("an older read");
        assert_eq!(read.before_seq, Some(50));
        reads.page_taken("room", root(), Some(20), false);
        assert_eq!(reads.shown_from("room", root()), Some((i64::MIN, false)));
        let (tx, mut rx) = oneshot::channel();
        assert_eq!(reads.ask("room", root(), true, tx), None, "nothing older to read");
        assert!(matches!(rx.try_recv(), Ok(Ok(()))));
    }
}
