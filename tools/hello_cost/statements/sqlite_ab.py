#!/usr/bin/env python3
"""The CHANNEL_STATES statement variants of this directory on SQLite, in
ABBA order, 30 rounds, the first 3 dropped, medians, for users u, w and v of
the seed (../seed_sqlite.sql): sqlite_ab.py DB no_mentions main marks."""
import os
import sqlite3
import statistics
import sys
import time

db = sqlite3.connect(sys.argv[1])
names = sys.argv[2:]
here = os.path.dirname(os.path.abspath(__file__))
st = {
    n: open(os.path.join(here, f"{n}.sql")).read().replace('COLLATE "C"', "").replace(":u", "?")
    for n in names
}
for user in "uwv":
    res = {n: [] for n in names}
    for r in range(30):
        for n in names if r % 2 == 0 else names[::-1]:
            t = time.perf_counter()
            db.execute(st[n], (user,)).fetchall()
            res[n].append((time.perf_counter() - t) * 1000)
    med = {n: statistics.median(res[n][3:]) for n in names}
    print(user, " ".join(f"{n} {med[n]:.2f} ms ({med[n] / med[names[0]]:.2f})" for n in names))
