"""A session opening while its user is erased (the tenth run's fix: a session re-checks the
erasure watermark once registered). After DELETE /v1/users/U answered 204, no session of a
token issued before may stay open (§19 "Their live sessions close with 1008"): each round
opens a session and erases its user at the same moment (a random 0-40 ms apart, either first).

usage: CHATD_URL=http://127.0.0.1:PORT python3 erase_connect11.py [rounds]
"""
import random
import sys
import threading
import time

from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from lib import WS, channel, check, http, token, uid, FINDINGS

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
stayed, outcomes = [], {}
for r in range(rounds):
    U, C = uid("u"), uid("c")
    channel(C, [U])
    tok = token(U)
    time.sleep(1.05)  # the token's iat is a whole second before the erasure's watermark
    res = {}

    def opener():
        try:
            ws = connect(WS, additional_headers={"Authorization": f"Bearer {tok}"}, open_timeout=10)
            res["ws"] = ws
            res["hello"] = ws.recv(timeout=5)
        except InvalidStatus as e:
            res["status"] = e.response.status_code
        except ConnectionClosed as e:
            res["closed"] = e.rcvd.code if e.rcvd else None
        except Exception as e:  # noqa: BLE001
            res["error"] = repr(e)

    def eraser():
        s, _ = http("DELETE", f"/v1/users/{U}")
        res["erase"] = s
        res["erased_at"] = time.time()

    d = random.uniform(0, 0.04)
    first, second = (opener, eraser) if random.random() < 0.5 else (eraser, opener)
    t1 = threading.Thread(target=first)
    t1.start()
    time.sleep(d)
    t2 = threading.Thread(target=second)
    t2.start()
    t1.join()
    t2.join()
    ws = res.get("ws")
    outcome = "refused" if "status" in res else "closed-early" if "closed" in res else "error" if "error" in res else "open"
    if ws is not None:
        code = None
        try:
            end = time.time() + 3
            while time.time() < end:
                ws.recv(timeout=max(0.05, end - time.time()))
        except TimeoutError:
            code = "still open"
        except ConnectionClosed as e:
            code = e.rcvd.code if e.rcvd else "closed"
        outcome = f"opened, then {code}"
        if code == "still open":
            stayed.append((r, first.__name__, round(d * 1000)))
        ws.close()
    outcomes[outcome] = outcomes.get(outcome, 0) + 1
    if res.get("erase") != 204:
        print("   erase answered", res.get("erase"))
print("   outcomes:", outcomes)
check(not stayed, f"no session stays open 3 s after its user's erasure: {len(stayed)} of {rounds} did {stayed[:5]}")
print("FINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
