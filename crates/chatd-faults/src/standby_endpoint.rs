//! The standby's endpoint of a run with `--replica-reads`: what chatd's
//! `database_replica_url` names. chatd's setting names one host, and in a
//! failover the standby changes (the old one is promoted, the old primary
//! comes back as the standby), so an operator points it at a name that
//! follows the standby: with Patroni, HAProxy's replica port (health check
//! `GET /replica`, `on-marked-down shutdown-sessions`); with
//! pg_auto_failover, a DNS name or address moved by its hooks. This is that
//! endpoint, a TCP relay on 127.0.0.1: every new connection goes to the
//! standby of the moment; when the harness moves it (the standby promoted:
//! none; the old primary streaming again as the standby: that one), the
//! relayed connections are cut, as HAProxy's `shutdown-sessions` does, so no
//! connection of chatd's replica pool stays on a server that is no longer
//! the standby. While it names none, a connection is accepted and closed
//! (chatd's replica reads then go to the primary, counted as `error`).

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The relay; stops when dropped.
pub struct StandbyEndpoint {
    port: u16,
    target: watch::Sender<Option<u16>>,
    accept: JoinHandle<()>,
}

impl StandbyEndpoint {
    /// Listens on a free port of 127.0.0.1, relaying to the server on
    /// 127.0.0.1:`target`.
    ///
    /// # Errors
    /// The listener's bind error.
    pub async fn start(target: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let (tx, rx) = watch::channel(Some(target));
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let mut rx = rx.clone();
                let Some(to) = *rx.borrow_and_update() else {
                    continue; // dropped: closed at once
                };
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(("127.0.0.1", to)).await else {
                        return;
                    };
                    let mut client = client;
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = rx.changed() => {} // moved: cut
                    }
                });
            }
        });
        Ok(Self {
            port,
            target: tx,
            accept,
        })
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres`, for
    /// `database_replica_url`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Points new connections at 127.0.0.1:`target` (`None`: no standby)
    /// and cuts the relayed ones.
    pub fn point_at(&self, target: Option<u16>) {
        self.target.send_replace(target);
    }
}

impl Drop for StandbyEndpoint {
    fn drop(&mut self) {
        self.accept.abort();
    }
}
