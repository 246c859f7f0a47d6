"""kill -9 chatd while large uploads are in flight (file store); after the restart, list what the
uploads left under attachments/files: object_store's staging files `<id>#<n>` hold the parts written
so far, and no row or sweep names them.

usage: crash_upload.py PORT   (starts and kills its own server via serve.sh, SQLite, fresh data dir)
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

port = sys.argv[1]
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import check, channel, token, uid, FINDINGS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/var/tmp/b8-data-{port}"
shutil.rmtree(DATA, ignore_errors=True)


def start():
    out = subprocess.run(["bash", f"{HERE}/serve.sh", "sqlite", port, "CHATD_ATTACHMENT_ORPHAN_TTL_SECS=5"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0])


pid = start()
u = uid("up")
c = uid("c")
channel(c, [u])
tok = token(u)
socks = []
for i in range(4):
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.sendall((f"POST /v1/channels/{c}/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tok}\r\n"
               f"Content-Type: application/octet-stream\r\nContent-Length: 25000000\r\n\r\n").encode())
    sent = 0
    chunk = os.urandom(1 << 20)
    while sent < 24_000_000:
        s.sendall(chunk)
        sent += len(chunk)
    socks.append(s)
time.sleep(2)
os.kill(pid, signal.SIGKILL)
for s in socks:
    s.close()
time.sleep(0.5)
pid = start()
time.sleep(75)     # past the orphan TTL (5 s) and its sweep (every min(TTL, 60) s)
left = []
for root, _, names in os.walk(os.path.join(DATA, "attachments")):
    for n in names:
        p = os.path.join(root, n)
        left.append((p, os.path.getsize(p)))
print("left under attachments/:", [(os.path.basename(p), n) for p, n in left])
check(not left, f"nothing left by 4 uploads killed 24 MB into 25 MB, 75 s after restart: {len(left)} files, {sum(n for _, n in left)} bytes")
os.kill(pid, signal.SIGTERM)
print("FINDINGS:", FINDINGS)
