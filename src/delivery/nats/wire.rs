//! What travels between nodes: NATS subjects and payloads.
//!
//! Subjects (interest-based: a node subscribes only to what its own sessions
//! need):
//! - `<prefix>.c.<enc(channelId)>`: what happens in one channel, in its
//!   order, as a [`ChannelEnvelope`]: its committed messages, and its
//!   TYPING frames, each behind the messages its typer's node knew of (so
//!   one publisher's typing never overtakes its messages);
//! - `<prefix>.u.<enc(userId)>`: what is addressed to one user, as a
//!   [`UserEnvelope`] (RECEIPT frames, membership changes);
//! - `<prefix>.p`: presence between nodes, as a [`PresenceEnvelope`]
//!   (heartbeats, users held and released, a node leaving); every node
//!   subscribes;
//! - `<prefix>.ping`: never subscribed; a request to it comes back at once as
//!   "no responders", which proves the server has processed every earlier
//!   subscription of this connection.
//!
//! Payloads are JSON. Unknown fields are ignored, so a newer node can add some.

use serde::{Deserialize, Serialize};

use crate::ids::{ChannelId, UserId};
use crate::protocol::RecvMessage;

/// Encodes a `userId` or `channelId` (`[A-Za-z0-9._:@-]{1,128}`) as one NATS
/// subject token: `_` becomes `__` and `.` becomes `_d`, so the encoding is
/// injective and the token has no `.` (the token separator), no whitespace and
/// no wildcard.
pub fn encode_token(id: &str) -> String {
    let mut out = String::with_capacity(id.len() + 4);
    for c in id.chars() {
        match c {
            '_' => out.push_str("__"),
            '.' => out.push_str("_d"),
            c => out.push(c),
        }
    }
    out
}

/// `<prefix>.c.<enc(channel)>`: the subject of a channel's committed messages.
pub fn channel_subject(prefix: &str, channel: &ChannelId) -> String {
    format!("{prefix}.c.{}", encode_token(channel.as_str()))
}

/// `<prefix>.u.<enc(user)>`: the subject of what is addressed to one user.
pub fn user_subject(prefix: &str, user: &UserId) -> String {
    format!("{prefix}.u.{}", encode_token(user.as_str()))
}

/// `<prefix>.p`: the subject of presence between nodes.
pub fn presence_subject(prefix: &str) -> String {
    format!("{prefix}.p")
}

/// `<prefix>.ping`: the subject of the round trip that confirms subscriptions.
pub fn ping_subject(prefix: &str) -> String {
    format!("{prefix}.ping")
}

/// What travels on `<prefix>.c.<channel>`: a committed message (`message`,
/// with `members`) or a TYPING frame (`typing`), one of the two.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelEnvelope {
    /// The message as clients see it in MSG_RECV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<RecvMessage>,
    /// The channel's members read in the transaction that stored the message:
    /// the recipients on every node. Absent when the list would not fit in
    /// one NATS message; receivers then read the current members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<String>>,
    /// A TYPING frame of the channel (no `message` then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typing: Option<TypingEnvelope>,
}

impl ChannelEnvelope {
    /// The envelope of a committed message for `members`.
    pub fn message(message: RecvMessage, members: Option<Vec<String>>) -> Self {
        Self {
            message: Some(message),
            members,
            typing: None,
        }
    }

    /// The envelope of a TYPING frame.
    pub fn typing(typing: TypingEnvelope) -> Self {
        Self {
            message: None,
            members: None,
            typing: Some(typing),
        }
    }
}

