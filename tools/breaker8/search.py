"""Search (§18) with hostile queries: LIKE wildcards, FTS5 syntax, escapes, long terms, in any
script; each query must find exactly the messages whose text holds every term literally
(case-insensitive), and nothing outside the caller's channels.

python3 search.py   (CHATD_URL as in lib.py)
"""
import urllib.parse
import uuid

from lib import FINDINGS, Session, channel, check, http, token, uid

alice, eve = uid("alice"), uid("eve")
cid, other = uid("s"), uid("s-other")
channel(cid, [alice])
channel(other, [eve])
TA, TE = token(alice), token(eve)
tag = "t" + uuid.uuid4().hex[:6]
bodies = [f"{tag} 100% sure", f"{tag} 100 x sure", f"{tag} a_b", f"{tag} axb", f"{tag} back\\slash", f"{tag} backslash",
          f'{tag} say "hi" now', f"{tag} NEAR(x y)", f"{tag} near x y", f"{tag} star* power", f"{tag} starry",
          f"{tag} col:umn", f"{tag} a-b-c", f"{tag} ^caret", f"{tag} Ünïcödé ÄRGER", f"{tag} 東京タワー", f"{tag} 'quote'",
          f"{tag} AND OR NOT", f"{tag} {{braces}}", f"{tag} [brackets]", f"{tag} x+y", f"{tag} ∑∫ emoji 👍🏽 ok",
          f"{tag} tab\there", f"{tag} nul-free \u200b zero width"]
A = Session(TA)
for b in bodies:
    assert A.send_msg(cid, b)["type"] == "MSG_ACK"
E = Session(TE)
E.send_msg(other, f"{tag} 100% sure secret of eve")


def search(q, tok=TA, extra=""):
    s, b = http("GET", "/v1/me/search?limit=100&q=" + urllib.parse.quote(q, safe="") + extra, token=tok)
    return s, b


def expect(q):
    terms = q.split()
    return sorted(b for b in bodies if all(t.lower() in b.lower() for t in terms))


for q in ["%", "_", "\\", "100%", "a_b", "back\\slash", '"hi"', '"', "NEAR(x", "NEAR(x y)", "star*", "*", "col:umn",
          "a-b-c", "^caret", "ünïcödé", "ärger", "東京", "タワー", "'quote'", "AND", "OR NOT", "{braces}", "[brackets]",
          "x+y", "👍🏽", "∑∫", "%%", "%_%", "\\%", "\"\"", "-", "--", "(", ")", "a*b", "100%25", "\t", "\u200b"]:
    s, b = search(f"{tag} {q}")
    if s != 200:
        check(False, f"q={q!r}: {s} {b}")
        continue
    got = sorted(r["body"] for r in b["results"])
    want = expect(f"{tag} {q}")
    check(got == want, f"q={q!r}: {len(got)} results, want {len(want)}" + ("" if got == want else f" got {got[:3]} want {want[:3]}"))
# nothing of eve's channel
s, b = search(f"{tag} secret")
check(s == 200 and not b["results"], f"no result from another's channel: {len(b.get('results', []))}")
s, b = search(f"{tag} secret", extra=f"&channelId={other}")
check(s in (200, 403) and not (b.get("results") if isinstance(b, dict) else None), f"channelId of a channel not the caller's: {s} {b}")
# bounds
for q, want in (("", 400), (" ", 400), ("\t\n", 400), ("a" * 256, 200), ("a" * 257, 400), ("é" * 128, 200), ("é" * 128 + "a", 400),
                ("a " * 128, 200), ("\x00", 400)):
    s, b = search(q)
    check(s == want, f"q of {len(q.encode())} bytes ({q[:6]!r}...): {s} {b if s != 200 else ''}")
for extra, want in (("&limit=0", 400), ("&limit=101", 400), ("&limit=1e1", None), ("&before=garbage", 400), ("&before=", None),
                    ("&channelId=..", 400), ("&channelId=", None)):
    s, b = search(tag, extra=extra)
    if want:
        check(s == want, f"search{extra}: {s} {b if s != 200 else ''}")
    else:
        print(f"      search{extra}: {s} {b if s != 200 else len(b['results'])}")
print("\nFINDINGS:", len(FINDINGS))
for f in FINDINGS:
    print(" -", f)
