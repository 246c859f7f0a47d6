"""Hostile uploads against a running chatd (breaker8).

python3 uploads.py   (CHATD_URL, CHATD_ADMIN_TOKEN as in lib.py)
"""
import http.client as httpc
import json
import os
import socket
import struct
import threading
import time
import urllib.parse
import uuid
import zlib

from lib import FINDINGS, URL, Session, channel, check, http, token, uid

alice, bob, eve = uid("alice"), uid("bob"), uid("eve")
cid = uid("files")
channel(cid, [alice, bob])
TA, TB, TE = token(alice), token(bob), token(eve)
HOST, PORT = urllib.parse.urlparse(URL).hostname, urllib.parse.urlparse(URL).port


def png(w, h, rows=None, extra_chunks=b"", truncate=None):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    raw = rows if rows is not None else b"".join(b"\x00" + b"\x80" * (w * 3) for _ in range(h))
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + extra_chunks
    data += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    return data[:truncate] if truncate else data


def upload(body, ctype, tok=TA, filename=None, ch=cid, headers=None):
    q = "" if filename is None else "?filename=" + urllib.parse.quote(filename, safe="")
    h = {"Content-Type": ctype} if ctype is not None else {}
    h.update(headers or {})
    return http("POST", f"/v1/channels/{ch}/attachments{q}", token=tok, raw=body, headers=h)


def get_raw(path, headers=None, tok=TA, method="GET"):
    c = httpc.HTTPConnection(HOST, PORT, timeout=30)
    h = {"Authorization": f"Bearer {tok}"} if tok else {}
    h.update(headers or {})
    c.request(method, path, headers=h)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), body


def unclaimed_files():
    return None


