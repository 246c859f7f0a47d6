//! What the fault harness shares with chatd's tests (`chatd-testkit`
//! re-exports it): PostgreSQL clusters of a run's own, one server or a
//! primary with a streaming standby ([`pg_cluster`]).

pub mod pg_cluster;
