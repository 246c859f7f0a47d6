"""§17: retryAfterMs is exact: a send retryAfterMs later is stored (slow mode, and a mute that
ends). 10 rounds each.  python3 retry_after.py   (CHATD_URL as in lib.py)"""
import time

from lib import FINDINGS, Session, channel, check, http, token, uid

alice, owner = uid("alice"), uid("owner")
cid = uid("ra")
channel(cid, [alice], owners=[owner])
A = Session(token(alice))
http("PATCH", f"/v1/channels/{cid}", body={"slowModeMs": 1500})
late = []
for i in range(10):
    assert A.send_msg(cid, f"first {i}")["type"] == "MSG_ACK"
    f = A.send_msg(cid, f"second {i}")
    assert f["type"] == "ERROR" and f.get("reason") == "slow_mode", f
    time.sleep(f["retryAfterMs"] / 1000)
    g = A.send_msg(cid, f"third {i}")
    if g["type"] != "MSG_ACK":
        late.append((f["retryAfterMs"], g.get("retryAfterMs")))
        time.sleep(g.get("retryAfterMs", 0) / 1000 + 0.01)
    else:
        time.sleep(1.6)
check(not late, f"slow mode: a send retryAfterMs later is stored: {len(late)} of 10 refused again {late[:3]}")
http("PATCH", f"/v1/channels/{cid}", body={"slowModeMs": 0})
late = []
for i in range(10):
    until = int(time.time() * 1000) + 700
    http("PUT", f"/v1/channels/{cid}/members/{alice}", body={"mutedUntil": until})
    f = A.send_msg(cid, f"muted {i}")
    if f["type"] != "ERROR":
        continue
    time.sleep(f["retryAfterMs"] / 1000)
    g = A.send_msg(cid, f"unmuted {i}")
    if g["type"] != "MSG_ACK":
        late.append((f["retryAfterMs"], g.get("retryAfterMs")))
check(not late, f"mute: a send retryAfterMs later is stored: {len(late)} of 10 refused again {late[:3]}")
print("FINDINGS:", FINDINGS)
