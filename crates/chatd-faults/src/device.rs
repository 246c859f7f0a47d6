//! One device of the workload: its client (the Rust library, or the
//! TypeScript SDK through its driver process), its loop of sends and entries
//! while the faults run, and what it records for the checker.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chatd_client::{Ack, Client, EntryRequest, Event, SendError, SendOptions};
use futures_util::stream::{FuturesUnordered, StreamExt};
use rand::Rng;
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::record::{ClientLog, Folded, Intent, Sent};
use crate::sdk::SdkDevice;
use crate::workload::{Targets, Workload};
use crate::Phase;

/// An SDK send or entry, settled when the driver reports its outcome.
pub(crate) type PendingOutcome = Pin<Box<dyn Future<Output = Result<Ack, SendError>> + Send>>;

/// A device's client: the Rust library, or the TypeScript SDK through its
/// driver process.
pub(crate) enum DeviceClient {
    Rust(Client),
    Sdk(Box<SdkDevice>),
}

impl DeviceClient {
    /// Hands the intent to the client; the future resolves to its outcome.
    pub(crate) async fn submit(&self, sent: &Sent) -> Result<PendingOutcome, SendError> {
        match self {
            Self::Rust(client) => {
                let pending = match &sent.intent {
                    Intent::Message => client.submit(&sent.channel, &sent.key, sent.body.clone()).await?,
                    Intent::Reply { reply_to, thread_id } => {
                        let options = SendOptions {
                            reply_to: *reply_to,
                            thread_id: *thread_id,
                            ..SendOptions::default()
                        };
                        client
                            .submit_with(&sent.channel, &sent.key, sent.body.clone(), options)
                            .await?
                    }
                    Intent::Edit { target } => {
                        let request = EntryRequest::Edit {
                            message_id: *target,
                            body: sent.body.clone(),
                        };
                        client.submit_entry(&sent.key, request).await?
                    }
                    Intent::Delete { target } => {
                        client
                            .submit_entry(&sent.key, EntryRequest::Delete { message_id: *target })
                            .await?
                    }
                    Intent::React { target, emoji, add } => {
                        let request = EntryRequest::React {
                            message_id: *target,
                            emoji: emoji.clone(),
                            add: *add,
                        };
                        client.submit_entry(&sent.key, request).await?
                    }
                };
                Ok(Box::pin(pending))
            }
            Self::Sdk(device) => {
                let (key, channel) = (sent.key.as_str(), sent.channel.as_str());
                let command = match &sent.intent {
                    Intent::Message => json!({"op": "send", "key": key, "channelId": channel, "body": sent.body}),
                    Intent::Reply { reply_to, thread_id } => json!({
                        "op": "send", "key": key, "channelId": channel, "body": sent.body,
                        "replyTo": reply_to, "threadId": thread_id
                    }),
                    Intent::Edit { target } => {
                        json!({"op": "edit", "key": key, "channelId": channel, "messageId": target, "body": sent.body})
                    }
                    Intent::Delete { target } => {
                        json!({"op": "delete", "key": key, "channelId": channel, "messageId": target})
                    }
                    Intent::React { target, emoji, add } => json!({
                        "op": "react", "key": key, "channelId": channel, "messageId": target, "emoji": emoji, "add": add
                    }),
                };
                let rx = device.submit(key, command).await?;
                Ok(Box::pin(async move {
                    rx.await
                        .unwrap_or_else(|_| Err(SendError::Closed("the SDK driver ended".into())))
                }))
            }
        }
    }

    /// Marks `message_id` read (the SDK: its channel up to the newest held entry).
    pub(crate) async fn mark_read(&self, channel_id: &str, message_id: uuid::Uuid) {
        match self {
            Self::Rust(client) => client.mark_read(message_id).await,
            Self::Sdk(device) => device.mark_read(channel_id).await,
        }
    }

    /// Drops the connection; the client reconnects by itself.
    pub(crate) async fn reconnect(&self) {
        match self {
            Self::Rust(client) => client.reconnect().await,
            Self::Sdk(device) => device.reconnect().await,
        }
    }

    /// The client's folded state of each of `messages` (per channel).
    pub(crate) async fn folded(
        &self,
        messages: &HashMap<String, Vec<uuid::Uuid>>,
    ) -> HashMap<String, Vec<(uuid::Uuid, Option<Folded>)>> {
        let mut sdk_states = match self {
            Self::Rust(_) => HashMap::new(),
            Self::Sdk(device) => match device.states().await {
                Ok(states) => states
                    .into_iter()
                    .map(|(channel, states)| (channel, states.into_iter().collect::<HashMap<_, _>>()))
                    .collect(),
                Err(e) => {
                    eprintln!("the SDK driver gave no states: {e}");
                    HashMap::new()
                }
            },
        };
        let mut out = HashMap::new();
        for (channel, ids) in messages {
            let states = ids
                .iter()
                .map(|id| {
                    let state = match self {
                        Self::Rust(client) => client.message(channel, *id).as_ref().map(Folded::from),
                        Self::Sdk(_) => sdk_states.get_mut(channel).and_then(|s| s.remove(id)),
                    };
                    (*id, state)
                })
                .collect();
            out.insert(channel.clone(), states);
        }
        out
    }

    pub(crate) async fn close(self) {
        match self {
            Self::Rust(client) => client.close().await,
            Self::Sdk(device) => device.close().await,
        }
    }
}