good = png(3, 2)
# --- lying types
s, b = upload(good, "image/jpeg")
check(s == 400 and b["error"]["code"] == "invalid_field", f"PNG bytes declared image/jpeg: {s}")
s, b = upload(good, "IMAGE/PNG; charset=utf-8")
check(s == 201 and b["contentType"] == "image/png" and b.get("width") == 3, f"IMAGE/PNG; charset: {s} {b}")
s, b = upload(b"<html><script>alert(1)</script></html>", "image/png")
check(s == 400, f"HTML declared image/png: {s}")
s, b = upload(b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", "image/svg+xml")
check(s == 415 and b["error"]["code"] == "unsupported_media_type", f"SVG: {s}")
s, b = upload(b"x", None)
check(s == 415, f"no Content-Type: {s} {b}")
s, b = upload(b"x", "")
check(s == 415, f"empty Content-Type: {s}")
s, b = upload(b"<html><script>alert(1)</script></html>", "text/plain", filename="page.html")
check(s == 201, f"HTML as text/plain: {s}")
if s == 201:
    st, hd, body = get_raw(f"/v1/attachments/{b['attachmentId']}")
    check(hd.get("content-disposition", "").startswith("attachment") and hd.get("x-content-type-options") == "nosniff"
          and hd.get("content-type", "").startswith("text/plain"), f"text/plain served as a download: {hd.get('content-type')} {hd.get('content-disposition')}")
# audio/mpeg holding HTML: inline, but nosniff + sandbox
s, b = upload(b"<html><script>alert(1)</script></html>", "audio/mpeg")
if s == 201:
    st, hd, body = get_raw(f"/v1/attachments/{b['attachmentId']}")
    check(hd.get("x-content-type-options") == "nosniff" and hd.get("content-security-policy") == "sandbox",
          f"HTML as audio/mpeg served inline with nosniff+sandbox: {hd.get('content-disposition')} {hd.get('content-security-policy')}")
# polyglot: a valid PNG with a ZIP/HTML tail
s, b = upload(good + b"PK\x03\x04<html><script>alert(1)</script>", "image/png")
print("      PNG with a tail:", s, b.get("width") if isinstance(b, dict) else b)
# truncated image
s, b = upload(png(64, 64, truncate=60), "image/png")
check(s == 400 and b["error"].get("field") == "body", f"truncated PNG: {s} {b}")
s, b = upload(png(200, 200)[:-20], "image/png")
check(s == 400, f"PNG missing its IEND: {s} {b}")
# pixels: header says 100000x100000
s, b = upload(png(1, 1)[:16] + struct.pack(">II", 100000, 100000) + png(1, 1)[24:], "image/png")
check(s == 400, f"PNG 10^10 pixels by its header (bad crc too): {s} {b}")
# GIF: 1x1 screen, frame larger; JPEG junk
s, b = upload(b"GIF89a\x01\x00\x01\x00\x00\x00\x00,\x00\x00\x00\x00\xff\xff\xff\xff\x00\x02\x02D\x01\x00;", "image/gif")
check(s == 400, f"GIF frame 65535x65535 on a 1x1 screen: {s} {b}")
s, b = upload(b"\xff\xd8\xff\xc0\x00\x0b\x08\xff\xff\xff\xff\x01\x01\x11\x00\xff\xd9", "image/jpeg")
check(s == 400, f"JPEG 65535x65535 SOF, no data: {s} {b}")
s, b = upload(b"RIFF\x1a\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff", "image/webp")
check(s == 400, f"WebP VP8X 16M x 16M: {s} {b}")
# zero-byte bodies
for t in ("text/plain", "image/png", "application/octet-stream"):
    s, b = upload(b"", t)
    print(f"      empty body as {t}: {s} {b}")

# --- filenames
for name, ok in (("a\r\nSet-Cookie: x=1", False), ("a\x00b", False), ("a\x7fb", False), ("a\u0085b", False),
                 ("..", False), ("a/b", False), ("a\\b", False), ("\u202egnp.exe", False), ("x" * 256, False),
                 ("é" * 127 + "e", True), ('q"uote;.txt', True), ("%00.txt", True), ("名前.txt", True),
                 ("a\u2028b.txt", None), ("a\ufffeb", None), ("CON", True), ("a" + "\u0301" * 200, None)):
    s, b = upload(b"hello", "text/plain", filename=name)
    if ok is not None:
        check((s == 201) == ok, f"filename {name[:20]!r}: {s} {(b.get('error') or {}).get('message', '') if isinstance(b, dict) else b}")
    else:
        print(f"      filename {name[:20]!r}: {s} {b.get('filename') if s == 201 else b}")
    if s == 201:
        st, hd, body = get_raw(f"/v1/attachments/{b['attachmentId']}")
        cd = hd.get("content-disposition", "")
        check(st == 200 and "\r" not in cd and "\n" not in cd and cd.count('"') == 2, f"  Content-Disposition for {name[:20]!r}: {cd[:100]}")
# filename given twice in the query
s, b = http("POST", f"/v1/channels/{cid}/attachments?filename=a.txt&filename=b.txt", token=TA, raw=b"x", headers={"Content-Type": "text/plain"})
print("      filename twice:", s, b.get("filename") if s == 201 else b)

# --- ranges
s, b = upload(bytes(range(256)) * 4, "application/octet-stream", filename="r.bin")
aid = b["attachmentId"]
size = 1024
for rng, want_status, want in (("bytes=0-0", 206, b"\x00"), ("bytes=1023-", 206, b"\xff"), ("bytes=-1", 206, b"\xff"),
                               ("bytes=-2000", 206, None), ("bytes=1024-", 416, None), ("bytes=5-2", 416, None),
                               ("bytes=0-99999999999999999999999", 206, None), ("bytes=-0", 416, None),
                               ("bytes=0-1,5-6", 200, None), ("bytes=a-b", 200, None), ("items=0-1", 200, None),
                               ("bytes= 2 - 3 ", 206, b"\x02\x03"), ("bytes=+1-2", 200, None), ("bytes=0x1-2", 200, None)):
    st, hd, body = get_raw(f"/v1/attachments/{aid}", headers={"Range": rng})
    ok = st == want_status and (want is None or body == want)
    if st == 206:
        first, rest = hd["content-range"].split(" ")[1].split("/")
        a, z = map(int, first.split("-"))
        ok = ok and len(body) == z - a + 1 == int(hd["content-length"]) and body == (bytes(range(256)) * 4)[a:z + 1]
    check(ok, f"Range {rng}: {st} {hd.get('content-range')} len {len(body)}")
st, hd, body = get_raw(f"/v1/attachments/{aid}", method="HEAD")
print("      HEAD:", st, hd.get("content-length"), len(body))
st, hd, body = get_raw(f"/v1/attachments/{aid}", headers={"If-None-Match": hd.get("etag", "x")})
check(st == 304, f"If-None-Match: {st}")

# --- who reads: a stranger, the signed URL altered
st, hd, body = get_raw(f"/v1/attachments/{aid}", tok=TE)
check(st == 404, f"stranger reads: {st}")
A = Session(TA)
m = A.send_msg(cid, "", attachments=[aid])
check(m["type"] == "MSG_ACK", f"send with the attachment: {m}")
h = http("GET", f"/v1/channels/{cid}/messages?latest=true&limit=1", token=TA)[1]
att = h["messages"][-1]["attachments"][0]
url = att["url"]
st, hd, body = get_raw(url, tok=None)
check(st == 200 and len(body) == size, f"signed URL reads: {st}")
p = urllib.parse.urlparse(url)
q = dict(urllib.parse.parse_qsl(p.query))
for name, qq in (("exp+1", {**q, "exp": str(int(q["exp"]) + 1)}), ("sig upper", {**q, "sig": q["sig"].upper()}),
                 ("sig cut", {**q, "sig": q["sig"][:-2]}), ("exp +0", {**q, "exp": "+" + q["exp"]}),
                 ("exp leading 0", {**q, "exp": "0" + q["exp"]}), ("exp 2^63", {**q, "exp": str(2**63)})):
    st, hd, body = get_raw(p.path + "?" + urllib.parse.urlencode(qq), tok=None)
    check(st == 404, f"signed URL altered ({name}): {st}")
st, hd, body = get_raw(p.path + "/thumbnail?" + p.query, tok=None)
check(st == 404, f"file's signed URL on the thumbnail: {st}")
# signed URL + a stranger's token
st, hd, body = get_raw(url, tok=TE)
print("      signed URL with a stranger's token:", st)

# --- an attachment claimed twice, by another user, into another channel
other = uid("other")
channel(other, [alice, bob])
s, b = upload(b"x", "text/plain")
a2 = b["attachmentId"]
Bs = Session(TB)
f = Bs.send_msg(cid, "steal", attachments=[a2])
check(f["type"] == "ERROR" and f.get("field") == "attachments", f"bob claims alice's upload: {f.get('code')}")
f = A.send_msg(other, "other channel", attachments=[a2])
check(f["type"] == "ERROR" and f.get("field") == "attachments", f"claimed into another channel: {f.get('code')}")
f = A.send_msg(cid, "dup list", attachments=[a2, a2])
print("      same attachment twice in one list:", f["type"], f.get("code"), f.get("message"))
ks = [uuid.uuid4().hex, uuid.uuid4().hex]
for k in ks:
    A.send({"type": "MSG_SEND", "channelId": cid, "clientMsgId": k, "body": "race", "attachments": [a2]})
r = [A.answer(k) for k in ks]
check(sum(x["type"] == "MSG_ACK" for x in r) == 1, f"two pipelined sends claiming one upload: {[x['type'] for x in r]}")

# --- concurrent uploads past max_uploads_in_flight_per_user (default 4): slow bodies
socks = []
for i in range(6):
    sck = socket.create_connection((HOST, PORT))
    sck.sendall((f"POST /v1/channels/{cid}/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TA}\r\n"
                 f"Content-Type: application/octet-stream\r\nContent-Length: 100\r\n\r\n").encode() + b"a")
    socks.append(sck)
    time.sleep(0.2)
time.sleep(0.5)
answers = []
for sck in socks:
    sck.settimeout(0.5)
    try:
        answers.append(sck.recv(200).split(b"\r\n")[0].decode())
    except socket.timeout:
        answers.append("(waiting)")
print("      6 slow uploads:", answers)
check(answers.count("(waiting)") == 4 and sum("429" in a for a in answers) == 2, "4 in flight, 2 refused 429")
for sck in socks:
    sck.close()
time.sleep(0.5)
s, b = upload(b"after", "text/plain")
check(s == 201, f"slots come back after the clients went away: {s} {b}")

print("\nFINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
