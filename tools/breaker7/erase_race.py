"""A user being erased keeps acting while the erasure runs (§19): with a token minted during the
erasure (the app signs the user in again) it joins a public channel and sends; an owner adds it
to a channel. After the erasure's 204 nothing the user wrote may remain, and its memberships must
be gone. Server started with the rate limits off (CHATD_RATE_LIMIT_PER_SEC=0
CHATD_USER_RATE_LIMIT_PER_SEC=0) so the seeding is quick.

usage: erase_race.py [SEED_MESSAGES]
"""
import json
import sys
import threading
import time
import uuid

from lib import RUN, Session, channel, check, http, token, uid, FINDINGS

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
MARK = f"Racemark{RUN}"
E, O = uid("erased"), uid("owner")
big, pub, own = uid("big"), uid("pub"), uid("own")
channel(big, [E, O])
channel(pub, [O], visibility="public")
channel(own, [], owners=[O])
te, to = token(E), token(O)
e = Session(te)
for i in range(0, N, 500):
    ks = []
    for j in range(i, min(N, i + 500)):
        k = f"seed-{j}"
        ks.append(k)
        e.send({"type": "MSG_SEND", "channelId": big, "clientMsgId": k, "body": f"seed {j}"})
    for _ in ks:
        e.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=60)
e.close()
print(f"seeded {N} messages", flush=True)

done = threading.Event()
answer = {}


def erase():
    t0 = time.time()
    s, _ = http("DELETE", f"/v1/users/{E}")
    while s == 202:
        s, _ = http("DELETE", f"/v1/users/{E}")
    answer["status"], answer["secs"] = s, time.time() - t0
    done.set()


t = threading.Thread(target=erase)
t.start()
time.sleep(1.2)  # the erasure has begun (its watermark stored); tokens minted now are newer
acts = {"sent": 0, "joined": None, "added": None, "posted": 0}
try:
    t2 = token(E)
    s, _ = http("PUT", f"/v1/me/channels/{pub}", token=t2)
    acts["joined"] = s
    s, _ = http("PUT", f"/v1/channels/{own}/members/{E}", token=to)
    acts["added"] = s
    e2 = Session(t2)
    print("   E's HELLO during the erasure lists", [c["channelId"] for c in e2.hello["channels"]], flush=True)
    i = 0
    while not done.is_set():
        # join again (idempotent) and be added again, so a membership ended by the erasure comes back
        http("PUT", f"/v1/me/channels/{pub}", token=t2)
        http("PUT", f"/v1/channels/{own}/members/{E}", token=to)
        r = e2.send_msg(pub, f"{MARK} sent during erasure {i}")
        if r["type"] == "MSG_ACK":
            acts["sent"] += 1
        i += 1
        s, _ = http("POST", f"/v1/channels/{own}/messages",
                    body={"senderId": E, "clientMsgId": uuid.uuid4().hex, "body": f"{MARK} backend post {i}"})
        if s == 201:
            acts["posted"] += 1
        time.sleep(0.05)
except Exception as ex:  # noqa: BLE001
    print("   E's session ended:", repr(ex)[:120])
t.join()
print("   during the erasure:", acts, "erasure answer:", answer, flush=True)
time.sleep(1)
for c in (pub, own, big):
    s, page = http("GET", f"/v1/channels/{c}/members?limit=500")
    ids = [m["userId"] for m in page.get("members", [])]
    check(E not in ids, f"{c}: E is no member after the erasure ({ids})")
left = 0
for c, what in ((pub, "E's own session (token minted during the erasure)"), (own, "admin backend posts as E")):
    after, n = 0, 0
    while True:
        s, page = http("GET", f"/v1/channels/{c}/messages?afterSeq={after}&limit=500")
        n += sum(1 for m in page["messages"] if MARK in m.get("body", ""))
        if not page["hasMore"]:
            break
        after = page["messages"][-1]["seq"]
    print(f"   {what}: {n} messages readable after the 204")
    left += n
s, _ = http("GET", "/v1/me/channels", token=t2)
print("   the token minted during the erasure, after the 204:", s)
try:
    r = e2.send_msg(pub, f"{MARK} after the 204")
    print("   E's session still open after the 204, a send got:", r["type"], r.get("seq"), r.get("code"))
    while True:
        e2.next(timeout=3)
except Exception as ex:  # noqa: BLE001
    print("   E's session after the 204:", repr(ex)[:100])
check(left == 0, f"text E wrote while being erased is still readable after the 204: {left} messages")
s, exp = http("GET", f"/v1/users/{E}/export")
check(MARK not in str(exp), f"export of E after erasure holds no text ({str(exp).count(MARK)} hits)")
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
