"""Hostile HTTP JSON bodies: deep nesting in metadata (under and over serde's 128), huge bodies
on admin and user routes (memory), duplicate keys, lone surrogates and NUL in names, metadata,
flag notes, member bodies; each refused with the spec's error (or taken as documented), nothing
changed, the server's RSS bounded.

  CHATD_URL=http://127.0.0.1:19100 CHATD_PID=<pid> python3 http10.py
"""
import os
import time
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

PID = int(os.environ.get("CHATD_PID", "0"))


def rss():
    if not PID:
        return 0
    for line in open(f"/proc/{PID}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return 0


A, B = uid("ha"), uid("hb")
ch = uid("h10")
channel(ch, [A, B], owners=[A])
ta = token(A)
J = {"Content-Type": "application/json"}


def raw(method, path, body, tok=None, **kw):
    return http(method, path, token=tok or os.environ.get("CHATD_ADMIN_TOKEN", "breaker10-admin-token-0123456789"),
                raw=body if isinstance(body, bytes) else body.encode(), headers=J, **kw)


for depth in (100, 127, 128, 129, 5000):
    body = '{"metadata":{"a":' + "[" * depth + "]" * depth + "}}"
    st, b = raw("PATCH", f"/v1/channels/{ch}", body)
    print(f"   metadata nested {depth}: {st} {str(b)[:90]}")
    check(st in (200, 400), f"metadata nested {depth}: {st}")
st, b = http("GET", f"/v1/channels/{ch}")
print(f"   channel after: metadata {str(b.get('metadata'))[:40]}")
s = Session(ta)
print(f"   HELLO after nested metadata: {len(s.hello['channels'])} channels")
for label, body in [
    ("name lone surrogate", '{"name":"a\\ud800b"}'),
    ("name NUL", '{"name":"a\\u0000b"}'),
    ("metadata key NUL", '{"metadata":{"a\\u0000":1}}'),
    ("metadata value lone surrogate", '{"metadata":{"a":"\\udc00"}}'),
    ("metadata duplicate keys", '{"metadata":{"a":1,"a":2}}'),
    ("body duplicate name", '{"name":"x","name":"y"}'),
    ("metadata 1e400", '{"metadata":{"a":1e400}}'),
    ("metadata array", '{"metadata":[1,2]}'),
    ("trailing garbage", '{"name":"x"} {"name":"y"}'),
    ("BOM", '\ufeff{"name":"x"}'),
]:
    st, b = raw("PATCH", f"/v1/channels/{ch}", body)
    check(st == 400, f"PATCH {label}: {st} {str(b)[:100]}")
st, b = http("GET", f"/v1/channels/{ch}")
print(f"   channel name after: {b.get('name')!r}, metadata {str(b.get('metadata'))[:60]}")
mid = s.send_msg(ch, "flag me")["messageId"]
for label, body in [("note lone surrogate", '{"reason":"spam","note":"\\ud800"}'),
                    ("reason number", '{"reason":1}'), ("note 100 KB", '{"reason":"spam","note":"' + "x" * 100000 + '"}')]:
    st, b = raw("POST", f"/v1/messages/{mid}/flags", body, tok=ta)
    check(st == 400, f"flag {label}: {st} {str(b)[:100]}")
for label, body in [("role array", '{"role":["owner"]}'), ("mutedUntil string", '{"mutedUntil":"1"}'),
                    ("role OWNER", '{"role":"OWNER"}'), ("body not JSON", "role=owner")]:
    st, b = raw("PUT", f"/v1/channels/{ch}/members/{B}", body)
    check(st == 400, f"PUT member {label}: {st} {str(b)[:100]}")
st, m = http("GET", f"/v1/channels/{ch}/members")
print(f"   B's role after: {[x['role'] for x in m['members'] if x['userId'] == B]}")
# huge bodies
r0 = rss()
for path, method, tok in [("/v1/channels", "POST", None), (f"/v1/channels/{ch}", "PATCH", None),
                          ("/v1/me/channels", "POST", ta), (f"/v1/channels/{ch}/messages", "POST", None)]:
    body = b'{"name":"' + b"x" * 50_000_000 + b'"}'
    t0 = time.time()
    try:
        st, b = raw(method, path, body, tok=tok, timeout=60)
    except Exception as e:
        st, b = f"exception {type(e).__name__}", None
    check(st in (400, 413), f"{method} {path.split('/')[-1][:12]} with a 50 MB body: {st} in {time.time() - t0:.1f} s; RSS {r0} -> {rss()} MiB {str(b)[:80]}")
print("FINDINGS:", FINDINGS)
