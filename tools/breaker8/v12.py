"""Version 1.2 interplay against a running chatd (breaker8): slow mode, announcement
channels, mutes with extreme values, settings, retention against edits/reactions/replies/
search, members and bans bounds. Needs a server with a short retention sweep:

  serve.sh sqlite 18980 CHATD_RETENTION_SWEEP_SECS=1
  python3 v12.py
"""
import json
import threading
import time
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

owner, alice, bob = uid("owner"), uid("alice"), uid("bob")
T = {u: token(u) for u in (owner, alice, bob)}


def hist(cid, tok=None, q="afterSeq=0&limit=500"):
    s, b = http("GET", f"/v1/channels/{cid}/messages?{q}", **({"token": tok} if tok else {}))
    assert s == 200, (s, b)
    return b


# ---------------------------------------------------------------- slow mode
cid = uid("slow")
channel(cid, [alice, bob], owners=[owner])
s, b = http("PATCH", f"/v1/channels/{cid}", body={"slowModeMs": 60000})
check(s == 200 and b.get("slowModeMs") == 60000, f"slowModeMs set: {s}")
A1, A2 = Session(T[alice]), Session(T[alice])
# 2 connections x 30 pipelined sends, at once: exactly one stored.
keys = {A1: [uuid.uuid4().hex for _ in range(30)], A2: [uuid.uuid4().hex for _ in range(30)]}
for S, ks in keys.items():
    for k in ks:
        S.send({"type": "MSG_SEND", "channelId": cid, "clientMsgId": k, "body": "slow " + k})
res = []
for S, ks in keys.items():
    for k in ks:
        res.append(S.answer(k, timeout=20))
acked = [f for f in res if f["type"] == "MSG_ACK"]
refused = [f for f in res if f["type"] == "ERROR"]
check(len(acked) == 1, f"slow mode across 2 connections, 60 pipelined sends: {len(acked)} stored")
check(all(f.get("code") == "rate_limited" and f.get("reason") == "slow_mode" and f.get("retryable") is True
          and isinstance(f.get("retryAfterMs"), int) and 0 < f["retryAfterMs"] <= 60000 for f in refused),
      f"every refusal rate_limited/slow_mode with retryAfterMs: {set((f.get('code'), f.get('reason')) for f in refused)}")
# A thread reply is a message entry: slowed too. A backend post as the member: slowed (429).
root = acked[0]["messageId"]
f = A1.send_msg(cid, "reply in thread", threadId=root)
check(f["type"] == "ERROR" and f.get("reason") == "slow_mode", f"thread reply in slow mode refused: {f.get('code')}/{f.get('reason')}")
s, b = http("POST", f"/v1/channels/{cid}/messages", body={"senderId": alice, "clientMsgId": uuid.uuid4().hex, "body": "backend"})
check(s == 429 and b["error"].get("reason") == "slow_mode", f"backend post as a slowed member: {s} {b}")
# The retry of the stored key still answers duplicate.
k0 = acked[0]["clientMsgId"]
f = A2.send_msg(cid, "slow " + k0, cmid=k0)
check(f["type"] == "MSG_ACK" and f["duplicate"] is True, "retry of the stored key in slow mode: duplicate ACK")
# A moderator is not slowed.
O = Session(T[owner])
check(O.send_msg(cid, "o1")["type"] == "MSG_ACK" and O.send_msg(cid, "o2")["type"] == "MSG_ACK", "owner not slowed")
# slowModeMs bounds.
for v in (3600001, -1, 1.5, "1000", 1e400 if False else 10**20):
    s, b = http("PATCH", f"/v1/channels/{cid}", body={"slowModeMs": v})
    check(s == 400 and b["error"]["code"] == "invalid_field", f"slowModeMs {v!r}: {s} {b.get('error', {}).get('code') if isinstance(b, dict) else b}")
s, b = http("PATCH", f"/v1/channels/{cid}", raw=b'{"slowModeMs":1e400}', headers={"Content-Type": "application/json"})
check(s == 400, f"slowModeMs 1e400: {s} {b}")
s, b = http("PATCH", f"/v1/channels/{cid}", raw=b'{"slowModeMs":5e3}', headers={"Content-Type": "application/json"})
print("      slowModeMs 5e3 ->", s, b if s != 200 else b.get("slowModeMs"))
s, b = http("PATCH", f"/v1/channels/{cid}", body={"slowModeMs": 0})
check(s == 200, "slow mode off")
f = A1.send_msg(cid, "after slow mode off")
check(f["type"] == "MSG_ACK", f"member sends once slow mode is off: {f.get('code')}")

# ---------------------------------------------------------------- announcement channel
ann = uid("news")
channel(ann, [alice, bob], owners=[owner])
m0 = Session(T[owner]).send_msg(ann, "announcement root")
s, b = http("PATCH", f"/v1/channels/{ann}", body={"postingRole": "moderator"})
check(s == 200, "postingRole moderator")
A = Session(T[alice])
f = A.send_msg(ann, "member reply", threadId=m0["messageId"])
check(f["type"] == "ERROR" and f.get("reason") == "read_only", f"member thread reply in announcement channel: {f.get('code')}/{f.get('reason')}")
f = A.send_msg(ann, "member quote", replyTo=m0["messageId"])
check(f["type"] == "ERROR" and f.get("reason") == "read_only", f"member replyTo in announcement channel: {f.get('code')}/{f.get('reason')}")
cm = uuid.uuid4().hex
A.send({"type": "MSG_REACT", "clientMsgId": cm, "messageId": m0["messageId"], "emoji": "👍", "op": "add"})
f = A.answer(cm)
check(f["type"] == "MSG_ACK", f"member reacts in announcement channel: {f.get('code')}")
for v in ("owner", "admin", "MODERATOR", None, 1):
    s, b = http("PATCH", f"/v1/channels/{ann}", body={"postingRole": v})
    check(s == 400, f"postingRole {v!r}: {s}")

