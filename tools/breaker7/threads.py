"""Hostile replies/threads (§14) and mentions (§16) frames; prints ok/FAIL lines."""
import json
import threading
import uuid

from lib import Session, channel, check, http, token, uid, FINDINGS

A, B, C = uid("alice"), uid("bob"), uid("carol")
ch1, ch2 = uid("room"), uid("other")
channel(ch1, [A, B])
channel(ch2, [A, B, C])
ta, tb, tc = token(A), token(B), token(C)
a, b = Session(ta), Session(tb)

root = a.send_msg(ch1, "root text")
other = a.send_msg(ch2, "other channel text")
rep = b.send_msg(ch1, "reply 1", threadId=root["messageId"])
check(rep["type"] == "MSG_ACK", "a thread reply is stored")

# replyTo / threadId into another channel
r = a.send_msg(ch1, "x", replyTo=other["messageId"])
check(r["type"] == "ERROR" and r["code"] == "invalid_field" and r.get("field") == "replyTo", f"replyTo another channel: {r}")
r = a.send_msg(ch1, "x", threadId=other["messageId"])
check(r["type"] == "ERROR" and r["code"] == "invalid_field" and r.get("field") == "threadId", f"threadId another channel: {r}")
# thread reply as a root
r = a.send_msg(ch1, "x", threadId=rep["messageId"])
check(r["type"] == "ERROR" and r["code"] == "invalid_field", f"threadId naming a thread reply: {r}")
# non-message entries as targets
cm = uuid.uuid4().hex
a.send({"type": "MSG_REACT", "clientMsgId": cm, "messageId": root["messageId"], "emoji": "x", "op": "add"})
react = a.answer(cm)
r = a.send_msg(ch1, "x", replyTo=react["messageId"])
check(r["type"] == "ERROR" and r["code"] == "not_found", f"replyTo a reaction entry: {r}")
r = a.send_msg(ch1, "x", threadId=react["messageId"])
check(r["type"] == "ERROR" and r["code"] == "not_found", f"threadId a reaction entry: {r}")
# forms of ids
for bad in [root["messageId"].upper(), "{" + root["messageId"] + "}", root["messageId"].replace("-", ""), "", 5, [], {"a": 1}, True]:
    r = a.send_msg(ch1, "x", replyTo=bad)
    check(r["type"] == "ERROR" and r["code"] == "invalid_field", f"replyTo {bad!r}: {r.get('code')} {r.get('message')}")
r = a.send_msg(ch1, "null replyTo", replyTo=None, threadId=None)
check(r["type"] == "ERROR" or r["type"] == "MSG_ACK", f"null replyTo: {r['type']}")

# SYNC with threadId abuse
for tid, want in [(other["messageId"], "invalid_field"), (rep["messageId"], "invalid_field"),
                  (react["messageId"], "not_found"), (str(uuid.uuid4()), "not_found"), ("zz", "invalid_field"), (7, "invalid_field")]:
    f = a.sync(ch1, 0, threadId=tid)
    check(f["type"] == "ERROR" and f["code"] == want, f"SYNC threadId={tid!r}: {f.get('type')} {f.get('code')} want {want}")
# a non-member (carol) asking ch1's thread: forbidden, nothing about the root
c = Session(tc)
f = c.sync(ch1, 0, threadId=root["messageId"])
check(f["type"] == "ERROR" and f["code"] == "forbidden", f"non-member SYNC thread: {f.get('code')}")
f = c.sync(ch2, 0, threadId=root["messageId"])
check(f["type"] == "ERROR" and f["code"] == "invalid_field", f"carol SYNC of ch2 naming ch1's root (existence leak?): {f}")
s, body = http("GET", f"/v1/channels/{ch2}/messages?threadId={root['messageId']}", token=tc)
check(s in (400, 404), f"history ch2 with ch1's root: {s} {body}")
# Leaks: does the error differ between "root in another channel" and "unknown id"? (carol is not in ch1)
f1 = c.sync(ch2, 0, threadId=root["messageId"])
f2 = c.sync(ch2, 0, threadId=str(uuid.uuid4()))
check(f1.get("code") == f2.get("code"), f"a non-member tells a message of a private channel from an unknown id: {f1.get('code')} vs {f2.get('code')}")
r1 = c.send_msg(ch2, "x", replyTo=root["messageId"])
r2 = c.send_msg(ch2, "x", replyTo=str(uuid.uuid4()))
check(r1.get("code") == r2.get("code"), f"replyTo by a non-member of the quoted channel: {r1.get('code')} vs {r2.get('code')}")

