//! One user's membership changes on this node, judged by the database: a
//! task per user with live sessions here ([`run_membership`]) takes them one
//! at a time, in the order they reach the node, and reads the user's
//! membership of the channel after each:
//!
//! - a change of the node's interest ([`MembershipCmd::Changed`]): the node
//!   takes or gives back the channel for the user as the database has it;
//! - after a NATS reconnect ([`MembershipCmd::Reconcile`]), the user's
//!   channels as the database lists them, taken and told to the sessions
//!   where they differ from what the node held ([`reconcile`]);
//! - a `CHANNEL_ADDED` or `CHANNEL_REMOVED` for the user's sessions
//!   ([`MembershipCmd::Frame`]), from this node or another: sent as it came,
//!   then, when the database says otherwise ([`correction`]), followed by a
//!   frame that says what the database says: a `CHANNEL_ADDED` with the
//!   user's entry read now, or a `CHANNEL_REMOVED` (with the reason of the
//!   last one sent here for the channel, else `deleted` for a channel gone,
//!   else `removed`).
//!
//! Why: one user's changes of one channel made on two nodes (a removal on A,
//! a rejoin on B) reach a third node on two publishers' NATS streams, which
//! NATS does not order between them; a `CHANNEL_REMOVED` that arrives after
//! the rejoin's `CHANNEL_ADDED` left the session believing it was removed
//! (its channel gate dropping the channel's frames) while the database had
//! it as a member. Every frame is read against the database after its
//! change committed, so after the last change's frame (and every later one)
//! the sessions are in the database's state, whatever order the frames came
//! in. The frames themselves are not dropped: a correction only adds one (a
//! removal and a quick rejoin read late may reach a session as
//! `CHANNEL_REMOVED`, `CHANNEL_ADDED`, `CHANNEL_ADDED`), see
//! docs/protocol.md §13.4. Membership changes are rare: one indexed read per
//! frame and node holding the user's sessions (two for a correction);
//! `MSG_RECV` does not come here.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::inner::Inner;
use super::tables::MembershipCmd;
use crate::ids::{ChannelId, UserId};
use crate::protocol::{RemovedReason, ServerFrame};
use crate::store::ChannelPosition;
use crate::view;

impl Inner {
    /// Hands a membership change to the user's membership task (no-op for
    /// a user without local sessions), which applies them one at a time as
    /// the database has them ([`run_membership`]). Changes made on different
    /// nodes arrive here in any order (each node applies its own at once,
    /// the others' come through NATS later), so the event's `add` cannot be
    /// applied as it is: an older removal arriving after a newer add would
    /// end the member's delivery for good.
    pub(super) fn membership(&self, user: &UserId, channel: &ChannelId, add: bool, seq: i64) {
        if let Some(entry) = self.lock().users.get(user) {
            let _ = entry.memberships.send(MembershipCmd::Changed {
                channel: channel.clone(),
                add,
                seq,
            });
        }
    }

    /// A `CHANNEL_ADDED` (`add`) or `CHANNEL_REMOVED` of `channel` for
    /// `user`'s sessions on this node (encoded `text`): through the user's
    /// membership task, after the changes handed to it before: sent, then
    /// followed by what the database says if it says otherwise
    /// ([`run_membership`]). A user without an
    /// entry here (a session between its registration and its join) gets it
    /// at once, as every frame: its HELLO, read later, says the same.
    pub(super) fn membership_frame(
        &self,
        user: &UserId,
        channel: &ChannelId,
        add: bool,
        text: Utf8Bytes,
        type_name: &'static str,
    ) {
        let cmd = MembershipCmd::Frame {
            channel: channel.clone(),
            add,
            text,
            type_name,
        };
        let unsent = match self.lock().users.get(user) {
            Some(entry) => entry.memberships.send(cmd).err().map(|e| e.0),
            None => Some(cmd),
        };
        if let Some(MembershipCmd::Frame { text, type_name, .. }) = unsent {
            self.hub.send_to_user(user, Some(channel), &text, type_name, None);
        }
    }
}

