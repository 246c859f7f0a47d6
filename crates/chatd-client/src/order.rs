//! Per-channel ordering: hand the application each message once, in `seq`
//! order, and say when a gap needs a SYNC.
//!
//! A channel's `seq` is gapless (`docs/protocol.md` §6.3), so "the next
//! message to deliver" is always `next`. A message below `next` was already
//! delivered (a duplicate MSG_RECV, a SYNC page overlapping live frames, the
//! MSG_RECV of a message this client's own ACK already delivered): it is
//! dropped. Since a channel's `seq` and `messageId` correspond one to one,
//! this is the same as dropping duplicates by `messageId`. A message above
//! `next` is held until the gap below it is filled.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chatd_proto::protocol::RecvMessage;

/// Where a client starts a channel it has no cursor for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartFrom {
    /// Only messages stored after the client first saw the channel (HELLO's
    /// `lastSeq`, or the first live message of a channel joined later). A
    /// fresh device that does not want the backlog.
    #[default]
    Now,
    /// The whole history from `seq` 1, fetched with SYNC.
    Beginning,
}

/// The ordering state of one channel.
#[derive(Debug, Clone, Default)]
pub struct ChannelOrder {
    /// The next `seq` to deliver; 0 while unknown.
    next: i64,
    /// Messages above `next`, waiting for the gap below them (boxed as
    /// they were decoded: see [`ChannelOrder::offer`]).
    held: BTreeMap<i64, Box<RecvMessage>>,
    /// The highest `seq` known to exist (from HELLO), to fetch with SYNC.
    missing_up_to: i64,
    /// A SYNC for this channel is outstanding.
    syncing: bool,
    /// Since when messages have been held above a gap (None: nothing held).
    gap_since: Option<Instant>,
    /// A SYNC was refused for now (a retryable ERROR): none is asked
    /// before this.
    retry_at: Option<Instant>,
}

impl ChannelOrder {
    /// A channel whose messages up to and including `delivered` are already
    /// with the application.
    pub fn after(delivered: i64) -> Self {
        Self {
            next: delivered.max(0) + 1,
            ..Self::default()
        }
    }

    /// A channel with no cursor yet: [`Self::offer`] starts at the first
    /// message it gets.
    pub fn unknown() -> Self {
        Self::default()
    }

    /// The highest `seq` delivered (0 when none or unknown).
    pub fn delivered(&self) -> i64 {
        (self.next - 1).max(0)
    }

    /// Whether a cursor is set.
    pub fn is_known(&self) -> bool {
        self.next > 0
    }

    /// Messages held above a gap.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// The messages held above a gap, in `seq` order (an own message
    /// built from its ACK among them until the gap below it is filled).
    pub fn held_messages(&self) -> impl Iterator<Item = &RecvMessage> {
        self.held.values().map(|m| &**m)
    }

    /// Takes one message (live, from SYNC or from an own ACK) and returns
    /// what can now be delivered, in `seq` order (possibly empty).
    ///
    /// Boxed, as [`chatd_proto::protocol::ServerFrame::MsgRecv`] carries
    /// it: a message (about 400 bytes) is moved as a pointer from the
    /// decoder to the application.
    pub fn offer(&mut self, message: Box<RecvMessage>) -> Vec<Box<RecvMessage>> {
        let mut ready = Vec::new();
        self.offer_into(message, &mut ready);
        ready
    }

    /// [`Self::offer`], appending what can now be delivered to `ready`. The
    /// usual case, the next message with nothing held, goes straight to
    /// `ready` without passing through the held messages.
    pub fn offer_into(&mut self, message: Box<RecvMessage>, ready: &mut Vec<Box<RecvMessage>>) {
        if self.next == 0 {
            self.next = message.seq;
        }
        if message.seq < self.next {
            return;
        }
        if message.seq == self.next && self.held.is_empty() {
            self.next += 1;
            self.gap_since = None;
            ready.push(message);
            return;
        }
        self.held.entry(message.seq).or_insert(message);
        while let Some(message) = self.held.remove(&self.next) {
            ready.push(message);
            self.next += 1;
        }
        if self.held.is_empty() {
            self.gap_since = None;
        } else if self.gap_since.is_none() {
            self.gap_since = Some(Instant::now());
        }
    }

