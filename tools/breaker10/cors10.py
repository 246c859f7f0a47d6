"""CORS (§11): only listed origins get CORS headers, exactly (no suffix, prefix, scheme, case or
'null' tricks), on user routes only; admin routes never send them, also for a listed origin.

  serve.sh sqlite 19232 CHATD_CORS_ALLOWED_ORIGINS=https://app.example.com
  CHATD_URL=http://127.0.0.1:19232 python3 cors10.py
"""
import http.client
import urllib.parse

from lib import FINDINGS, URL, check, token, uid

H = urllib.parse.urlparse(URL)
tok = token(uid("co"))


def req(method, path, origin, extra=None):
    c = http.client.HTTPConnection(H.hostname, H.port, timeout=10)
    hd = {"Origin": origin}
    hd.update(extra or {})
    c.request(method, path, headers=hd)
    r = c.getresponse()
    r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}


pre = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"}
st, hd = req("OPTIONS", "/v1/me/channels", "https://app.example.com", pre)
check(hd.get("access-control-allow-origin") == "https://app.example.com", f"listed origin preflight: {st} {hd.get('access-control-allow-origin')}")
for o in ["https://app.example.com.evil.net", "https://evil.app.example.com", "http://app.example.com",
          "https://app.example.com:443", "https://APP.example.com", "null", "https://app.example.co",
          "https://app.example.com/", "*"]:  # (a trailing tab is OWS: the same origin)
    st, hd = req("OPTIONS", "/v1/me/channels", o, pre)
    acao = hd.get("access-control-allow-origin")
    check(acao in (None,), f"origin {o!r}: ACAO {acao!r}")
for path in ["/v1/channels", "/v1/tokens", "/v1/flags", "/v1/users/x/export"]:
    st, hd = req("OPTIONS", path, "https://app.example.com", pre)
    check(not any(k.startswith("access-control-") for k in hd), f"admin route {path} preflight with a listed origin: {st} {[k for k in hd if k.startswith('access-control')]}")
st, hd = req("GET", "/v1/me/channels", "https://app.example.com", {"Authorization": f"Bearer {tok}"})
print(f"   GET with a listed origin: {st} ACAO {hd.get('access-control-allow-origin')} credentials {hd.get('access-control-allow-credentials')} vary {hd.get('vary')}")
print("FINDINGS:", FINDINGS)
