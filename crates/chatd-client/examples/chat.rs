//! A terminal chat on chatd, built on the client library.
//!
//! ```sh
//! # server: cargo run --release -- serve   (admin token in ./data/secrets.toml)
//! CHATD_ADMIN_TOKEN=... cargo run -p chatd-client --features admin --example chat -- \
//!     http://127.0.0.1:8080 alice room1
//! ```
//! Creates `room1` with `alice` as a member when it does not exist, mints a
//! token for `alice`, prints the channel's history and every new message,
//! and sends each line typed on stdin (retried safely until ACKed).

use chatd_client::admin::{AdminClient, AdminError};
use chatd_client::{Client, ClientConfig, Event, StartFrom};
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(base), Some(user), Some(channel)) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: chat <http://host:port> <userId> <channelId>   (CHATD_ADMIN_TOKEN in the environment)");
        std::process::exit(2);
    };
    let admin_token = std::env::var("CHATD_ADMIN_TOKEN").map_err(|_| "set CHATD_ADMIN_TOKEN")?;
    let admin = AdminClient::new(&base, admin_token);
    match admin.create_channel(Some(&channel), std::slice::from_ref(&user)).await {
        Ok(_) | Err(AdminError::Status { status: 409, .. }) => {}
        Err(e) => return Err(e.into()),
    }
    admin.add_member(&channel, &user).await?;
    let token = admin.token(&user, Some(3600)).await?;

    let ws = format!("{}/v1/ws", base.replacen("http", "ws", 1));
    let mut config = ClientConfig::new(ws, token);
    config.start_from = StartFrom::Beginning;
    config.auto_delivered = true;
    let (client, mut events) = Client::connect(config).await?;

    let sender = client.clone();
    let target = channel.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.is_empty() {
                continue;
            }
            match sender.send(&target, line).await {
                Ok(ack) if ack.duplicate => eprintln!("(stored earlier as #{})", ack.seq),
                Ok(_) => {}
                Err(e) => eprintln!("not sent: {e}"),
            }
        }
        sender.close().await;
    });

    while let Some(event) = events.recv().await {
        match event {
            Event::Message(m) if m.channel_id == channel => println!("#{} {}: {}", m.seq, m.sender_id, m.body),
            Event::Disconnected { code, reason } => eprintln!("(disconnected: {code:?} {reason}; reconnecting)"),
            Event::Stopped { reason } => {
                eprintln!("(stopped: {reason})");
                break;
            }
            _ => {}
        }
    }
    Ok(())
}
