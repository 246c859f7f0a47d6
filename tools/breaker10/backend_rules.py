"""§11's backend post ("through the same path as MSG_SEND") against §17's rules: slow mode, a
read-only (announcement) channel, a mute, a block in a direct channel; and replies/threads/
mentionAll through the backend post. Each refusal as for MSG_SEND (403/429 with the reason),
nothing stored.

  CHATD_URL=http://127.0.0.1:19100 python3 backend_rules.py
"""
import time
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

A, B = uid("ba"), uid("bb")
ch = uid("br")
channel(ch, [A, B], owners=[B])
ta, tb = token(A), token(B)
sa = Session(ta)


def post(cid, sender, **extra):
    return http("POST", f"/v1/channels/{cid}/messages",
                body={"senderId": sender, "clientMsgId": uuid.uuid4().hex, "body": "backend", **extra})


def last(cid):
    return http("GET", f"/v1/channels/{cid}")[1]["lastSeq"]


# slow mode
http("PATCH", f"/v1/channels/{ch}", body={"slowModeMs": 60000})
r = sa.send_msg(ch, "first under slow mode")
check(r["type"] == "MSG_ACK", f"first WS send under slow mode: {r['type']}")
n = last(ch)
st, b = post(ch, A)
check(st == 429 and b["error"].get("reason") == "slow_mode", f"backend post as a member inside slow mode: {st} {b}")
r = sa.send_msg(ch, "second by WS")
check(r["type"] == "ERROR" and r.get("reason") == "slow_mode", f"WS send inside slow mode: {r.get('code')} {r.get('reason')}")
root = http("GET", f"/v1/channels/{ch}/messages?latest=true&limit=1")[1]["messages"][0]["messageId"]
st, b = post(ch, A, threadId=root)
check(st == 429, f"backend thread reply inside slow mode: {st}")
check(last(ch) == n, f"nothing stored under slow mode (lastSeq {n} -> {last(ch)})")
http("PATCH", f"/v1/channels/{ch}", body={"slowModeMs": 0})
# read-only
http("PATCH", f"/v1/channels/{ch}", body={"postingRole": "moderator"})
st, b = post(ch, A)
check(st == 403 and b["error"].get("reason") == "read_only", f"backend post as a member in a read-only channel: {st} {b}")
st, b = post(ch, B)
check(st == 201, f"backend post as the owner in a read-only channel: {st}")
http("PATCH", f"/v1/channels/{ch}", body={"postingRole": "member"})
# mute
http("PUT", f"/v1/channels/{ch}/members/{A}", body={"mutedUntil": int(time.time() * 1000) + 600000})
st, b = post(ch, A)
check(st == 403 and b["error"].get("reason") == "muted", f"backend post as a muted member: {st} {b}")
http("PUT", f"/v1/channels/{ch}/members/{A}", body={"mutedUntil": None})
# mentionAll as a member
st, b = post(ch, A, mentionAll=True)
check(st == 403, f"backend post mentionAll as a member: {st} {b}")
# block in a DM
st, dm = http("PUT", f"/v1/me/direct/{B}", token=ta)
http("PUT", f"/v1/me/blocks/{A}", token=tb)
st, b = post(dm["channelId"], A)
check(st == 403 and b["error"].get("reason") == "blocked", f"backend post by a blocked user into the DM: {st} {b}")
print("FINDINGS:", FINDINGS)
