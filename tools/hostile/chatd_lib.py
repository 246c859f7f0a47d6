"""Helpers shared by the hostile runs' scripts (tools/breaker*/) against a
running chatd: HTTP and WebSocket sessions, tokens, channels, findings.

Environment: CHATD_URL and CHATD_ADMIN_TOKEN; each run's lib.py sets its
own defaults (its serve.sh's port and admin token) before importing this.
"""
import json
import os
import time
import urllib.error
import urllib.request
import uuid

from websockets.sync.client import connect

URL = os.environ["CHATD_URL"]
WS = URL.replace("http://", "ws://") + "/v1/ws"
ADMIN = os.environ["CHATD_ADMIN_TOKEN"]
RUN = uuid.uuid4().hex[:8]


def http(method, path, token=ADMIN, body=None, raw=None, headers=None, timeout=30):
    """Returns (status, parsed JSON or text)."""
    data = None
    hdrs = {"Authorization": f"Bearer {token}"} if token else {}
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    if raw is not None:
        data = raw
    hdrs.update(headers or {})
    req = urllib.request.Request(URL + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode("utf-8", "replace")
            status = r.status
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        status = e.code
    try:
        return status, json.loads(text) if text else None
    except json.JSONDecodeError:
        return status, text


def token(user, ttl=3600):
    s, b = http("POST", "/v1/tokens", body={"userId": user, "ttlSeconds": ttl})
    assert s == 201, (s, b)
    return b["token"]


def channel(cid, members, **extra):
    s, b = http("POST", "/v1/channels", body={"channelId": cid, "members": members, **extra})
    assert s == 201, (s, b)
    return b


def uid(prefix):
    return f"{prefix}-{RUN}-{uuid.uuid4().hex[:6]}"


class Session:
    """A WebSocket session that keeps every frame it read."""

    def __init__(self, tok, **kw):
        self.ws = connect(WS, additional_headers={"Authorization": f"Bearer {tok}"},
                          max_size=None, open_timeout=30, **kw)
        self.frames = []
        self.answered = set()  # indexes in frames of answers answer() returned
        self.hello = self.next(lambda f: f["type"] == "HELLO")

    def send(self, frame):
        self.ws.send(json.dumps(frame) if not isinstance(frame, str) else frame)

    def next(self, pred=lambda f: True, timeout=10):
        end = time.time() + timeout
        while True:
            left = end - time.time()
            if left <= 0:
                raise TimeoutError("no matching frame")
            raw = self.ws.recv(timeout=left)
            f = json.loads(raw)
            self.frames.append(f)
            if pred(f):
                return f

    def answer(self, cmid, timeout=10):
        """The MSG_ACK or ERROR naming clientMsgId cmid that no earlier call returned: one
        already read while waiting for something else (answers of two channels' commit
        tasks may come in either order) is taken first; a retry with the same key gets the
        next answer, not the first one again."""
        def is_answer(f):
            return f.get("clientMsgId") == cmid and f["type"] in ("MSG_ACK", "ERROR")
        for i, f in enumerate(self.frames):
            if i not in self.answered and is_answer(f):
                self.answered.add(i)
                return f
        f = self.next(is_answer, timeout)
        self.answered.add(len(self.frames) - 1)
        return f

    def send_msg(self, channel_id, body, cmid=None, **extra):
        cmid = cmid or uuid.uuid4().hex
        self.send({"type": "MSG_SEND", "channelId": channel_id, "clientMsgId": cmid, "body": body, **extra})
        return self.answer(cmid)

    def sync(self, channel_id, after=0, **extra):
        self.send({"type": "SYNC", "channelId": channel_id, "afterSeq": after, **extra})
        return self.next(lambda f: f["type"] in ("SYNC_BATCH", "ERROR") and f.get("channelId") in (channel_id, None))

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


FINDINGS = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FINDINGS.append(what)
    return cond
