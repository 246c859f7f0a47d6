"""Guarantee 2 across nodes: the same (sender, clientMsgId) sent at the same instant through two
nodes (same body: one stored, duplicate:false once, same ids; different bodies: one ACK, one
idempotency_conflict), also to two different channels, 50 rounds each; gapless seqs after.

  CHATD_URL=http://NODE_A CHATD_URL2=http://NODE_B python3 dup2n.py
"""
import os
import threading
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid
import chatd_lib

X, Y = uid("dx"), uid("dy")
c1, c2 = uid("d2a"), uid("d2b")
channel(c1, [X, Y]); channel(c2, [X, Y])
tx = token(X)
sa = Session(tx)
chatd_lib.WS = os.environ["CHATD_URL2"].replace("http://", "ws://") + "/v1/ws"
sb = Session(tx)
bad = {"same": [], "body": [], "chan": []}
for mode in bad:
    for i in range(50):
        k = uuid.uuid4().hex
        fa = {"type": "MSG_SEND", "channelId": c1, "clientMsgId": k, "body": f"b {k}"}
        fb = dict(fa)
        if mode == "body":
            fb["body"] = "other"
        if mode == "chan":
            fb["channelId"] = c2
        ev = threading.Barrier(2)
        res = {}

        def go(s, f, n):
            ev.wait()
            s.send(f)
            res[n] = s.answer(k, timeout=20)
        ts = [threading.Thread(target=go, args=(sa, fa, "a")), threading.Thread(target=go, args=(sb, fb, "b"))]
        [t.start() for t in ts]; [t.join() for t in ts]
        a, b = res["a"], res["b"]
        acks = [r for r in (a, b) if r["type"] == "MSG_ACK"]
        if mode == "same":
            ok = len(acks) == 2 and a["messageId"] == b["messageId"] and a["seq"] == b["seq"] and sorted([a["duplicate"], b["duplicate"]]) == [False, True]
        else:
            errs = [r for r in (a, b) if r["type"] == "ERROR"]
            ok = len(acks) == 1 and len(errs) == 1 and errs[0]["code"] == "idempotency_conflict" and not acks[0]["duplicate"]
        if not ok:
            bad[mode].append((a.get("type"), a.get("code"), a.get("duplicate"), b.get("type"), b.get("code"), b.get("duplicate")))
    check(not bad[mode], f"same key on two nodes at once ({mode}): {len(bad[mode])} of 50 wrong {bad[mode][:3]}")
for c in (c1, c2):
    st, h = http("GET", f"/v1/channels/{c}/messages?afterSeq=0&limit=500")
    seqs = [m["seq"] for m in h["messages"]]
    keys = [m["clientMsgId"] for m in h["messages"]]
    check(seqs == list(range(1, len(seqs) + 1)) and len(keys) == len(set(keys)), f"{c}: {len(seqs)} entries gapless, keys once")
print("FINDINGS:", FINDINGS)
