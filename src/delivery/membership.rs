//! How membership changes reach the sessions (§13.3): `CHANNEL_ADDED` to a
//! new member, `MEMBER` to the channel's members and the user concerned,
//! `CHANNEL_REMOVED` to a user who is no longer in a channel, on every node;
//! and, with NATS, the nodes holding the user's sessions start or stop
//! carrying the channel for them ([`Delivery::membership_changed`]).
//!
//! Order for the user concerned, on every node: `CHANNEL_ADDED`, then the
//! channel's frames; or the channel's frames, `MEMBER` `leave`, then
//! `CHANNEL_REMOVED`, then nothing more of it. On one node the channel's
//! commit task gives that order ([`crate::commit::membership`]); across
//! nodes, a user's frames travel on the user's NATS subject in the order
//! they were published, and the node starts carrying the channel only after
//! the membership event that follows `CHANNEL_ADDED` there.

use axum::extract::ws::Utf8Bytes;

use super::Delivery;
use crate::ids::{ChannelId, UserId};
use crate::protocol::{MemberFrame, MemberOp, RemovedReason, Role, ServerFrame};
use crate::store::{Channel, ChannelPosition, ChannelSettings, MemberEvent, MembershipChange, MembershipOutcome};
use crate::view;

impl Delivery {
    /// A membership change was stored (by `by`; `None`: the admin token):
    /// announced as §13.3 says, in the order the module describes. Nothing
    /// when it changed nothing.
    pub fn membership_committed(
        &self,
        channel: &ChannelId,
        user: &UserId,
        change: MembershipChange,
        by: Option<&UserId>,
        outcome: &MembershipOutcome,
    ) {
        let Some(event) = outcome.event else { return };
        // A user's own join or leave is its own act.
        let actor = match change {
            MembershipChange::Join | MembershipChange::Leave => Some(user),
            MembershipChange::Add(_)
            | MembershipChange::Remove
            | MembershipChange::Mute(_)
            | MembershipChange::Ban
            | MembershipChange::Erase => by,
        };
        let (op, role, muted_until) = match event {
            MemberEvent::Join(role) => (MemberOp::Join, Some(role), None),
            MemberEvent::Leave => (MemberOp::Leave, None, None),
            MemberEvent::Role(role) => (MemberOp::Role, Some(role), None),
            MemberEvent::Mute(until) => (MemberOp::Mute, None, Some(until)),
            MemberEvent::Ban { .. } => (MemberOp::Ban, None, None),
        };
        let member = encode(&ServerFrame::Member(MemberFrame {
            channel_id: channel.as_str().to_owned(),
            user_id: user.as_str().to_owned(),
            op,
            role,
            muted_until,
            actor_id: actor.map(|a| a.as_str().to_owned()),
            after_seq: outcome.after_seq,
            ts: outcome.ts,
        }));
        match event {
            MemberEvent::Join(_) => {
                if let Some(position) = &outcome.added {
                    self.channel_added(user, position);
                }
                self.membership_changed(user, channel, true, outcome.after_seq);
                self.frame_to_users(&outcome.members, channel, &member, "MEMBER");
                self.sharing_may_have_started(std::slice::from_ref(user));
            }
            MemberEvent::Role(_) => self.frame_to_users(&outcome.members, channel, &member, "MEMBER"),
            MemberEvent::Mute(_) => {
                // TYPING reads mutes with the members: forget both.
                self.ephemeral().forget_members(channel);
                self.frame_to_users(&outcome.members, channel, &member, "MEMBER");
            }
            // Only the ban is new: the members (moderators keep the list).
            MemberEvent::Ban { removed: false } => self.frame_to_users(&outcome.members, channel, &member, "MEMBER"),
            MemberEvent::Ban { removed: true } => {
                self.sharing_may_have_ended(std::slice::from_ref(user));
                self.frame_to_users(&outcome.members, channel, &member, "MEMBER");
                self.frame_to_users(std::slice::from_ref(user), channel, &member, "MEMBER");
                self.membership_changed(user, channel, false, outcome.after_seq);
                self.frame_to_users(
                    std::slice::from_ref(user),
                    channel,
                    &removed(channel, RemovedReason::Banned),
                    "CHANNEL_REMOVED",
                );
            }
            MemberEvent::Leave => {
                self.sharing_may_have_ended(std::slice::from_ref(user));
                self.frame_to_users(&outcome.members, channel, &member, "MEMBER");
                self.frame_to_users(std::slice::from_ref(user), channel, &member, "MEMBER");
                self.membership_changed(user, channel, false, outcome.after_seq);
                let reason = match change {
                    MembershipChange::Leave => RemovedReason::Left,
                    _ => RemovedReason::Removed,
                };
                self.frame_to_users(
                    std::slice::from_ref(user),
                    channel,
                    &removed(channel, reason),
                    "CHANNEL_REMOVED",
                );
            }
        }
        if let Some(successor) = &outcome.successor {
            // Made owner by the server (no actor), after the change that
            // took the last owner away, at the same `afterSeq`.
            let promoted = encode(&ServerFrame::Member(MemberFrame {
                channel_id: channel.as_str().to_owned(),
                user_id: successor.as_str().to_owned(),
                op: MemberOp::Role,
                role: Some(Role::Owner),
                muted_until: None,
                actor_id: None,
                after_seq: outcome.after_seq,
                ts: outcome.ts,
            }));
            self.frame_to_users(&outcome.members, channel, &promoted, "MEMBER");
        }
    }

