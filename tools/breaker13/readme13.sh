#!/bin/bash
# README.md "Run it" and "Try it" as a new user, in a fresh clone's root, with the debug
# binary standing in for `cargo run --release --` (CHATD_BIN, default
# /var/tmp/breaker13-run/chatd) and Python's websockets standing in for wscat (not installed).
# usage: cd <fresh clone> && bash readme13.sh      (needs port 8080 free; leaves ./data)
set -u
BIN=${CHATD_BIN:-/var/tmp/breaker13-run/chatd}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -e data ]; then echo "./data exists: not touching it"; exit 1; fi
"$BIN" serve > /var/tmp/breaker13-run/readme-serve.log 2>&1 &
PID=$!
for _ in $(seq 1 100); do curl -sf http://127.0.0.1:8080/healthz >/dev/null && break; sleep 0.2; done
stat -c '%a %n' data data/chatd.db data/secrets.toml
ADMIN=$(sed -n 's/^admin_token = "\(.*\)"$/\1/p' data/secrets.toml)
echo "admin token: ${#ADMIN} chars"
ALICE=$("$BIN" token alice)
echo "alice token lines: $(echo "$ALICE" | wc -l)"
BOB=$(curl -s -X POST http://127.0.0.1:8080/v1/tokens -H "Authorization: Bearer $ADMIN" \
        -d '{"userId":"bob","ttlSeconds":3600}' | jq -r .token)
echo "bob token: ${#BOB} chars"
curl -s -X POST http://127.0.0.1:8080/v1/channels -H "Authorization: Bearer $ADMIN" \
     -d '{"channelId":"room1","members":["alice","bob"]}'; echo
ALICE=$ALICE BOB=$BOB python3 - <<'PY'
import json, os, time
from websockets.sync.client import connect
bob = connect("ws://127.0.0.1:8080/v1/ws?access_token=" + os.environ["BOB"])
print("bob <", bob.recv(timeout=5))
alice = connect("ws://127.0.0.1:8080/v1/ws", additional_headers={"Authorization": "Bearer " + os.environ["ALICE"]})
print("alice <", alice.recv(timeout=5))
for body in ["hi bob", "hi bob", "something else"]:
    alice.send(json.dumps({"type": "MSG_SEND", "channelId": "room1", "clientMsgId": "a-0001", "body": body}))
    print("alice <", alice.recv(timeout=5))
time.sleep(1)
try:
    while True:
        print("bob <", bob.recv(timeout=1))
except TimeoutError:
    pass
PY
curl -s -H "Authorization: Bearer $BOB" "http://127.0.0.1:8080/v1/channels/room1/messages?afterSeq=0"; echo
curl -s -H "Authorization: Bearer $BOB" "http://127.0.0.1:8080/v1/channels/room1/messages?latest=true&limit=50" | jq -c '.messages|length'
curl -s -X POST http://127.0.0.1:8080/v1/channels/room1/messages -H "Authorization: Bearer $ADMIN" \
  -d '{"senderId":"alice","clientMsgId":"bot-1","body":"deployed"}'; echo
for p in /v1/openapi.json /v1/asyncapi.json /console /console/ /readyz /metrics; do
  echo "$p $(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8080$p)"
done
kill $PID; wait $PID
echo "server exit $?; panics in log: $(grep -c panick /var/tmp/breaker13-run/readme-serve.log)"
