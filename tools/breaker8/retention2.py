"""Retention (§19) against attachments, previews, threads, search and export. Server with
CHATD_RETENTION_SWEEP_SECS=1. DATA_DIR (file store) optional: checks the bytes left the disk.

usage: retention2.py [DATA_DIR]
"""
import json
import os
import sys
import time
import urllib.parse
import urllib.request

from lib import FINDINGS, URL, Session, channel, check, http, token, uid

data = sys.argv[1] if len(sys.argv) > 1 else None
alice, bob = uid("alice"), uid("bob")
cid = uid("ret2")
channel(cid, [alice, bob])
TA, TB = token(alice), token(bob)
A, B = Session(TA), Session(TB)
s, up = http("POST", f"/v1/channels/{cid}/attachments?filename=doc.txt", token=TA, raw=b"retained secret bytes",
             headers={"Content-Type": "text/plain"})
assert s == 201, (s, up)
root = A.send_msg(cid, "root with a file zzkeyword", attachments=[up["attachmentId"]])
h = http("GET", f"/v1/channels/{cid}/messages?latest=true&limit=1", token=TA)[1]
signed = h["messages"][-1]["attachments"][0]["url"]
# bob replies in the thread and quotes the root, just before the retention is set
time.sleep(2.5)
s, b = http("PATCH", f"/v1/channels/{cid}", body={"retentionSecs": 2})
assert s == 200, (s, b)
reply = B.send_msg(cid, "fresh reply zzfresh", threadId=root["messageId"], replyTo=root["messageId"])
time.sleep(4)
h = http("GET", f"/v1/channels/{cid}/messages?afterSeq=0", token=TB)[1]
by = {m["messageId"]: m for m in h["messages"]}
r = by[root["messageId"]]
check(r.get("expired") and r["body"] == "" and not r.get("attachments"), f"root expired without attachments: {json.dumps(r)[:200]}")
rp = by.get(reply["messageId"])
print("   reply now:", json.dumps(rp)[:300] if rp else None)
if rp and not rp.get("expired"):
    check(rp.get("replyPreview", {}).get("body") == "" and rp.get("replyPreview", {}).get("deleted") is True,
          f"the fresh reply's preview of the expired root is empty/deleted: {rp.get('replyPreview')}")
st = None
try:
    st = urllib.request.urlopen(URL + signed, timeout=10).status
except urllib.error.HTTPError as e:
    st = e.code
check(st == 404, f"signed URL of an expired message's attachment: {st}")
s, b = http("GET", f"/v1/attachments/{up['attachmentId']}", token=TA)
check(s == 404, f"attachment of an expired message by its member: {s}")
s, b = http("GET", "/v1/me/search?q=zzkeyword", token=TA)
check(s == 200 and not b["results"], f"search of the expired text: {len(b.get('results', []))}")
s, b = http("GET", f"/v1/users/{alice}/export")
text = b if isinstance(b, str) else json.dumps(b)
check("zzkeyword" not in text and "retained secret" not in text and up["attachmentId"] not in text,
      "alice's export holds no expired text or attachment")
s, b = http("GET", f"/v1/channels/{cid}/messages?threadId={root['messageId']}&afterSeq=0", token=TB)
print("   thread of the expired root:", s, [(m["seq"], m.get("expired"), m["body"][:20]) for m in b.get("messages", [])] if s == 200 else b)
if data:
    time.sleep(62)   # the attachment sweeper removes queued objects
    hit = []
    for root_dir, _, names in os.walk(os.path.join(data, "attachments")):
        for n in names:
            if up["attachmentId"] in n:
                hit.append(n)
    check(not hit, f"the expired attachment's bytes left the disk: {hit}")
print("\nFINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
