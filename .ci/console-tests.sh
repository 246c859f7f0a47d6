#!/usr/bin/env bash
# The web console: the dist check, the lint (eslint + typescript-eslint), then the
# browser tests (console/test, Debian's Chromium driven by playwright-core) against
# target/debug/chatd (or CHATD_BIN).
# Installs what it needs: Chromium from apt when missing, console/'s npm packages.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! dpkg -s chromium fonts-noto-color-emoji >/dev/null 2>&1; then
  echo "installing Debian's chromium (and an emoji font for the screenshots)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null
fi

echo "== console: dist check"
bash .ci/console-check

# console-check ran `npm ci` in console/, so eslint is installed
echo "== console: lint (eslint + typescript-eslint)"
(cd console && npm run --silent lint)

if [ -z "${CHATD_BIN:-}" ]; then
  cargo build --locked --bin chatd
fi

echo "== console: browser tests"
(cd console && npm test)
