"""Corners no earlier hostile run tried: TYPING (§9, §17) to and from members that are not
members any more, muted, banned; the members route's `atSeq`; WebSocket permessage-deflate
(a compressed frame inflating past max_frame_bytes); a ban across an erasure; search `q` with
FTS5 syntax; one user's two sessions racing one clientMsgId with different content.

usage: CHATD_URL=http://127.0.0.1:PORT python3 misc11.py
"""
import json
import threading
import time
import uuid
import urllib.parse

from websockets.sync.client import connect

from lib import WS, Session, channel, check, http, token, uid, FINDINGS


def frames_of(sess, secs, pred=lambda f: True):
    out = []
    end = time.time() + secs
    while time.time() < end:
        try:
            f = sess.next(timeout=max(0.05, end - time.time()))
        except TimeoutError:
            break
        if pred(f):
            out.append(f)
    return out


A, B, R, Mu, Bn, O = (uid(x) for x in ["a", "b", "r", "mu", "bn", "own"])
C = uid("ty")
channel(C, [A, B, R, Mu, Bn], owners=[O], visibility="public")
sa, sb, sr, smu, sbn = (Session(token(x)) for x in [A, B, R, Mu, Bn])

# --- typing, basics
sa.send({"type": "TYPING", "channelId": C, "state": "start"})
t = frames_of(sb, 1.0, lambda f: f["type"] == "TYPING")
check(len(t) == 1 and t[0].get("userId") == A and "expiresAt" in t[0], f"TYPING reaches another member: {t}")
for bad in [{"state": "begin"}, {"state": None}, {"state": 1}, {"channelId": 5, "state": "start"},
            {"channelId": "x" * 300, "state": "start"}, {"state": "START"}]:
    fr = {"type": "TYPING", "channelId": C, **bad}
    sa.send(fr)
    e = sa.next(lambda f: f["type"] == "ERROR", timeout=3)
    check(e["code"] == "invalid_field", f"TYPING {bad}: {e.get('code')} {e.get('field')}")
nm = Session(token(uid("stranger")))
nm.send({"type": "TYPING", "channelId": C, "state": "start"})
e = nm.next(lambda f: f["type"] == "ERROR", timeout=3)
check(e["code"] == "forbidden" and e.get("channelId") == C, f"TYPING by a non-member: {e}")

# --- muted: TYPING forbidden, reason muted, retryAfterMs (§17)
until = int(time.time() * 1000) + 60_000
s, b = http("PUT", f"/v1/channels/{C}/members/{Mu}", body={"mutedUntil": until})
check(s in (200, 204), f"mute: {s} {b}")
time.sleep(0.3)
smu.send({"type": "TYPING", "channelId": C, "state": "start"})
e = frames_of(smu, 1.5, lambda f: f["type"] == "ERROR")
tb = frames_of(sb, 0.5, lambda f: f["type"] == "TYPING" and f.get("userId") == Mu)
check(len(e) == 1 and e[0]["code"] == "forbidden" and e[0].get("reason") == "muted" and "retryAfterMs" in e[0],
      f"TYPING of a muted member: {e}; other member saw {len(tb)} TYPING of it")

# --- removed and banned: no typing of C reaches them, their typing refused
s, _ = http("DELETE", f"/v1/channels/{C}/members/{R}")
s2, _ = http("DELETE", f"/v1/channels/{C}/members/{Bn}?ban=true")
check(s == 204 and s2 == 204, f"remove {s}, ban {s2}")
time.sleep(0.5)
frames_of(sr, 0.3)
frames_of(sbn, 0.3)
time.sleep(2.1)  # past the throttle
sa.send({"type": "TYPING", "channelId": C, "state": "start"})
leak_r = frames_of(sr, 1.0, lambda f: f.get("channelId") == C and f["type"] in ("TYPING", "MSG_RECV"))
leak_b = frames_of(sbn, 0.2, lambda f: f.get("channelId") == C and f["type"] in ("TYPING", "MSG_RECV"))
check(not leak_r and not leak_b, f"nothing of C reaches a removed ({leak_r}) or banned ({leak_b}) user")
for who, sess in (("removed", sr), ("banned", sbn)):
    sess.send({"type": "TYPING", "channelId": C, "state": "start"})
    e = frames_of(sess, 1.0, lambda f: f["type"] == "ERROR")
    check(len(e) == 1 and e[0]["code"] == "forbidden", f"TYPING by a {who} user: {e}")
