"""Export of a large user (§19): server RSS while the export streams to a fast reader, to a reader
that stops reading, and to several at once; the export's count and content; sends of others
meanwhile. usage: export_big.py SERVER_PID [MESSAGES] [BODY_BYTES]"""
import http.client
import json
import sys
import threading
import time
import urllib.parse
import uuid

from lib import ADMIN, URL, Session, channel, check, http as req, token, uid, FINDINGS

pid = int(sys.argv[1])
N = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
BODY = int(sys.argv[3]) if len(sys.argv) > 3 else 8000


def rss():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return -1


U, V = uid("big"), uid("other")
chs = [uid("ex") for _ in range(3)]
for c in chs:
    channel(c, [U, V])
s = Session(token(U))
body = "e" * BODY
for i in range(0, N, 500):
    ks = []
    for j in range(i, min(N, i + 500)):
        k = f"x{j}"
        ks.append(k)
        s.send({"type": "MSG_SEND", "channelId": chs[j % 3], "clientMsgId": k, "body": body, "mentions": [V]})
    for _ in ks:
        s.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=120)
print(f"seeded {N} x {BODY} B; rss {rss()} MiB", flush=True)
host = urllib.parse.urlparse(URL)


def export(read=True, hold=0):
    c = http.client.HTTPConnection(host.hostname, host.port, timeout=600)
    c.request("GET", f"/v1/users/{U}/export", headers={"Authorization": f"Bearer {ADMIN}"})
    r = c.getresponse()
    if not read:
        time.sleep(hold)
        c.close()
        return None
    lines = r.read().decode().splitlines()
    return r.status, lines


peak = [rss()]
stop = threading.Event()


def watch():
    while not stop.is_set():
        peak[0] = max(peak[0], rss())
        time.sleep(0.1)


w = threading.Thread(target=watch)
w.start()
t0 = time.time()
st, lines = export()
dt = time.time() - t0
kinds = {}
for ln in lines:
    k = json.loads(ln)["type"]
    kinds[k] = kinds.get(k, 0) + 1
end = json.loads(lines[-1])
check(st == 200 and end["type"] == "end" and kinds.get("message") == N, f"export: {st} {kinds} in {dt:.1f}s, last {end}")
print(f"   peak rss during one export: {peak[0]} MiB", flush=True)
# readers that stop reading, five at once, while the other user sends
base = rss()
holders = [threading.Thread(target=export, args=(False, 20)) for _ in range(5)]
for h in holders:
    h.start()
v = Session(token(V))
t1 = time.time()
lat = []
for i in range(50):
    a = time.time()
    v.send_msg(chs[0], f"meanwhile {i}")
    lat.append(time.time() - a)
for h in holders:
    h.join()
stop.set()
w.join()
lat.sort()
print(f"   5 stalled exports: rss {base} -> peak {peak[0]} MiB; others' send p50 {lat[25]*1000:.0f} ms max {lat[-1]*1000:.0f} ms")
check(peak[0] < base + 300, f"stalled exports hold bounded memory ({peak[0]} MiB peak)")
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