/// What must follow a `CHANNEL_ADDED` (`add`) or `CHANNEL_REMOVED`
/// (`!add`) just sent: `member` is the user's membership of the channel read
/// after the frame's change committed (`None`: the read failed). `None`:
/// nothing (the frame says what the database says, or the database could
/// not tell); `Some(true)`: a `CHANNEL_ADDED`; `Some(false)`: a
/// `CHANNEL_REMOVED`.
pub(super) fn correction(add: bool, member: Option<bool>) -> Option<bool> {
    member.filter(|&member| member != add)
}

/// One user's membership commands, one at a time, in a task of their own so
/// that the database reads never hold up the user's other frames (RECEIPT,
/// `MEMBER`, ...); see the module for the frames.
///
/// The database decides, read after the change committed: every change is
/// followed by its own event, so the last one handled reads the final state,
/// whatever order the events came in. When the read fails, the node keeps (or
/// takes) the channel: delivery goes by each message's own member list, so a
/// channel held for a user who left costs traffic until the user's last
/// session here ends, never a delivery, while one given up for a member would
/// lose that member's messages for good; and a frame is not corrected.
pub(super) async fn run_membership(
    inner: Arc<Inner>,
    user: UserId,
    generation: u64,
    mut cmds: mpsc::UnboundedReceiver<MembershipCmd>,
    stop: CancellationToken,
) {
    // The last `CHANNEL_REMOVED` sent here per channel since its last
    // `CHANNEL_ADDED`: a correction repeats its reason.
    let mut removals: HashMap<ChannelId, Utf8Bytes> = HashMap::new();
    loop {
        let cmd = tokio::select! {
            _ = stop.cancelled() => return,
            cmd = cmds.recv() => match cmd {
                Some(cmd) => cmd,
                None => return,
            },
        };
        match cmd {
            MembershipCmd::Changed { channel, add, seq } => {
                // The floor of a join is the join's own seq from the
                // database, not the event's: a stale event (an earlier join,
                // or a removal) has a lower seq, and catching up from it
                // would hand the member what was stored while it was not one.
                let (member, floor) = match inner.store.member_since(&channel, &user).await {
                    Ok(Some(joined)) => (true, joined),
                    Ok(None) => (false, seq),
                    Err(error) => {
                        tracing::warn!(user_id = %user, channel_id = %channel, add, %error, "cannot read a membership; keeping the channel");
                        (true, seq)
                    }
                };
                inner.set_membership(&user, generation, &channel, member, floor);
            }
            MembershipCmd::Frame {
                channel,
                add,
                text,
                type_name,
            } => {
                inner.hub.send_to_user(&user, Some(&channel), &text, type_name, None);
                if add {
                    removals.remove(&channel);
                } else {
                    removals.insert(channel.clone(), text);
                }
                let member = match inner.store.member_since(&channel, &user).await {
                    Ok(joined) => Some(joined.is_some()),
                    Err(error) => {
                        tracing::warn!(user_id = %user, channel_id = %channel, %error, "cannot read a membership; {type_name} sent as it came");
                        None
                    }
                };
                if let Some(member) = correction(add, member) {
                    correct(&inner, &user, &channel, member, &mut removals).await;
                }
            }
            MembershipCmd::Reconcile => reconcile(&inner, &user, generation, &mut removals).await,
        }
    }
}