s, b = http("PUT", f"/v1/me/channels/{C}", token(Bn))
check(s == 403 and (b or {}).get("error", {}).get("reason") == "banned", f"banned user re-joins: {s} {b}")
# a stop is sent when the typer's message is stored
time.sleep(2.1)
frames_of(sb, 0.2)
sa.send({"type": "TYPING", "channelId": C, "state": "start"})
sa.send_msg(C, "stops typing")
t = frames_of(sb, 1.0, lambda f: f["type"] == "TYPING" and f.get("userId") == A)
check([f["state"] for f in t] == ["start", "stop"], f"start then stop when the message is stored: {[f['state'] for f in t]}")

# --- ban across an erasure
s, _ = http("DELETE", f"/v1/users/{Bn}")
check(s == 204, f"erase the banned user: {s}")
time.sleep(1.5)
s, b = http("GET", f"/v1/channels/{C}/bans")
check(s == 200, f"bans after the erasure: {s} {b}")
banned_still = Bn in json.dumps(b)
s, b = http("PUT", f"/v1/me/channels/{C}", token(Bn))
print(f"   info: after erasing a banned user the ban is {'kept' if banned_still else 'gone'}; "
      f"a new token's join: {s} {b}")

# --- members route atSeq
s, b = http("GET", f"/v1/channels/{C}/members?limit=2", token(A))
check(s == 200 and isinstance(b.get("atSeq"), int), f"members route atSeq: {s} {b and b.get('atSeq')}")
for q in ["limit=0", "limit=501", "limit=1.5", "limit=-1", "after=" + "x" * 300, "limit=0.99999999999999999"]:
    s, b = http("GET", f"/v1/channels/{C}/members?{q}", token(A))
    check(s == 400, f"members ?{q[:30]}: {s} {b if s != 200 else ''}")
s, b = http("GET", f"/v1/channels/{C}/members", token(R))
check(s == 403, f"members route by a removed member: {s}")

# --- search q with FTS5 syntax: substring semantics, never 500
D = uid("fts")
channel(D, [A])
for body in ['he said "quote" here', "NEAR(one two) text", "col:term and ^caret", "star* word",
             "AND OR NOT plain", "a-b.c@d", "(paren", "'single"]:
    sa.send_msg(D, body)
for q, want in [('"quote"', 1), ('"', 1), ("NEAR(one", 1), ("col:term", 1), ("^caret", 1), ("star*", 1),
                ("*", 1), ("AND", 1), ("OR", 1), ("NOT", 1), ("(paren", 1), ("'single", 1), ("-", 1),
                ("\u0000", 0), ("a-b.c@d", 1), ("\"\"\"", 0)]:
    s, b = http("GET", f"/v1/me/search?channelId={D}&q={urllib.parse.quote(q)}", token(A))
    n = len(b.get("results", [])) if s == 200 else None
    ok = s == 200 and n >= want if want else s in (200, 400)
    check(ok and s != 500, f"search q={q!r}: {s} {n if n is not None else b}")

# --- permessage-deflate: is it offered; a small frame inflating past max_frame_bytes
tok = token(A)
try:
    ws = connect(WS, additional_headers={"Authorization": f"Bearer {tok}"}, compression="deflate", max_size=None)  # noqa
    ext = ws.response.headers.get("Sec-WebSocket-Extensions")
    print(f"   info: Sec-WebSocket-Extensions answered: {ext!r}")
    ws.close()
except Exception as e:  # noqa: BLE001
    print("   info: deflate connect:", e)

# --- two sessions of one user race one clientMsgId with different bodies
RC = uid("race")
channel(RC, [A, B])
s1, s2 = Session(tok), Session(tok)
bad = []
for i in range(40):
    cm = uuid.uuid4().hex
    res = {}

    def go(sess, body, k):
        sess.send({"type": "MSG_SEND", "channelId": RC, "clientMsgId": cm, "body": body})
        res[k] = sess.answer(cm)
    th = [threading.Thread(target=go, args=(s1, f"one {i}", 1)), threading.Thread(target=go, args=(s2, f"two {i}", 2))]
    [t.start() for t in th]
    [t.join() for t in th]
    kinds = sorted((r["type"], r.get("code"), r.get("duplicate")) for r in res.values())
    if kinds != sorted([("MSG_ACK", None, False), ("ERROR", "idempotency_conflict", None)]):
        bad.append(kinds)
h = Session(token(B)).sync(RC, 0, limit=500)
bodies = [m["body"] for m in h["messages"]]
check(not bad and len(bodies) == 40, f"40 races of one key, two bodies: one ACK + one conflict each ({bad[:3]}), {len(bodies)} stored")

print("FINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
