"""One idempotency key, many contents (§14, §15, §16: the key covers replyTo, threadId,
attachments, mentions, mentionAll), over the WebSocket and the backend post, and around
refusals: a refused send stores no key; a conflicting retry binds no attachment.

usage: CHATD_URL=http://127.0.0.1:PORT python3 keys11.py
"""
import json
import urllib.request

from lib import URL, Session, channel, check, http, token, uid, FINDINGS

A, B = uid("a"), uid("b")
C = uid("keys")
channel(C, [A, B])
ta = token(A)
sa = Session(ta)


def upload(tok, c, data=b"x"):
    req = urllib.request.Request(f"{URL}/v1/channels/{c}/attachments?filename=f.txt", data=data, method="POST",
                                 headers={"Authorization": f"Bearer {tok}", "Content-Type": "text/plain"})
    return json.loads(urllib.request.urlopen(req).read())["attachmentId"]


root = sa.send_msg(C, "root")
x, y = upload(ta, C), upload(ta, C)
K = uid("k")
first = sa.send_msg(C, "with x", cmid=K, attachments=[x], mentions=[B], replyTo=root["messageId"])
check(first["type"] == "MSG_ACK", f"first send: {first}")
for label, extra in [
    ("no attachments", dict(mentions=[B], replyTo=root["messageId"])),
    ("attachment y", dict(attachments=[y], mentions=[B], replyTo=root["messageId"])),
    ("x twice", dict(attachments=[x, x], mentions=[B], replyTo=root["messageId"])),
    ("no mentions", dict(attachments=[x], replyTo=root["messageId"])),
    ("mentionAll", dict(attachments=[x], mentions=[B], replyTo=root["messageId"], mentionAll=True)),
    ("threadId instead of replyTo", dict(attachments=[x], mentions=[B], threadId=root["messageId"])),
]:
    a = sa.send_msg(C, "with x", cmid=K, **extra)
    check(a["type"] == "ERROR" and a["code"] in ("idempotency_conflict", "invalid_field", "forbidden"),
          f"same key, {label}: {a.get('type')} {a.get('code')} {a.get('field', '')}")
a = sa.send_msg(C, "with x", cmid=K, attachments=[x], mentions=[B], replyTo=root["messageId"])
check(a["type"] == "MSG_ACK" and a["duplicate"] and a["messageId"] == first["messageId"], f"exact retry: {a}")
# the backend post with the same key
s, b = http("POST", f"/v1/channels/{C}/messages", body={"senderId": A, "clientMsgId": K, "body": "other"})
check(s == 409, f"backend post, same key, other body: {s} {b}")
s, b = http("POST", f"/v1/channels/{C}/messages", body={"senderId": A, "clientMsgId": K, "body": "with x"})
check(s == 409 or (s in (200, 201) and b.get("messageId") == first["messageId"]),
      f"backend post, same key, same body but no attachments/mentions/replyTo: {s} {b}")
# y is still free: usable by a new key
a = sa.send_msg(C, "y now", attachments=[y])
check(a["type"] == "MSG_ACK", f"y was not bound by the conflicting retry: {a.get('type')} {a.get('code')}")
# a refused send stores no key
z = upload(token(B), C)
K2 = uid("k2")
a = sa.send_msg(C, "not mine", cmid=K2, attachments=[z])
check(a["type"] == "ERROR" and a["code"] == "invalid_field", f"B's upload in A's send: {a.get('code')}")
a = sa.send_msg(C, "fine now", cmid=K2)
check(a["type"] == "MSG_ACK" and not a["duplicate"], f"the refused key is free: {a}")
# after the message's delete: the exact retry is still a duplicate, other content a conflict
sa.send({"type": "MSG_DELETE", "messageId": first["messageId"], "clientMsgId": uid("d")})
a = sa.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"))
a = sa.send_msg(C, "with x", cmid=K, attachments=[x], mentions=[B], replyTo=root["messageId"])
check(a["type"] == "MSG_ACK" and a["duplicate"], f"exact retry after the delete: {a.get('type')} {a.get('code')}")
h = Session(token(B)).sync(C, 0)
n = sum(1 for m in h["messages"] if m.get("clientMsgId") == K)
check(n == 1, f"the key stored once: {n}")
print("FINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
