//! Waiting for a condition that the server makes true in its own time (a
//! task after the commit, a sweep, a file removed), and the test process's
//! own memory, which tests of bounded memory read.

use std::future::Future;
use std::time::Duration;

/// Polls `done` every 100 ms until it holds; panics after 10 s naming `what`.
pub async fn eventually<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..100 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("not within 10 s: {what}");
}

/// This process's resident memory now (`VmRSS` of `/proc/self/status`), bytes.
/// A test server runs in the test's process, so this counts the server too;
/// a test that compares it must run alone in its binary (`cargo test` runs
/// a binary's tests on threads of one process).
pub fn resident_bytes() -> u64 {
    proc_status_kib("VmRSS:") * 1024
}

/// A `kB` line of `/proc/self/status`.
fn proc_status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}
