"""kill -9 chatd while large uploads are in flight, S3 store (moto on 127.0.0.1:9000): after the
restart, the bucket's incomplete multipart uploads (parts already sent) are listed: no sweep of
chatd sees or aborts them (a bucket lifecycle rule would).

usage: crash_upload_s3.py PORT
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
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
from lib import check, channel, token, uid, FINDINGS, RUN  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = f"/var/tmp/b8-data-{port}"
shutil.rmtree(DATA, ignore_errors=True)
BUCKET = f"breaker8-{RUN}"
os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-east-1")
s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:9000", region_name="us-east-1")
s3.create_bucket(Bucket=BUCKET)


def start():
    out = subprocess.run(["bash", f"{HERE}/serve.sh", "sqlite", port, "CHATD_ATTACHMENT_ORPHAN_TTL_SECS=5",
                          "CHATD_ATTACHMENTS_STORE=s3", f"CHATD_ATTACHMENTS_S3_BUCKET={BUCKET}",
                          "CHATD_ATTACHMENTS_S3_ENDPOINT=http://127.0.0.1:9000", "CHATD_ATTACHMENTS_S3_REGION=us-east-1"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0])


pid = start()
u = uid("up")
c = uid("c")
channel(c, [u])
tok = token(u)
socks = []
for i in range(4):
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.sendall((f"POST /v1/channels/{c}/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tok}\r\n"
               f"Content-Type: application/octet-stream\r\nContent-Length: 25000000\r\n\r\n").encode())
    chunk = os.urandom(1 << 20)
    for _ in range(23):
        s.sendall(chunk)
    socks.append(s)
time.sleep(3)
os.kill(pid, signal.SIGKILL)
for s in socks:
    s.close()
time.sleep(1)
pid = start()
time.sleep(70)
ups = s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])
parts = 0
for up in ups:
    parts += sum(p["Size"] for p in s3.list_parts(Bucket=BUCKET, Key=up["Key"], UploadId=up["UploadId"]).get("Parts", []))
objs = s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])
print(f"   incomplete multipart uploads: {len(ups)} ({parts} bytes in parts); objects: {len(objs)}")
check(not ups and not objs, f"nothing left in the bucket by 4 killed uploads, 70 s after restart: {len(ups)} multipart uploads, {parts} bytes")
os.kill(pid, signal.SIGTERM)
print("FINDINGS:", FINDINGS)