/// Something addressed to one user, on `<prefix>.u.<user>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum UserEnvelope {
    /// An encoded server frame of a channel for every session of the user
    /// (`MEMBER`, `CHANNEL_ADDED`, `CHANNEL_REMOVED`, `CHANNEL_UPDATED`,
    /// `CHANNEL_SETTINGS`).
    #[serde(rename_all = "camelCase")]
    Frame {
        /// The frame's `type`.
        frame_type: String,
        /// The frame's channel, for the sessions' channel gates
        /// ([`crate::channel_gate`]); absent from a node older than the
        /// gate, whose frames go out as they come.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        channel_id: Option<String>,
        /// The frame as sent on the WebSocket.
        text: String,
    },
    /// A RECEIPT for every session of the user, with the watermark it
    /// carries, so each node can drop one below what a session already got.
    #[serde(rename_all = "camelCase")]
    Receipt {
        /// The watermark's channel.
        channel_id: String,
        /// Whose watermark moved.
        owner: String,
        /// `read` (true) or `delivered`.
        read: bool,
        /// The watermark's new seq.
        seq: i64,
        /// The RECEIPT frame as sent on the WebSocket.
        text: String,
    },
    /// The user joined (`add`) or left a channel; `seq` is the channel's
    /// last seq when the change committed (messages after it saw it).
    #[serde(rename_all = "camelCase")]
    Membership {
        /// The channel.
        channel_id: String,
        /// Joined (`true`) or left.
        add: bool,
        /// The channel's `lastSeq` at the change.
        seq: i64,
    },
    /// The user is now blocked by `blocker` (§17): its sessions stop
    /// watching the blocker's presence and see it `offline`.
    #[serde(rename_all = "camelCase")]
    Blocked {
        /// Who blocks the user.
        blocker: String,
    },
    /// The user was erased (§19): every session of it closes with 1008.
    Erased,
}

/// A TYPING frame on `<prefix>.c.<channel>` (in a [`ChannelEnvelope`]): for
/// every session of every member but the typer, once the receiving node has
/// handed out the channel's messages up to `after`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypingEnvelope {
    /// Who types (none of their sessions gets it).
    pub typer: String,
    /// The frame as sent on the WebSocket.
    pub text: String,
    /// The channel's members as the typer's node read them (at most
    /// `typing_max_members`).
    pub members: Vec<String>,
    /// The highest seq of the channel the typer's node knew when it sent the
    /// frame (for a message's `stop`, at least that message's): receivers
    /// hand the frame out only after their copy of that seq.
    #[serde(default)]
    pub after: i64,
}

