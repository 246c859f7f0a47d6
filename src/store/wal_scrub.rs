//! Erased text out of SQLite's write-ahead log (guarantee 9) without
//! holding up the one writer.
//!
//! `secure_delete` overwrites an erased text in the database's pages, but in
//! WAL mode older copies of those pages stay in the `-wal` file until a
//! checkpoint copies the log back and truncates it. A reader holding an old
//! snapshot (an export streaming, a long page read) keeps a `TRUNCATE`
//! checkpoint from finishing; waiting for it (the busy timeout, 5 s) held the
//! writer meanwhile, so every other write waited, the erasing write was
//! answered `internal` past its deadline, and the text stayed in the file
//! until the next delete made with no reader open.
//!
//! Now the checkpoint after an erasing write (a delete, an erasure, a
//! retention sweep) does not wait: with `busy_timeout` 0 for its one
//! statement it finishes at once or reports itself blocked, and then a task
//! tries again every [`RETRY`] until one finishes (the reader gone), so the
//! text leaves the file soon after the last snapshot that could read it.
//! PostgreSQL has no such file: nothing is done there.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::dialect::{Columns, Dialect, Executes, Kind};

/// Copies SQLite's WAL into the database file and truncates it.
const TRUNCATE: &str = "PRAGMA wal_checkpoint(TRUNCATE)";
/// The pause between two tries of a blocked checkpoint.
pub const RETRY: Duration = Duration::from_millis(500);

/// Whether a blocked checkpoint is being retried, and how many were asked
/// for: a try that finishes settles every request made before it began.
#[derive(Debug, Default)]
pub struct WalScrub {
    requests: AtomicU64,
    running: AtomicBool,
}

impl WalScrub {
    /// After a committed write that erased text: truncates SQLite's WAL now
    /// (on a connection of `pool`, the writer's) if no reader holds an old
    /// snapshot, else leaves it to a task that tries again every [`RETRY`]
    /// until it can. Never waits for a reader; `busy` is the busy timeout
    /// the connection gets back after the checkpoint. Nothing on PostgreSQL.
    pub(super) async fn request<D: Dialect>(self: &Arc<Self>, pool: &sqlx::Pool<D>, busy: Duration) {
        if D::KIND != Kind::Sqlite {
            return;
        }
        self.requests.fetch_add(1, Ordering::SeqCst);
        match checkpoint_now(pool, busy).await {
            Ok(true) => {}
            Ok(false) => self.retry(pool, busy),
            Err(error) => {
                tracing::warn!(%error, "WAL checkpoint after an erasing write failed; retrying");
                self.retry(pool, busy);
            }
        }
    }

    /// Starts the retrying task unless one runs already (it then also
    /// covers this request: it settles only requests made before its try).
    fn retry<D: Dialect>(self: &Arc<Self>, pool: &sqlx::Pool<D>, busy: Duration) {
        if self.running.swap(true, Ordering::SeqCst) {
            return;
        }
        let pool = pool.clone();
        let scrub = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RETRY).await;
                if pool.is_closed() {
                    scrub.running.store(false, Ordering::SeqCst);
                    return;
                }
                let wanted = scrub.requests.load(Ordering::SeqCst);
                match checkpoint_now(&pool, busy).await {
                    Ok(true) => {
                        if scrub.requests.load(Ordering::SeqCst) != wanted {
                            continue;
                        }
                        scrub.running.store(false, Ordering::SeqCst);
                        // A request made just before `running` was cleared
                        // saw it set and started nothing: take it over,
                        // unless a new task already has.
                        if scrub.requests.load(Ordering::SeqCst) == wanted || scrub.running.swap(true, Ordering::SeqCst)
                        {
                            return;
                        }
                    }
                    Ok(false) => {}
                    Err(error) => tracing::debug!(%error, "WAL checkpoint retry failed"),
                }
            }
        });
    }
}

/// One `TRUNCATE` checkpoint on the writer's connection that does not wait
/// for readers or locks (`busy_timeout` 0 for it, `busy` again after);
/// whether it finished (its first column, `busy`, is 0). A connection whose
/// busy timeout could not be set back is closed, not returned to the pool.
async fn checkpoint_now<D: Dialect>(pool: &sqlx::Pool<D>, busy: Duration) -> Result<bool, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    sqlx::query::<D>("PRAGMA busy_timeout = 0").execute(conn.ex()).await?;
    let result = sqlx::query::<D>(TRUNCATE).fetch_one(conn.ex()).await;
    let restore = format!("PRAGMA busy_timeout = {}", busy.as_millis());
    if let Err(error) = sqlx::query::<D>(&restore).execute(conn.ex()).await {
        conn.close_on_drop();
        return Err(error);
    }
    let blocked: i64 = result?.value(0)?;
    Ok(blocked == 0)
}
