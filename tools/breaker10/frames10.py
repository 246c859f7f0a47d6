"""Hostile frames and bodies breaker8/9 did not send: numbers that are fractions in the text but
round to an integral f64 (0.99999999999999999, 1e-400, 2.9999999999999999) in every integer
field of a frame and of an HTTP body or query; seqs at and past 2^53-1; wrong types in the
v1.2 frames (replyTo/threadId/attachments/mentions/emoji/op/state/userIds); unicode edge cases
stored byte-identical (RTL, combining, ZWJ, noncharacters, astral); each refusal must be the
spec's code, nothing stored, the session and another one still working.

  serve.sh sqlite 19100 ; CHATD_URL=http://127.0.0.1:19100 python3 frames10.py
"""
import json
import time
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

A, B = uid("fa"), uid("fb")
ch = uid("f10")
channel(ch, [A, B], owners=[A])
ta, tb = token(A), token(B)
a, w = Session(ta), Session(tb)
seeds = [a.send_msg(ch, f"seed {i}") for i in range(5)]
assert all(s["type"] == "MSG_ACK" for s in seeds), seeds
root = seeds[0]["messageId"]


def last_seq():
    return http("GET", f"/v1/channels/{ch}")[1]["lastSeq"]


def raw(sess, text, pred=None, timeout=5):
    sess.send(text)
    return sess.next(pred or (lambda f: f["type"] in ("ERROR", "MSG_ACK", "SYNC_BATCH")), timeout)


# 1. fractions that round to an integral float
print("-- fractions in integer fields (frames)")
for num in ["0.99999999999999999", "1.0000000000000001", "1e-400", "-1e-400", "2.9999999999999999",
            "4.9999999999999999e0", "0.5e1", "100000000000000000000e-20"]:
    f = raw(a, '{"type":"SYNC","channelId":"%s","afterSeq":%s,"limit":2}' % (ch, num))
    integral = num in ("0.5e1", "100000000000000000000e-20")  # these are integers written as floats
    ok = (f["type"] == "SYNC_BATCH") if integral else (f["type"] == "ERROR" and f["code"] == "invalid_field")
    got = f.get("code") or [m["seq"] for m in f.get("messages", [])]
    check(ok, f"SYNC afterSeq {num}: {f['type']} {got}")
    f = raw(a, '{"type":"SYNC","channelId":"%s","afterSeq":0,"limit":%s}' % (ch, num))
    if not integral:
        check(f["type"] == "ERROR" and f["code"] == "invalid_field",
              f"SYNC limit {num}: {f['type']} {f.get('code') or len(f.get('messages', []))}")

print("-- fractions in integer fields (HTTP)")
for num in ["0.99999999999999999", "2.9999999999999999", "1e-400"]:
    s, b = http("GET", f"/v1/channels/{ch}/messages?afterSeq={num}&limit=2", token=ta)
    check(s == 400, f"history afterSeq={num}: {s} {[m['seq'] for m in b['messages']] if s == 200 else b}")
    s, b = http("GET", f"/v1/channels/{ch}/messages?afterSeq=0&limit={num}", token=ta)
    check(s == 400, f"history limit={num}: {s} {len(b['messages']) if s == 200 else b}")
    st, bd = http("POST", "/v1/tokens", raw=('{"userId":"%s","ttlSeconds":%s}' % (A, "3599.99999999999999")).encode(),
                  headers={"Content-Type": "application/json"})
    check(st == 400, f"POST /v1/tokens ttlSeconds 3599.99999999999999: {st} {str(bd)[:80]}")
    st, bd = http("PUT", f"/v1/me/channels/{ch}/settings", token=tb,
                  raw=('{"snoozeUntil":%s}' % num).encode(), headers={"Content-Type": "application/json"})
    check(st == 400, f"settings snoozeUntil {num}: {st} {str(bd)[:100]}")
    st, bd = http("PATCH", f"/v1/channels/{ch}", raw=('{"slowModeMs":%s}' % num).encode(),
                  headers={"Content-Type": "application/json"})
    check(st == 400, f"PATCH slowModeMs {num}: {st} {str(bd)[:100]}")
http("PATCH", f"/v1/channels/{ch}", body={"slowModeMs": 0})
http("PUT", f"/v1/me/channels/{ch}/settings", token=tb, body={"snoozeUntil": None})

# 2. seqs at the edge
print("-- seqs at 2^53-1 and past it")
for n, valid in [("9007199254740991", True), ("9007199254740992", False), ("9007199254740993", False),
                 ("9223372036854775807", False), ("9223372036854775808", False), ("-1", False),
                 ("18446744073709551616", False)]:
    for field in ("afterSeq", "beforeSeq"):
        f = raw(a, '{"type":"SYNC","channelId":"%s","%s":%s}' % (ch, field, n))
        ok = (f["type"] == "SYNC_BATCH") if valid else (f["type"] == "ERROR" and f["code"] == "invalid_field")
        check(ok, f"SYNC {field} {n}: {f['type']} {f.get('code')} {f.get('message', '')[:60]}")
    s, b = http("GET", f"/v1/channels/{ch}/messages?beforeSeq={n}", token=ta)
    check((s == 200) if valid else (s == 400), f"history beforeSeq={n}: {s}")

