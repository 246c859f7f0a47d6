#!/usr/bin/env python3
"""The client pattern of docs/known-issues.md, "The first frame after HELLO can
wait for the next timer": N clients at once, each reads HELLO, sends a SYNC and
(unless --no-close) a close frame at once, then reads 10 KB every 100 ms.

Prints, per client, the first frames it got with their time since it connected
(s), then one line: how many got their SYNC_BATCH page, how many got the close
answered without the page (a client close drops answers not yet written,
docs/protocol.md), and how many got the server's ping (ping_interval_secs, 30 s)
before anything else: a stalled session.

Usage: benches/first_frame_stall.py --port PORT --token TOKEN [--channel room]
       [--clients 8] [--no-close]
The channel should hold about 40 messages of 16 KB (so the page takes seconds
to read); the token is a member's (`chatd token USER`). Standard library only.
"""
import argparse
import base64
import json
import os
import socket
import struct
import threading
import time


def masked(payload: bytes, opcode: int) -> bytes:
    key = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def split_frames(buf: bytes):
    """Whole unmasked server frames at the start of buf, and the rest."""
    out = []
    while len(buf) >= 2:
        n, off = buf[1] & 0x7F, 2
        if n == 126:
            if len(buf) < 4:
                break
            n, off = struct.unpack(">H", buf[2:4])[0], 4
        elif n == 127:
            if len(buf) < 10:
                break
            n, off = struct.unpack(">Q", buf[2:10])[0], 10
        if len(buf) < off + n:
            break
        out.append((buf[0] & 0x0F, buf[off : off + n]))
        buf = buf[off + n :]
    return out, buf


def client(args, results, i):
    t0 = time.time()
    s = socket.create_connection(("127.0.0.1", args.port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        (
            f"GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {args.token}\r\n\r\n"
        ).encode()
    )
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    buf = buf[buf.index(b"\r\n\r\n") + 4 :]
    while True:  # HELLO
        frames, rest = split_frames(buf)
        if frames:
            buf = rest
            break
        buf += s.recv(4096)
    sync = {"type": "SYNC", "channelId": args.channel, "afterSeq": 0, "limit": 40}
    s.sendall(masked(json.dumps(sync).encode(), 1))
    if not args.no_close:
        s.sendall(masked(struct.pack(">H", 1000), 8))
    got = []
    s.settimeout(0.05)
    end = time.time() + 40
    while time.time() < end:
        try:
            data = s.recv(10240)
            if not data:
                break
            buf += data
        except socket.timeout:
            pass
        frames, buf = split_frames(buf)
        for opcode, payload in frames:
            at = round(time.time() - t0, 2)
            if opcode == 1:
                got.append((at, json.loads(payload).get("type")))
            elif opcode == 9:
                got.append((at, "PING"))
            elif opcode == 8:
                got.append((at, "CLOSE"))
                end = 0
        time.sleep(0.1)
    results[i] = got


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--channel", default="room")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--no-close", action="store_true")
    args = parser.parse_args()
    results = {}
    threads = [threading.Thread(target=client, args=(args, results, i)) for i in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    paged = closed = stalled = 0
    for i in sorted(results):
        kinds = [kind for _, kind in results[i]]
        print(i, results[i][:3])
        if kinds[:1] == ["PING"]:
            stalled += 1
        elif "SYNC_BATCH" in kinds:
            paged += 1
        else:
            closed += 1
    print(f"{args.clients} clients: paged {paged}, close answered without the page {closed}, stalled {stalled}")


if __name__ == "__main__":
    main()
