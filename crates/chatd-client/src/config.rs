//! Client settings and the retry backoff.

use std::time::Duration;

use crate::order::StartFrom;

/// How a [`crate::Client`] connects, retries and delivers.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The WebSocket endpoint, e.g. `ws://127.0.0.1:8080/v1/ws`.
    pub url: String,
    /// The user's JWT, sent as `Authorization: Bearer`. Replace it with
    /// [`crate::Client::set_token`] before it expires; the next reconnect uses
    /// the new one.
    pub token: String,
    /// How long a send waits for its MSG_ACK before the connection is taken
    /// for dead and replaced (the send is then retried on the new one with the
    /// same `clientMsgId`). Default 10 s.
    pub ack_timeout: Duration,
    /// First reconnect / retry delay. Default 50 ms.
    pub backoff_initial: Duration,
    /// Largest reconnect / retry delay. Default 5 s.
    pub backoff_max: Duration,
    /// Give up on a send after this long (the send then fails with
    /// [`crate::SendError::DeadlineExceeded`]; it may still have been
    /// stored). `None` (default): retry until the client is closed.
    pub send_deadline: Option<Duration>,
    /// Reconnect when nothing at all (no frame, no ping) arrived for this
    /// long. The server pings every `ping_interval_secs` (30 s). Default 90 s.
    pub idle_timeout: Duration,
    /// How long one connection attempt (TCP, WebSocket handshake, HELLO) may
    /// take. Default 10 s.
    pub connect_timeout: Duration,
    /// Where to start channels the client has no cursor for.
    pub start_from: StartFrom,
    /// Cursors the application kept from an earlier run: channel → highest
    /// `seq` it already has. Those channels resume right after it.
    pub resume: Vec<(String, i64)>,
    /// Send MSG_DELIVERED for the last message of others delivered to the
    /// application in each channel. Default false.
    pub auto_delivered: bool,
    /// Page size of the SYNCs that fill gaps (1..=500). Default 500.
    pub sync_limit: u32,
    /// How long a gap below a live message may stay open before a SYNC is
    /// sent for it. The server ACKs every send of a commit before it fans the
    /// commit's messages out, so a sender can get the ACK of its own message
    /// just before the MSG_RECV of an earlier one; waiting a moment lets that
    /// frame fill the gap instead of a SYNC (which also holds up the
    /// connection's later frames on the server). Gaps known from HELLO are
    /// synced at once. Default 100 ms.
    pub gap_sync_delay: Duration,
    /// Capacity of the event queue to the application. When the application
    /// does not take events, the client stops reading the socket (and the
    /// server eventually closes it with 1013, after which the client
    /// reconnects and syncs). Default 4096.
    pub event_capacity: usize,
    /// Largest incoming WebSocket message, bytes. Default 1 MiB.
    pub max_message_bytes: usize,
    /// WebSocket read buffer, bytes. tungstenite's default reserves 128 KiB
    /// per connection; chat frames are small. Default 8 KiB.
    pub read_buffer_bytes: usize,
    /// WebSocket write buffer, bytes (frames are flushed in batches).
    /// Default 8 KiB.
    pub write_buffer_bytes: usize,
    /// While [`crate::Client::typing`] is on, a TYPING `start` goes out at
    /// most once per this (client-side throttle), and again after it (the
    /// renewal, so the indicator does not expire at the others). Keep it at
    /// or above the server's `typing_throttle_ms` (2 s; a start within it is
    /// dropped) and below its `typing_ttl_ms` (6 s). Default 3 s.
    pub typing_renew: Duration,
    /// Keep the folded state of the messages seen (their current text,
    /// deletion and reactions: [`crate::Client::message_state`],
    /// [`crate::Event::Changed`]), at most
    /// [`Self::folded_messages_per_channel`] per channel. A program that
    /// never reads the state (a bot, a load generator) turns it off, and
    /// then gets no `Changed` events, `message_state` answers `None`, and
    /// its own reaction entries arrive with `noop` false. Default true.
    pub fold_messages: bool,
    /// With [`Self::fold_messages`], the most messages whose state is kept
    /// per channel (at least 1): past it the one held longest is forgotten,
    /// and an edit, delete or reaction of a forgotten message changes
    /// nothing (no `Changed` event; `message_state` answers `None`), as for
    /// one never seen. Memory is about this many times 300 bytes plus each
    /// message's text, per channel. Default 10,000.
    pub folded_messages_per_channel: usize,
    /// The source address of the client's TCP connections (bound before
    /// connecting, any port), or `None` (default) to let the system choose.
    /// A load generator holding more connections to one server address
    /// than one source address has ports (about 28,000 with Linux's default
    /// `ip_local_port_range`) spreads them over several loopback addresses
    /// (127.0.0.2, 127.0.0.3, …). For `ws://` URLs only: with `wss://` the
    /// connection fails with [`crate::ConnectError::BadUrl`].
    pub local_addr: Option<std::net::IpAddr>,
}

