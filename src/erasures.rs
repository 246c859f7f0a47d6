//! The erasures running on this node (§19), by user, so that a second
//! request for one joins it. Kept in [`crate::state::AppState`]; it knows
//! nothing of the state, so the state does not depend on the erasure's
//! work.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

use crate::ids::UserId;

/// The erasures running on this node, by user: each one's "done" signal.
#[derive(Debug, Default)]
pub struct Erasures {
    pub(crate) running: Mutex<HashMap<UserId, watch::Receiver<bool>>>,
}

impl Erasures {
    /// The erasure of `user` running on this node, if any.
    pub(super) fn running(&self, user: &UserId) -> Option<watch::Receiver<bool>> {
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        running.get(user).cloned()
    }

    pub(super) fn remove(&self, user: &UserId) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        running.remove(user);
    }
}
