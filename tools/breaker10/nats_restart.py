"""Two nodes on one PostgreSQL database and this script's OWN nats-server (never the shared one
on 4222). While NATS is down (SIGKILL) for a few seconds: Y on node A streams messages into
channel C, the admin (through node A) adds X to channel D, removes X from channel E, and bans
X from public channel P; then NATS comes back on the same port. docs/deployment.md "When NATS
is away": the node resubscribes, catches up every subscribed channel from the database and
re-reads its users' channels. Checked on X's session on node B (never reconnected):
  - every message of C stored during the outage arrives, in seq order, once, without waiting
    for a later message;
  - CHANNEL_ADDED for D then D's later messages live; CHANNEL_REMOVED for E and P and nothing
    of them afterwards;
  - after the outage, live delivery across nodes works both ways.
Repeated `rounds` times; also a round with sends racing the NATS restart itself.

usage: nats_restart.py PORT_A PORT_B NATS_PORT [rounds]
(database breaker10_nr_PORT_A dropped first; subject prefix b10n<PORT_A>)
"""
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

pa, pb, np_ = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
os.environ["CHATD_URL"] = f"http://127.0.0.1:{pa}"
from lib import FINDINGS, Session, channel, check, http, token, uid  # noqa: E402
import chatd_lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DB = f"breaker10_nr_{pa}"
subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"], check=True)
subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {DB}"], check=True)


def nats_start():
    p = subprocess.Popen(["nats-server", "-a", "127.0.0.1", "-p", np_], stdout=subprocess.DEVNULL,
                         stderr=open(f"/tmp/breaker10/nats-{np_}.log", "a"))
    time.sleep(0.5)
    return p


