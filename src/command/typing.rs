//! `TYPING`: a member starts or stops typing in a channel. Never stored,
//! never answered unless refused; forwarded (throttled) to the sessions of
//! the channel's other members on every node ([`crate::delivery::Delivery::typing`]).
//!
//! The membership check reads the channel's members from a cache of this
//! node ([`crate::delivery::ephemeral::MEMBERS_FRESH`]), or the database's
//! read pool when it is cold: never the commit path.

use std::sync::Arc;

use super::Context;
use crate::delivery::ephemeral::TypingDecision;
use crate::ids::{now_ms, ChannelId, UserId};
use crate::permissions::{self, Action, Actor};
use crate::protocol::{ErrorCode, ErrorFrame};
use crate::view;

/// Applies a TYPING frame (`start`, else stop) of the session's user in
/// `channel_id`. A channel over `typing_max_members` members, a `start`
/// within `typing_throttle_ms` of the last one forwarded, and a `stop` with
/// no `start` in force are dropped silently.
///
/// # Errors
/// The ERROR to answer, with `channelId`: `forbidden` for an unknown channel
/// or a non-member, `forbidden` with `reason` `muted` and `retryAfterMs`
/// for a muted member (§17), or the store's error (`unavailable`) when the members
/// could not be read.
pub async fn run(ctx: Context<'_>, channel_id: ChannelId, start: bool) -> Result<(), ErrorFrame> {
    let with_channel = |mut frame: ErrorFrame| {
        frame.channel_id = Some(channel_id.as_str().to_owned());
        frame
    };
    let delivery = &ctx.state.delivery;
    let ephemeral = delivery.ephemeral();
    let members = match ephemeral.cached_members(&channel_id) {
        Some(members) => members,
        None => {
            let channel = ctx
                .state
                .store
                .channel(&channel_id)
                .await
                .map_err(|e| with_channel(view::store_error(&e)))?;
            let members: Arc<[UserId]> = channel.map(|c| c.members).unwrap_or_default().into();
            ephemeral.cache_members(&channel_id, members.clone());
            members
        }
    };
    let user = &ctx.user.user_id;
    let member = members.binary_search(user).is_ok();
    if permissions::may(Actor::user(member), Action::Type).is_err() {
        return Err(with_channel(ErrorFrame::new(
            ErrorCode::Forbidden,
            "not a member of this channel",
        )));
    }
    // A muted member's TYPING is refused like its sends (§17); the mutes
    // are cached with the members.
    let mutes = match ephemeral.cached_mutes(&channel_id) {
        Some(mutes) => mutes,
        None => {
            let mutes: Arc<[(UserId, i64)]> = ctx
                .state
                .store
                .muted_members(&channel_id)
                .await
                .map_err(|e| with_channel(view::store_error(&e)))?
                .into();
            ephemeral.cache_mutes(&channel_id, mutes.clone());
            mutes
        }
    };
    let now = now_ms();
    if let Some((_, until)) = mutes.iter().find(|(u, until)| u == user && *until > now) {
        let mut frame = ErrorFrame::new(ErrorCode::Forbidden, "you are muted in this channel");
        frame.reason = Some("muted".to_owned());
        frame.retry_after_ms = Some(u64::try_from(until - now).unwrap_or(1).max(1));
        return Err(with_channel(frame));
    }
    if members.len() > ephemeral.settings().typing_max_members {
        return Ok(());
    }
    if let TypingDecision::Forward(state, expires_at) = ephemeral.typing(user, &channel_id, start, &members) {
        delivery.typing(&channel_id, user, state, expires_at, &members);
    }
    Ok(())
}
