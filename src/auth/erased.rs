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
    /// Records `user`'s watermark `at` (ms); a lower one than held is ignored.
    pub fn record(&self, user: &UserId, at: i64) {
        let mut map = self.watermarks.write().unwrap_or_else(|e| e.into_inner());
        let held = map.entry(user.clone()).or_insert(at);
        *held = (*held).max(at);
    }

    /// Records every watermark of `rows` ([`Self::record`] each).
    pub fn record_all(&self, rows: &[(UserId, i64)]) {
        for (user, at) in rows {
            self.record(user, *at);
        }
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
}
