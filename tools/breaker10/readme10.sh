#!/bin/bash
# (breaker10: breaker9's readme.sh with its own paths; then `cargo test --workspace` started for 90 s)
# README.md as a new user: "Run it" and "Try it" in the repository root, literally
# (cargo run --release, ./data, 127.0.0.1:8080, wscat). Prints what it checks; leaves the
# server stopped and ./data removed. Needs CARGO_TARGET_DIR with a release build, wscat, jq.
set -u
cd "$(git rev-parse --show-toplevel)"
rm -rf data
cargo run -q --release -- serve > /tmp/breaker10/readme-serve.log 2>&1 &
PID=$!
echo "server pid $PID"
for _ in $(seq 1 100); do curl -sf http://127.0.0.1:8080/healthz >/dev/null && break; sleep 0.2; done
stat -c '%a %n' data data/chatd.db data/secrets.toml
grep -c '^admin_token = \|^jwt_secret = ' data/secrets.toml

ADMIN=$(sed -n 's/^admin_token = "\(.*\)"$/\1/p' data/secrets.toml)
echo "admin token read: ${#ADMIN} chars"
ALICE=$(cargo run -q --release -- token alice)
echo "alice token lines: $(echo "$ALICE" | wc -l)"
BOB=$(curl -s -X POST http://127.0.0.1:8080/v1/tokens -H "Authorization: Bearer $ADMIN" \
        -d '{"userId":"bob","ttlSeconds":3600}' | jq -r .token)
echo "bob token: ${#BOB} chars"
curl -s -X POST http://127.0.0.1:8080/v1/channels -H "Authorization: Bearer $ADMIN" \
     -d '{"channelId":"room1","members":["alice","bob"]}'; echo

(sleep 4 | wscat -c "ws://127.0.0.1:8080/v1/ws?access_token=$BOB" -w 4 > /tmp/breaker10/readme-bob.txt 2>&1) &
sleep 1
sleep 3 | wscat -c "ws://127.0.0.1:8080/v1/ws" -H "Authorization: Bearer $ALICE" \
  -x '{"type":"MSG_SEND","channelId":"room1","clientMsgId":"a-0001","body":"hi bob"}' \
  -x '{"type":"MSG_SEND","channelId":"room1","clientMsgId":"a-0001","body":"hi bob"}' \
  -x '{"type":"MSG_SEND","channelId":"room1","clientMsgId":"a-0001","body":"something else"}' -w 2
sleep 2
echo "--- bob:"; cat /tmp/breaker10/readme-bob.txt
echo "--- history:"
curl -s -H "Authorization: Bearer $BOB" "http://127.0.0.1:8080/v1/channels/room1/messages?afterSeq=0"; echo
curl -s -H "Authorization: Bearer $BOB" "http://127.0.0.1:8080/v1/channels/room1/messages?latest=true&limit=50" | jq -c '.messages|length'
curl -s -X POST http://127.0.0.1:8080/v1/channels/room1/messages -H "Authorization: Bearer $ADMIN" \
  -d '{"senderId":"alice","clientMsgId":"bot-1","body":"deployed"}'; echo
sleep 3 | wscat -c "ws://127.0.0.1:8080/v1/ws" -H "Authorization: Bearer $ALICE" \
  -x '{"type":"SYNC","channelId":"room1","afterSeq":0}' -w 2
for p in /v1/openapi.json /v1/asyncapi.json /console "/console/" /readyz /metrics; do
  echo "$p $(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8080$p)"
done
kill "$PID"; wait "$PID" 2>/dev/null
rm -rf data
echo "--- cargo test --workspace (started, stopped after 90 s):"
timeout ${TEST_SECS:-90} cargo test --workspace > /tmp/breaker10/readme-test.log 2>&1
echo "exit $? (124 = stopped by timeout)"; grep -E "^test |Running|error" /tmp/breaker10/readme-test.log | head -8
grep -c "\.\.\. ok" /tmp/breaker10/readme-test.log
