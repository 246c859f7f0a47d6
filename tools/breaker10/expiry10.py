"""Signed URL expiry (§15): with attachment_url_ttl_secs=2, a URL (file and thumbnail) works at
once and is 404 3 s later; a read after that signs a fresh one that works; the export's URL too.

  serve.sh sqlite 19150 CHATD_ATTACHMENT_URL_TTL_SECS=2 ; CHATD_URL=http://127.0.0.1:19150 python3 expiry10.py
"""
import io
import time
import urllib.request

from PIL import Image

from lib import ADMIN, FINDINGS, URL, Session, channel, check, http, token, uid

A = uid("xa")
ch = uid("exp")
channel(ch, [A])
ta = token(A)
b = io.BytesIO()
Image.new("RGB", (10, 10)).save(b, "PNG")
st, up = http("POST", f"/v1/channels/{ch}/attachments", token=ta, raw=b.getvalue(), headers={"Content-Type": "image/png"})
s = Session(ta)
r = s.send_msg(ch, "img", attachments=[up["attachmentId"]])


def get(path):
    try:
        with urllib.request.urlopen(URL + path, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


st, h = http("GET", f"/v1/channels/{ch}/messages?afterSeq=0", token=ta)
att = h["messages"][-1]["attachments"][0]
check(get(att["url"]) == 200 and get(att["thumbnailUrl"]) == 200, "fresh signed URLs work")
time.sleep(3.2)
a1, a2 = get(att["url"]), get(att["thumbnailUrl"])
check(a1 == 404 and a2 == 404, f"3.2 s later (ttl 2 s): file {a1}, thumbnail {a2}")
st, h = http("GET", f"/v1/channels/{ch}/messages?afterSeq=0", token=ta)
att2 = h["messages"][-1]["attachments"][0]
check(att2["url"] != att["url"] and get(att2["url"]) == 200, "a later read signs a fresh URL that works")
req = urllib.request.Request(f"{URL}/v1/users/{A}/export", headers={"Authorization": f"Bearer {ADMIN}"})
lines = urllib.request.urlopen(req).read().decode().splitlines()
import json
u = [json.loads(ln) for ln in lines if '"attachment"' in ln and json.loads(ln)["type"] == "attachment"]
print(f"   export attachment lines: {len(u)}")
if u:
    check(get(u[0]["url"]) == 200, "the export's signed URL works")
    time.sleep(3.2)
    check(get(u[0]["url"]) == 404, "the export's signed URL expires")
print("FINDINGS:", FINDINGS)
