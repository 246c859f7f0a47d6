//! The gate's rules, frame by frame.

use std::time::{Duration, Instant};

use super::*;

fn ch(id: &str) -> ChannelId {
    ChannelId::parse(id).unwrap()
}

/// A gate and what it let out, in order.
struct Probe {
    gate: ChannelGate<&'static str>,
    out: Vec<&'static str>,
    now: Instant,
}

impl Probe {
    /// A gate whose HELLO had `hello`.
    fn after_hello(hello: &[&str]) -> Self {
        let mut probe = Self::before_hello();
        probe.hello(hello);
        probe
    }

    fn before_hello() -> Self {
        Self {
            gate: ChannelGate::new(),
            out: Vec::new(),
            now: Instant::now(),
        }
    }

    fn hello(&mut self, hello: &[&str]) {
        let channels: Vec<ChannelId> = hello.iter().map(|c| ch(c)).collect();
        let out = &mut self.out;
        self.gate.hello(&channels, self.now, |f| out.push(f));
    }

    fn offer(&mut self, channel: &str, kind: Kind, frame: &'static str) -> Offer {
        let out = &mut self.out;
        let now = self.now;
        self.gate.offer(&ch(channel), kind, frame, || now, |f| out.push(f))
    }

    fn take(&mut self) -> Vec<&'static str> {
        std::mem::take(&mut self.out)
    }
}

#[test]
fn frames_of_a_hello_channel_go_out() {
    let mut p = Probe::after_hello(&["a"]);
    assert_eq!(p.offer("a", Kind::Of, "m1"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Ephemeral, "t1"), Offer::Out);
    assert_eq!(p.take(), ["m1", "t1"]);
}

#[test]
fn frames_before_channel_added_wait_for_it_and_follow_it() {
    let mut p = Probe::after_hello(&["a"]);
    assert_eq!(p.offer("b", Kind::Of, "m1"), Offer::Held);
    assert_eq!(p.offer("b", Kind::Of, "member-join"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Of, "other"), Offer::Out);
    // TYPING of a channel not announced: dropped, never held.
    assert_eq!(p.offer("b", Kind::Ephemeral, "typing"), Offer::Dropped);
    assert_eq!(p.take(), ["other"]);
    assert_eq!(p.offer("b", Kind::Added, "added"), Offer::Out);
    assert_eq!(p.take(), ["added", "m1", "member-join"]);
    assert_eq!(p.gate.held(), 0);
    assert_eq!(p.offer("b", Kind::Of, "m2"), Offer::Out);
    assert_eq!(p.take(), ["m2"]);
}

#[test]
fn nothing_after_channel_removed_until_added_again() {
    let mut p = Probe::after_hello(&["a"]);
    assert_eq!(p.offer("a", Kind::Of, "leave"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Removed, "removed"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Of, "late-msg"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Ephemeral, "typing"), Offer::Dropped);
    assert_eq!(p.take(), ["leave", "removed"]);
    // Never sent unless the channel is added again...
    p.now += HOLD_FOR;
    assert_eq!(p.offer("a", Kind::Of, "after-rejoin"), Offer::Held);
    assert_eq!(p.gate.held(), 1, "the late one expired");
    // ...as a rejoin does: what came since follows its CHANNEL_ADDED.
    assert_eq!(p.offer("a", Kind::Added, "added"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Of, "m"), Offer::Out);
    assert_eq!(p.take(), ["added", "after-rejoin", "m"]);
}

#[test]
fn a_removal_drops_what_was_held_before_it() {
    let mut p = Probe::after_hello(&["a"]);
    assert_eq!(p.offer("a", Kind::Removed, "removed"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Of, "late"), Offer::Held);
    // Removed again (a repeat, or a removal from another node).
    assert_eq!(p.offer("a", Kind::Removed, "removed-again"), Offer::Dropped);
    assert_eq!(p.gate.held(), 0);
    assert_eq!(p.offer("a", Kind::Added, "added"), Offer::Out);
    assert_eq!(p.take(), ["removed", "added"]);
}

