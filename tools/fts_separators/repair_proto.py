"""See README.md: stale FTS5 separators of deleted text, and the repair (with `repair`)."""
import os, random, sys, time, apsw
random.seed(int(sys.argv[1]) if len(sys.argv)>1 else 1)
N = int(sys.argv[2]) if len(sys.argv)>2 else 400
REPAIR = len(sys.argv)>3 and sys.argv[3]=="repair"
p="/tmp/fts-separators-p.db"
for f in (p,p+"-wal",p+"-shm"):
    if os.path.exists(f): os.remove(f)
c=apsw.Connection(p)
c.execute("PRAGMA secure_delete=ON; PRAGMA journal_mode=WAL")
c.execute("CREATE TABLE messages(body TEXT)")
c.execute("CREATE VIRTUAL TABLE message_search USING fts5(text, content='', tokenize='trigram case_sensitive 0')")
c.execute("INSERT INTO message_search(message_search, rank) VALUES('secure-delete', 1)")
texts={}
for i in range(1,N+1):
    body="".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(60))
    texts[i]=body
    c.execute("BEGIN")
    c.execute("INSERT INTO messages(rowid, body) VALUES(?,?)",(i,body))
    c.execute("INSERT INTO message_search(rowid, text) VALUES(?,?)",(i,body))
    c.execute("COMMIT")
gone=[i for i in texts if i%2==0]
def grams(t): return {t[k:k+3] for k in range(len(t)-2)}
live=set().union(*(grams(texts[i]) for i in texts if i%2))
dead=set().union(*(grams(texts[i]) for i in gone))-live

def varint(b,o):
    v=0
    for k in range(9):
        x=b[o+k]
        if k==8: return (v<<8)|x, o+9
        v=(v<<7)|(x&0x7f)
        if x<0x80: return v,o+k+1
def first_term(blob):
    szleaf=int.from_bytes(blob[2:4],'big')
    if szleaf>=len(blob): return None
    off,_=varint(blob,szleaf)
    n,o=varint(blob,off)
    return bytes(blob[o:o+n])
def repair(c, cand):
    # cand: candidate separator byte strings; fix idx rows whose sep is not a prefix of the page's first term
    fixed=0
    for segid,term,pg in list(c.execute("SELECT segid, term, pgno FROM message_search_idx")):
        if term is None or bytes(term) not in cand: continue
        pgno=pg>>1
        blob=c.execute("SELECT block FROM message_search_data WHERE id=?",((segid<<37)+pgno,)).fetchone()[0]
        ft=first_term(blob)
        if ft is None or ft.startswith(bytes(term)): continue
        c.execute("UPDATE message_search_idx SET term=? WHERE segid=? AND term=?",(ft,segid,term))
        fixed+=1
        if fixed<4: print("  sep", bytes(term), "->", ft)
    return fixed
t0=time.time()
c.execute("BEGIN")
for i in gone:
    c.execute("INSERT INTO message_search(message_search, rowid, text) VALUES('delete',?,?)",(i,texts[i]))
    c.execute("UPDATE messages SET body='' WHERE rowid=?",(i,))
if REPAIR:
    c.execute("INSERT INTO message_search(message_search) VALUES('flush')")
    cand=set()
    for i in gone:
        for g in grams(texts[i]):
            b=b"0"+g.encode()
            for k in range(2,len(b)+1): cand.add(b[:k])
    print("fixed", repair(c,cand))
c.execute("COMMIT")
print("delete s", round(time.time()-t0,3))
idx=[bytes(r[0]) for r in c.execute("SELECT term FROM message_search_idx") if r[0] is not None]
print("idx rows", len(idx), "segments", c.execute("SELECT count(DISTINCT segid) FROM message_search_idx").fetchone())
print("seps w/ dead trigram", [t for t in idx if any(g.encode() in t for g in dead)][:10])
c.execute("INSERT INTO message_search(message_search, rank) VALUES('integrity-check', 0)")
bad=0
for g in list(live)[:3000]:
    got={r[0] for r in c.execute("SELECT rowid FROM message_search WHERE message_search MATCH ?",('"'+g+'"',))}
    want={i for i in texts if i%2 and g in texts[i]}
    bad+= got!=want
for g in list(dead)[:500]:
    bad+= bool(c.execute("SELECT rowid FROM message_search WHERE message_search MATCH ?",('"'+g+'"',)).fetchall())
print("query mismatches", bad)
