"""Export and erasure of a user while it sends on three connections (messages with unique
marker words, thread replies, reactions, uploads claimed by sends); then: the export is whole
(its end count equals its lines), after the 204 no message of the user keeps text in any read,
and no marker is left in the SQLite files (grep of chatd.db / -wal) nor as an FTS5 term, or in
PostgreSQL's live rows (pg_dump).

  serve.sh sqlite 18900 CHATD_RATE_LIMIT_PER_SEC=0 CHATD_USER_RATE_LIMIT_PER_SEC=0
  CHATD_URL=http://127.0.0.1:18900 B9_DATA=/tmp/breaker9/data-18900 python3 erase_send.py
  (pg: B9_PGDB=breaker9_PORT instead of B9_DATA)
"""
import glob
import json
import os
import random
import shutil
import subprocess
import threading
import time
import urllib.request
import uuid

import b9util
from lib import ADMIN, FINDINGS, URL, Session, channel, check, http, token, uid

RARE = "ghijlmnoqrstuvwxyz"
X, W = uid("erasee"), uid("w")
chans = [uid("er-a"), uid("er-b")]
for c in chans:
    channel(c, [X, W])
tx, tw = token(X, ttl=36000), token(W)
markers, stop = [], threading.Event()
lock = threading.Lock()


def marker():
    return "".join(random.choice(RARE) for _ in range(24))


def sender(n):
    try:
        s = Session(tx)
    except Exception:
        return
    root = {}
    try:
        while not stop.is_set():
            c = random.choice(chans)
            m = marker()
            with lock:
                markers.append(m)
            f = {"type": "MSG_SEND", "channelId": c, "clientMsgId": uuid.uuid4().hex, "body": f"{m} {m[:5]}"}
            if c in root and random.random() < 0.3:
                f["threadId"] = root[c]
            if random.random() < 0.1:
                st, up = http("POST", f"/v1/channels/{c}/attachments?filename={m}.txt", token=tx,
                              raw=m.encode(), headers={"Content-Type": "text/plain"})
                if st == 201:
                    f["attachments"] = [up["attachmentId"]]
            s.send(f)
            a = s.answer(f["clientMsgId"], timeout=20)
            if a["type"] == "MSG_ACK" and "threadId" not in f:
                root[c] = a["messageId"]
                s.send({"type": "MSG_REACT", "clientMsgId": uuid.uuid4().hex, "messageId": a["messageId"],
                        "emoji": "👍", "op": "add"})
    except Exception:
        pass
    finally:
        s.close()


ths = [threading.Thread(target=sender, args=(i,)) for i in range(3)]
[t.start() for t in ths]
time.sleep(3)

# the export while it sends
req = urllib.request.Request(URL + f"/v1/users/{X}/export", headers={"Authorization": f"Bearer {ADMIN}"})
lines = urllib.request.urlopen(req, timeout=120).read().decode().splitlines()
objs = [json.loads(line) for line in lines]
end = objs[-1]
check(end.get("type") == "end" and end.get("count") == len(objs) - 1,
      f"export while sending: end {end} for {len(objs) - 1} lines")
time.sleep(1)
st, _ = http("DELETE", f"/v1/users/{X}", timeout=300)
check(st == 204, f"erasure while sending: {st}")
time.sleep(1)
stop.set()
[t.join(timeout=30) for t in ths]
with lock:
    words = list(markers)
print(f"   {len(words)} markers written")

texts = 0
members = 0
for c in chans:
    after = 0
    while True:
        s, b = http("GET", f"/v1/channels/{c}/messages?afterSeq={after}&limit=500")
        for m in b["messages"]:
            if m["senderId"] == X and m.get("kind", "message") == "message" and (m["body"] or m.get("attachments")):
                texts += 1
            if m.get("replyPreview", {}).get("senderId") == X and m["replyPreview"].get("body"):
                texts += 1
        if not b["hasMore"]:
            break
        after = b["messages"][-1]["seq"]
    s, b = http("GET", f"/v1/channels/{c}/members")
    members += sum(1 for m in b["members"] if m["userId"] == X)
check(texts == 0 and members == 0, f"after the erasure: {texts} texts/previews/attachments of X readable, X member of {members} channels")
s, b = http("GET", f"/v1/me/search?q={words[0][:8]}", token=tw)
check(s == 200 and not b["results"], f"search finds an erased text: {s} {str(b)[:100]}")
# X's token minted before the erasure is refused
s, _ = http("GET", "/v1/me/channels", token=tx)
check(s == 401, f"X's old token after the erasure: {s}")

time.sleep(3)
data = os.environ.get("B9_DATA")
pgdb = os.environ.get("B9_PGDB")
if data:
    held = {}
    for p in glob.glob(f"{data}/chatd.db*"):
        raw = open(p, "rb").read()
        n = sum(1 for w in words if w.encode() in raw)
        if n:
            held[os.path.basename(p)] = n
    check(not held, f"erased markers in the SQLite files: {held}")
    files = [p for p in glob.glob(f"{data}/attachments/**/*", recursive=True) if os.path.isfile(p)]
    held_files = [p for p in files if any(w.encode() in open(p, "rb").read() for w in words[:2000])]
    check(not held_files, f"erased uploads' bytes still in attachment storage: {len(held_files)}")
    grams = {w[i:i + 3] for w in words for i in range(len(w) - 2)}
    terms, seps = b9util.leftovers(data, grams)
    check(not terms and not seps, f"trigrams of erased texts that no live text holds, still in the FTS5 index: {len(terms)} terms {terms[:8]}, {len(seps)} b-tree separators {seps[:8]}")
if pgdb:
    dump = subprocess.run(["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "-a", pgdb], capture_output=True, text=True).stdout
    held = [w for w in words if w in dump]
    check(not held, f"erased markers in PostgreSQL live rows (pg_dump): {len(held)}")
print("FINDINGS:", FINDINGS)