/// Presence between nodes, on `<prefix>.p`. `node` is the sender's id,
/// random at every start of a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PresenceEnvelope {
    /// Every user the node holds (a session open, or closed less than
    /// `presence_grace_ms` ago), sent every third of `presence_ttl_ms`, in
    /// several messages when there are many. An entry not refreshed within
    /// `presence_ttl_ms` expires: that is how a dead node's users go offline.
    #[serde(rename_all = "camelCase")]
    Heartbeat {
        /// The sender.
        node: String,
        /// Users it holds.
        users: Vec<String>,
        /// Those of `users` with no open session there (in their grace
        /// period). Listed in `users` too, so a node that does not know this
        /// field keeps them online; absent when empty.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        idle: Vec<String>,
    },
    /// The node holds a user it did not hold before (a first session).
    #[serde(rename_all = "camelCase")]
    Held {
        /// The sender.
        node: String,
        /// The user.
        user: String,
    },
    /// The user's last session on the node closed: the node holds it
    /// through its grace period (still online) with no session (webhooks'
    /// `offlineMembers` count it offline). A first session again is a `held`.
    #[serde(rename_all = "camelCase")]
    Idle {
        /// The sender.
        node: String,
        /// The user.
        user: String,
    },
    /// The node let go of a user (its grace period ended).
    #[serde(rename_all = "camelCase")]
    Released {
        /// The sender.
        node: String,
        /// The user.
        user: String,
        /// When the user's last session there closed, ms.
        last_seen_at: i64,
    },
    /// The node is shutting down: its users' entries live at most another
    /// `presence_grace_ms` (they are reconnecting elsewhere).
    #[serde(rename_all = "camelCase")]
    Leaving {
        /// The sender.
        node: String,
    },
    /// A membership of each of `users` ended (or a channel of theirs was
    /// deleted), committed by the sender: every node judges again the
    /// presence subscriptions that watch them or are theirs
    /// ([`crate::delivery::ephemeral::Ephemeral::sharing_may_have_ended`]).
    /// A node older than this variant logs it as undecodable and keeps
    /// reporting them until the subscription is renewed.
    #[serde(rename_all = "camelCase")]
    Unshared {
        /// The sender.
        node: String,
        /// The users concerned.
        users: Vec<String>,
    },
    /// A membership of each of `users` started (an add, a join, a rejoin, a
    /// new channel), or one of them unblocked someone, committed by the
    /// sender: every node judges again the presence subscriptions that
    /// requested them (hidden) or are theirs
    /// ([`crate::delivery::ephemeral::Ephemeral::sharing_may_have_started`]).
    /// A node older than this variant logs it as undecodable (debug) and
    /// shows them from the subscriber's next PRESENCE_SUB, as it did before.
    #[serde(rename_all = "camelCase")]
    Shared {
        /// The sender.
        node: String,
        /// The users concerned.
        users: Vec<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(token: &str) -> String {
        let mut out = String::new();
        let mut chars = token.chars();
        while let Some(c) = chars.next() {
            if c == '_' {
                match chars.next() {
                    Some('_') => out.push('_'),
                    Some('d') => out.push('.'),
                    other => panic!("bad escape {other:?}"),
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn tokens_are_injective_and_valid() {
        let ids = [
            "a", "a.b", "a_b", "a_db", "a_.b", "a._b", "_", ".x", "x.", "__", "_d", "u:1@x-y", "A.B_C.D",
        ];
        let mut seen = std::collections::HashSet::new();
        for id in ids {
            let token = encode_token(id);
            assert!(!token.contains('.'), "{token}");
            assert!(!token.contains(['*', '>', ' ', '\t']), "{token}");
            assert_eq!(decode(&token), id, "round trip");
            assert!(seen.insert(token), "two ids, one token: {id}");
        }
        assert_eq!(encode_token("a.b_c"), "a_db__c");
    }

    #[test]
    fn subjects() {
        let c = ChannelId::parse("room.1").unwrap();
        let u = UserId::parse("bob_smith").unwrap();
        assert_eq!(channel_subject("chatd", &c), "chatd.c.room_d1");
        assert_eq!(user_subject("prod.chatd", &u), "prod.chatd.u.bob__smith");
    }

    #[test]
    fn presence_envelopes_round_trip() {
        let e = PresenceEnvelope::Released {
            node: "n1".into(),
            user: "bob".into(),
            last_seen_at: 9,
        };
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"kind":"released","node":"n1","user":"bob","lastSeenAt":9}"#);
        assert_eq!(serde_json::from_str::<PresenceEnvelope>(&text).unwrap(), e);
        assert_eq!(presence_subject("chatd"), "chatd.p");
    }

    /// A TYPING frame on the channel's subject: no `message`, the frame
    /// under `typing`; without `after` it follows nothing.
    #[test]
    fn channel_envelopes_carry_a_message_or_a_typing_frame() {
        let typing = TypingEnvelope {
            typer: "alice".into(),
            text: r#"{"type":"TYPING"}"#.into(),
            members: vec!["alice".into(), "bob".into()],
            after: 7,
        };
        let text = serde_json::to_string(&ChannelEnvelope::typing(typing.clone())).unwrap();
        assert_eq!(
            text,
            r#"{"typing":{"typer":"alice","text":"{\"type\":\"TYPING\"}","members":["alice","bob"],"after":7}}"#
        );
        let back: ChannelEnvelope = serde_json::from_str(&text).unwrap();
        assert_eq!((back.message.is_none(), back.typing), (true, Some(typing)));
        let old = r#"{"typer":"alice","text":"t","members":["bob"]}"#;
        assert_eq!(
            serde_json::from_str::<TypingEnvelope>(old).unwrap().after,
            0,
            "no `after`: at once"
        );
    }

    #[test]
    fn user_envelopes_round_trip() {
        let e = UserEnvelope::Membership {
            channel_id: "room".into(),
            add: true,
            seq: 7,
        };
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"kind":"membership","channelId":"room","add":true,"seq":7}"#);
        assert_eq!(serde_json::from_str::<UserEnvelope>(&text).unwrap(), e);
        let e = UserEnvelope::Blocked { blocker: "bob".into() };
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"kind":"blocked","blocker":"bob"}"#);
        assert_eq!(serde_json::from_str::<UserEnvelope>(&text).unwrap(), e);
    }
}
