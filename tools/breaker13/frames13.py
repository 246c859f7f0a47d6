"""Hostile WebSocket frames and HTTP requests (breaker13, item 3).

  CHATD_URL=http://127.0.0.1:PORT python3 frames13.py

Each case sends one frame on a live session and checks the answer is the
documented one (an ERROR with the right code, or a close with the right code),
then that the session (or a new one) still sends. Unicode in bodies, names,
reactions and file names round-trips byte-identical or is refused as
documented. Prints ok/FAIL lines and the FAIL count.
"""
import json
import socket
import time
import uuid

from websockets.exceptions import ConnectionClosed

from lib import FINDINGS, URL, Session, channel, check, http, token, uid

HOST, PORT = URL.split("//")[1].split(":")
PORT = int(PORT)
a, b = uid("fa"), uid("fb")
ta, tb = token(a), token(b)
ch = uid("fc")
channel(ch, [a, b])
s = Session(ta)


def fresh():
    global s
    s.close()
    s = Session(ta)


def expect(frame, code=None, close=None, field=None, what=None):
    """Sends frame (str or dict); expects an ERROR with code, or a close with close."""
    global s
    what = what or (frame if isinstance(frame, str) else json.dumps(frame))[:70]
    try:
        s.send(frame)
        f = s.next(lambda f: f["type"] == "ERROR" or f["type"] in ("MSG_ACK", "SYNC_BATCH"), timeout=8)
    except ConnectionClosed as e:
        rc = e.rcvd.code if e.rcvd else None
        check(close is not None and rc == close, f"{what}: closed {rc} (want {code or close})")
        fresh()
        return None
    except TimeoutError:
        check(code is None and close is None, f"{what}: no answer in 8 s (want {code or close})")
        return None
    ok = f["type"] == "ERROR" and f.get("code") == code and (field is None or f.get("field") == field)
    check(ok, f"{what}: {f['type']} {f.get('code')} {f.get('field')} (want {code or close} {field or ''})")
    return f


def still_sends():
    f = s.send_msg(ch, "still here " + uuid.uuid4().hex[:6])
    check(f["type"] == "MSG_ACK", f"  session still sends: {f['type']}")


K = lambda: uuid.uuid4().hex  # noqa: E731

# -- malformed JSON and wrong shapes
for raw in ['{', '[]', '"MSG_SEND"', '123', 'null', '{"type":1}', '{"type":null}', '{}',
            '{"type":"MSG_SEND"', '\ufeff{"type":"PING"}', '{"type":"msg_send"}', '{"type":"MSG_SEND "}',
            '{"type":"NOPE","x":1}', '{"type":"HELLO"}', '{"type":"MSG_ACK"}', '{"type":"' + "A" * 60000 + '"}']:
    expect(raw, code="bad_frame" if raw != '{"type":"NOPE","x":1}' else "bad_frame")
still_sends()

# -- wrong types, grammar limits
good = {"type": "MSG_SEND", "channelId": ch, "body": "x"}
for cmid, code in [("a" * 128, None), ("a" * 129, "invalid_field"), ("", "invalid_field"), (" a", "invalid_field"),
                   ("a\u00e9", "invalid_field"), ("~!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}", None),
                   (123, "invalid_field"), (None, "invalid_field"), (["x"], "invalid_field"), ({"a": 1}, "invalid_field")]:
    f = expect({**good, "clientMsgId": cmid}, code=code or "ACK", field="clientMsgId" if code else None,
               what=f"clientMsgId {str(cmid)[:30]!r}") if code else None
    if code is None:
        s.send({**good, "clientMsgId": cmid})
        f = s.answer(cmid)
        check(f["type"] == "MSG_ACK", f"clientMsgId {cmid[:30]!r} (grammar edge): {f['type']} {f.get('code')}")
for cid, code in [("c" * 129, "invalid_field"), (".", "invalid_field"), ("..", "invalid_field"), ("a/b", "invalid_field"),
                  ("é", "invalid_field"), (12, "invalid_field"), ("x" * 128, "forbidden")]:
    expect({**good, "channelId": cid, "clientMsgId": K()}, code=code, what=f"channelId {str(cid)[:20]!r}")
