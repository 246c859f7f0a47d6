"""Hostile search queries (§18), forged cursors, and odd cursors on the members route and the
directory (§13). Any 5xx, a hang, or a leak is a finding."""
import json
import time
import urllib.parse
import uuid

from lib import Session, channel, check, http, token, uid, FINDINGS

A, B = uid("alice"), uid("bob")
mine, secret = uid("mine"), uid("secret")
channel(mine, [A])
channel(secret, [B])
ta, tb = token(A), token(B)
a, b = Session(ta), Session(tb)
for i in range(30):
    a.send_msg(mine, f"hello world {i} alpha_beta 100% back\\slash \"quoted\" NEAR(x y) col:umn *star ^caret")
b.send_msg(secret, "hello world SECRETWORD")
qs = ['"', '""', '" OR "', 'hello" OR "x', 'NEAR(hello world)', 'text:hello', '*', 'hel*', '^hello', 'hello AND',
      'OR', 'NOT hello', '(', ')', '{text}:hello', '\\', '%', '_', '%%%', '__', 'a%b', "'", "';--", '\u3000',
      'x' * 256, 'é' * 128, '🙂' * 64, 'a ' * 128, 'ab ' * 85, '\ufeff', '\u200b', 'ǅ', 'İ', '\U0010ffff',
      'SECRETWORD', 'secretword', '%SECRET%', '_ECRETWORD']
for q in qs:
    t0 = time.time()
    s, body = http("GET", "/v1/me/search?q=" + urllib.parse.quote(q), token=ta)
    dt = time.time() - t0
    leak = "SECRETWORD" in json.dumps(body)
    check(s in (200, 400) and not leak and dt < 5, f"q={q[:30]!r}: {s} {dt:.2f}s {'LEAK' if leak else ''} {str(body)[:100] if s != 200 else len(body['results'])}")
# literal matches of special characters
for q, want in [("100%", 30), ("alpha_beta", 30), ("back\\slash", 30), ('"quoted"', 30), ("NEAR(x", 30), ("*star", 30), ("a_b", 0), ("10%0", 0)]:
    s, body = http("GET", "/v1/me/search?limit=100&q=" + urllib.parse.quote(q), token=ta)
    n = len(body.get("results", [])) if s == 200 else None
    check(n == want, f"literal q={q!r}: {n} results, want {want}")
# cursors
for cur in ["0", "-1", "1", "9223372036854775807", "9223372036854775808", "1e3", "+5", "01", " 1", "abc",
            str(uuid.uuid4()), "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "x" * 5000]:
    s, body = http("GET", "/v1/me/search?q=hello&before=" + urllib.parse.quote(cur), token=ta)
    leak = "SECRETWORD" in json.dumps(body)
    check(s in (200, 400) and not leak, f"before={cur[:40]!r}: {s} {str(body)[:80]}")
# paging to the end: no result twice
seen, cur, pages = set(), None, 0
while True:
    p = "/v1/me/search?q=hello&limit=7" + (f"&before={cur}" if cur else "")
    s, body = http("GET", p, token=ta)
    pages += 1
    for r in body["results"]:
        check(r["messageId"] not in seen, f"result twice across pages {r['messageId']}")
        seen.add(r["messageId"])
    cur = body.get("next")
    if not cur or pages > 20:
        break
check(len(seen) == 30, f"paging finds all 30 ({len(seen)})")
for lim in ["0", "101", "-1", "1e1", "1.0", "abc", "99999999999999999999"]:
    s, body = http("GET", f"/v1/me/search?q=hello&limit={lim}", token=ta)
    check(s == 400, f"search limit={lim}: {s}")
s, body = http("GET", f"/v1/me/search?q=hello&channelId={secret}", token=ta)
check(s in (403, 400) and "SECRET" not in json.dumps(body), f"search in a channel not mine: {s}")
s, body = http("GET", "/v1/me/search?q=hello&q=SECRETWORD", token=ta)
check(s in (200, 400) and "SECRETWORD" not in json.dumps(body), f"q twice: {s}")

# members route and directory cursors
for after in ["", ".", "..", "a" * 129, "%00", "zzz", "\u00e9", "a/b", "*", "%25", str(10**30)]:
    s, body = http("GET", f"/v1/channels/{mine}/members?after=" + urllib.parse.quote(after), token=ta)
    check(s in (200, 400), f"members after={after[:20]!r}: {s} {str(body)[:80]}")
    s, body = http("GET", "/v1/directory?after=" + urllib.parse.quote(after), token=ta)
    check(s in (200, 400), f"directory after={after[:20]!r}: {s} {str(body)[:80]}")
for lim in ["0", "501", "-1", "1e2", " 5", "5 ", "0x10"]:
    s, body = http("GET", f"/v1/channels/{mine}/members?limit=" + urllib.parse.quote(lim), token=ta)
    check(s == 400, f"members limit={lim!r}: {s}")
    s, body = http("GET", "/v1/directory?limit=" + urllib.parse.quote(lim), token=ta)
    check(s == 400, f"directory limit={lim!r}: {s}")
for q in ["%", "_", "\\", "x" * 10000, "%00", "'"]:
    t0 = time.time()
    s, body = http("GET", "/v1/directory?q=" + urllib.parse.quote(q), token=ta)
    check(s in (200, 400) and time.time() - t0 < 3, f"directory q={q[:10]!r}: {s} {str(body)[:80]}")
s, body = http("GET", f"/v1/channels/{secret}/members", token=ta)
check(s == 403, f"members of a channel not mine: {s}")
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
