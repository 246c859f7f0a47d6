"""Search (§18) case folding and LIKE wildcards, on the store behind CHATD_URL.

1. Case folding beyond FTS5's table: messages with upper-case letters that Unicode lower-cases
   but SQLite's FTS5 `trigram` tokenizer does not fold (its table is Unicode 6.1: U+0130 İ,
   Cherokee, Georgian Mtavruli, Latin/Cyrillic letters added later) are searched with the
   lower-case term at once (SQLite: before the indexer reached them, matched in Rust) and again
   once indexed (3 s later). §18: "every term as a case-insensitive substring, in any script".
   A message must be found, and found the same before and after indexing.
2. LIKE wildcards (`%`, `_`, `\\`) in terms match themselves only.

usage: CHATD_URL=http://127.0.0.1:PORT python3 search12.py
"""
import time
import urllib.parse

from lib import FINDINGS, Session, channel, check, http, token, uid

alice = uid("alice")
tok = token(alice)
ch = uid("srch")
channel(ch, [alice])
s = Session(tok)

def search(q, **kw):
    qs = urllib.parse.urlencode({"q": q, "channelId": ch, **kw})
    st, b = http("GET", f"/v1/me/search?{qs}", token=tok)
    assert st == 200, (st, b)
    return [r["body"] for r in b["results"]]

# (text stored, term searched): the term is the text's first word in Unicode lower case.
FOLD = [
    ("İSTANBUL gezisi", "istanbul"),          # U+0130 İ (glibc and Rust fold it to i)
    ("İzmir'e gidiyoruz", "izmir"),            # what a Turkish user types
    ("ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ", "ꮳꮃꭹ"),                     # Cherokee, lower case since Unicode 8
    ("ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ დედაქალაქი", "საქართველო"),     # Georgian Mtavruli → Mkhedruli (Unicode 11)
    ("ԨԪԬԮ letters", "ԩԫԭԯ"),                  # Cyrillic added in Unicode 7
    ("ꞪꞫꞬ latin", "ɦɜɡ"),                      # Latin capitals added in Unicode 7/8
    ("ΣΊΣΥΦΟΣ", "σίσυφοσ"),                    # control: Greek, folded by FTS5 too
    ("ÄRGER gross", "ärger"),                  # control: Latin-1
]
ACK = {}
for text, _ in FOLD:
    a = s.send_msg(ch, text)
    assert a["type"] == "MSG_ACK", a
    ACK[text] = a["seq"]
before = {text: text in search(term) for text, term in FOLD}
time.sleep(3)
after = {text: text in search(term) for text, term in FOLD}
for text, term in FOLD:
    print(f"   {term!r} in {text!r}: at once {before[text]}, once indexed {after[text]}")
    check(before[text] == after[text], f"{text!r} found the same before and after indexing ({before[text]} / {after[text]})")
    check(after[text], f"{term!r} finds {text!r} (case-insensitive, any script)")

# the upper-case term still finds its own text (sanity)
for text, term in FOLD:
    first = text.split()[0]
    check(text in search(first), f"the text's own word {first!r} finds it")

# 2. LIKE wildcards
WILD = ["100% sure", "1000 sure", "a_b_c", "axbxc", "back\\slash", "backXslash", "50%_off", "50x_off"]
for w in WILD:
    assert s.send_msg(ch, w)["type"] == "MSG_ACK"
time.sleep(2)
for term, want in [("0% s", {"100% sure"}), ("a_b", {"a_b_c"}), ("k\\s", {"back\\slash"}),
                   ("%", {"100% sure", "50%_off"}), ("_", {"a_b_c", "50%_off", "50x_off"}),
                   ("\\", {"back\\slash"}), ("%_", {"50%_off"}), ("0%_o", {"50%_off"})]:
    got = set(search(term)) & set(WILD)
    check(got == want, f"term {term!r} finds {sorted(want)} (got {sorted(got)})")

s.close()
print(f"{len(FINDINGS)} finding(s)")
