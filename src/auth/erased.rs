//! Erased users' watermarks (protocol.md §19): a token for a user issued
//! before the user's erasure (by `iat`; a token without a usable `iat`
//! counts as issued before) is refused. This node's copy of the
//! `user_erasures` watermarks: written when this node erases a user, and
//! read again from the database by `crate::erasure` (at start, and every
//! [`crate::erasure::REFRESH`] on PostgreSQL, where other nodes erase too).

use std::collections::HashMap;
use std::sync::RwLock;

use crate::ids::UserId;

/// Each erased user's watermark, ms since the Unix epoch.
#[derive(Debug, Default)]
pub struct ErasedUsers {
    watermarks: RwLock<HashMap<UserId, i64>>,
}

impl ErasedUsers {
    /// Records `user`'s watermark `at` (ms); a lower one than held is
    /// ignored. Returns whether the held watermark rose (or is new).
    pub fn record(&self, user: &UserId, at: i64) -> bool {
        let mut map = self.watermarks.write().unwrap_or_else(|e| e.into_inner());
        match map.get_mut(user) {
            Some(held) if *held >= at => false,
            Some(held) => {
                *held = at;
                true
            }
            None => {
                map.insert(user.clone(), at);
                true
            }
        }
    }

    /// Records every watermark of `rows` ([`Self::record`] each); returns
    /// the users whose watermark rose (erased, or erased again, since the
    /// last read), whose live sessions may now be refused.
    pub fn record_all(&self, rows: &[(UserId, i64)]) -> Vec<UserId> {
        rows.iter()
            .filter(|(user, at)| self.record(user, *at))
            .map(|(user, _)| user.clone())
            .collect()
    }

    /// `user`'s watermark (ms since the Unix epoch), if it was ever erased.
    /// It only moves up: a new erasure, and the end of one, raise it.
    pub fn watermark(&self, user: &UserId) -> Option<i64> {
        let map = self.watermarks.read().unwrap_or_else(|e| e.into_inner());
        map.get(user).copied()
    }

    /// Whether a token for `user` issued at `issued_at_ms` (`None`: no
    /// usable `iat`) is refused: the user was erased after it was issued.
    pub fn refuses(&self, user: &UserId, issued_at_ms: Option<u64>) -> bool {
        let map = self.watermarks.read().unwrap_or_else(|e| e.into_inner());
        match (map.get(user), issued_at_ms) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(&erased_at), Some(iat)) => i64::try_from(iat).unwrap_or(i64::MAX) < erased_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_tokens_issued_before_the_watermark() {
        let erased = ErasedUsers::default();
        let alice = UserId::parse("alice").unwrap();
        let bob = UserId::parse("bob").unwrap();
        assert!(!erased.refuses(&alice, None), "never erased");
        erased.record(&alice, 5_000);
        assert!(erased.refuses(&alice, Some(4_000)));
        assert!(erased.refuses(&alice, None), "no iat counts as before");
        assert!(!erased.refuses(&alice, Some(5_000)));
        assert!(!erased.refuses(&bob, Some(0)));
        erased.record(&alice, 3_000);
        assert!(erased.refuses(&alice, Some(4_000)), "a watermark never goes back");
        erased.record_all(&[(alice.clone(), 9_000)]);
        assert!(erased.refuses(&alice, Some(8_000)));
        assert_eq!(erased.watermark(&alice), Some(9_000));
        assert_eq!(erased.watermark(&bob), None);
    }

    #[test]
    fn a_read_of_the_watermarks_names_the_users_whose_watermark_rose() {
        let erased = ErasedUsers::default();
        let alice = UserId::parse("alice").unwrap();
        let bob = UserId::parse("bob").unwrap();
        assert!(erased.record(&alice, 5_000), "new");
        assert!(!erased.record(&alice, 5_000), "the same");
        assert!(!erased.record(&alice, 3_000), "lower");
        assert_eq!(
            erased.record_all(&[(alice.clone(), 9_000), (bob.clone(), 1), (bob.clone(), 1)]),
            vec![alice.clone(), bob.clone()],
            "raised and new, once each"
        );
        assert_eq!(erased.record_all(&[(alice, 9_000), (bob, 1)]), Vec::<UserId>::new());
    }
}
