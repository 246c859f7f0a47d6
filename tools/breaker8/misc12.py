"""Small 1.2 checks (breaker8): directory `q` with LIKE wildcards; TYPING of a muted member;
a DM with oneself; MSG_REACT/EDIT of a blocked user in a DM.

python3 misc12.py   (CHATD_URL as in lib.py)
"""
import time
import urllib.parse
import uuid

from lib import FINDINGS, RUN, Session, channel, check, http, token, uid

alice, bob, owner = uid("alice"), uid("bob"), uid("owner")
TA, TB, TO = token(alice), token(bob), token(owner)
names = {uid("pct"): f"{RUN} 100% fun", uid("und"): f"{RUN} a_b club", uid("bs"): f"{RUN} back\\slash", uid("plain"): f"{RUN} 100 x fun axb"}
for cid, name in names.items():
    channel(cid, [owner], visibility="public")
    http("PATCH", f"/v1/channels/{cid}", body={"name": name})
for q, want in (("%", 1), ("_", 1), ("\\", 1), ("100%", 1), ("a_b", 1), ("%fun", 0), ("1_0", 0)):
    s, b = http("GET", "/v1/directory?limit=500&q=" + urllib.parse.quote(f"{RUN} {q}" if False else q), token=TA)
    got = [c for c in b.get("channels", []) if RUN in (c.get("name") or "")]
    check(s == 200 and len(got) == want, f"directory q={q!r}: {len(got)} of ours, want {want}")

# TYPING of a muted member: forbidden/muted with retryAfterMs
cid = uid("mt")
channel(cid, [alice, bob], owners=[owner])
until = int(time.time() * 1000) + 60000
s, _ = http("PUT", f"/v1/channels/{cid}/members/{alice}", body={"mutedUntil": until})
A = Session(TA)
A.send({"type": "TYPING", "channelId": cid, "state": "start"})
f = A.next(lambda f: f["type"] == "ERROR", timeout=5)
check(f.get("code") == "forbidden" and f.get("reason") == "muted" and isinstance(f.get("retryAfterMs"), int) and f.get("channelId") == cid,
      f"TYPING of a muted member: {f}")
# a muted member still reads, moves receipts, deletes own, leaves
m = Session(TB).send_msg(cid, "hello")
A.send({"type": "MSG_READ", "messageId": m["messageId"]})
A.send({"type": "SYNC", "channelId": cid, "afterSeq": 0})
f = A.next(lambda f: f["type"] in ("SYNC_BATCH", "ERROR"), timeout=5)
check(f["type"] == "SYNC_BATCH", f"muted member syncs: {f['type']}")

# DM with oneself
s, b = http("PUT", f"/v1/me/direct/{alice}", token=TA)
check(s in (200, 201) and b.get("members") == [alice] and b.get("kind") == "direct", f"DM with oneself: {s} {b}")
s2, b2 = http("PUT", f"/v1/me/direct/{alice}", token=TA)
check(s2 == 200 and b2.get("channelId") == b.get("channelId"), f"DM with oneself again: {s2}")
f = A.send_msg(b["channelId"], "note to self")
check(f["type"] == "MSG_ACK", f"send to a DM with oneself: {f.get('code')}")
s, _ = http("PUT", f"/v1/me/blocks/{alice}", token=TA)
check(s == 400, f"blocking oneself: {s}")

# blocked user in a DM: react and edit refused blocked
s, dm = http("PUT", f"/v1/me/direct/{bob}", token=TA)
B = Session(TB)
mb = B.send_msg(dm["channelId"], "before block")
ma = A.send_msg(dm["channelId"], "alice's")
s, _ = http("PUT", f"/v1/me/blocks/{bob}", token=TA)
for fr, name in (({"type": "MSG_REACT", "messageId": ma["messageId"], "emoji": "👍", "op": "add"}, "react"),
                 ({"type": "MSG_EDIT", "messageId": mb["messageId"], "body": "edited after block"}, "edit"),
                 ({"type": "MSG_DELETE", "messageId": mb["messageId"]}, "delete own")):
    k = uuid.uuid4().hex
    B.send({**fr, "clientMsgId": k})
    f = B.answer(k)
    print(f"   blocked user's {name} in the DM: {f['type']} {f.get('code')} {f.get('reason')}")
    if name != "delete own":
        check(f["type"] == "ERROR" and f.get("reason") == "blocked", f"blocked user's {name} in the DM refused blocked")
s, b = http("GET", "/v1/me/blocks", token=TA)
check(s == 200 and b.get("blocks") == [bob], f"blocks list: {b}")
print("\nFINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
