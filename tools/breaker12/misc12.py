"""Breaker12's probes of paging cursors, mentions of non-members, cross-channel references
through the backend post, one key raced through the backend post and a frame with different
bodies, odd message ids in receipts, and attachment types and shapes.

usage: CHATD_URL=http://127.0.0.1:PORT python3 misc12.py
"""
import io
import socket
import struct
import threading
import time
import urllib.parse
import uuid
import zlib

from lib import FINDINGS, URL, Session, channel, check, http, token, uid

A, B, C = uid("a"), uid("b"), uid("c")
ta, tb, tc = token(A), token(B), token(C)

# ---------- directory and members paging ----------
tag = uid("dir").replace("-", "")
pubs = []
for i, name in enumerate(["100% club", "a_b room", "axb room", "İzmir Kulübü", "IZMIR fans", "plain"]):
    cid = f"{tag}-{i:02d}"
    channel(cid, [A], visibility="public")
    st, _ = http("PATCH", f"/v1/channels/{cid}", body={"name": name})
    assert st == 200
    pubs.append((cid, name))

def directory(**q):
    return http("GET", "/v1/directory?" + urllib.parse.urlencode(q), token=tb)

for bad in ["", ".", "..", "x" * 129, "a b", "%", "a/b"]:
    st, b = directory(after=bad)
    check(st in (200, 400), f"directory after={bad[:20]!r}: {st} {str(b)[:100]}")
for lim in ["0", "501", "-1", "1.5", "", "1e2"]:
    st, b = directory(limit=lim)
    print(f"   directory limit={lim!r}: {st} {str(b)[:80]}")
st, b = directory(q="x" * 201)
check(st == 400, f"directory q of 201 chars: {st}")
def names(q):
    st, b = directory(q=q, limit="500")
    assert st == 200, (st, b)
    return sorted(c["name"] for c in b["channels"] if c["channelId"].startswith(tag))
check(names("%") == ["100% club"], f"directory q=% finds only '100% club': {names('%')}")
check(names("_") == ["a_b room"], f"directory q=_ finds only 'a_b room': {names('_')}")
iz = {q: names(q) for q in ["izmir", "İzmir", "IZMIR", "İZMİR", "kulübü", "KULÜBÜ"]}
for q, got in iz.items():
    print(f"   directory q={q!r}: {got}")
check(iz["izmir"] == iz["IZMIR"], f"directory: 'izmir' and 'IZMIR' find the same ({iz['izmir']} / {iz['IZMIR']})")
check(iz["kulübü"] == iz["KULÜBÜ"] == ["İzmir Kulübü"], f"directory: 'kulübü' and 'KULÜBÜ' find the Kulübü channel")
# pages of 1 with a q: all pages together == one page
got, after = [], None
for _ in range(20):
    q = {"q": "room", "limit": "1"}
    if after:
        q["after"] = after
    st, b = directory(**q)
    assert st == 200, b
    got += [c["channelId"] for c in b["channels"]]
    if not b["hasMore"]:
        break
    after = b["channels"][-1]["channelId"]
st, b = directory(q="room", limit="500")
check(got == [c["channelId"] for c in b["channels"]], "directory q=room in pages of 1 == one page")

# members
mch = uid("mem")
users = [uid(f"m{i}") for i in range(5)]
channel(mch, [A] + users)
for bad in ["", ".", "x" * 129, "a b", "ü"]:
    st, b = http("GET", f"/v1/channels/{mch}/members?" + urllib.parse.urlencode({"after": bad}), token=ta)
    check(st in (200, 400), f"members after={bad[:20]!r}: {st} {str(b)[:100]}")

