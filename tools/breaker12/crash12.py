"""kill -9 chatd while a WebSocket client pipelines MSG_SEND (a window of 30 in flight) and a
backend posts through `POST /v1/channels/{c}/messages`, both into one channel, each retrying
by clientMsgId after the restart: every key that was answered (ACK / 201) before the kill is
stored exactly once with the ids it was answered with; every key sent but unanswered, retried
in the order first sent, ends stored exactly once; seqs are gapless; the WebSocket client's keys
hold increasing seqs in the order it first sent them (one connection, one channel, §6.4, also
across the restart since the unanswered ones are retried in order after the answered ones);
a retry of an answered key gets its original ids with duplicate true / 200.

usage: crash12.py sqlite|pg PORT [rounds]   (starts and kills its own server with serve.sh;
data dir /var/tmp/breaker12-run/data-PORT, removed first; PostgreSQL database breaker12_PORT,
dropped first)
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

store, port = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import FINDINGS, Session, channel, check, http, token, uid  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/var/tmp/breaker12-run/data-{port}"
DB = f"breaker12_{port}"
shutil.rmtree(DATA, ignore_errors=True)
if store == "pg":
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"], check=True)


def start():
    out = subprocess.run(["bash", f"{HERE}/serve.sh", store, port, "CHATD_RATE_LIMIT_PER_SEC=0",
                          "CHATD_USER_RATE_LIMIT_PER_SEC=0"], capture_output=True, text=True,
                         env=dict(os.environ, B12_DB=DB))
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


pid = start()
user, backend_user = uid("w"), uid("h")
ch = uid("crash")
channel(ch, [user, backend_user])
tok = token(user, ttl=36000)

ws_order = []          # keys in the order first sent on the WebSocket
ws_answer = {}         # key -> (messageId, seq) from an ACK
http_order, http_answer = [], {}
body_of = {}

for rnd in range(rounds):
    stop = threading.Event()

    def backend():
        while not stop.is_set():
            k = f"h-{rnd}-{uuid.uuid4().hex[:10]}"
            body_of[k] = f"http {k}"
            http_order.append(k)
            try:
                st, b = http("POST", f"/v1/channels/{ch}/messages",
                             body={"senderId": backend_user, "clientMsgId": k, "body": body_of[k]}, timeout=5)
            except Exception:
                return
            if st in (200, 201):
                http_answer[k] = (b["messageId"], b["seq"])
            else:
                return

    s = Session(tok)
    t = threading.Thread(target=backend)
    t.start()
    kill_at = time.time() + random.uniform(1.0, 3.0)
    inflight = []
    try:
        while time.time() < kill_at + 5:
            while len(inflight) < 30:
                k = f"w-{rnd}-{uuid.uuid4().hex[:10]}"
                body_of[k] = f"ws {k}"
                ws_order.append(k)
                s.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": k, "body": body_of[k]})
                inflight.append(k)
            if pid and time.time() >= kill_at:
                os.kill(pid, signal.SIGKILL)
                pid = None
            f = s.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=5)
            if f["type"] == "MSG_ACK":
                ws_answer[f["clientMsgId"]] = (f["messageId"], f["seq"])
                inflight.remove(f["clientMsgId"])
            else:
                print("   ERROR before the kill:", f)
    except Exception as e:  # the kill
        pass
    stop.set()
    t.join()
    s.close()
    if pid:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.3)
    t0 = time.time()
    pid = start()
    print(f"round {rnd}: restarted in {time.time() - t0:.1f} s; ws answered {len(ws_answer)} of {len(ws_order)}, "
          f"http answered {len(http_answer)} of {len(http_order)}")
    # retry every WebSocket key not answered, in the order first sent, pipelined
    s = Session(tok)
    todo = [k for k in ws_order if k not in ws_answer]
    for k in todo:
        s.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": k, "body": body_of[k]})
    conflicts = 0
    for k in todo:
        f = s.answer(k, timeout=30)
        if f["type"] == "MSG_ACK":
            ws_answer[k] = (f["messageId"], f["seq"])
        else:
            conflicts += 1
            print("   retry refused:", f)
    for k in [k for k in http_order if k not in http_answer]:
        st, b = http("POST", f"/v1/channels/{ch}/messages",
                     body={"senderId": backend_user, "clientMsgId": k, "body": body_of[k]})
        if st in (200, 201):
            http_answer[k] = (b["messageId"], b["seq"])
        else:
            conflicts += 1
            print("   http retry refused:", st, b)
    check(conflicts == 0, f"round {rnd}: every unanswered key retried is stored ({conflicts} refused)")
    # retries of answered keys: original ids
    bad = 0
    sample = random.sample(sorted(ws_answer), min(40, len(ws_answer)))
    for k in sample:
        f = s.send_msg(ch, body_of[k], cmid=k)
        if not (f["type"] == "MSG_ACK" and f["duplicate"] and (f["messageId"], f["seq"]) == ws_answer[k]):
            bad += 1
            print("   retry of an answered key:", f, ws_answer[k])
    for k in random.sample(sorted(http_answer), min(20, len(http_answer))):
        st, b = http("POST", f"/v1/channels/{ch}/messages",
                     body={"senderId": backend_user, "clientMsgId": k, "body": body_of[k]})
        if not (st == 200 and b["duplicate"] and (b["messageId"], b["seq"]) == http_answer[k]):
            bad += 1
            print("   http retry of an answered key:", st, b, http_answer[k])
    check(bad == 0, f"round {rnd}: retries of answered keys get the original ids, duplicate")
    s.close()

# the log
msgs, after = [], 0
while True:
    st, b = http("GET", f"/v1/channels/{ch}/messages?afterSeq={after}&limit=500")
    assert st == 200, b
    msgs += b["messages"]
    if not b["hasMore"]:
        break
    after = msgs[-1]["seq"]
seqs = [m["seq"] for m in msgs]
check(seqs == list(range(1, len(msgs) + 1)), f"seqs gapless 1..{len(msgs)}")
by_key, by_id = {}, {}
for m in msgs:
    by_id[m["messageId"]] = m
    if m.get("clientMsgId") is not None:   # entries made through the HTTP route carry none (§13)
        by_key.setdefault(m["clientMsgId"], []).append(m)
twice = [k for k, v in by_key.items() if len(v) > 1]
check(not twice, f"no key stored twice ({len(twice)})")
wrong = [k for k, (mid, seq) in ws_answer.items()
         if k not in by_key or by_key[k][0]["messageId"] != mid or by_key[k][0]["seq"] != seq
         or by_key[k][0]["body"] != body_of[k]]
wrong += [k for k, (mid, seq) in http_answer.items()
          if mid not in by_id or by_id[mid]["seq"] != seq or by_id[mid]["body"] != body_of[k]]
answered = {**ws_answer, **http_answer}
check(not wrong, f"every answered key ({len(answered)}) stored with its ids and body ({len(wrong)} wrong)")
http_ids = [mid for mid, _ in http_answer.values()]
check(len(set(http_ids)) == len(http_ids), "no two backend keys answered with one message")
ws_seqs = [ws_answer[k][1] for k in ws_order]
check(ws_seqs == sorted(ws_seqs), "the WebSocket client's keys hold increasing seqs in the order first sent")
check(len(msgs) == len(answered), f"nothing stored but the keys sent ({len(msgs)} stored, {len(answered)} keys)")
os.kill(pid, signal.SIGKILL)
print(f"{len(msgs)} entries; {len(FINDINGS)} finding(s)")
