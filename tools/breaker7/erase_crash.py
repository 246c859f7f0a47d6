"""kill -9 chatd in the middle of an erasure (§19) and start it again: the erasure must resume,
the user's old tokens stay refused, its export is refused 409 while pending, and at the end
nothing of the user is left. usage: erase_crash.py sqlite|pg PORT [SEED]  (starts its own server;
the rate limits off through the environment)"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

store, port = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import Session, channel, check, http, token, uid, FINDINGS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def start():
    out = subprocess.run(["bash", f"{HERE}/serve.sh", store, port], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0])


pid = start()
E, F = uid("erased"), uid("friend")
ch = uid("c")
channel(ch, [E, F])
te = token(E)
e = Session(te)
for i in range(0, N, 500):
    for j in range(i, min(N, i + 500)):
        e.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": f"k{j}", "body": f"erase me {j}"})
    for _ in range(i, min(N, i + 500)):
        e.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=120)
e.close()
threading.Thread(target=lambda: http("DELETE", f"/v1/users/{E}", timeout=60), daemon=True).start()
time.sleep(2.5)
os.kill(pid, signal.SIGKILL)
time.sleep(0.5)
pid = start()
s, _ = http("GET", "/v1/me/channels", token=te)
check(s == 401, f"old token right after the restart: {s}")
s, body = http("GET", f"/v1/users/{E}/export")
print("   export while the erasure is pending:", s, str(body)[:80])
t0 = time.time()
s, _ = http("DELETE", f"/v1/users/{E}")
while s == 202:
    s, _ = http("DELETE", f"/v1/users/{E}")
check(s == 204, f"erasure resumed and finished: {s} after {time.time() - t0:.1f}s more")
after, left = 0, 0
while True:
    s, page = http("GET", f"/v1/channels/{ch}/messages?afterSeq={after}&limit=500")
    left += sum(1 for m in page["messages"] if m.get("kind") == "message" and not m.get("deleted"))
    seqs = [m["seq"] for m in page["messages"]]
    check(seqs == list(range(after + 1, after + 1 + len(seqs))), "gapless page") if seqs != list(range(after + 1, after + 1 + len(seqs))) else None
    if not page["hasMore"]:
        break
    after = page["messages"][-1]["seq"]
check(left == 0, f"messages of E not deleted after the resumed erasure: {left}")
s, page = http("GET", f"/v1/channels/{ch}/members")
check(E not in [m["userId"] for m in page["members"]], "E is no member")
os.kill(pid, signal.SIGTERM)
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