# ---------------------------------------------------------------- mutes with extreme values
mc = uid("mute")
channel(mc, [alice, bob], owners=[owner])
for v in (2**63 - 1, 2**63, 2**53 + 1, -1, 0, 1.5, "123", 1e300):
    s, b = http("PUT", f"/v1/channels/{mc}/members/{alice}", body={"mutedUntil": v})
    ms, mb = http("GET", f"/v1/channels/{mc}/members")
    mu = [m.get("mutedUntil") for m in mb["members"] if m["userId"] == alice]
    f = Session(T[alice]).send_msg(mc, f"muted? {v}")
    print(f"      mutedUntil {v!r}: PUT {s} {b if s != 204 else ''} members.mutedUntil={mu} send={f['type']} {f.get('reason')} {f.get('retryAfterMs')}")
    if s == 204 and isinstance(v, int) and v > 2**53:
        check(False, f"mutedUntil {v} (past 2^53, not a valid ms for JSON clients) accepted")
http("PUT", f"/v1/channels/{mc}/members/{alice}", body={"mutedUntil": None})

# ---------------------------------------------------------------- settings
for body, want in (({"notify": "ALL"}, 400), ({"notify": None}, None), ({"snoozeUntil": -5}, None),
                   ({"snoozeUntil": 2**63}, 400), ({"snoozeUntil": 1.5}, 400), ({"snoozeUntil": "1"}, 400),
                   ({"notify": "mentions", "snoozeUntil": 2**53 + 10}, None), ([], 400), ("x", 400)):
    s, b = http("PUT", f"/v1/me/channels/{mc}/settings", token=T[alice], body=body)
    print(f"      settings {json.dumps(body)[:60]}: {s} {b}")
    if want is not None:
        check(s == want, f"settings {json.dumps(body)[:60]} -> {s}, want {want}")
s, b = http("PUT", f"/v1/me/channels/{mc}/settings", token=T[alice], raw=b'{"snoozeUntil":1e400}', headers={"Content-Type": "application/json"})
check(s == 400, f"settings snoozeUntil 1e400: {s}")
s, b = http("PUT", f"/v1/me/channels/nope-{uuid.uuid4().hex[:6]}/settings", token=T[alice], body={"notify": "none"})
check(s in (403, 404), f"settings of a non-member channel: {s}")

# ---------------------------------------------------------------- members/bans bounds
for q in ("limit=0", "limit=501", "limit=-1", "limit=1e2", "after=", "after=..", "after=%00", "after=" + "a" * 200):
    s, b = http("GET", f"/v1/channels/{mc}/members?{q}")
    print(f"      members?{q[:30]}: {s} {str(b)[:100]}")
    s, b = http("GET", f"/v1/channels/{mc}/bans?{q}")
    print(f"      bans?{q[:30]}: {s} {str(b)[:100]}")

# ---------------------------------------------------------------- retention against edits, reactions, replies, search
rc = uid("ret")
channel(rc, [alice, bob], owners=[owner])
A = Session(T[alice])
word = "zqx" + uuid.uuid4().hex[:10]
old = A.send_msg(rc, f"soon expired {word}")
cm = uuid.uuid4().hex
A.send({"type": "MSG_EDIT", "clientMsgId": cm, "messageId": old["messageId"], "body": f"edited {word} text"})
A.answer(cm)
s, b = http("PATCH", f"/v1/channels/{rc}", body={"retentionSecs": 2})
check(s == 200, f"retentionSecs 2: {s} {b}")
time.sleep(5)
h = hist(rc)
m = [x for x in h["messages"] if x["messageId"] == old["messageId"]][0]
check(m.get("deleted") and m.get("expired") and m["body"] == "", f"expired: {m}")
edits = [x for x in h["messages"] if x.get("kind") == "edit"]
check(all(x["body"] == "" for x in edits), f"edit entries' bodies gone after expiry: {[x['body'] for x in edits]}")
s, b = http("GET", f"/v1/me/search?q={word}", token=T[alice])
check(s == 200 and not b["results"], f"search finds no expired text: {s} {len(b.get('results', []))}")
for frame, name in (({"type": "MSG_EDIT", "body": "revived " + word}, "edit"),
                    ({"type": "MSG_REACT", "emoji": "🔥", "op": "add"}, "react"),
                    ({"type": "MSG_DELETE"}, "delete")):
    cm = uuid.uuid4().hex
    A.send({**frame, "clientMsgId": cm, "messageId": old["messageId"]})
    f = A.answer(cm)
    check(f["type"] == "ERROR" and f.get("code") == "not_found", f"{name} of an expired message: {f['type']} {f.get('code')} {f.get('message')}")
f = A.send_msg(rc, "quote expired", replyTo=old["messageId"])
check(f["type"] == "ERROR" and f.get("code") == "not_found", f"replyTo an expired message: {f['type']} {f.get('code')}")
f = A.send_msg(rc, "thread of expired", threadId=old["messageId"])
print("      threadId of an expired root:", f["type"], f.get("code"), f.get("message"))
s, b = http("GET", f"/v1/me/search?q=revived", token=T[alice])
check(s == 200 and not b["results"], "no revived text found")
h = hist(rc)
m = [x for x in h["messages"] if x["messageId"] == old["messageId"]][0]
check(m["body"] == "" and m.get("deleted"), f"expired message still empty after the attempts: {m['body'][:40]}")
s, b = http("GET", f"/v1/users/{alice}/export")
check(word not in json.dumps(b), "export holds no expired text")

print("\nFINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
