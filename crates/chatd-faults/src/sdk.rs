//! Devices that run through the TypeScript SDK (`clients/typescript`):
//! one Node process per device running the SDK's fault driver
//! (`test/faults/driver.ts`, built to `build/test/faults/driver.js`), told
//! what to do with JSON lines on its stdin, and reporting what the SDK did
//! (ACKs, refusals, entries handed to the application in order, HELLO
//! watermarks, RECEIPT frames, folded message states) as JSON lines on its
//! stdout. [`SdkDevice`] turns those reports into the same [`Event`]s and
//! [`Ack`]s the Rust client gives, so one workload and one checker serve both.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use chatd_client::chatd_proto::protocol::{ChannelState, ErrorCode, ReceiptKind, RecvMessage, ThreadSummary};
use chatd_client::{Ack, Event, SendError};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, oneshot};

use crate::record::{summary_tuple, Folded};

/// Outcome of one send or entry, as the SDK's promise settled.
pub type Outcome = Result<Ack, SendError>;

type Waiters = Arc<Mutex<HashMap<String, oneshot::Sender<Outcome>>>>;
type StatesWaiter = Arc<Mutex<Option<oneshot::Sender<HashMap<String, Vec<(uuid::Uuid, Folded)>>>>>>;

/// One SDK device: the Node driver process and the routes of its reports.
pub struct SdkDevice {
    child: Child,
    stdin: tokio::sync::Mutex<ChildStdin>,
    waiters: Waiters,
    states: StatesWaiter,
}

/// A message's folded state as the SDK's channel store holds it (its
/// `Message` type).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SdkMessage {
    message_id: uuid::Uuid,
    body: String,
    #[serde(default)]
    edited_at: Option<i64>,
    #[serde(default)]
    deleted: bool,
    #[serde(default)]
    reactions: Vec<SdkReaction>,
    #[serde(default)]
    reply_to: Option<uuid::Uuid>,
    #[serde(default)]
    thread_id: Option<uuid::Uuid>,
    /// The SDK's `ThreadSummary`: the wire's names.
    #[serde(default)]
    thread: Option<ThreadSummary>,
}

#[derive(Debug, Deserialize)]
struct SdkReaction {
    emoji: String,
    count: i64,
    me: bool,
}

impl SdkDevice {
    /// Starts `node <driver>` for the user of `token` on `channels` and
    /// waits (30 s at most) until the SDK is connected with every channel's
    /// store open. Its reports arrive as [`Event`]s on the receiver.
    ///
    /// # Errors
    /// When Node cannot be started or the driver does not get ready.
    pub async fn spawn(
        driver: &Path,
        url: &str,
        token: &str,
        channels: &[String],
        reply_timeout: Duration,
    ) -> anyhow::Result<(Self, mpsc::Receiver<Event>)> {
        let mut child = Command::new("node")
            .arg(driver)
            .arg("--url")
            .arg(url)
            .arg("--token")
            .arg(token)
            .arg("--channels")
            .arg(channels.join(","))
            .arg("--reply-timeout-ms")
            .arg(reply_timeout.as_millis().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .context("start node with the SDK driver")?;
        let stdin = child.stdin.take().context("the driver's stdin")?;
        let stdout = child.stdout.take().context("the driver's stdout")?;
        let (events_tx, events) = mpsc::channel(4096);
        let waiters = Waiters::default();
        let states = StatesWaiter::default();
        let (ready_tx, ready) = oneshot::channel();
        tokio::spawn(read_reports(
            BufReader::new(stdout),
            events_tx,
            waiters.clone(),
            states.clone(),
            ready_tx,
        ));
        match tokio::time::timeout(Duration::from_secs(30), ready).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => bail!("the SDK driver ended before it was ready"),
            Err(_) => bail!("the SDK driver was not ready within 30 s"),
        }
        Ok((
            Self {
                child,
                stdin: tokio::sync::Mutex::new(stdin),
                waiters,
                states,
            },
            events,
        ))
    }

    async fn command(&self, command: Value) -> Result<(), String> {
        let mut line = command.to_string();
        line.push('\n');
        let mut stdin = self.stdin.lock().await;
        stdin.write_all(line.as_bytes()).await.map_err(|e| e.to_string())?;
        stdin.flush().await.map_err(|e| e.to_string())
    }

    /// Hands a send or entry (`command` with `op`, `key` and its fields) to
    /// the SDK; the receiver gets its outcome.
    ///
    /// # Errors
    /// [`SendError::Closed`] when the driver is gone.
    pub async fn submit(&self, key: &str, command: Value) -> Result<oneshot::Receiver<Outcome>, SendError> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiters) = self.waiters.lock() {
            waiters.insert(key.to_owned(), tx);
        }
        self.command(command).await.map_err(SendError::Closed)?;
        Ok(rx)
    }

    /// `markRead` of the channel (up to its newest held entry).
    pub async fn mark_read(&self, channel_id: &str) {
        let _ = self.command(json!({"op": "read", "channelId": channel_id})).await;
    }

    /// Drops the SDK's connection (it reconnects by itself).
    pub async fn reconnect(&self) {
        let _ = self.command(json!({"op": "reconnect"})).await;
    }

    /// Every message's folded state in the SDK's channel stores, per channel.
    ///
    /// # Errors
    /// When the driver does not answer within 10 s.
    pub async fn states(&self) -> anyhow::Result<HashMap<String, Vec<(uuid::Uuid, Folded)>>> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut slot) = self.states.lock() {
            *slot = Some(tx);
        }
        self.command(json!({"op": "states"}))
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        Ok(tokio::time::timeout(Duration::from_secs(10), rx).await??)
    }

    /// Closes the SDK client and waits for the process to end (5 s, then
    /// kills it).
    pub async fn close(mut self) {
        let _ = self.command(json!({"op": "close"})).await;
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.start_kill();
            let _ = self.child.wait().await;
        }
    }
}

