"""WebSocket peers that stop reading, and ones that half-close (breaker13, item 2 for sessions).

  CHATD_URL=http://127.0.0.1:PORT B13_PID=<server pid> python3 wsstall13.py

N receivers (raw sockets, SO_RCVBUF 4 KiB) upgrade, read HELLO, then never read again;
a backend posts 10 KB messages into their channel. Each stalled session must be
closed by the server (outbound queue, close 1013) and its socket gone, and the
server's RSS back near where it was. Then a receiver that half-closes (FIN) right
after the upgrade: its session must end (socket gone) within the idle bound.
"""
import base64
import os
import socket
import subprocess
import time
import uuid

from lib import FINDINGS, URL, channel, check, http, token, uid

HOST, PORT = URL.split("//")[1].split(":")
PORT = int(PORT)
PID = os.environ.get("B13_PID")
N = int(os.environ.get("B13_N", "20"))


def rss():
    if not PID:
        return None
    return int([l for l in open(f"/proc/{PID}/status") if l.startswith("VmRSS")][0].split()[1])


def estab():
    out = subprocess.run(["ss", "-tan", "state", "established", f"( sport = :{PORT} )"], capture_output=True, text=True).stdout
    return max(0, len(out.splitlines()) - 1)


def upgrade(tok, rcvbuf=4096):
    sk = socket.socket()
    sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sk.connect((HOST, PORT))
    key = base64.b64encode(os.urandom(16)).decode()
    sk.sendall((f"GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {key}\r\nAuthorization: Bearer {tok}\r\n\r\n").encode())
    sk.settimeout(10)
    got = b""
    while b"HELLO" not in got:
        got += sk.recv(4096)
    return sk


ch = uid("ws")
users = [uid("u") for _ in range(N)]
channel(ch, users)
rss0, est0 = rss(), estab()
socks = [upgrade(token(u)) for u in users]
print(f"   {N} stalled sessions open; RSS {rss0} KiB, established before {est0}, now {estab()}")
body = "x" * 10000
t0 = time.time()
for i in range(int(os.environ.get("B13_POSTS", "3000"))):
    st, _ = http("POST", f"/v1/channels/{ch}/messages", body={"senderId": users[0], "clientMsgId": uuid.uuid4().hex, "body": body})
    if st not in (200, 201):
        print("   post", st)
        break
rss1 = rss()
t_post = time.time() - t0
gone = None
for _ in range(120):
    if estab() <= est0:
        gone = time.time() - t0
        break
    time.sleep(0.5)
check(gone is not None, f"{N} stalled WebSocket readers: server sockets gone {gone and round(gone, 1)} s after the first post"
      f" (posting took {t_post:.1f} s); RSS {rss0} -> {rss1} KiB")
# what did a stalled reader get at the end: drain and look for the close frame code
sk = socks[0]
sk.settimeout(2)
data = b""
try:
    while True:
        d = sk.recv(1 << 20)
        if not d:
            break
        data += d
except (socket.timeout, ConnectionResetError) as e:
    data += f"<{type(e).__name__}>".encode()
i = data.rfind(b"\x88")
print(f"   stalled reader drained {len(data)} bytes; last close frame at {i}: {data[i:i + 4]!r} tail {data[-30:]!r}")
for s in socks:
    s.close()
time.sleep(3)
print(f"   RSS after {rss()} KiB")

# half-close right after the upgrade
u = uid("h")
channel(uid("hc"), [u])
est0 = estab()
sk = upgrade(token(u))
sk.shutdown(socket.SHUT_WR)
t0 = time.time()
end = None
sk.settimeout(1)
while time.time() - t0 < 100:
    try:
        d = sk.recv(4096)
        if not d:
            end = time.time() - t0
            break
    except socket.timeout:
        pass
    except ConnectionResetError:
        end = time.time() - t0
        break
check(end is not None and end < 5, f"WebSocket peer that half-closes after HELLO: server ended it after {end} s")
sk.close()
print(f"{len(FINDINGS)} FAIL")
