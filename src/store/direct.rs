//! Direct channels: the one channel of a pair of users, found by its pair
//! (a unique index, not a scan) and made once however many ask at once.

use super::channel_types::{Channel, NewChannel};
use super::dialect::{Columns, Dialect, Executes, Params};
use super::error::StoreError;
use super::handle::{dispatch, Store};
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};
use crate::protocol::{ChannelKind, Visibility};

/// The id of the direct channel of pair `$1`.
const DIRECT_BY_PAIR: &str = "SELECT channel_id FROM channels WHERE direct_pair = $1";
/// Whether users `$1` and `$2` are both members of one group channel.
const SHARE_A_GROUP: &str = "SELECT 1 FROM members m JOIN members o ON o.channel_id = m.channel_id \
     JOIN channels c ON c.channel_id = m.channel_id \
     WHERE m.user_id = $1 AND o.user_id = $2 AND c.kind = 'group' LIMIT 1";

/// The pair of `a` and `b` as the `direct_pair` column holds it: the two ids
/// in byte order with a space between them (a space is in no user id), so
/// either side names the same pair.
pub(super) fn pair_key(a: &UserId, b: &UserId) -> String {
    let (first, second) = if a <= b { (a, b) } else { (b, a) };
    format!("{} {}", first.as_str(), second.as_str())
}

impl Store {
    /// The direct channel of `a` and `b` (`a` alone when they are the same
    /// user), or `None` when none was made.
    pub async fn find_direct(&self, a: &UserId, b: &UserId) -> Result<Option<Channel>, StoreError> {
        let pair = pair_key(a, b);
        let Some(id) = self.read(async { dispatch!(self.direct_by_pair(&pair)) }).await? else {
            return Ok(None);
        };
        self.channel(&id).await
    }

    /// The direct channel of `a` and `b`, made now (a private channel of
    /// kind `direct`, its members the two users) unless one exists: the
    /// channel, and whether this call made it. Two calls racing, on any
    /// nodes, make one channel: the loser finds the winner's.
    ///
    /// # Errors
    /// The store's error.
    pub async fn open_direct(&self, a: &UserId, b: &UserId, now: i64) -> Result<(Channel, bool), StoreError> {
        if let Some(channel) = self.find_direct(a, b).await? {
            return Ok((channel, false));
        }
        let mut members = vec![a.clone(), b.clone()];
        members.dedup();
        let new = NewChannel {
            members,
            owners: Vec::new(),
            kind: ChannelKind::Direct,
            visibility: Visibility::Private,
            name: None,
            direct_pair: Some(pair_key(a, b)),
        };
        match self.create_channel_as(&ChannelId::generate(), &new, now).await {
            Ok(channel) => Ok((channel, true)),
            Err(StoreError::Exists) => {
                let channel = self.find_direct(a, b).await?.ok_or(StoreError::NotFound)?;
                Ok((channel, false))
            }
            Err(other) => Err(other),
        }
    }

    /// Whether `a` and `b` are both members of one group channel
    /// (`dm_policy = "shared_channel"`).
    pub async fn share_a_group(&self, a: &UserId, b: &UserId) -> Result<bool, StoreError> {
        self.read(async { dispatch!(self.share_a_group(a, b)) }).await
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn direct_by_pair(&self, pair: &str) -> Result<Option<ChannelId>, StoreError> {
        let row = sqlx::query::<D>(DIRECT_BY_PAIR)
            .param(pair)
            .fetch_optional(self.reader().await?.ex())
            .await?;
        Ok(row.map(|row| row.value(0).map(ChannelId::from_trusted)).transpose()?)
    }

    pub(super) async fn share_a_group(&self, a: &UserId, b: &UserId) -> Result<bool, StoreError> {
        let row = sqlx::query::<D>(SHARE_A_GROUP)
            .param(a.as_str())
            .param(b.as_str())
            .fetch_optional(self.reader().await?.ex())
            .await?;
        Ok(row.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_side_names_the_same_pair() {
        let alice = UserId::parse("alice").expect("id");
        let bob = UserId::parse("Bob").expect("id");
        assert_eq!(pair_key(&alice, &bob), "Bob alice");
        assert_eq!(pair_key(&bob, &alice), "Bob alice");
        assert_eq!(pair_key(&alice, &alice), "alice alice");
    }
}
