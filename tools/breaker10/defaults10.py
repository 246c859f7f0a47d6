"""§3 "Defaults never get in the way of ordinary use": on a server with default settings, one
connection pipelines 1,000 sends (all ACKed, none rate_limited), then 20 bad frames in a row
and a good one (still open, ACKed); the same 1,000 as 10 channels x 100.

  serve.sh sqlite 19190 ; CHATD_URL=http://127.0.0.1:19190 python3 defaults10.py
"""
import time
import uuid

from lib import FINDINGS, Session, channel, check, token, uid

A = uid("df")
chans = [uid("dfc") for _ in range(10)]
for c in chans:
    channel(c, [A])
s = Session(token(A))
for label, targets in [("one channel", [chans[0]] * 1000), ("ten channels", [chans[i % 10] for i in range(1000)])]:
    ks = [uuid.uuid4().hex for _ in targets]
    t0 = time.time()
    for k, c in zip(ks, targets):
        s.send({"type": "MSG_SEND", "channelId": c, "clientMsgId": k, "body": "x" * 200})
    res = [s.answer(k, timeout=60) for k in ks]
    codes = {}
    for r in res:
        key = r["type"] if r["type"] == "MSG_ACK" else r["code"]
        codes[key] = codes.get(key, 0) + 1
    check(codes.get("MSG_ACK") == 1000, f"1,000 pipelined sends ({label}), default settings: {codes} in {time.time() - t0:.1f} s")
for i in range(20):
    s.send("not json")
for i in range(20):
    s.next(lambda f: f["type"] == "ERROR", timeout=5)
r = s.send_msg(chans[0], "after 20 bad frames")
check(r["type"] == "MSG_ACK", f"a send after 20 bad frames in a row: {r['type']} {r.get('code')}")
print("FINDINGS:", FINDINGS)
