"""Retention sweeps of two nodes racing on one PostgreSQL database (retention_sweep_secs=1 on
both): a channel with retentionSecs=1 gets 2,000 messages (every fifth a reply, every tenth a
thread reply, some reactions and edits) sent through both nodes while both sweep; afterwards
every message entry is deleted+expired exactly once, seqs gapless (no entry made by the sweep),
no preview text, nothing of the texts in pg_dump, no error in either log.

usage: retention2n.py PORT_A PORT_B NATS_PORT   (database breaker10_rt_PORT_A, dropped first)
"""
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid

pa, pb, np_ = sys.argv[1:4]
os.environ["CHATD_URL"] = f"http://127.0.0.1:{pa}"
from lib import FINDINGS, Session, channel, check, http, token, uid  # noqa: E402
import chatd_lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DB = f"breaker10_rt_{pa}"
subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"], check=True)
subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {DB}"], check=True)
nats = subprocess.Popen(["nats-server", "-a", "127.0.0.1", "-p", np_], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(0.5)


def start(port):
    out = subprocess.run(["bash", f"{HERE}/serve.sh", "pg", port, f"CHATD_NATS_URL=nats://127.0.0.1:{np_}",
                          f"CHATD_NATS_SUBJECT_PREFIX=b10r{pa}", "CHATD_RATE_LIMIT_PER_SEC=0",
                          "CHATD_USER_RATE_LIMIT_PER_SEC=0", "CHATD_RETENTION_SWEEP_SECS=1"],
                         capture_output=True, text=True, env=dict(os.environ, B10_DB=DB))
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


pids = [start(pa), start(pb)]
RARE = "ghijlmnoqrstuvwxyz"
users = [uid("rt") for _ in range(4)]
ch = uid("ret")
channel(ch, users)
st, _ = http("PATCH", f"/v1/channels/{ch}", body={"retentionSecs": 1})
assert st == 200, st
texts = []
lock = threading.Lock()


def sender(i):
    chatd_lib_ws = f"ws://127.0.0.1:{pa if i % 2 == 0 else pb}/v1/ws"
    chatd_lib.WS = chatd_lib_ws
    s = Session(token(users[i]))
    roots = []
    for n in range(500):
        body = "".join(random.choice(RARE) for _ in range(20))
        extra = {}
        if roots and n % 5 == 0:
            extra["replyTo"] = random.choice(roots)
        elif roots and n % 10 == 1:
            extra["threadId"] = random.choice(roots)
        r = s.send_msg(ch, body, **extra)
        if r["type"] == "MSG_ACK":
            with lock:
                texts.append(body)
            if "threadId" not in extra:
                roots.append(r["messageId"])
                roots = roots[-5:]
            if n % 7 == 0:
                k = uuid.uuid4().hex
                s.send({"type": "MSG_EDIT", "clientMsgId": k, "messageId": r["messageId"],
                        "body": "".join(random.choice(RARE) for _ in range(20))})
                s.answer(k)
    s.close()


ths = [threading.Thread(target=sender, args=(i,)) for i in range(4)]
[t.start() for t in ths]
[t.join() for t in ths]
time.sleep(6)
out, after = [], 0
while True:
    st, b = http("GET", f"/v1/channels/{ch}/messages?afterSeq={after}&limit=500")
    out += b["messages"]
    if not b["hasMore"]:
        break
    after = out[-1]["seq"]
seqs = [m["seq"] for m in out]
msgs = [m for m in out if m["kind"] == "message"]
not_exp = [m["seq"] for m in msgs if not (m.get("deleted") and m.get("expired"))]
check(seqs == list(range(1, len(seqs) + 1)), f"{len(seqs)} entries gapless after both nodes swept")
check(not not_exp, f"message entries not deleted+expired: {len(not_exp)} of {len(msgs)}")
prev = [m for m in msgs if m.get("replyPreview", {}).get("body")]
check(not prev, f"previews with text left: {len(prev)}")
dump = subprocess.run(["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "-a", DB], capture_output=True, text=True).stdout
held = [t for t in texts if t in dump]
check(not held, f"expired texts in pg_dump: {len(held)} of {len(texts)}")
for p in (pa, pb):
    errs = [ln for ln in open(f"/tmp/breaker10/b10-{p}.log") if (" ERROR " in ln or " WARN " in ln or "panic" in ln) and "NATS" not in ln]
    check(not errs, f"node {p}: {len(errs)} errors/warnings {errs[:2]}")
for p in pids:
    os.kill(p, signal.SIGTERM)
nats.terminate()
print("FINDINGS:", FINDINGS)
