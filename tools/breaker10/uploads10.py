"""Hostile uploads and downloads breaker8/9 did not try: signed URLs moved between attachments
and parts, repeated exp/sig parameters, a signed URL beside a bad token, a signed URL after its
message is deleted; Range edge cases (suffix 0, empty file, 1-byte, If-None-Match with a range,
HEAD); filenames (CR/LF, very long, path-like, repeated parameter); PNG+HTML and GIF+JS
polyglots (served inline only as images, with nosniff and the sandbox CSP); Content-Type with
a charset parameter kept or dropped; request-head slowloris (hundreds of connections that
never finish their head) against other clients.

  serve.sh sqlite 19100 ; CHATD_URL=http://127.0.0.1:19100 python3 uploads10.py
"""
import http.client as httpc
import socket
import struct
import time
import urllib.parse
import uuid
import zlib

from lib import FINDINGS, URL, Session, channel, check, http, token, uid

A, B, E = uid("ua"), uid("ub"), uid("ue")
ch = uid("up10")
channel(ch, [A, B])
ta, tb, te = token(A), token(B), token(E)
H = urllib.parse.urlparse(URL)


def png(w=2, h=2):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\x80" * (w * 3) for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def upload(body, ctype, tok=ta, q=""):
    return http("POST", f"/v1/channels/{ch}/attachments{q}", token=tok, raw=body, headers={"Content-Type": ctype})


def get(path, headers=None, tok=None, method="GET"):
    c = httpc.HTTPConnection(H.hostname, H.port, timeout=30)
    hd = {"Authorization": f"Bearer {tok}"} if tok else {}
    hd.update(headers or {})
    c.request(method, path, headers=hd)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def send_with(att_ids, body="with files"):
    s = Session(ta)
    r = s.send_msg(ch, body, attachments=att_ids)
    s.close()
    assert r["type"] == "MSG_ACK", r
    st, h = http("GET", f"/v1/channels/{ch}/messages?afterSeq={r['seq'] - 1}&limit=1", token=tb)
    return r, h["messages"][0]["attachments"]


# 1. signed URLs moved around
s1, u1 = upload(png(), "image/png")
s2, u2 = upload(b"plain text two", "text/plain")
assert s1 == 201 and s2 == 201, (s1, u1, s2, u2)
msg, atts = send_with([u1["attachmentId"], u2["attachmentId"]])
img = next(x for x in atts if x["attachmentId"] == u1["attachmentId"])
txt = next(x for x in atts if x["attachmentId"] == u2["attachmentId"])
st, _, body = get(img["url"])
check(st == 200 and body == png(), f"signed url of the image: {st}")
st, _, _ = get(img["thumbnailUrl"])
check(st == 200, f"signed thumbnail url: {st}")
q_img = img["url"].split("?", 1)[1]
q_th = img["thumbnailUrl"].split("?", 1)[1]
q_txt = txt["url"].split("?", 1)[1]
for label, path in [
    ("image's query on the text", f"/v1/attachments/{u2['attachmentId']}?{q_img}"),
    ("file query on the thumbnail", f"/v1/attachments/{u1['attachmentId']}/thumbnail?{q_img}"),
    ("thumbnail query on the file", f"/v1/attachments/{u1['attachmentId']}?{q_th}"),
    ("exp given twice (same value)", img["url"] + "&" + q_img.split("&")[0]),
    ("sig given twice", img["url"] + "&" + q_img.split("&")[1]),
    ("sig=... then sig of text", img["url"] + "&" + q_txt.split("&")[1]),
    ("exp with %30 escaping", img["url"].replace("exp=", "exp=%3").replace("%3", "%3", 1) if False else img["url"].replace("?exp=1", "?exp=%31")),
    ("sig percent-encoded", img["url"][:-2] + "%" + format(ord(img["url"][-2]), "02x") + img["url"][-1]),
    ("id upper-case", img["url"].replace(u1["attachmentId"], u1["attachmentId"].upper())),
    ("trailing slash", img["url"].replace("?", "/?")),
    ("path with ..", f"/v1/attachments/x/../{u1['attachmentId']}?{q_img}"),
    ("path with %2e%2e", f"/v1/attachments/x/%2e%2e/{u1['attachmentId']}?{q_img}"),
]:
    st, hd, _ = get(path)
    if label == "sig percent-encoded" or label == "exp with %30 escaping":
        print(f"   {label}: {st}")
        continue
    check(st == 404 or st == 400, f"signed URL altered ({label}): {st}")
# a signed URL with a bad bearer token beside it
st, _, _ = get(img["url"], tok="not-a-token")
print(f"   signed URL + a bad bearer token: {st}")
st, _, _ = get(img["url"], tok=te)
print(f"   signed URL + a non-member's token: {st}")
# a non-member's token alone, and access_token in the query
st, _, _ = get(f"/v1/attachments/{u1['attachmentId']}", tok=te)
check(st == 404, f"non-member's token: {st}")
st, _, _ = get(f"/v1/attachments/{u1['attachmentId']}?access_token={tb}")
check(st == 200, f"member's access_token in the query: {st}")

# 2. Range edge cases
for rng, want in [("bytes=-0", 416), ("bytes=0-0", 206), ("bytes=0-", 206), ("bytes= 0-1", 206),
                  ("bytes=0-1,2-3", 200), ("Bytes=0-1", 200), ("bytes=1-0", 416),
                  ("bytes=" + "9" * 5000 + "-", 416), ("bytes=0-" + "9" * 5000, 206)]:
    st, hd, body = get(txt["url"], headers={"Range": rng})
    check(st == want, f"Range {rng[:30]!r}: {st} (want {want}) {hd.get('content-range')} {len(body)} bytes")
