//! The per-channel order of one node: whatever path a channel's messages take
//! (this node's commit task, NATS from any other node, a read from the database),
//! they leave in increasing `seq`, each once.

use std::collections::BTreeMap;

/// What [`Sequencer::offer`] did with a message.
#[derive(Debug, PartialEq, Eq)]
pub enum Offer<T> {
    /// Its `seq` was already handed out (a copy, or older than the start): dropped.
    Stale,
    /// A lower `seq` is still missing: kept until it arrives or is filled.
    Held,
    /// These are next, in `seq` order: the message and any held successors.
    Ready(Vec<T>),
}

/// Hands out a channel's messages in `seq` order, each once.
///
/// `next` is the next `seq` to hand out; a message above it waits in `held`
/// until the gap below it closes.
#[derive(Debug)]
pub struct Sequencer<T> {
    next: i64,
    held: BTreeMap<i64, T>,
}

impl<T> Sequencer<T> {
    /// A sequencer that hands out `next` first (the channel's `lastSeq + 1`).
    pub fn new(next: i64) -> Self {
        Self {
            next: next.max(1),
            held: BTreeMap::new(),
        }
    }

    /// The next `seq` to hand out.
    pub fn next(&self) -> i64 {
        self.next
    }

    /// Messages waiting for a lower `seq`.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Offers the message with `seq`.
    pub fn offer(&mut self, seq: i64, item: T) -> Offer<T> {
        if seq < self.next || self.held.contains_key(&seq) {
            return Offer::Stale;
        }
        if seq > self.next {
            self.held.insert(seq, item);
            return Offer::Held;
        }
        let mut ready = vec![item];
        self.next += 1;
        while let Some(item) = self.held.remove(&self.next) {
            ready.push(item);
            self.next += 1;
        }
        Offer::Ready(ready)
    }

    /// The missing range `(first, last)` below the lowest held message, when
    /// one is held.
    pub fn gap(&self) -> Option<(i64, i64)> {
        self.held.keys().next().map(|&lowest| (self.next, lowest - 1))
    }

    /// Starts over at `next` (lower than now) and drops what is held. Only
    /// for a sequencer that has handed nothing out yet: a user who joined a
    /// channel must get what came after the join, even if it was committed
    /// before this node subscribed.
    pub fn rewind(&mut self, next: i64) {
        if next >= 1 && next < self.next {
            self.next = next;
            self.held.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(offer: Offer<i64>) -> Vec<i64> {
        match offer {
            Offer::Ready(items) => items,
            other => panic!("expected ready, got {other:?}"),
        }
    }

    #[test]
    fn in_order_passes_straight_through() {
        let mut s = Sequencer::new(1);
        for seq in 1..=5 {
            assert_eq!(ready(s.offer(seq, seq)), vec![seq]);
        }
        assert_eq!(s.next(), 6);
        assert_eq!(s.gap(), None);
    }

    #[test]
    fn a_later_seq_waits_for_the_earlier_one() {
        let mut s = Sequencer::new(3);
        assert_eq!(s.offer(5, 5), Offer::Held);
        assert_eq!(s.offer(4, 4), Offer::Held);
        assert_eq!(s.gap(), Some((3, 3)));
        assert_eq!(s.held(), 2);
        assert_eq!(ready(s.offer(3, 3)), vec![3, 4, 5]);
        assert_eq!((s.next(), s.held(), s.gap()), (6, 0, None));
    }

    #[test]
    fn copies_and_old_messages_are_dropped() {
        let mut s = Sequencer::new(10);
        assert_eq!(s.offer(9, 9), Offer::Stale, "before the start");
        assert_eq!(s.offer(12, 12), Offer::Held);
        assert_eq!(s.offer(12, 12), Offer::Stale, "a held copy");
        assert_eq!(ready(s.offer(10, 10)), vec![10]);
        assert_eq!(s.offer(10, 10), Offer::Stale, "already handed out");
        assert_eq!(s.gap(), Some((11, 11)));
    }

    #[test]
    fn a_gap_is_filled_by_offering_the_missing_seqs() {
        let mut s = Sequencer::new(1);
        assert_eq!(s.offer(4, 4), Offer::Held);
        assert_eq!(s.gap(), Some((1, 3)));
        // What a fill from the store does: offer 1..=3 in order.
        assert_eq!(ready(s.offer(1, 1)), vec![1]);
        assert_eq!(ready(s.offer(2, 2)), vec![2]);
        assert_eq!(ready(s.offer(3, 3)), vec![3, 4]);
        assert_eq!(s.gap(), None);
    }

    #[test]
    fn rewind_only_goes_back() {
        let mut s = Sequencer::<i64>::new(8);
        s.rewind(9);
        assert_eq!(s.next(), 8);
        assert_eq!(s.offer(9, 9), Offer::Held);
        s.rewind(5);
        assert_eq!((s.next(), s.held()), (5, 0));
    }
}