def start(port):
    env = dict(os.environ, B10_DB=DB)
    out = subprocess.run(["bash", f"{HERE}/serve.sh", "pg", port, f"CHATD_NATS_URL=nats://127.0.0.1:{np_}",
                          f"CHATD_NATS_SUBJECT_PREFIX=b10n{pa}", "CHATD_RATE_LIMIT_PER_SEC=0",
                          "CHATD_USER_RATE_LIMIT_PER_SEC=0"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


def session(tok, port):
    chatd_lib.WS = f"ws://127.0.0.1:{port}/v1/ws"
    return Session(tok)


os.makedirs("/tmp/breaker10", exist_ok=True)
nats = nats_start()
pid_a, pid_b = start(pa), start(pb)
time.sleep(1)


def drain(sess, secs):
    end = time.time() + secs
    while time.time() < end:
        try:
            sess.next(lambda f: False, timeout=max(0.05, end - time.time()))
        except TimeoutError:
            pass


for rnd in range(rounds):
    X, Y = uid("x"), uid("y")
    C, D, E, P = uid("C"), uid("D"), uid("E"), uid("P")
    channel(C, [X, Y])
    channel(D, [Y])
    channel(E, [X, Y])
    channel(P, [X, Y], visibility="public")
    F, G = uid("F"), uid("G")
    channel(F, [X, Y])
    channel(G, [X, Y])
    tx, ty = token(X, 3600), token(Y, 3600)
    sx = session(tx, pb)   # X on node B
    sy = session(ty, pa)   # Y on node A
    # warm-up: cross-node delivery works
    r = sy.send_msg(C, "before")
    got = sx.next(lambda f: f["type"] == "MSG_RECV" and f["messageId"] == r["messageId"], timeout=10)
    n_before = len(sx.frames)
    nats.send_signal(signal.SIGKILL)
    nats.wait()
    time.sleep(1)
    during = []
    for i in range(20):
        a = sy.send_msg(C, f"during {i}")
        during.append(a)
    s1, _ = http("PUT", f"/v1/channels/{D}/members/{X}")
    s2, _ = http("DELETE", f"/v1/channels/{E}/members/{X}")
    s3, _ = http("DELETE", f"/v1/channels/{P}/members/{X}?ban=true")
    assert (s1, s2, s3) == (204, 204, 204), (s1, s2, s3)
    s4, _ = http("DELETE", f"/v1/channels/{F}")
    s5, _ = http("PUT", f"/v1/channels/{G}/members/{X}", body={"role": "moderator"})
    for ch_ in (E, P):
        sy.send_msg(ch_, "after X left, during the outage")
    time.sleep(3)
    nats = nats_start()
    t_back = time.time()
    # X must get C's 20 messages without a later message
    want = {a["seq"] for a in during if a["type"] == "MSG_ACK"}
    end = time.time() + 15
    seen = []
    while time.time() < end and not want <= set(seen):
        try:
            f = sx.next(lambda f: f["type"] == "MSG_RECV" and f["channelId"] == C, timeout=end - time.time())
            seen.append(f["seq"])
        except TimeoutError:
            break
    took = time.time() - t_back
    check(want <= set(seen) and seen == sorted(seen) and len(seen) == len(set(seen)),
          f"round {rnd}: X on node B got C's outage messages after NATS came back: {len(set(seen) & want)} of {len(want)} in {took:.1f} s, in order {seen == sorted(seen)}")
    drain(sx, 3)
    types = [(f["type"], f.get("channelId") or f.get("channel", {}).get("channelId")) for f in sx.frames[n_before:]]
    added = ("CHANNEL_ADDED", D) in types
    removed_e = ("CHANNEL_REMOVED", E) in types
    removed_p = ("CHANNEL_REMOVED", P) in types
    check(added, f"round {rnd}: X got CHANNEL_ADDED for D (added during the outage): {added}")
    check(removed_e and removed_p, f"round {rnd}: X got CHANNEL_REMOVED for E (removed) {removed_e} and P (banned) {removed_p}")
    role = any(f["type"] == "MEMBER" and f.get("channelId") == G and f.get("op") == "role" for f in sx.frames[n_before:])
    print(f"   round {rnd}: (same cause) CHANNEL_REMOVED for deleted F: {('CHANNEL_REMOVED', F) in types}; MEMBER role in G: {role}")
    leaked = [t for t in types if t[0] == "MSG_RECV" and t[1] in (E, P)]
    check(not leaked, f"round {rnd}: X got MSG_RECV of channels it left during the outage: {leaked[:3]}")
    # live after the outage, both ways and in D
    r = sy.send_msg(D, "D after")
    try:
        sx.next(lambda f: f["type"] == "MSG_RECV" and f["messageId"] == r["messageId"], timeout=10)
        ok = True
    except TimeoutError:
        ok = False
    check(ok, f"round {rnd}: X on B gets D's messages live after the outage")
    if not ok:
        time.sleep(20)
        r2 = sy.send_msg(D, "D much later")
        try:
            sx.next(lambda f: f["type"] == "MSG_RECV" and f["messageId"] == r2["messageId"], timeout=10)
            late = True
        except TimeoutError:
            late = False
        types2 = [(f["type"], f.get("channelId") or f.get("channel", {}).get("channelId")) for f in sx.frames[n_before:]]
        print(f"   round {rnd}: 30 s later: D message live {late}; CHANNEL_ADDED D {('CHANNEL_ADDED', D) in types2}; "
              f"CHANNEL_REMOVED E {('CHANNEL_REMOVED', E) in types2}; X's frames since the outage: {[t[0] for t in types2][-12:]}")
        H = uid("H")
        channel(H, [Y])
        http("PUT", f"/v1/channels/{H}/members/{X}")
        time.sleep(2)
        types3 = [(f["type"], f.get("channelId") or f.get("channel", {}).get("channelId")) for f in sx.frames[n_before:]]
        r3 = sy.send_msg(D, "D after a later change")
        try:
            sx.next(lambda f: f["type"] == "MSG_RECV" and f["messageId"] == r3["messageId"], timeout=5)
            late3 = True
        except TimeoutError:
            late3 = False
        print(f"   round {rnd}: after a later add to H (NATS up): CHANNEL_ADDED H {('CHANNEL_ADDED', H) in types3}; "
              f"CHANNEL_ADDED D {('CHANNEL_ADDED', D) in types3}; CHANNEL_REMOVED E {('CHANNEL_REMOVED', E) in types3}; D live {late3}")
        rx = sx.send_msg(C, "X's message to be read")
        sy.send({"type": "MSG_READ", "messageId": rx["messageId"]})
        try:
            sx.next(lambda f: f["type"] == "RECEIPT" and f.get("messageId") == rx["messageId"], timeout=5)
            rec = True
        except TimeoutError:
            rec = False
        print(f"   round {rnd}: Y (node A) reads X's message: X on B gets the RECEIPT {rec}")
        fresh = session(tx, pb)
        print(f"   round {rnd}: a new session of X on B: HELLO channels {sorted(c['channelId'][:1] for c in fresh.hello['channels'])}")
        fresh.close()
    r = sx.send_msg(C, "X after")
    try:
        sy.next(lambda f: f["type"] == "MSG_RECV" and f["messageId"] == r["messageId"], timeout=10)
        ok = True
    except TimeoutError:
        ok = False
    check(ok, f"round {rnd}: Y on A gets X's messages live after the outage")
    r = sy.send_msg(E, "E after")
    drain(sx, 2)
    check(not any(f.get("channelId") == E and f["type"] == "MSG_RECV" for f in sx.frames[n_before:]),
          f"round {rnd}: nothing of E reaches X after the outage")
    sx.close()
    sy.close()

# sends racing the restart itself: Y streams on A, NATS killed and restarted mid-stream
X, Y = uid("xr"), uid("yr")
C = uid("Cr")
channel(C, [X, Y])
sx, sy = session(token(X), pb), session(token(Y), pa)
stop = threading.Event()
acks = []


def stream():
    i = 0
    while not stop.is_set():
        a = sy.send_msg(C, f"race {i}")
        acks.append(a)
        i += 1
        time.sleep(0.01)


th = threading.Thread(target=stream)
th.start()
for _ in range(3):
    time.sleep(1)
    nats.send_signal(signal.SIGKILL)
    nats.wait()
    time.sleep(0.5)
    nats = nats_start()
time.sleep(2)
stop.set()
th.join()
want = [a["seq"] for a in acks if a["type"] == "MSG_ACK"]
seen = []
end = time.time() + 15
while time.time() < end and set(want) - set(seen):
    try:
        f = sx.next(lambda f: f["type"] == "MSG_RECV" and f["channelId"] == C, timeout=end - time.time())
        seen.append(f["seq"])
    except TimeoutError:
        break
for f in sx.frames:
    pass
seen_all = [f["seq"] for f in sx.frames if f["type"] == "MSG_RECV" and f["channelId"] == C]
check(set(want) <= set(seen_all) and seen_all == sorted(seen_all) and len(seen_all) == len(set(seen_all)),
      f"NATS killed 3 times while Y streams {len(want)} messages: X got {len(set(seen_all) & set(want))}, in order {seen_all == sorted(seen_all)}, duplicates {len(seen_all) - len(set(seen_all))}")
for p in (pid_a, pid_b):
    os.kill(p, signal.SIGTERM)
nats.send_signal(signal.SIGTERM)
print("FINDINGS:", FINDINGS)
