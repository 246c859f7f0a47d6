"""Hostile frames against a running chatd (breaker8).

python3 frames.py   (CHATD_URL, CHATD_ADMIN_TOKEN as in lib.py)

Each case sends one raw text frame on a live session and checks the answer's
code/field, that the session stays open (a SYNC still answers) and that the
channel's lastSeq and history did not change unless the frame should store.
"""
import json
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

alice, bob = uid("alice"), uid("bob")
cid = uid("room")
channel(cid, [alice, bob])
A = Session(token(alice))


def last_seq():
    s, b = http("GET", f"/v1/channels/{cid}/messages?latest=true&limit=1")
    return b["messages"][-1]["seq"] if b["messages"] else 0


def history():
    s, b = http("GET", f"/v1/channels/{cid}/messages?afterSeq=0&limit=500")
    return b["messages"]


def alive():
    A.send({"type": "SYNC", "channelId": cid, "latest": True, "limit": 1})
    f = A.next(lambda f: f["type"] in ("SYNC_BATCH",), timeout=10)
    return f["type"] == "SYNC_BATCH"


def raw_case(name, text, expect_code=None, expect_field=None, stores=False, cmid=None):
    before = last_seq()
    A.ws.send(text)
    try:
        f = A.next(lambda f: f["type"] in ("ERROR", "MSG_ACK", "SYNC_BATCH"), timeout=10)
    except TimeoutError:
        f = {"type": "none"}
    got = (f.get("type"), f.get("code"), f.get("field"))
    ok = True
    if expect_code is None:
        ok = f["type"] in ("MSG_ACK", "SYNC_BATCH")
    else:
        ok = f["type"] == "ERROR" and f.get("code") == expect_code and (expect_field is None or f.get("field") == expect_field)
    check(ok, f"{name}: expected {expect_code or 'success'}/{expect_field}, got {got} {f.get('message','')[:90]}")
    check(alive(), f"{name}: session still answers")
    after = last_seq()
    if not stores:
        check(after == before, f"{name}: nothing stored (lastSeq {before} -> {after})")
    return f


def send_text(body_json_literal, extra="", cm=None):
    cm = cm or uuid.uuid4().hex
    return cm, '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":%s%s}' % (cid, cm, body_json_literal, extra)


# 1. Duplicate keys: refused on the normal path...
cm = uuid.uuid4().hex
raw_case("duplicate channelId", '{"type":"MSG_SEND","channelId":"%s","channelId":"other","clientMsgId":"%s","body":"x"}' % (cid, cm), "invalid_field", "channelId")
cm = uuid.uuid4().hex
raw_case("duplicate body", '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"first","body":"second"}' % (cid, cm), "invalid_field", "body")
# ... and on the slow path taken for a number beyond f64 in an unknown field?
cm = uuid.uuid4().hex
f = raw_case("duplicate body + extra 1e400", '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"first","body":"second","x":1e400}' % (cid, cm), "invalid_field", "body")
if f["type"] == "MSG_ACK":
    h = [m for m in history() if m.get("clientMsgId") == cm]
    print("      stored body:", h[0]["body"] if h else None)
cm = uuid.uuid4().hex
raw_case("duplicate channelId + extra 1e400", '{"type":"MSG_SEND","channelId":"nope-%s","channelId":"%s","clientMsgId":"%s","body":"dup-chan","x":1e400}' % (cm, cid, cm), "invalid_field", "channelId")
# Escaped key name: "t\u0079pe" is the key "type" for every JSON parser.
cm = uuid.uuid4().hex
raw_case("type twice, once escaped (SYNC then MSG_SEND)",
         '{"type":"SYNC","channelId":"%s","afterSeq":0,"t\\u0079pe":"MSG_SEND","clientMsgId":"%s","body":"escaped-type"}' % (cid, cm),
         "invalid_field", "type")
cm = uuid.uuid4().hex
raw_case("body twice, once escaped", '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"a","b\\u006fdy":"b"}' % (cid, cm), "invalid_field", "body")

# 2. The slow path keeps bodies byte-identical?
tricky = "é\n\t\"\\/ \u2028\u2029 \U0001F600 \u200b \u202e"
cm1, t1 = send_text(json.dumps(tricky))
raw_case("tricky body, normal path", t1, stores=True)
cm2, t2 = send_text(json.dumps(tricky), ',"x":1e400')
raw_case("tricky body, 1e400 path", t2, stores=True)
h = {m.get("clientMsgId"): m["body"] for m in history()}
check(h.get(cm1) == tricky and h.get(cm2) == tricky, f"bodies byte-identical on both paths: {h.get(cm1) == tricky}, {h.get(cm2) == tricky}")
cm, t = send_text('"nul\\u0000here"', ',"x":1e400')
raw_case("U+0000 body via the 1e400 path", t, "invalid_field", "body")
cm, t = send_text('"lone \\ud800"', ',"x":-1e400')
raw_case("lone surrogate body + 1e400", t, "bad_frame")
cm, t = send_text('"lone \\ud800"')
f = raw_case("lone surrogate body", t, "bad_frame")

# 3. Deep nesting in an unknown field (valid JSON: §5 says ignore it).
for depth in (100, 129, 5000):
    cm, t = send_text('"deep %d"' % depth, ',"x":' + "[" * depth + "]" * depth)
    raw_case(f"unknown field nested {depth} deep", t, stores=True)