# ---------- mentions of non-members ----------
g = uid("grp")
channel(g, [A, C])
sa, sb, sc = Session(ta), Session(tb), Session(tc)
ack = sa.send_msg(g, "hi @b @c @nobody", mentions=[B, C, "nobody-" + uid("x")])
check(ack["type"] == "MSG_ACK", f"send with mentions of non-members: {ack}")
recv = sc.next(lambda f: f["type"] == "MSG_RECV" and f["channelId"] == g)
check(recv.get("mentions") == [C], f"stored mentions keep members only: {recv.get('mentions')}")
time.sleep(0.3)
check(not any(f.get("channelId") == g for f in sb.frames), "a mentioned non-member gets nothing")
st, _ = http("PUT", f"/v1/channels/{g}/members/{B}")
sb.close(); sb = Session(tb)
ent = [c for c in sb.hello["channels"] if c["channelId"] == g]
check(ent and ent[0].get("unreadMentions", 0) == 0, f"B, added after, has unreadMentions 0: {ent}")
for bad in [[""], ["."], ["a b"], [1], [None], "b", [["x"]], ["x" * 129]]:
    a = sa.send_msg(g, "m", mentions=bad)
    check(a["type"] == "ERROR" and a.get("field") == "mentions", f"mentions={str(bad)[:30]}: {a.get('code')} {a.get('field')}")

# ---------- backend post references to another channel ----------
other = uid("oth")
channel(other, [A])
root_other = sa.send_msg(other, "other root")["messageId"]
root_g = sa.send_msg(g, "g root")["messageId"]
for field in ["replyTo", "threadId"]:
    st, b = http("POST", f"/v1/channels/{g}/messages",
                 body={"senderId": A, "clientMsgId": uuid.uuid4().hex, "body": "x", field: root_other})
    check(st == 400 and b["error"].get("field") == field, f"backend post {field} of another channel: {st} {b}")
# a reply in a thread used as threadId
r1 = sa.send_msg(g, "reply", threadId=root_g)
st, b = http("POST", f"/v1/channels/{g}/messages",
             body={"senderId": A, "clientMsgId": uuid.uuid4().hex, "body": "x", "threadId": r1["messageId"]})
check(st == 400, f"backend post threadId of a thread reply: {st} {b}")

# ---------- one key raced through the backend post and a frame, different bodies ----------
stored_twice = 0
for rnd in range(20):
    key = f"race-{rnd}-{uuid.uuid4().hex[:8]}"
    res = {}
    def post():
        res["http"] = http("POST", f"/v1/channels/{g}/messages",
                           body={"senderId": A, "clientMsgId": key, "body": "via http"})
    t = threading.Thread(target=post)
    t.start()
    res["ws"] = sa.send_msg(g, "via ws", cmid=key)
    t.join()
    hs, hb = res["http"]
    ws = res["ws"]
    ok = (hs in (200, 201)) != (ws["type"] == "MSG_ACK")
    if not ok:
        stored_twice += 1
        print(f"   round {rnd}: http {hs} {hb}; ws {ws}")
check(stored_twice == 0, f"one key, two bodies, http vs ws raced 20 times: exactly one stored each time ({stored_twice} bad)")

# ---------- odd message ids in receipts ----------
for mid in [str(uuid.uuid4()), "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
            root_g.upper(), root_g.replace("-", ""), "{" + root_g + "}", "x" * 10000, root_other]:
    for typ in ["MSG_READ", "MSG_DELIVERED"]:
        sc.send({"type": typ, "messageId": mid})
        f = sc.next(lambda f: f["type"] in ("ERROR", "RECEIPT"), timeout=5)
        check(f["type"] == "ERROR", f"{typ} {mid[:40]!r}: {f.get('code')} {f.get('field')}")


# ---------- bytes that are not UTF-8 in query strings ----------
for path in ["/v1/me/search?q=%FF", "/v1/me/search?q=%ED%A0%80abc", "/v1/directory?q=%C0%80",
             "/v1/directory?after=%FF", f"/v1/channels/{g}/members?after=%ED%A0%80", "/v1/me/search?q=a%00b",
             f"/v1/channels/{g}/attachments?filename=%00.txt", f"/v1/channels/{g}/attachments?filename=%FF.txt"]:
    method = "POST" if "attachments" in path else "GET"
    st, b = http(method, path, token=ta, raw=b"x" if method == "POST" else None,
                 headers={"Content-Type": "text/plain"} if method == "POST" else None)
    check(st == 400, f"{method} {path[:60]}: {st} {str(b)[:160]}")

