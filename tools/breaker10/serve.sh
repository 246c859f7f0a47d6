#!/bin/bash
# Starts a chatd for breaker10's scripts: serve.sh sqlite|pg [port] [extra env...]
# Prints the PID; data in /tmp/breaker10/data-<port> (or $B10_DATA), log in
# /tmp/breaker10/b10-<port>.log, database breaker10_<port> (or $B10_DB).
# tools/hostile/serve.sh does the work; CHATD_BIN overrides the binary.
HOSTILE_NAME=breaker10 HOSTILE_PORT=19100 HOSTILE_DATA=$B10_DATA HOSTILE_DATA_PREFIX=/tmp/breaker10/data- \
  HOSTILE_LOG_PREFIX=/tmp/breaker10/b10- HOSTILE_DB=$B10_DB HOSTILE_DB_PREFIX=breaker10_ \
  exec bash "$(dirname "$0")/../hostile/serve.sh" "$@"
