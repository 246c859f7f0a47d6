//! Micro-benchmarks of the hot pure code: client frame decode (fast path and
//! refusal path), validation, server frame encoding, and the client's decode
//! of server frames (`ServerFrame::decode` against serde's tagged-enum path). Run with
//! `cargo bench --bench frames`; compare the figures as ratios within one run.

use std::hint::black_box;

use chatd::protocol::{decode_client_frame, peek_client_msg_id, RecvMessage, ServerFrame};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn send_frame(body_len: usize) -> String {
    serde_json::json!({
        "type": "MSG_SEND",
        "channelId": "room-42",
        "clientMsgId": "0192f1a4-7c1e-7d2a-9b1a-3c4d5e6f7a8b",
        "body": "x".repeat(body_len),
    })
    .to_string()
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    for body in [100usize, 1_000, 16_000] {
        let text = send_frame(body);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("msg_send_{body}B"), |b| {
            b.iter(|| decode_client_frame(black_box(&text)).map(|f| f.validate(16_384)))
        });
    }
    group.finish();
    // A group of its own: the throughput setting above is per message size.
    let mut group = c.benchmark_group("decode_other");
    let bad = r#"{"type":"MSG_SEND","channelId":"room","clientMsgId":"c-1","body":7}"#;
    group.bench_function("refused_invalid_field", |b| {
        b.iter(|| decode_client_frame(black_box(bad)))
    });
    let text = send_frame(100);
    group.bench_function("peek_client_msg_id", |b| {
        b.iter(|| peek_client_msg_id(black_box(&text)))
    });
    group.finish();
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    for body in [100usize, 1_000, 16_000] {
        // As the server encodes a MSG_RECV it fans out: from the message.
        let message = RecvMessage {
            message_id: uuid::Uuid::now_v7(),
            channel_id: "room-42".into(),
            sender_id: "alice".into(),
            seq: 123_456,
            body: "x".repeat(body),
            ts: 1_795_957_534_946,
            client_msg_id: Some("0192f1a4-7c1e-7d2a-9b1a-3c4d5e6f7a8b".into()),
            ..Default::default()
        };
        group.bench_function(format!("msg_recv_{body}B"), |b| {
            b.iter(|| ServerFrame::encode_msg_recv(black_box(&message)))
        });
    }
    group.finish();
}

fn decode_server(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode_server");
    let recv = ServerFrame::MsgRecv(Box::new(RecvMessage {
        message_id: uuid::Uuid::now_v7(),
        channel_id: "room-42".into(),
        sender_id: "alice".into(),
        seq: 123_456,
        body: "x".repeat(100),
        ts: 1_795_957_534_946,
        client_msg_id: Some("0192f1a4-7c1e-7d2a-9b1a-3c4d5e6f7a8b".into()),
        ..Default::default()
    }))
    .encode();
    group.bench_function("msg_recv_100B_decode", |b| {
        b.iter(|| ServerFrame::decode(black_box(&recv)))
    });
    group.bench_function("msg_recv_100B_serde_tagged", |b| {
        b.iter(|| serde_json::from_str::<ServerFrame>(black_box(&recv)))
    });
    group.finish();
}

criterion_group!(benches, decode, encode, decode_server);
criterion_main!(benches);
