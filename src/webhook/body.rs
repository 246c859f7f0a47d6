//! The request bodies (protocol §12). Each entry is rendered as its
//! MSG_RECV object by [`crate::view::recv`], the fan-out's rendering, so a
//! receiver reads the same object a connected client got:
//! - one entry: `{"type":"entry","entry":{MSG_RECV},"offlineMembers":[...],"notify":[...]}`;
//! - several (`webhook_batch_max` > 1):
//!   `{"type":"entries","entries":[{"entry":{MSG_RECV},"offlineMembers":[...],"notify":[...]},...]}`,
//!   in `seq` order, all of one channel.

use serde::Serialize;

use crate::protocol::TaggedMessage;
use crate::store::WebhookEntry;
use crate::view;

#[derive(Serialize)]
#[serde(tag = "type")]
enum Body<'a> {
    /// `{"type":"entry","entry":…,"offlineMembers":[…]}`.
    #[serde(rename = "entry")]
    Entry(Box<Item<'a>>),
    #[serde(rename = "entries")]
    Entries { entries: Vec<Item<'a>> },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Item<'a> {
    entry: TaggedMessage,
    offline_members: Vec<&'a str>,
    /// §16: the offline members who want a notification of this entry.
    notify: Vec<&'a str>,
}

fn item(entry: &WebhookEntry) -> Item<'_> {
    Item {
        entry: TaggedMessage::MsgRecv(view::recv(&entry.entry)),
        offline_members: entry.offline_members.iter().map(|u| u.as_str()).collect(),
        notify: entry.notify.iter().map(|u| u.as_str()).collect(),
    }
}

/// The body for `entries` (in seq order, one channel): the `entry` form for
/// one, the `entries` form for several (`batched`: `webhook_batch_max` > 1
/// always uses it, so a receiver sees one shape per setting).
pub fn render(entries: &[WebhookEntry], batched: bool) -> Vec<u8> {
    let body = match entries {
        [one] if !batched => Body::Entry(Box::new(item(one))),
        many => Body::Entries {
            entries: many.iter().map(item).collect(),
        },
    };
    // Serializing strings, numbers and booleans into a Vec cannot fail.
    serde_json::to_vec(&body).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ChannelId, ClientMsgId, UserId};
    use crate::store::{Entry, EntryKind};

    fn entry(seq: i64, offline: &[&str]) -> WebhookEntry {
        WebhookEntry {
            entry: Entry {
                message_id: uuid::Uuid::now_v7(),
                channel_id: ChannelId::from_trusted("room".into()),
                sender_id: UserId::from_trusted("alice".into()),
                client_msg_id: ClientMsgId::from_trusted(format!("k{seq}")),
                by_admin: false,
                via_http: false,
                seq,
                body: "hi".into(),
                ts: 1,
                kind: EntryKind::Message,
                target_id: None,
                emoji: None,
                add: None,
                edited_body: None,
                edited_at: None,
                deleted: false,
                expired: false,
                noop: false,
                reactions: Vec::new(),
                reply_to: None,
                thread_id: None,
                reply_preview: None,
                thread: None,
                mentions: Vec::new(),
                mention_all: false,
                mentions_asked: None,
                attachments: Vec::new(),
            },
            offline_members: offline.iter().map(|u| UserId::from_trusted((*u).into())).collect(),
            notify: offline
                .iter()
                .take(1)
                .map(|u| UserId::from_trusted((*u).into()))
                .collect(),
        }
    }

    #[test]
    fn one_entry_has_the_entry_shape_and_several_the_entries_shape() {
        let one: serde_json::Value = serde_json::from_slice(&render(&[entry(1, &["bob"])], false)).unwrap();
        assert_eq!(one["type"], "entry");
        assert_eq!(one["entry"]["type"], "MSG_RECV");
        assert_eq!(one["entry"]["seq"], 1);
        assert_eq!(one["entry"]["channelId"], "room");
        assert_eq!(one["offlineMembers"], serde_json::json!(["bob"]));
        assert_eq!(one["notify"], serde_json::json!(["bob"]));

        let two: serde_json::Value =
            serde_json::from_slice(&render(&[entry(1, &["bob"]), entry(2, &[])], true)).unwrap();
        assert_eq!(two["type"], "entries");
        assert_eq!(two["entries"][0]["entry"]["seq"], 1);
        assert_eq!(two["entries"][1]["entry"]["seq"], 2);
        assert_eq!(two["entries"][1]["offlineMembers"], serde_json::json!([]));
        assert_eq!(two["entries"][0]["offlineMembers"], serde_json::json!(["bob"]));
    }
}
