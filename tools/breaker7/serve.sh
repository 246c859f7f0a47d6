#!/bin/bash
# Starts a chatd for breaker7's scripts: serve.sh sqlite|pg [port] [extra env...]
# Prints the PID; data in /var/tmp/b7-data-<port>, log in /var/tmp/b7-<port>.log,
# database b7_<port> (or $B7_DB).
# tools/hostile/serve.sh does the work; CHATD_BIN overrides the binary.
HOSTILE_NAME=breaker7 HOSTILE_PORT=18907 HOSTILE_DATA_PREFIX=/var/tmp/b7-data- \
  HOSTILE_LOG_PREFIX=/var/tmp/b7- HOSTILE_DB=$B7_DB HOSTILE_DB_PREFIX=b7_ \
  exec bash "$(dirname "$0")/../hostile/serve.sh" "$@"
