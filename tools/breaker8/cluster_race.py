"""Guarantee 12 across two nodes (NATS): a mute, a ban, a demotion and slow mode made through
node A while the member's pipelined frames go through node B. Every entry stored above a change's
afterSeq must have been judged with it.

  serve.sh pg 18981 CHATD_NATS_URL=nats://127.0.0.1:4222 CHATD_RATE_LIMIT_PER_SEC=0 CHATD_USER_RATE_LIMIT_PER_SEC=0
  B8_DB=breaker8_18981 serve.sh pg 18982 CHATD_NATS_URL=... (same database)
  CHATD_URL=http://127.0.0.1:18981 CHATD_URL2=http://127.0.0.1:18982 python3 cluster_race.py
"""
import json
import os
import threading
import time
import uuid

import lib
from lib import FINDINGS, Session, channel, check, http, token, uid

URL2 = os.environ["CHATD_URL2"]
WS2 = URL2.replace("http://", "ws://") + "/v1/ws"


class Session2(Session):
    def __init__(self, tok):
        saved = lib.WS
        lib.WS = WS2
        import lib as L
        try:
            from websockets.sync.client import connect
            self.ws = connect(WS2, additional_headers={"Authorization": f"Bearer {tok}"}, max_size=None, open_timeout=30)
            self.frames = []
            self.hello = self.next(lambda f: f["type"] == "HELLO")
        finally:
            lib.WS = saved


O, M, X, W = uid("owner"), uid("mod"), uid("member"), uid("watch")
ch = uid("xrace")
channel(ch, [X, W], owners=[O])
to, tx, tw = token(O), token(X), token(W)
http("PUT", f"/v1/channels/{ch}/members/{M}", body={"role": "moderator"})
tm = token(M)
watch = Session(tw)           # node A
x = Session2(tx)              # node B
mod = Session2(tm)            # node B


def stream(sess, frames, out):
    keys = [f["clientMsgId"] for f in frames]
    for f in frames:
        sess.send(f)
    for _ in keys:
        try:
            out.append(sess.next(lambda f: f["type"] in ("MSG_ACK", "ERROR") and f.get("clientMsgId") in keys, timeout=30))
        except Exception:
            break


def sends(n):
    return [{"type": "MSG_SEND", "channelId": ch, "clientMsgId": uuid.uuid4().hex, "body": f"x{i}"} for i in range(n)]


viol = {"mute": 0, "ban": 0, "demote": 0, "unmute-early": 0}
for rnd in range(8 if not os.environ.get("B8_SKIP_MUTE") else 0):
    acks = []
    t = threading.Thread(target=stream, args=(x, sends(200), acks))
    t.start()
    time.sleep(0.01 * (rnd % 5))
    until = int(time.time() * 1000) + 60000
    s, _ = http("PUT", f"/v1/channels/{ch}/members/{X}", token=to, body={"mutedUntil": until})
    mem = watch.next(lambda f: f["type"] == "MEMBER" and f["op"] == "mute" and f["userId"] == X and f.get("mutedUntil"), timeout=10)
    t.join()
    viol["mute"] += len([a for a in acks if a["type"] == "MSG_ACK" and a["seq"] > mem["afterSeq"]])
    viol["unmute-early"] += len([a for a in acks if a["type"] == "ERROR" and a.get("reason") == "muted" and False])
    other = [a for a in acks if a["type"] == "ERROR" and a.get("reason") != "muted"]
    if other:
        print("   other refusals:", other[:2])
    http("PUT", f"/v1/channels/{ch}/members/{X}", token=to, body={"mutedUntil": None})
    watch.next(lambda f: f["type"] == "MEMBER" and f["op"] == "mute" and f["userId"] == X and f.get("mutedUntil") is None, timeout=10)
    time.sleep(0.3)
check(viol["mute"] == 0, f"cross-node: sends stored above a mute's afterSeq: {viol['mute']}")

