//! A WebSocket client speaking JSON frames, and builders of the frames tests
//! send most.

use std::collections::HashSet;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::FRAME_TIMEOUT;

/// The upgrade request for `ws://{addr}/v1/ws` with `token` in the
/// Authorization header.
pub fn ws_request(addr: impl std::fmt::Display, token: &str) -> Request {
    let mut request = format!("ws://{addr}/v1/ws").into_client_request().expect("request");
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().expect("header"));
    request
}

/// Opens a WebSocket to the server at `addr` (`host:port`) with `token` in
/// the Authorization header; HELLO is not read yet.
pub async fn ws_connect(
    addr: impl std::fmt::Display,
    token: &str,
) -> Result<WsClient, tokio_tungstenite::tungstenite::Error> {
    let (stream, _) = tokio_tungstenite::connect_async(ws_request(addr, token)).await?;
    Ok(WsClient::new(stream))
}

/// Connects to `addr` with `token` and reads HELLO, asserting it is one.
pub async fn ws_connect_hello(addr: impl std::fmt::Display, token: &str) -> WsClient {
    ws_connect(addr, token).await.expect("connect").read_hello().await
}

/// A WebSocket client speaking JSON frames.
pub struct WsClient {
    pub stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The HELLO frame once read, `Null` before.
    pub hello: Value,
    /// Channels HELLO listed for which no `CHANNEL_ADDED` or
    /// `CHANNEL_REMOVED` has arrived since: see [`WsClient::is_late_repeat`].
    listed_in_hello: HashSet<String>,
}

impl WsClient {
    /// A client on an open WebSocket whose HELLO is not read yet.
    pub fn new(stream: WebSocketStream<MaybeTlsStream<TcpStream>>) -> Self {
        Self {
            stream,
            hello: Value::Null,
            listed_in_hello: HashSet::new(),
        }
    }

