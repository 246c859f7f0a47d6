"""Connection-level abuse: tokens in both header and query (the header wins, §2), a user with
101 connections (§3: at least 100 before any limit), a flood of 5,000 pings on one connection
(answered or throttled, the server and other sessions unaffected).

  CHATD_URL=http://127.0.0.1:18900 python3 conn_abuse.py
"""
import base64
import os
import socket
import struct
import time
import urllib.parse

from websockets.sync.client import connect

from lib import FINDINGS, Session, WS, channel, check, http, token, uid, URL

H = urllib.parse.urlparse(URL)
A, B = uid("ca"), uid("cb")
ch = uid("conn")
channel(ch, [A, B])
ta, tb = token(A), token(B)
witness = Session(tb)


def status_of(headers=None, query=""):
    try:
        ws = connect(WS + query, additional_headers=headers or {}, open_timeout=10)
        hello = ws.recv(timeout=5)
        ws.close()
        return 101, hello[:60]
    except Exception as e:
        return getattr(getattr(e, "response", None), "status_code", None), str(e)[:80]


s, _ = status_of({"Authorization": "Bearer nonsense"}, f"?access_token={ta}")
check(s == 401, f"bad header + good query token: {s} (the header wins: 401)")
s, h = status_of({"Authorization": f"Bearer {ta}"}, "?access_token=nonsense")
check(s == 101 and A in h, f"good header + bad query token: {s} {h}")
s, _ = status_of({}, f"?access_token={ta}&access_token=nonsense")
print(f"   two access_token parameters (good, bad): {s}")

# 101 connections of one user
conns, refused = [], []
for i in range(101):
    try:
        conns.append(Session(ta))
    except Exception as e:
        refused.append(str(e)[:80])
check(len(conns) == 100 and len(refused) == 1, f"101 connections of one user: {len(conns)} open (at least 100, §3), the 101st refused: {refused[:1]}")
a = conns[0].send_msg(ch, "from one of 101")
got = witness.next(lambda f: f["type"] == "MSG_RECV" and f["messageId"] == a["messageId"])
others = sum(1 for c in conns[1:20] if c.next(lambda f: f["type"] == "MSG_RECV" and f["messageId"] == a["messageId"], timeout=10))
check(others == 19, f"the sender's other sessions got its message: {others} of 19")
for c in conns:
    c.close()

# a ping flood on a raw connection
sock = socket.create_connection((H.hostname, H.port), timeout=10)
key = base64.b64encode(os.urandom(16)).decode()
sock.sendall((f"GET /v1/ws HTTP/1.1\r\nHost: {H.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {ta}\r\n\r\n").encode())
time.sleep(0.5)
mask = os.urandom(4)
ping = struct.pack("!BB", 0x89, 0x80 | 4) + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(b"ping"))
t0 = time.time()
try:
    sock.sendall(ping * 5000)
except Exception as e:
    print("   flood send:", e)
time.sleep(1)
sock.settimeout(3)
data = b""
try:
    while True:
        d = sock.recv(1 << 20)
        if not d:
            break
        data += d
except Exception:
    pass
pongs = data.count(b"\x8a\x04ping")
close = data.find(b"\x88")
print(f"   5,000 pings: {pongs} pongs, close frame at {close}, {len(data)} bytes back")
sock.close()
t1 = time.time()
w = witness.send_msg(ch, "after the ping flood")
s, _ = http("GET", "/healthz", token=None)
check(w["type"] == "MSG_ACK" and s == 200 and time.time() - t1 < 2, f"after a 5,000-ping flood: server up, another session sends ({time.time() - t1:.2f} s)")
print("FINDINGS:", FINDINGS)
