"""Erasure and export of a user whose messages have partly expired (§19): the export lists the
expired ones without text, the erasure answers 204, adds delete entries only for messages not
already gone, and leaves seqs gapless.  python3 erase_expired.py  (server with
CHATD_RETENTION_SWEEP_SECS=1)"""
import json
import time

from lib import FINDINGS, Session, channel, check, http, token, uid

alice, bob = uid("alice"), uid("bob")
cid, keep = uid("exp"), uid("keep")
channel(cid, [alice, bob])
channel(keep, [alice, bob])
A = Session(token(alice))
old = [A.send_msg(cid, f"old secret {i}") for i in range(3)]
http("PATCH", f"/v1/channels/{cid}", body={"retentionSecs": 2})
time.sleep(4)
fresh = [A.send_msg(keep, f"kept {i}") for i in range(2)]
s, text = http("GET", f"/v1/users/{alice}/export")
lines = [json.loads(x) for x in text.strip().split("\n")] if isinstance(text, str) else []
msgs = [x for x in lines if x.get("type") == "message"]
print("   export messages:", [(m.get("channelId")[:8], m.get("body"), m.get("expired")) for m in msgs])
check("old secret" not in text and lines and lines[-1].get("type") == "end", "export: no expired text, an end line")
s, _ = http("DELETE", f"/v1/users/{alice}", timeout=120)
check(s == 204, f"erasure of a user with expired messages: {s}")
for ch in (cid, keep):
    s, h = http("GET", f"/v1/channels/{ch}/messages?afterSeq=0")
    seqs = [m["seq"] for m in h["messages"]]
    dels = [m for m in h["messages"] if m.get("kind") == "delete"]
    print(f"   {ch[:12]}: seqs {seqs}, delete entries {len(dels)}, bodies {[m['body'] for m in h['messages'] if m.get('kind') == 'message']}")
    check(seqs == list(range(1, len(seqs) + 1)), f"{ch}: gapless after the erasure")
    check(all(m["body"] == "" for m in h["messages"]), f"{ch}: no text left")
print("FINDINGS:", FINDINGS)
