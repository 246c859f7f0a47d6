//! Membership churn (protocol.md §13.3, §17, guarantee 12): while the load
//! and the faults run, a few users of their own (`churner0`, …) keep sending
//! to one public channel (`churn`) while they leave it and join it again, or
//! are muted and unmuted, or banned and added back, one change at a time:
//! a member is removed (by the admin, `DELETE
//! /v1/channels/churn/members/{userId}`, or by itself, `DELETE
//! /v1/me/channels/churn`), banned (`?ban=true`) or muted (`PUT …/members/
//! {userId}` `{"mutedUntil"}` an hour ahead); then it joins again (by the
//! admin's `PUT` or its own), is added back by the admin (which lifts the
//! ban), or unmuted (`{"mutedUntil": null}`).
//!
//! "A member" below means a user who may send: a member not muted. A muted
//! member's send is refused with `forbidden` (`reason: "muted"`) like a
//! non-member's, so the check is the same.
//!
//! The check is judged by time, and so only where the answer is certain: a
//! change is in force from the moment its request was answered 204 until the
//! next change of that user was first requested (a request that failed, e.g.
//! during a restart, may have been applied, so the next window only starts
//! at a success). A send whose whole life (from `send` to its answer) lies in
//! one such window must be refused with `forbidden` when the user was not a
//! member, and stored when it was. Anything else is a violation: an entry
//! judged with the wrong membership.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chatd_client::admin::{AdminClient, NewChannel};
use chatd_client::chatd_proto::protocol::{ErrorCode, Visibility};
use chatd_client::{Client, ClientConfig, SendError, StartFrom};
use rand::Rng;
use serde_json::json;
use tokio::sync::{watch, Mutex};
use tokio::time::Instant;

use crate::Phase;

/// The channel the churners send to.
pub const CHANNEL: &str = "churn";

/// What a churner is, as the coordinator left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// A member, not muted: its sends are stored.
    Member,
    /// Removed (by the admin or by itself).
    Removed,
    /// Banned: joining by itself is refused until the admin adds it back.
    Banned,
    /// A member muted for an hour.
    Muted,
}

/// One membership change as the coordinator made it.
#[derive(Debug, Clone, Copy)]
struct Change {
    /// May send after it (`true`), or not.
    member: bool,
    /// What it made the churner.
    standing: Standing,
    /// When it was first requested.
    requested: Instant,
    /// When a request for it was answered 204.
    done: Instant,
}

/// How one send ended.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Stored,
    /// Refused with `forbidden`.
    Forbidden,
    /// No answer (deadline, closed) or another refusal: not judged.
    Unknown,
}

/// One churner's send.
#[derive(Debug, Clone, Copy)]
struct Send {
    started: Instant,
    answered: Instant,
    outcome: Outcome,
}

/// What the churn saw, for the report and the check.
#[derive(Debug, Default)]
pub struct Churn {
    changes: HashMap<String, Vec<Change>>,
    sends: HashMap<String, Vec<Send>>,
    /// When the channel was made, and when the churn stopped.
    created: Option<Instant>,
    ended: Option<Instant>,
}

impl Churn {
    /// The report's `churn` object.
    pub fn report(&self) -> serde_json::Value {
        let count = |o: Outcome| self.sends.values().flatten().filter(|s| s.outcome == o).count();
        json!({
            "membershipChanges": self.changes.values().map(Vec::len).sum::<usize>(),
            "mutes": self.changes.values().flatten().filter(|c| c.standing == Standing::Muted).count(),
            "bans": self.changes.values().flatten().filter(|c| c.standing == Standing::Banned).count(),
            "sendsStored": count(Outcome::Stored),
            "sendsForbidden": count(Outcome::Forbidden),
            "sendsUnknown": count(Outcome::Unknown),
        })
    }

