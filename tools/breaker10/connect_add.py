"""A session opening on node B while the admin adds its user to a channel through node A, at
the same instant (no outage), N rounds: afterwards the session must know the channel (in its
HELLO or by CHANNEL_ADDED) and get the channel's next message live. Also the removal twin:
connect while being removed; the session must not list it or must get CHANNEL_REMOVED.

  CHATD_URL=http://NODE_A CHATD_URL2=http://NODE_B python3 connect_add.py [rounds]
"""
import os
import sys
import threading
import time

from lib import FINDINGS, Session, channel, check, http, token, uid
import chatd_lib

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
B_WS = os.environ["CHATD_URL2"].replace("http://", "ws://") + "/v1/ws"
bad_add, bad_rm = [], []
for rnd in range(ROUNDS):
    X, Y = uid("cx"), uid("cy")
    D, E = uid("cD"), uid("cE")
    channel(D, [Y])
    channel(E, [X, Y])
    tx, ty = token(X), token(Y)
    chatd_lib.WS = chatd_lib.URL.replace("http://", "ws://") + "/v1/ws"
    sy = Session(ty)
    box = {}
    bar = threading.Barrier(2)

    def connect():
        bar.wait()
        chatd_lib.WS = B_WS
        box["s"] = Session(tx)

    def change():
        bar.wait()
        time.sleep((rnd % 10) * 0.002)
        http("PUT", f"/v1/channels/{D}/members/{X}")
        http("DELETE", f"/v1/channels/{E}/members/{X}")

    ts = [threading.Thread(target=connect), threading.Thread(target=change)]
    [t.start() for t in ts]; [t.join() for t in ts]
    sx = box["s"]
    time.sleep(1)
    r = sy.send_msg(D, "to D")
    rE = sy.send_msg(E, "to E")
    try:
        sx.next(lambda f: f.get("messageId") == r["messageId"], timeout=5)
        got = True
    except TimeoutError:
        got = False
    knows_d = any(c["channelId"] == D for c in sx.hello["channels"]) or any(
        f["type"] == "CHANNEL_ADDED" and f["channel"]["channelId"] == D for f in sx.frames)
    if not (got and knows_d):
        bad_add.append((rnd, got, knows_d))
    in_hello_e = any(c["channelId"] == E for c in sx.hello["channels"])
    removed_e = any(f["type"] == "CHANNEL_REMOVED" and f["channelId"] == E for f in sx.frames)
    leak = any(f.get("messageId") == rE["messageId"] for f in sx.frames)
    if (in_hello_e and not removed_e) or leak:
        bad_rm.append((rnd, in_hello_e, removed_e, leak))
    sx.close(); sy.close()
check(not bad_add, f"connect on B racing an add on A: {len(bad_add)} of {ROUNDS} sessions never learned the channel or missed its message {bad_add[:4]}")
check(not bad_rm, f"connect on B racing a removal on A: {len(bad_rm)} of {ROUNDS} sessions kept the channel {bad_rm[:4]}")
print("FINDINGS:", FINDINGS)
