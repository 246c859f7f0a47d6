"""Retention sweeps cut by kill -9 (SQLite): a channel with retentionSecs 2 gets 3,000 messages
with marker words (some quoted by replies, some thread replies), the sweep (every second) starts
expiring them while an export streams (a reader holding a snapshot) and the process is killed;
after the restart and the next sweeps: every message older than the retention reads deleted and
expired, seqs gapless, previews empty, no marker in chatd.db / -wal nor left in the FTS5 index
(terms or b-tree separators).

usage: retention_crash.py PORT   (starts and kills its own server; data dir removed first)
"""
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid

port = sys.argv[1]
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import ADMIN, FINDINGS, URL, Session, channel, check, http, token, uid  # noqa: E402
import b9util  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/tmp/breaker9/data-{port}"
shutil.rmtree(DATA, ignore_errors=True)
RARE = "ghijlmnoqrstuvwxyz"


def start():
    out = subprocess.run(["bash", f"{HERE}/serve.sh", "sqlite", port, "CHATD_RETENTION_SWEEP_SECS=1",
                          "CHATD_RATE_LIMIT_PER_SEC=0", "CHATD_USER_RATE_LIMIT_PER_SEC=0"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


pid = start()
U, V = uid("ru"), uid("rv")
ch = uid("ret")
channel(ch, [U, V])
tu, tv = token(U), token(V)
u = Session(tu)
words = []
keys = []
for i in range(3000):
    w = "".join(random.choice(RARE) for _ in range(20))
    words.append(w)
    k = uuid.uuid4().hex
    keys.append(k)
    u.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": k, "body": w})
acks = [b9util.answer(u, k, timeout=60) for k in keys]
ids = [a["messageId"] for a in acks if a["type"] == "MSG_ACK"]
v = Session(tv)
for i in range(0, 300, 3):
    v.send_msg(ch, "re", replyTo=ids[i])
    v.send_msg(ch, "th", threadId=ids[i + 1])
print(f"   {len(ids)} messages stored")
s, b = http("PATCH", f"/v1/channels/{ch}", body={"retentionSecs": 2})
assert s == 200, (s, b)


def export():
    try:
        req = urllib.request.Request(URL + f"/v1/users/{U}/export", headers={"Authorization": f"Bearer {ADMIN}"})
        with urllib.request.urlopen(req, timeout=60) as r:
            while r.read(4096):
                time.sleep(0.01)
    except Exception:
        pass


threading.Thread(target=export, daemon=True).start()
time.sleep(random.uniform(2.5, 4))
os.kill(pid, signal.SIGKILL)
u.close(); v.close()
time.sleep(0.5)
held = {os.path.basename(p): sum(1 for w in words if w.encode() in open(p, "rb").read())
        for p in glob.glob(f"{DATA}/chatd.db*")}
print(f"   after the kill: markers in {held}")
pid = start()
time.sleep(8)
h, after = [], 0
while True:
    s, b = http("GET", f"/v1/channels/{ch}/messages?afterSeq={after}&limit=500")
    h += b["messages"]
    if not b["hasMore"]:
        break
    after = h[-1]["seq"]
seqs = [m["seq"] for m in h]
old = [m for m in h if m["body"] in words or (m["messageId"] in set(ids) and not (m.get("deleted") and m.get("expired")))]
previews = [m for m in h if m.get("replyPreview", {}).get("body")]
check(seqs == list(range(1, len(seqs) + 1)), f"seqs gapless after the cut sweep ({len(seqs)})")
check(not old, f"messages older than the retention not expired after restart and sweeps: {len(old)}")
check(not previews, f"previews of expired messages still with text: {len(previews)}")
held = {os.path.basename(p): sum(1 for w in words if w.encode() in open(p, "rb").read())
        for p in glob.glob(f"{DATA}/chatd.db*")}
held = {k: n for k, n in held.items() if n}
check(not held, f"expired markers in the SQLite files after restart: {held}")
grams = {w[i:i + 3] for w in words for i in range(len(w) - 2)}
terms, seps = b9util.leftovers(DATA, grams)
check(not terms and not seps, f"trigrams of expired texts left in the FTS5 index: {len(terms)} terms {terms[:5]}, {len(seps)} separators {seps[:8]}")
os.kill(pid, signal.SIGTERM)
print("server", pid, "stopped")
print("FINDINGS:", FINDINGS)
