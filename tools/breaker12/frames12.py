"""Escaped surrogates in frames and bodies, and hostile search cursors.

usage: CHATD_URL=http://127.0.0.1:PORT python3 frames12.py
"""
import json
import urllib.parse
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

a = uid("f")
ta = token(a)
ch = uid("fr")
channel(ch, [a])
s = Session(ta)

def raw_send(body_json):
    k = uuid.uuid4().hex
    s.send('{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":%s}' % (ch, k, body_json))
    return s.next(lambda f: f["type"] in ("MSG_ACK", "ERROR") and f.get("clientMsgId") in (k, None))

for js, want in [(r'"\ud83d\ude00 ok"', "ack"), (r'"\ud83d"', "err"), (r'"\ude00\ud83d"', "err"),
                 (r'"\ud83d\u0041"', "err"), (r'"a\u0000b"', "err"), (r'"\uFEFF\u202Eabc\u200D"', "ack"),
                 (r'"\uDBFF\uDFFF"', "ack"), ('"' + "e\u0301" * 3000 + '"', "ack")]:
    f = raw_send(js)
    got = "ack" if f["type"] == "MSG_ACK" else "err"
    check(got == want, f"body {js[:30]}: {f['type']} {f.get('code')} {f.get('field')}")
    if f["type"] == "MSG_ACK":
        b = s.sync(ch, after=f["seq"] - 1, limit=1)["messages"][0]["body"]
        check(b == json.loads(js), f"  stored byte-identical")

# backend post with escaped lone surrogate
for js in [r'"\ud800"', r'"x\udfff"']:
    st, b = http("POST", f"/v1/channels/{ch}/messages",
                 raw=('{"senderId":"%s","clientMsgId":"k%s","body":%s}' % (a, uuid.uuid4().hex, js)).encode(),
                 headers={"Content-Type": "application/json"})
    check(st == 400, f"backend post body {js}: {st} {b}")

# hostile search cursors
for before in ["-1", "0", "9223372036854775807", "9223372036854775808", "0x10", " 1", "1 ", "+1", "1e3",
               "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "NaN", "٣"]:
    st, b = http("GET", "/v1/me/search?" + urllib.parse.urlencode({"q": "ok", "before": before}), token=ta)
    check(st in (200, 400), f"search before={before!r}: {st} {str(b)[:80]}")
s.close()
print(f"{len(FINDINGS)} finding(s)")
