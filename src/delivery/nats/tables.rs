//! The tables of what this node subscribes to: users with a live session
//! here and the channels they hold, each with its task's commands. Kept in
//! [`super::inner::Inner`] under one lock; [`super::interest`] moves them.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::channel::ChannelCmd;
use crate::ids::{ChannelId, UserId};

/// What this node's sessions need, by user and by channel.
#[derive(Default)]
pub(super) struct Interest {
    pub(super) users: HashMap<UserId, UserEntry>,
    pub(super) channels: HashMap<ChannelId, ChannelEntry>,
    pub(super) next_generation: u64,
}

/// A user with live sessions on this node.
pub(super) struct UserEntry {
    /// Tells this entry from a later one of the same user.
    pub(super) generation: u64,
    pub(super) sessions: usize,
    /// The channels this user holds a reference to.
    pub(super) channels: HashSet<ChannelId>,
    pub(super) ready: watch::Receiver<bool>,
    /// The user's membership changes and frames, for `run_membership`
    /// (`membership.rs`).
    pub(super) memberships: mpsc::UnboundedSender<MembershipCmd>,
    pub(super) stop: CancellationToken,
}

/// A channel some local user is a member of.
pub(super) struct ChannelEntry {
    /// Users holding it.
    pub(super) refs: usize,
    pub(super) ready: watch::Receiver<bool>,
    pub(super) commands: mpsc::UnboundedSender<ChannelCmd>,
    /// The highest seq of the channel this node knows of (committed here,
    /// or offered to its task from NATS or the database): where this node's
    /// TYPING frames of the channel stand in its order ([`super::channel`]).
    pub(super) known: Arc<AtomicI64>,
    pub(super) stop: CancellationToken,
}

/// What a user's membership task handles, in order
/// ([`super::membership::run_membership`]).
#[derive(Debug)]
pub(super) enum MembershipCmd {
    /// The user joined (`add`) or left `channel`, committed when its last
    /// seq was `seq` (on this node or another): the node takes or gives back
    /// the channel as the database has it ([`super::inner::Inner::membership`]).
    Changed { channel: ChannelId, add: bool, seq: i64 },
    /// A `CHANNEL_ADDED` (`add`) or `CHANNEL_REMOVED` of `channel` for the
    /// user's sessions, encoded: sent, then corrected if the database says
    /// otherwise ([`super::inner::Inner::membership_frame`]).
    Frame {
        channel: ChannelId,
        add: bool,
        text: Utf8Bytes,
        type_name: &'static str,
    },
    /// NATS came back: the frames of changes made on other nodes while it
    /// was away may be lost; the node and the sessions are brought to the
    /// user's channels as the database lists them
    /// ([`super::membership::run_membership`]).
    Reconcile,
}
