//! `PRESENCE_SUB`: replaces the session's presence subscription and answers
//! with one PRESENCE per listed id (the snapshot), then one per change
//! ([`crate::delivery::ephemeral::Ephemeral::subscribe`]).
//!
//! Only users who share a channel with the subscriber and do not block it
//! are shown ([`sharing::shown_among`], one read of the members table and
//! one of the blocks per PRESENCE_SUB); any other id is `offline` with no
//! `lastSeenAt`, so presence tells nothing about strangers. Which users are
//! shown is decided at the PRESENCE_SUB, and judged again, within about a
//! second, when a membership of the subscriber or of a requested user ends
//! or starts: a user who no longer shares a channel is then shown `offline`
//! and reported no more
//! ([`crate::delivery::Delivery::sharing_may_have_ended`]); a hidden user
//! who starts sharing one (and does not block the subscriber) gets its
//! current presence and is reported from then on
//! ([`crate::delivery::Delivery::sharing_may_have_started`]). A block made
//! later hides the blocker at once
//! ([`crate::delivery::Delivery::user_blocked`]); an unblock is judged as a
//! start.

use super::Context;
use crate::delivery::sharing;
use crate::ids::UserId;
use crate::protocol::{check_presence_count, ErrorFrame};
use crate::view;

/// Applies a PRESENCE_SUB listing `user_ids` (validated, repeats removed).
///
/// # Errors
/// The ERROR to answer: `invalid_field` (`userIds`) for more than
/// `max_presence_subscriptions` ids, or the store's error (`unavailable`)
/// when memberships could not be read; the old subscription then stays.
pub async fn run(ctx: Context<'_>, user_ids: Vec<UserId>) -> Result<(), ErrorFrame> {
    check_presence_count(user_ids.len(), ctx.state.config.max_presence_subscriptions)
        .map_err(|e| e.to_error_frame())?;
    let store = &ctx.state.store;
    let me = &ctx.user.user_id;
    let others: Vec<UserId> = user_ids.iter().filter(|u| *u != me).cloned().collect();
    let mut visible = sharing::shown_among(store, me, &others)
        .await
        .map_err(|e| view::store_error(&e))?;
    if user_ids.contains(me) {
        visible.insert(me.clone());
    }
    let ephemeral = ctx.state.delivery.ephemeral();
    let shown: Vec<UserId> = user_ids.iter().filter(|u| visible.contains(*u)).cloned().collect();
    let unknown = ephemeral.unknown_last_seen(&shown);
    let stored = store.last_seen(&unknown).await.map_err(|e| view::store_error(&e))?;
    ephemeral.subscribe(ctx.session, &user_ids, &visible, &stored);
    Ok(())
}
