//! A primary with a streaming standby ([`PgPair`]), and a failover as a
//! failover manager makes one: the primary killed, the standby promoted,
//! the old primary rebuilt as the new one's standby.

use super::OwnPostgres;

/// A running primary and a standby streaming from it.
pub struct PgPair {
    pub primary: OwnPostgres,
    pub standby: OwnPostgres,
}

impl PgPair {
    /// Makes and starts both clusters and waits until the standby streams
    /// (with `synchronous`, until the primary counts it as synchronous:
    /// `synchronous_standby_names = '*'` by `ALTER SYSTEM`, set after the base
    /// backup so the standby, once promoted, does not wait for a standby of
    /// its own). `None` (said on stderr) when PostgreSQL's programs are not
    /// installed; a failure under `CHATD_REQUIRE_POSTGRES=1`.
    pub fn start(synchronous: bool) -> Option<Self> {
        let primary = OwnPostgres::init()?;
        primary.configure("wal_level = replica\nmax_wal_senders = 10\nwal_keep_size = '64MB'");
        primary.start();
        let standby = OwnPostgres::standby_of(&primary);
        standby.start();
        let pair = Self { primary, standby };
        pair.set_synchronous(synchronous);
        pair.wait_streaming(synchronous);
        Some(pair)
    }

    /// The URL naming both hosts (the standby first, or the primary), with
    /// `target_session_attrs=read-write`, as an operator configures chatd.
    pub fn url(&self, standby_first: bool) -> String {
        let (a, b) = if standby_first {
            (self.standby.port(), self.primary.port())
        } else {
            (self.primary.port(), self.standby.port())
        };
        format!("postgres://postgres@127.0.0.1:{a},127.0.0.1:{b}/postgres?target_session_attrs=read-write")
    }

    /// `synchronous_standby_names` on the primary: `'*'` (a commit waits
    /// for the standby) or empty, by `ALTER SYSTEM` and a reload.
    pub fn set_synchronous(&self, on: bool) {
        let set = if on {
            "ALTER SYSTEM SET synchronous_standby_names = '*'"
        } else {
            "ALTER SYSTEM RESET synchronous_standby_names"
        };
        self.primary.sql(set).expect("set synchronous_standby_names");
        self.primary.sql("SELECT pg_reload_conf()").expect("reload");
    }

    /// Waits (up to 60 s) until the primary has a standby streaming, and a
    /// synchronous one with `synchronous`.
    pub fn wait_streaming(&self, synchronous: bool) {
        let sync = if synchronous { " AND sync_state = 'sync'" } else { "" };
        self.primary.wait_until(
            &format!("SELECT count(*) > 0 FROM pg_stat_replication WHERE state = 'streaming'{sync}"),
            "a streaming standby",
        );
    }

    /// Waits (up to 60 s) until the standby has replayed everything the
    /// primary has written so far.
    pub fn wait_replayed(&self) {
        let lsn = self
            .primary
            .sql("SELECT pg_current_wal_lsn()")
            .expect("the primary's WAL position");
        self.standby.wait_until(
            &format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn"),
            "the standby to replay the primary's WAL",
        );
    }

    /// A failover as a failover manager does it: SIGKILL to the primary,
    /// promotion of the standby (synchronous replication off while it has
    /// no standby), the old primary rebuilt as its standby from a fresh base
    /// backup and started; once it streams, synchronous again (with
    /// `synchronous`). The two then swap roles.
    pub fn fail_over(&mut self, synchronous: bool) {
        self.promote_standby();
        self.rejoin_old_primary(synchronous);
    }

    /// The first half of [`PgPair::fail_over`]: SIGKILL to the primary and
    /// promotion of the standby, which becomes [`PgPair::primary`]
    /// (synchronous replication off while it has no standby);
    /// [`PgPair::standby`] is then the dead old primary.
    pub fn promote_standby(&mut self) {
        self.primary.kill();
        self.standby.promote();
        std::mem::swap(&mut self.primary, &mut self.standby);
        self.set_synchronous(false);
    }

    /// The second half of [`PgPair::fail_over`]: the dead old primary
    /// rebuilt as the new primary's standby from a fresh base backup and
    /// started; once it streams, synchronous again (with `synchronous`).
    pub fn rejoin_old_primary(&mut self, synchronous: bool) {
        self.standby.rebuild_as_standby_of(&self.primary);
        self.standby.start();
        self.wait_streaming(false);
        if synchronous {
            self.set_synchronous(true);
            self.wait_streaming(true);
        }
    }
}
