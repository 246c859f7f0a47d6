"""Webhooks against a hostile receiver (no earlier hostile run looked at them).

usage: webhook11.py HOOK_PORT   against a server started with
  bash tools/breaker11/serve.sh sqlite|pg PORT CHATD_WEBHOOK_URL=http://127.0.0.1:HOOK_PORT/hook \
       CHATD_WEBHOOK_SECRET=whsec_breaker11 CHATD_WEBHOOK_TIMEOUT_MS=2000
  and CHATD_URL=http://127.0.0.1:PORT.

Checks:
1. `notify` (§16): notify all / mentions / none, snoozed (future and past), a blocker of the
   sender, a connected member, a thread reply, mentionAll by a moderator, a reaction and an edit
   (no notify for them); every signature verifies; entries of a channel in seq order.
2. Entries held back by a failing receiver (500) and sent after the message was edited, quoted,
   deleted and its sender erased: no request may carry the erased text (§12 "An entry's MSG_RECV
   is read when it is sent"; guarantee 14).
3. A receiver answering 200 with a body that never ends: the cursor still moves (a 2xx moves
   it, "a body is ignored"), later entries arrive.
4. A receiver answering 302: not followed (§12), retried until it answers 2xx.
"""
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lib import Session, channel, check, http, token, uid, FINDINGS

HOOK_PORT = int(sys.argv[1])
SECRET = b"whsec_breaker11"
MODE = {"mode": "ok"}
GOT = []  # (path, body bytes, signature ok)
LOCK = threading.Lock()


