//! `SYNC`: a page of a channel's messages after a seq, or back from a seq
//! or the newest, as `SYNC_BATCH` (`docs/protocol.md` §5), for members only.

use super::Context;
use crate::close_code;
use crate::ids::ChannelId;
use crate::ids::UserId;
use crate::permissions::{self, Action, Actor};
use crate::protocol::{ErrorFrame, Page, ServerFrame, TaggedMessage};
use crate::store::{EntriesPage, Entry, Store, StoreError};
use crate::view;

/// Reads the page `page` of up to `limit` entries of `channel_id` (or,
/// with `thread`, of the replies in that root's thread, §14), in `seq`
/// order and render-ready (each message with its state; `me` for
/// `reader`, none for the admin), and whether more lie beyond it (after it
/// for [`Page::After`], before it for [`Page::Before`]). Shared by SYNC and
/// the history route. `Ok(Err(_))`: `thread` names no thread of the
/// channel, with the ERROR that says why.
///
/// # Errors
/// The store's error.
pub async fn read_page(
    store: &Store,
    channel_id: &ChannelId,
    page: Page,
    limit: u32,
    reader: Option<&UserId>,
    thread: Option<uuid::Uuid>,
) -> Result<Result<EntriesPage, ErrorFrame>, StoreError> {
    let (seq, backward) = match page {
        Page::After(after_seq) => (after_seq, false),
        Page::Before(before_seq) => (before_seq, true),
    };
    if let Some(root) = thread {
        let read = store
            .thread_entries(channel_id, root, seq, limit, reader, backward)
            .await?;
        return Ok(read.map_err(|refused| view::thread_refused(&refused)));
    }
    Ok(Ok(match page {
        Page::After(_) => store.entries_after(channel_id, seq, limit, reader).await?,
        Page::Before(_) => store.entries_before(channel_id, seq, limit, reader).await?,
    }))
}

/// Cuts a page read by [`read_page`] to `budget` bytes of JSON
/// (`max_page_bytes`). A page after a seq keeps its first entries (the
/// client asks again from its last seq); a page back keeps its last ones
/// (the newest, next to where the reader stands; it asks again before its
/// first seq), and `hasMore` stays about older entries.
pub fn cut_page(entries: &[Entry], has_more: bool, page: Page, budget: usize) -> (Vec<TaggedMessage>, bool) {
    match page {
        Page::After(_) => view::recv_page(entries, has_more, budget),
        Page::Before(_) => {
            let fits = view::fitting(entries.iter().rev(), budget);
            let kept = &entries[entries.len() - fits..];
            let (page, _) = view::recv_page(kept, false, usize::MAX);
            (page, has_more || fits < entries.len())
        }
    }
}

/// Answers a SYNC for up to `limit` messages of `channel_id` at `page`: a
/// SYNC_BATCH (cut to `max_page_bytes`), `forbidden` for a non-member or
/// unknown channel, or the store's error (`unavailable`, `internal`), each
/// ERROR naming the channel.
///
/// Backpressure: the page is read only once at most one page waits in the
/// session's queue, so a client that asks for pages and does not read them
/// is answered as fast as it reads, and one that reads nothing for the idle
/// limit is closed with 1013.
/// With `thread`, the page holds that root's replies only (§14) and the
/// batch names it (`threadId`).
pub async fn run(ctx: Context<'_>, channel_id: ChannelId, page: Page, limit: u32, thread: Option<uuid::Uuid>) {
    let state = ctx.state;
    tokio::select! {
        () = ctx.session.queued_at_most(state.config.max_page_bytes) => {}
        () = tokio::time::sleep(ctx.idle_limit()) => {
            ctx.session.kick(close_code::TRY_AGAIN_LATER, "too slow to take its frames");
            return;
        }
        () = ctx.close.kicked() => return,
        () = state.shutdown.cancelled() => return,
    }
    let store = &state.store;
    let result = match store.is_member(&channel_id, &ctx.user.user_id).await {
        Ok(member) => match permissions::may(Actor::user(member), Action::Read) {
            Ok(()) => read_page(store, &channel_id, page, limit, Some(&ctx.user.user_id), thread)
                .await
                .map(Some),
            Err(_) => Ok(None),
        },
        Err(e) => Err(e),
    };
    let frame = match result {
        Ok(Some(Err(mut refused))) => {
            refused.channel_id = Some(channel_id.as_str().to_owned());
            ServerFrame::Error(refused)
        }
        Ok(Some(Ok(read))) => {
            // A page stops early past `max_page_bytes`: the client asks
            // again from its last seq (or before its first, paging back).
            let (messages, has_more) = cut_page(&read.entries, read.has_more, page, state.config.max_page_bytes);
            ServerFrame::SyncBatch {
                channel_id: channel_id.as_str().to_owned(),
                messages,
                has_more,
                last_seq: Some(read.last_seq),
                thread_id: thread,
            }
        }
        Ok(None) => ServerFrame::Error(view::not_a_member(&channel_id)),
        Err(error) => {
            // Named, so the client knows which read to ask again (its others go on).
            let mut refused = view::store_error(&error);
            refused.channel_id = Some(channel_id.as_str().to_owned());
            ServerFrame::Error(refused)
        }
    };
    ctx.session.send(&frame);
}
