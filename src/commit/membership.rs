//! Membership changes on the channel's commit task (§13.3): a join, leave,
//! removal or role change is stored between two of the channel's batches,
//! so it takes effect between two entries (its `afterSeq`), and is announced
//! before the fan-out of any later entry: a new member gets `CHANNEL_ADDED`
//! before any `MSG_RECV` of the channel, a removed one its `MEMBER` and
//! `CHANNEL_REMOVED` after the last `MSG_RECV` it was a member for.

use tokio::sync::oneshot;

use crate::delivery::Delivery;
use crate::ids::{now_ms, ChannelId, UserId};
use crate::store::{MembershipChange, MembershipOutcome, Store, StoreError};

/// Why a membership change was not made.
#[derive(Debug, thiserror::Error)]
pub enum MembershipError {
    /// The store refused or failed ([`Store::change_membership`]).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The commit tasks have stopped (shutdown): nothing was stored.
    #[error("the commit tasks have stopped")]
    Stopped,
}

/// One membership change waiting on its channel's commit task.
#[derive(Debug)]
pub struct MembershipJob {
    /// The channel.
    pub channel: ChannelId,
    /// Whose membership changes.
    pub user: UserId,
    /// What changes.
    pub change: MembershipChange,
    /// Who asks (`None`: the admin token, or the user itself for a join or leave).
    pub by: Option<UserId>,
    /// Gets the outcome once it is stored and announced.
    pub reply: oneshot::Sender<Result<MembershipOutcome, StoreError>>,
}

impl MembershipJob {
    /// Stores the change, announces it if it changed anything, then answers.
    pub(super) async fn run(self, store: &Store, delivery: &Delivery) {
        let result = store
            .change_membership(&self.channel, &self.user, self.change, self.by.as_ref(), now_ms())
            .await;
        if let Ok(outcome) = &result {
            delivery.membership_committed(&self.channel, &self.user, self.change, self.by.as_ref(), outcome);
        }
        let _ = self.reply.send(result);
    }
}
