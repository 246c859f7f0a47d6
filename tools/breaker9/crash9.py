"""kill -9 chatd while four users pipeline sends (plain, replies, thread replies, mentions) and
delete some of their own messages right after the ACK; after each restart: every ACKed entry
stored exactly once with its ids, seqs gapless, retries answered duplicate with the original
ids; and no deleted text left: on SQLite in chatd.db / -wal / -shm (grep of the files) and as
a term of the FTS5 index (fts5vocab on a copy), on PostgreSQL in any table's live rows
(pg_dump).

usage: crash9.py sqlite|pg PORT [rounds]   (starts and kills its own server via serve.sh;
data dir /tmp/breaker9/data-PORT, removed first; PostgreSQL database breaker9_PORT, dropped first)
"""
import glob
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid

import b9util

store, port = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import FINDINGS, Session, channel, check, http, token, uid  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/tmp/breaker9/data-{port}"
DB = f"breaker9_{port}"
shutil.rmtree(DATA, ignore_errors=True)
if store == "pg":
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"], check=True)
RARE = "ghijlmnoqrstuvwxyz"  # no letter of "keep-", hex digits or "re"/"th" bodies


def marker():
    return "".join(random.choice(RARE) for _ in range(24))


def start():
    env = dict(os.environ, B9_DB=DB)
    out = subprocess.run(["bash", f"{HERE}/serve.sh", store, port, "CHATD_RATE_LIMIT_PER_SEC=0",
                          "CHATD_USER_RATE_LIMIT_PER_SEC=0"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[0])


pid = start()
users = [uid(f"c{i}") for i in range(4)]
chans = [uid("crash-a"), uid("crash-b")]
for c in chans:
    channel(c, users)
toks = {u: token(u, ttl=36000) for u in users}

acked = {}        # clientMsgId -> ack (entries: messages and deletes)
sent_frames = {}  # clientMsgId -> frame
deleted = []      # markers whose delete was ACKed
lock = threading.Lock()


def sender(user, stop):
    try:
        s = Session(toks[user])
    except Exception:
        return
    roots = {}
    try:
        while not stop.is_set():
            batch = []
            for i in range(20):
                c = random.choice(chans)
                k = uuid.uuid4().hex
                kind = random.random()
                if kind < 0.2:
                    body = marker()
                else:
                    body = f"keep-{uuid.uuid4().hex}"
                f = {"type": "MSG_SEND", "channelId": c, "clientMsgId": k, "body": body}
                if kind > 0.8 and c in roots:
                    f["threadId"] = roots[c]
                elif kind > 0.6 and c in roots:
                    f["replyTo"] = roots[c]
                if kind > 0.5:
                    f["mentions"] = [random.choice(users)]
                batch.append(f)
            for f in batch:
                sent_frames[f["clientMsgId"]] = f
                s.send(f)
            for f in batch:
                a = b9util.answer(s, f["clientMsgId"])
                if a["type"] != "MSG_ACK":
                    continue
                with lock:
                    acked[f["clientMsgId"]] = a
                if "threadId" not in f:
                    roots[f["channelId"]] = a["messageId"]
                if f["body"][0] in RARE:
                    k = uuid.uuid4().hex
                    d = {"type": "MSG_DELETE", "clientMsgId": k, "messageId": a["messageId"]}
                    sent_frames[k] = d
                    s.send(d)
                    da = b9util.answer(s, k)
                    if da["type"] == "MSG_ACK":
                        with lock:
                            acked[k] = da
                            deleted.append(f["body"])
                        roots.pop(f["channelId"], None) if roots.get(f["channelId"]) == a["messageId"] else None
    except Exception:
        pass
    finally:
        s.close()


def history(c):
    out, after = [], 0
    while True:
        st, b = http("GET", f"/v1/channels/{c}/messages?afterSeq={after}&limit=500")
        assert st == 200, (st, b)
        out += b["messages"]
        if not b["hasMore"]:
            return out
        after = out[-1]["seq"]


def files_holding(words):
    found = {}
    for path in glob.glob(f"{DATA}/chatd.db*"):
        data = open(path, "rb").read()
        hits = [w for w in words if w.encode() in data]
        if hits:
            found[os.path.basename(path)] = len(hits)
    return found


def fts_terms(words):
    """Trigrams of deleted markers that no live text holds, left as index terms or separators."""
    grams = {w[i:i + 3] for w in words for i in range(len(w) - 2)}
    terms, seps = b9util.leftovers(DATA, grams)
    return terms + [f"idx:{t}" for t in seps]


for rnd in range(rounds):
    stop = threading.Event()
    ths = [threading.Thread(target=sender, args=(u, stop)) for u in users]
    [t.start() for t in ths]
    time.sleep(random.uniform(2, 5))
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    stop.set()
    [t.join(timeout=30) for t in ths]
    if store == "sqlite":
        print(f"   round {rnd}: after the kill, files holding deleted markers: {files_holding(deleted)}")
    pid = start()
    with lock:
        acks = dict(acked)
    by_id = {}
    gaps, dup_ids = [], 0
    for c in chans:
        h = history(c)
        seqs = [m["seq"] for m in h]
        if seqs != list(range(1, len(seqs) + 1)):
            gaps.append(c)
        for m in h:
            if m["messageId"] in by_id:
                dup_ids += 1
            by_id[m["messageId"]] = m
    missing = [k for k, a in acks.items() if a["messageId"] not in by_id
               or by_id[a["messageId"]]["seq"] != a["seq"]]
    keys = {}
    for m in by_id.values():
        if m.get("clientMsgId"):
            keys[(m["senderId"], m["clientMsgId"])] = keys.get((m["senderId"], m["clientMsgId"]), 0) + 1
    twice = [k for k, n in keys.items() if n > 1]
    check(not missing, f"round {rnd}: ACKed entries missing or moved after kill -9: {len(missing)} of {len(acks)}")
    check(not gaps and not dup_ids and not twice, f"round {rnd}: gaps {gaps}, duplicate ids {dup_ids}, keys stored twice {twice[:3]}")
    # retries of a sample of ACKed and unanswered frames
    sample = random.sample(list(sent_frames.items()), min(200, len(sent_frames)))
    sess = {u: Session(toks[u]) for u in users}
    bad_retry = []
    for k, f in sample:
        # keys are per sender: retry ACKed ones as the sender the stored entry names
        a = acks.get(k)
        if not a:
            continue
        sender_id = by_id[a["messageId"]]["senderId"] if a["messageId"] in by_id else None
        if not sender_id:
            continue
        s = sess[sender_id]
        s.send(f)
        r = s.answer(k, timeout=20)
        if r["type"] != "MSG_ACK" or not r.get("duplicate") or r["messageId"] != a["messageId"] or r["seq"] != a["seq"]:
            bad_retry.append((k, r.get("type"), r.get("code"), r.get("duplicate")))
    [x.close() for x in sess.values()]
    check(not bad_retry, f"round {rnd}: retries of ACKed entries not answered duplicate with their ids: {bad_retry[:3]}")
    print(f"   round {rnd}: {len(acks)} ACKed, {len(by_id)} stored, {len(deleted)} deleted markers")
    time.sleep(1.5)
    if store == "sqlite":
        held = files_holding(deleted)
        check(not held, f"round {rnd}: deleted texts in the SQLite files after restart: {held}")
        terms = fts_terms(deleted)
        check(terms == [], f"round {rnd}: trigrams of deleted texts still FTS5 terms: {terms if isinstance(terms, str) else terms[:10]}")
    else:
        dump = subprocess.run(["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "-a", DB], capture_output=True, text=True).stdout
        held = [w for w in deleted if w in dump]
        check(not held, f"round {rnd}: deleted texts in PostgreSQL live rows (pg_dump): {len(held)}")

os.kill(pid, signal.SIGTERM)
print("server", pid, "stopped")
print("FINDINGS:", FINDINGS)
