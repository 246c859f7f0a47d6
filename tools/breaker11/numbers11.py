"""Numbers whose double hides a fraction (the tenth run's fix 3) in members a body does not
read: the backend post ignores unknown members, so `{"traceId": 1e-400}` must be taken like
`{"traceId": 1.5}`; a member read as an integer must still be refused.

usage: CHATD_URL=http://127.0.0.1:PORT python3 numbers11.py
"""
from lib import channel, check, http, uid, FINDINGS

C = uid("num")
channel(C, ["alice"])
H = {"Content-Type": "application/json"}
for i, extra in enumerate(['"traceId": 1.5', '"traceId": 1e-400', '"score": 0.99999999999999999',
                           '"clientTs": 1796662687199.0001']):
    raw = ('{"senderId": "alice", "clientMsgId": "n%d-%s", "body": "hi", %s}' % (i, C, extra)).encode()
    s, b = http("POST", f"/v1/channels/{C}/messages", raw=raw, headers=H)
    check(s == 201, f"backend post with an unknown member {extra}: {s} {b if s != 201 else ''}")
s, b = http("POST", "/v1/tokens", raw=b'{"userId": "alice", "traceId": 1e-400, "ttlSeconds": 0.99999999999999999}', headers=H)
check(s == 400 and b["error"].get("field") == "ttlSeconds", f"ttlSeconds with a hidden fraction still refused: {s} {b}")
for raw in [b'{"name": 1e-400}', b'{"visibility": 1e-400}']:
    s, b = http("PATCH", f"/v1/channels/{C}", raw=raw, headers=H)
    print(f"   info: PATCH {raw.decode()}: {s} {b['error']['message'] if s == 400 else b}")
print("FINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
