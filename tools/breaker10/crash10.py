"""kill -9 chatd while four users pipeline MSG_SEND, MSG_EDIT and MSG_REACT frames (windows of
40 in flight, two channels); after each restart: every ACKed entry stored once with its ids and
seq, seqs gapless, no key stored twice, the ACKs of one connection's pipelined sends to one
channel in increasing seq in the order sent (guarantee 4), every ACKed frame retried gets the
original ids with duplicate:true, and every frame that was sent but never answered, retried
with its key, ends stored exactly once (duplicate or new, never twice, never a conflict).

usage: crash10.py sqlite|pg PORT [rounds]   (starts and kills its own server via serve.sh;
data dir /tmp/breaker10/data-PORT, removed first; PostgreSQL database breaker10_PORT, dropped first)
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

store, port = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import FINDINGS, Session, channel, check, http, token, uid  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/tmp/breaker10/data-{port}"
DB = f"breaker10_{port}"
shutil.rmtree(DATA, ignore_errors=True)
if store == "pg":
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"], check=True)


def start():
    env = dict(os.environ, B10_DB=DB)
    out = subprocess.run(["bash", f"{HERE}/serve.sh", store, port, "CHATD_RATE_LIMIT_PER_SEC=0",
                          "CHATD_USER_RATE_LIMIT_PER_SEC=0"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


pid = start()
users = [uid(f"k{i}") for i in range(4)]
chans = [uid("kill-a"), uid("kill-b")]
for c in chans:
    channel(c, users)
toks = {u: token(u, ttl=36000) for u in users}

lock = threading.Lock()
acked = {}       # (user, key) -> ack
frames = {}      # (user, key) -> frame
unanswered = {}  # (user, key) -> frame, sent but no answer before the kill
order_bad = []


def sender(user, stop):
    try:
        s = Session(toks[user])
    except Exception:
        return
    mine = []  # messageIds of my messages
    try:
        while not stop.is_set():
            batch = []
            for _ in range(40):
                c = random.choice(chans)
                k = uuid.uuid4().hex
                r = random.random()
                if r < 0.15 and mine:
                    f = {"type": "MSG_EDIT", "clientMsgId": k, "messageId": random.choice(mine), "body": f"edit {k}"}
                elif r < 0.3 and mine:
                    f = {"type": "MSG_REACT", "clientMsgId": k, "messageId": random.choice(mine),
                         "emoji": random.choice(["👍", "🔥", "x"]), "op": random.choice(["add", "remove"])}
                else:
                    f = {"type": "MSG_SEND", "channelId": c, "clientMsgId": k, "body": f"m {k}"}
                batch.append(f)
            for f in batch:
                with lock:
                    frames[(user, f["clientMsgId"])] = f
                    unanswered[(user, f["clientMsgId"])] = f
                s.send(f)
            last = {}
            for f in batch:
                a = s.answer(f["clientMsgId"], timeout=20)
                with lock:
                    unanswered.pop((user, f["clientMsgId"]), None)
                if a["type"] != "MSG_ACK":
                    continue
                with lock:
                    acked[(user, f["clientMsgId"])] = a
                if f["type"] == "MSG_SEND":
                    mine.append(a["messageId"])
                    c = a["channelId"]
                    if c in last and a["seq"] <= last[c]:
                        order_bad.append((user, c, last[c], a["seq"]))
                    last[c] = a["seq"]
            mine = mine[-50:]
    except Exception:
        pass
    finally:
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


def stored():
    by_id, keys, gaps = {}, {}, []
    for c in chans:
        h = history(c)
        if [m["seq"] for m in h] != list(range(1, len(h) + 1)):
            gaps.append(c)
        for m in h:
            by_id[m["messageId"]] = m
            if m.get("clientMsgId"):
                keys[(m["senderId"], m["clientMsgId"])] = keys.get((m["senderId"], m["clientMsgId"]), 0) + 1
    return by_id, keys, gaps


for rnd in range(rounds):
    stop = threading.Event()
    ths = [threading.Thread(target=sender, args=(u, stop)) for u in users]
    [t.start() for t in ths]
    time.sleep(random.uniform(3, 6))
    os.kill(pid, signal.SIGKILL)
    t_kill = time.time()
    time.sleep(0.3)
    stop.set()
    [t.join(timeout=30) for t in ths]
    pid = start()
    print(f"   round {rnd}: restarted in {time.time() - t_kill:.1f} s")
    with lock:
        acks = dict(acked)
        pending = dict(unanswered)
        unanswered.clear()
    by_id, keys, gaps = stored()
    missing = [k for k, a in acks.items() if a["messageId"] not in by_id or by_id[a["messageId"]]["seq"] != a["seq"]]
    twice = [k for k, n in keys.items() if n > 1]
    check(not missing, f"round {rnd}: ACKed entries missing or moved: {len(missing)} of {len(acks)}")
    check(not gaps and not twice, f"round {rnd}: gaps {gaps}, keys stored twice {twice[:3]}")
    check(not order_bad, f"round {rnd}: pipelined sends ACKed out of order: {order_bad[:3]}")
    sess = {u: Session(toks[u]) for u in users}
    bad = []
    for (u, k), a in random.sample(list(acks.items()), min(150, len(acks))):
        sess[u].send(frames[(u, k)])
        r = sess[u].answer(k, timeout=20)
        if r["type"] != "MSG_ACK" or not r.get("duplicate") or r["messageId"] != a["messageId"] or r["seq"] != a["seq"]:
            bad.append((k, r.get("type"), r.get("code"), r.get("duplicate")))
    check(not bad, f"round {rnd}: ACKed retries not answered with the original ids: {bad[:3]}")
    # retry everything unanswered: each ends stored once
    bad2, dup, new, refused = [], 0, 0, {}
    for (u, k), f in pending.items():
        sess[u].send(f)
        r = sess[u].answer(k, timeout=20)
        if r["type"] == "MSG_ACK":
            with lock:
                acked[(u, k)] = r
            dup += r["duplicate"]
            new += not r["duplicate"]
        else:
            refused[r.get("code")] = refused.get(r.get("code"), 0) + 1
            if r.get("code") == "idempotency_conflict":
                bad2.append((k, r.get("code")))
    [x.close() for x in sess.values()]
    by_id, keys, gaps = stored()
    twice = [k for k, n in keys.items() if n > 1]
    check(not bad2 and not twice and not gaps,
          f"round {rnd}: {len(pending)} unanswered frames retried: {dup} duplicate, {new} new, refused {refused}; conflicts {bad2[:3]}, twice {twice[:3]}, gaps {gaps}")
    print(f"   round {rnd}: {len(acks)} ACKed before the kill, {len(by_id)} entries stored")

os.kill(pid, signal.SIGTERM)
print("FINDINGS:", FINDINGS)
