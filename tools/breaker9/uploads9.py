"""Hostile uploads not covered by breaker8's uploads.py: a 1x1 PNG whose IDAT inflates to
1 GiB (time and memory), lying Content-Length (shorter, longer then closed), chunked with a
broken chunk size, Content-Length beside Transfer-Encoding, Content-Type spellings; sends
claiming one upload twice in a list and from two connections at once; uploads by members who
may not send (muted, read-only channel, blocked in a DM).

  serve.sh sqlite 18900 ; CHATD_URL=http://127.0.0.1:18900 python3 uploads9.py
"""
import os
import socket
import struct
import threading
import time
import urllib.parse
import uuid
import zlib

from lib import FINDINGS, Session, channel, check, http, token, uid, URL

H = urllib.parse.urlparse(URL)
A, B = uid("ua"), uid("ub")
ch = uid("up")
channel(ch, [A, B])
ta, tb = token(A), token(B)


def png_chunk(kind, data):
    return struct.pack("!I", len(data)) + kind + data + struct.pack("!I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(w, h, idat):
    ihdr = struct.pack("!IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + idat + png_chunk(b"IEND", b"")


def rss(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM") or line.startswith("VmRSS"):
                print("  ", line.strip())
    except Exception:
        pass


def upload(tok, body, ctype="image/png", name=None, cid=None):
    q = f"?filename={urllib.parse.quote(name)}" if name else ""
    return http("POST", f"/v1/channels/{cid or ch}/attachments{q}", token=tok, raw=body,
                headers={"Content-Type": ctype}, timeout=120)


def raw_request(req, read=True, timeout=10):
    s = socket.create_connection((H.hostname, H.port), timeout=timeout)
    s.sendall(req)
    out = b""
    if read:
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
                if b"\r\n\r\n" in out and len(out) > 200:
                    break
        except socket.timeout:
            pass
    s.close()
    return out.split(b"\r\n", 1)[0].decode(errors="replace"), out


PID = int(os.environ.get("CHATD_PID", "0"))

# 1. a 1x1 PNG whose IDAT inflates to 1 GiB
comp = zlib.compressobj(9)
row = b"\x00" + b"\x00" * 4
data = comp.compress(row)
zero = b"\x00" * (1 << 20)
for _ in range(1024):
    data += comp.compress(zero)
data += comp.flush()
bomb = png(1, 1, png_chunk(b"IDAT", data))
print(f"   bomb: {len(bomb)} bytes")
if PID:
    rss(PID)
t0 = time.time()
threads, res = [], []
for i in range(4):
    user = uid("bomber")
    http("PUT", f"/v1/channels/{ch}/members/{user}")
    tok = token(user)
    th = threading.Thread(target=lambda t=tok: res.append(upload(t, bomb)))
    th.start()
    threads.append(th)
t1 = time.time()
s, _ = http("GET", "/healthz", token=None)
hz = time.time() - t1
[th.join() for th in threads]
took = time.time() - t0
print(f"   4 bombs: {[r[0] for r in res]} in {took:.1f} s; /healthz meanwhile {hz*1000:.0f} ms; {str(res[0][1])[:150]}")
if PID:
    rss(PID)
check(took < 20, f"four 1x1 PNGs inflating to 1 GiB each answered within 20 s (took {took:.1f} s)")

# 2. lying Content-Length
path = f"/v1/channels/{ch}/attachments"
hdr = f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ta}\r\nContent-Type: text/plain\r\n"
st, _ = raw_request((hdr + "Content-Length: 5\r\nConnection: close\r\n\r\n").encode() + b"helloEXTRA-BYTES")
check(" 201 " in st, f"Content-Length shorter than the body: {st}")
st, _ = raw_request((hdr + "Content-Length: 1000\r\n\r\n").encode() + b"short", read=False)
time.sleep(0.5)
st, _ = raw_request((hdr + "Transfer-Encoding: chunked\r\n\r\n").encode() + b"fffffffffffffffffffff\r\nabc\r\n0\r\n\r\n")
check(" 400 " in st or " 413 " in st or st == "", f"chunk size beyond u64: {st}")
st, _ = raw_request((hdr + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n").encode() + b"5\r\nhello\r\n0\r\n\r\n")
print(f"   Content-Length beside chunked: {st}")
check(" 400 " in st or " 201 " in st, f"Content-Length beside Transfer-Encoding: {st}")
st, out = raw_request((hdr.replace("Content-Type: text/plain\r\n", "Content-Type: text/plain\r\nContent-Type: image/png\r\n")
                       + "Content-Length: 5\r\nConnection: close\r\n\r\n").encode() + b"hello")
check(" 201 " not in st or b'"contentType":"text/plain"' in out, f"two Content-Type headers (text/plain, image/png): {st} {out[-200:]!r}")

# 3. Content-Type spellings: non-image bytes must not be stored as an image type
for ctype in ["IMAGE/PNG", "image/png; charset=binary", " image/png", "image/png\t", "image/PNG;x=y",
              "image/png, text/html", "image/png;", "image/x-png", "Image/Jpeg"]:
    s, b = upload(ta, b"<html><script>alert(1)</script></html>", ctype=ctype)
    check(s != 201, f"HTML bytes as {ctype!r}: {s} {str(b)[:120]}")

# 4. one upload claimed twice in a list, and by two connections at once
s, up = upload(ta, b"claim me", ctype="text/plain")
a1 = Session(ta)
r = a1.send_msg(ch, "twice", attachments=[up["attachmentId"], up["attachmentId"]])
print(f"   [id, id]: {r['type']} {r.get('code')} {r.get('field')}")
if r["type"] == "MSG_ACK":
    s, h = http("GET", f"/v1/channels/{ch}/messages?afterSeq={r['seq'] - 1}&limit=1")
    n = len(h["messages"][0].get("attachments", []))
    check(n == 1, f"a message claiming [id, id] carries {n} attachments")
races = 0
for rnd in range(20):
    s, up = upload(ta, f"race {rnd}".encode(), ctype="text/plain")
    c1, c2 = Session(ta), Session(ta)
    k1, k2 = uuid.uuid4().hex, uuid.uuid4().hex
    c1.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": k1, "body": "c1", "attachments": [up["attachmentId"]]})
    c2.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": k2, "body": "c2", "attachments": [up["attachmentId"]]})
    r1, r2 = c1.answer(k1), c2.answer(k2)
    if r1["type"] == "MSG_ACK" and r2["type"] == "MSG_ACK":
        races += 1
    c1.close(); c2.close()
check(races == 0, f"one upload claimed by two concurrent sends, both ACKed: {races} of 20")

# 5. uploads by members who cannot send: muted, a read-only channel, a blocked user in a DM
M = uid("muted")
http("PUT", f"/v1/channels/{ch}/members/{M}", body={"mutedUntil": int(time.time() * 1000) + 3600000})
s, b = upload(token(M), b"muted upload", ctype="text/plain")
print(f"   a muted member uploads: {s}")
ro = uid("ro")
channel(ro, [A, B])
http("PATCH", f"/v1/channels/{ro}", body={"postingRole": "moderator"})
s2, b = upload(ta, b"read-only upload", ctype="text/plain", cid=ro)
print(f"   a member of a read-only channel uploads: {s2}")
st, dm = http("PUT", f"/v1/me/direct/{B}", token=ta)
http("PUT", f"/v1/me/blocks/{A}", token=tb)
s3, b = upload(ta, b"blocked upload", ctype="text/plain", cid=dm["channelId"])
print(f"   a blocked user uploads into the DM: {s3}")
print("   (uploads that can never be sent: they stay until attachment_orphan_ttl_secs and count in the quota)")
print("FINDINGS:", FINDINGS)
