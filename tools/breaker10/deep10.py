"""Deep nesting inside each v1.2 frame's own fields and unknown fields, at the 64 KiB frame
bound: every field of MSG_SEND/MSG_EDIT/MSG_REACT/SYNC/PRESENCE_SUB/TYPING nested 30,000 deep,
and an unknown field of 65,000 '[' with no closing: answers as §5 says, the session alive.

  CHATD_URL=http://127.0.0.1:19100 python3 deep10.py
"""
import json
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

A = uid("dp")
ch = uid("deep")
channel(ch, [A])
s = Session(token(A))
root = s.send_msg(ch, "root")["messageId"]
D = 30000
deep = "[" * D + "]" * D
base = {
    "MSG_SEND": {"type": "MSG_SEND", "channelId": ch, "clientMsgId": "K", "body": "x"},
    "MSG_EDIT": {"type": "MSG_EDIT", "clientMsgId": "K", "messageId": root, "body": "x"},
    "MSG_REACT": {"type": "MSG_REACT", "clientMsgId": "K", "messageId": root, "emoji": "x", "op": "add"},
    "SYNC": {"type": "SYNC", "channelId": ch, "afterSeq": 0},
    "PRESENCE_SUB": {"type": "PRESENCE_SUB", "userIds": []},
    "TYPING": {"type": "TYPING", "channelId": ch, "state": "start"},
    "MSG_READ": {"type": "MSG_READ", "messageId": root},
}
extra = {"MSG_SEND": ["replyTo", "threadId", "attachments", "mentions", "mentionAll"]}
n = 0
for t, fr in base.items():
    for field in list(fr.keys())[1:] + extra.get(t, []):
        k = uuid.uuid4().hex
        cur = dict(fr, clientMsgId=k) if "clientMsgId" in fr else dict(fr)
        text = json.dumps(cur)
        text = text.replace(f'"{field}": ' + json.dumps(cur.get(field, None)), f'"{field}": {deep}') if field in cur else text[:-1] + f', "{field}": {deep}}}'
        s.send(text)
        try:
            f = s.next(lambda f: f["type"] in ("ERROR", "MSG_ACK", "SYNC_BATCH", "PRESENCE"), timeout=5)
        except TimeoutError:
            f = {"type": "(none)"}
        ok = f["type"] == "ERROR" and f["code"] in ("invalid_field", "bad_frame") and (f.get("field") in (field, None))
        n += 1
        check(ok, f"{t}.{field} nested {D}: {f['type']} {f.get('code')} field={f.get('field')} {f.get('message', '')[:50]}")
s.send('{"type":"SYNC","channelId":"%s","afterSeq":0,"z":%s' % (ch, "[" * 65000))
f = s.next(lambda f: f["type"] in ("ERROR", "SYNC_BATCH"), timeout=5)
check(f["type"] == "ERROR" and f["code"] == "bad_frame", f"unclosed 65,000 '[': {f['type']} {f.get('code')}")
r = s.send_msg(ch, "alive")
check(r["type"] == "MSG_ACK", "session alive")
print("FINDINGS:", FINDINGS)
