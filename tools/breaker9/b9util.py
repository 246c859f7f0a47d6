"""breaker9's forensic helpers for the SQLite store's FTS5 index (message_search), read from a
copy of chatd.db and its -wal with a current SQLite (apsw; the system's 3.40 cannot open an
index with FTS5 secure-delete).

A term (trigram) of the index, or a 3-character separator of its b-tree (message_search_idx),
that no live message text contains is left over from a deleted, erased, expired or
edited-away text."""
import glob
import os
import shutil


def _copy(data_dir):
    import apsw

    tmp = "/tmp/breaker9/fts-copy"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for path in glob.glob(f"{data_dir}/chatd.db*"):
        shutil.copy(path, tmp)
    return apsw.Connection(f"{tmp}/chatd.db")


def leftovers(data_dir, grams=None):
    """(terms, separators) of the index that no live message holds; only those in `grams`
    (trigrams of the texts the caller deleted) when given."""
    con = _copy(data_dir)
    con.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, message_search, 'row')")
    terms = {row[0] for row in con.execute("SELECT term FROM temp.v")}
    seps = set()
    for (t,) in con.execute("SELECT term FROM message_search_idx"):
        if t is None:
            continue
        t = bytes(t)
        if len(t) == 4 and t[:1] == b"0":
            try:
                seps.add(t[1:].decode())
            except UnicodeDecodeError:
                pass
    if grams is not None:
        terms &= set(grams)
        seps &= set(grams)

    def live(g):
        return con.execute(
            "SELECT count(*) FROM messages WHERE kind = 'message' AND NOT deleted "
            "AND instr(lower(COALESCE(edited_body, body)), ?) > 0", (g.lower(),)).fetchall()[0][0]

    return sorted(t for t in terms if live(t) == 0), sorted(s for s in seps if live(s) == 0)


def answer(sess, cmid, timeout=20):
    """The MSG_ACK or ERROR naming cmid (chatd_lib's Session.answer now also takes one
    read already while waiting for another key)."""
    return sess.answer(cmid, timeout)