# 3. v1.2 frames with wrong types
print("-- v1.2 frames with wrong types")
before = last_seq()
k = lambda: uuid.uuid4().hex  # noqa: E731
cases = [
    ("MSG_SEND replyTo number", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "replyTo": 5}),
    ("MSG_SEND replyTo array", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "replyTo": [root]}),
    ("MSG_SEND threadId object", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "threadId": {"id": root}}),
    ("MSG_SEND threadId bool", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "threadId": True}),
    ("MSG_SEND attachments string", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "attachments": root}),
    ("MSG_SEND attachments [[id]]", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "attachments": [[root]]}),
    ("MSG_SEND attachments [null]", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "attachments": [None]}),
    ("MSG_SEND mentions string", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "mentions": B}),
    ("MSG_SEND mentions bad id", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "mentions": [".."]}),
    ("MSG_SEND mentions 51 distinct", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "mentions": [f"m{i}" for i in range(51)]}),
    ("MSG_SEND mentionAll string", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": "x", "mentionAll": "yes"}),
    ("MSG_SEND body number", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": 5}),
    ("MSG_SEND body null", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": k(), "body": None}),
    ("MSG_SEND clientMsgId number", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": 5, "body": "x"}),
    ("MSG_SEND clientMsgId DEL", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": "a\x7f", "body": "x"}),
    ("MSG_SEND clientMsgId non-ascii", {"type": "MSG_SEND", "channelId": ch, "clientMsgId": "ä", "body": "x"}),
    ("MSG_SEND channelId '.'", {"type": "MSG_SEND", "channelId": ".", "clientMsgId": k(), "body": "x"}),
    ("MSG_SEND channelId '..'", {"type": "MSG_SEND", "channelId": "..", "clientMsgId": k(), "body": "x"}),
    ("MSG_SEND channelId 129", {"type": "MSG_SEND", "channelId": "c" * 129, "clientMsgId": k(), "body": "x"}),
    ("MSG_EDIT body too large", {"type": "MSG_EDIT", "clientMsgId": k(), "messageId": root, "body": "é" * 8193}),
    ("MSG_EDIT body NUL", {"type": "MSG_EDIT", "clientMsgId": k(), "messageId": root, "body": "a\x00b"}),
    ("MSG_EDIT body empty", {"type": "MSG_EDIT", "clientMsgId": k(), "messageId": root, "body": ""}),
    ("MSG_EDIT messageId upper", {"type": "MSG_EDIT", "clientMsgId": k(), "messageId": root.upper(), "body": "e"}),
    ("MSG_EDIT messageId braces", {"type": "MSG_EDIT", "clientMsgId": k(), "messageId": "{" + root + "}", "body": "e"}),
    ("MSG_DELETE messageId number", {"type": "MSG_DELETE", "clientMsgId": k(), "messageId": 1}),
    ("MSG_REACT op ADD", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "👍", "op": "ADD"}),
    ("MSG_REACT op missing", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "👍"}),
    ("MSG_REACT emoji 65 bytes", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "a" * 65, "op": "add"}),
    ("MSG_REACT emoji array", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": ["👍"], "op": "add"}),
    ("MSG_REACT emoji tab", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\t", "op": "add"}),
    ("MSG_REACT emoji U+3000", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\u3000", "op": "add"}),
    ("MSG_REACT emoji U+180E", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\u180e", "op": "add"}),
    ("MSG_REACT emoji U+0085", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\u0085", "op": "add"}),
    ("MSG_REACT emoji combining alone", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\u0301", "op": "add"}),
    ("MSG_REACT emoji U+115F", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\u115f", "op": "add"}),
    ("MSG_REACT emoji U+FFA0", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\uffa0", "op": "add"}),
    ("MSG_REACT emoji U+1D159", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\U0001d159", "op": "add"}),
    ("MSG_REACT emoji U+E0001 alone", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\U000e0001", "op": "add"}),
    ("MSG_REACT emoji U+FFFC", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\ufffc", "op": "add"}),
    ("MSG_REACT emoji U+034F", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "a\u034f", "op": "add"}),
    ("MSG_REACT emoji U+200E", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "\u200e👍", "op": "add"}),
    ("MSG_REACT emoji U+061C", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "👍\u061c", "op": "add"}),
    ("MSG_REACT emoji U+2028", {"type": "MSG_REACT", "clientMsgId": k(), "messageId": root, "emoji": "👍\u2028", "op": "add"}),
    ("MSG_READ messageId array", {"type": "MSG_READ", "messageId": [root]}),
    ("MSG_DELIVERED no id", {"type": "MSG_DELIVERED"}),
    ("TYPING state number", {"type": "TYPING", "channelId": ch, "state": 1}),
    ("TYPING channelId null", {"type": "TYPING", "channelId": None, "state": "start"}),
    ("PRESENCE_SUB userIds string", {"type": "PRESENCE_SUB", "userIds": A}),
    ("PRESENCE_SUB userIds [5]", {"type": "PRESENCE_SUB", "userIds": [5]}),
    ("PRESENCE_SUB 501 ids", {"type": "PRESENCE_SUB", "userIds": [f"p{i}" for i in range(501)]}),
    ("PRESENCE_SUB bad id", {"type": "PRESENCE_SUB", "userIds": ["a b"]}),
    ("SYNC threadId number", {"type": "SYNC", "channelId": ch, "afterSeq": 0, "threadId": 7}),
    ("SYNC threadId not a message", {"type": "SYNC", "channelId": ch, "afterSeq": 0, "threadId": str(uuid.uuid4())}),
    ("SYNC latest string", {"type": "SYNC", "channelId": ch, "latest": "true"}),
    ("SYNC no afterSeq", {"type": "SYNC", "channelId": ch}),
    ("type lower", {"type": "msg_send", "channelId": ch, "clientMsgId": k(), "body": "x"}),
    ("type with NUL", {"type": "MSG_SEND\x00", "channelId": ch, "clientMsgId": k(), "body": "x"}),
    ("type number", {"type": 1}),
    ("array", [{"type": "MSG_SEND"}]),
]
expect_code = {"type lower": "unknown_type", "type with NUL": "unknown_type", "type number": "bad_frame", "array": "bad_frame",
               "MSG_EDIT body too large": "body_too_large", "SYNC threadId not a message": "not_found",
               "MSG_SEND mentions bad id": "invalid_field", "SYNC no afterSeq": None}
for name, fr in cases:
    a.send(json.dumps(fr))
    try:
        f = a.next(lambda f: f["type"] in ("ERROR", "MSG_ACK", "SYNC_BATCH"), timeout=3)
    except TimeoutError:
        f = {"type": "(no answer)"}
    want = expect_code.get(name, "invalid_field")
    if want is None:
        print(f"   {name}: {f['type']} {f.get('code')}")
        continue
    ok = f["type"] == "ERROR" and (f["code"] == want or (want == "invalid_field" and f["code"] in ("invalid_field", "bad_frame")))
    check(ok, f"{name}: {f['type']} {f.get('code')} field={f.get('field')} {f.get('message', '')[:70]}")
check(last_seq() == before, f"nothing stored by the refused frames (lastSeq {before} -> {last_seq()})")

# 4. unicode bodies stored byte-identical (edit and reply preview too)
print("-- unicode bodies")
bodies = ["\u202eevil\u202c", "e\u0301\u0301\u0301" * 50, "👩\u200d👩\u200d👧\u200d👦", "\ufdd0\uffff\U0010ffff",
          "\u2028\u2029", "\U0001f600" * 4096, "a\r\nb\rc", "\ufeffbom", "\u0600\u0601\u06dd", "ᄀ" + "\u1160" * 10]
for body in bodies:
    r = a.send_msg(ch, body)
    if r["type"] != "MSG_ACK":
        check(False, f"body {body[:10]!r}… ({len(body.encode())} bytes) refused: {r.get('code')}")
        continue
    s, h = http("GET", f"/v1/channels/{ch}/messages?afterSeq={r['seq'] - 1}&limit=1", token=tb)
    check(h["messages"][0]["body"] == body, f"body {body[:10]!r}… stored byte-identical")
    rr = a.send_msg(ch, "re", replyTo=r["messageId"])
    s, h = http("GET", f"/v1/channels/{ch}/messages?afterSeq={rr['seq'] - 1}&limit=1", token=tb)
    pv = h["messages"][0].get("replyPreview", {}).get("body", "")
    check(len(pv.encode()) <= 200 and body.startswith(pv) and (pv == body or len(body.encode()) > 200),
          f"preview of {body[:10]!r}…: {len(pv.encode())} bytes, prefix {body.startswith(pv)}")
# 16384 bytes exactly of 4-byte chars, and one more byte
r = a.send_msg(ch, "\U0001f600" * 4096)
check(r["type"] == "MSG_ACK", f"16384 bytes of 4-byte chars: {r['type']}")
r = a.send_msg(ch, "\U0001f600" * 4096 + "a")
check(r["type"] == "ERROR" and r["code"] == "body_too_large", f"16385 bytes: {r.get('code')}")

# 5. the session and another one still work; no panic in the log
r = w.send_msg(ch, "still here")
check(r["type"] == "MSG_ACK", "the witness still sends")
r = a.send_msg(ch, "still here too")
check(r["type"] == "MSG_ACK", "the hostile session still sends")
print("FINDINGS:", FINDINGS)
