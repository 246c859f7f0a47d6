"""Guarantee 13 through thread reads: a member of channel A asks for the thread of a root that
lives in channel C (where it is not a member) through A: SYNC {channelId:A, threadId:rootC}
and GET /v1/channels/A/messages?threadId=rootC (also with latest/beforeSeq); and replyTo/threadId
of C's root in a send to A. Nothing of C may come back.

  CHATD_URL=http://127.0.0.1:19100 python3 thread_leak.py
"""
import json
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

E, V = uid("tle"), uid("tlv")   # E: the snoop (member of A only); V: member of A and C
A, C = uid("tlA"), uid("tlC")
channel(A, [E, V], owners=[V])
channel(C, [V])
te, tv = token(E), token(V)
sv, se = Session(tv), Session(te)
rootC = sv.send_msg(C, "secret root")["messageId"]
for i in range(3):
    sv.send_msg(C, f"SECRETREPLY {i}", threadId=rootC)
rootA = sv.send_msg(A, "A root")["messageId"]
sv.send_msg(A, "A reply", threadId=rootA)
leaks = []
for extra in [{"afterSeq": 0}, {"latest": True}, {"beforeSeq": 1000}]:
    se.send({"type": "SYNC", "channelId": A, "threadId": rootC, **extra})
    f = se.next(lambda f: f["type"] in ("SYNC_BATCH", "ERROR"))
    if "SECRET" in json.dumps(f):
        leaks.append(("SYNC", extra))
    print(f"   SYNC A threadId=rootC {extra}: {f['type']} {f.get('code')} {f.get('field')}")
for q in ["afterSeq=0", "latest=true", "beforeSeq=1000"]:
    st, b = http("GET", f"/v1/channels/{A}/messages?threadId={rootC}&{q}", token=te)
    if "SECRET" in json.dumps(b):
        leaks.append(("history", q))
    print(f"   history A threadId=rootC {q}: {st} {str(b)[:100]}")
    st, b = http("GET", f"/v1/channels/{C}/messages?threadId={rootC}&{q}", token=te)
    if "SECRET" in json.dumps(b):
        leaks.append(("history C", q))
for fld in ("replyTo", "threadId"):
    r = se.send_msg(A, "x", **{fld: rootC})
    print(f"   send to A with {fld}=rootC: {r['type']} {r.get('code')} {r.get('field')}")
    if r["type"] == "MSG_ACK":
        st, b = http("GET", f"/v1/channels/{A}/messages?latest=true&limit=1", token=te)
        if "secret" in json.dumps(b):
            leaks.append(("preview", fld))
check(not leaks, f"C's thread or root text read through A by a non-member of C: {leaks}")
print("FINDINGS:", FINDINGS)

# a non-member acting on C's message by id: flag, react, read, edit, delete, moderator delete
st, b = http("POST", f"/v1/messages/{rootC}/flags", token=te, body={"reason": "spam"})
check(st in (403, 404) and C not in json.dumps(b), f"non-member flags C's message: {st} {b}")
for fr in [{"type": "MSG_REACT", "clientMsgId": uuid.uuid4().hex, "messageId": rootC, "emoji": "x", "op": "add"},
           {"type": "MSG_EDIT", "clientMsgId": uuid.uuid4().hex, "messageId": rootC, "body": "pwn"},
           {"type": "MSG_DELETE", "clientMsgId": uuid.uuid4().hex, "messageId": rootC},
           {"type": "MSG_READ", "messageId": rootC}, {"type": "MSG_DELIVERED", "messageId": rootC}]:
    se.send(fr)
    f = se.next(lambda f: f["type"] in ("ERROR", "MSG_ACK"), timeout=5)
    check(f["type"] == "ERROR" and f["code"] == "forbidden" and f.get("channelId") in (None,) ,
          f"non-member {fr['type']} on C's message: {f['type']} {f.get('code')} channelId={f.get('channelId')}")
st, b = http("DELETE", f"/v1/channels/{A}/messages/{rootC}", token=tv)
check(st == 404, f"A's owner (a plain member of C) deletes C's message through A's moderator route: {st}")
print("FINDINGS:", FINDINGS)