    /// The violations: sends judged with the wrong membership.
    pub fn violations(&self) -> Vec<String> {
        let (Some(created), Some(ended)) = (self.created, self.ended) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for (user, sends) in &self.sends {
            let changes = self.changes.get(user).map(Vec::as_slice).unwrap_or_default();
            // Windows: (member, from, until); a member from the channel's
            // creation until the first change was requested.
            let mut windows = Vec::with_capacity(changes.len() + 1);
            let mut state = (true, created);
            for change in changes {
                windows.push((state.0, state.1, change.requested));
                state = (change.member, change.done);
            }
            windows.push((state.0, state.1, ended));
            for send in sends {
                let Some(&(member, _, _)) = windows
                    .iter()
                    .find(|(_, from, until)| *from <= send.started && send.answered <= *until)
                else {
                    continue;
                };
                match (member, send.outcome) {
                    (false, Outcome::Stored) => found.push(format!("{user}: a send stored while not a member")),
                    (true, Outcome::Forbidden) => found.push(format!("{user}: a send refused while a member")),
                    _ => {}
                }
            }
        }
        found
    }
}

/// Creates the churn channel with `churners` users and runs the churn until
/// the phase leaves `Load`/`Storm`; returns what it saw.
///
/// # Errors
/// When the channel cannot be created or a churner cannot connect.
pub async fn run(
    admin: AdminClient,
    ws_url: String,
    churners: usize,
    phase: watch::Receiver<Phase>,
) -> anyhow::Result<Churn> {
    let users: Vec<String> = (0..churners).map(|i| format!("churner{i}")).collect();
    admin
        .create(&NewChannel {
            channel_id: Some(CHANNEL.to_owned()),
            members: users.clone(),
            visibility: Some(Visibility::Public),
            ..NewChannel::default()
        })
        .await?;
    let mut own = HashMap::new();
    let churn = Arc::new(Mutex::new(Churn {
        created: Some(Instant::now()),
        ..Churn::default()
    }));
    let mut tasks = Vec::new();
    for user in &users {
        let token = admin.token(user, Some(86_400)).await?;
        own.insert(user.clone(), AdminClient::new(admin.base(), token.clone()));
        let mut config = ClientConfig::new(ws_url.clone(), token);
        config.start_from = StartFrom::Now;
        config.ack_timeout = Duration::from_secs(5);
        config.send_deadline = Some(Duration::from_secs(20));
        config.backoff_initial = Duration::from_millis(20);
        config.backoff_max = Duration::from_millis(1000);
        let (client, mut events) = Client::connect(config).await?;
        // Events are not checked here; keep the stream drained.
        tokio::spawn(async move { while events.recv().await.is_some() {} });
        tasks.push(tokio::spawn(send_loop(
            client,
            user.clone(),
            churn.clone(),
            phase.clone(),
        )));
    }
    let mut standing: HashMap<String, Standing> = users.iter().map(|u| (u.clone(), Standing::Member)).collect();
    let mut phase_rx = phase.clone();
    while churning(&phase_rx) {
        let pause = Duration::from_millis(rand::rng().random_range(50..250));
        if tokio::time::timeout(pause, phase_rx.changed()).await.is_ok() {
            continue;
        }
        let pick = rand::rng().random_range(0..users.len());
        let user = &users[pick];
        let now = standing.get(user).copied().unwrap_or(Standing::Member);
        let by_itself = rand::rng().random_bool(0.5);
        let next = match now {
            Standing::Member => match rand::rng().random_range(0..4) {
                0 | 1 => Standing::Removed,
                2 => Standing::Banned,
                _ => Standing::Muted,
            },
            Standing::Removed | Standing::Banned | Standing::Muted => Standing::Member,
        };
        let requested = Instant::now();
        // Retried until answered (a restart may refuse it for a while).
        loop {
            let result = match (now, next, by_itself, own.get(user)) {
                (Standing::Member, Standing::Removed, true, Some(client)) => client.leave(CHANNEL).await,
                (Standing::Member, Standing::Removed, ..) => admin.remove_member(CHANNEL, user).await,
                (_, Standing::Banned, ..) => admin.ban(CHANNEL, user).await,
                (_, Standing::Muted, ..) => {
                    let until = chatd_client::chatd_proto::ids::now_ms() + 3_600_000;
                    admin.mute(CHANNEL, user, Some(until)).await
                }
                (Standing::Muted, ..) => admin.mute(CHANNEL, user, None).await,
                (Standing::Removed, _, true, Some(client)) => client.join(CHANNEL).await,
                // A banned user is added back by the admin, which lifts the ban.
                _ => admin.add_member(CHANNEL, user).await,
            };
            if result.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let change = Change {
            member: next == Standing::Member,
            standing: next,
            requested,
            done: Instant::now(),
        };
        churn.lock().await.changes.entry(user.clone()).or_default().push(change);
        standing.insert(user.clone(), next);
    }
    for task in tasks {
        let _ = task.await;
    }
    churn.lock().await.ended = Some(Instant::now());
    let churn = Arc::try_unwrap(churn).map_err(|_| anyhow::anyhow!("churn still shared"))?;
    Ok(churn.into_inner())
}

fn churning(phase: &watch::Receiver<Phase>) -> bool {
    matches!(*phase.borrow(), Phase::Idle | Phase::Load | Phase::Storm(_))
}

/// One churner: a send every 10–40 ms, one at a time, until the churn ends.
async fn send_loop(client: Client, user: String, churn: Arc<Mutex<Churn>>, phase: watch::Receiver<Phase>) {
    let mut n = 0u64;
    while churning(&phase) {
        n += 1;
        let started = Instant::now();
        let outcome = match client.send(CHANNEL, format!("{user} {n}")).await {
            Ok(_) => Outcome::Stored,
            Err(SendError::Refused {
                code: ErrorCode::Forbidden,
                ..
            }) => Outcome::Forbidden,
            Err(_) => Outcome::Unknown,
        };
        let send = Send {
            started,
            answered: Instant::now(),
            outcome,
        };
        churn.lock().await.sends.entry(user.clone()).or_default().push(send);
        let pause = Duration::from_millis(rand::rng().random_range(10..40));
        tokio::time::sleep(pause).await;
    }
    client.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    /// Judged only inside a window, and both ways: stored while removed,
    /// refused while a member; a send that straddles a change is not judged.
    #[test]
    fn a_send_inside_a_window_must_match_the_membership_of_that_window() {
        let t = Instant::now();
        let send = |from, to, outcome| Send {
            started: at(t, from),
            answered: at(t, to),
            outcome,
        };
        let mut churn = Churn {
            created: Some(t),
            ended: Some(at(t, 1000)),
            ..Churn::default()
        };
        // Removed: requested at 100, answered at 120; added back: requested
        // at 200, answered at 230.
        churn.changes.insert(
            "u".to_owned(),
            vec![
                Change {
                    member: false,
                    standing: Standing::Removed,
                    requested: at(t, 100),
                    done: at(t, 120),
                },
                Change {
                    member: true,
                    standing: Standing::Member,
                    requested: at(t, 200),
                    done: at(t, 230),
                },
            ],
        );
        let fine = vec![
            send(10, 20, Outcome::Stored),
            send(130, 140, Outcome::Forbidden),
            send(240, 250, Outcome::Stored),
            // Straddling a change: either answer is right.
            send(90, 125, Outcome::Stored),
            send(190, 235, Outcome::Forbidden),
            send(130, 140, Outcome::Unknown),
        ];
        churn.sends.insert("u".to_owned(), fine);
        assert_eq!(churn.violations(), Vec::<String>::new());
        churn.sends.insert(
            "u".to_owned(),
            vec![send(130, 140, Outcome::Stored), send(240, 250, Outcome::Forbidden)],
        );
        assert_eq!(
            churn.violations(),
            [
                "u: a send stored while not a member",
                "u: a send refused while a member"
            ]
        );
    }
}
