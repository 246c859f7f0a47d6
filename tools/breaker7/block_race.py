"""A block (§17) against a stream of sends into the direct channel: "a block refuses the blocked
user's sends into an existing direct channel with the blocker". Once PUT /v1/me/blocks/{id} has
answered 204, no later-committed message of the blocked user may be stored. Measures how many
are stored after the 204 (seq above the channel's lastSeq read after the 204) and how long after.
usage: block_race.py [ROUNDS]"""
import json
import sys
import threading
import time
import uuid

from lib import Session, check, http, token, uid, FINDINGS

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
O, X = uid("blocker"), uid("blocked")
to, tx_ = token(O), token(X)
s, dm = http("PUT", f"/v1/me/direct/{X}", token=to)
d = dm["channelId"]
x = Session(tx_)
total, worst_ms = 0, 0
for rnd in range(rounds):
    acks, stop = [], threading.Event()

    def stream():
        while not stop.is_set():
            keys = []
            for i in range(20):
                k = uuid.uuid4().hex
                keys.append(k)
                x.send({"type": "MSG_SEND", "channelId": d, "clientMsgId": k, "body": f"s{i}"})
            for _ in keys:
                acks.append((x.next(lambda f: f["type"] in ("MSG_ACK", "ERROR") and f.get("clientMsgId") in keys, timeout=20), time.time()))
    t = threading.Thread(target=stream)
    t.start()
    time.sleep(0.3)
    s, _ = http("PUT", f"/v1/me/blocks/{X}", token=to)
    answered = time.time()
    s2, page = http("GET", f"/v1/channels/{d}/messages?latest=true&limit=1", token=to)
    at_read = page["messages"][-1]["seq"] if page["messages"] else 0
    time.sleep(0.5)
    stop.set()
    t.join()
    # a read may lag the commits a little (guarantee 4 allows it): count only entries whose ts is
    # later than the block's answer
    late = [(f, when) for f, when in acks if f["type"] == "MSG_ACK" and f["seq"] > at_read and f["ts"] > int(answered * 1000)]
    if late:
        worst_ms = max(worst_ms, max(f["ts"] for f, _ in late) - int(answered * 1000))
    total += len(late)
    refused = [f for f, _ in acks if f["type"] == "ERROR"]
    print(f"   round {rnd}: {len(late)} stored after the block's 204 (+read); refusals: {set((f['code'], f.get('reason')) for f in refused)}", flush=True)
    http("DELETE", f"/v1/me/blocks/{X}", token=to)
    time.sleep(0.2)
check(total == 0, f"messages of the blocked user stored after the block answered 204: {total} (latest {worst_ms} ms after)")
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
