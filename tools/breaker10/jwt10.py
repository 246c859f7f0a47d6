"""Tokens signed with the right secret but odd claims: `sub` outside the userId grammar ('.',
'..', 129 chars, a space, a slash, NUL, non-ASCII, empty, a number), `exp`/`nbf`/`iat` of
odd types (fraction, string, negative, bool), alg spellings, a `kid` with HS256, header `crit`.
Expect 401 for each bad one (WebSocket and HTTP), nothing created.

  CHATD_URL=http://127.0.0.1:19100 python3 jwt10.py   (secret: serve.sh's breaker10 secret)
"""
import time

import jwt
from websockets.sync.client import connect

from lib import FINDINGS, URL, WS, check, http

SECRET = "breaker10-jwt-secret-0123456789abcdef0123456789"
now = int(time.time())


def tok(claims, headers=None):
    return jwt.encode(claims, SECRET, algorithm="HS256", headers=headers)


def try_ws(t):
    try:
        ws = connect(WS, additional_headers={"Authorization": f"Bearer {t}"}, open_timeout=5)
        hello = ws.recv(timeout=5)
        ws.close()
        return 101, hello[:120]
    except Exception as e:
        return getattr(getattr(e, "response", None), "status_code", str(e)[:60]), None


cases = [
    ("sub '.'", {"sub": ".", "exp": now + 600}, None),
    ("sub '..'", {"sub": "..", "exp": now + 600}, None),
    ("sub 129 chars", {"sub": "u" * 129, "exp": now + 600}, None),
    ("sub with space", {"sub": "a b", "exp": now + 600}, None),
    ("sub with slash", {"sub": "a/b", "exp": now + 600}, None),
    ("sub NUL", {"sub": "a\x00", "exp": now + 600}, None),
    ("sub non-ASCII", {"sub": "ä", "exp": now + 600}, None),
    ("sub empty", {"sub": "", "exp": now + 600}, None),
    ("sub number", {"sub": 5, "exp": now + 600}, None),
    ("sub array", {"sub": ["a"], "exp": now + 600}, None),
    ("exp fraction", {"sub": "a", "exp": now + 600.5}, "ok?"),
    ("exp string", {"sub": "a", "exp": str(now + 600)}, None),
    ("exp bool", {"sub": "a", "exp": True}, None),
    ("exp negative", {"sub": "a", "exp": -1}, None),
    ("nbf future", {"sub": "a", "exp": now + 600, "nbf": now + 300}, None),
    ("nbf string", {"sub": "a", "exp": now + 600, "nbf": "0"}, None),
    ("nbf 1e300", {"sub": "a", "exp": now + 600, "nbf": 1e300}, None),
    ("iat string", {"sub": "a", "exp": now + 600, "iat": "x"}, "ok?"),
    ("exp missing", {"sub": "a"}, None),
    ("crit header", {"sub": "a", "exp": now + 600}, {"crit": ["exp"]}),
    ("kid with HS256", {"sub": "a", "exp": now + 600}, {"kid": "nope"}),
    ("typ weird", {"sub": "a", "exp": now + 600}, {"typ": "at+jwt"}),
]
for name, claims, hdr in cases:
    t = tok(claims, hdr if isinstance(hdr, dict) else None)
    st, hello = try_ws(t)
    s2, b = http("GET", "/v1/me/channels", token=t)
    if hdr == "ok?" or name in ("typ weird",):
        print(f"   {name}: ws {st}, http {s2}")
        continue
    check(st != 101 and s2 == 401, f"{name}: ws {st} {hello or ''}, http {s2}")
print("FINDINGS:", FINDINGS)