    /// HELLO or another source says the channel holds messages up to
    /// `last_seq`. Sets the cursor of an unknown channel per `start` and
    /// notes what is missing, for [`Self::sync_needed`].
    pub fn observe_last_seq(&mut self, last_seq: i64, start: StartFrom) {
        if self.next == 0 {
            self.next = match start {
                StartFrom::Now => last_seq.max(0) + 1,
                StartFrom::Beginning => 1,
            };
        }
        if last_seq >= self.next {
            self.missing_up_to = self.missing_up_to.max(last_seq);
        }
    }

    /// The `afterSeq` of the SYNC to send now, if one is needed and none is
    /// outstanding; marks the SYNC as outstanding.
    pub fn sync_needed(&mut self) -> Option<i64> {
        self.sync_needed_after(Duration::ZERO)
    }

    /// As [`Self::sync_needed`], but a gap below held messages asks for a
    /// SYNC only once it has stayed open for `grace`: the frame that fills it
    /// is often already on its way (the MSG_ACK of an own message can come
    /// just before the MSG_RECV of an earlier message committed with it).
    /// Messages known to be missing from HELLO ask at once.
    pub fn sync_needed_after(&mut self, grace: Duration) -> Option<i64> {
        if self.syncing || self.next == 0 || self.retry_at.is_some_and(|at| Instant::now() < at) {
            return None;
        }
        let gap_due = self.gap_since.is_some_and(|since| since.elapsed() >= grace);
        let behind = (!self.held.is_empty() && gap_due) || self.missing_up_to >= self.next;
        if behind {
            self.syncing = true;
            Some(self.next - 1)
        } else {
            None
        }
    }

    /// A SYNC_BATCH for this channel arrived (its messages already offered).
    /// Returns the `afterSeq` of the follow-up SYNC when more is missing.
    pub fn sync_done(&mut self, has_more: bool) -> Option<i64> {
        self.syncing = false;
        self.retry_at = None;
        if has_more {
            self.syncing = true;
            return Some(self.next - 1);
        }
        // The server had nothing after the page: anything claimed missing
        // below it is gone for good (cannot happen with a gapless store), so
        // stop asking until a new frame says otherwise.
        self.missing_up_to = self.missing_up_to.min(self.next - 1);
        None
    }

    /// The outstanding SYNC was refused for now (a retryable ERROR naming
    /// this channel): the same read is asked again, from `retry_at` on.
    /// Returns whether one was outstanding. Before, `syncing` stayed set and
    /// the channel was not synced again on that connection.
    pub fn sync_refused(&mut self, retry_at: Instant) -> bool {
        if !self.syncing {
            return false;
        }
        self.syncing = false;
        self.retry_at = Some(retry_at);
        true
    }