/// NATS came back. The frames of this user's changes made on other nodes
/// while it was away may be lost (published into the outage, or sent by a
/// node that reconnected before this one had resubscribed), so the node
/// and the sessions are brought to the user's channels as the database
/// lists them, read once: a channel the node did not hold for the user is
/// taken and told to the sessions (`CHANNEL_ADDED` with the entry just
/// read; the channel's frames that came first were held by each session's
/// gate for it), one the node held and the database no longer lists is
/// given back and told (`CHANNEL_REMOVED`, reason `deleted` for a channel
/// gone, else the last one sent here, else `removed`). A session's gate
/// drops a frame that tells it nothing new. `MEMBER` frames lost in the
/// outage are not replayed (the members route has the list).
async fn reconcile(inner: &Arc<Inner>, user: &UserId, generation: u64, removals: &mut HashMap<ChannelId, Utf8Bytes>) {
    let states = match inner.store.channel_states(user).await {
        Ok(states) => states,
        Err(error) => {
            tracing::warn!(user_id = %user, %error, "cannot re-read a user's channels after a NATS reconnect");
            return;
        }
    };
    let Some(held) = inner.held_channels(user, generation) else {
        return;
    };
    let listed: HashSet<&ChannelId> = states.iter().map(|s| &s.channel_id).collect();
    let gone: Vec<ChannelId> = held.iter().filter(|c| !listed.contains(c)).cloned().collect();
    let new: Vec<&ChannelPosition> = states.iter().filter(|s| !held.contains(&s.channel_id)).collect();
    let _ = inner.add_channels(user, generation, new.iter().map(|s| s.channel_id.clone()).collect());
    for position in new {
        removals.remove(&position.channel_id);
        let frame = ServerFrame::ChannelAdded {
            channel: view::channel_state(position),
        };
        let text = Utf8Bytes::from(frame.encode());
        inner
            .hub
            .send_to_user(user, Some(&position.channel_id), &text, "CHANNEL_ADDED", None);
    }
    for channel in gone {
        inner.set_membership(user, generation, &channel, false, 0);
        correct(inner, user, &channel, false, removals).await;
    }
}

/// Sends `user`'s sessions here a frame that says what the database says
/// of its membership of `channel` (`member`), after one that said otherwise.
async fn correct(
    inner: &Inner,
    user: &UserId,
    channel: &ChannelId,
    member: bool,
    removals: &mut HashMap<ChannelId, Utf8Bytes>,
) {
    let (text, type_name) = if member {
        // The user's entry now; `None`: removed again since the read, and
        // that removal's own frame is on its way.
        let position = match inner.store.channel_state(user, channel).await {
            Ok(Some(position)) => position,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(user_id = %user, channel_id = %channel, %error, "cannot read a channel entry; no CHANNEL_ADDED after a stale CHANNEL_REMOVED");
                return;
            }
        };
        removals.remove(channel);
        let frame = ServerFrame::ChannelAdded {
            channel: view::channel_state(&position),
        };
        (Utf8Bytes::from(frame.encode()), "CHANNEL_ADDED")
    } else {
        let text = match removals.get(channel) {
            Some(text) => text.clone(),
            None => {
                let reason = match inner.store.channel(channel).await {
                    Ok(None) => RemovedReason::Deleted,
                    Ok(Some(_)) | Err(_) => RemovedReason::Removed,
                };
                let frame = ServerFrame::ChannelRemoved {
                    channel_id: channel.as_str().to_owned(),
                    reason: Some(reason),
                };
                Utf8Bytes::from(frame.encode())
            }
        };
        (text, "CHANNEL_REMOVED")
    };
    tracing::debug!(user_id = %user, channel_id = %channel, "membership frame out of date on arrival; {type_name} after it");
    inner.hub.send_to_user(user, Some(channel), &text, type_name, None);
}

#[cfg(test)]
mod tests {
    use super::correction;

    #[test]
    fn a_frame_the_database_contradicts_is_followed_by_what_it_says() {
        // A rejoin committed after this removal: a CHANNEL_ADDED follows.
        assert_eq!(correction(false, Some(true)), Some(true));
        // A removal committed after this add: a CHANNEL_REMOVED follows.
        assert_eq!(correction(true, Some(false)), Some(false));
    }

    #[test]
    fn a_frame_the_database_agrees_with_needs_nothing_after_it() {
        assert_eq!(correction(true, Some(true)), None);
        assert_eq!(correction(false, Some(false)), None);
    }

    #[test]
    fn a_frame_goes_out_as_it_came_when_the_database_cannot_be_read() {
        assert_eq!(correction(true, None), None);
        assert_eq!(correction(false, None), None);
    }
}
