//! What the load generator pays per frame it receives, as a deterministic
//! workload for `valgrind --tool=callgrind` (instructions, repeatable on a
//! loaded machine): `.ci/recv-cost` runs it and fails when the count per
//! frame grows by more than 20 % over `benches/recv_cost.baseline`.
//!
//! ```sh
//! recv_cost N        # the client: connects, takes N MSG_RECV, exits
//! recv_cost serve N  # spawned by the client: a WebSocket peer that sends them
//! ```
//!
//! The client side is the generator's own receive path: `chatd_client`
//! configured by `chatd-bench` (mimalloc, the same settings), its events
//! drained as a scenario drains them. The peer runs in a child process, which
//! callgrind does not follow, so only the client's instructions are counted;
//! the instructions per frame are the difference between two runs with
//! different N divided by the difference in N, so start-up cancels out.

use std::time::Duration;

use chatd_client::{Client, ClientConfig, Event};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The MSG_RECV the generator gets in `send` and `hot`: a 100-byte body
/// (the default `--body-bytes`) from another member of one channel.
fn recv_frame(seq: u64) -> String {
    let body = format!("{:016x}{}", seq, "x".repeat(84));
    format!(
        "{{\"type\":\"MSG_RECV\",\"messageId\":\"0193a0b4-7c1e-7000-8000-{seq:012x}\",\"channelId\":\"bench-0\",\
         \"senderId\":\"bench-u1\",\"seq\":{seq},\"body\":\"{body}\",\"ts\":1733390000000,\
         \"clientMsgId\":\"k-{seq}\",\"kind\":\"message\"}}"
    )
}

async fn serve(listener: TcpListener, n: u64) -> Result<(), Box<dyn std::error::Error>> {
    let (socket, _) = listener.accept().await?;
    let mut ws = tokio_tungstenite::accept_async(socket).await?;
    let hello = "{\"type\":\"HELLO\",\"userId\":\"bench-u0\",\"sessionId\":\"s\",\"serverTs\":1733390000000,\
                 \"channels\":[{\"channelId\":\"bench-0\",\"lastSeq\":0,\"deliveredSeq\":0,\"readSeq\":0,\"unread\":0}]}";
    ws.send(Message::text(hello)).await?;
    for seq in 1..=n {
        ws.feed(Message::text(recv_frame(seq))).await?;
    }
    ws.flush().await?;
    // Wait for the client to go away (its close, or the socket's end).
    while let Some(Ok(_)) = ws.next().await {}
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        let n: u64 = args.get(1).ok_or("serve N")?.parse()?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        println!("{}", listener.local_addr()?);
        return serve(listener, n).await;
    }
    let n: u64 = args.first().ok_or("recv_cost N")?.parse()?;
    let mut peer = std::process::Command::new(std::env::current_exe()?)
        .args(["serve", &n.to_string()])
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut addr = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(peer.stdout.take().ok_or("no stdout")?),
        &mut addr,
    )?;
    let mut config = ClientConfig::new(format!("ws://{}/v1/ws", addr.trim()), "token");
    // As chatd-bench's `client_config`.
    config.ack_timeout = Duration::from_secs(30);
    config.connect_timeout = Duration::from_secs(30);
    config.event_capacity = 65_536;
    config.fold_messages = false;
    let (client, mut events) = Client::connect(config).await?;
    let mut received = 0u64;
    while received < n {
        match events.recv().await {
            Some(Event::Message(m)) => {
                received += 1;
                std::hint::black_box(&m);
            }
            Some(_) => {}
            None => return Err(format!("the client stopped after {received} of {n} frames").into()),
        }
    }
    drop(client);
    peer.kill()?;
    peer.wait()?;
    println!("{received}");
    Ok(())
}