    /// The connection dropped: an outstanding SYNC will never be answered
    /// (the next connection asks at once).
    pub fn connection_lost(&mut self) {
        self.syncing = false;
        self.retry_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(seq: i64) -> Box<RecvMessage> {
        Box::new(RecvMessage {
            message_id: uuid::Uuid::now_v7(),
            channel_id: "c".into(),
            sender_id: "u".into(),
            seq,
            body: format!("m{seq}"),
            ts: seq,
            client_msg_id: Some(format!("k{seq}")),
            ..Default::default()
        })
    }

    fn seqs(v: &[Box<RecvMessage>]) -> Vec<i64> {
        v.iter().map(|m| m.seq).collect()
    }

    #[test]
    fn in_order_messages_pass_straight_through() {
        let mut o = ChannelOrder::after(0);
        assert_eq!(seqs(&o.offer(m(1))), [1]);
        assert_eq!(seqs(&o.offer(m(2))), [2]);
        assert_eq!(o.delivered(), 2);
        assert_eq!(o.sync_needed(), None);
    }

    #[test]
    fn duplicates_are_dropped() {
        let mut o = ChannelOrder::after(0);
        o.offer(m(1));
        o.offer(m(2));
        assert!(o.offer(m(1)).is_empty());
        assert!(o.offer(m(2)).is_empty());
        assert_eq!(seqs(&o.offer(m(3))), [3]);
    }

    #[test]
    fn a_gap_holds_later_messages_and_asks_for_a_sync() {
        let mut o = ChannelOrder::after(1);
        assert!(o.offer(m(4)).is_empty());
        assert!(o.offer(m(3)).is_empty());
        assert_eq!(o.held(), 2);
        assert_eq!(o.sync_needed(), Some(1));
        assert_eq!(o.sync_needed(), None, "one SYNC outstanding at a time");
        // The SYNC page brings 2..4; 3 and 4 are held copies.
        assert_eq!(seqs(&o.offer(m(2))), [2, 3, 4]);
        assert!(o.offer(m(3)).is_empty());
        assert!(o.offer(m(4)).is_empty());
        assert_eq!(o.sync_done(false), None);
        assert_eq!(o.delivered(), 4);
        assert_eq!(o.held(), 0);
    }

    #[test]
    fn hello_last_seq_beyond_the_cursor_asks_for_a_sync_until_caught_up() {
        let mut o = ChannelOrder::after(2);
        o.observe_last_seq(5, StartFrom::Now);
        assert_eq!(o.sync_needed(), Some(2));
        o.offer(m(3));
        assert_eq!(o.sync_done(true), Some(3));
        o.offer(m(4));
        o.offer(m(5));
        assert_eq!(o.sync_done(false), None);
        assert_eq!(o.sync_needed(), None);
        assert_eq!(o.delivered(), 5);
    }

    #[test]
    fn unknown_channels_start_per_policy() {
        let mut now = ChannelOrder::unknown();
        now.observe_last_seq(7, StartFrom::Now);
        assert_eq!(now.delivered(), 7);
        assert_eq!(now.sync_needed(), None);

        let mut all = ChannelOrder::unknown();
        all.observe_last_seq(7, StartFrom::Beginning);
        assert_eq!(all.sync_needed(), Some(0));

        let mut live = ChannelOrder::unknown();
        assert_eq!(seqs(&live.offer(m(9))), [9]);
        assert!(live.offer(m(8)).is_empty());
    }

    #[test]
    fn a_gap_waits_for_the_grace_before_asking_for_a_sync() {
        let grace = Duration::from_millis(30);
        let mut o = ChannelOrder::after(4);
        // An own ACK (seq 6) ahead of the MSG_RECV of seq 5.
        assert!(o.offer(m(6)).is_empty());
        assert_eq!(o.sync_needed_after(grace), None, "within the grace");
        assert_eq!(seqs(&o.offer(m(5))), [5, 6]);
        std::thread::sleep(grace * 2);
        assert_eq!(o.sync_needed_after(grace), None, "the gap was filled");
        // A gap nobody fills asks once the grace is over.
        assert!(o.offer(m(8)).is_empty());
        assert_eq!(o.sync_needed_after(grace), None);
        std::thread::sleep(grace * 2);
        assert_eq!(o.sync_needed_after(grace), Some(6));
        // What HELLO says is missing asks at once.
        let mut h = ChannelOrder::after(2);
        h.observe_last_seq(5, StartFrom::Now);
        assert_eq!(h.sync_needed_after(Duration::from_secs(3600)), Some(2));
    }

    #[test]
    fn a_lost_connection_releases_the_outstanding_sync() {
        let mut o = ChannelOrder::after(0);
        o.offer(m(2));
        assert_eq!(o.sync_needed(), Some(0));
        o.connection_lost();
        assert_eq!(o.sync_needed(), Some(0));
    }

    #[test]
    fn a_refused_sync_is_asked_again_after_its_wait() {
        let mut o = ChannelOrder::after(0);
        o.observe_last_seq(3, StartFrom::Now);
        assert_eq!(o.sync_needed(), Some(0));
        assert_eq!(o.sync_needed(), None, "one outstanding at a time");
        // refused (`unavailable`): not at once, then the same read again
        assert!(o.sync_refused(Instant::now() + Duration::from_millis(30)));
        assert_eq!(o.sync_needed(), None, "not before the wait");
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(o.sync_needed(), Some(0));
        let ready = o.offer(m(1)).len() + o.offer(m(2)).len() + o.offer(m(3)).len();
        assert_eq!(ready, 3);
        assert_eq!(o.sync_done(false), None);
        assert!(!o.sync_refused(Instant::now()), "none outstanding");
    }
}
