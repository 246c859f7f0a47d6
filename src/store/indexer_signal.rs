//! The SQLite search indexer's shared switches ([`super::search_indexer`]):
//! its wake-up, the test hold, and whether its task has started. Held by
//! every clone of the store ([`super::sql_store::SqlStore`]); a module of
//! its own so that the store does not import the indexer, which uses it.

use std::sync::atomic::AtomicBool;

use tokio::sync::Notify;

/// The indexer's state, shared by the store's clones: the wake-up and the
/// test hold.
#[derive(Debug, Default)]
pub struct SearchIndexer {
    /// Notified when a send batch that stored messages has committed.
    pub(super) wake: Notify,
    /// Set by the test hook `Store::hold_search_indexer`.
    pub(super) held: AtomicBool,
    /// Set once the indexer's task is started (one per store).
    pub(super) started: AtomicBool,
}

impl SearchIndexer {
    /// A batch that stored messages has committed: index them soon.
    pub(super) fn wake(&self) {
        self.wake.notify_one();
    }
}
