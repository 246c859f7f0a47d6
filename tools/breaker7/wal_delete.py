"""SQLite (guarantee 9/14): a deleted message's bytes must be overwritten in the file. Here the
delete happens while an export holds a read transaction open (a reader that stops reading), so
the delete's wal_checkpoint(TRUNCATE) cannot finish. Is the text still in the data dir after the
export ends? usage: wal_delete.py DATA_DIR [SEED]   (server on SQLite, rate limits off)"""
import http.client as httpclient
import json
import subprocess
import sys
import time
import urllib.parse
import uuid

from lib import ADMIN, RUN, URL, Session, channel, check, http, token, uid, FINDINGS

data_dir = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
MODE = sys.argv[3] if len(sys.argv) > 3 else "delete"   # or "erase": erase the marker's author instead
MARK = f"Walmark{RUN}"


def grep():
    return subprocess.run(["grep", "-rlaF", MARK, data_dir], capture_output=True, text=True).stdout.split()


U, A = uid("exported"), uid("alice")
big, room = uid("big"), uid("room")
channel(big, [U])
channel(room, [A])
u = Session(token(U))
for i in range(0, N, 500):
    ks = []
    for j in range(i, min(N, i + 500)):
        ks.append(f"s{j}")
        u.send({"type": "MSG_SEND", "channelId": big, "clientMsgId": f"s{j}", "body": "p" * 1000})
    for _ in ks:
        u.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=120)
a = Session(token(A))
msgs = [a.send_msg(room, f"{MARK} secret number {i}") for i in range(8)]
print("   marker in files before the delete:", grep())

host = urllib.parse.urlparse(URL)
c = httpclient.HTTPConnection(host.hostname, host.port, timeout=600)
c.request("GET", f"/v1/users/{U}/export", headers={"Authorization": f"Bearer {ADMIN}"})
r = c.getresponse()
r.read(1000)  # started, then reads slowly: 64 KB every 0.2 s (above the server's stalled-peer bound)
import threading
trickle_stop = threading.Event()


def trickle():
    while not trickle_stop.is_set():
        if not r.read(65536):
            break
        time.sleep(0.2)


tt = threading.Thread(target=trickle)
tt.start()
time.sleep(0.5)
import threading
B, other = uid("bob"), uid("other")
channel(other, [B])
b = Session(token(B))
lat, stop = [], threading.Event()


def bob():
    while not stop.is_set():
        t = time.time()
        r = b.send_msg(other, "bob's unrelated message")
        lat.append((time.time() - t, r["type"]))


bt = threading.Thread(target=bob)
bt.start()
errors = 0
if MODE == "erase":
    t = time.time()
    st, _ = http("DELETE", f"/v1/users/{A}")
    while st == 202:
        st, _ = http("DELETE", f"/v1/users/{A}")
    print(f"   erasure of the marker's author: {st} after {time.time() - t:.1f}s")
    msgs = []
for m in msgs:
    cm = uuid.uuid4().hex
    t = time.time()
    a.send({"type": "MSG_DELETE", "clientMsgId": cm, "messageId": m["messageId"]})
    ack = a.answer(cm, timeout=60)
    dt = time.time() - t
    if ack["type"] != "MSG_ACK":
        errors += 1
        a.send({"type": "MSG_DELETE", "clientMsgId": cm, "messageId": m["messageId"]})
        again = a.answer(cm, timeout=60)
        print(f"   delete answered {ack['code']} after {dt:.1f}s; its retry: {again['type']} duplicate={again.get('duplicate')}")
    else:
        print(f"   delete ACKed after {dt:.1f}s")
    time.sleep(1)
stop.set()
bt.join()
worst = max(x for x, _ in lat)
check(errors == 0, f"deletes while an export is open answered internal: {errors} of {len(msgs)}")
check(worst < 1, f"another user's sends in another channel meanwhile: {len(lat)} sends, worst {worst:.1f}s")
time.sleep(1)
print("   marker in files while the export is open:", grep())
trickle_stop.set()
tt.join()
c.close()
time.sleep(3)
hits = grep()
check(not hits, f"deleted text gone from the files after the export ended: {hits}")
# some more ordinary traffic (no delete): does a later checkpoint wipe it?
for i in range(300):
    b.send_msg(other, "after " + "q" * 500)
time.sleep(2)
hits = grep()
check(not hits, f"deleted text gone after 300 more sends: {hits}")
for f in hits:
    out = subprocess.run(["grep", "-caF", MARK, f], capture_output=True, text=True).stdout.strip()
    print("     ", f, "lines with the marker:", out)
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