for body, code in [("", "invalid_field"), (1, "invalid_field"), (None, "invalid_field"), (["a"], "invalid_field"),
                   ("x" * 16385, "body_too_large"), ("é" * 8193, "body_too_large"), ("a\u0000", "invalid_field")]:
    expect({**good, "body": body, "clientMsgId": K()}, code=code, what=f"body {str(body)[:20]!r}..{len(str(body))}")
for lim in [0, 501, -1, 1.5, "10", True, 2 ** 53, 2 ** 64]:
    expect({"type": "SYNC", "channelId": ch, "afterSeq": 0, "limit": lim}, code="invalid_field",
           what=f"SYNC limit {lim!r}")
for after in [-1, 2 ** 53, 2 ** 64, 1e300, "0", None]:
    expect({"type": "SYNC", "channelId": ch, "afterSeq": after}, code="invalid_field", what=f"SYNC afterSeq {after!r}")
for mid in ["01938F5E-6C2A-7B3E-9D41-2F0C8A1B7E55", "x", "", 5, "01938f5e6c2a7b3e9d412f0c8a1b7e55",
            "{01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e55}"]:
    expect({"type": "MSG_READ", "messageId": mid}, code="invalid_field", what=f"MSG_READ {mid!r}")
still_sends()

# -- nesting and size
expect('{"type":"MSG_SEND","x":' + "[" * 200 + "]" * 200 + "}", code="bad_frame", what="200-deep unknown field")
expect('{"type":"MSG_SEND","x":' + "[" * 126 + "]" * 126 + ',"channelId":"%s","clientMsgId":"%s","body":"n"}' % (ch, K()),
       code=None, what="126-deep unknown field")
expect('{"type":"MSG_SEND","x":' + '{"a":' * 5000 + "1" + "}" * 5000 + "}", code="bad_frame", what="5000-deep objects")
expect('{"type":"MSG_SEND","channelId":"%s","clientMsgId":"%s","body":"%s"}' % (ch, K(), "x" * 65600),
       close=1009, what="frame over 64 KiB")
expect(json.dumps({"type": "MSG_SEND", "channelId": ch, "clientMsgId": K(), "body": "y",
                   **{f"k{i}": i for i in range(5000)}}), code=None, what="5000 unknown fields")
# a binary frame
try:
    s.ws.send(b'{"type":"PING"}')
    f = s.next(lambda f: True, timeout=5)
    check(f["type"] == "ERROR", f"binary frame: {f['type']} {f.get('code')}")
except ConnectionClosed as e:
    check(e.rcvd is not None and e.rcvd.code in (1003, 1008), f"binary frame: closed {e.rcvd and e.rcvd.code}")
    fresh()
except TimeoutError:
    check(False, "binary frame: no answer")
still_sends()

