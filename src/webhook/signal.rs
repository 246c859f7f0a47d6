//! What the commit path tells the feed ([`Signal`]): the channels that grew.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::ids::ChannelId;

/// What the commit path tells the feed: which channels got new entries
/// since the feed last looked. Cheap to clone; one short lock per batch.
#[derive(Debug, Clone, Default)]
pub struct Signal(Arc<SignalInner>);

#[derive(Debug, Default)]
struct SignalInner {
    grown: Mutex<HashSet<ChannelId>>,
    notify: Notify,
}

impl Signal {
    /// `channels` got new entries (just committed).
    pub fn grew<'a>(&self, channels: impl Iterator<Item = &'a ChannelId>) {
        let mut any = false;
        {
            let mut grown = self.0.grown.lock().unwrap_or_else(|e| e.into_inner());
            for channel in channels {
                if !grown.contains(channel) {
                    grown.insert(channel.clone());
                }
                any = true;
            }
        }
        if any {
            self.0.notify.notify_one();
        }
    }

    /// The channels that grew since the last call.
    pub(super) fn take(&self) -> HashSet<ChannelId> {
        std::mem::take(&mut *self.0.grown.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Waits until a channel grew (returns at once if one did since the last wait).
    pub(super) async fn wait(&self) {
        self.0.notify.notified().await;
    }
}
