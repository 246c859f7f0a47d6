#!/usr/bin/env bash
# CI for the AsyncAPI document of the WebSocket frames (src/http/asyncapi/asyncapi.json,
# served at GET /v1/asyncapi.json): npm ci from tools/asyncapi-check's committed
# package-lock.json (@asyncapi/parser, ajv), then the AsyncAPI project's parser over the
# document (errors and warnings fail) and every message's examples against its payload
# schema. The Rust tests of src/http/asyncapi check the same document against chatd-proto's
# frame types. About 35 s on an idle machine, most of it npm ci.
set -euo pipefail
cd "$(dirname "$0")/../tools/asyncapi-check"

echo "== npm ci (tools/asyncapi-check)"
npm ci --no-audit --no-fund --loglevel=error

echo "== @asyncapi/parser over src/http/asyncapi/asyncapi.json, and the examples"
node check.mjs
