"""Nesting depth on the WebSocket: what protocol.md §4 says (unknown fields of any
depth are ignored) against §5/§9 (bad_frame at 128 levels anywhere in the frame).
  CHATD_URL=http://127.0.0.1:PORT python3 depth13.py"""
import uuid
from lib import Session, channel, token, uid
a = uid("d"); t = token(a); ch = uid("dc"); channel(ch, [a]); s = Session(t)
for depth, kind in [(127, "["), (128, "["), (200, "["), (20000, "["), (128, "{"), (5000, "{")]:
    k = uuid.uuid4().hex
    deep = "[" * depth + "]" * depth if kind == "[" else '{"a":' * depth + "1" + "}" * depth
    s.send('{"type":"MSG_SEND","x":%s,"channelId":"%s","clientMsgId":"%s","body":"d"}' % (deep, ch, k))
    f = s.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"))
    print(f"unknown field {kind}x{depth}: {f['type']} {f.get('code')} {f.get('field')}")
    k = uuid.uuid4().hex
    s.send('{"type":"MSG_SEND","body":%s,"channelId":"%s","clientMsgId":"%s"}' % (deep, ch, k))
    f = s.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"))
    print(f"body field {kind}x{depth}: {f['type']} {f.get('code')} {f.get('field')} {f.get('message','')[:50]}")
