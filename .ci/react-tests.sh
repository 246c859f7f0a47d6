#!/usr/bin/env bash
# CI for the React binding (clients/react, chatd-react): npm ci from the committed
# package-lock.json, type check and build (src -> dist, tests -> build), the committed
# dist/ checked against that build, lint, then the tests in a real DOM (jsdom) against
# the real chatd (SQLite, and PostgreSQL when CHATD_TEST_DATABASE_URL is set): each hook
# (test/hooks.test.tsx) and docs/react.md's code built from the packed packages and run
# (test/guide.test.ts). Expects the chatd binary at target/debug/chatd (or CHATD_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

export CHATD_BIN="${CHATD_BIN:-$ROOT/target/debug/chatd}"
if [ ! -x "$CHATD_BIN" ]; then
  echo "FAIL: chatd binary not found at $CHATD_BIN (build it first: cargo build --bin chatd)" >&2
  exit 1
fi

cd clients/react
echo "== npm ci (clients/react)"
npm ci --no-audit --no-fund --loglevel=error

echo "== type check and build (tsc --strict: src -> dist, src + tests -> build)"
npm run --silent build:test

echo "== dist check: the committed dist/ is what src/ builds to"
cd "$ROOT"
if ! git diff --exit-code --stat -- clients/react/dist; then
  echo "FAIL: clients/react/dist is not what src/ builds to (cd clients/react && npm run build, then commit dist/)" >&2
  exit 1
fi
untracked="$(git ls-files --others --exclude-standard -- clients/react/dist)"
if [ -n "$untracked" ]; then
  echo "FAIL: the build makes files that are not committed: $untracked" >&2
  exit 1
fi
cd clients/react

echo "== lint (eslint + typescript-eslint)"
npm run --silent lint

echo "== tests: the hooks and docs/react.md in jsdom against chatd (node --test)"
node --test --test-concurrency=1 --test-timeout=300000 --test-reporter=spec build/react/test/*.test.js
