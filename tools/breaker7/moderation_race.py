"""Mute / ban / block against a stream of sends (§17, guarantee 12): every entry with a seq above
a change's afterSeq must have been judged with the change. Also role-table abuse. Server with the
rate limits off."""
import json
import threading
import time
import uuid

from lib import Session, channel, check, http, token, uid, FINDINGS

O, M, X = uid("owner"), uid("mod"), uid("member")
ch = uid("modrace")
channel(ch, [X], owners=[O])
to, tx_ = token(O), token(X)
http("PUT", f"/v1/channels/{ch}/members/{M}", token=to, body={"role": "moderator"})
tm = token(M)
o = Session(to)
x = Session(tx_)
viol = {"mute": 0, "ban": 0, "block": 0}


def stream(sess, chan, n, acks, stop=None):
    keys = []
    for i in range(n):
        k = uuid.uuid4().hex
        keys.append(k)
        sess.send({"type": "MSG_SEND", "channelId": chan, "clientMsgId": k, "body": f"s{i}"})
    for _ in keys:
        try:
            f = sess.next(lambda f: f["type"] in ("MSG_ACK", "ERROR") and f.get("clientMsgId") in keys, timeout=20)
        except Exception:
            break
        acks.append(f)


for rnd in range(8):
    acks = []
    t = threading.Thread(target=stream, args=(x, ch, 200, acks))
    t.start()
    time.sleep(0.02 * (rnd % 4))
    until = int(time.time() * 1000) + 60000
    s, _ = http("PUT", f"/v1/channels/{ch}/members/{X}", token=to, body={"mutedUntil": until})
    mem = o.next(lambda f: f["type"] == "MEMBER" and f["op"] == "mute" and f["userId"] == X and f.get("mutedUntil"), timeout=10)
    t.join()
    stored_after = [a["seq"] for a in acks if a["type"] == "MSG_ACK" and a["seq"] > mem["afterSeq"]]
    refused_before = [a for a in acks if a["type"] == "ERROR" and a.get("reason") != "muted"]
    viol["mute"] += len(stored_after)
    if refused_before:
        print("   other refusals:", refused_before[:2])
    http("PUT", f"/v1/channels/{ch}/members/{X}", token=to, body={"mutedUntil": None})
    o.next(lambda f: f["type"] == "MEMBER" and f["op"] == "mute" and f["userId"] == X and f.get("mutedUntil") is None, timeout=10)
check(viol["mute"] == 0, f"sends stored above a mute's afterSeq: {viol['mute']}")

for rnd in range(6):
    acks = []
    t = threading.Thread(target=stream, args=(x, ch, 200, acks))
    t.start()
    time.sleep(0.02 * (rnd % 4))
    s, _ = http("DELETE", f"/v1/channels/{ch}/members/{X}?ban=true", token=to)
    mem = o.next(lambda f: f["type"] == "MEMBER" and f["op"] == "ban" and f["userId"] == X, timeout=10)
    t.join()
    viol["ban"] += len([a for a in acks if a["type"] == "MSG_ACK" and a["seq"] > mem["afterSeq"]])
    http("PUT", f"/v1/channels/{ch}/members/{X}", token=to)
    x.next(lambda f: f["type"] == "CHANNEL_ADDED", timeout=10)
check(viol["ban"] == 0, f"sends stored above a ban's afterSeq: {viol['ban']}")

# block vs DM sends: after PUT /v1/me/blocks answers 204, no new message of the blocked user
s, dm = http("PUT", f"/v1/me/direct/{X}", token=to)
for rnd in range(6):
    acks = []
    t = threading.Thread(target=stream, args=(x, dm["channelId"], 200, acks))
    t.start()
    time.sleep(0.02 * (rnd % 4))
    s, _ = http("PUT", f"/v1/me/blocks/{X}", token=to)
    s2, page = http("GET", f"/v1/channels/{dm['channelId']}/messages?latest=true&limit=1", token=to)
    last_at_block = page["messages"][-1]["seq"] if page["messages"] else 0
    t.join()
    viol["block"] += len([a for a in acks if a["type"] == "MSG_ACK" and a["seq"] > last_at_block + 0])
    http("DELETE", f"/v1/me/blocks/{X}", token=to)
print("   (block has no afterSeq; stores after the block's 204 + a read):", viol["block"])

# role table abuse
for who, tok, path, body, want in [
    ("moderator mutes owner", tm, f"/v1/channels/{ch}/members/{O}", {"mutedUntil": int(time.time() * 1000) + 60000}, 403),
    ("moderator makes a moderator", tm, f"/v1/channels/{ch}/members/{uid('n')}", {"role": "moderator"}, 403),
    ("moderator makes owner", tm, f"/v1/channels/{ch}/members/{X}", {"role": "owner"}, 403),
    ("member adds", tx_, f"/v1/channels/{ch}/members/{uid('n')}", None, 403),
    ("mutedUntil huge", to, f"/v1/channels/{ch}/members/{X}", {"mutedUntil": 1e300}, 400),
    ("mutedUntil negative", to, f"/v1/channels/{ch}/members/{X}", {"mutedUntil": -5}, 400),
    ("mutedUntil string", to, f"/v1/channels/{ch}/members/{X}", {"mutedUntil": "5"}, 400),
    ("role bogus", to, f"/v1/channels/{ch}/members/{X}", {"role": "admin"}, 400),
]:
    s, b = http("PUT", path, token=tok, body=body)
    check(s == want, f"{who}: {s} {str(b)[:100]}")
s, b = http("DELETE", f"/v1/channels/{ch}/members/{O}?ban=true", token=tm)
check(s == 403, f"moderator bans owner: {s}")
s, b = http("DELETE", f"/v1/channels/{ch}/members/{M}?ban=true", token=tm)
print("   moderator bans itself:", s, b)
s, b = http("DELETE", f"/v1/channels/{ch}/members/{X}?ban=yes", token=to)
print("   ban=yes:", s, b)
print("FINDINGS:", json.dumps(FINDINGS, indent=1))
