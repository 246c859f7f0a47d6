"""Two nodes over NATS on one PostgreSQL database; four users pipeline sends into two shared
channels, two through each node; node A is killed -9 mid-send and restarted, three times.
After each round: every ACKed entry (through either node) stored once with its ids, seqs
gapless, no key stored twice, and the sessions on node B got every entry through NATS or can
SYNC it (no seq of B's MSG_RECVs above a missing one in its channel's log).

usage: crash2n.py PORT_A PORT_B [rounds]   (starts both via serve.sh; database breaker9_2n_PORT_A,
dropped first; NATS subject prefix b9c<PORT_A>)
"""
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid

pa, pb = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.environ["CHATD_URL"] = f"http://127.0.0.1:{pb}"   # admin reads through B (A dies)
from lib import FINDINGS, Session, channel, check, http, token, uid  # noqa: E402
import b9util  # noqa: E402
import chatd_lib  # noqa: E402  (lib put tools/hostile on the path)

HERE = os.path.dirname(os.path.abspath(__file__))
DB = f"breaker9_2n_{pa}"
subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"], check=True)
subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {DB}"], check=True)


def start(port):
    env = dict(os.environ, B9_DB=DB)
    out = subprocess.run(["bash", f"{HERE}/serve.sh", "pg", port, "CHATD_NATS_URL=nats://127.0.0.1:4222",
                          f"CHATD_NATS_SUBJECT_PREFIX=b9c{pa}", "CHATD_RATE_LIMIT_PER_SEC=0",
                          "CHATD_USER_RATE_LIMIT_PER_SEC=0"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


pid_a, pid_b = start(pa), start(pb)
users = [uid(f"n{i}") for i in range(4)]
node = {users[0]: pa, users[1]: pa, users[2]: pb, users[3]: pb}
chans = [uid("c2n-a"), uid("c2n-b")]
for c in chans:
    channel(c, users)
toks = {u: token(u, ttl=36000) for u in users}
acked, recv_b, lock = {}, {}, threading.Lock()
b_ack_times = []  # when node B's senders got each answer


def session(u):
    chatd_lib.WS = f"ws://127.0.0.1:{node[u]}/v1/ws"
    try:
        return Session(toks[u])
    finally:
        chatd_lib.WS = f"ws://127.0.0.1:{pb}/v1/ws"


def sender(u, stop):
    try:
        s = session(u)
    except Exception:
        return
    try:
        while not stop.is_set():
            batch = [{"type": "MSG_SEND", "channelId": random.choice(chans), "clientMsgId": uuid.uuid4().hex,
                      "body": f"b-{uuid.uuid4().hex}"} for _ in range(10)]
            for f in batch:
                s.send(f)
            for f in batch:
                a = b9util.answer(s, f["clientMsgId"])
                if node[u] == pb:
                    b_ack_times.append((time.time(), a["type"], a.get("code")))
                if a["type"] == "MSG_ACK":
                    with lock:
                        acked[f["clientMsgId"]] = a
    except Exception:
        pass
    finally:
        if node[u] == pb:
            with lock:
                for f in s.frames:
                    if f["type"] == "MSG_RECV":
                        recv_b.setdefault((u, f["channelId"]), []).append(f["seq"])
        s.close()


def history(c):
    out, after = [], 0
    while True:
        st, b = http("GET", f"/v1/channels/{c}/messages?afterSeq={after}&limit=500")
        assert st == 200, (st, b)
        out += b["messages"]
        if not b["hasMore"]:
            return out
        after = out[-1]["seq"]


for rnd in range(rounds):
    stop = threading.Event()
    ths = [threading.Thread(target=sender, args=(u, stop)) for u in users]
    [t.start() for t in ths]
    time.sleep(random.uniform(2, 4))
    killed_at = time.time()
    os.kill(pid_a, signal.SIGKILL)
    time.sleep(1.5)
    stop.set()
    [t.join(timeout=30) for t in ths]
    pid_a = start(pa)
    with lock:
        acks = dict(acked)
    by_id, gaps, dup = {}, [], 0
    for c in chans:
        h = history(c)
        if [m["seq"] for m in h] != list(range(1, len(h) + 1)):
            gaps.append(c)
        for m in h:
            dup += m["messageId"] in by_id
            by_id[m["messageId"]] = m
    missing = [k for k, a in acks.items() if a["messageId"] not in by_id or by_id[a["messageId"]]["seq"] != a["seq"]]
    keys = {}
    for m in by_id.values():
        keys[(m["senderId"], m.get("clientMsgId"))] = keys.get((m["senderId"], m.get("clientMsgId")), 0) + 1
    twice = [k for k, n in keys.items() if n > 1 and k[1]]
    order = [k for k, seqs in recv_b.items() if seqs != sorted(seqs) or len(set(seqs)) != len(seqs)]
    check(not missing, f"round {rnd}: ACKed entries missing or moved after node A's kill -9: {len(missing)} of {len(acks)}")
    check(not gaps and not dup and not twice, f"round {rnd}: gaps {gaps}, duplicate ids {dup}, keys twice {twice[:3]}")
    check(not order, f"round {rnd}: node B sessions got MSG_RECVs out of order or twice: {order[:3]}")
    ts = sorted(t for t, _, _ in b_ack_times)
    gap = max((b - a for a, b in zip(ts, ts[1:])), default=0)
    errs = [(ty, code) for _, ty, code in b_ack_times if ty != "MSG_ACK"]
    print(f"   round {rnd}: {len(acks)} ACKed, {len(by_id)} stored, B received {sum(len(v) for v in recv_b.values())}; "
          f"node B's senders: {len(ts)} answers, longest gap {gap:.2f} s, last {ts[-1] - killed_at if ts else 0:+.2f} s after the kill, refusals {errs[:3]}")
    b_ack_times.clear()
    recv_b.clear()

os.kill(pid_a, signal.SIGTERM)
os.kill(pid_b, signal.SIGTERM)
print("servers", pid_a, pid_b, "stopped")
print("FINDINGS:", FINDINGS)