# ---------- attachments ----------
def upload(ch, tok, data, ctype, filename="f.bin", headers=None):
    h = {"Content-Type": ctype} if ctype is not None else {}
    h.update(headers or {})
    return http("POST", f"/v1/channels/{ch}/attachments?filename={urllib.parse.quote(filename)}",
                token=tok, raw=data, headers=h)

def png(w, h):
    raw = b"".join(b"\x00" + b"\x00" * ((w + 7) // 8) for _ in range(h))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))

svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
html = b"<html><script>alert(1)</script></html>"
for ctype, data in [("image/svg+xml", svg), ("text/html", html), ("application/xhtml+xml", html),
                    ("image/png", svg), ("text/plain", html), ("TEXT/PLAIN", html), ("text/plain; charset=utf-8", html),
                    ("text/plain;charset=utf-7", html), ("text/plain, text/html", html), ("image/png; x=1", png(1, 1)),
                    ("", html), (None, html), ("application/octet-stream", svg)]:
    st, b = upload(g, ta, data, ctype)
    print(f"   upload Content-Type {ctype!r}: {st} {b.get('contentType') if isinstance(b, dict) and 'contentType' in b else str(b)[:90]}")
    if st == 201:
        req = urllib.request.Request(URL + f"/v1/attachments/{b['attachmentId']}", headers={"Authorization": f"Bearer {ta}"})
        with urllib.request.urlopen(req) as r:
            hd = {k.title(): v for k, v in r.headers.items()}
        served = hd.get("Content-Type")
        check(not served.startswith(("text/html", "image/svg", "application/xhtml")),
              f"  served as {served!r} nosniff={hd.get('X-Content-Type-Options')} disp={hd.get('Content-Disposition','')[:30]!r}")
        check(hd.get("X-Content-Type-Options") == "nosniff", "  nosniff")

# extreme aspect ratios: thumbnails
for w, h in [(1, 30000), (30000, 1), (1, 1), (7000, 7000)]:
    st, b = upload(g, ta, png(w, h), "image/png", "p.png")
    line = f"   PNG {w}x{h}: {st} {b if st != 201 else (b.get('width'), b.get('height'))}"
    print(line)
    if st == 201:
        req = urllib.request.Request(URL + f"/v1/attachments/{b['attachmentId']}/thumbnail",
                                     headers={"Authorization": f"Bearer {ta}"})
        try:
            with urllib.request.urlopen(req) as r:
                th = r.read()
                print(f"     thumbnail {r.status} {r.headers.get('Content-Type')} {len(th)} bytes")
        except urllib.error.HTTPError as e:
            check(False, f"thumbnail of {w}x{h}: {e.code}")

# lying Content-Length: claims more than it sends, then closes; and claims less
host, port = URL.split("//")[1].split(":")
def raw_req(data, wait=3):
    s = socket.create_connection((host, int(port)))
    s.sendall(data)
    s.settimeout(wait)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    s.close()
    return out
body = b"hello world"
st0, list0 = http("GET", f"/v1/users/{A}/export")
head = (f"POST /v1/channels/{g}/attachments?filename=lie.txt HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ta}\r\n"
        f"Content-Type: text/plain\r\n")
out = raw_req((head + "Content-Length: 1000\r\n\r\n").encode() + body, wait=2)
print(f"   Content-Length 1000, 11 bytes sent, then silence 2 s and close: {out[:60]!r}")
out = raw_req((head + "Content-Length: 5\r\n\r\n").encode() + body + b"\r\n\r\n")
print(f"   Content-Length 5 with 11 bytes: {out.decode(errors='replace')[:400]!r}")
st, b = http("GET", f"/v1/users/{A}/export")
lines = [l for l in b.splitlines()] if isinstance(b, str) else []
lies = [l for l in lines if "lie.txt" in l]
print(f"   export lists {len(lies)} lie.txt attachment(s): {[l[:200] for l in lies]}")
check(all('"size":5' in l for l in lies), "only the 5-byte lie.txt (the length said) is stored")

for x in (sa, sb, sc):
    x.close()
print(f"{len(FINDINGS)} finding(s)")
