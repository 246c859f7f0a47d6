"""§19 erasure, forensic: user X writes marker words everywhere it can (messages, edits, thread
replies, replies quoted by W, reactions with marker emoji, a flag note, a PNG whose tEXt chunk
and filename hold a marker (claimed by a message), a text upload claimed and one never claimed,
an upload into a channel X then leaves), then the admin erases X. After the 204:
  - reads (W's history, previews, search, X's export) hold no marker;
  - no marker in the SQLite files (chatd.db, -wal, -shm: raw bytes) or PostgreSQL's live rows
    (pg_dump), except in a channel name X chose (printed, not counted: §19 does not name it);
  - no FTS5 term left (separators are known-issues' open item, printed apart);
  - no file under the attachment store holds a marker, and no storage key of X's uploads
    is left (claimed, unclaimed, or in a channel X left).

  serve.sh sqlite 19100 ; CHATD_URL=http://127.0.0.1:19100 B10_DATA=/tmp/breaker10/data-19100 python3 erase10.py
  serve.sh pg 19101 ;     CHATD_URL=http://127.0.0.1:19101 B10_DATA=/tmp/breaker10/data-19101 B10_PGDB=breaker10_19101 python3 erase10.py
"""
import glob
import io
import json
import os
import random
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid

from lib import ADMIN, FINDINGS, URL, Session, channel, check, http, token, uid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "breaker9"))

DATA = os.environ["B10_DATA"]
PGDB = os.environ.get("B10_PGDB")
RARE = "ghijlmnoqrstuvwxyz"


def marker():
    return "".join(random.choice(RARE) for _ in range(20))


M = {k: marker() for k in ["msg", "edit", "thread", "reply", "emoji", "flag", "png", "fname", "txt", "unclaimed",
                           "left", "chname", "dm", "mention", "orig"]}
X, W = uid("erx"), uid("erw")
ch, ch2 = uid("era"), uid("erb")
channel(ch, [X, W])
channel(ch2, [X, W])
tx, tw = token(X), token(W)
sx, sw = Session(tx), Session(tw)


def upload(tok, body, ctype, name=None, cid=ch):
    q = f"?filename={urllib.parse.quote(name)}" if name else ""
    return http("POST", f"/v1/channels/{cid}/attachments{q}", token=tok, raw=body, headers={"Content-Type": ctype})


def png_with_text(text):
    from PIL import Image, PngImagePlugin
    im = Image.new("RGB", (40, 30), (200, 10, 10))
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", text)
    b = io.BytesIO()
    im.save(b, "PNG", pnginfo=info)
    return b.getvalue()


r_root = sx.send_msg(ch, f"hello {M['msg']}")
r_orig = sx.send_msg(ch, f"original {M['orig']}")
k = uuid.uuid4().hex
sx.send({"type": "MSG_EDIT", "clientMsgId": k, "messageId": r_orig["messageId"], "body": f"edited {M['edit']}"})
assert sx.answer(k)["type"] == "MSG_ACK"
sx.send_msg(ch, f"in thread {M['thread']}", threadId=r_root["messageId"])
sx.send_msg(ch, f"mention {M['mention']}", mentions=[W])
rw = sw.send_msg(ch, "W quotes X", replyTo=r_root["messageId"])
k = uuid.uuid4().hex
sx.send({"type": "MSG_REACT", "clientMsgId": k, "messageId": rw["messageId"], "emoji": M["emoji"], "op": "add"})
ra = sx.answer(k)
print(f"   marker reaction: {ra['type']} {ra.get('code')}")
st, fl = http("POST", f"/v1/messages/{rw['messageId']}/flags", token=tx, body={"reason": "other", "note": f"note {M['flag']}"})
print(f"   flag by X: {st}")
s1, up_png = upload(tx, png_with_text(M["png"]), "image/png", name=f"{M['fname']}.png")
s2, up_txt = upload(tx, f"text {M['txt']}".encode(), "text/plain")
s3, up_un = upload(tx, f"never sent {M['unclaimed']}".encode(), "text/plain")
s4, up_left = upload(tx, f"left behind {M['left']}".encode(), "text/plain", cid=ch2)
print(f"   uploads: {s1} {s2} {s3} {s4}")
r_att = sx.send_msg(ch, "files", attachments=[up_png["attachmentId"], up_txt["attachmentId"]])
assert r_att["type"] == "MSG_ACK", r_att
st, _ = http("DELETE", f"/v1/me/channels/{ch2}", token=tx)  # X leaves ch2; its upload there stays unclaimed
st, dm = http("PUT", f"/v1/me/direct/{W}", token=tx)
sx.send_msg(dm["channelId"], f"dm {M['dm']}")
st, own = http("POST", "/v1/me/channels", token=tx, body={"name": f"room {M['chname']}", "members": [W]})
http("PUT", f"/v1/me/channels/{ch}/settings", token=tx, body={"notify": "mentions"})
http("PUT", f"/v1/me/blocks/{uid('someone')}", token=tx)
keys_before = set()
for p in glob.glob(f"{DATA}/attachments/**/*", recursive=True):
    if os.path.isfile(p):
        keys_before.add(p)