#[test]
fn held_frames_expire() {
    let mut p = Probe::after_hello(&[]);
    assert_eq!(p.offer("b", Kind::Of, "old"), Offer::Held);
    p.now += HOLD_FOR + Duration::from_millis(1);
    assert_eq!(p.offer("b", Kind::Of, "new"), Offer::Held);
    assert_eq!(p.gate.held(), 1, "the old one expired");
    assert_eq!(p.offer("b", Kind::Added, "added"), Offer::Out);
    assert_eq!(p.take(), ["added", "new"]);
}

#[test]
fn held_frames_past_their_time_are_not_released() {
    let mut p = Probe::after_hello(&[]);
    assert_eq!(p.offer("b", Kind::Of, "old"), Offer::Held);
    p.now += HOLD_FOR;
    assert_eq!(p.offer("b", Kind::Added, "added"), Offer::Out);
    assert_eq!(p.take(), ["added"]);
}

#[test]
fn holding_is_bounded() {
    let mut p = Probe::after_hello(&[]);
    for _ in 0..HOLD_FRAMES {
        assert_eq!(p.offer("b", Kind::Of, "m"), Offer::Held);
    }
    assert_eq!(p.offer("b", Kind::Of, "over"), Offer::Dropped);
    assert_eq!(p.offer("b", Kind::Added, "added"), Offer::Out);
    assert_eq!(p.take().len(), 1 + HOLD_FRAMES);
}

#[test]
fn a_removal_of_a_channel_never_announced_drops_what_was_held() {
    let mut p = Probe::after_hello(&[]);
    assert_eq!(p.offer("b", Kind::Of, "m"), Offer::Held);
    assert_eq!(p.offer("b", Kind::Removed, "removed"), Offer::Dropped);
    assert!(p.take().is_empty());
    assert_eq!(p.gate.held(), 0);
}

#[test]
fn held_frames_of_other_channels_stay_held() {
    let mut p = Probe::after_hello(&[]);
    assert_eq!(p.offer("b", Kind::Of, "b1"), Offer::Held);
    assert_eq!(p.offer("c", Kind::Of, "c1"), Offer::Held);
    assert_eq!(p.offer("b", Kind::Added, "b-added"), Offer::Out);
    assert_eq!(p.take(), ["b-added", "b1"]);
    assert_eq!(p.gate.held(), 1);
    assert_eq!(p.offer("c", Kind::Added, "c-added"), Offer::Out);
    assert_eq!(p.take(), ["c-added", "c1"]);
}

#[test]
fn before_hello_everything_waits_then_is_judged_by_it() {
    let mut p = Probe::before_hello();
    // In the HELLO: its frames go out; its CHANNEL_ADDED was redundant.
    assert_eq!(p.offer("a", Kind::Added, "a-added"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Of, "a-msg"), Offer::Held);
    // Left before the snapshot: its MEMBER leave and CHANNEL_REMOVED too.
    assert_eq!(p.offer("gone", Kind::Of, "gone-leave"), Offer::Held);
    assert_eq!(p.offer("gone", Kind::Removed, "gone-removed"), Offer::Held);
    // Added after the snapshot: announced, then its frames.
    assert_eq!(p.offer("new", Kind::Of, "new-early"), Offer::Held);
    assert_eq!(p.offer("new", Kind::Added, "new-added"), Offer::Held);
    // Removed after the snapshot: told.
    assert_eq!(p.offer("left", Kind::Of, "left-leave"), Offer::Held);
    assert_eq!(p.offer("left", Kind::Removed, "left-removed"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Ephemeral, "typing"), Offer::Dropped);
    assert!(p.take().is_empty());
    p.hello(&["a", "left"]);
    assert_eq!(
        p.take(),
        ["a-msg", "new-added", "new-early", "left-leave", "left-removed"]
    );
    assert_eq!(p.offer("gone", Kind::Ephemeral, "gone-typing"), Offer::Dropped);
    assert_eq!(p.offer("left", Kind::Of, "left-late"), Offer::Held);
    assert_eq!(p.offer("new", Kind::Of, "new-msg"), Offer::Out);
    assert_eq!(p.take(), ["new-msg"]);
}

