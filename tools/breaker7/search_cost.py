"""CPU cost of one search request with the most expensive q the grammar allows (§18: q up to 256
bytes): many short terms (no trigram, a condition per row over the scan window) and non-ASCII
2-letter terms (SQLite: every case variant by instr). Reports each request's time and the
server's CPU. usage: search_cost.py SERVER_PID [SEED]"""
import json
import sys
import threading
import time
import urllib.parse

from lib import Session, channel, check, http, token, uid, FINDINGS

pid = int(sys.argv[1])
N = int(sys.argv[2]) if len(sys.argv) > 2 else 0


def cpu():
    with open(f"/proc/{pid}/stat") as f:
        p = f.read().split(")")[-1].split()
    return (int(p[11]) + int(p[12])) / 100.0


A = uid("searcher")
ch = uid("s")
channel(ch, [A])
ta = token(A)
a = Session(ta)
for i in range(0, N, 500):
    for j in range(i, min(N, i + 500)):
        a.send({"type": "MSG_SEND", "channelId": ch, "clientMsgId": f"k{j}", "body": f"plain chat text number {j} " * 4})
    for _ in range(i, min(N, i + 500)):
        a.next(lambda f: f["type"] in ("MSG_ACK", "ERROR"), timeout=120)
letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
accented = "éèêëàâäîïôöûüçñåøæœß"
qs = {
    "one common word": "text",
    "one rare word": "zzqqzz",
    "a lone 2-letter term": "zq",
    "62 one-char terms": " ".join(letters[:62])[:256],
    "50 two-letter non-ASCII terms": " ".join(a_ + b_ for a_ in accented for b_ in accented)[:51 * 3 - 1],
    "85 distinct 2-char ASCII terms": " ".join(a_ + b_ for a_ in "xyz" for b_ in letters)[:256].rsplit(" ", 1)[0],
}
for name, q in qs.items():
    c0, t0 = cpu(), time.time()
    s, body = http("GET", "/v1/me/search?limit=100&q=" + urllib.parse.quote(q), token=ta, timeout=120)
    dt, dc = time.time() - t0, cpu() - c0
    print(f"   {name:35s} {len(q.encode())}B: {s} {dt * 1000:7.0f} ms, server CPU {dc * 1000:7.0f} ms, "
          f"{len(body.get('results', [])) if isinstance(body, dict) else body} results, next={bool(isinstance(body, dict) and body.get('next'))}", flush=True)
# 4 clients at once with the worst q, against another user's sends
worst = qs["50 two-letter non-ASCII terms"]
B = uid("bystander")
cb = uid("b")
channel(cb, [B])
b = Session(token(B))
stop = threading.Event()
done = [0]


def hammer():
    while not stop.is_set():
        http("GET", "/v1/me/search?limit=100&q=" + urllib.parse.quote(worst), token=ta, timeout=120)
        done[0] += 1


hs = [threading.Thread(target=hammer) for _ in range(4)]
c0 = cpu()
for h in hs:
    h.start()
lat = []
for i in range(30):
    t = time.time()
    b.send_msg(cb, f"bystander {i}")
    lat.append(time.time() - t)
    time.sleep(0.1)
stop.set()
for h in hs:
    h.join()
lat.sort()
print(f"   4 searchers: {done[0]} searches, bystander send p50 {lat[15] * 1000:.0f} ms max {lat[-1] * 1000:.0f} ms, server CPU {cpu() - c0:.1f}s")
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
