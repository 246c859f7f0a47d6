//! This node's live sessions, by user, and delivery of encoded frames to them.
//!
//! Every session of this node is registered here whatever the delivery
//! ([`crate::delivery::Delivery`]): with NATS, the cluster bridge hands each
//! channel's messages, local or from other nodes, to this hub in `seq` order.
//! The delivery methods are `pub(crate)`: the rest of the server reaches a
//! user through [`crate::delivery::Delivery`], which also covers other nodes.

use std::collections::HashMap;
use std::sync::RwLock;

use axum::extract::ws::Utf8Bytes;

use crate::ids::{ChannelId, UserId};
use crate::outbound::{ReceiptFrame, SessionHandle, SessionId};

/// The registry of live sessions on this node, by user.
#[derive(Debug)]
pub struct Hub {
    /// A std lock, not tokio's: it is held only to clone handles or call
    /// `try_send`, never across an await.
    sessions: RwLock<HashMap<UserId, Vec<SessionHandle>>>,
    /// Striped locks that order watermark moves with their RECEIPTs: a
    /// session holds the stripe of (channel, owner) from the store update
    /// until its RECEIPT is queued, so two moves of one watermark reach the
    /// hub in commit order.
    receipt_stripes: Box<[tokio::sync::Mutex<()>]>,
    /// This node's typing and presence state.
    pub(crate) ephemeral: super::ephemeral::Ephemeral,
}

/// Stripes of [`Hub::receipt_order`].
const RECEIPT_STRIPES: usize = 64;

impl Default for Hub {
    fn default() -> Self {
        Self::new(super::ephemeral::Settings::default())
    }
}

impl Hub {
    /// An empty hub with these typing and presence settings.
    pub fn new(settings: super::ephemeral::Settings) -> Self {
        Self {
            sessions: RwLock::default(),
            receipt_stripes: (0..RECEIPT_STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
            ephemeral: super::ephemeral::Ephemeral::new(settings),
        }
    }

    /// This node's typing and presence state.
    pub fn ephemeral(&self) -> &super::ephemeral::Ephemeral {
        &self.ephemeral
    }

    /// Waits for, and holds, the lock that orders moves of the watermarks of
    /// `owner` in `channel` with their RECEIPTs (see [`Self::send_receipt`]).
    pub async fn receipt_order(&self, channel: &ChannelId, owner: &UserId) -> tokio::sync::MutexGuard<'_, ()> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        (channel, owner).hash(&mut hasher);
        let stripe = (hasher.finish() % self.receipt_stripes.len() as u64) as usize;
        self.receipt_stripes[stripe].lock().await
    }

    /// Registers a session; from now on it receives its user's frames.
    pub fn register(&self, handle: SessionHandle) {
        let mut sessions = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        sessions.entry(handle.user_id.clone()).or_default().push(handle);
    }

    /// Removes a session (no-op when absent).
    pub fn unregister(&self, user_id: &UserId, id: &SessionId) {
        let mut sessions = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = sessions.get_mut(user_id) {
            list.retain(|h| &h.id != id);
            if list.is_empty() {
                sessions.remove(user_id);
            }
        }
    }

    /// Number of live sessions on this node.
    pub fn session_count(&self) -> usize {
        self.sessions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(Vec::len)
            .sum()
    }

    /// Every live session of every user, for shutdown.
    pub fn all_sessions(&self) -> Vec<SessionHandle> {
        self.sessions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .flatten()
            .cloned()
            .collect()
    }

    /// Closes every live session of `user_id` on this node now with `code`
    /// (an erased user's, §19: 1008).
    pub fn kick_user(&self, user_id: &UserId, code: u16, reason: &'static str) {
        let sessions = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        for handle in sessions.get(user_id).into_iter().flatten() {
            handle.kick(code, reason);
        }
    }

    /// Closes with 1008 "user erased" (§19) each live session of `user_id`
    /// whose token `erased` now refuses (issued before the user's erasure
    /// watermark); a session of a token issued after it stays. Returns how
    /// many were closed.
    pub fn kick_erased(&self, user_id: &UserId, erased: &crate::auth::ErasedUsers) -> usize {
        let sessions = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        let mut closed = 0;
        for handle in sessions.get(user_id).into_iter().flatten() {
            if erased.refuses(&handle.user_id, handle.issued_at_ms) {
                handle.kick(crate::close_code::POLICY, "user erased");
                closed += 1;
            }
        }
        closed
    }

    /// Queues an already-encoded frame of `channel` to every live session
    /// of `user_id` except `except`, through each session's channel gate
    /// ([`SessionHandle::push_of`]; `None`: a frame from a node too old to
    /// name its channel, queued as it comes).
    pub(crate) fn send_to_user(
        &self,
        user_id: &UserId,
        channel: Option<&ChannelId>,
        text: &Utf8Bytes,
        type_name: &'static str,
        except: Option<&SessionId>,
    ) {
        let sessions = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        for handle in sessions.get(user_id).into_iter().flatten() {
            if Some(&handle.id) != except {
                match channel {
                    Some(channel) => handle.push_of(channel, text.clone(), type_name),
                    None => handle.push(text.clone(), type_name),
                };
            }
        }
    }

    /// Queues `receipt` to every live session of `user_id` except `except`,
    /// skipping sessions that already got a RECEIPT at or above its `seq` for
    /// that watermark ([`SessionHandle::receipt_is_fresh`]), so receipts never
    /// go back, whatever order concurrent watermark moves reach the hub in.
    /// A RECEIPT is a frame of its channel ([`SessionHandle::push_of`]).
    pub(crate) fn send_receipt(&self, user_id: &UserId, receipt: &ReceiptFrame, except: Option<&SessionId>) {
        let sessions = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        for handle in sessions.get(user_id).into_iter().flatten() {
            if Some(&handle.id) != except && handle.receipt_is_fresh(&receipt.key, receipt.seq) {
                handle.push_of(&receipt.key.0, receipt.text.clone(), "RECEIPT");
            }
        }
    }

    /// Queues an encoded MSG_RECV of `channel` to every live session of
    /// every member, except `except`.
    pub(crate) fn deliver(
        &self,
        channel: &ChannelId,
        text: &Utf8Bytes,
        members: &[UserId],
        except: Option<&SessionId>,
    ) {
        self.send_to_users(members, channel, text, "MSG_RECV", except);
    }

    /// Queues an already-encoded frame of `channel` to every live session
    /// of each of `users` except `except` ([`Self::send_to_user`]).
    pub(crate) fn send_to_users(
        &self,
        users: &[UserId],
        channel: &ChannelId,
        text: &Utf8Bytes,
        type_name: &'static str,
        except: Option<&SessionId>,
    ) {
        for user in users {
            self.send_to_user(user, Some(channel), text, type_name, except);
        }
    }

    /// Queues an encoded ephemeral frame (TYPING) of `channel` to every live
    /// session of every member but `typer` (none of the typer's own
    /// sessions), lossily, and only to sessions told of the channel
    /// ([`SessionHandle::push_of`]).
    pub(crate) fn deliver_ephemeral(
        &self,
        channel: &ChannelId,
        text: &Utf8Bytes,
        members: &[UserId],
        typer: &UserId,
        type_name: &'static str,
    ) {
        let sessions = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        for member in members.iter().filter(|m| *m != typer) {
            for handle in sessions.get(member).into_iter().flatten() {
                handle.push_of(channel, text.clone(), type_name);
            }
        }
    }
}
