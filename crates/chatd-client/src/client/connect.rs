//! Opening one connection: the WebSocket handshake with the token, up to
//! HELLO; and writing queued frames to it.

use chatd_proto::protocol::{ChannelState, ClientFrame, ServerFrame};
use futures_util::{SinkExt, StreamExt};
use std::net::{IpAddr, SocketAddr};

use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, Uri};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::types::ConnectError;
use crate::config::ClientConfig;

pub(super) type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Why one connection attempt failed.
pub(super) enum Failure {
    /// Give up (and tell the application).
    Fatal(ConnectError),
    /// Try again after a backoff.
    Transient(String),
}

/// HELLO's fields.
pub(super) struct Hello {
    pub(super) user_id: String,
    pub(super) session_id: String,
    pub(super) channels: Vec<ChannelState>,
}

pub(super) async fn open(config: &ClientConfig) -> Result<(Socket, Hello), Failure> {
    let attempt = async {
        let mut request = config
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| Failure::Fatal(ConnectError::BadUrl(e.to_string())))?;
        let bearer = HeaderValue::from_str(&format!("Bearer {}", config.token))
            .map_err(|_| Failure::Fatal(ConnectError::Unauthorized))?;
        request.headers_mut().insert("authorization", bearer);
        let ws_config = WebSocketConfig::default()
            .max_message_size(Some(config.max_message_bytes))
            .max_frame_size(Some(config.max_message_bytes))
            .read_buffer_size(config.read_buffer_bytes)
            .write_buffer_size(config.write_buffer_bytes);
        let handshake = match config.local_addr {
            None => tokio_tungstenite::connect_async_with_config(request, Some(ws_config), true).await,
            Some(local) => {
                if request.uri().scheme_str() != Some("ws") {
                    return Err(Failure::Fatal(ConnectError::BadUrl(
                        "local_addr is for ws:// URLs (no TLS)".into(),
                    )));
                }
                let stream = tcp_from(local, request.uri())
                    .await
                    .map_err(|e| Failure::Transient(format!("connect from {local}: {e}")))?;
                tokio_tungstenite::client_async_with_config(request, MaybeTlsStream::Plain(stream), Some(ws_config))
                    .await
            }
        };
        let (mut socket, _) = handshake.map_err(|e| match &e {
            tokio_tungstenite::tungstenite::Error::Http(response) if response.status().as_u16() == 401 => {
                Failure::Fatal(ConnectError::Unauthorized)
            }
            _ => Failure::Transient(e.to_string()),
        })?;
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => match ServerFrame::decode(&text) {
                    Ok(ServerFrame::Hello {
                        user_id,
                        session_id,
                        channels,
                        ..
                    }) => {
                        return Ok((
                            socket,
                            Hello {
                                user_id,
                                session_id,
                                channels,
                            },
                        ))
                    }
                    _ => return Err(Failure::Transient("the first frame was not HELLO".into())),
                },
                Some(Ok(Message::Close(frame))) => {
                    return Err(Failure::Transient(format!("closed before HELLO: {frame:?}")))
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(Failure::Transient(e.to_string())),
                None => return Err(Failure::Transient("closed before HELLO".into())),
            }
        }
    };
    tokio::time::timeout(config.connect_timeout, attempt)
        .await
        .unwrap_or_else(|_| Err(Failure::Transient("connect timed out".into())))
}

/// A TCP connection to `uri`'s host and port from source address `local`
/// (any port), with Nagle off as `connect_async_with_config` sets it.
async fn tcp_from(local: IpAddr, uri: &Uri) -> std::io::Result<TcpStream> {
    use std::io::{Error, ErrorKind};
    let host = uri
        .host()
        .ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no host in the URL"))?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(80);
    let mut last = Error::new(ErrorKind::NotFound, "the host has no address of the source's family");
    for remote in tokio::net::lookup_host((host, port)).await? {
        if remote.is_ipv4() != local.is_ipv4() {
            continue;
        }
        let socket = if local.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        socket.bind(SocketAddr::new(local, 0))?;
        match socket.connect(remote).await {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                return Ok(stream);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Writes queued frames with one flush.
pub(super) async fn write_all(socket: &mut Socket, out: &mut Vec<ClientFrame>) -> Result<(), String> {
    if out.is_empty() {
        return Ok(());
    }
    for frame in out.drain(..) {
        let text = serde_json::to_string(&frame).map_err(|e| e.to_string())?;
        socket.feed(Message::text(text)).await.map_err(|e| e.to_string())?;
    }
    socket.flush().await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The connection comes from the source address asked for (the
    /// listener sees it as the peer), on a port the system chose.
    #[tokio::test]
    async fn a_connection_comes_from_its_local_addr() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let uri: Uri = format!("ws://127.0.0.1:{port}/v1/ws").parse().unwrap();
        for source in ["127.0.0.2", "127.0.0.3"] {
            let local: IpAddr = source.parse().unwrap();
            let stream = tcp_from(local, &uri).await.expect("connects from a loopback address");
            let (_accepted, peer) = listener.accept().await.unwrap();
            assert_eq!(peer.ip(), local, "the server sees the bound source address");
            assert_eq!(stream.local_addr().unwrap().ip(), local);
            assert!(stream.nodelay().unwrap(), "Nagle off, as for connect_async");
        }
    }

    /// `local_addr` with `wss://` is refused as a bad URL, never silently
    /// sent without TLS.
    #[tokio::test]
    async fn local_addr_with_wss_is_a_bad_url() {
        let mut config = ClientConfig::new("wss://127.0.0.1:9/v1/ws", "token");
        config.local_addr = Some("127.0.0.2".parse().unwrap());
        match open(&config).await {
            Err(Failure::Fatal(ConnectError::BadUrl(why))) => assert!(why.contains("ws://"), "{why}"),
            Err(Failure::Fatal(other)) => panic!("expected BadUrl, got {other:?}"),
            Err(Failure::Transient(why)) => panic!("expected BadUrl, got a transient failure: {why}"),
            Ok(_) => panic!("connected over wss without TLS"),
        }
    }
}
