"""kill -9 chatd in the middle of a pipelined burst of deletes and edits (SQLite: the FTS5
separator repair now runs in each deleting transaction, and once at start), then restart and
compare, for every message, what history says with what search finds:
- a delete that was ACKed: the message is deleted in history and its text never found;
- an edit that was ACKed: history shows the new text; search finds the new word, not the old;
- an unanswered frame: either outcome, but history and search must agree (nothing half-done);
- every message neither deleted nor edited is found by its word;
- the channel's seqs stay gapless and every ACKed entry is there once.

usage: python3 crash_delete11.py sqlite|pg PORT [rounds]   (starts and kills its own server
with tools/breaker11/serve.sh; data /tmp/breaker11/data-PORT, database breaker11_PORT)
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import uuid

store, port = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import FINDINGS, Session, channel, check, http, token, uid  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/tmp/breaker11/data-{port}"
DB = f"breaker11_{port}"
shutil.rmtree(DATA, ignore_errors=True)
if store == "pg":
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"])


def start():
    out = subprocess.run(["bash", f"{HERE}/serve.sh", store, port, "CHATD_RATE_LIMIT_PER_SEC=0",
                          "CHATD_USER_RATE_LIMIT_PER_SEC=0"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0])


def newword(w):
    return "x" + w[1:-1] + "y"


def found(tok, c, term):
    s, b = http("GET", f"/v1/me/search?channelId={c}&limit=100&q={urllib.parse.quote(term)}", tok)
    assert s == 200, (s, b)
    return [r["messageId"] for r in b["results"]]


pid = start()
U = uid("u")
C = uid("del")
channel(C, [U])
tok = token(U)
run = uuid.uuid4().hex[:6]
acked_entries = {}  # cmid -> ack
for rnd in range(rounds):
    s = Session(tok)
    # 240 messages, each with a unique word
    words = {}
    frames = []
    for i in range(240):
        w = f"w{run}r{rnd}i{i:04d}z"
        cm = f"m-{rnd}-{i}-{run}"
        frames.append((cm, w))
        s.send({"type": "MSG_SEND", "channelId": C, "clientMsgId": cm, "body": f"text {w} end"})
    for cm, w in frames:
        a = s.answer(cm, timeout=60)
        assert a["type"] == "MSG_ACK", a
        acked_entries[cm] = a
        words[a["messageId"]] = w
    ids = list(words)
    random.shuffle(ids)
    dels, edits = ids[:120], ids[120:180]
    ops = {}
    for mid in dels:
        cm = f"d-{mid}"
        ops[cm] = ("delete", mid)
    for mid in edits:
        cm = f"e-{mid}"
        ops[cm] = ("edit", mid)
    order = list(ops)
    random.shuffle(order)
    for cm in order:
        kind, mid = ops[cm]
        if kind == "delete":
            s.send({"type": "MSG_DELETE", "messageId": mid, "clientMsgId": cm})
        else:
            s.send({"type": "MSG_EDIT", "messageId": mid, "clientMsgId": cm, "body": f"new {newword(words[mid])} end"})
    answered = {}
    kill_after = random.randint(30, 110)
    try:
        while len(answered) < kill_after:
            f = s.next(lambda f: f["type"] in ("MSG_ACK", "ERROR") and f.get("clientMsgId") in ops, timeout=30)
            answered[f["clientMsgId"]] = f
    except TimeoutError:
        pass
    os.kill(pid, signal.SIGKILL)
    t0 = time.time()
    try:
        s.ws.socket.close()  # no close handshake with a dead server
    except OSError:
        pass
    time.sleep(0.3)
    pid = start()
    print(f"round {rnd}: {len(answered)} of {len(ops)} answered at the kill; restart {time.time() - t0:.1f}s")
    errs = [f for f in answered.values() if f["type"] == "ERROR"]
    check(not errs, f"round {rnd}: no ERROR among the answers: {errs[:2]}")
    for cm, a in answered.items():
        if a["type"] == "MSG_ACK":
            acked_entries[cm] = a
    # history
    h = Session(tok)
    msgs, after = [], 0
    while True:
        b = h.sync(C, after, limit=500)
        msgs.extend(b["messages"])
        if not b["hasMore"]:
            break
        after = b["messages"][-1]["seq"]
    seqs = [m["seq"] for m in msgs]
    check(seqs == list(range(1, len(seqs) + 1)), f"round {rnd}: seqs gapless 1..{len(seqs)}")
    by_seq = {m["seq"]: m for m in msgs}
    bad_ack = [cm for cm, a in acked_entries.items() if by_seq.get(a["seq"], {}).get("messageId") != a["messageId"]]
    check(not bad_ack, f"round {rnd}: every ACKed entry at its seq with its id ({len(acked_entries)}): {bad_ack[:3]}")
    by_id = {m["messageId"]: m for m in msgs if m.get("kind", "message") == "message"}
    disagree, lost_ack = [], []
    for mid, w in words.items():
        m = by_id[mid]
        old = found(tok, C, w)
        old_any = mid in old
        new = mid in found(tok, C, newword(w))
        deleted = bool(m.get("deleted"))
        edited_now = m.get("body", "").startswith("new ")
        cm_d, cm_e = f"d-{mid}", f"e-{mid}"
        if cm_d in answered and answered[cm_d]["type"] == "MSG_ACK" and not deleted:
            lost_ack.append(("delete", mid))
        if cm_e in answered and answered[cm_e]["type"] == "MSG_ACK" and not edited_now:
            lost_ack.append(("edit", mid))
        if deleted and (old_any or new):
            disagree.append(("deleted but found", mid, w))
        elif edited_now and ((mid in old) or not new):
            disagree.append(("edited, search: old", mid in old, "new", new, w))
        elif not deleted and not edited_now and (not old_any or new):
            disagree.append(("plain, not found", mid, w))
    check(not lost_ack, f"round {rnd}: every ACKed delete/edit in history: {lost_ack[:4]}")
    check(not disagree, f"round {rnd}: search agrees with history for all 240: {len(disagree)} disagree {disagree[:4]}")
    h.close()
os.kill(pid, signal.SIGTERM)
print("FINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