/// One device: sends, edits, deletes and reacts at random intervals in its
/// user's channels while the phase is `Load`, records everything, at the
/// end receives until it has every channel up to its final `seq`, and then
/// records the client library's folded state of every message it got.
pub(crate) async fn device(
    client: DeviceClient,
    mut events: tokio::sync::mpsc::Receiver<Event>,
    mut log: ClientLog,
    mut phase: watch::Receiver<Phase>,
    workload: Workload,
    drained: Arc<AtomicUsize>,
) -> ClientLog {
    let mut reported_drained = false;
    let mut in_flight = FuturesUnordered::new();
    let mut next_send = Instant::now();
    let mut counter = 0u64;
    let mut targets: Option<Arc<HashMap<String, i64>>> = None;
    let mut final_deadline = None;
    let mut act = Targets::default();
    loop {
        let current = phase.borrow().clone();
        if let Phase::Final(t) = &current {
            if targets.is_none() {
                targets = Some(t.clone());
                final_deadline = Some(Instant::now() + Duration::from_secs(60));
            }
        }
        if let Some(t) = &targets {
            let caught_up = log.channels.iter().all(|c| {
                let want = t.get(c).copied().unwrap_or(0);
                log.delivered.get(c).and_then(|v| v.last()).map_or(0, |m| m.0) >= want
            });
            if (caught_up && in_flight.is_empty()) || final_deadline.is_some_and(|d| Instant::now() > d) {
                break;
            }
        }
        if current == Phase::Drain && in_flight.is_empty() && !reported_drained {
            reported_drained = true;
            drained.fetch_add(1, Ordering::SeqCst);
        }
        let sending = matches!(current, Phase::Load | Phase::Storm(_)) && !log.channels.is_empty();
        tokio::select! {
            () = tokio::time::sleep_until(next_send), if sending && in_flight.len() < workload.max_in_flight => {
                let channel = log.channels[(counter as usize) % log.channels.len()].clone();
                let key = format!("{}-{}-{counter}", log.user, log.name.replace('/', "d"));
                counter += 1;
                let entry = if rand::rng().random_bool(workload.entries) {
                    act.pick_entry(&channel, &key)
                } else {
                    None
                };
                let sent = match entry {
                    Some((channel, body, intent)) => Sent { key: key.clone(), channel, body, intent },
                    None => {
                        let body = format!("{key} {}", "x".repeat(rand::rng().random_range(1..200)));
                        let reply = if rand::rng().random_bool(workload.replies) {
                            act.pick_reply(&channel)
                        } else {
                            None
                        };
                        let intent = reply.unwrap_or(Intent::Message);
                        Sent { key: key.clone(), channel: channel.clone(), body, intent }
                    }
                };
                let submitted = client.submit(&sent).await;
                let index = log.sent.len();
                log.sent.push(sent);
                match submitted {
                    Ok(pending) => in_flight.push(async move { (index, pending.await) }),
                    Err(e) => log.failed.push((key, e.to_string())),
                }
                next_send = Instant::now() + workload.every.mul_f64(rand::rng().random_range(0.2..1.8));
            }
            Some((index, result)) = in_flight.next(), if !in_flight.is_empty() => {
                let key = log.sent[index].key.clone();
                match result {
                    Ok(ack) => {
                        act.acked(&log.sent[index], ack.message_id);
                        log.acks.push(ack);
                    }
                    Err(SendError::Refused { code, .. }) => log.refused.push((key, code)),
                    Err(e) => log.failed.push((key, e.to_string())),
                }
            }
            event = events.recv() => match event {
                Some(event) => record(&client, &mut log, &mut act, event).await,
                None => break,
            },
            changed = phase.changed() => {
                if changed.is_err() {
                    break;
                }
                let storm = matches!(*phase.borrow(), Phase::Storm(_));
                if storm {
                    client.reconnect().await;
                }
            }
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
    log.folded = client.folded(&act.messages).await;
    client.close().await;
    log
}

pub(crate) async fn record(client: &DeviceClient, log: &mut ClientLog, act: &mut Targets, event: Event) {
    match event {
        Event::Connected { channels, .. } => {
            log.sessions += 1;
            log.hellos.push(
                channels
                    .into_iter()
                    .map(|c| (c.channel_id, (c.delivered_seq, c.read_seq)))
                    .collect(),
            );
        }
        Event::Message(m) => {
            let from_other = m.sender_id != log.user;
            act.delivered(&m.channel_id, &m);
            log.delivered
                .entry(m.channel_id.clone())
                .or_default()
                .push((m.seq, m.message_id));
            if from_other && rand::rng().random_bool(0.2) {
                client.mark_read(&m.channel_id, m.message_id).await;
            }
        }
        Event::Receipt {
            channel_id,
            user_id,
            kind,
            seq,
            ..
        } => log.receipts.push((channel_id, user_id, kind, seq)),
        Event::Error(_)
        | Event::Changed { .. }
        | Event::Settings { .. }
        | Event::ChannelUpdated { .. }
        | Event::Disconnected { .. }
        | Event::Stopped { .. }
        | Event::Typing { .. }
        | Event::Presence { .. }
        | Event::ChannelAdded { .. }
        | Event::ChannelRemoved { .. }
        | Event::Member(_) => {}
    }
}
