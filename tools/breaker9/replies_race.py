"""Replies and thread replies racing the delete of their target (two connections, one node):
the reply is either refused not_found or stored; once the delete is ACKed, no read shows the
deleted text in a replyPreview, and thread summaries count only replies not deleted. Also
replyTo/threadId naming a message of another channel, a delete entry, a reaction entry (§14:
not_found: not a message entry), a
thread reply, and a message being edited at the same moment (the preview shows a text that
was current at some point).

  CHATD_URL=http://127.0.0.1:18900 python3 replies_race.py [rounds]
"""
import random
import sys
import threading
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
A, B = uid("ra"), uid("rb")
ch, other = uid("rr"), uid("rr-other")
channel(ch, [A, B])
channel(other, [A, B])
ta, tb = token(A), token(B)
a, b = Session(ta), Session(tb)
secret = lambda: "secret-" + uuid.uuid4().hex


def history(c, thread=None):
    out, after = [], 0
    q = f"&threadId={thread}" if thread else ""
    while True:
        s, r = http("GET", f"/v1/channels/{c}/messages?afterSeq={after}&limit=500{q}")
        assert s == 200, (s, r)
        out += r["messages"]
        if not r["hasMore"]:
            return out
        after = out[-1]["seq"]


leaks, counts = [], {"stored": 0, "refused": 0}
texts = []
for rnd in range(ROUNDS):
    t = secret()
    texts.append(t)
    m = a.send_msg(ch, t)
    field = "replyTo" if rnd % 2 == 0 else "threadId"
    kd, kr = uuid.uuid4().hex, uuid.uuid4().hex
    res = {}

    def delete():
        a.send({"type": "MSG_DELETE", "clientMsgId": kd, "messageId": m["messageId"]})
        res["d"] = a.answer(kd)

    def reply():
        b.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": kr, "body": "re", field: m["messageId"]})
        res["r"] = b.answer(kr)
    ths = [threading.Thread(target=delete), threading.Thread(target=reply)]
    random.shuffle(ths)
    [x.start() for x in ths]
    [x.join() for x in ths]
    counts["stored" if res["r"]["type"] == "MSG_ACK" else "refused"] += 1
    if res["r"]["type"] == "ERROR" and res["r"]["code"] != "not_found":
        leaks.append(("refused with", res["r"]["code"]))

for msg in history(ch):
    p = msg.get("replyPreview")
    if p and p.get("body", "").startswith("secret-"):
        leaks.append(("preview of a deleted text in a read", msg["seq"]))
    th = msg.get("thread")
    if msg.get("deleted") and msg.get("body"):
        leaks.append(("deleted message with a body", msg["seq"]))
    if th and th.get("replyCount", 0) > 0:
        replies = [x for x in history(ch, msg["messageId"]) if not x.get("deleted")]
        if len(replies) != th["replyCount"]:
            leaks.append(("replyCount", th["replyCount"], len(replies)))
print(f"   {counts}")
check(not leaks, f"replies racing deletes: {leaks[:5]}")

# targets that are not messages of this channel
m = a.send_msg(other, "elsewhere")
root = a.send_msg(ch, "root")
tr = a.send_msg(ch, "in thread", threadId=root["messageId"])
rk = uuid.uuid4().hex
a.send({"type": "MSG_REACT", "clientMsgId": rk, "messageId": root["messageId"], "emoji": "👍", "op": "add"})
react = a.answer(rk)
dk = uuid.uuid4().hex
victim = a.send_msg(ch, "to delete")
a.send({"type": "MSG_DELETE", "clientMsgId": dk, "messageId": victim["messageId"]})
dele = a.answer(dk)
cases = [("replyTo", m["messageId"], "invalid_field"), ("threadId", m["messageId"], "invalid_field"),
         ("threadId", tr["messageId"], "invalid_field"), ("replyTo", tr["messageId"], "ok"),
         ("replyTo", react["messageId"], "not_found"), ("threadId", react["messageId"], "not_found"),
         ("replyTo", dele["messageId"], "not_found"), ("threadId", victim["messageId"], "not_found"),
         ("replyTo", str(uuid.uuid4()), "not_found"), ("replyTo", "01" + "0" * 34, "invalid_field")]
for field, target, want in cases:
    r = b.send_msg(ch, "x", **{field: target})
    got = "ok" if r["type"] == "MSG_ACK" else r.get("code")
    check(got == want, f"{field} to {target[:13]}..: {got} (want {want}) {r.get('message', '')[:80]}")

# a reply racing an edit: the preview is one of the texts the target had
bad = 0
for rnd in range(20):
    t0 = secret()
    m = a.send_msg(ch, t0)
    t1 = secret()
    ke, kr = uuid.uuid4().hex, uuid.uuid4().hex
    a.send({"type": "MSG_EDIT", "clientMsgId": ke, "messageId": m["messageId"], "body": t1})
    b.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": kr, "body": "re", "replyTo": m["messageId"]})
    a.answer(ke)
    r = b.answer(kr)
    got = next(x for x in history(ch) if x["messageId"] == r["messageId"])
    if got["replyPreview"]["body"] != t1:
        bad += 1
check(bad == 0, f"reads after the edit show the replaced text in a preview: {bad} of 20")
print("FINDINGS:", FINDINGS)
