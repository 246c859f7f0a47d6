/* FTS5 insert-cost experiment for chatd issue 34 (docs/performance.md,
 * "SQLite: where the index's cost comes from"). Build against the SQLite
 * that libsqlite3-sys bundles:
 *   cp ~/.cargo/registry/src/ * /libsqlite3-sys-0.30.1/sqlite3/sqlite3.{c,h} .   (no space in the glob)
 *   gcc -O2 -c -DSQLITE_ENABLE_FTS5 -DSQLITE_THREADSAFE=0 sqlite3.c
 *   gcc -O2 -I. tools/fts5_insert_cost.c sqlite3.o -o fts5_insert_cost -lm
 * A base of 500,000 indexed rows (PREFILL 500000, TIMED 0), copied, then
 * reused (PREFILL -1) for each timed variant; env CACHE / MMAP set
 * cache_size / mmap_size. detail: "full", or extra CREATE options such as
 * "detail=none,columnsize=0". Prints rows/s, CPU seconds per second, µs
 * per row (CPU µs per row = the two multiplied).
 * usage: bench DB PREFILL TIMED BATCH fts detail fts_secdel pragma_secdel automerge crisismerge usermerge pgsz body optimize
 *   fts: 0/1; detail: full|column|none; fts_secdel 0/1; pragma_secdel ON|OFF|FAST;
 *   automerge/crisismerge/usermerge/pgsz: -1 = default; body: text|xxx; optimize: 0/1 after prefill
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include "sqlite3.h"

static sqlite3 *db;
static void ex(const char *sql) {
  char *err = 0;
  if (sqlite3_exec(db, sql, 0, 0, &err) != SQLITE_OK) { fprintf(stderr, "%s: %s\n", sql, err); exit(1); }
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(void) { struct rusage r; getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6; }

static const char *en[] = {"the","meeting","tomorrow","please","review","deploy","server","coffee","lunch","thanks","great","idea",
  "project","deadline","update","release","bug","fixed","testing","weekend","morning","call","later","sounds","good","yes","no",
  "maybe","can","you","send","file","report","e-mail","customer","budget","plan","team","office","today","quick","question",
  "about","with","from","into","again","because","should","would","could","there","their","where","when","what","which"};
static const char *de[] = {"der","die","das","Besprechung","morgen","bitte","prüfen","Kaffee","Mittagessen","danke","großartig",
  "Ärger","Straße","schön","Grüße","Projekt","Frist","nächste","Woche","Büro"};
static const char *ru[] = {"привет","встреча","завтра","пожалуйста","спасибо","отлично","проект","срок","обновление","сервер",
  "кофе","обед","команда","вопрос","сегодня"};
static const char *ja[] = {"東京都","会議","明日","お願いします","ありがとう","プロジェクト","締め切り","更新","サーバー","コーヒー",
  "昼食","チーム","質問","今日","大阪"};
static const char *el[] = {"γεια","συνάντηση","αύριο","παρακαλώ","ευχαριστώ","έργο","ομάδα","ερώτηση","σήμερα","ΟΔΟΣ"};
#define N(a) (sizeof(a)/sizeof(a[0]))
static unsigned long long rs = 88172645463325252ULL;
static unsigned rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (unsigned)(rs >> 11); }
static int bodykind_xxx = 0;
static long long stamp = 0;
static void body(char *out) {
  if (bodykind_xxx) {
    int n = sprintf(out, "%016llx.", 0x18a000000000000ULL + (stamp += 1000 + rnd() % 100000));
    memset(out + n, 'x', 100 - n); out[100] = 0; return;
  }
  const char **w; int nw; unsigned l = rnd() % 100;
  if (l < 55) { w = en; nw = N(en); } else if (l < 67) { w = de; nw = N(de); } else if (l < 79) { w = ja; nw = N(ja); }
  else if (l < 92) { w = ru; nw = N(ru); } else { w = el; nw = N(el); }
  int words = 6 + rnd() % 10; char *p = out;
  for (int i = 0; i < words; i++) { const char *s = w[rnd() % nw]; if (i && w != ja) *p++ = ' '; size_t k = strlen(s); memcpy(p, s, k); p += k; }
  *p = 0;
}

int main(int argc, char **argv) {
  if (argc < 15) { fprintf(stderr, "args\n"); return 2; }
  const char *path = argv[1]; long prefill = atol(argv[2]), timed = atol(argv[3]), batch = atol(argv[4]);
  int fts = atoi(argv[5]); const char *detail = argv[6]; int ftssd = atoi(argv[7]); const char *psd = argv[8];
  int am = atoi(argv[9]), cm = atoi(argv[10]), um = atoi(argv[11]), pgsz = atoi(argv[12]);
  bodykind_xxx = strcmp(argv[13], "xxx") == 0; int optimize = atoi(argv[14]);
  char sql[1024];
  int reuse = prefill < 0; if (reuse) prefill = 0;
  if (!reuse) { remove(path); snprintf(sql, sizeof sql, "%s-wal", path); remove(sql); snprintf(sql, sizeof sql, "%s-shm", path); remove(sql); }
  sqlite3_open(path, &db);
  ex("PRAGMA journal_mode=WAL"); if (getenv("CACHE")) { snprintf(sql, sizeof sql, "PRAGMA cache_size=%s", getenv("CACHE")); ex(sql); }
  if (getenv("MMAP")) { snprintf(sql, sizeof sql, "PRAGMA mmap_size=%s", getenv("MMAP")); ex(sql); } ex("PRAGMA synchronous=FULL");
  snprintf(sql, sizeof sql, "PRAGMA secure_delete=%s", psd); ex(sql);
  if (!reuse) {
  ex("CREATE TABLE messages (message_id TEXT PRIMARY KEY, channel_id TEXT NOT NULL, seq INTEGER NOT NULL, sender_id TEXT NOT NULL,"
     " kind TEXT NOT NULL, body TEXT NOT NULL, edited_body TEXT, deleted INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,"
     " UNIQUE (channel_id, seq))");
  ex("CREATE INDEX messages_unread ON messages (channel_id, seq, sender_id)"); }
  if (fts && !reuse) {
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE message_search USING fts5(text, content='', tokenize='trigram case_sensitive 0'%s%s)",
             strcmp(detail, "full") ? ", " : "", strcmp(detail, "full") ? detail : "");
    ex(sql);
    if (ftssd) ex("INSERT INTO message_search (message_search, rank) VALUES ('secure-delete', 1)");
  }
  if (fts) {
    if (am >= 0) { snprintf(sql, sizeof sql, "INSERT INTO message_search (message_search, rank) VALUES ('automerge', %d)", am); ex(sql); }
    if (cm >= 0) { snprintf(sql, sizeof sql, "INSERT INTO message_search (message_search, rank) VALUES ('crisismerge', %d)", cm); ex(sql); }
    if (um >= 0) { snprintf(sql, sizeof sql, "INSERT INTO message_search (message_search, rank) VALUES ('usermerge', %d)", um); ex(sql); }
    if (pgsz >= 0) { snprintf(sql, sizeof sql, "INSERT INTO message_search (message_search, rank) VALUES ('pgsz', %d)", pgsz); ex(sql); }
    ex("CREATE TRIGGER IF NOT EXISTS message_search_insert AFTER INSERT ON messages WHEN new.kind = 'message' AND NOT new.deleted "
       "BEGIN INSERT INTO message_search (rowid, text) VALUES (new.rowid, COALESCE(new.edited_body, new.body)); END");
  }
  sqlite3_stmt *ins;
  sqlite3_prepare_v2(db, "INSERT INTO messages (message_id, channel_id, seq, sender_id, kind, body, created_at) VALUES (?1, ?2, ?3, 'u1', 'message', ?4, ?5)", -1, &ins, 0);
  long total = prefill + timed, seqs[16] = {0};
  if (reuse) { sqlite3_stmt *q; sqlite3_prepare_v2(db, "SELECT channel_id, MAX(seq) FROM messages GROUP BY 1", -1, &q, 0);
    while (sqlite3_step(q) == SQLITE_ROW) seqs[atoi((const char *)sqlite3_column_text(q, 0) + 1)] = sqlite3_column_int64(q, 1);
    sqlite3_finalize(q); stamp = 1; }
  char b[1024], id[64], ch[16];
  double t0 = 0, c0 = 0;
  for (long i = 0; i < total; i++) {
    long bs = i < prefill ? 5000 : batch;
    long off = i < prefill ? i : i - prefill;
    if (i == prefill) { if (reuse) rs ^= (unsigned long long)now() * 1000003;
      if (optimize && fts) ex("INSERT INTO message_search (message_search) VALUES ('optimize')");
      ex("PRAGMA wal_checkpoint(TRUNCATE)");
      t0 = now(); c0 = cpu();
    }
    if (off % bs == 0) ex("BEGIN IMMEDIATE");
    body(b);
    snprintf(id, sizeof id, "%020ld-%08x%s", i, rnd(), reuse ? "r" : ""); int c = i % 16; snprintf(ch, sizeof ch, "c%d", c);
    sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT); sqlite3_bind_text(ins, 2, ch, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(ins, 3, ++seqs[c]); sqlite3_bind_text(ins, 4, b, -1, SQLITE_TRANSIENT); sqlite3_bind_int64(ins, 5, i);
    if (sqlite3_step(ins) != SQLITE_DONE) { fprintf(stderr, "insert: %s\n", sqlite3_errmsg(db)); return 1; }
    sqlite3_reset(ins);
    if (off % bs == bs - 1 || i == total - 1 || i == prefill - 1) ex("COMMIT");
  }
  double el = now() - t0, cp = cpu() - c0;
  long long ftsbytes = 0, segs = 0;
  if (fts) {
    sqlite3_stmt *q;
    sqlite3_prepare_v2(db, "SELECT SUM(length(block)), COUNT(*) FROM message_search_data", -1, &q, 0);
    if (sqlite3_step(q) == SQLITE_ROW) { ftsbytes = sqlite3_column_int64(q, 0); segs = sqlite3_column_int64(q, 1); }
    sqlite3_finalize(q);
  }
  printf("rows/s %.0f  cpu/s %.2f  us/row %.1f  fts_bytes/row %.0f  data_rows %lld\n", timed / el, cp / el, el * 1e6 / timed,
         (double)ftsbytes / total, segs);
  return 0;
}