print(f"   files in the attachment store before: {len(keys_before)}")
time.sleep(0.5)

st, _ = http("DELETE", f"/v1/users/{X}", timeout=120)
check(st == 204, f"erasure answered {st}")
time.sleep(2.5)  # removals drain after the commit; WAL scrub retries every 500 ms

# reads
body_all = ""
for c in (ch, dm["channelId"]):
    s, h = http("GET", f"/v1/channels/{c}/messages?afterSeq=0&limit=500", token=tw)
    body_all += json.dumps(h)
s, h = http("GET", f"/v1/channels/{ch}/messages?threadId={r_root['messageId']}&afterSeq=0", token=tw)
body_all += json.dumps(h)
for m in M.values():
    s, sr = http("GET", f"/v1/me/search?q={m}", token=tw)
    body_all += json.dumps(sr)
req = urllib.request.Request(f"{URL}/v1/users/{X}/export", headers={"Authorization": f"Bearer {ADMIN}"})
exp = urllib.request.urlopen(req, timeout=60).read().decode()
body_all += exp
s, flags = http("GET", "/v1/flags?limit=500")
body_all += json.dumps(flags)
in_reads = [k for k, m in M.items() if m in body_all and k != "chname"]
check(not in_reads, f"markers still readable through the API after the erasure: {in_reads}")
print(f"   export after the erasure: {exp.strip().splitlines()[-1] if exp.strip() else '(empty)'}")

# database
if PGDB:
    dump = subprocess.run(["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "-a", PGDB], capture_output=True, text=True).stdout
    held = {k: [ln.split("\t")[0][:60] for ln in dump.splitlines() if m in ln][:2] for k, m in M.items() if m in dump}
else:
    held = {}
    for path in glob.glob(f"{DATA}/chatd.db*"):
        data = open(path, "rb").read()
        for k, m in M.items():
            if m.encode() in data:
                held.setdefault(k, []).append(os.path.basename(path))
print(f"   channel name marker kept (not named by §19): {'chname' in held}")
held.pop("chname", None)
check(not held, f"markers in the database after the erasure: {held}")
if not PGDB:
    import b9util
    grams = {m[i:i + 3] for k, m in M.items() if k != "chname" for i in range(len(m) - 2)}
    terms, seps = b9util.leftovers(DATA, grams)
    check(not terms, f"trigrams of erased text still FTS5 terms: {terms[:10]}")
    print(f"   FTS5 separators of erased text (known issue): {seps}")

# attachment store
left = []
ids = [u["attachmentId"] for u in (up_png, up_txt, up_un, up_left) if isinstance(u, dict)]
for p in glob.glob(f"{DATA}/attachments/**/*", recursive=True):
    if not os.path.isfile(p):
        continue
    data = open(p, "rb").read()
    for k, m in M.items():
        if m.encode() in data:
            left.append((k, p.replace(DATA, "")))
    for i in ids:
        if i in p:
            left.append(("id", p.replace(DATA, "")))
check(not left, f"X's upload bytes left in the attachment store: {left}")
for a in ids:
    s, _ = http("GET", f"/v1/attachments/{a}")
    check(s == 404, f"admin GET of X's upload {a[:8]} after the erasure: {s}")
print("FINDINGS:", FINDINGS)
