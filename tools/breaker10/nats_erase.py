"""§19 "Their live sessions close with 1008" across nodes when NATS is down during the erasure:
X has a session on node B; NATS (this script's own nats-server) is killed; the admin erases X
through node A; NATS comes back. Checked: X's session on B is closed with 1008 within 15 s of
NATS's return; meanwhile what the still-open session can do (SYNC, send, PRESENCE_SUB).

usage: nats_erase.py PORT_A PORT_B NATS_PORT [rounds]
"""
import os
import signal
import subprocess
import sys
import time

pa, pb, np_ = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 4
os.environ["CHATD_URL"] = f"http://127.0.0.1:{pa}"
from lib import FINDINGS, Session, channel, check, http, token, uid  # noqa: E402
import chatd_lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DB = f"breaker10_ne_{pa}"
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
                          f"CHATD_NATS_SUBJECT_PREFIX=b10e{pa}"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


nats = nats_start()
pids = [start(pa), start(pb)]
time.sleep(1)
for rnd in range(rounds):
    X, Y = uid("ex"), uid("ey")
    C = uid("ec")
    channel(C, [X, Y])
    chatd_lib.WS = f"ws://127.0.0.1:{pb}/v1/ws"
    sx = Session(token(X))
    sx.send_msg(C, "hello")
    nats.send_signal(signal.SIGKILL)
    nats.wait()
    time.sleep(1)
    st, _ = http("DELETE", f"/v1/users/{X}", timeout=60)
    assert st == 204, st
    time.sleep(2)
    nats = nats_start()
    t0 = time.time()
    closed = None
    while time.time() - t0 < 15:
        try:
            sx.ws.recv(timeout=0.5)
        except TimeoutError:
            continue
        except Exception as e:
            closed = getattr(e, "rcvd", None)
            break
    code = closed.code if closed else None
    check(code == 1008, f"round {rnd}: X's session on node B after its erasure during a NATS outage: "
                        f"{'closed ' + str(code) if closed else 'still open'} {time.time() - t0:.1f} s after NATS came back")
    if not closed:
        r = sx.send_msg(C, "still here?")
        sx.send({"type": "SYNC", "channelId": C, "afterSeq": 0})
        f = sx.next(lambda f: f["type"] in ("SYNC_BATCH", "ERROR"))
        print(f"   round {rnd}: the open session: send {r['type']} {r.get('code')}, SYNC {f['type']} {f.get('code')}")
    sx.close()
for p in pids:
    os.kill(p, signal.SIGTERM)
nats.send_signal(signal.SIGTERM)
print("FINDINGS:", FINDINGS)
