#!/usr/bin/env bash
# TLS to the server and passwords kept off the command line: a private
# PostgreSQL that accepts only TLS (hostssl, scram-sha-256) with a self-signed
# certificate; fabtrack connects with sslmode=verify-full against that CA and
# the password from a passfile (PGPASSFILE). Plain TCP is refused, a wrong CA
# is refused, and the password never shows in fabtrack's output.
# Usage: tests/reliability/tls_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d)
chmod 755 "$work"
data=$work/db
cleanup() {
  "$fabtrack" db stop --data-dir "$data" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v openssl >/dev/null || fail "openssl not installed"

"$fabtrack" db start --data-dir "$data" >/dev/null 2>&1
local_db="host=$data/run dbname=fabtrack user=fabtrack"
secret="s3cret-$RANDOM-$RANDOM"
psql "$local_db" -qc "CREATE ROLE tls_collector LOGIN PASSWORD '$secret' IN ROLE fabtrack_writer"

# A CA and a server certificate for localhost / 127.0.0.1.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=fabtrack test CA" \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$work/server.key" \
  -out "$work/server.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$work/san.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
  -CAcreateserial -days 2 -extfile "$work/san.ext" -out "$work/server.crt" 2>/dev/null
owner=$(stat -c %U "$data/data")
cp "$work/server.crt" "$work/server.key" "$data/data/"
chown "$owner" "$data/data/server.crt" "$data/data/server.key"
chmod 600 "$data/data/server.key"
port=$((20000 + RANDOM % 20000))
cat >>"$data/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
CONF
cat >"$data/data/pg_hba.conf" <<HBA
local   all all                  trust
hostssl all all 127.0.0.1/32     scram-sha-256
host    all all 127.0.0.1/32     reject
HBA
"$fabtrack" db stop --data-dir "$data" >/dev/null 2>&1
# The embedded server listens on its socket with the port it was created with;
# start it with pg_ctl directly so the new port and TLS apply.
su "$owner" -s /bin/sh -c "/usr/lib/postgresql/15/bin/pg_ctl start -D '$data/data' -l '$data/tls.log' -w" >/dev/null
stop_tls() { su "$owner" -s /bin/sh -c "/usr/lib/postgresql/15/bin/pg_ctl stop -D '$data/data' -m fast -w" >/dev/null 2>&1 || true; }
trap 'stop_tls; rm -rf "$work"' EXIT

printf '127.0.0.1:%s:fabtrack:tls_collector:%s\n' "$port" "$secret" >"$work/pgpass"
chmod 600 "$work/pgpass"
export PGPASSFILE=$work/pgpass
tls="host=127.0.0.1 port=$port dbname=fabtrack user=tls_collector sslmode=verify-full sslrootcert=$work/ca.crt"

"$fabtrack" ingest --db "$tls" "$src/tests/fixtures/nccl_tests/t06_allreduce_newest_16rank_pci_ids.txt" \
  --cluster tls --at 2026-11-30T02:00:00Z >"$work/ingest.log" 2>&1 ||
  { cat "$work/ingest.log"; fail "ingest over TLS failed"; }
grep -q "stored run" "$work/ingest.log" || fail "nothing stored over TLS: $(cat "$work/ingest.log")"
grep -q "$secret" "$work/ingest.log" && fail "the password appeared in fabtrack's output"
[[ $(psql "host=$data/run port=$port dbname=fabtrack user=fabtrack" -Atc "SELECT count(*) FROM runs WHERE cluster = 'tls'") == 1 ]] ||
  fail "run not in the database"

# Without TLS the server refuses; with another CA the client refuses.
if "$fabtrack" runs list --db "host=127.0.0.1 port=$port dbname=fabtrack user=tls_collector sslmode=disable" \
  >"$work/plain.log" 2>&1; then fail "a plain-TCP connection was accepted"; fi
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=other CA" -keyout "$work/other.key" \
  -out "$work/other.crt" 2>/dev/null
if "$fabtrack" runs list --db "host=127.0.0.1 port=$port dbname=fabtrack user=tls_collector sslmode=verify-full sslrootcert=$work/other.crt" \
  >"$work/wrongca.log" 2>&1; then fail "a server certificate from an unknown CA was accepted"; fi
grep -qi "certificate" "$work/wrongca.log" || fail "no clear certificate error: $(cat "$work/wrongca.log")"
grep -q "$secret" "$work"/*.log && fail "the password appeared in a log"
echo "TLS: verify-full with a passfile works; plain TCP and unknown CAs are refused"
