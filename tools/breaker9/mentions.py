"""unreadMentions (HELLO and /v1/me/channels) against the count computed from the stored log,
after moderator deletes, edits, the erasure of a mentioning sender, a demoted moderator's
mentionAll, reads, thread replies, backend posts, self-mentions and retention expiry; then
hostile settings bodies (PUT /v1/me/channels/{id}/settings).

  serve.sh sqlite 18900 CHATD_RETENTION_SWEEP_SECS=1
  CHATD_URL=http://127.0.0.1:18900 python3 mentions.py
"""
import time
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid


def history(ch):
    out, after = [], 0
    while True:
        s, b = http("GET", f"/v1/channels/{ch}/messages?afterSeq={after}&limit=500")
        assert s == 200, (s, b)
        out += b["messages"]
        if not b["hasMore"]:
            return out
        after = out[-1]["seq"]


def expected(ch, user, read_seq):
    n = 0
    for m in history(ch):
        if m.get("kind", "message") != "message" or m.get("deleted") or m["senderId"] == user:
            continue
        if m["seq"] <= read_seq:
            continue
        if user in (m.get("mentions") or []) or m.get("mentionAll"):
            n += 1
    return n


def compare(tok, user, ch, label):
    sess = Session(tok)
    entry = next(c for c in sess.hello["channels"] if c["channelId"] == ch)
    sess.close()
    s, b = http("GET", "/v1/me/channels", token=tok)
    me = next(c for c in b["channels"] if c["channelId"] == ch)
    want = expected(ch, user, entry["readSeq"])
    check(entry["unreadMentions"] == want and me["unreadMentions"] == want,
          f"{label}: unreadMentions HELLO {entry['unreadMentions']} /me {me['unreadMentions']} log {want}")
    return entry


U, S, MO, O, T = uid("u"), uid("s"), uid("mo"), uid("o"), uid("t")
ch = uid("ment")
channel(ch, [U, S, T], owners=[O])
http("PUT", f"/v1/channels/{ch}/members/{MO}", body={"role": "moderator"})
tu, ts, tmo, to, tt = token(U), token(S), token(MO), token(O), token(T)
s_sess, mo_sess, u_sess, t_sess = Session(ts), Session(tmo), Session(tu), Session(tt)

mention_ids = []
for i in range(5):
    a = s_sess.send_msg(ch, f"hey @{U} {i}", mentions=[U, U, T])
    mention_ids.append(a["messageId"])
for i in range(3):
    s_sess.send_msg(ch, f"plain {i}")
compare(tu, U, ch, "5 mentions")

# a moderator deletes one (route) and one by frame
http("DELETE", f"/v1/channels/{ch}/messages/{mention_ids[0]}", token=tmo)
mo_sess.send({"type": "MSG_DELETE", "clientMsgId": uuid.uuid4().hex, "messageId": mention_ids[1]})
mo_sess.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"))
compare(tu, U, ch, "after two moderator deletes")

# an edit of a mention
s_sess.send({"type": "MSG_EDIT", "clientMsgId": uuid.uuid4().hex, "messageId": mention_ids[2], "body": "edited"})
s_sess.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"))
compare(tu, U, ch, "after an edit")

# thread replies mentioning U, a backend post, a self mention
root = s_sess.send_msg(ch, "root")["messageId"]
for i in range(3):
    t_sess.send_msg(ch, f"reply {i}", threadId=root, mentions=[U])
st, b = http("POST", f"/v1/channels/{ch}/messages", body={"senderId": T, "clientMsgId": uuid.uuid4().hex,
                                                           "body": "backend", "mentions": [U]})
check(st == 201, f"backend post with mentions: {st} {b}")
u_sess.send_msg(ch, "self", mentions=[U])
compare(tu, U, ch, "threads, backend post, self mention")

# mentionAll by a moderator, then the moderator demoted and erased-later
for i in range(2):
    a = mo_sess.send_msg(ch, f"all {i}", mentionAll=True)
    check(a["type"] == "MSG_ACK", f"mentionAll by moderator: {a}")
http("PUT", f"/v1/channels/{ch}/members/{MO}", body={"role": "member"})
compare(tu, U, ch, "mentionAll then demotion")