impl ClientConfig {
    /// Settings with the defaults above.
    pub fn new(url: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            token: token.into(),
            ack_timeout: Duration::from_secs(10),
            backoff_initial: Duration::from_millis(50),
            backoff_max: Duration::from_secs(5),
            send_deadline: None,
            idle_timeout: Duration::from_secs(90),
            connect_timeout: Duration::from_secs(10),
            start_from: StartFrom::Now,
            resume: Vec::new(),
            auto_delivered: false,
            sync_limit: 500,
            gap_sync_delay: Duration::from_millis(100),
            event_capacity: 4096,
            max_message_bytes: 1 << 20,
            read_buffer_bytes: 8 << 10,
            write_buffer_bytes: 8 << 10,
            typing_renew: Duration::from_secs(3),
            fold_messages: true,
            folded_messages_per_channel: 10_000,
            local_addr: None,
        }
    }
}

/// Exponential backoff with full jitter ("Exponential Backoff And Jitter",
/// AWS Architecture Blog, 2015): attempt `n` waits a uniformly random time in
/// `[0, min(max, initial · 2^n)]`, so clients that failed together do not
/// retry together.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    attempt: u32,
}

impl Backoff {
    /// A backoff starting at `initial`, capped at `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self {
            initial,
            max: max.max(initial),
            attempt: 0,
        }
    }

    /// The ceiling of the next delay, without jitter.
    pub fn ceiling(&self) -> Duration {
        let factor = 1u32.checked_shl(self.attempt.min(20)).unwrap_or(u32::MAX);
        self.initial.saturating_mul(factor).min(self.max)
    }

    /// The next delay (random in `[0, ceiling]`); grows the ceiling.
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = self.ceiling();
        self.attempt = self.attempt.saturating_add(1);
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rand::random_range(0..=nanos))
    }

    /// Back to the first delay (after a success).
    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    /// Attempts since the last reset.
    pub fn attempts(&self) -> u32 {
        self.attempt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter_below_the_ceiling() {
        let mut b = Backoff::new(Duration::from_millis(10), Duration::from_millis(100));
        let mut ceilings = Vec::new();
        for _ in 0..6 {
            let ceiling = b.ceiling();
            let delay = b.next_delay();
            assert!(delay <= ceiling, "{delay:?} > {ceiling:?}");
            ceilings.push(ceiling.as_millis());
        }
        assert_eq!(ceilings, [10, 20, 40, 80, 100, 100]);
        b.reset();
        assert_eq!(b.ceiling(), Duration::from_millis(10));
    }

    #[test]
    fn jitter_spreads_delays() {
        let mut b = Backoff::new(Duration::from_millis(1000), Duration::from_millis(1000));
        let delays: std::collections::HashSet<_> = (0..20).map(|_| b.next_delay()).collect();
        assert!(delays.len() > 10, "delays are random, not fixed");
    }
}
