"""SQLite, guarantee 9: a message deleted (ACKed) while a reader holds a snapshot (an export being
streamed), then the process killed (-9) before the reader ends. The delete's WAL scrub was left to
its retry task; after the restart, is the deleted text still in the data dir (the -wal file)?
And after 200 more sends, and after a graceful restart?

usage: wal_crash.py PORT   (starts and kills its own SQLite server via serve.sh, fresh data dir)
"""
import http.client as httpclient
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

port = sys.argv[1]
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import ADMIN, RUN, Session, channel, check, http, token, uid, FINDINGS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/var/tmp/b8-data-{port}"
shutil.rmtree(DATA, ignore_errors=True)
MARK = f"Walmark{RUN}"


def start():
    out = subprocess.run(["bash", f"{HERE}/serve.sh", "sqlite", port, "CHATD_RATE_LIMIT_PER_SEC=0",
                          "CHATD_USER_RATE_LIMIT_PER_SEC=0"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0])


def grep():
    return subprocess.run(["grep", "-rlaF", MARK, DATA], capture_output=True, text=True).stdout.split()


pid = start()
U, A = uid("exported"), uid("alice")
big, room = uid("big"), uid("room")
channel(big, [U])
channel(room, [A])
u = Session(token(U))
for i in range(0, 6000, 500):
    for j in range(i, i + 500):
        u.send({"type": "MSG_SEND", "channelId": big, "clientMsgId": f"s{j}", "body": "p" * 1000})
    for _ in range(500):
        u.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=120)
a = Session(token(A))
msgs = [a.send_msg(room, f"{MARK} secret number {i}") for i in range(8)]
print("   marker in files before the delete:", grep())
c = httpclient.HTTPConnection("127.0.0.1", int(port), timeout=600)
c.request("GET", f"/v1/users/{U}/export", headers={"Authorization": f"Bearer {ADMIN}"})
r = c.getresponse()
r.read(1000)
stop = threading.Event()


def trickle():
    while not stop.is_set():
        try:
            if not r.read(16384):
                break
        except Exception:
            break
        time.sleep(0.2)


t = threading.Thread(target=trickle)
t.start()
time.sleep(0.5)
for m in msgs:
    f = a.send({"type": "MSG_DELETE", "clientMsgId": "d" + m["messageId"], "messageId": m["messageId"]})
for m in msgs:
    f = a.answer("d" + m["messageId"], timeout=30)
    assert f["type"] == "MSG_ACK", f
print("   deletes ACKed; marker in files now:", grep())
os.kill(pid, signal.SIGKILL)
stop.set()
t.join(timeout=5)
pid = start()
time.sleep(3)
left = grep()
check(not left, f"deleted text out of the data dir after kill -9 and restart: {left}")
a = Session(token(A))
for i in range(200):
    a.send({"type": "MSG_SEND", "channelId": room, "clientMsgId": f"after{i}", "body": "q" * 500})
for i in range(200):
    a.answer(f"after{i}", timeout=60)
time.sleep(2)
left = grep()
check(not left, f"... and after 200 more sends: {left}")
os.kill(pid, signal.SIGTERM)
time.sleep(3)
print("   after a graceful stop:", grep())
print("FINDINGS:", FINDINGS)