cm, t = send_text('"deep obj"', ',"x":' + '{"a":' * 200 + "1" + "}" * 200)
raw_case("unknown field, objects 200 deep", t, stores=True)

# 4. Numbers.
for v, code in (("9007199254740991", None), ("9007199254740992", "invalid_field"), ("-1", "invalid_field"),
                ("18446744073709551616", "invalid_field"), ("1e308", "invalid_field"), ("0.5", "invalid_field"),
                ('"5"', "invalid_field"), ("null", "invalid_field"), ("true", "invalid_field")):
    raw_case(f"SYNC afterSeq {v}", '{"type":"SYNC","channelId":"%s","afterSeq":%s}' % (cid, v), code, "afterSeq" if code else None)
for v, code in (("500", None), ("501", "invalid_field"), ("0", "invalid_field"), ("5e2", None), ("-0", "invalid_field")):
    raw_case(f"SYNC limit {v}", '{"type":"SYNC","channelId":"%s","afterSeq":0,"limit":%s}' % (cid, v), code, "limit" if code else None)
raw_case("SYNC beforeSeq 0", '{"type":"SYNC","channelId":"%s","beforeSeq":0}' % cid, "invalid_field", "beforeSeq")

# 5. Types and ids.
cm = uuid.uuid4().hex
raw_case("mentions not strings", '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"m","mentions":[{"a":1}]}' % (cid, cm), "invalid_field", "mentions")
cm = uuid.uuid4().hex
raw_case("mentions 51 distinct", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": cm, "body": "m", "mentions": [f"u{i}" for i in range(51)]}), "invalid_field", "mentions")
cm = uuid.uuid4().hex
raw_case("mentionAll as string", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": cm, "body": "m", "mentionAll": "true"}), "invalid_field", "mentionAll")
cm = uuid.uuid4().hex
raw_case("mentionAll by a member", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": cm, "body": "m", "mentionAll": True}), "forbidden")
cm = uuid.uuid4().hex
raw_case("replyTo upper-case uuid", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": cm, "body": "m", "replyTo": str(uuid.uuid4()).upper()}), "invalid_field", "replyTo")
cm = uuid.uuid4().hex
raw_case("attachments 11", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": cm, "body": "m", "attachments": [str(uuid.uuid4()) for _ in range(11)]}), "invalid_field", "attachments")
cm = uuid.uuid4().hex
raw_case("attachments unknown id", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": cm, "body": "", "attachments": [str(uuid.uuid4())]}), "invalid_field", "attachments")
cm = uuid.uuid4().hex
raw_case("attachments [] with empty body", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": cm, "body": "", "attachments": []}), "invalid_field", "body")
raw_case("clientMsgId with space", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": "a b", "body": "m"}), "invalid_field", "clientMsgId")
raw_case("clientMsgId 129", json.dumps({"type": "MSG_SEND", "channelId": cid, "clientMsgId": "k" * 129, "body": "m"}), "invalid_field", "clientMsgId")
raw_case("TYPING bad state", json.dumps({"type": "TYPING", "channelId": cid, "state": "START"}), "invalid_field", "state")
raw_case("MSG_REACT emoji with newline", json.dumps({"type": "MSG_REACT", "clientMsgId": uuid.uuid4().hex, "messageId": str(uuid.uuid4()), "emoji": "👍\n", "op": "add"}), "invalid_field", "emoji")
raw_case("MSG_REACT op missing", json.dumps({"type": "MSG_REACT", "clientMsgId": uuid.uuid4().hex, "messageId": str(uuid.uuid4()), "emoji": "👍"}), "invalid_field", "op")
raw_case("array frame", '["MSG_SEND","%s","k","hi"]' % cid, "bad_frame")
raw_case("type lower-case", '{"type":"msg_send"}', "unknown_type")
raw_case("type with NUL", '{"type":"MSG_SEND\\u0000"}', "unknown_type")
raw_case("BOM before object", '\ufeff{"type":"SYNC","channelId":"%s","afterSeq":0}' % cid, "bad_frame")

# 6. Pipelined flood: 1000 sends in flight on one connection (the spec's floor).
B = Session(token(bob))
ids = [uuid.uuid4().hex for _ in range(1000)]
before = last_seq()
for i, k in enumerate(ids):
    B.send({"type": "MSG_SEND", "channelId": cid, "clientMsgId": k, "body": f"flood {i}"})
acks, errs = {}, []
while len(acks) + len(errs) < len(ids):
    f = B.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=60)
    if f["type"] == "MSG_ACK":
        acks[f["clientMsgId"]] = f["seq"]
    else:
        errs.append((f.get("code"), f.get("reason")))
seqs = [acks[k] for k in ids if k in acks]
check(not errs, f"1000 pipelined sends: {len(acks)} acked, errors {errs[:3]} ({len(errs)})")
check(seqs == sorted(seqs) and len(set(seqs)) == len(seqs), "pipelined sends got increasing seqs in send order")
check(last_seq() == before + len(acks), f"lastSeq moved by exactly the acks ({before} -> {last_seq()}, {len(acks)} acks)")

print("\nFINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
