"""One steady reader, alone: python3 one13.py RATE SECONDS [RCVBUF|none] [close|keepalive]
Prints when the download ended, how many bytes it got, and the gaps between
reads that returned data (the kernel's window updates), to show a steady
reader above the documented floor reset."""
import sys, time
from download13 import setup, Reader
rate, secs = int(sys.argv[1]), float(sys.argv[2])
rcv = None if len(sys.argv) < 4 or sys.argv[3] == "none" else int(sys.argv[3])
ka = len(sys.argv) > 4 and sys.argv[4] == "keepalive"
aid, sha, size = setup([int(rate * secs)])[0]
r = Reader(aid, size, rate, rcvbuf=rcv, keepalive=ka)
t0 = time.time()
r.start(); r.join()
print(f"rate {rate} rcvbuf {rcv} keepalive {ka}: {r.end} after {r.ended_at - t0:.1f}s, {r.got}/{size} bytes,"
      f" whole={r.sha == sha}")
