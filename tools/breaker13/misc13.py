"""Hostile HTTP at the connection level and odd query strings (breaker13, item 3).

  CHATD_URL=http://127.0.0.1:PORT B13_T=<handshake_timeout_ms in s> python3 misc13.py

Raw sockets: pipelined requests never read, a huge request head, many headers,
HTTP/1.0, an h2c preface, WebSocket upgrades with wrong versions/keys, query
strings that are not UTF-8 or are overlong on every route that reads one.
"""
import os
import socket
import time

from lib import FINDINGS, URL, channel, check, http, token, uid

HOST, PORT = URL.split("//")[1].split(":")
PORT = int(PORT)
T = float(os.environ.get("B13_T", "10"))
ADMIN = os.environ["CHATD_ADMIN_TOKEN"]


def raw(req, read_for=3.0, rcvbuf=None):
    sk = socket.socket()
    if rcvbuf:
        sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sk.connect((HOST, PORT))
    sk.settimeout(read_for)
    try:
        sk.sendall(req)
    except (BrokenPipeError, ConnectionResetError) as e:
        return f"send: {type(e).__name__}".encode()
    out = b""
    t0 = time.time()
    try:
        while time.time() - t0 < read_for:
            d = sk.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    except ConnectionResetError:
        out += b"<RST>"
    sk.close()
    return out


def status(out):
    return out.split(b"\r\n")[0][:40]


a = uid("m")
ta = token(a)
ch = uid("mc")
channel(ch, [a])

# pipelined requests never read: the server must cut the connection within ~T of its buffers filling
sk = socket.socket()
sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
sk.connect((HOST, PORT))
req = f"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n".encode()
t0 = time.time()
sent = 0
cut = None
sk.settimeout(1)
while time.time() - t0 < T * 4:
    try:
        sk.send(req)
        sent += 1
    except socket.timeout:
        pass
    except (BrokenPipeError, ConnectionResetError):
        cut = time.time() - t0
        break
sk.close()
check(cut is not None and cut < T * 3, f"pipelined GETs never read: cut after {cut} s ({sent} sent; T={T})")

# request head limits
out = raw(b"GET /healthz?" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
check(b" 414 " in status(out) or b" 431 " in status(out) or b" 400 " in status(out) or out == b"",
      f"70 KB request target: {status(out)!r}")
out = raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(500)) + b"\r\n")
check(b" 431 " in status(out) or b" 400 " in status(out) or out == b"", f"500 headers: {status(out)!r}")
out = raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 200000 + b"\r\n\r\n")
print(f"      200 KB header (within hyper's ~400 KB buffer, documented): {status(out)!r}")
out = raw(b"GET /healthz HTTP/1.0\r\n\r\n")
check(b" 200 " in status(out), f"HTTP/1.0 without Host: {status(out)!r}")
out = raw(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
check(b"HTTP/2" not in out[:20], f"h2c preface: {status(out)!r}")
out = raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n")
check(b" 101 " not in status(out), f"h2c upgrade: {status(out)!r}")
out = raw(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 100)
check(b" 200 " not in status(out), f"TLS ClientHello on plain port: {status(out)!r}")
out = raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n")
print(f"      two Transfer-Encodings on GET: {status(out)!r}")
out = raw(b"GET\t/healthz HTTP/1.1\r\nHost: x\r\n\r\n")
print(f"      tab as separator: {status(out)!r}")
out = raw(b"GET /healthz HTTP/1.1\nHost: x\n\n")
print(f"      bare LF line ends: {status(out)!r}")

# WebSocket upgrades
def ws_req(extra, path="/v1/ws"):
    return (f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Authorization: Bearer {ta}\r\n{extra}\r\n").encode()


for extra, want in [("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", b" 101 "),
                    ("Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", b" 4"),
                    ("Sec-WebSocket-Version: 13\r\n", b" 4"),
                    ("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + "A" * 5000 + "\r\n", b" 4"),
                    ("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Extensions: permessage-deflate\r\n", b" 101 ")]:
    out = raw(ws_req(extra), read_for=2)
    check(want in status(out), f"upgrade {extra[:60]!r}: {status(out)!r}")
    if want == b" 101 " and "permessage-deflate" in extra:
        check(b"permessage-deflate" not in out.lower(), "  no permessage-deflate negotiated (a bomb vector)")

# query strings that are not UTF-8, overlong, or malformed, on routes that read them
routes = [f"/v1/channels/{ch}/messages?afterSeq=", f"/v1/channels/{ch}/messages?limit=", "/v1/me/search?q=",
          "/v1/directory?q=", f"/v1/channels/{ch}/members?after=", "/v1/channels?after="]
for r in routes:
    for q in ["%FF", "%C0%80", "%ED%A0%80", "%F4%90%80%80", "%E0%80%AF", "1%00", "%"]:
        st, body = http("GET", r + q, token=ta if "/v1/me" in r or "directory" in r or "messages" in r or "members" in r else ADMIN)
        code = body.get("error", {}).get("code") if isinstance(body, dict) else None
        check(st in (200, 400, 403), f"GET {r}{q}: {st} {code}")
for q in ["access_token=%FF", "access_token=%C0%80" + ta, "access_token=" + ta + "%FF"]:
    out = raw((f"GET /v1/ws?{q} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode(), read_for=2)
    check(b" 401 " in status(out), f"ws {q[:30]}: {status(out)!r}")
out = raw(b"GET /v1/channels/\xff\xfe/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ADMIN.encode() + b"\r\n\r\n")
check(b" 400 " in status(out) or b" 404 " in status(out), f"raw 0xFF in path: {status(out)!r}")
out = raw(b"GET /v1/me/search?q=\xff\xfe HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ta.encode() + b"\r\n\r\n")
check(b" 400 " in status(out), f"raw 0xFF in query: {status(out)!r}")
out = raw(("GET /v1/me/search?q=a&q=b&q=c HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ta + "\r\n\r\n").encode())
print(f"      repeated q: {status(out)!r} {out[-120:]!r}")

st, _ = http("GET", "/healthz")
check(st == 200, f"server alive: {st}")
print(f"{len(FINDINGS)} FAIL")
for f in FINDINGS:
    print("  FAIL", f)