for rnd in range(6):
    acks = []
    t = threading.Thread(target=stream, args=(x, sends(200), acks))
    t.start()
    time.sleep(0.01 * (rnd % 5))
    http("DELETE", f"/v1/channels/{ch}/members/{X}?ban=true", token=to)
    mem = watch.next(lambda f: f["type"] == "MEMBER" and f["op"] == "ban" and f["userId"] == X, timeout=10)
    t.join()
    viol["ban"] += len([a for a in acks if a["type"] == "MSG_ACK" and a["seq"] > mem["afterSeq"]])
    # the banned session must get nothing of the channel after its CHANNEL_REMOVED
    http("PUT", f"/v1/channels/{ch}/members/{X}", token=to)
    x.next(lambda f: f["type"] == "CHANNEL_ADDED", timeout=10)
    time.sleep(0.3)
check(viol["ban"] == 0, f"cross-node: sends stored above a ban's afterSeq: {viol['ban']}")

# demotion: the moderator deletes others' messages through node B while the owner demotes it via A
for rnd in range(6):
    targets = [watch.send_msg(ch, f"t{i}")["messageId"] for i in range(60)]
    dels = [{"type": "MSG_DELETE", "clientMsgId": uuid.uuid4().hex, "messageId": m} for m in targets]
    acks = []
    t = threading.Thread(target=stream, args=(mod, dels, acks))
    t.start()
    time.sleep(0.005 * (rnd % 4))
    http("PUT", f"/v1/channels/{ch}/members/{M}", token=to, body={"role": "member"})
    mem = watch.next(lambda f: f["type"] == "MEMBER" and f["op"] == "role" and f["userId"] == M and f.get("role") == "member", timeout=10)
    t.join()
    viol["demote"] += len([a for a in acks if a["type"] == "MSG_ACK" and a["seq"] > mem["afterSeq"]])
    http("PUT", f"/v1/channels/{ch}/members/{M}", token=to, body={"role": "moderator"})
    watch.next(lambda f: f["type"] == "MEMBER" and f["op"] == "role" and f["userId"] == M and f.get("role") == "moderator", timeout=10)
    time.sleep(0.3)
check(viol["demote"] == 0, f"cross-node: moderator deletes stored above its demotion's afterSeq: {viol['demote']}")

# slow mode: one member, two connections on two nodes, 100 pipelined sends each
http("PATCH", f"/v1/channels/{ch}", body={"slowModeMs": 60000})
time.sleep(0.5)
xa = Session(tx)
a1, a2 = [], []
t1 = threading.Thread(target=stream, args=(x, sends(100), a1))
t2 = threading.Thread(target=stream, args=(xa, sends(100), a2))
t1.start(); t2.start(); t1.join(); t2.join()
n = len([a for a in a1 + a2 if a["type"] == "MSG_ACK"])
check(n == 1, f"cross-node slow mode: {n} of 200 sends stored within 60 s")
# erasure through node A closes the user's session on node B with 1008, and its old token is refused on B
Y = uid("erased")
http("PUT", f"/v1/channels/{ch}/members/{Y}")
ty = token(Y)
y = Session2(ty)
time.sleep(1.2)
s, _ = http("DELETE", f"/v1/users/{Y}", timeout=120)
check(s == 204, f"erase: {s}")
code = None
try:
    while True:
        y.ws.recv(timeout=10)
except Exception as e:  # noqa: BLE001
    code = getattr(getattr(e, "rcvd", None), "code", None)
check(code == 1008, f"session of the erased user on node B closed with 1008: {code}")
import urllib.request, urllib.error
req = urllib.request.Request(URL2 + "/v1/me/channels", headers={"Authorization": f"Bearer {ty}"})
try:
    st = urllib.request.urlopen(req, timeout=10).status
except urllib.error.HTTPError as e:
    st = e.code
check(st == 401, f"the erased user's old token on node B: {st}")
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