class Hook(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        sig = dict(p.split("=", 1) for p in self.headers.get("Chatd-Signature", "t=0,v1=").split(","))
        mac = hmac.new(SECRET, sig.get("t", "").encode() + b"." + body, hashlib.sha256).hexdigest()
        ok = hmac.compare_digest(mac, sig.get("v1", ""))
        mode = MODE["mode"]
        with LOCK:
            GOT.append((self.path, body, ok, mode))
        if self.path != "/hook" or mode in ("ok",):
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "down":
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "redirect":
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{HOOK_PORT}/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "slow":
            time.sleep(0.5)
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "endless":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for _ in range(600):
                    self.wfile.write(b"400\r\n" + b"x" * 1024 + b"\r\n")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
            self.close_connection = True


srv = ThreadingHTTPServer(("127.0.0.1", HOOK_PORT), Hook)
srv.daemon_threads = True
threading.Thread(target=srv.serve_forever, daemon=True).start()


def entries(since=0):
    out = []
    with LOCK:
        got = GOT[since:]
    for path, body, ok, mode in got:
        if path != "/hook" or mode not in ("ok", "slow"):
            continue
        ev = json.loads(body)
        if ev["type"] == "entry":
            out.append(ev)
        elif ev["type"] == "entries":
            out.extend(ev["entries"])
    return out


def wait_for(pred, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.2)
    return False


def of_channel(cid):
    return [it for it in entries() if it["entry"]["channelId"] == cid]


# ---- 1. notify
S, M = uid("s"), uid("mod")
u = {k: uid(k) for k in ["all", "men", "none", "snz", "past", "blk", "on"]}
C = uid("wh")
channel(C, [S, *u.values()], owners=[M])
for k, v in [("men", "mentions"), ("none", "none")]:
    s, b = http("PUT", f"/v1/me/channels/{C}/settings", token(u[k]), {"notify": v})
    check(s == 200, f"settings notify={v}: {s} {b}")
now = int(time.time() * 1000)
s, b = http("PUT", f"/v1/me/channels/{C}/settings", token(u["snz"]), {"snoozeUntil": now + 3600_000})
check(s == 200, f"snooze: {s} {b}")
s, b = http("PUT", f"/v1/me/channels/{C}/settings", token(u["past"]), {"snoozeUntil": now - 1000})
check(s == 200, f"snooze in the past: {s} {b}")
s, b = http("PUT", f"/v1/me/blocks/{S}", token(u["blk"]))
check(s == 204, f"block: {s}")
on = Session(token(u["on"]))
ss = Session(token(S))
ms = Session(token(M))
a1 = ss.send_msg(C, "plain one")
a2 = ss.send_msg(C, "mentions", mentions=[u["men"], u["none"], u["snz"], u["blk"]])
a3 = ss.send_msg(C, "thread reply", threadId=a1["messageId"])
a4 = ms.send_msg(C, "all of you", mentionAll=True)
ss.send({"type": "MSG_REACT", "messageId": a1["messageId"], "emoji": "👍", "op": "add", "clientMsgId": "r1"})
ss.answer("r1")
ss.send({"type": "MSG_EDIT", "messageId": a1["messageId"], "body": "plain one, edited", "clientMsgId": "e1"})
ss.answer("e1")
check(wait_for(lambda: len(of_channel(C)) >= 6), f"six entries of {C} posted: {len(of_channel(C))}")
by_seq = {}
for it in of_channel(C):
    by_seq.setdefault(it["entry"]["seq"], it)
inv = {v: k for k, v in u.items()}
inv[M] = "mod"
inv[S] = "s"


def names(ids):
    return sorted(inv.get(i, i) for i in ids or [])


exp = {
    a1["seq"]: ["all", "past"],
    a2["seq"]: ["all", "men", "past"],
    a3["seq"]: ["all", "past"],
    a4["seq"]: ["all", "blk", "men", "past"],  # s is connected
}
for seq, want in exp.items():
    it = by_seq.get(seq)
    got = names(it.get("notify")) if it else None
    off = names(it.get("offlineMembers")) if it else None
    check(got == want, f"notify of seq {seq}: {got} (want {want}); offlineMembers {off}")
for seq in (a4["seq"] + 1, a4["seq"] + 2):
    it = by_seq.get(seq)
    check(it is not None and not it.get("notify"), f"no notify for {it and it['entry'].get('kind')} seq {seq}: {it and it.get('notify')}")
check(all(ok for p, b, ok, m in GOT), "every request's signature verifies")

# ---- 2. held back, then deleted / erased
E, F = uid("e"), uid("f")
C2 = uid("wh2")
channel(C2, [E, F])
MODE["mode"] = "down"
es, fs = Session(token(E)), Session(token(F))
m1 = es.send_msg(C2, "SECRETB11ONE first words")
es.send({"type": "MSG_EDIT", "messageId": m1["messageId"], "body": "SECRETB11TWO edited words", "clientMsgId": "e2"})
es.answer("e2")
m2 = es.send_msg(C2, "SECRETB11THREE second")
fs.send_msg(C2, "quoting you", replyTo=m2["messageId"])
fs.send_msg(C2, "in thread", threadId=m2["messageId"])
m4 = es.send_msg(C2, "SECRETB11FOUR to delete")
es.send({"type": "MSG_DELETE", "messageId": m4["messageId"], "clientMsgId": "d4"})
es.answer("d4")
time.sleep(1.5)
s, _ = http("DELETE", f"/v1/users/{E}")
check(s == 204, f"erase {E}: {s}")
time.sleep(0.5)
MODE["mode"] = "ok"
check(wait_for(lambda: len({it["entry"]["seq"] for it in of_channel(C2)}) >= 9, 90),
      f"C2's entries posted after the receiver came back: {sorted({it['entry']['seq'] for it in of_channel(C2)})}")
leaks = []
with LOCK:
    for path, body, ok, mode in GOT:
        if b"SECRETB11" in body and mode == "ok":
            ev = json.loads(body)
            for it in [ev] if ev["type"] == "entry" else ev["entries"]:
                if "SECRETB11" in json.dumps(it, ensure_ascii=False):
                    leaks.append((it["entry"]["seq"], it["entry"].get("kind"), json.dumps(it["entry"], ensure_ascii=False)[:300]))
check(not leaks, f"no erased text in requests sent after the erasure: {len(leaks)} leak(s)")
for lk in leaks[:8]:
    print("   leak:", lk)
seqs = [it["entry"]["seq"] for it in of_channel(C2)]
firsts = []
for x in seqs:
    if x not in firsts:
        firsts.append(x)
check(firsts == sorted(firsts), f"C2's entries first sent in seq order: {seqs}")

# ---- 3. endless 200 body
C3 = uid("wh3")
channel(C3, [S, F])
MODE["mode"] = "endless"
ss.send_msg(C3, "endless one")
time.sleep(3)
MODE["mode"] = "ok"
ss.send_msg(C3, "after endless")
ok3 = wait_for(lambda: any(it["entry"].get("body") == "after endless" for it in of_channel(C3)), 30)
n_end = sum(1 for p, b, ok, m in GOT if m == "endless" and b"endless one" in b)
check(ok3, f"a 200 with a body that never ends: later entries arrive (the first was sent {n_end} time(s) to it)")

# ---- 4. redirect
C4 = uid("wh4")
channel(C4, [S, F])
MODE["mode"] = "redirect"
ss.send_msg(C4, "redirect me")
time.sleep(2)
followed = [p for p, b, ok, m in GOT if p == "/elsewhere"]
check(not followed, f"302 not followed: {len(followed)} request(s) to /elsewhere")
n302 = sum(1 for p, b, ok, m in GOT if m == "redirect")
MODE["mode"] = "ok"
ok4 = wait_for(lambda: any(it["entry"].get("body") == "redirect me" for it in of_channel(C4)), 30)
check(ok4 and n302 >= 1, f"after {n302} 302 answer(s) the entry is delivered once the receiver answers 2xx")

# ---- 5. a slow receiver (every request answered 204 after 0.5 s, nothing fails): entries read
# ahead of their request and deleted before it is made
C5 = uid("wh5")
G = uid("g")
channel(C5, [G, F])
gs = Session(token(G))
MODE["mode"] = "slow"
first = gs.send_msg(C5, "slow first")
time.sleep(0.2)  # the driver reads [1] and is in its 0.5 s request
acks = [gs.send_msg(C5, f"SLOWSECRET{i:02d} text") for i in range(2, 31)]
time.sleep(1.0)  # the driver has read 2..30 ahead and is sending them one by one
victim = acks[-5]
gs.send({"type": "MSG_DELETE", "messageId": victim["messageId"], "clientMsgId": "d5"})
d5 = gs.answer("d5")
check(d5["type"] == "MSG_ACK", f"delete of seq {victim['seq']} ACKed at {time.time():.1f}")
ok5 = wait_for(lambda: any(it["entry"]["seq"] == d5["seq"] for it in of_channel(C5)), 60)
stale = [it["entry"] for it in of_channel(C5) if it["entry"]["seq"] == victim["seq"]]
check(ok5 and stale and stale[0].get("body") == "",
      f"seq {victim['seq']}, deleted {victim['seq'] - 1} requests before its turn, is sent with body "
      f"{stale[0].get('body') if stale else None!r} (a slow receiver, no failure)")
MODE["mode"] = "ok"

# ---- 6. a flag (§17, POSTed as {"type":"flag","flag","entry"}) while the receiver fails; the
# flagged message deleted and the reporter erased before it answers 2xx
C6 = uid("wh6")
P, Q = uid("p"), uid("q")
channel(C6, [P, Q])
ps = Session(token(P))
MODE["mode"] = "down"
fm = ps.send_msg(C6, "FLAGGEDSECRET text")
s, fl = http("POST", f"/v1/messages/{fm['messageId']}/flags", token(Q), {"reason": "other", "note": "NOTESECRET of the reporter"})
check(s == 201, f"flag: {s} {fl}")
time.sleep(1.0)
ps.send({"type": "MSG_DELETE", "messageId": fm["messageId"], "clientMsgId": "d6"})
ps.answer("d6")
s1, _ = http("DELETE", f"/v1/users/{Q}")
s2, _ = http("DELETE", f"/v1/users/{P}")
check(s1 == 204 and s2 == 204, f"erase reporter {s1} and sender {s2}")
time.sleep(0.5)
MODE["mode"] = "ok"
ok6 = wait_for(lambda: any(b'"type":"flag"' in b and m == "ok" for p_, b, o, m in GOT), 60)
flags = [b for p_, b, o, m in GOT if b'"type":"flag"' in b and m == "ok"]
check(ok6, f"the flag is POSTed once the receiver answers ({len(flags)})")
bad6 = [w for w in (b"FLAGGEDSECRET", b"NOTESECRET") if any(w in b for b in flags)]
check(not bad6, f"the flag POSTed after the message's delete and both users' erasure carries none of their text: {bad6}")

# ---- 7. a channel deleted and made again under the same id: its new entries (seq 1, 2, ...)
# are POSTed like any channel's (§12 "a channel made later is sent from its first entry")
C7 = uid("wh7")
channel(C7, [G, F])
for i in range(5):
    gs.send_msg(C7, f"old life {i}")
check(wait_for(lambda: sum(1 for it in of_channel(C7) if it["entry"].get("body", "").startswith("old life")) >= 5, 30),
      "C7's first life posted")
s, _ = http("DELETE", f"/v1/channels/{C7}")
check(s == 204, f"delete C7: {s}")
time.sleep(1.0)
channel(C7, [G, F])
time.sleep(0.5)
gs2 = Session(token(G))
for i in range(3):
    a = gs2.send_msg(C7, f"new life {i}")
    check(a["type"] == "MSG_ACK", f"new life {i}: seq {a.get('seq')}")
ok7 = wait_for(lambda: sum(1 for it in of_channel(C7) if it["entry"].get("body", "").startswith("new life")) >= 3, 20)
newl = sorted(it["entry"]["seq"] for it in of_channel(C7) if it["entry"].get("body", "").startswith("new life"))
check(ok7, f"the re-made channel's entries are POSTed: seqs {newl} (want [1, 2, 3])")

print("FINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
srv.shutdown()
