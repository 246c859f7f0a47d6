"""User erasure (§19, guarantee 14), hostile: the erased user's text must be gone from every
table, the SQLite file (and -wal), the FTS index, the attachment store; and a session of the user
that is live while the erasure runs must leave nothing behind.

usage: erase.py DATA_DIR [PGDB]   (server already running; DATA_DIR its data dir, PGDB when on
PostgreSQL). Part 2 needs a user with many messages so that the erasure takes a while.
"""
import json
import os
import subprocess
import sys
import threading
import time
import uuid

from lib import RUN, Session, channel, check, http, token, uid, FINDINGS

data_dir = sys.argv[1]
pgdb = sys.argv[2] if len(sys.argv) > 2 else None
MARK = f"Qzjxv{RUN}"          # unique text; lower-case trigram 'qzj' is also unique
E, F = uid("erased"), uid("friend")
grp, pub = uid("grp"), uid("pub")
channel(grp, [E, F])
channel(pub, [F], visibility="public")
te, tf = token(E), token(F)
s, _ = http("PUT", f"/v1/me/channels/{pub}", token=te)
check(s == 204, f"E joins the public channel: {s}")
s, dm = http("PUT", f"/v1/me/direct/{F}", token=te)
check(s in (200, 201), f"E opens a DM: {s}")
dmid = dm["channelId"]
e = Session(te)
f = Session(tf)
m1 = e.send_msg(grp, f"{MARK} group message one")
m2 = e.send_msg(pub, f"{MARK} public message", mentions=[F])
m3 = e.send_msg(dmid, f"{MARK} direct message")
cm = uuid.uuid4().hex
e.send({"type": "MSG_EDIT", "clientMsgId": cm, "messageId": m1["messageId"], "body": f"{MARK} edited text"})
e.answer(cm)
root = f.send_msg(grp, "friend root")
rep = e.send_msg(grp, f"{MARK} thread reply", threadId=root["messageId"], replyTo=root["messageId"])
quote = f.send_msg(grp, "quoting E", replyTo=m1["messageId"])
cm = uuid.uuid4().hex
e.send({"type": "MSG_REACT", "clientMsgId": cm, "messageId": root["messageId"], "emoji": "👍", "op": "add"})
e.answer(cm)
# an attachment, claimed, and one unclaimed
s, att = http("POST", f"/v1/channels/{grp}/attachments?filename={MARK}.txt", token=te,
              raw=f"{MARK} attachment bytes".encode(), headers={"Content-Type": "text/plain"})
check(s == 201, f"upload: {s} {att}")
e.send_msg(grp, f"{MARK} with file", attachments=[att["attachmentId"]])
s, att2 = http("POST", f"/v1/channels/{grp}/attachments?filename=u{MARK}.txt", token=te,
               raw=f"{MARK} unclaimed bytes".encode(), headers={"Content-Type": "text/plain"})
s, flag = http("POST", f"/v1/messages/{root['messageId']}/flags", token=te, body={"reason": "other", "note": f"{MARK} flag note"})
check(s == 201, f"E flags: {s}")
http("PUT", f"/v1/me/channels/{grp}/settings", token=te, body={"notify": "mentions"})
http("PUT", f"/v1/me/blocks/{F}", token=te)
e.close()

s, res = http("GET", f"/v1/me/search?q={MARK}", token=tf)
check(len(res["results"]) >= 4, f"before: F finds E's text ({len(res['results'])})")

t0 = time.time()
s, _ = http("DELETE", f"/v1/users/{E}")
while s == 202:
    s, _ = http("DELETE", f"/v1/users/{E}")
check(s == 204, f"erase: {s} in {time.time() - t0:.1f}s")
time.sleep(2)

s, res = http("GET", f"/v1/me/search?q={MARK}", token=tf)
check(s == 200 and not res["results"], f"after: search finds nothing ({len(res.get('results', []))})")
for c in (grp, pub, dmid):
    s, page = http("GET", f"/v1/channels/{c}/messages?afterSeq=0&limit=500")
    txt = json.dumps(page)
    check(MARK not in txt, f"history of {c} holds no text of E")
s, exp = http("GET", f"/v1/users/{E}/export")
check(MARK not in str(exp), "the export of E holds no text")
s, body = http("GET", f"/v1/attachments/{att['attachmentId']}")
check(s == 404, f"E's attachment: {s}")
s, body = http("GET", f"/v1/attachments/{att2['attachmentId']}")
check(s == 404, f"E's unclaimed attachment: {s}")
# thread participants, mentions of others etc. (ids, not text)
s, page = http("GET", f"/v1/channels/{grp}/messages?afterSeq=0&limit=500")
for m in page["messages"]:
    if m["messageId"] == root["messageId"]:
        print("   root thread summary after erasure:", m.get("thread"))

# storage: raw bytes
time.sleep(3)
hits = subprocess.run(["grep", "-rlaF", MARK, data_dir], capture_output=True, text=True).stdout.split()
check(not hits, f"the marker's bytes are gone from the data dir: {hits}")
hits = subprocess.run(["grep", "-rlaiF", MARK[:5].lower() + RUN[:3], data_dir], capture_output=True, text=True).stdout.split()
check(not hits, f"no lower-cased fragment either: {hits}")
if pgdb:
    dump = subprocess.run(["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "--data-only", pgdb],
                          capture_output=True, text=True).stdout
    lines = [ln[:160] for ln in dump.splitlines() if MARK in ln]
    check(not lines, f"pg_dump holds no marker: {lines[:5]}")
    users = [ln[:160] for ln in dump.splitlines() if E in ln]
    print("   rows still naming E:", len(users))
    for ln in users[:10]:
        print("     ", ln)
else:
    db = os.path.join(data_dir, "chatd.db")
    out = subprocess.run(["sqlite3", f"file:{db}?mode=ro", ".dump"], capture_output=True, text=True).stdout
    lines = [ln[:200] for ln in out.splitlines() if E in ln]
    print("   rows still naming E:", len(lines))
    for ln in lines[:12]:
        print("     ", ln)

print("FINDINGS:", json.dumps(FINDINGS, indent=1))