/// Reads the driver's reports until its stdout ends.
async fn read_reports(
    stdout: BufReader<tokio::process::ChildStdout>,
    events: mpsc::Sender<Event>,
    waiters: Waiters,
    states: StatesWaiter,
    ready: oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let mut lines = stdout.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(report) = serde_json::from_str::<Value>(&line) else {
            eprintln!("sdk driver: not a report: {line}");
            continue;
        };
        let t = report["t"].as_str().unwrap_or_default();
        let event = match t {
            "ready" => {
                if let Some(ready) = ready.take() {
                    let _ = ready.send(());
                }
                None
            }
            "hello" => match serde_json::from_value::<Vec<ChannelState>>(report["channels"].clone()) {
                Ok(channels) => Some(vec![Event::Connected {
                    user_id: String::new(),
                    session_id: String::new(),
                    channels,
                }]),
                Err(e) => {
                    eprintln!("sdk driver: bad hello {e}: {line}");
                    None
                }
            },
            "entries" => match serde_json::from_value::<Vec<RecvMessage>>(report["entries"].clone()) {
                Ok(entries) => Some(entries.into_iter().map(|m| Event::Message(Box::new(m))).collect()),
                Err(e) => {
                    eprintln!("sdk driver: bad entries {e}: {line}");
                    None
                }
            },
            "receipt" => receipt(&report).map(|e| vec![e]),
            "ack" | "refused" | "failed" => {
                settle(&waiters, &report);
                None
            }
            "states" => {
                let folded = folded_states(&report["channels"]);
                if let Some(tx) = states.lock().ok().and_then(|mut slot| slot.take()) {
                    let _ = tx.send(folded);
                }
                None
            }
            _ => None,
        };
        for event in event.into_iter().flatten() {
            if events.send(event).await.is_err() {
                return;
            }
        }
    }
}

fn receipt(report: &Value) -> Option<Event> {
    Some(Event::Receipt {
        channel_id: report["channelId"].as_str()?.to_owned(),
        user_id: report["userId"].as_str()?.to_owned(),
        kind: serde_json::from_value::<ReceiptKind>(report["kind"].clone()).ok()?,
        message_id: report["messageId"].as_str()?.parse().ok()?,
        seq: report["seq"].as_i64()?,
        ts: report["ts"].as_i64().unwrap_or_default(),
    })
}

fn settle(waiters: &Waiters, report: &Value) {
    let Some(key) = report["key"].as_str() else {
        return;
    };
    let Some(tx) = waiters.lock().ok().and_then(|mut w| w.remove(key)) else {
        return;
    };
    let outcome = match report["t"].as_str() {
        Some("ack") => match (
            report["messageId"].as_str().and_then(|s| s.parse().ok()),
            report["channelId"].as_str(),
            report["seq"].as_i64(),
        ) {
            (Some(message_id), Some(channel_id), Some(seq)) => Ok(Ack {
                client_msg_id: key.to_owned(),
                message_id,
                channel_id: channel_id.to_owned(),
                seq,
                ts: report["ts"].as_i64().unwrap_or_default(),
                duplicate: report["duplicate"].as_bool().unwrap_or(false),
                // The SDK does not count attempts.
                attempts: 0,
            }),
            _ => Err(SendError::Closed(format!("malformed ack report: {report}"))),
        },
        Some("refused") => match serde_json::from_value::<ErrorCode>(report["code"].clone()) {
            Ok(code) => Err(SendError::Refused {
                code,
                message: report["message"].as_str().unwrap_or_default().to_owned(),
                reason: report["reason"].as_str().map(str::to_owned),
                retry_after_ms: report["retryAfterMs"].as_u64(),
            }),
            Err(_) => Err(SendError::Closed(format!("refused with {}", report["code"]))),
        },
        _ => Err(SendError::Closed(report["why"].as_str().unwrap_or("failed").to_owned())),
    };
    let _ = tx.send(outcome);
}

fn folded_states(channels: &Value) -> HashMap<String, Vec<(uuid::Uuid, Folded)>> {
    let mut out = HashMap::new();
    let Some(channels) = channels.as_object() else {
        return out;
    };
    for (channel, messages) in channels {
        let Ok(messages) = serde_json::from_value::<Vec<SdkMessage>>(messages.clone()) else {
            eprintln!("sdk driver: bad states of {channel}");
            continue;
        };
        let states = messages
            .into_iter()
            .map(|m| {
                let folded = Folded {
                    body: m.body,
                    edited_at: m.edited_at,
                    deleted: m.deleted,
                    reactions: m.reactions.into_iter().map(|r| (r.emoji, r.count, r.me)).collect(),
                    reply_to: m.reply_to,
                    thread_id: m.thread_id,
                    thread: m.thread.as_ref().map(summary_tuple),
                };
                (m.message_id, folded)
            })
            .collect();
        out.insert(channel.clone(), states);
    }
    out
}