# -- Unicode bodies round-trip byte-identical
bodies = ["e\u0301\u0301\u0301" * 200, "\u202eevil\u202c", "\ufffc", "\U0001d159", "\u200b\u2060\ufeff",
          "\U0010ffff", "\ud7ff\ue000", "a\r\nb\tc", "\u0085\u2028\u2029", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
          "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "Z\u0351\u0352\u0353" * 1000]
for body in bodies:
    f = s.send_msg(ch, body)
    if check(f["type"] == "MSG_ACK", f"body {body[:8]!r} ({len(body.encode())} B): {f['type']} {f.get('code')}"):
        got = s.sync(ch, after=f["seq"] - 1, limit=1)["messages"][0]["body"]
        check(got == body, "  stored byte-identical")

# -- reactions with odd emoji
m = s.send_msg(ch, "react to me")
for emoji, want in [("\U0001f44d", None), ("\U0001f44d\U0001f3fd", None), ("\u202e", "invalid_field"),
                    ("", "invalid_field"), ("a" * 200, "invalid_field"), ("\u0000", "invalid_field"),
                    ("\ufffc", "?"), ("e\u0301", "?"), ("\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", None)]:
    k = K()
    s.send({"type": "MSG_REACT", "channelId": ch, "messageId": m["messageId"], "clientMsgId": k, "emoji": emoji, "op": "add"})
    f = s.answer(k)
    print(f"      react {emoji!r}: {f['type']} {f.get('code')} {f.get('field')} {f.get('message', '')[:80]}")
    if want is None:
        check(f["type"] == "MSG_ACK", f"react {emoji!r}: {f['type']} {f.get('code')}")
    elif want != "?":
        check(f["type"] == "ERROR" and f.get("code") == want, f"react {emoji!r}: {f['type']} {f.get('code')}")

# -- channel names
for name, ok in [("e\u0301\u0301 room", True), ("\u202egnp.exe", None), ("\ufffc", None), ("a" * 300, None),
                 ("x\u0000y", False), ("\U0001f4ac chat", True)]:
    st, body = http("PATCH", f"/v1/channels/{ch}", body={"name": name})
    print(f"      name {name[:12]!r}: {st} {str(body)[:100]}")
    if ok is True:
        check(st == 200 and body.get("name") == name, f"channel name {name[:12]!r}: {st}")
    elif ok is False:
        check(st == 400, f"channel name {name[:12]!r}: {st}")

# -- file names (protocol §18.1)
def up(fname_q, data=b"hello", ctype="text/plain", tok=ta, extra=None):
    q = f"?filename={fname_q}" if fname_q is not None else ""
    return http("POST", f"/v1/channels/{ch}/attachments{q}", token=tok, raw=data,
                headers={"Content-Type": ctype, **(extra or {})})

from urllib.parse import quote  # noqa: E402
for fname, want in [("ok.txt", 201), ("\u202egnp.exe", 400), ("\u200binvoice.pdf", 400), ("\ufffc", 400),
                    ("\U0001d159", 400), ("e\u0301.txt", 201), ("\u0301", 400), ("a" * 255, 201), ("a" * 256, 400),
                    ("é" * 128, 400), ("..", 400), (".", 400), ("a/b", 400), ("a\\b", 400), ("a\nb", 400),
                    ("\u00ad.txt", 400), ("\u2066x\u2069", 400), (" ", 400), ("\u3000", 400), ("\u115f\u1160", "?"),
                    ("\u2800", "?"), ("\U000e0001", "?"), ("\u034f", "?"), ("\u180e.txt", "?"), ("\ufe0f", "?")]:
    st, body = up(quote(fname, safe=""))
    shown = body.get("filename") if isinstance(body, dict) else body
    if want == "?":
        print(f"      filename {fname!r}: {st} {str(shown)[:60]}")
    else:
        check(st == want, f"filename {fname[:20]!r}: {st} (want {want}) {str(shown)[:60]}")
for q, want in [("%FF.txt", 400), ("%C0%AE%C0%AE", 400), ("%ED%A0%80", 400), ("%E2%80%AE", 400), ("%", 400),
                ("%2", 400), ("a%00b", 400), ("a+b.txt", 201)]:
    st, body = up(q)
    check(st == want, f"filename query {q!r}: {st} (want {want}) {str(body)[:80]}")

# -- hostile uploads: content types and bodies
for ctype, want in [("text/html", 415), ("image/svg+xml", 415), ("", 415), ("TEXT/PLAIN; charset=utf-8", 201),
                    ("text/plain;;;", "?"), ("text/plain\t", "?"), ("application/octet-stream, text/html", 415),
                    ("image/png", 400), ("image/jpeg", 400), ("image/gif", 400), ("image/webp", 400)]:
    st, body = up("x.bin", data=b"not an image", ctype=ctype)
    if want == "?":
        print(f"      content-type {ctype!r}: {st} {str(body)[:80]}")
    else:
        check(st == want, f"content-type {ctype!r}: {st} (want {want}) {str(body)[:80]}")


def raw_http(req, read_for=6):
    sk = socket.create_connection((HOST, PORT))
    sk.settimeout(read_for)
    sk.sendall(req)
    out = b""
    t0 = time.time()
    try:
        while time.time() - t0 < read_for:
            d = sk.recv(65536)
            if not d:
                break
            out += d
    except (socket.timeout, ConnectionResetError):
        pass
    sk.close()
    return out


def first(out):
    return out.split(b"\r\n")[0]


# lying Content-Length: says more than sent (then stalls), says less (then extra bytes)
path = f"/v1/channels/{ch}/attachments?filename=lie.txt"
head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ta}\r\nContent-Type: text/plain\r\n")
t0 = time.time()
out = raw_http((head + "Content-Length: 1000\r\n\r\n").encode() + b"short", read_for=15)
check(b" 408 " in out.split(b"\r\n")[0] or out == b"", f"Content-Length 1000, 5 sent: {out[:40]!r} after {time.time() - t0:.1f}s")
out = raw_http((head + "Content-Length: 3\r\n\r\n").encode() + b"abcdefGET /healthz HTTP/1.1\r\n\r\n", read_for=3)
lines = out.split(b"\r\n")
check(b" 201 " in lines[0], f"Content-Length 3 with more bytes: first answer {lines[0]!r}; next: {out.count(b'HTTP/1.1')} answers")
out = raw_http((head + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n").encode() + b"hello!", read_for=3)
check(b" 400 " in out.split(b"\r\n")[0], f"two Content-Lengths: {first(out)!r}")
out = raw_http((head + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n").encode() + b"5\r\nhello\r\n0\r\n\r\n", read_for=3)
print(f"      TE chunked + CL: {first(out)!r}")
out = raw_http((head + "Transfer-Encoding: chunked\r\n\r\n").encode() + b"fffffffffffffffff\r\nhello", read_for=3)
check(b" 400 " in out.split(b"\r\n")[0] or out == b"", f"chunk size overflow: {first(out)!r}")
out = raw_http((head + "Content-Length: 99999999999\r\n\r\n").encode(), read_for=3)
check(b" 413 " in out.split(b"\r\n")[0], f"Content-Length 1e11: {first(out)!r}")
out = raw_http((head + "Content-Length: -1\r\n\r\n").encode(), read_for=3)
check(b" 400 " in out.split(b"\r\n")[0], f"Content-Length -1: {first(out)!r}")
# Expect: 100-continue then nothing
out = raw_http((head + "Content-Length: 10\r\nExpect: 100-continue\r\n\r\n").encode(), read_for=14)
print(f"      Expect 100-continue, no body: {out[:60]!r}")

# decompression-bomb images
import struct  # noqa: E402
import zlib  # noqa: E402


def png(w, h, rows=None, extra_chunks=b""):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    raw = rows if rows is not None else b"".join(b"\x00" + b"\x00" * w for _ in range(h))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra_chunks + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


bomb = png(7000, 7000)  # 49 Mpx of zeros, ~50 KB compressed
t0 = time.time()
st, body = up("bomb.png", data=bomb, ctype="image/png")
print(f"      49-Mpx zero PNG ({len(bomb)} B): {st} in {time.time() - t0:.1f}s {str(body)[:80]}")
st, body = up("bomb2.png", data=png(8000, 8000, rows=b"\x00" * 10), ctype="image/png")
check(st == 400, f"64-Mpx PNG header: {st}")
# 1x1 PNG whose IDAT inflates to 40 MB (rows longer than the image)
st, body = up("trail.png", data=png(1, 1, rows=b"\x00\x00" + b"\x00" * 40_000_000), ctype="image/png")
print(f"      1x1 PNG with 40 MB of inflated trailing data: {st} {str(body)[:80]}")
# many zTXt chunks
ztxt = b"".join(struct.pack(">I", len(d)) + b"zTXt" + d + struct.pack(">I", zlib.crc32(b"zTXt" + d) & 0xFFFFFFFF)
                for d in [b"k\x00\x00" + zlib.compress(b"A" * 5_000_000, 9)] * 20)
t0 = time.time()
st, body = up("ztxt.png", data=png(2, 2, extra_chunks=ztxt), ctype="image/png")
print(f"      2x2 PNG with 20 zTXt of 5 MB each: {st} in {time.time() - t0:.1f}s {str(body)[:80]}")
# GIF with a huge logical screen and many frames
gif = b"GIF89a" + struct.pack("<HH", 65535, 65535) + b"\x00\x00\x00"
frame = b"\x2c" + struct.pack("<HHHH", 0, 0, 65535, 65535) + b"\x00" + b"\x02\x02\x44\x01\x00"
st, body = up("big.gif", data=gif + frame * 3 + b"\x3b", ctype="image/gif")
check(st == 400, f"65535x65535 GIF: {st} {str(body)[:80]}")
# truncated upload: client sends half and closes
out = raw_http((head + "Content-Length: 100000\r\n\r\n").encode() + b"x" * 50000, read_for=1)
st, body = http("GET", f"/v1/channels/{ch}/messages?afterSeq=0&limit=1", token=ta)
check(st == 200, f"after a truncated upload the server answers: {st}")

still_sends()
print(f"{len(FINDINGS)} FAIL")
for f in FINDINGS:
    print("  FAIL", f)
