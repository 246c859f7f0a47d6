"""FTS5 secure-delete keeps trigrams of deleted text in the index's b-tree separators
(message_search_idx), standalone: the table and options of migrations/sqlite/0015_search.sql
(contentless, trigram, secure-delete) and the store's secure_delete pragma, 30,000 rows, every
tenth a text of rare letters, then those deleted as chatd's trigger does. fts5vocab shows none
of their trigrams, but the _idx table's live rows still hold some. With a data dir argument it
reads a chatd store instead (a copy of chatd.db and -wal) for the given words file (one a line).

usage: python3 fts_idx.py                       (standalone)
       python3 fts_idx.py DATA_DIR WORDS_FILE   (a chatd SQLite store)
"""
import os
import random
import sys

import apsw

RARE = "ghijlmnoqrstuvwxyz"


def standalone():
    p = "/tmp/breaker9/fts-exp.db"
    for f in (p, p + "-wal", p + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    c = apsw.Connection(p)
    c.execute("PRAGMA secure_delete=ON; PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE messages(body TEXT)")
    c.execute("CREATE VIRTUAL TABLE message_search USING fts5(text, content='', tokenize='trigram case_sensitive 0')")
    c.execute("INSERT INTO message_search(message_search, rank) VALUES('secure-delete', 1)")
    words = []
    c.execute("BEGIN")
    for i in range(1, 30001):
        if i % 10 == 0:
            body = "".join(random.choice(RARE) for _ in range(24))
            words.append((i, body))
        else:
            body = "keep-" + os.urandom(12).hex()
        c.execute("INSERT INTO messages(rowid, body) VALUES(?, ?)", (i, body))
        c.execute("INSERT INTO message_search(rowid, text) VALUES(?, ?)", (i, body))
    c.execute("COMMIT")
    c.execute("BEGIN")
    for rowid, body in words:
        c.execute("INSERT INTO message_search(message_search, rowid, text) VALUES('delete', ?, ?)", (rowid, body))
        c.execute("UPDATE messages SET body = '' WHERE rowid = ?", (rowid,))
    c.execute("COMMIT")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return c, [w for _, w in words]


def report(c, words):
    grams = {w[i:i + 3] for w in words for i in range(len(w) - 2)}
    c.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, message_search, 'row')")
    terms = {r[0] for r in c.execute("SELECT term FROM temp.v")}
    idx = [bytes(r[0]) for r in c.execute("SELECT term FROM message_search_idx") if r[0] is not None]
    left = [t for t in idx if any(g.encode() in t for g in grams)]
    print(f"deleted texts: {len(words)}; their trigrams: {len(grams)}")
    print(f"still terms (fts5vocab): {len(terms & grams)}")
    print(f"message_search_idx rows: {len(idx)}, holding a trigram of a deleted text: {len(left)}: {left[:8]}")
    return len(left)


if len(sys.argv) > 2:
    import shutil
    import glob
    tmp = "/tmp/breaker9/fts-copy2"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for f in glob.glob(f"{sys.argv[1]}/chatd.db*"):
        shutil.copy(f, tmp)
    con = apsw.Connection(f"{tmp}/chatd.db")
    n = report(con, [w.strip() for w in open(sys.argv[2]) if w.strip()])
else:
    con, ws = standalone()
    n = report(con, ws)
print("FINDING: trigrams of deleted text kept in message_search_idx" if n else "held")
