//! The process's open-file limit (`RLIMIT_NOFILE`), raised at startup.
//!
//! Every WebSocket session holds one file descriptor, and so does every
//! pooled database connection and every HTTP request in progress. Linux
//! starts a process with a soft limit that is often far below its hard
//! limit (1024 under systemd's default, 20,000 on the machine the
//! benchmarks run on, against a hard limit of 524,288 or more), and past
//! the soft limit `accept` fails with `EMFILE` (logged, retried every
//! 100 ms by [`crate::listener`]): the node stops taking connections long
//! before `max_connections`. The soft limit is raised to the hard limit
//! when `chatd serve` starts, as nginx's `worker_rlimit_nofile` and Go's
//! runtime (since 1.19) do; the hard limit is the operator's
//! (`LimitNOFILE=` in a systemd unit, `--ulimit nofile=` in Docker).

/// The soft and hard open-file limits after [`raise_to_hard`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    /// The soft limit in force (`None`: unlimited).
    pub soft: Option<u64>,
    /// The hard limit (`None`: unlimited).
    pub hard: Option<u64>,
    /// The soft limit before the call.
    pub soft_before: Option<u64>,
}

/// Raises the soft `RLIMIT_NOFILE` to the hard one. Returns the limits in
/// force; when the kernel refuses (it should not: an unprivileged process
/// may raise its soft limit up to the hard one), the limits stay as they
/// were and the error is returned.
#[cfg(unix)]
pub fn raise_to_hard() -> std::io::Result<FdLimit> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let before = getrlimit(Resource::Nofile);
    if before.current == before.maximum {
        return Ok(FdLimit {
            soft: before.current,
            hard: before.maximum,
            soft_before: before.current,
        });
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: before.maximum,
            maximum: before.maximum,
        },
    )?;
    let after = getrlimit(Resource::Nofile);
    Ok(FdLimit {
        soft: after.current,
        hard: after.maximum,
        soft_before: before.current,
    })
}

/// Not Unix: nothing to raise.
#[cfg(not(unix))]
pub fn raise_to_hard() -> std::io::Result<FdLimit> {
    Ok(FdLimit {
        soft: None,
        hard: None,
        soft_before: None,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// After the call the soft limit equals the hard limit (the test
    /// process's own limits: raising the soft one within the hard one is
    /// always allowed).
    #[test]
    fn the_soft_limit_is_raised_to_the_hard_limit() {
        let limit = raise_to_hard().expect("raising the soft limit within the hard one");
        assert_eq!(limit.soft, limit.hard);
        let now = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(now.current, limit.hard, "the kernel holds the raised limit");
        assert!(limit.soft_before <= limit.soft || limit.soft.is_none());
    }
}
