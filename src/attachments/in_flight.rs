//! How many uploads each user has in progress on this node
//! (`max_uploads_in_flight_per_user`): an upload takes a slot when its
//! request starts and gives it back when the request ends, however it ends
//! (answered, refused, its client gone, a panic), by dropping its
//! [`UploadSlot`]. Without the bound, one member sending a byte every few
//! seconds to thousands of uploads held as many connections and files open,
//! until the process ran out of file descriptors and everyone's uploads
//! failed (docs/known-issues.md).
//!
//! The counts are per node: a user spread over several nodes gets each
//! node's allowance, as with the WebSocket limits (`limits.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::ids::UserId;

/// Why an upload was refused a slot: the user has `max` in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this user has {max} uploads in progress (max_uploads_in_flight_per_user)")]
pub struct TooManyUploads {
    /// `max_uploads_in_flight_per_user`.
    pub max: usize,
}

/// The uploads in progress on this node, per user.
#[derive(Debug)]
pub struct UploadSlots {
    max: usize,
    /// A std lock held only to update a count, never across an await. A
    /// user with no upload in progress has no entry.
    counts: Mutex<HashMap<UserId, usize>>,
}

/// One upload's slot; given back when dropped.
#[derive(Debug)]
pub struct UploadSlot {
    slots: Arc<UploadSlots>,
    user_id: UserId,
}

impl Drop for UploadSlot {
    fn drop(&mut self) {
        let mut counts = self.slots.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = counts.get_mut(&self.user_id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.remove(&self.user_id);
            }
        }
    }
}

impl UploadSlots {
    /// At most `max` uploads in progress per user (0 is taken as 1).
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            counts: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a slot for an upload of `user_id`, at once.
    ///
    /// # Errors
    /// [`TooManyUploads`] when the user already has `max` in progress.
    pub fn acquire(self: &Arc<Self>, user_id: &UserId) -> Result<UploadSlot, TooManyUploads> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mine = counts.entry(user_id.clone()).or_insert(0);
        if *mine >= self.max {
            return Err(TooManyUploads { max: self.max });
        }
        *mine += 1;
        Ok(UploadSlot {
            slots: Arc::clone(self),
            user_id: user_id.clone(),
        })
    }

    /// How many uploads `user_id` has in progress on this node.
    pub fn in_flight(&self, user_id: &UserId) -> usize {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.get(user_id).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_per_user_and_given_back_on_drop() {
        let slots = Arc::new(UploadSlots::new(2));
        let alice = UserId::parse("alice").unwrap();
        let bob = UserId::parse("bob").unwrap();
        let first = slots.acquire(&alice).unwrap();
        let _second = slots.acquire(&alice).unwrap();
        assert_eq!(slots.acquire(&alice).unwrap_err(), TooManyUploads { max: 2 });
        let _bobs = slots.acquire(&bob).unwrap();
        assert_eq!(slots.in_flight(&alice), 2);
        drop(first);
        assert_eq!(slots.in_flight(&alice), 1);
        assert!(slots.acquire(&alice).is_ok(), "a slot given back is free again");
    }

    #[test]
    fn a_slot_is_given_back_when_its_holder_panics() {
        let slots = Arc::new(UploadSlots::new(1));
        let alice = UserId::parse("alice").unwrap();
        let held = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _slot = slots.acquire(&alice).unwrap();
            panic!("the upload failed");
        }));
        assert!(held.is_err());
        assert_eq!(slots.in_flight(&alice), 0);
        assert!(
            slots.counts.lock().unwrap().is_empty(),
            "no entry left for an idle user"
        );
    }
}
