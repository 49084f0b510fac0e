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
    # A migrated database that the DB tests copy (tests/support/test_database.cc):
    # one migration run here instead of one per test.
    server="host=$dir/run dbname=fabtrack user=fabtrack"
    psql "$server" -qc "CREATE DATABASE fabtrack_migrated_template"
    "$fabtrack" db migrate --db "host=$dir/run dbname=fabtrack_migrated_template user=fabtrack" >/dev/null
    ;;
  stop)
    "$fabtrack" db stop --data-dir "$dir"
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start|stop FABTRACK DIR" >&2; exit 2 ;;
esac