# idempotency: retry after the root is deleted
k = uuid.uuid4().hex
root2 = a.send_msg(ch1, "root2")
rr = b.send_msg(ch1, "in thread 2", cmid=k, threadId=root2["messageId"], replyTo=root2["messageId"])
cm = uuid.uuid4().hex
a.send({"type": "MSG_DELETE", "clientMsgId": cm, "messageId": root2["messageId"]})
a.answer(cm)
again = b.send_msg(ch1, "in thread 2", cmid=k, threadId=root2["messageId"], replyTo=root2["messageId"])
check(again["type"] == "MSG_ACK" and again["duplicate"] and again["seq"] == rr["seq"], f"retry after root deleted: {again}")
diff = b.send_msg(ch1, "in thread 2", cmid=k, threadId=root2["messageId"])
check(diff.get("code") == "idempotency_conflict", f"same key without replyTo: {diff.get('code')}")

# race: delete a root while replies pour in from another connection; every reply with seq above
# the delete's seq must have been refused
races = 0
for round_ in range(15):
    rt = a.send_msg(ch1, f"race root {round_}")
    acks = []

    def spam():
        for i in range(30):
            cmid = uuid.uuid4().hex
            b.send({"type": "MSG_SEND", "channelId": ch1, "clientMsgId": cmid, "body": f"r{i}", "threadId": rt["messageId"]})
    t = threading.Thread(target=spam)
    t.start()
    cm = uuid.uuid4().hex
    a.send({"type": "MSG_DELETE", "clientMsgId": cm, "messageId": rt["messageId"]})
    d = a.answer(cm)
    t.join()
    # collect b's answers
    got = 0
    while got < 30:
        f = b.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"))
        got += 1
        if f["type"] == "MSG_ACK" and f["seq"] > d["seq"]:
            races += 1
check(races == 0, f"thread replies stored after their root's delete: {races}")

# thread summary consistency after the races
s, page = http("GET", f"/v1/channels/{ch1}/messages?afterSeq=0&limit=500", token=ta)
for m in page["messages"]:
    if m.get("thread"):
        s2, tp = http("GET", f"/v1/channels/{ch1}/messages?threadId={m['messageId']}&afterSeq=0&limit=500", token=ta)
        live = [x for x in tp["messages"] if not x.get("deleted")]
        if m["thread"]["replyCount"] != len(live):
            check(False, f"replyCount {m['thread']['replyCount']} != live replies {len(live)} for {m['messageId']}")

# mentions
r = a.send_msg(ch1, "hey", mentions=[B, C, A, "no.such.user"])
check(r["type"] == "MSG_ACK", f"mentions with non-members: {r['type']}")
recv = b.next(lambda f: f["type"] == "MSG_RECV" and f["messageId"] == r["messageId"])
check(sorted(recv.get("mentions", [])) == sorted([B, A]) or sorted(recv.get("mentions", [])) == [B],
      f"only members kept in mentions: {recv.get('mentions')}")
r = b.send_msg(ch1, "all", mentionAll=True)
check(r.get("code") == "forbidden", f"mentionAll by a member: {r.get('code')}")
r = a.send_msg(ch1, "m", mentions=[f"u{i}" for i in range(51)])
check(r.get("code") == "invalid_field", f"51 mentions: {r.get('code')}")
r = a.send_msg(ch1, "m", mentions="bob")
check(r.get("code") == "invalid_field", f"mentions as a string: {r.get('code')}")
# unreadMentions after the mentioning message is deleted
b2 = Session(tb)
before = {c_["channelId"]: c_ for c_ in b2.hello["channels"]}[ch1]["unreadMentions"]
r = a.send_msg(ch1, "ping bob", mentions=[B])
cm = uuid.uuid4().hex
a.send({"type": "MSG_DELETE", "clientMsgId": cm, "messageId": r["messageId"]})
a.answer(cm)
b3 = Session(tb)
after = {c_["channelId"]: c_ for c_ in b3.hello["channels"]}[ch1]["unreadMentions"]
check(after == before, f"unreadMentions counts a deleted message: {before} -> {after}")
# settings
for body, want in [({"notify": "x"}, 400), ({"snoozeUntil": 1e300}, 400), ({"snoozeUntil": -1}, 400),
                   ({"snoozeUntil": "1"}, 400), ({"notify": None}, 400), ({"extra": 1}, 400), ({}, 200)]:
    s, resp = http("PUT", f"/v1/me/channels/{ch1}/settings", token=tb, body=body)
    check(s == want, f"settings {body}: {s} {resp}")
s, resp = http("PUT", f"/v1/me/channels/{ch1}/settings", token=tc, body={"notify": "none"})
check(s == 403, f"settings by a non-member: {s}")
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
