#!/usr/bin/env python3
"""HELLO end to end, several servers in one run (ABBA): connect (TCP,
upgrade with the user's token) to the first frame, HELLO, for a user in
many channels. Used for docs/performance.md, "HELLO with `unreadMentions`"
(issue 32): each server runs another build on the same seed
(tools/hello_cost/README.md).

    hello_cost.py --server without=http://127.0.0.1:8091 \
        --server with=http://127.0.0.1:8092 --admin-token T \
        --user u --user w --user v --rounds 40

Each round connects once to every server, in the given order on even
rounds and reversed on odd ones. Prints, per user, each server's median
and minimum HELLO time (the first 3 rounds dropped), its ratio to the
first server's, HELLO's size and counts, and whether every server answered
the same `unread` and `readSeq` per channel (equal work).
"""
import argparse
import asyncio
import json
import statistics
import time
import urllib.request

import websockets


def token(base, admin, user):
    req = urllib.request.Request(
        base + "/v1/tokens",
        data=json.dumps({"userId": user, "ttlSeconds": 7200}).encode(),
        headers={"Authorization": "Bearer " + admin, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req) as res:
        return json.load(res)["token"]


async def hello(base, tok):
    url = base.replace("http", "ws", 1) + "/v1/ws"
    started = time.perf_counter()
    async with websockets.connect(
        url, additional_headers={"Authorization": "Bearer " + tok}, max_size=None, compression=None
    ) as ws:
        frame = await ws.recv()
        took = (time.perf_counter() - started) * 1000
    return took, frame


def entries(frame):
    hello = json.loads(frame)
    assert hello["type"] == "HELLO", hello["type"]
    return [
        (c["channelId"], c["unread"], c["unreadMentions"], c["readSeq"]) for c in hello["channels"]
    ]


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--server", action="append", required=True, help="NAME=BASE_URL")
    p.add_argument("--admin-token", required=True)
    p.add_argument("--user", action="append", required=True)
    p.add_argument("--rounds", type=int, default=40)
    args = p.parse_args()
    servers = [tuple(s.split("=", 1)) for s in args.server]
    for user in args.user:
        toks = {name: token(url, args.admin_token, user) for name, url in servers}
        times = {name: [] for name, _ in servers}
        shapes = {}
        for r in range(args.rounds):
            for name, url in servers if r % 2 == 0 else servers[::-1]:
                took, frame = await hello(url, toks[name])
                times[name].append(took)
                shapes[name] = (entries(frame), len(frame))
        first = servers[0][0]
        work = {name: [(x[1], x[3]) for x in e] for name, (e, _) in shapes.items()}
        e, size = shapes[first]
        print(
            f"{user}: {len(e)} channels, HELLO {size} bytes, unread {sum(x[1] for x in e)}, "
            f"unreadMentions {[sum(x[2] for x in shapes[n][0]) for n, _ in servers]}; "
            f"same work everywhere: {all(w == work[first] for w in work.values())}"
        )
        med = {n: statistics.median(t[3:]) for n, t in times.items()}
        low = {n: min(t[3:]) for n, t in times.items()}
        for name, _ in servers:
            print(
                f"  {name}: median {med[name]:.2f} ms (x{med[name] / med[first]:.2f}), "
                f"min {low[name]:.2f} ms (x{low[name] / low[first]:.2f})"
            )


asyncio.run(main())
