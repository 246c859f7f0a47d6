#!/bin/bash
# Starts a chatd for breaker9's scripts: serve.sh sqlite|pg [port] [extra env...]
# Prints the PID; data in /tmp/breaker9/data-<port> (or $B9_DATA), log in
# /tmp/breaker9/b9-<port>.log, database breaker9_<port> (or $B9_DB).
# tools/hostile/serve.sh does the work; CHATD_BIN overrides the binary.
HOSTILE_NAME=breaker9 HOSTILE_PORT=18900 HOSTILE_DATA=$B9_DATA HOSTILE_DATA_PREFIX=/tmp/breaker9/data- \
  HOSTILE_LOG_PREFIX=/tmp/breaker9/b9- HOSTILE_DB=$B9_DB HOSTILE_DB_PREFIX=breaker9_ \
  exec bash "$(dirname "$0")/../hostile/serve.sh" "$@"