# U reads up to the middle
hist = history(ch)
mid = hist[len(hist) // 2]
u_sess.send({"type": "MSG_READ", "messageId": mid["messageId"]})
time.sleep(0.5)
compare(tu, U, ch, "after a read to the middle")

# the mentioning sender S is erased
st, _ = http("DELETE", f"/v1/users/{S}", timeout=120)
check(st == 204, f"erase S: {st}")
compare(tu, U, ch, "after S's erasure")

# the moderator is erased (its mentionAll messages go)
st, _ = http("DELETE", f"/v1/users/{MO}", timeout=120)
compare(tu, U, ch, "after MO's erasure")

# T (mentioned too) left and came back
http("DELETE", f"/v1/me/channels/{ch}", token=tt)
http("PUT", f"/v1/channels/{ch}/members/{T}")
compare(tt, T, ch, "T after leave and re-add (counts from before the join: documented)")

# retention: a channel whose mentions expire
ch2 = uid("ment-ret")
channel(ch2, [U, T], owners=[O])
tt2 = token(T)
t2 = Session(tt2)
for i in range(4):
    t2.send_msg(ch2, f"exp @{U} {i}", mentions=[U])
st, b = http("PATCH", f"/v1/channels/{ch2}", body={"retentionSecs": 1})
check(st == 200, f"PATCH retentionSecs 1: {st} {b}")
time.sleep(4)
h = history(ch2)
print("   expired:", sum(1 for m in h if m.get("expired")), "of", len(h))
compare(tu, U, ch2, "after retention expiry")
t2.close()

# settings bodies
cases = [
    ({"notify": "mentions"}, 200), ({"snoozeUntil": None}, 200), ({}, 200),
    ({"notify": "ALL"}, 400), ({"notify": ""}, 400), ({"notify": None}, 400),
    ({"snoozeUntil": -1}, 400), ({"snoozeUntil": 1.5}, 400), ({"snoozeUntil": 2 ** 63}, 400),
    ({"snoozeUntil": 9007199254740992}, 400), ({"snoozeUntil": "1"}, 400), ({"snoozeUntil": True}, 400),
]
for body, want in cases:
    st, b = http("PUT", f"/v1/me/channels/{ch}/settings", token=tu, body=body)
    check(st == want, f"settings {body}: {st} (want {want}) {str(b)[:120]}")
raw_cases = [
    (b'{"notify":"none","notify":"all"}', 400), (b'{"notify":"all","x":1e400}', 400),
    (b'{"snoozeUntil":1e400}', 400), (b'[{"notify":"all"}]', 400), (b'{"notify":"all"} x', 400),
    (b'{"notify":"\\ud800"}', 400), (b'{"snoozeUntil":1e3}', 200), (b'{"snoozeUntil":-0}', 200),
    (b'\xef\xbb\xbf{"notify":"all"}', 400),
]
for raw, want in raw_cases:
    st, b = http("PUT", f"/v1/me/channels/{ch}/settings", token=tu, raw=raw,
                 headers={"Content-Type": "application/json"})
    check(st == want, f"settings raw {raw[:40]!r}: {st} (want {want}) {str(b)[:120]}")
# a non-member, an unknown channel, the admin token
st, b = http("PUT", f"/v1/me/channels/{ch}/settings", token=token(uid("stranger")), body={"notify": "none"})
check(st == 403, f"settings by a non-member: {st} {b}")
st, b = http("PUT", f"/v1/me/channels/nope-{uuid.uuid4().hex[:6]}/settings", token=tu, body={"notify": "none"})
check(st == 403, f"settings of an unknown channel: {st} {b}")
st, b = http("PUT", f"/v1/me/channels/{ch}/settings", body={"notify": "none"})
check(st in (401, 403), f"settings with the admin token: {st} {b}")
# a huge body
try:
    st, b = http("PUT", f"/v1/me/channels/{ch}/settings", token=tu, raw=b'{"notify":"all","pad":"' + b"x" * 5_000_000 + b'"}',
                 headers={"Content-Type": "application/json"})
except Exception as e:  # the server answers 413 and closes before the body is sent
    st, b = 413, repr(e)
check(st in (400, 413), f"settings with a 5 MB body: {st} {str(b)[:120]}")
print("FINDINGS:", FINDINGS)
