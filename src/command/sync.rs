//! `SYNC`: a page of a channel's messages after a seq, as `SYNC_BATCH`
//! (`docs/protocol.md` §5), for members only.

use super::Context;
use crate::ids::ChannelId;
use crate::outbound::close_code;
use crate::protocol::ServerFrame;
use crate::view;

/// Answers a SYNC for up to `limit` messages after `after_seq` in
/// `channel_id`: a SYNC_BATCH (cut to `max_page_bytes`), `forbidden` for a
/// non-member or unknown channel, or the store's error.
///
/// Backpressure: the page is read only once at most one page waits in the
/// session's queue, so a client that asks for pages and does not read them
/// is answered as fast as it reads, and one that reads nothing for the idle
/// limit is closed with 1013.
pub async fn run(ctx: Context<'_>, channel_id: ChannelId, after_seq: i64, limit: u32) {
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
        Ok(true) => store
            .entries_after(&channel_id, after_seq, limit, Some(&ctx.user.user_id))
            .await
            .map(Some),
        Ok(false) => Ok(None),
        Err(e) => Err(e),
    };
    let frame = match result {
        Ok(Some(page)) => {
            // A page stops early past `max_page_bytes`: the client asks
            // again from its last seq.
            let (messages, has_more) = view::recv_page(&page.entries, page.has_more, state.config.max_page_bytes);
            ServerFrame::SyncBatch {
                channel_id: channel_id.as_str().to_owned(),
                messages,
                has_more,
                last_seq: Some(page.last_seq),
            }
        }
        Ok(None) => ServerFrame::Error(view::not_a_member(&channel_id)),
        Err(error) => ServerFrame::Error(view::store_error(&error)),
    };
    ctx.session.send(&frame);
}
