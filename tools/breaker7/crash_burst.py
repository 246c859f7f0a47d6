"""kill -9 chatd in the middle of a burst of sends; after restart every ACKed message must be
stored exactly once, seqs gapless, and a retry of every key must answer the original ids.

usage: crash_burst.py sqlite|pg PORT [rounds]   (starts and kills its own server via serve.sh)
"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid

store, port = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import Session, channel, check, http, token, uid, FINDINGS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def start():
    out = subprocess.run(["bash", f"{HERE}/serve.sh", store, port], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0])


pid = start()
users = [uid("u") for _ in range(4)]
chans = [uid("c") for _ in range(3)]
for c in chans:
    channel(c, users)
toks = {u: token(u) for u in users}
sent = {}      # cmid -> (user, channel, body, extra)
acked = {}     # cmid -> ack frame
lock = threading.Lock()


def sender(user, stop):
    try:
        s = Session(toks[user])
    except Exception as e:  # noqa: BLE001
        print("connect failed", e)
        return
    n = 0
    try:
        while not stop.is_set():
            batch = []
            for _ in range(20):
                c = random.choice(chans)
                cm = f"{user}-{uuid.uuid4().hex}"
                body = f"burst {n} {cm}"
                n += 1
                extra = {}
                with lock:
                    sent[cm] = (user, c, body, extra)
                s.send({"type": "MSG_SEND", "channelId": c, "clientMsgId": cm, "body": body, **extra})
                batch.append(cm)
            while batch:
                f = s.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=10)
                if f["type"] == "MSG_ACK":
                    with lock:
                        acked[f["clientMsgId"]] = f
                if f.get("clientMsgId") in batch:
                    batch.remove(f["clientMsgId"])
    except Exception:
        pass


for r in range(rounds):
    stop = threading.Event()
    ts = [threading.Thread(target=sender, args=(u, stop)) for u in users]
    for t in ts:
        t.start()
    time.sleep(random.uniform(1.0, 3.0))
    os.kill(pid, signal.SIGKILL)
    stop.set()
    for t in ts:
        t.join(timeout=15)
    print(f"round {r}: sent {len(sent)} acked {len(acked)}", flush=True)
    pid = start()

# verify history
stored = {}
for c in chans:
    after, seqs = 0, []
    while True:
        s, page = http("GET", f"/v1/channels/{c}/messages?afterSeq={after}&limit=500")
        assert s == 200, (s, page)
        for m in page["messages"]:
            seqs.append(m["seq"])
            if m.get("clientMsgId"):
                check(m["clientMsgId"] not in stored, f"key stored twice: {m['clientMsgId']}")
                stored[m["clientMsgId"]] = m
        if not page["messages"] or not page["hasMore"]:
            break
        after = page["messages"][-1]["seq"]
    check(seqs == list(range(1, len(seqs) + 1)), f"{c}: gapless seqs 1..{len(seqs)}")
lost = [k for k in acked if k not in stored]
check(not lost, f"ACKed messages missing after kill -9: {len(lost)} of {len(acked)}")
wrong = [k for k, a in acked.items() if k in stored and (stored[k]["seq"] != a["seq"] or stored[k]["messageId"] != a["messageId"])]
check(not wrong, f"ACKed ids differ from stored: {len(wrong)}")
check(all(stored[k]["body"] == sent[k][2] for k in stored if k in sent), "stored bodies are the sent ones")

# retry every key after the restart
by_user = {}
for k, (u, c, body, extra) in sent.items():
    by_user.setdefault(u, []).append(k)
dups_bad, new_stored = 0, 0
for u, keys in by_user.items():
    s = Session(toks[u])
    for i in range(0, len(keys), 100):
        chunk = keys[i:i + 100]
        for k in chunk:
            _, c, body, extra = sent[k]
            s.send({"type": "MSG_SEND", "channelId": c, "clientMsgId": k, "body": body, **extra})
        left = set(chunk)
        while left:
            f = s.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=30)
            k = f.get("clientMsgId")
            left.discard(k)
            if k in stored:
                if not (f["type"] == "MSG_ACK" and f["duplicate"] and f["seq"] == stored[k]["seq"]):
                    dups_bad += 1
                    print("bad retry answer", f)
            elif f["type"] == "MSG_ACK":
                if f["duplicate"]:
                    dups_bad += 1
                    print("duplicate for a key never stored", f)
                new_stored += 1
    s.close()
check(dups_bad == 0, f"retries after restart answered with the original ids ({new_stored} unACKed keys stored now)")
os.kill(pid, signal.SIGTERM)
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
