"""Idle keep-alive HTTP connections: N connections each make one complete request
(GET /healthz, keep-alive) and then send nothing. Are they closed by the server (as
unfinished heads are, after handshake_timeout_ms), or held for ever (a way to pin file
descriptors without ever being slow inside a request)? Also a WebSocket that completes its
upgrade and then never sends nor answers pings.

  CHATD_URL=http://127.0.0.1:19190 python3 idle10.py [N] [WAIT_S]
"""
import socket
import sys
import time
import urllib.parse

from lib import FINDINGS, URL, check

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
WAIT = int(sys.argv[2]) if len(sys.argv) > 2 else 60
H = urllib.parse.urlparse(URL)
socks = []
for i in range(N):
    s = socket.create_connection((H.hostname, H.port), timeout=5)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    d = s.recv(4096)
    assert d.startswith(b"HTTP/1.1 200"), d[:50]
    socks.append(s)
print(f"   {len(socks)} keep-alive connections made one request each; waiting {WAIT} s")
time.sleep(WAIT)
closed = 0
for s in socks:
    s.settimeout(0.05)
    try:
        d = s.recv(100)
        if d == b"":
            closed += 1
    except socket.timeout:
        pass
    except OSError:
        closed += 1
check(closed == len(socks), f"after {WAIT} s idle, {closed} of {len(socks)} keep-alive connections closed by the server")
# do the still-open ones still serve a request?
alive = 0
for s in socks[:5]:
    try:
        s.settimeout(2)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        if s.recv(100).startswith(b"HTTP/1.1 200"):
            alive += 1
    except OSError:
        pass
print(f"   of 5 probed, {alive} still answer a request")
[s.close() for s in socks]
print("FINDINGS:", FINDINGS)
