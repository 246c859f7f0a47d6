"""See README.md: the separator repair's cost on a big index (N chat-like texts)."""
# cost of the separator repair on a big index: N rows of chat-like text, merged
import os, random, time, json, apsw, sys
random.seed(5)
N=int(sys.argv[1])
p="/tmp/fts-separators-s.db"
for f in (p,p+"-wal",p+"-shm"):
    if os.path.exists(f): os.remove(f)
c=apsw.Connection(p)
c.execute("PRAGMA secure_delete=ON; PRAGMA journal_mode=WAL")
c.execute("CREATE VIRTUAL TABLE message_search USING fts5(text, content='', tokenize='trigram case_sensitive 0')")
c.execute("INSERT INTO message_search(message_search, rank) VALUES('secure-delete', 1)")
W="the quick brown fox jumps over lazy dog chat server message hello world deploy release test build".split()
texts={}
t0=time.time()
for b in range(0,N,1000):
    c.execute("BEGIN")
    for i in range(b+1,b+1001):
        t=" ".join(random.choice(W) for _ in range(12))+" "+"".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
        texts[i]=t
        c.execute("INSERT INTO message_search(rowid, text) VALUES(?,?)",(i,t))
    c.execute("COMMIT")
print("filled", N, round(time.time()-t0,1),"s; idx rows", c.execute("SELECT count(*) FROM message_search_idx").fetchone()[0],
      "segments", c.execute("SELECT count(DISTINCT segid) FROM message_search_idx").fetchone()[0])
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
    off,_=varint(blob,szleaf); n,o=varint(blob,off); return bytes(blob[o:o+n])
times=[];fixed=0
for trial in range(20):
    i=random.randint(1,N)
    t=texts[i]
    t0=time.time()
    c.execute("BEGIN")
    c.execute("INSERT INTO message_search(message_search, rowid, text) VALUES('delete',?,?)",(i,t))
    t1=time.time()
    c.execute("INSERT INTO message_search(message_search) VALUES('flush')")
    t2=time.time()
    cand=set()
    low=t.lower()
    for k in range(len(low)-2):
        b=b"0"+low[k:k+3].encode()
        for j in range(2,len(b)+1): cand.add(b[:j].hex())
    rows=list(c.execute("SELECT segid, term, pgno FROM message_search_idx WHERE term IN (SELECT unhex(value) FROM json_each(?))",(json.dumps(sorted(cand)),)))
    for segid,term,pg in rows:
        r=c.execute("SELECT block FROM message_search_data WHERE id=?",((segid<<37)+(pg>>1),)).fetchone()
        if r is None: print("no page", segid, term, pg); continue
        ft=first_term(r[0])
        if ft is None or ft.startswith(bytes(term)): continue
        c.execute("UPDATE message_search_idx SET term=? WHERE segid=? AND term=?",(ft,segid,term)); fixed+=1
    t3=time.time()
    c.execute("COMMIT")
    del texts[i]
    times.append((t1-t0,t2-t1,t3-t2,len(rows)))
print("per delete (delete, flush, repair, idx rows checked) ms:", [(round(a*1e3,2),round(b*1e3,2),round(d*1e3,2),n) for a,b,d,n in times[:8]])
print("median repair ms", sorted(x[2] for x in times)[10]*1e3, "fixed", fixed)
c.execute("INSERT INTO message_search(message_search, rank) VALUES('integrity-check', 0)")
print("integrity ok")
