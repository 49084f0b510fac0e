#!/usr/bin/env bash
# ctest fixture: a private PostgreSQL for the DB tests, started through
# fabtrack's own embedded-server code (so that path is exercised every run),
# in a fresh temporary directory, and removed at the end.
# Usage: pg_fixture.sh start|stop FABTRACK_BINARY DATA_DIR
set -euo pipefail
action=$1 fabtrack=$2 dir=$3
case "$action" in
  start)
    # A directory left by an aborted run: stop what may still run there, start clean.
    if [[ -d "$dir" ]]; then "$fabtrack" db stop --data-dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; fi
    "$fabtrack" db start --data-dir "$dir"
    ;;
  stop)
    "$fabtrack" db stop --data-dir "$dir"
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start|stop FABTRACK DIR" >&2; exit 2 ;;
esac
