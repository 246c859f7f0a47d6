"""Races: two owners demoting each other at once; an owner demoting itself while a moderator
removes it; one upload claimed by two sends at once (two sessions, and pipelined on one); the
export of a user while it sends; a user erased while its export streams.

usage: CHATD_URL=http://127.0.0.1:PORT python3 race12.py
"""
import json
import threading
import time
import urllib.parse
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid


def members(ch):
    st, b = http("GET", f"/v1/channels/{ch}/members?limit=500")
    assert st == 200, (st, b)
    return {m["userId"]: m["role"] for m in b["members"]}


def at_once(*fns):
    res = [None] * len(fns)
    go = threading.Barrier(len(fns))
    def run(i, fn):
        go.wait()
        res[i] = fn()
    ts = [threading.Thread(target=run, args=(i, f)) for i, f in enumerate(fns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return res


# 1. two owners demote each other
no_owner = 0
for rnd in range(15):
    a, b, m = uid("oa"), uid("ob"), uid("om")
    ta, tb = token(a), token(b)
    ch = uid("own")
    channel(ch, [m], owners=[a, b])
    r = at_once(lambda: http("PUT", f"/v1/channels/{ch}/members/{b}", token=ta, body={"role": "member"}),
                lambda: http("PUT", f"/v1/channels/{ch}/members/{a}", token=tb, body={"role": "member"}))
    roles = members(ch)
    owners = [u for u, role in roles.items() if role == "owner"]
    if not owners:
        no_owner += 1
    if rnd < 3 or not owners:
        print(f"   round {rnd}: answers {[x[0] for x in r]}, owners after {owners}")
check(no_owner == 0, f"two owners demoting each other at once: a channel with members always keeps an owner ({no_owner} of 15 without)")

# 2. an owner makes itself a member while a moderator removes it
for rnd in range(10):
    o, mo, x = uid("o"), uid("mo"), uid("x")
    to, tmo = token(o), token(mo)
    ch = uid("own2")
    channel(ch, [x], owners=[o])
    http("PUT", f"/v1/channels/{ch}/members/{mo}", body={"role": "moderator"})
    r = at_once(lambda: http("PUT", f"/v1/channels/{ch}/members/{o}", token=to, body={"role": "member"}),
                lambda: http("DELETE", f"/v1/channels/{ch}/members/{o}", token=tmo))
    roles = members(ch)
    owners = [u for u, role in roles.items() if role == "owner"]
    # allowed outcomes: o demoted first then removed by mo (mo then owner by succession: mo may
    # remove a member), or removal refused (o still owner) and o demoted (successor appointed)
    check(len(owners) >= 1, f"round {rnd}: answers {[y[0] for y in r]}; roles {sorted(roles.values())}: an owner remains")

# 3. one upload claimed by two sends at once
u = uid("up")
tu = token(u)
ch = uid("att")
channel(ch, [u])
s1, s2 = Session(tu), Session(tu)
twice = 0
for rnd in range(15):
    st, up = http("POST", f"/v1/channels/{ch}/attachments?filename=a.txt", token=tu, raw=b"hello",
                  headers={"Content-Type": "text/plain"})
    assert st == 201, up
    att = up["attachmentId"]
    k1, k2 = uuid.uuid4().hex, uuid.uuid4().hex
    if rnd % 2:
        r = at_once(lambda: s1.send_msg(ch, "one", cmid=k1, attachments=[att]),
                    lambda: s2.send_msg(ch, "two", cmid=k2, attachments=[att]))
    else:   # pipelined on one connection
        s1.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": k1, "body": "one", "attachments": [att]})
        s1.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": k2, "body": "two", "attachments": [att]})
        r = [s1.answer(k1), s1.answer(k2)]
    acks = [f for f in r if f["type"] == "MSG_ACK"]
    if len(acks) != 1:
        twice += 1
        print(f"   round {rnd}: {r}")
check(twice == 0, f"one upload in two sends at once: exactly one stored ({twice} of 15 otherwise)")

# 4. export while the user sends
e = uid("ex")
te = token(e)
ch = uid("exp")
channel(ch, [e])
se = Session(te)
stop = threading.Event()
sent = []
def sender():
    while not stop.is_set():
        a = se.send_msg(ch, "m" + uuid.uuid4().hex)
        sent.append(a)
t = threading.Thread(target=sender)
t.start()
bad = 0
for _ in range(5):
    time.sleep(0.3)
    st, body = http("GET", f"/v1/users/{e}/export", timeout=60)
    lines = [json.loads(l) for l in body.splitlines()] if isinstance(body, str) else []
    if not lines or lines[-1].get("type") != "end" or lines[-1].get("count") != len(lines) - 1:
        bad += 1
        print("   export:", st, str(body)[:200], lines[-1] if lines else None)
        continue
    seqs = [l["seq"] for l in lines if l["type"] == "message"]
    if seqs != list(range(1, len(seqs) + 1)):
        bad += 1
        print(f"   export while sending: message seqs not a prefix 1..n: {seqs[:5]}... {seqs[-5:]} ({len(seqs)})")
stop.set()
t.join()
check(bad == 0, "exports while the user sends: each ends with its count and holds a gapless prefix of the messages")

# 5. erase while the export streams
st, body = [None], [None]
def exp():
    st[0], body[0] = http("GET", f"/v1/users/{e}/export", timeout=60)
r = at_once(exp, lambda: http("DELETE", f"/v1/users/{e}"))
lines = body[0].splitlines() if isinstance(body[0], str) else []
last = json.loads(lines[-1]) if lines else {}
print(f"   export raced with the erasure: {st[0]}, {len(lines)} lines, last {last}; erase {r[1][0]}")
check(st[0] != 200 or last.get("type") == "end", "an export raced with the erasure is whole (ends with its end line) or refused")
after = http("GET", f"/v1/users/{e}/export")
texts = [json.loads(l) for l in after[1].splitlines()] if isinstance(after[1], str) else []
left = [l for l in texts if l.get("type") == "message" and l.get("body")]
check(not left, f"after the erasure the export holds no text ({len(left)} with a body)")
for x in (s1, s2, se):
    x.close()
print(f"{len(FINDINGS)} finding(s)")
