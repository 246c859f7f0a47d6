"""S3 store: a client that goes away in the middle of an upload (no crash, the server keeps
running). Are the parts it already sent left in the bucket as an incomplete multipart upload?
And with the file store, is anything left?

usage: disconnect_upload_s3.py PORT [file]
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import boto3

port = sys.argv[1]
store = sys.argv[2] if len(sys.argv) > 2 else "s3"
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import check, channel, token, uid, FINDINGS, RUN, http  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/var/tmp/b8-data-{port}"
shutil.rmtree(DATA, ignore_errors=True)
BUCKET = f"breaker8-d-{RUN}"
os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-east-1")
s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:9000", region_name="us-east-1")
extra = []
if store == "s3":
    s3.create_bucket(Bucket=BUCKET)
    extra = ["CHATD_ATTACHMENTS_STORE=s3", f"CHATD_ATTACHMENTS_S3_BUCKET={BUCKET}",
             "CHATD_ATTACHMENTS_S3_ENDPOINT=http://127.0.0.1:9000", "CHATD_ATTACHMENTS_S3_REGION=us-east-1"]
out = subprocess.run(["bash", f"{HERE}/serve.sh", "sqlite", port, "CHATD_ATTACHMENT_ORPHAN_TTL_SECS=5"] + extra,
                     capture_output=True, text=True)
assert out.returncode == 0, out.stderr
pid = int(out.stdout.split()[0])
u = uid("up")
c = uid("c")
channel(c, [u])
tok = token(u)
for i in range(3):
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.sendall((f"POST /v1/channels/{c}/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tok}\r\n"
               f"Content-Type: application/octet-stream\r\nContent-Length: 25000000\r\n\r\n").encode())
    chunk = os.urandom(1 << 20)
    for _ in range(23):
        s.sendall(chunk)
    time.sleep(2)
    s.close()          # the client goes away, 23 MB into 25 MB
time.sleep(70)
if store == "s3":
    ups = s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])
    parts = sum(sum(p["Size"] for p in s3.list_parts(Bucket=BUCKET, Key=x["Key"], UploadId=x["UploadId"]).get("Parts", [])) for x in ups)
    objs = s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    print(f"   incomplete multipart uploads: {len(ups)} ({parts} bytes in parts); objects: {len(objs)}")
    check(not ups and not objs, f"nothing left in the bucket by 3 uploads whose clients went away: {len(ups)} multipart uploads, {parts} bytes")
else:
    left = [(n, os.path.getsize(os.path.join(r, n))) for r, _, ns in os.walk(os.path.join(DATA, "attachments")) for n in ns]
    check(not left, f"nothing left on disk by 3 uploads whose clients went away: {left}")
s, b = http("POST", f"/v1/channels/{c}/attachments", token=tok, raw=b"x", headers={"Content-Type": "text/plain"})
check(s == 201, f"the user can upload again (slots and quota back): {s} {b}")
os.kill(pid, signal.SIGTERM)
print("FINDINGS:", FINDINGS)