st, hd, body = get(txt["url"], headers={"Range": "bytes=0-3", "If-Range": '"nope"'})
print(f"   Range with a stale If-Range: {st} {len(body)} bytes (RFC 9110: the whole file)")
st, hd, body = get(txt["url"], method="HEAD")
check(st == 200 and body == b"" and hd.get("content-length") == str(len(b"plain text two")), f"HEAD: {st} {hd.get('content-length')}")
st, hd, body = get(txt["url"], headers={"If-None-Match": hd.get("etag", "x")})
check(st == 304 and body == b"", f"If-None-Match with the ETag: {st}")
s0, u0 = upload(b"", "text/plain")
print(f"   an empty upload: {s0} {str(u0)[:100]}")

# 3. filenames
for name, expect in [("a\r\nX-Evil: 1.txt", 400), ("a\nb.txt", 400), ("x" * 5000 + ".txt", 400),
                     ("../../etc/passwd", None), ("con.txt", None), ("a\"; filename=evil.html", None),
                     ("\u202etxt.exe", 400), ("%00.txt", None)]:
    st, b = upload(b"named", "text/plain", q="?filename=" + urllib.parse.quote(name, safe=""))
    if expect is None:
        print(f"   filename {name[:40]!r}: {st} {b.get('filename') if isinstance(b, dict) else b}")
        if st == 201:
            _, atts2 = send_with([b["attachmentId"]], body=f"name {uuid.uuid4().hex[:4]}")
            stg, hd, _ = get(atts2[0]["url"])
            cd = hd.get("content-disposition", "")
            import re
            check(re.fullmatch(r'attachment; filename="[^"\\\r\n]*"(; filename\*=UTF-8\'\'[^;\s"]*)?', cd) is not None,
                  f"Content-Disposition for {name[:30]!r}: {cd[:120]}")
    else:
        check(st == expect, f"filename {name[:30]!r}: {st} {str(b)[:100]}")
st, b = upload(b"twice", "text/plain", q="?filename=a.txt&filename=b.html")
check(st == 400, f"filename given twice: {st} {str(b)[:100]}")

# 4. polyglots and charset parameters
poly = png() + b"<html><script>alert(document.domain)</script></html>"
st, b = upload(poly, "image/png")
print(f"   PNG + HTML polyglot as image/png: {st}")
if st == 201:
    _, at = send_with([b["attachmentId"]], body="poly")
    stg, hd, _ = get(at[0]["url"])
    check(hd.get("content-type") == "image/png" and hd.get("x-content-type-options") == "nosniff"
          and hd.get("content-security-policy") == "sandbox", f"polyglot served as {hd.get('content-type')} nosniff={hd.get('x-content-type-options')} csp={hd.get('content-security-policy')}")
gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;\x00\x00\x00*/=alert(1)//"
st, b = upload(gif, "image/gif")
print(f"   GIF/JS polyglot: {st} {str(b)[:100]}")
for ct in ["text/plain; charset=utf-7", "text/plain;charset=\"utf-16\"", "application/octet-stream; x=\"<script>\"",
           "text/plain; charset=utf-8; charset=utf-7"]:
    st, b = upload(b"+ADw-script+AD4-alert(1)+ADw-/script+AD4-", ct)
    if st == 201:
        _, at = send_with([b["attachmentId"]], body=f"cs {uuid.uuid4().hex[:4]}")
        stg, hd, _ = get(at[0]["url"])
        check("utf-7" not in hd.get("content-type", "") and "<" not in hd.get("content-type", ""),
              f"{ct!r}: stored {b['contentType']!r}, served {hd.get('content-type')!r} {hd.get('content-disposition')}")
    else:
        print(f"   {ct!r}: {st}")

# 5. a signed URL after its message is deleted (bytes gone: 404)
s3, u3 = upload(b"delete me bytes", "text/plain")
m3, at3 = send_with([u3["attachmentId"]], body="to delete")
sa = Session(ta)
k = uuid.uuid4().hex
sa.send({"type": "MSG_DELETE", "clientMsgId": k, "messageId": m3["messageId"]})
check(sa.answer(k)["type"] == "MSG_ACK", "delete ACKed")
time.sleep(0.5)
st, _, body = get(at3[0]["url"])
check(st == 404, f"signed URL after its message was deleted: {st} {body[:40]!r}")
st, _, body = get(f"/v1/attachments/{u3['attachmentId']}", tok=ta)
check(st == 404, f"uploader's token after the delete: {st}")

# 6. head slowloris: 400 connections that never finish their head
socks = []
for i in range(400):
    try:
        s = socket.create_connection((H.hostname, H.port), timeout=5)
        s.sendall(b"GET /v1/channels HTTP/1.1\r\nHost: x\r\nX-a: ")
        socks.append(s)
    except OSError as e:
        print("   connect failed at", i, e)
        break
t0 = time.time()
st, _ = http("GET", "/healthz", token=None)
r = Session(tb).send_msg(ch, "during slowloris")
check(st == 200 and r["type"] == "MSG_ACK", f"with {len(socks)} unfinished heads: healthz {st}, send {r['type']} in {time.time() - t0:.2f} s")
time.sleep(35)
closed = 0
for s in socks:
    s.settimeout(0.01)
    try:
        s.sendall(b"b")
        d = s.recv(100)
        if d == b"" or d.startswith(b"HTTP/1.1 408") or d.startswith(b"HTTP/1.1 400"):
            closed += 1
    except (socket.timeout, BlockingIOError):
        pass
    except OSError:
        closed += 1
print(f"   after 35 s: {closed} of {len(socks)} unfinished heads closed by the server")
[s.close() for s in socks]
print("FINDINGS:", FINDINGS)
