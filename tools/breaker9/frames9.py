"""Hostile WebSocket frames below and above JSON: invalid UTF-8 in a text frame, binary,
bad opcodes, reserved bits, unmasked frames, oversized control frames, lying lengths (2^63),
fragments adding up past max_frame_bytes, a continuation with no start, bad close codes; and
JSON frames decoded on the main path and on the fallback (the same frame with "zz":1e400
added) compared answer by answer. After each: the server is up and another session sends.

  serve.sh sqlite 18900 ; CHATD_URL=http://127.0.0.1:18900 python3 frames9.py
"""
import base64
import json
import os
import socket
import struct
import time
import uuid
import urllib.parse

from lib import FINDINGS, Session, channel, check, http, token, uid, URL

HOST = urllib.parse.urlparse(URL)
A, B = uid("fa"), uid("fb")
ch = uid("frames")
channel(ch, [A, B])
ta, tb = token(A), token(B)
witness = Session(tb)


def raw_ws(tok):
    s = socket.create_connection((HOST.hostname, HOST.port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /v1/ws HTTP/1.1\r\nHost: {HOST.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {tok}\r\n\r\n").encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    head, rest = buf.split(b"\r\n\r\n", 1)
    assert b" 101 " in head.split(b"\r\n")[0], head
    return s, rest


def frame(opcode, payload, fin=True, mask=True, rsv=0, length=None):
    b0 = (0x80 if fin else 0) | (rsv << 4) | opcode
    n = len(payload) if length is None else length
    if n < 126:
        hdr = struct.pack("!BB", b0, (0x80 if mask else 0) | n)
    elif n < 65536:
        hdr = struct.pack("!BBH", b0, (0x80 if mask else 0) | 126, n)
    else:
        hdr = struct.pack("!BBQ", b0, (0x80 if mask else 0) | 127, n)
    if not mask:
        return hdr + payload
    m = os.urandom(4)
    return hdr + m + bytes(c ^ m[i % 4] for i, c in enumerate(payload))


def read_frames(s, rest, timeout=3):
    """Frames the server sent until it closes or timeout: [(opcode, payload)]."""
    s.settimeout(timeout)
    buf, out = rest, []
    end = time.time() + timeout
    while time.time() < end:
        while len(buf) >= 2:
            op, n = buf[0] & 0x0F, buf[1] & 0x7F
            off = 2
            if n == 126:
                if len(buf) < 4:
                    break
                n, off = struct.unpack("!H", buf[2:4])[0], 4
            elif n == 127:
                if len(buf) < 10:
                    break
                n, off = struct.unpack("!Q", buf[2:10])[0], 10
            if len(buf) < off + n:
                break
            out.append((op, buf[off:off + n]))
            buf = buf[off + n:]
            if op == 8:
                return out
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            out.append(("reset", b""))
            break
        if not d:
            out.append(("eof", b""))
            break
        buf += d
    return out


def summary(frames):
    res = []
    for op, p in frames:
        if op == 8:
            code = struct.unpack("!H", p[:2])[0] if len(p) >= 2 else None
            res.append(f"close {code} {p[2:].decode('utf-8', 'replace')[:60]!r}")
        elif op == 1:
            try:
                f = json.loads(p)
                res.append(f"{f['type']}" + (f" {f.get('code')} {f.get('message', '')[:60]!r}" if f["type"] == "ERROR" else ""))
            except Exception:
                res.append(f"text? {p[:40]!r}")
        else:
            res.append(str(op))
    return res


def still_fine(label):
    s, _ = http("GET", "/healthz", token=None)
    a = witness.send_msg(ch, f"after {label}")
    check(s == 200 and a["type"] == "MSG_ACK", f"{label}: server up and another session sends ({s}, {a['type']})")


def attack(label, data, expect):
    s, rest = raw_ws(ta)
    got = read_frames(s, rest, timeout=2)  # HELLO
    try:
        s.sendall(data)
    except Exception as e:
        print("   send failed:", e)
    got = summary(read_frames(s, b"", timeout=4))
    s.close()
    ok = any(expect in g for g in got)
    check(ok, f"{label}: want {expect!r}, got {got[:4]}")
    still_fine(label)


send = lambda body: json.dumps({"type": "MSG_SEND", "channelId": ch, "clientMsgId": uuid.uuid4().hex, "body": body}).encode()

attack("text frame with invalid UTF-8", frame(1, b'{"type":"MSG_SEND","channelId":"' + ch.encode() + b'","clientMsgId":"k1","body":"\xff\xfe"}'), "close 1007")
attack("text frame with an overlong UTF-8 NUL", frame(1, b'{"type":"MSG_SEND","channelId":"' + ch.encode() + b'","clientMsgId":"k2","body":"a\xc0\x80b"}'), "close 1007")
attack("text frame with an encoded surrogate (CESU)", frame(1, b'{"type":"MSG_SEND","channelId":"' + ch.encode() + b'","clientMsgId":"k3","body":"\xed\xa0\x80"}'), "close 1007")
attack("binary frame", frame(2, send("bin")), "bad_frame")
attack("opcode 3", frame(3, b"x"), "close 1002")
attack("RSV1 set", frame(1, send("rsv"), rsv=4), "close 1002")
attack("unmasked client frame", frame(1, send("nomask"), mask=False), "close 1002")
attack("ping of 126 bytes", frame(9, b"p" * 126), "close 1002")
attack("fragmented ping", frame(9, b"p", fin=False), "close 1002")
attack("continuation without a start", frame(0, send("cont")), "close 1002")
attack("length 2^63-1 announced", frame(1, b"", length=2 ** 63 - 1)[:14], "close 1009")
attack("length 2^40 announced", frame(1, b"", length=2 ** 40)[:14], "close 1009")
attack("close with code 999", frame(8, struct.pack("!H", 999)), "close 1002")
attack("close with a 1-byte payload", frame(8, b"\x03"), "close 1002")
attack("close with invalid UTF-8 reason", frame(8, struct.pack("!H", 1000) + b"\xff"), "close")
big = send("x" * (65536 - len(send(""))))
assert len(big) == 65536
# accepted (not closed): judged as a frame, its body over max_body_bytes
attack("text frame of exactly 65536", frame(1, big), "body_too_large")
big1 = send("x" * (65537 - len(send(""))))
attack("text frame of 65537", frame(1, big1), "close 1009")
parts = [big1[i:i + 20000] for i in range(0, len(big1), 20000)]
data = b"".join(frame(1 if i == 0 else 0, p, fin=(i == len(parts) - 1)) for i, p in enumerate(parts))
attack("65537 bytes in 4 fragments", data, "close 1009")
small = send("frag")
data = b"".join(frame(1 if i == 0 else 0, small[i:i + 1], fin=(i == len(small) - 1)) for i in range(len(small)))
attack("a frame in 1-byte fragments", data, "MSG_ACK")
data = frame(1, small[:10], fin=False) + frame(9, b"ping") + frame(0, small[10:])
attack("a ping between fragments", data, "MSG_ACK")
data = frame(1, small[:10], fin=False) + frame(1, small)
attack("a new text frame inside a fragmented one", data, "close 1002")

# JSON decoded on the main path and on the fallback ("zz":1e400 appended): same answers?
def answer_of(sess, text):
    sess.send(text)
    return sess.next(lambda f: f["type"] in ("MSG_ACK", "ERROR", "SYNC_BATCH"), timeout=10)


a = Session(ta)
ref = a.send_msg(ch, "ref")
cases = [
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","b\\u006fdy":"y"}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","t\\u0079pe":"SYNC"}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","mentions":[1]}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","mentions":null}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","mentionAll":null}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","replyTo":null}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","attachments":[]}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","attachments":{}}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"\\u0000"}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","threadId":""}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s ","body":"x"}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","mentionAll":1}',
    '{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"x","ts":-1,"seq":5,"senderId":"other"}',
    '{"type":"MSG_SEND" ,"channelId" : "%s" , "clientMsgId":"%s","body":"x"\t}',
    '{"type":"SYNC","channelId":"%s","clientMsgId":"%s","afterSeq":9007199254740991}',
    '{"type":"SYNC","channelId":"%s","clientMsgId":"%s","afterSeq":9007199254740992}',
    '{"type":"SYNC","channelId":"%s","clientMsgId":"%s","afterSeq":1.0e0,"limit":5e0}',
    '{"type":"SYNC","channelId":"%s","clientMsgId":"%s","afterSeq":0,"limit":500.5}',
    '{"type":"SYNC","channelId":"%s","clientMsgId":"%s","afterSeq":0,"latest":1}',
    '{"type":"SYNC","channelId":"%s","clientMsgId":"%s","beforeSeq":0}',
]
diffs = []
for c in cases:
    k1, k2 = uuid.uuid4().hex, uuid.uuid4().hex
    main = answer_of(a, c % (ch, k1))
    fall = answer_of(a, (c % (ch, k2)).rstrip()[:-1].rstrip() + ',"zz":1e400}')
    norm = lambda f: (f["type"], f.get("code"), f.get("field"), f.get("duplicate"),
                      len(f.get("messages", [])) if f["type"] == "SYNC_BATCH" else None)
    if norm(main) != norm(fall):
        diffs.append((c[:70], norm(main), norm(fall), fall.get("message")))
    print(f"   {c[40:110]:70} main={norm(main)} fallback={norm(fall)}")
check(not diffs, f"main path and fallback answer differently: {diffs}")
print("FINDINGS:", FINDINGS)
