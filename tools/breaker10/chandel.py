"""§15: deleting a channel deletes its attachments' bytes and thumbnails (claimed, unclaimed,
an image's thumbnail), its signed URLs then 404; deleting a message with an image removes the
thumbnail too; a member removed from a channel loses access by token but a signed URL it holds
still works until expiry (§15 says so).

  CHATD_URL=http://127.0.0.1:19100 B10_DATA=/tmp/breaker10/data-19100 python3 chandel.py
"""
import glob
import io
import os
import time
import urllib.request
import uuid

from PIL import Image

from lib import FINDINGS, URL, Session, channel, check, http, token, uid

DATA = os.environ["B10_DATA"]
A, B = uid("cda"), uid("cdb")
ch = uid("cdel")
channel(ch, [A, B], owners=[A])
ta, tb = token(A), token(B)


def png(mark):
    b = io.BytesIO()
    from PIL import PngImagePlugin
    info = PngImagePlugin.PngInfo()
    info.add_text("c", mark)
    Image.new("RGB", (64, 48), (1, 2, 3)).save(b, "PNG", pnginfo=info)
    return b.getvalue()


def files_with(ids):
    out = []
    for p in glob.glob(f"{DATA}/attachments/**/*", recursive=True):
        if os.path.isfile(p) and any(i in p for i in ids):
            out.append(p.replace(DATA, ""))
    return out


def get(path):
    try:
        with urllib.request.urlopen(URL + path, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


up = lambda tok, body, ct: http("POST", f"/v1/channels/{ch}/attachments", token=tok, raw=body, headers={"Content-Type": ct})[1]  # noqa: E731
u1 = up(ta, png("m1"), "image/png")
u2 = up(ta, b"claimed text", "text/plain")
u3 = up(tb, b"unclaimed", "text/plain")
u4 = up(ta, png("m4"), "image/png")
s = Session(ta)
r = s.send_msg(ch, "files", attachments=[u1["attachmentId"], u2["attachmentId"]])
r4 = s.send_msg(ch, "img", attachments=[u4["attachmentId"]])
h = http("GET", f"/v1/channels/{ch}/messages?afterSeq=0", token=tb)[1]
atts = {a["attachmentId"]: a for m in h["messages"] for a in m.get("attachments", [])}
ids = [u["attachmentId"] for u in (u1, u2, u3, u4)]
print(f"   files before: {len(files_with(ids))}")
# delete message r4 (image): bytes and thumbnail gone
k = uuid.uuid4().hex
s.send({"type": "MSG_DELETE", "clientMsgId": k, "messageId": r4["messageId"]})
s.answer(k)
time.sleep(1.5)
left4 = files_with([u4["attachmentId"]])
check(not left4, f"message delete: the image's files left {left4}")
check(get(atts[u4["attachmentId"]]["thumbnailUrl"]) == 404, "deleted image's signed thumbnail URL 404")
# removed member keeps a signed URL
http("DELETE", f"/v1/channels/{ch}/members/{B}")
check(get(atts[u1["attachmentId"]]["url"]) == 200, "a removed member's signed URL still works until it expires (§15)")
st, _ = http("GET", f"/v1/attachments/{u1['attachmentId']}", token=tb)
check(st == 404, f"a removed member's token: {st}")
# delete the channel
st, _ = http("DELETE", f"/v1/channels/{ch}")
check(st == 204, f"channel delete: {st}")
time.sleep(1.5)
left = files_with(ids)
check(not left, f"channel delete: files left {left}")
for a in atts.values():
    check(get(a["url"]) == 404, f"signed URL after the channel's delete: {get(a['url'])}")
print("FINDINGS:", FINDINGS)
