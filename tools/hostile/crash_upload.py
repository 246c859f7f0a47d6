"""kill -9 chatd while four large uploads are in flight; after the restart, wait past the orphan
TTL and its sweep and list what the uploads left behind:
- file store: files under <data>/attachments (object_store's staging files `<id>#<n>` hold the
  parts written so far);
- S3 store (moto on --s3-endpoint): the bucket's incomplete multipart uploads (parts already
  sent) and its objects.
Nothing may be left.

usage: crash_upload.py PORT [file|s3] [--serve SERVE_SH] [--data DIR] [--s3-endpoint URL]
  Starts and kills its own server (SQLite) with a breaker's serve.sh, which prints its PID.
  --serve defaults to CHATD_SERVE; --data (the data dir serve.sh uses for PORT, removed
  first) to CHATD_SERVE_DATA; CHATD_ADMIN_TOKEN must be the admin token serve.sh gives the
  server (as for chatd_lib.py). Example, breaker8's server:
    CHATD_SERVE=tools/breaker8/serve.sh CHATD_ADMIN_TOKEN=breaker8-admin-token-0123456789 \\
      python3 tools/hostile/crash_upload.py 18985 file --data /var/tmp/b8-data-18985
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

ap = argparse.ArgumentParser(description="kill -9 chatd mid-upload; nothing may be left behind")
ap.add_argument("port")
ap.add_argument("store", nargs="?", choices=["file", "s3"], default="file")
ap.add_argument("--serve", default=os.environ.get("CHATD_SERVE"), help="a breaker's serve.sh (CHATD_SERVE)")
ap.add_argument("--data", default=os.environ.get("CHATD_SERVE_DATA"),
                help="the data dir serve.sh uses for PORT, removed first (CHATD_SERVE_DATA)")
ap.add_argument("--s3-endpoint", default="http://127.0.0.1:9000")
args = ap.parse_args()
if not args.serve or not args.data:
    ap.error("--serve (CHATD_SERVE) and --data (CHATD_SERVE_DATA) are needed")
port = args.port
os.environ["CHATD_URL"] = f"http://127.0.0.1:{port}"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chatd_lib import FINDINGS, RUN, channel, check, token, uid  # noqa: E402

shutil.rmtree(args.data, ignore_errors=True)
serve_env = ["CHATD_ATTACHMENT_ORPHAN_TTL_SECS=5"]
if args.store == "s3":
    import boto3

    BUCKET = f"crash-upload-{RUN}"
    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-east-1")
    s3 = boto3.client("s3", endpoint_url=args.s3_endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    serve_env += ["CHATD_ATTACHMENTS_STORE=s3", f"CHATD_ATTACHMENTS_S3_BUCKET={BUCKET}",
                  f"CHATD_ATTACHMENTS_S3_ENDPOINT={args.s3_endpoint}", "CHATD_ATTACHMENTS_S3_REGION=us-east-1"]


def start():
    out = subprocess.run(["bash", args.serve, "sqlite", port, *serve_env], capture_output=True, text=True)
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
    sent = 0
    chunk = os.urandom(1 << 20)
    while sent < 24_000_000:
        s.sendall(chunk)
        sent += len(chunk)
    socks.append(s)
time.sleep(3)
os.kill(pid, signal.SIGKILL)
for s in socks:
    s.close()
time.sleep(1)
pid = start()
time.sleep(75)     # past the orphan TTL (5 s) and its sweep (every min(TTL, 60) s)
if args.store == "file":
    left = []
    for root, _, names in os.walk(os.path.join(args.data, "attachments")):
        for n in names:
            p = os.path.join(root, n)
            left.append((p, os.path.getsize(p)))
    print("left under attachments/:", [(os.path.basename(p), n) for p, n in left])
    check(not left, f"nothing left by 4 uploads killed 24 MB into 25 MB, 75 s after restart: "
                    f"{len(left)} files, {sum(n for _, n in left)} bytes")
else:
    ups = s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])
    parts = 0
    for up in ups:
        parts += sum(p["Size"] for p in s3.list_parts(Bucket=BUCKET, Key=up["Key"], UploadId=up["UploadId"]).get("Parts", []))
    objs = s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    print(f"   incomplete multipart uploads: {len(ups)} ({parts} bytes in parts); objects: {len(objs)}")
    check(not ups and not objs, f"nothing left in the bucket by 4 killed uploads, 75 s after restart: "
                                f"{len(ups)} multipart uploads, {parts} bytes")
os.kill(pid, signal.SIGTERM)
print("FINDINGS:", FINDINGS)
