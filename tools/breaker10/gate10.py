"""breaker10: breaker9's gate.py with the membership changes made through BOTH nodes in turn
(admin and user routes alternating between CHATD_URL and CHATD_URL2), and a final check that X's
view (the last CHANNEL_ADDED/REMOVED) matches the database's membership and that a message sent
after the churn reaches X exactly when X is a member.

A member removed and added back over and over (admin route, leave/join of a public channel,
ban/unban) while another member streams sends, one node: the removed user's session must see
CHANNEL_ADDED before any MSG_RECV/MEMBER of the channel, nothing of the channel between its
CHANNEL_REMOVED and the next CHANNEL_ADDED, MSG_RECVs only with seqs inside a membership
(above the join's afterSeq, at most the leave's), in increasing seq.

  serve.sh sqlite 18900 CHATD_RATE_LIMIT_PER_SEC=0 CHATD_USER_RATE_LIMIT_PER_SEC=0
  CHATD_URL=http://127.0.0.1:18900 python3 gate.py [rounds]
  two nodes: CHATD_URL2=http://NODE2 (X's session there; changes and Y's sends through CHATD_URL)
"""
import os
import sys
import threading
import time
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
X, Y = uid("gx"), uid("gy")
ch = uid("gate")
channel(ch, [X, Y], visibility="public")
tx, ty = token(X), token(Y)
if os.environ.get("CHATD_URL2"):  # X's session on a second node (same database, NATS)
    import chatd_lib
    chatd_lib.WS = os.environ["CHATD_URL2"].replace("http://", "ws://") + "/v1/ws"
    x = Session(tx)
    chatd_lib.WS = chatd_lib.URL.replace("http://", "ws://") + "/v1/ws"
else:
    x = Session(tx)
y = Session(ty)
stop = threading.Event()


def stream():
    i = 0
    while not stop.is_set():
        ks = [uuid.uuid4().hex for _ in range(10)]
        for k in ks:
            y.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": k, "body": f"s{i}"})
            i += 1
        for k in ks:
            try:
                y.answer(k, timeout=20)
            except Exception:
                return


t = threading.Thread(target=stream)
t.start()
import chatd_lib  # noqa: E402
URLS = [chatd_lib.URL] + ([os.environ["CHATD_URL2"]] if os.environ.get("CHATD_URL2") else [])
for rnd in range(ROUNDS):
    chatd_lib.URL = URLS[(rnd // 3) % len(URLS)]
    mode = rnd % 3
    if mode == 0:
        http("DELETE", f"/v1/channels/{ch}/members/{X}")
        http("PUT", f"/v1/channels/{ch}/members/{X}")
    elif mode == 1:
        http("DELETE", f"/v1/me/channels/{ch}", token=tx)
        http("PUT", f"/v1/me/channels/{ch}", token=tx)
    else:
        http("DELETE", f"/v1/channels/{ch}/members/{X}?ban=true")
        http("DELETE", f"/v1/channels/{ch}/bans/{X}")
        http("PUT", f"/v1/me/channels/{ch}", token=tx)
    time.sleep(0.05)
chatd_lib.URL = URLS[0]
time.sleep(1)
stop.set()
t.join()
# drain X's frames
end = time.time() + 3
while time.time() < end:
    try:
        x.next(timeout=0.5)
    except Exception:
        break

inside, last_seq, join_after, leave_after = True, 0, 0, None
viol = []
for f in x.frames:
    if f.get("channelId") != ch and f.get("channel", {}).get("channelId") != ch:
        continue
    ty_ = f["type"]
    if ty_ == "CHANNEL_ADDED":
        if inside:
            viol.append(("CHANNEL_ADDED while inside", f.get("channel", {}).get("lastSeq")))
        inside = True
    elif ty_ == "CHANNEL_REMOVED":
        if not inside:
            viol.append(("CHANNEL_REMOVED while outside", f))
        inside = False
    elif ty_ == "MEMBER" and f["userId"] == X:
        if f["op"] == "join":
            join_after = f["afterSeq"]
            leave_after = None
        elif f["op"] in ("leave", "ban"):
            leave_after = f["afterSeq"]
        if not inside and f["op"] not in ("leave", "ban"):
            viol.append(("MEMBER outside", f["op"], f["afterSeq"]))
    elif ty_ in ("MSG_RECV", "MEMBER", "RECEIPT", "TYPING"):
        if not inside:
            viol.append((f"{ty_} outside a membership", f.get("seq")))
        if ty_ == "MSG_RECV":
            if f["seq"] <= join_after or (leave_after is not None and f["seq"] > leave_after):
                viol.append(("MSG_RECV outside the membership's seqs", f["seq"], join_after, leave_after))
            if f["seq"] <= last_seq:
                viol.append(("MSG_RECV seq not increasing", f["seq"], last_seq))
            last_seq = f["seq"]
counts = {}
for f in x.frames:
    counts[f["type"]] = counts.get(f["type"], 0) + 1
print("   X frames:", counts)
check(not viol, f"channel gate: {len(viol)} violations {viol[:5]}")
st, info = http("GET", f"/v1/channels/{ch}")
member = X in info["members"]
check(member == inside, f"X's view after the churn (inside={inside}) matches the database (member={member})")
r = y.send_msg(ch, "after the churn")
try:
    x.next(lambda f: f.get("messageId") == r["messageId"], timeout=5)
    got = True
except TimeoutError:
    got = False
check(got == member, f"a message after the churn reached X: {got}, X a member: {member}")
print("FINDINGS:", FINDINGS)
