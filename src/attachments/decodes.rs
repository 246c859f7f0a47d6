//! The decode budget of image uploads, shared fairly between users.
//!
//! The decodes in flight on a node hold at most `max_image_pixels` pixels
//! together (in units of [`PIXELS_PER_PERMIT`]), so a burst of large images
//! decodes in turn instead of each taking its few hundred MiB at once. The
//! budget is a FIFO semaphore; alone, that served users first come, first
//! served: 16 uploads of a 49-megapixel PNG from one member made another's
//! 1×1 PNG wait behind all of them (35.6 s, docs/known-issues.md). Now each
//! user has at most [`DECODES_PER_USER`] decode in progress or waiting in
//! the budget; the user's other decodes wait in a queue of their own, and
//! enter the budget's queue behind whoever is waiting there already. Each
//! other user's image waits behind at most one of a busy user's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};

use crate::ids::UserId;

/// Pixels per permit of the decode budget.
pub const PIXELS_PER_PERMIT: u64 = 65_536;

/// Decodes of one user in progress or waiting in the shared budget at once.
pub const DECODES_PER_USER: usize = 1;

/// One user's turn: the gate its decodes pass one at a time, and how many
/// of its decodes hold or wait for it (the entry goes at 0).
#[derive(Debug)]
struct Turn {
    gate: Arc<Semaphore>,
    users: usize,
}

type Turns = Arc<Mutex<HashMap<UserId, Turn>>>;

/// The decode budget of a node.
#[derive(Debug)]
pub struct DecodeBudget {
    budget: Arc<Semaphore>,
    /// The budget's size, in permits.
    size: u32,
    /// A std lock held only to update the map, never across an await.
    turns: Turns,
}

/// A decode's place: its share of the budget and its user's turn, held
/// until dropped (move it into the decoding task, so the share is held for
/// as long as the memory is, even when the upload that asked has gone away).
#[derive(Debug)]
pub struct DecodePermit {
    // Dropped in this order: the budget first, so the next waiter there
    // (another user's, if one waits) is served before this user's next
    // decode queues for it.
    _budget: OwnedSemaphorePermit,
    _turn: OwnedSemaphorePermit,
    _entry: TurnEntry,
}

/// Counts one decode in its user's [`Turn`]; the entry goes with the last.
#[derive(Debug)]
struct TurnEntry {
    turns: Turns,
    user_id: UserId,
}

impl Drop for TurnEntry {
    fn drop(&mut self) {
        let mut turns = self.turns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(turn) = turns.get_mut(&self.user_id) {
            turn.users = turn.users.saturating_sub(1);
            if turn.users == 0 {
                turns.remove(&self.user_id);
            }
        }
    }
}

impl DecodeBudget {
    /// A budget of `max_pixels` pixels (`max_image_pixels`).
    pub fn new(max_pixels: u64) -> Self {
        let most = Semaphore::MAX_PERMITS.min(u32::MAX as usize) as u32;
        let size = u32::try_from(max_pixels.div_ceil(PIXELS_PER_PERMIT).max(1))
            .unwrap_or(most)
            .min(most);
        Self {
            budget: Arc::new(Semaphore::new(size as usize)),
            size,
            turns: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Waits until `user_id` may decode an image of `pixels` pixels: first
    /// for the user's turn (its earlier decodes done), then for that share
    /// of the budget (at most the whole budget). Dropping the future while
    /// it waits gives up the place.
    ///
    /// # Errors
    /// Only if a semaphore were closed, which nothing does.
    pub async fn permit(&self, user_id: &UserId, pixels: u64) -> Result<DecodePermit, AcquireError> {
        let (entry, gate) = {
            let mut turns = self.turns.lock().unwrap_or_else(|e| e.into_inner());
            let turn = turns.entry(user_id.clone()).or_insert_with(|| Turn {
                gate: Arc::new(Semaphore::new(DECODES_PER_USER)),
                users: 0,
            });
            turn.users += 1;
            let entry = TurnEntry {
                turns: Arc::clone(&self.turns),
                user_id: user_id.clone(),
            };
            (entry, Arc::clone(&turn.gate))
        };
        let turn = gate.acquire_owned().await?;
        let wanted = u32::try_from(pixels.div_ceil(PIXELS_PER_PERMIT).max(1))
            .unwrap_or(u32::MAX)
            .min(self.size);
        let budget = Arc::clone(&self.budget).acquire_many_owned(wanted).await?;
        Ok(DecodePermit {
            _budget: budget,
            _turn: turn,
            _entry: entry,
        })
    }

    /// How many users have a decode in progress or waiting.
    pub fn users(&self) -> usize {
        self.turns.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn user(name: &str) -> UserId {
        UserId::parse(name).unwrap()
    }

    /// With the whole budget held, alice queues three decodes of the whole
    /// budget, then bob one small one: bob's is served after alice's first,
    /// not after all three (first come, first served served it last).
    #[tokio::test]
    async fn another_users_decode_waits_behind_one_of_a_busy_users() {
        let budget = Arc::new(DecodeBudget::new(PIXELS_PER_PERMIT * 4));
        let held = budget.permit(&user("holder"), u64::MAX).await.unwrap();
        let (done, mut order) = tokio::sync::mpsc::unbounded_channel();
        let mut tasks = Vec::new();
        for (name, pixels) in [
            ("alice", u64::MAX),
            ("alice", u64::MAX),
            ("alice", u64::MAX),
            ("bob", 1),
        ] {
            let (budget, done) = (Arc::clone(&budget), done.clone());
            tasks.push(tokio::spawn(async move {
                let permit = budget.permit(&user(name), pixels).await.unwrap();
                done.send(name).unwrap();
                tokio::time::sleep(Duration::from_millis(20)).await;
                drop(permit);
            }));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(held);
        for task in tasks {
            task.await.unwrap();
        }
        let mut served = Vec::new();
        while let Ok(name) = order.try_recv() {
            served.push(name);
        }
        assert_eq!(served, ["alice", "bob", "alice", "alice"]);
        assert_eq!(budget.users(), 0, "no turn left for idle users");
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_leaves_no_turn_behind() {
        let budget = DecodeBudget::new(PIXELS_PER_PERMIT);
        let held = budget.permit(&user("holder"), 1).await.unwrap();
        let waited = tokio::time::timeout(Duration::from_millis(20), budget.permit(&user("alice"), 1)).await;
        assert!(waited.is_err(), "served while the budget was held");
        drop(held);
        assert_eq!(budget.users(), 0);
        let again = tokio::time::timeout(Duration::from_secs(1), budget.permit(&user("alice"), 1)).await;
        assert!(again.is_ok(), "the budget came back");
    }
}