    /// Reads past a late repeat of the `CHANNEL_ADDED` of each channel
    /// HELLO listed (see [`WsClient::is_late_repeat`]): for sessions on a
    /// node of a cluster, where the add may come back through NATS after
    /// HELLO. Single-node tests leave it off, so a repeat there fails them.
    pub fn tolerating_late_adds(mut self) -> Self {
        self.listed_in_hello = self.hello["channels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|channel| channel["channelId"].as_str().map(str::to_owned))
            .collect();
        self
    }

    /// Whether `frame` is the `CHANNEL_ADDED` of a channel this session's
    /// HELLO already listed, with nothing of that membership between: a
    /// session that connects just after a user was added on another node
    /// can read the add both in HELLO and, when the other node's NATS
    /// publish reached this node after the session subscribed, as a frame
    /// (at-least-once, §13.3; clients apply it idempotently). Tests read
    /// past such a repeat, once per listed channel, so they do not depend
    /// on how fast the other node published.
    fn is_late_repeat(&mut self, frame: &Value) -> bool {
        let channel = match frame["type"].as_str() {
            Some("CHANNEL_ADDED") => frame["channel"]["channelId"].as_str(),
            Some("CHANNEL_REMOVED") => {
                if let Some(id) = frame["channelId"].as_str() {
                    self.listed_in_hello.remove(id);
                }
                return false;
            }
            _ => return false,
        };
        channel.is_some_and(|id| self.listed_in_hello.remove(id))
    }

    /// Reads the first frame, asserts that it is HELLO and keeps it.
    pub async fn read_hello(mut self) -> Self {
        let hello = self.recv().await;
        assert_eq!(hello["type"], "HELLO", "first frame: {hello}");
        self.hello = hello;
        self
    }

    pub async fn send_json(&mut self, frame: Value) {
        self.stream
            .send(Message::text(frame.to_string()))
            .await
            .expect("ws send");
    }

    pub async fn send_text(&mut self, text: &str) {
        self.stream.send(Message::text(text.to_owned())).await.expect("ws send");
    }

    pub async fn send_msg(&mut self, channel: &str, client_msg_id: &str, body: &str) {
        self.send_json(json!({"type": "MSG_SEND", "channelId": channel, "clientMsgId": client_msg_id, "body": body}))
            .await;
    }

    /// The next message of any kind; panics after [`FRAME_TIMEOUT`], saying
    /// what the test was waiting for.
    async fn next_in_time(&mut self, waiting_for: &str) -> Option<Result<Message, WsError>> {
        tokio::time::timeout(FRAME_TIMEOUT, self.stream.next())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {waiting_for}"))
    }

    /// The next frame as JSON; panics on close or after [`FRAME_TIMEOUT`].
    pub async fn recv(&mut self) -> Value {
        loop {
            match self.next_in_time("a frame").await {
                Some(Ok(Message::Text(text))) => {
                    let frame: Value = serde_json::from_str(text.as_str()).expect("server sent JSON");
                    if self.is_late_repeat(&frame) {
                        continue;
                    }
                    return frame;
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                other => panic!("expected a text frame, got {other:?}"),
            }
        }
    }

    /// The next frame, which must have `type`.
    pub async fn recv_type(&mut self, ty: &str) -> Value {
        let frame = self.recv().await;
        assert_eq!(frame["type"], ty, "unexpected frame {frame}");
        frame
    }

    /// The next frame of type `ty`, skipping frames whose type is one of
    /// `skip`; any other frame fails the test.
    pub async fn recv_type_skipping(&mut self, ty: &str, skip: &[&str]) -> Value {
        loop {
            let frame = self.recv().await;
            if frame["type"] == ty {
                return frame;
            }
            let other = frame["type"].as_str().unwrap_or_default();
            assert!(skip.contains(&other), "unexpected frame {frame}");
        }
    }

    /// Sends a message and returns its MSG_ACK.
    pub async fn send_and_ack(&mut self, channel: &str, client_msg_id: &str, body: &str) -> Value {
        self.send_msg(channel, client_msg_id, body).await;
        let ack = self.recv_type("MSG_ACK").await;
        assert_eq!(ack["clientMsgId"], client_msg_id);
        ack
    }

    /// Asserts no frame arrives within `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        loop {
            match tokio::time::timeout(wait, self.stream.next()).await {
                Err(_) => return,
                Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
                Ok(Some(Ok(Message::Text(text))))
                    if serde_json::from_str(text.as_str()).is_ok_and(|frame| self.is_late_repeat(&frame)) =>
                {
                    continue
                }
                Ok(other) => panic!("expected silence, got {other:?}"),
            }
        }
    }

    /// Reads until the close frame and returns its code, skipping other frames.
    pub async fn recv_close_code(&mut self) -> u16 {
        loop {
            match self.next_in_time("close").await {
                Some(Ok(Message::Close(Some(frame)))) => return u16::from(frame.code),
                Some(Ok(Message::Close(None))) => return u16::from(CloseCode::Status),
                Some(Ok(_)) => continue,
                other => panic!("connection ended without a close frame: {other:?}"),
            }
        }
    }
}

/// A SYNC frame.
pub fn sync(channel: &str, after_seq: i64, limit: Option<i64>) -> Value {
    let mut frame = json!({"type": "SYNC", "channelId": channel, "afterSeq": after_seq});
    if let Some(limit) = limit {
        frame["limit"] = json!(limit);
    }
    frame
}

/// A MSG_SEND into channel `room`, quoting `reply_to` and in thread
/// `thread_id` when given (protocol.md §14).
pub fn reply(key: &str, body: &str, reply_to: Option<&Value>, thread_id: Option<&Value>) -> Value {
    let mut frame = json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": key, "body": body});
    if let Some(id) = reply_to {
        frame["replyTo"] = id.clone();
    }
    if let Some(id) = thread_id {
        frame["threadId"] = id.clone();
    }
    frame
}

/// Seqs of a list of MSG_RECV objects.
pub fn seqs(messages: &[Value]) -> Vec<i64> {
    messages.iter().map(|m| m["seq"].as_i64().expect("seq")).collect()
}
