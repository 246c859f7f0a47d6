#!/usr/bin/env bash
# CI for the TypeScript client (clients/typescript): type check, the committed dist/
# checked against a fresh build, lint, unit tests,
# integration tests against the real chatd (SQLite, and PostgreSQL when
# CHATD_TEST_DATABASE_URL is set), browser tests in headless Chromium, and a short
# fault-injection run with SDK devices (chatd-faults --sdk-driver); the package installed
# as the README says (npm pack, a checkout) and the README's code type-checked and run.
# Expects the chatd binary at target/debug/chatd (or CHATD_BIN) and the harness at
# target/debug/chatd-faults (or CHATD_FAULTS_BIN). Run as root from any directory;
# exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

export CHATD_BIN="${CHATD_BIN:-$ROOT/target/debug/chatd}"
if [ ! -x "$CHATD_BIN" ]; then
  echo "FAIL: chatd binary not found at $CHATD_BIN (build it first: cargo build --bin chatd)" >&2
  exit 1
fi
CHATD_FAULTS_BIN="${CHATD_FAULTS_BIN:-$ROOT/target/debug/chatd-faults}"
if [ ! -x "$CHATD_FAULTS_BIN" ]; then
  echo "FAIL: chatd-faults not found at $CHATD_FAULTS_BIN (build it first: cargo build -p chatd-faults)" >&2
  exit 1
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "chromium is not installed; installing Debian's package"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

cd clients/typescript
echo "== npm ci (clients/typescript)"
# --ignore-scripts: no dependency needs an install script; the build is done below, once
npm ci --no-audit --no-fund --ignore-scripts

echo "== type check and build (tsc --strict: src -> dist, src + tests -> build)"
npm run --silent build:test

echo "== dist check: the committed dist/ is what src/ builds to"
# dist/ is committed so that the package installs with no build step (README "Install")
cd "$ROOT"
if ! git diff --exit-code --stat -- clients/typescript/dist; then
  echo "FAIL: clients/typescript/dist is not what src/ builds to (cd clients/typescript && npm run build, then commit dist/)" >&2
  exit 1
fi
untracked="$(git ls-files --others --exclude-standard -- clients/typescript/dist)"
if [ -n "$untracked" ]; then
  echo "FAIL: the build makes files that are not committed: $untracked" >&2
  exit 1
fi
cd clients/typescript

echo "== lint (eslint + typescript-eslint)"
npm run --silent lint

echo "== tests: unit, integration, browser, install and the README's code (node --test)"
# spec reporter for people, and the runner's own summary (tests/pass/fail) at the end
node --test --test-concurrency=1 --test-timeout=600000 --test-reporter=spec \
  build/test/unit/ build/test/integration/ build/test/browser/ build/test/install/

echo "== fault harness with SDK devices: kill -9, SIGTERM, reconnect storms (20 s, SQLite)"
# one device of each user through the SDK (build/test/faults/driver.js), the other through
# the Rust client; the same checker (docs/reliability.md)
"$CHATD_FAULTS_BIN" --chatd "$CHATD_BIN" --duration 20s --fault-every 3s --faults kill,term,storm \
  --sdk-driver build/test/faults/driver.js --sdk-devices 1
