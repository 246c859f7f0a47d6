#!/bin/bash
# README.md as a new user (breaker9's readme.sh, plus the console link): "Run it", "Web console"
# and "Try it" in the repository root, literally except for the build profile: PROFILE=release
# (the README's `cargo run --release`) or PROFILE=debug (`cargo run`, to spare a release build
# on a shared 2-core machine). Prints what it checks; leaves the server stopped and ./data
# removed. Needs CARGO_TARGET_DIR with that build, wscat, jq, and for the console step node
# with playwright-core (NODE_PATH) and /usr/bin/chromium.
set -u
cd "$(git rev-parse --show-toplevel)"
PROFILE=${PROFILE:-release}
REL=(); [ "$PROFILE" = release ] && REL=(--release)
OUT=/tmp/breaker11; mkdir -p $OUT
if [ -e data ]; then echo "./data exists: not touching it"; exit 1; fi
cargo run -q "${REL[@]}" -- serve > $OUT/readme-serve.log 2>&1 &
PID=$!
echo "server pid $PID"
for _ in $(seq 1 300); do curl -sf http://127.0.0.1:8080/healthz >/dev/null && break; sleep 0.5; done
stat -c '%a %n' data data/chatd.db data/secrets.toml
grep -c '^admin_token = \|^jwt_secret = ' data/secrets.toml

ADMIN=$(sed -n 's/^admin_token = "\(.*\)"$/\1/p' data/secrets.toml)
echo "admin token read: ${#ADMIN} chars"
ALICE=$(cargo run -q "${REL[@]}" -- token alice)
echo "alice token lines: $(echo "$ALICE" | wc -l)"
BOB=$(curl -s -X POST http://127.0.0.1:8080/v1/tokens -H "Authorization: Bearer $ADMIN" \
        -d '{"userId":"bob","ttlSeconds":3600}' | jq -r .token)
echo "bob token: ${#BOB} chars"
curl -s -X POST http://127.0.0.1:8080/v1/channels -H "Authorization: Bearer $ADMIN" \
     -d '{"channelId":"room1","members":["alice","bob"]}'; echo

(sleep 4 | wscat -c "ws://127.0.0.1:8080/v1/ws?access_token=$BOB" -w 4 > $OUT/readme-bob.txt 2>&1) &
sleep 1
sleep 3 | wscat -c "ws://127.0.0.1:8080/v1/ws" -H "Authorization: Bearer $ALICE" \
  -x '{"type":"MSG_SEND","channelId":"room1","clientMsgId":"a-0001","body":"hi bob"}' \
  -x '{"type":"MSG_SEND","channelId":"room1","clientMsgId":"a-0001","body":"hi bob"}' \
  -x '{"type":"MSG_SEND","channelId":"room1","clientMsgId":"a-0001","body":"something else"}' -w 2
sleep 2
echo "--- bob:"; cat $OUT/readme-bob.txt
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
echo "--- the console link (README 'Web console'), opened in chromium:"
LINK="http://127.0.0.1:8080/console#token=$(cargo run -q "${REL[@]}" -- token alice)"
node --input-type=module -e "
import { createRequire } from 'node:module';
const require = createRequire(process.cwd() + '/');
const { chromium } = require('playwright-core');
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
const p = await b.newPage();
await p.goto(process.argv[1]);
await p.locator('#conn[data-state=\"connected\"]').waitFor({ timeout: 20000 }).catch((e) => console.log('not connected:', e.message));
console.log('address after load:', p.url().replace(/token=[^&]*/, 'token=…'));
console.log('channels shown:', await p.locator('button.channel').allTextContents());
console.log('header:', (await p.locator('header').first().textContent().catch(() => '')).replace(/\s+/g, ' ').slice(0, 200));
await b.close();
" "$LINK"
kill "$PID"; wait "$PID" 2>/dev/null
rm -rf data
