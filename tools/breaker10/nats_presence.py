"""Presence across a NATS outage longer than presence_ttl_ms (set to 6000 here): X on node B,
Y on node A subscribed to X (they share a channel). NATS (this script's own) is killed for
10 s: Y may see X go offline (docs/deployment.md: "A node cut off from NATS looks dead");
after NATS is back, "the next heartbeats (within a third of presence_ttl_ms) bring" X back
online for Y. Checked: Y's last PRESENCE for X is online within presence_ttl_ms of NATS's
return; and X's own view of Y likewise.

usage: nats_presence.py PORT_A PORT_B NATS_PORT [rounds]
"""
import os
import signal
import subprocess
import sys
import time

pa, pb, np_ = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
os.environ["CHATD_URL"] = f"http://127.0.0.1:{pa}"
from lib import FINDINGS, Session, channel, check, token, uid  # noqa: E402
import chatd_lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DB = f"breaker10_pr_{pa}"
subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"], check=True)
subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {DB}"], check=True)


def nats_start():
    p = subprocess.Popen(["nats-server", "-a", "127.0.0.1", "-p", np_], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return p


def start(port):
    out = subprocess.run(["bash", f"{HERE}/serve.sh", "pg", port, f"CHATD_NATS_URL=nats://127.0.0.1:{np_}",
                          f"CHATD_NATS_SUBJECT_PREFIX=b10p{pa}", "CHATD_PRESENCE_TTL_MS=6000"],
                         capture_output=True, text=True, env=dict(os.environ, B10_DB=DB))
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


nats = nats_start()
pids = [start(pa), start(pb)]
time.sleep(1)


def last_status(sess, user, until):
    st = None
    while time.time() < until:
        try:
            f = sess.next(lambda f: f["type"] == "PRESENCE" and f["userId"] == user, timeout=max(0.05, until - time.time()))
            st = f["status"]
        except TimeoutError:
            break
    for f in sess.frames:
        if f["type"] == "PRESENCE" and f["userId"] == user:
            st = f["status"]
    return st


for rnd in range(rounds):
    X, Y = uid("px"), uid("py")
    C = uid("pc")
    channel(C, [X, Y])
    chatd_lib.WS = f"ws://127.0.0.1:{pb}/v1/ws"
    sx = Session(token(X))
    chatd_lib.WS = f"ws://127.0.0.1:{pa}/v1/ws"
    sy = Session(token(Y))
    sy.send({"type": "PRESENCE_SUB", "userIds": [X]})
    sx.send({"type": "PRESENCE_SUB", "userIds": [Y]})
    s0 = last_status(sy, X, time.time() + 3)
    check(s0 == "online", f"round {rnd}: before: Y sees X {s0}")
    nats.send_signal(signal.SIGKILL)
    nats.wait()
    mid = last_status(sy, X, time.time() + 10)
    nats = nats_start()
    after_y = last_status(sy, X, time.time() + 8)
    after_x = last_status(sx, Y, time.time() + 0.1)
    check(after_y == "online" and after_x == "online",
          f"round {rnd}: during the 10 s outage Y saw X {mid}; 8 s after NATS is back Y sees X {after_y}, X sees Y {after_x}")
    sx.close(); sy.close()
    time.sleep(1)
for p in pids:
    os.kill(p, signal.SIGTERM)
nats.send_signal(signal.SIGTERM)
print("FINDINGS:", FINDINGS)
