"""Range and conditional requests on an attachment, and uploads that stall (breaker13).
  CHATD_URL=http://127.0.0.1:PORT B13_T=<handshake timeout s> python3 range13.py"""
import os, socket, time
from lib import FINDINGS, URL, channel, check, http, token, uid
HOST, PORT = URL.split("//")[1].split(":"); PORT = int(PORT)
T = float(os.environ.get("B13_T", "10"))
ADMIN = os.environ["CHATD_ADMIN_TOKEN"]
a = uid("r"); ta = token(a); ch = uid("rc"); channel(ch, [a])
data = bytes(range(256)) * 40  # 10240 bytes
st, up = http("POST", f"/v1/channels/{ch}/attachments?filename=r.bin", token=ta, raw=data,
              headers={"Content-Type": "application/octet-stream"})
aid = up["attachmentId"]

def get(headers, method="GET"):
    sk = socket.create_connection((HOST, PORT)); sk.settimeout(5)
    h = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sk.sendall(f"{method} /v1/attachments/{aid} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN}\r\nConnection: close\r\n{h}\r\n".encode())
    out = b""
    try:
        while True:
            d = sk.recv(65536)
            if not d: break
            out += d
    except socket.timeout:
        pass
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    hd = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
    return int(lines[0].split()[1]), hd, body

cases = [("bytes=0-0", 206, data[0:1]), ("bytes=-0", None, None), ("bytes=5-2", None, None),
         ("bytes=10239-", 206, data[10239:]), ("bytes=10240-", 416, None), ("bytes=-20000", 206, data),
         ("bytes=0-99999999999999999999999", None, None), ("bytes=99999999999999999999999-", None, None),
         ("bytes= 1-2", None, None), ("bytes=1-2,3-4", 200, data), ("BYTES=1-2", None, None), ("bytes=-", None, None),
         ("bytes=0-9223372036854775807", 206, data), ("items=0-1", 200, data), ("bytes=+1-2", None, None)]
for rng, want, body in cases:
    s, hd, b = get({"Range": rng})
    ok = s in (200, 206, 416) and (want is None or s == want) and (body is None or b == body)
    if s == 206:
        ok = ok and int(hd.get("content-length", -1)) == len(b)
    if s == 200:
        ok = ok and b == data
    check(ok, f"Range {rng!r}: {s} {hd.get('content-range')} len {len(b)}")
s, hd, b = get({"If-None-Match": '"' + up["sha256"] + '"'}); check(s == 304 and b == b"", f"If-None-Match tag: {s}")
s, hd, b = get({"If-None-Match": 'W/"' + up["sha256"] + '"'}); print(f"      If-None-Match weak tag: {s}")
s, hd, b = get({"If-None-Match": '"a", *'}); print(f"      If-None-Match list with *: {s}")
s, hd, b = get({}, method="HEAD"); check(s == 200 and b == b"" and hd.get("content-length") == "10240", f"HEAD: {s} {hd.get('content-length')} body {len(b)}")
s, hd, b = get({"Range": "bytes=0-1"}, method="HEAD"); print(f"      HEAD with Range: {s} {hd.get('content-length')} {hd.get('content-range')}")

# an upload whose body pauses longer than T: 408 and nothing kept; shorter pauses: stored
def slow_upload(pause):
    body = b"z" * 30000
    sk = socket.create_connection((HOST, PORT)); sk.settimeout(T * 3 + 10)
    sk.sendall((f"POST /v1/channels/{ch}/attachments?filename=slow.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ta}\r\n"
                f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode())
    try:
        for i in range(0, len(body), 10000):
            sk.sendall(body[i:i + 10000]); time.sleep(pause)
            sk.setblocking(False)
            try:
                early = sk.recv(200)
            except BlockingIOError:
                early = None
            sk.setblocking(True); sk.settimeout(T * 3 + 10)
            if early is not None:
                return b"early: " + early.split(b"\r\n")[0]
        r = sk.recv(200)
    except (ConnectionResetError, BrokenPipeError) as e:
        r = type(e).__name__.encode()
    sk.close()
    return r.split(b"\r\n")[0]
r = slow_upload(T * 0.7); check(b" 201 " in r, f"upload with pauses of 0.7T: {r!r}")
r = slow_upload(T * 1.5); check(b" 408 " in r or b"Reset" in r or r == b"", f"upload with pauses of 1.5T: {r!r}")
print(f"{len(FINDINGS)} FAIL")
