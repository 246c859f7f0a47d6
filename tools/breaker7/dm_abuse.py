"""Direct channels (§13.2): "no one joins, leaves or is added, and it has no roles beyond member";
direct channels never appear in the directory. Tries every route that could change that."""
import json
import urllib.parse

from lib import Session, channel, check, http, token, uid, FINDINGS

A, B, X = uid("alice"), uid("bob"), uid("intruder")
ta, tb, tx_ = token(A), token(B), token(X)
s, dm = http("PUT", f"/v1/me/direct/{B}", token=ta)
check(s == 201 and dm["kind"] == "direct", f"DM created: {s}")
d = dm["channelId"]
s, dm2 = http("PUT", f"/v1/me/direct/{A}", token=tb)
check(s == 200 and dm2["channelId"] == d, f"the same DM from the other side: {s}")
tries = [
    ("admin adds a third member", "PUT", f"/v1/channels/{d}/members/{X}", None, None),
    ("admin makes alice owner", "PUT", f"/v1/channels/{d}/members/{A}", None, {"role": "owner"}),
    ("admin makes the DM public", "PATCH", f"/v1/channels/{d}", None, {"visibility": "public"}),
    ("admin sets postingRole", "PATCH", f"/v1/channels/{d}", None, {"postingRole": "moderator"}),
    ("admin removes bob", "DELETE", f"/v1/channels/{d}/members/{B}", None, None),
    ("admin bans bob", "DELETE", f"/v1/channels/{d}/members/{B}?ban=true", None, None),
    ("intruder joins", "PUT", f"/v1/me/channels/{d}", tx_, None),
    ("alice leaves", "DELETE", f"/v1/me/channels/{d}", ta, None),
    ("alice adds intruder", "PUT", f"/v1/channels/{d}/members/{X}", ta, None),
    ("alice mutes bob", "PUT", f"/v1/channels/{d}/members/{B}", ta, {"mutedUntil": 4102444800000}),
    ("alice renames", "PATCH", f"/v1/channels/{d}", ta, {"name": "mine"}),
    ("alice deletes the DM", "DELETE", f"/v1/channels/{d}", ta, None),
    ("POST /v1/channels with the DM's id", "POST", "/v1/channels", None, {"channelId": d, "members": [X]}),
]
for what, method, path, tok, body in tries:
    kw = {"token": tok} if tok else {}
    s, resp = http(method, path, body=body, **kw)
    print(f"   {what:38s} {s} {str(resp)[:110] if resp else ''}")
s, ch = http("GET", f"/v1/channels/{d}")
print("   the DM now:", {k: ch.get(k) for k in ("kind", "visibility", "members", "postingRole")})
check(sorted(ch["members"]) == sorted([A, B]), f"the DM's members are still the two: {ch['members']}")
check(ch["visibility"] == "private", f"the DM is still private: {ch['visibility']}")
s, dirp = http("GET", "/v1/directory?q=" + urllib.parse.quote(d), token=tx_)
check(not dirp.get("channels"), f"the DM is not in the directory: {dirp}")
s, page = http("GET", f"/v1/channels/{d}/members", token=ta)
check(all(m["role"] == "member" for m in page["members"]), f"roles in the DM: {[(m['userId'][:5], m['role']) for m in page['members']]}")
# self DM, block self
s, me = http("PUT", f"/v1/me/direct/{A}", token=ta)
print("   self DM:", s, me.get("members") if isinstance(me, dict) else me)
s, r = http("PUT", f"/v1/me/blocks/{A}", token=ta)
print("   block self:", s, r)
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
