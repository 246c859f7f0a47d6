//! Ownership succession: a group channel whose last owner leaves, is
//! removed, banned, erased or demoted gets a new owner in the same
//! transaction, so a channel with members is never left that only the admin
//! token can manage (the contract is silent; docs/protocol.md §13.1 states
//! the rule). The successor is the moderator who joined earliest, else the
//! member who joined earliest (by `joined_seq`, then `joined_at`, then id:
//! one answer whatever the store).
//!
//! A channel that never had an owner (the admin's `POST /v1/channels`
//! without `owners`) gets none: only the loss of an owner starts it. The
//! former owner is never its own successor: an only member who makes
//! itself a `member` leaves the channel without an owner.

use super::channel_types::MemberEvent;
use super::dialect::{Columns, Dialect, Executes, Params};
use super::error::StoreError;
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};
use crate::protocol::Role;

/// Whether channel `$1` has an owner.
const HAS_OWNER: &str = "SELECT 1 FROM members WHERE channel_id = $1 AND role = 'owner' LIMIT 1";
/// The member of channel `$1` next in line but `$2`: moderators first, then by join.
const NEXT_IN_LINE: &str = "SELECT user_id FROM members WHERE channel_id = $1 AND user_id <> $2 \
     ORDER BY CASE role WHEN 'moderator' THEN 0 ELSE 1 END, joined_seq, joined_at, user_id LIMIT 1";
/// Makes member `$2` of channel `$1` an owner.
const MAKE_OWNER: &str = "UPDATE members SET role = 'owner' WHERE channel_id = $1 AND user_id = $2";

/// Whether `event`, done to a member whose role was `before`, takes an
/// owner away from the channel.
pub(super) fn loses_an_owner(before: Option<Role>, event: MemberEvent) -> bool {
    before == Some(Role::Owner)
        && match event {
            MemberEvent::Leave | MemberEvent::Ban { removed: true } => true,
            MemberEvent::Role(role) => role != Role::Owner,
            MemberEvent::Join(_) | MemberEvent::Mute(_) | MemberEvent::Ban { removed: false } => false,
        }
}

impl<D: Dialect> SqlStore<D> {
    /// When channel `channel_id` has members but no owner left, makes the
    /// one next in line its owner and returns that member's id; `None` when
    /// an owner remains or no member but `former` does. `former`, whose
    /// change took the owner away, is never the successor (an owner who made
    /// itself a member stays one). Run in `tx`, under the channel lock,
    /// after that change.
    ///
    /// # Errors
    /// [`StoreError`] when the database fails.
    pub(super) async fn appoint_successor(
        tx: &mut sqlx::Transaction<'static, D>,
        channel_id: &ChannelId,
        former: &UserId,
    ) -> Result<Option<UserId>, StoreError> {
        let owned = sqlx::query::<D>(HAS_OWNER)
            .param(channel_id.as_str())
            .fetch_optional(tx.ex())
            .await?;
        if owned.is_some() {
            return Ok(None);
        }
        let Some(row) = sqlx::query::<D>(NEXT_IN_LINE)
            .param(channel_id.as_str())
            .param(former.as_str())
            .fetch_optional(tx.ex())
            .await?
        else {
            return Ok(None);
        };
        let successor = UserId::from_trusted(row.value(0)?);
        sqlx::query::<D>(MAKE_OWNER)
            .param(channel_id.as_str())
            .param(successor.as_str())
            .execute(tx.ex())
            .await?;
        Ok(Some(successor))
    }
}
