"""Reactions, channel names and file names made of characters that show as nothing or as no
character (a lone combining mark, U+1D159 MUSICAL SYMBOL NULL NOTEHEAD, U+FFFC OBJECT REPLACEMENT
CHARACTER, U+20DD alone, U+1D17B..) and reactions that are plain words, phone numbers or URLs
(the 'emoji' grammar is 1-64 bytes without whitespace or controls; erasure keeps reaction emoji).

  CHATD_URL=http://127.0.0.1:19100 python3 probe_blank.py
"""
import uuid
from lib import FINDINGS, Session, channel, check, http, token, uid

A = uid("pb")
ch = uid("pbc")
channel(ch, [A], owners=[A])
ta = token(A)
s = Session(ta)
root = s.send_msg(ch, "root")["messageId"]
blank = {"U+0301 alone": "\u0301", "U+20DD alone": "\u20dd", "U+1D159": "\U0001d159", "U+FFFC": "\ufffc",
         "U+0301 x3": "\u0301\u0301\u0301", "U+1D17B": "\U0001d17b", "U+0E31 alone": "\u0e31", "U+FFFD": "\ufffd",
         "U+2062 (refused?)": "\u2062", "U+1D16D": "\U0001d16d"}
for name, e in blank.items():
    k = uuid.uuid4().hex
    s.send({"type": "MSG_REACT", "clientMsgId": k, "messageId": root, "emoji": e, "op": "add"})
    r = s.answer(k)
    check(r["type"] == "ERROR", f"reaction {name}: {r['type']} {r.get('code')} {r.get('message', '')[:50]}")
    st, b = http("PATCH", f"/v1/channels/{ch}", body={"name": e})
    check(st == 400, f"channel name {name}: {st}")
    st, b = http("POST", f"/v1/channels/{ch}/attachments?filename=" + __import__("urllib.parse").parse.quote(e),
                 token=ta, raw=b"x", headers={"Content-Type": "text/plain"})
    check(st == 400, f"file name {name}: {st}")
for e in ["555-0100", "call-me-at-555-0100", "https://evil.example/x", "mypassword123", "a" * 64]:
    k = uuid.uuid4().hex
    s.send({"type": "MSG_REACT", "clientMsgId": k, "messageId": root, "emoji": e, "op": "add"})
    r = s.answer(k)
    print(f"   reaction {e!r}: {r['type']} {r.get('code')}")
print("FINDINGS:", FINDINGS)
