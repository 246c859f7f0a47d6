"""A user erased and then back under the same id (a new token minted after the erasure): the
new user must get nothing of the old one's channels: no HELLO entry, no history, no search
result, no attachment, no DM (a new PUT /v1/me/direct makes a new channel, protocol.md §19),
no export line of the old data; and the old user's tokens stay refused.

usage: CHATD_URL=http://127.0.0.1:PORT python3 erased_again11.py
"""
import json
import time
import urllib.request

from lib import URL, Session, channel, check, http, token, uid, FINDINGS

A, E = uid("a"), uid("e")
G = uid("grp")
channel(G, [A, E], visibility="public")
ta, te_old = token(A), token(E)
s, dm = http("PUT", f"/v1/me/direct/{A}", te_old)
check(s == 201, f"E opens a DM with A: {s}")
DM = dm["channelId"]
sa, se = Session(ta), Session(te_old)
sa.send_msg(DM, "OLDDMSECRET from A to old E")
sa.send_msg(G, "OLDGRPSECRET from A in the group")
se.send_msg(DM, "from old E")
req = urllib.request.Request(f"{URL}/v1/channels/{G}/attachments?filename=a.txt", data=b"OLDFILE",
                             method="POST", headers={"Authorization": f"Bearer {ta}", "Content-Type": "text/plain"})
att = json.loads(urllib.request.urlopen(req).read())
sa.send_msg(G, "", attachments=[att["attachmentId"]])
s, _ = http("DELETE", f"/v1/users/{E}")
check(s == 204, f"erase E: {s}")
time.sleep(1.2)  # a token of the next second
te = token(E)
s, _ = http("GET", f"/v1/channels/{G}/messages?afterSeq=0", te_old)
check(s == 401, f"the old token: {s}")
ne = Session(te)
check(ne.hello["channels"] == [], f"new E's HELLO channels: {[c['channelId'] for c in ne.hello['channels']]}")
for c in (DM, G):
    s, b = http("GET", f"/v1/channels/{c}/messages?afterSeq=0", te)
    check(s == 403, f"new E reads {c} history: {s}")
    r = ne.sync(c)
    check(r["type"] == "ERROR" and r["code"] == "forbidden", f"new E SYNCs {c}: {r.get('code')}")
s, b = http("GET", "/v1/me/search?q=OLDDMSECRET", te)
s2, b2 = http("GET", "/v1/me/search?q=OLDGRPSECRET", te)
check(s == 200 and not b["results"] and s2 == 200 and not b2["results"], f"new E's search: {b} {b2}")
s, _ = http("GET", f"/v1/attachments/{att['attachmentId']}", te)
check(s == 404, f"new E gets G's attachment: {s}")
s, b = http("GET", f"/v1/channels/{G}/members", te)
check(s == 403, f"new E lists G's members: {s}")
s, b = http("PUT", f"/v1/me/direct/{A}", te)
check(s == 201 and b["channelId"] != DM, f"new E's DM with A is a new channel: {s} {b and b.get('channelId')} (old {DM})")
s, b = http("PUT", f"/v1/me/direct/{E}", ta)
check(s == 200 and b["channelId"] != DM, f"A's DM with new E is that new one: {s} {b and b.get('channelId')}")
s, b = http("PUT", f"/v1/me/channels/{G}", te)
check(s == 204, f"new E joins the public group again: {s}")
r = ne.sync(G)
bodies = [m.get("body") for m in r.get("messages", [])]
print(f"   info: after re-joining, new E's SYNC of the group: {bodies} (the group's history is the channel's)")
sa.send_msg(DM, "to the old DM after the erasure")
got = []
try:
    while True:
        f = ne.next(timeout=1)
        if f.get("channelId") == DM:
            got.append(f)
except TimeoutError:
    pass
check(not got, f"new E gets nothing of the old DM: {got[:2]}")
with urllib.request.urlopen(urllib.request.Request(f"{URL}/v1/users/{E}/export",
                                                   headers={"Authorization": "Bearer breaker11-admin-token-0123456789"})) as r:
    lines = [json.loads(x) for x in r.read().decode().splitlines() if x.strip()]
# protocol.md §20.1: "An export asked for after the erasure finished holds only what the
# erasure left (deleted messages without text)": the old DM's stubs may be there, no text
old = [x for x in lines if "from old E" in json.dumps(x) or (x["type"] != "message" and x.get("channelId") == DM)]
stubs = [x for x in lines if x["type"] == "message" and x.get("channelId") == DM]
check(not old and all(x.get("deleted") and x.get("body") == "" for x in stubs),
      f"export of new E has no text nor membership of the old one: {old[:2]} ({len(stubs)} deleted stubs of the old DM)")
print("FINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