#[test]
fn a_removal_and_rejoin_before_hello_reads_as_told() {
    let mut p = Probe::before_hello();
    assert_eq!(p.offer("a", Kind::Of, "leave"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Removed, "removed"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Added, "added"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Of, "join"), Offer::Held);
    // The snapshot saw the rejoin.
    p.hello(&["a"]);
    assert_eq!(p.take(), ["leave", "removed", "added", "join"]);
}

/// Issue 29: a rejoin's `CHANNEL_ADDED`, then a stale `CHANNEL_REMOVED`
/// (another node's, older, late on NATS), then the correction the user's
/// membership task sends after it (`delivery/nats/membership.rs`): the
/// channel's frames that came between are held and follow the correction,
/// and the channel ends open.
#[test]
fn a_stale_removal_and_its_correction_lose_nothing_of_the_channel() {
    let mut p = Probe::after_hello(&["a"]);
    // The session had the channel: the rejoin's frame tells it nothing.
    assert_eq!(p.offer("a", Kind::Added, "rejoin-added"), Offer::Dropped);
    assert_eq!(p.offer("a", Kind::Of, "join"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Of, "stale-leave"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Removed, "stale-removed"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Of, "m1"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Added, "corrected"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Of, "m2"), Offer::Out);
    assert_eq!(
        p.take(),
        ["join", "stale-leave", "stale-removed", "corrected", "m1", "m2"]
    );
}

/// A removal read after a quick rejoin committed is followed by the
/// correction, then the rejoin's own `CHANNEL_ADDED` arrives: it is
/// dropped, so the client sees one `CHANNEL_REMOVED` and one
/// `CHANNEL_ADDED`, as made.
#[test]
fn a_channel_added_of_an_open_channel_is_dropped() {
    let mut p = Probe::after_hello(&["a"]);
    assert_eq!(p.offer("a", Kind::Removed, "removed"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Added, "corrected"), Offer::Out);
    assert_eq!(p.offer("a", Kind::Added, "rejoin-added"), Offer::Dropped);
    assert_eq!(p.offer("a", Kind::Of, "m"), Offer::Out);
    assert_eq!(p.take(), ["removed", "corrected", "m"]);
}

/// The same before the HELLO, which already has the rejoin: the stale
/// removal and its correction both reach the client, and the channel ends
/// open.
#[test]
fn a_stale_removal_and_its_correction_before_hello_end_open() {
    let mut p = Probe::before_hello();
    assert_eq!(p.offer("a", Kind::Removed, "stale-removed"), Offer::Held);
    assert_eq!(p.offer("a", Kind::Added, "corrected"), Offer::Held);
    p.hello(&["a"]);
    assert_eq!(p.take(), ["stale-removed", "corrected"]);
    assert_eq!(p.offer("a", Kind::Of, "m"), Offer::Out);
    assert_eq!(p.take(), ["m"]);
}

#[test]
fn too_much_before_hello_overflows() {
    let mut p = Probe::before_hello();
    for _ in 0..PRE_HELLO_FRAMES {
        assert_eq!(p.offer("a", Kind::Of, "m"), Offer::Held);
    }
    assert_eq!(p.offer("a", Kind::Of, "m"), Offer::Overflow);
}

#[test]
fn kinds_by_frame_type() {
    assert_eq!(Kind::of_frame("CHANNEL_ADDED"), Kind::Added);
    assert_eq!(Kind::of_frame("CHANNEL_REMOVED"), Kind::Removed);
    assert_eq!(Kind::of_frame("TYPING"), Kind::Ephemeral);
    for of in ["MSG_RECV", "MEMBER", "RECEIPT", "CHANNEL_UPDATED", "CHANNEL_SETTINGS"] {
        assert_eq!(Kind::of_frame(of), Kind::Of);
    }
}
