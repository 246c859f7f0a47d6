//! The objects of an upload in progress that no row names yet, removed
//! however the upload ends without being stored (refused, failed, or its
//! future dropped when the client went away).

use crate::attachments;
use crate::state::AppState;

/// The objects an upload has written that no row names yet. Dropped
/// before [`Unclaimed::claimed`] (the upload refused, failed, or dropped
/// because its client went away), it removes them in a task of its own.
pub(super) struct Unclaimed {
    state: AppState,
    pub(super) keys: Vec<String>,
}

impl Unclaimed {
    pub(super) fn new(state: &AppState) -> Self {
        Self {
            state: state.clone(),
            keys: Vec::new(),
        }
    }

    /// The row naming the objects is stored: they stay.
    pub(super) fn claimed(mut self) {
        self.keys.clear();
    }
}

impl Drop for Unclaimed {
    fn drop(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        let keys = std::mem::take(&mut self.keys);
        let state = self.state.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    for key in keys {
                        forget(&state, &key).await;
                    }
                });
            }
            Err(_) => tracing::warn!(
                ?keys,
                "objects of an unfinished upload left behind: no runtime to remove them"
            ),
        }
    }
}

/// Removes an object of a refused upload now; queued for the removal task
/// if that fails, so nothing stays behind.
async fn forget(state: &AppState, key: &str) {
    if state.attachments.storage.delete(key).await.is_err() {
        if let Err(error) = state.store.queue_attachment_removal(key, attachments::now_ms()).await {
            tracing::warn!(%error, "an object of a refused upload could not be removed or queued");
        }
    }
}
