"""Thread pages (§14): SYNC and history with threadId, forward by afterSeq and backward by
beforeSeq, with replies interleaved with channel messages, edits, deletes and reactions: every
reply exactly once, in seq order, hasMore false exactly on the last page, no non-reply entry."""
import json
import random
import uuid

from lib import Session, channel, check, http, token, uid, FINDINGS

A, B = uid("alice"), uid("bob")
ch = uid("tp")
channel(ch, [A, B])
ta = token(A)
a, b = Session(ta), Session(token(B))
root = a.send_msg(ch, "root")
other_root = a.send_msg(ch, "other root")
replies = []
for i in range(150):
    r = random.random()
    if r < 0.5:
        x = b.send_msg(ch, f"reply {i}", threadId=root["messageId"])
        replies.append(x)
    elif r < 0.7:
        a.send_msg(ch, f"channel {i}")
    elif r < 0.8:
        a.send_msg(ch, f"other thread {i}", threadId=other_root["messageId"])
    elif r < 0.9 and replies:
        cm = uuid.uuid4().hex
        b.send({"type": "MSG_EDIT", "clientMsgId": cm, "messageId": random.choice(replies)["messageId"], "body": f"edited {i}"})
        b.answer(cm)
    elif replies:
        cm = uuid.uuid4().hex
        a.send({"type": "MSG_REACT", "clientMsgId": cm, "messageId": random.choice(replies)["messageId"], "emoji": "x", "op": "add"})
        a.answer(cm)
want = [r["seq"] for r in replies]
for lim in (1, 7, 50):
    got, after, pages = [], 0, 0
    while True:
        f = a.sync(ch, after, threadId=root["messageId"], limit=lim)
        pages += 1
        if f["type"] != "SYNC_BATCH":
            check(False, f"SYNC thread page: {f}")
            break
        got += [m["seq"] for m in f["messages"]]
        bad = [m for m in f["messages"] if m.get("threadId") != root["messageId"] or m.get("kind") != "message"]
        if bad:
            check(False, f"non-reply in a thread page: {bad[0]}")
        if not f["hasMore"]:
            break
        if not f["messages"]:
            check(False, f"empty page with hasMore at afterSeq {after}")
            break
        after = f["messages"][-1]["seq"]
    check(got == want, f"SYNC forward limit={lim}: {len(got)} of {len(want)} in {pages} pages")
    got, before = [], None
    while True:
        q = f"/v1/channels/{ch}/messages?threadId={root['messageId']}&limit={lim}" + (f"&beforeSeq={before}" if before else "&latest=true")
        s, page = http("GET", q, token=ta)
        if s != 200:
            check(False, f"history {q}: {s} {page}")
            break
        got = [m["seq"] for m in page["messages"]] + got
        if not page["hasMore"] or not page["messages"]:
            break
        before = page["messages"][0]["seq"]
    check(got == want, f"history backward limit={lim}: {len(got)} of {len(want)}")
s, page = http("GET", f"/v1/channels/{ch}/messages?afterSeq=0&limit=3", token=ta)
r0 = page["messages"][0]
check(r0["thread"]["replyCount"] == len(replies), f"replyCount {r0['thread']['replyCount']} == {len(replies)}")
check(r0["thread"]["lastReplySeq"] == want[-1], "lastReplySeq is the last reply's seq")
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