    /// `channel` was just created: each member gets `CHANNEL_ADDED` (its
    /// role: `owner` for those in `owners`, else `member`) on every live
    /// session, and, with NATS, the nodes holding its sessions start
    /// carrying the channel for it; presence subscriptions of and to its
    /// members are judged again ([`Delivery::sharing_may_have_started`]).
    pub fn channel_created(&self, channel: &Channel, owners: &[UserId]) {
        for member in &channel.members {
            let role = if owners.contains(member) {
                Role::Owner
            } else {
                Role::Member
            };
            self.channel_added(member, &ChannelPosition::new_member(channel, role));
            self.membership_changed(member, &channel.channel_id, true, channel.last_seq);
        }
        self.sharing_may_have_started(&channel.members);
    }

    /// `channel` was deleted with these `members`: every live session of
    /// each member, on every node, gets `CHANNEL_REMOVED` (`reason`
    /// `deleted`), and the channel's delivery stops for them (with NATS, as
    /// when they leave it, first, so a node has forgotten the channel's
    /// members, TYPING refused, before a member reads the frame). The
    /// channel's cached members are forgotten, so a TYPING in it is refused
    /// at once, not after [`super::ephemeral::MEMBERS_FRESH`].
    pub fn channel_removed(&self, channel: &ChannelId, members: &[UserId]) {
        self.ephemeral().forget_members(channel);
        let text = removed(channel, RemovedReason::Deleted);
        self.sharing_may_have_ended(members);
        for member in members {
            self.membership_changed(member, channel, false, 0);
        }
        self.frame_to_users(members, channel, &text, "CHANNEL_REMOVED");
    }

    /// `CHANNEL_SETTINGS` (§16) with `user`'s new `settings` in `channel`
    /// to every live session of `user`, on every node.
    pub fn settings_changed(&self, user: &UserId, channel: &ChannelId, settings: &ChannelSettings) {
        let frame = encode(&ServerFrame::ChannelSettings {
            channel_id: channel.as_str().to_owned(),
            notify: settings.notify,
            snooze_until: settings.snooze_until,
        });
        self.frame_to_users(std::slice::from_ref(user), channel, &frame, "CHANNEL_SETTINGS");
    }

    /// `channel`'s shared settings changed: `CHANNEL_UPDATED` with them to
    /// every live session of its members, on every node.
    pub fn channel_updated(&self, channel: &Channel) {
        let frame = encode(&ServerFrame::ChannelUpdated {
            channel_id: channel.channel_id.as_str().to_owned(),
            name: channel.name.clone(),
            metadata: view::metadata(channel.metadata.as_deref()),
            visibility: channel.visibility,
            posting_role: channel.posting_role,
            slow_mode_ms: channel.slow_mode_ms,
            retention_secs: channel.retention_secs,
        });
        self.frame_to_users(&channel.members, &channel.channel_id, &frame, "CHANNEL_UPDATED");
    }

    /// `CHANNEL_ADDED` with `position` to every live session of `user`, on every node.
    fn channel_added(&self, user: &UserId, position: &ChannelPosition) {
        let frame = encode(&ServerFrame::ChannelAdded {
            channel: view::channel_state(position),
        });
        self.frame_to_users(
            std::slice::from_ref(user),
            &position.channel_id,
            &frame,
            "CHANNEL_ADDED",
        );
    }

    /// Queues an encoded frame of `channel` to every live session of each
    /// of `users`, on this node and (with NATS) on the others, in call order
    /// per user, through each session's channel gate
    /// ([`crate::channel_gate`]).
    fn frame_to_users(&self, users: &[UserId], channel: &ChannelId, text: &Utf8Bytes, type_name: &'static str) {
        match self {
            Delivery::Local(hub) => hub.send_to_users(users, channel, text, type_name, None),
            Delivery::Nats(cluster) => cluster.frame_to_users(users, channel, text, type_name),
        }
    }
}

fn encode(frame: &ServerFrame) -> Utf8Bytes {
    Utf8Bytes::from(frame.encode())
}

fn removed(channel: &ChannelId, reason: RemovedReason) -> Utf8Bytes {
    encode(&ServerFrame::ChannelRemoved {
        channel_id: channel.as_str().to_owned(),
        reason: Some(reason),
    })
}
