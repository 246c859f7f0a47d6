"""Slow, stalled and half-closed downloads of attachments (breaker13, item 2).

  CHATD_URL=http://127.0.0.1:18302 B13_T=4 B13_PID=<server pid> python3 download13.py [scenario...]

B13_T is the server's handshake_timeout_ms in seconds (start the server with
CHATD_HANDSHAKE_TIMEOUT_MS to match). Scenarios: steady pauses stall halfclose
keepalive many (default: all). Each reader is a raw socket with a small
SO_RCVBUF reading at a fixed rate; it reports bytes, sha256 and how it ended.
Prints PASS/FAIL lines; the server's RSS and its sockets on the port before and
after.
"""
import hashlib
import os
import socket
import subprocess
import sys
import threading
import time

from lib import URL, channel, http, token, uid

T = float(os.environ.get("B13_T", "4"))
PID = os.environ.get("B13_PID")
HOST, PORT = URL.split("//")[1].split(":")
PORT = int(PORT)
FAILS = []
RATES = [int(r) for r in os.environ.get("B13_RATES", "20000,10000,7000,5000,2000").split(",")]
MSS = int(os.environ.get("B13_MSS", "0"))
DURATION = float(os.environ.get("B13_SECS", "25"))


def say(ok, what):
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)


def rss():
    if not PID:
        return None
    for line in open(f"/proc/{PID}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1])
    return None


def sockets():
    """Established/closing TCP sockets of the server's port (server side)."""
    out = subprocess.run(["ss", "-tan", f"sport = :{PORT}"], capture_output=True, text=True).stdout
    states = {}
    for line in out.splitlines()[1:]:
        st = line.split()[0]
        if st == "LISTEN":
            continue
        states[st] = states.get(st, 0) + 1
    return states


def upload(tok, cid, size):
    data = os.urandom(size)
    s, b = http("POST", f"/v1/channels/{cid}/attachments?filename=f{size}.bin", token=tok, raw=data,
                headers={"Content-Type": "application/octet-stream"}, timeout=120)
    assert s == 201, (s, b)
    return b["attachmentId"], hashlib.sha256(data).hexdigest(), size


def request(aid, keepalive, extra=""):
    conn = "keep-alive" if keepalive else "close"
    admin = os.environ["CHATD_ADMIN_TOKEN"]
    return (f"GET /v1/attachments/{aid} HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {admin}\r\n"
            f"Connection: {conn}\r\n{extra}\r\n").encode()


class Reader(threading.Thread):
    """Downloads one attachment at `rate` bytes/s through a `rcvbuf` receive
    buffer; `pauses` is a list of (after_bytes, seconds); `stop_at` stops
    reading for good after that many bytes (then waits `stop_for` and drains)."""

    def __init__(self, aid, size, rate, rcvbuf=4096, keepalive=False, pauses=(), half_close=False,
                 stop_at=None, stop_for=0, second=False):
        super().__init__(daemon=True)
        self.aid, self.size, self.rate, self.rcvbuf = aid, size, rate, rcvbuf
        self.keepalive, self.pauses, self.half_close = keepalive, list(pauses), half_close
        self.stop_at, self.stop_for, self.second = stop_at, stop_for, second
        self.got = 0
        self.sha = None
        self.end = None
        self.last_read = None
        self.ended_at = None
        self.second_status = None

    def run(self):
        s = socket.socket()
        if self.rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)
        if MSS:
            # An Ethernet-sized MSS (loopback's is 65483): the peer's window then opens
            # in steps of that size, as across a real network.
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, MSS)
        s.settimeout(60)
        try:
            s.connect((HOST, PORT))
            s.sendall(request(self.aid, self.keepalive))
            if self.half_close:
                s.shutdown(socket.SHUT_WR)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = s.recv(1)
                if not chunk:
                    self.end = "eof in head"
                    return
                head += chunk
            status = head.split(b" ")[1]
            if status != b"200":
                self.end = f"status {status!r}"
                return
            h = hashlib.sha256()
            start = time.time()
            chunk_size = max(256, int(self.rate / 20))
            while self.got < self.size:
                if self.pauses and self.got >= self.pauses[0][0]:
                    time.sleep(self.pauses.pop(0)[1])
                    start = time.time() - self.got / self.rate
                if self.stop_at is not None and self.got >= self.stop_at:
                    time.sleep(self.stop_for)
                    self.stop_at = None
                    start = time.time() - self.got / self.rate
                    self.rate = 10 ** 9  # drain fast
                    chunk_size = 65536
                want = min(chunk_size, self.size - self.got)
                data = s.recv(want)
                if not data:
                    self.end = "eof"
                    break
                self.last_read = time.time()
                h.update(data)
                self.got += len(data)
                ahead = self.got / self.rate - (time.time() - start)
                if ahead > 0:
                    time.sleep(ahead)
            else:
                self.end = "whole"
                self.sha = h.hexdigest()
                if self.second:
                    s.sendall(f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
                    self.second_status = s.recv(64).split(b" ")[1:2]
                elif not self.keepalive:
                    rest = s.recv(10)
                    self.end = "whole+eof" if rest == b"" else f"whole+{rest!r}"
        except (ConnectionResetError, BrokenPipeError) as e:
            self.end = type(e).__name__
        except socket.timeout:
            self.end = "timeout"
        finally:
            self.ended_at = time.time()
            s.close()


def setup(sizes):
    cid = uid("dl")
    alice = uid("alice")
    channel(cid, [alice])
    tok = token(alice)
    return [upload(tok, cid, n) for n in sizes]


def steady():
    files = {}
    for rate in RATES:
        size = int(rate * DURATION)
        files[rate] = setup([size])[0]
    readers = []
    for rate, (aid, sha, size) in files.items():
        for ka in (False, True):
            for rcvbuf in (2048, 65536, None):
                r = Reader(aid, size, rate, rcvbuf=rcvbuf, keepalive=ka)
                r.meta = (rate, ka, rcvbuf, sha)
                readers.append(r)
    for r in readers:
        r.start()
    for r in readers:
        r.join()
    for r in readers:
        rate, ka, rcvbuf, sha = r.meta
        ok = r.end in ("whole", "whole+eof") and r.sha == sha
        # Documented floor: 64 KiB per handshake_timeout_ms.
        floor = 65536 / T
        tag = "" if rate >= floor else f" (below the documented floor {floor:.0f} B/s: a cut is by design)"
        say(ok or rate < floor,
            f"steady {rate} B/s keepalive={ka} rcvbuf={rcvbuf}: {r.end}, {r.got}/{r.size} bytes{tag}")


def pauses():
    aid, sha, size = setup([3_000_000])[0]
    readers = []
    for ka in (False, True):
        short = Reader(aid, size, 200_000, keepalive=ka, pauses=[(500_000, T * 0.6), (1_500_000, T * 0.8)])
        short.meta = ("pauses 0.6T and 0.8T", ka, True)
        long_ = Reader(aid, size, 200_000, keepalive=ka, pauses=[(500_000, T * 3)])
        long_.meta = ("pause 3T", ka, False)
        readers += [short, long_]
    for r in readers:
        r.start()
    for r in readers:
        r.join()
    for r in readers:
        what, ka, expect_whole = r.meta
        whole = r.end in ("whole", "whole+eof") and r.sha == sha
        say(whole == expect_whole, f"{what} keepalive={ka}: {r.end}, {r.got}/{size} bytes"
            f" (expected {'whole' if expect_whole else 'cut'})")


def stall():
    """Readers that stop: measure how long the server keeps their sockets."""
    aid, sha, size = setup([20_000_000])[0]
    before = sockets()
    readers = [Reader(aid, size, 10 ** 9, rcvbuf=4096, keepalive=ka, stop_at=100_000, stop_for=T * 4)
               for ka in (False, True) for _ in range(5)]
    t0 = time.time()
    for r in readers:
        r.start()
    # Watch the server's side of these sockets.
    gone_at = None
    while time.time() - t0 < T * 4:
        st = sockets()
        est = st.get("ESTAB", 0) - before.get("ESTAB", 0)
        if est <= 0 and gone_at is None:
            gone_at = time.time() - t0
        time.sleep(0.25)
    for r in readers:
        r.join()
    ends = sorted({r.end for r in readers})
    got = [r.got for r in readers]
    say(all(r.end != "whole" for r in readers) and gone_at is not None and gone_at < T * 2.5,
        f"stalled readers: server sockets gone after {gone_at}s (T={T}s), ends {ends}, got {min(got)}..{max(got)}")
    print("   sockets after:", sockets())


def halfclose():
    aid, sha, size = setup([1_500_000])[0]
    rs = [Reader(aid, size, rate, half_close=True, keepalive=ka) for rate in (10 ** 9, 100_000) for ka in (False, True)]
    for r in rs:
        r.start()
    for r in rs:
        r.join()
    for r in rs:
        say(r.sha == sha, f"half-close rate={r.rate} keepalive={r.keepalive}: {r.end}, {r.got}/{size}")


def keepalive():
    aid, sha, size = setup([400_000])[0]
    r = Reader(aid, size, 40_000, keepalive=True, second=True)
    r.start()
    r.join()
    say(r.sha == sha and r.second_status == [b"200"],
        f"keep-alive download then /healthz on the same connection: {r.end}, second {r.second_status}")


def many():
    n = int(os.environ.get("B13_MANY", "60"))
    aid, sha, size = setup([300_000])[0]
    rss0, sock0 = rss(), sockets()
    rs = [Reader(aid, size, 12_000 + 100 * i, rcvbuf=4096, keepalive=i % 2 == 0) for i in range(n)]
    stalled = [Reader(aid, size, 10 ** 9, rcvbuf=4096, stop_at=50_000, stop_for=T * 3) for _ in range(n // 3)]
    for r in rs + stalled:
        r.start()
    time.sleep(5)
    rss1 = rss()
    for r in rs + stalled:
        r.join()
    time.sleep(T + 2)
    rss2, sock2 = rss(), sockets()
    whole = sum(1 for r in rs if r.sha == sha)
    say(whole == n, f"{n} concurrent steady downloads at 12-18 KB/s (+{n // 3} stalled): {whole} whole;"
        f" ends {sorted({r.end for r in rs})}")
    cut = sum(1 for r in stalled if r.sha != sha)
    say(cut == len(stalled), f"{len(stalled)} stalled among them: {cut} cut")
    print(f"   RSS KiB before {rss0} during {rss1} after {rss2}; sockets before {sock0} after {sock2}")


if __name__ == "__main__":
    names = sys.argv[1:] or ["steady", "pauses", "stall", "halfclose", "keepalive", "many"]
    for name in names:
        print(f"== {name} (T={T}s) {time.strftime('%H:%M:%S')}", flush=True)
        globals()[name]()
    print(f"{len(FAILS)} FAIL")
