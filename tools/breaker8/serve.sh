#!/bin/bash
# Starts a chatd for breaker8's scripts: serve.sh sqlite|pg [port] [extra env...]
# Prints the PID; data in /var/tmp/b8-data-<port> (or $B8_DATA), log in
# /var/tmp/b8-<port>.log, database breaker8_<port> (or $B8_DB).
# tools/hostile/serve.sh does the work; CHATD_BIN overrides the binary.
HOSTILE_NAME=breaker8 HOSTILE_PORT=18980 HOSTILE_DATA=$B8_DATA HOSTILE_DATA_PREFIX=/var/tmp/b8-data- \
  HOSTILE_LOG_PREFIX=/var/tmp/b8- HOSTILE_DB=$B8_DB HOSTILE_DB_PREFIX=breaker8_ \
  exec bash "$(dirname "$0")/../hostile/serve.sh" "$@"
