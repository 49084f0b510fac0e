#!/usr/bin/env bash
# `fabtrack analyze --pushgateway` against a real Pushgateway daemon (Debian's
# prometheus-pushgateway on a free loopback port) and a private embedded
# database with real findings:
#  - a night with a socket fallback: the gateway's group job/cluster/labels
#    holds every series of the textfile (same values) plus the grouping
#    labels; promtool lints what the gateway serves;
#  - the next, healthy night: the finding is resolved in the database and its
#    series is gone from the gateway (PUT replaced the group);
#  - a push to a dead port: exit 3 with a clear message, the findings stored
#    and the textfile written all the same;
#  - basic auth (the gateway's --web.config.file, bcrypt from htpasswd):
#    refused without credentials, accepted from the environment and from
#    --pushgateway-auth-file, a wrong password refused; credentials in the
#    URL refused; the password in no argv and no output.
# Usage: tests/cli/pushgateway_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
src=$1
fabtrack=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in prometheus-pushgateway curl python3 psql; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"
done

work=$(mktemp -d)
chmod 755 "$work"  # the embedded server runs unprivileged when the test runs as root
export FABTRACK_SPOOL_DIR=$work/spool
# The gateway is on loopback: a proxy from the environment must not get in the way.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
unset FABTRACK_PUSHGATEWAY_USER FABTRACK_PUSHGATEWAY_PASSWORD
gateway_pids=()
cleanup() {
  for pid in "${gateway_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_gateway PORT [flags]: a pushgateway without persistence, ready to answer.
start_gateway() {
  local port=$1
  shift
  prometheus-pushgateway --web.listen-address="127.0.0.1:$port" --persistence.file="" "$@" \
    >"$work/gateway-$port.log" 2>&1 &
  gateway_pids+=($!)
  for _ in $(seq 100); do
    # Any HTTP answer (200, or 401 behind basic auth) means it listens.
    [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/-/ready") != 000 ]] && return
    sleep 0.1
  done
  cat "$work/gateway-$port.log" >&2
  fail "pushgateway on port $port did not start"
}

# same_series TEXTFILE SCRAPE LABELS_JSON: every sample of the textfile is in
# the scrape with the grouping labels added and the same value; no fabtrack_
# sample of that group is in the scrape that the textfile does not have.
same_series() {
  python3 - "$@" <<'PY'
import json, re, sys
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
label = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
def samples(path, keep):
  out = {}
  for line in open(path):
    line = line.strip()
    if not line or line.startswith('#'):
      continue
    m = sample.match(line)
    if not m:
      sys.exit(f"unparsable line in {path}: {line}")
    name, labels, value = m.group(1), dict(label.findall(m.group(2) or '')), float(m.group(3))
    if keep(name, labels):
      out[(name, tuple(sorted(labels.items())))] = value
  return out
grouping = json.loads(sys.argv[3])
textfile = samples(sys.argv[1], lambda n, l: True)
in_group = lambda n, l: n.startswith('fabtrack_') and all(l.get(k) == v for k, v in grouping.items())
scraped = samples(sys.argv[2], in_group)
want = {}
for (name, labels), value in textfile.items():
  want[(name, tuple(sorted({**dict(labels), **grouping}.items())))] = value
if want != scraped:
  for k in sorted(set(want) | set(scraped)):
    if want.get(k) != scraped.get(k):
      print(f"  {k}: textfile {want.get(k)} gateway {scraped.get(k)}", file=sys.stderr)
  sys.exit("the gateway's group differs from the textfile")
print(f"  gateway group == textfile: {len(want)} series")
PY
}

"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1
db="host=$work/db/run dbname=fabtrack user=fabtrack"
examples=$src/examples/lab-cluster
ingest() { "$fabtrack" ingest --db "$db" --cluster lab "$@" >/dev/null 2>&1 || fail "ingest $*"; }
open_findings() {
  psql "$db" -Atc "SELECT count(*) FROM findings WHERE cluster = 'lab' AND kind = 'socket_fallback' AND state = 'open'"
}

port=$(free_port)
start_gateway "$port"
gateway=http://127.0.0.1:$port
push=(--pushgateway "$gateway" --pushgateway-label instance=head-01 --pushgateway-label site=dc1/row2)
grouping='{"job": "fabtrack_analyze", "cluster": "lab", "instance": "head-01", "site": "dc1/row2"}'

echo "--- night 1: a socket fallback, pushed"
ingest "$examples/2026-11-28_allreduce_4node.txt" --at 2026-11-28T02:00:00Z
ingest "$examples/2026-11-29_allreduce_4node_socket_fallback.txt" --at 2026-11-29T02:00:00Z
status=0
"$fabtrack" analyze --db "$db" --cluster lab --textfile "$work/night1.prom" "${push[@]}" \
  >"$work/night1.out" 2>"$work/night1.err" || status=$?
((status == 2)) || { cat "$work/night1.err"; fail "night 1 exited $status, want 2 (critical)"; }
# The "/" in site= went through the Pushgateway's base64 escape.
grep -q "pushed to $gateway/metrics/job/fabtrack_analyze/cluster/lab/instance/head-01/site@base64/ZGMxL3JvdzI=" \
  "$work/night1.err" || fail "no 'pushed to' line: $(cat "$work/night1.err")"
curl -sf "$gateway/metrics" >"$work/scrape1.txt"
grep -E '^fabtrack_finding\{' "$work/scrape1.txt" | grep 'kind="socket_fallback"' | grep 'job="fabtrack_analyze"' |
  grep 'cluster="lab"' | grep 'instance="head-01"' | grep 'site="dc1/row2"' | grep 'severity="critical"' >/dev/null ||
  fail "no socket_fallback series with the grouping labels: $(grep fabtrack_ "$work/scrape1.txt")"
same_series "$work/night1.prom" "$work/scrape1.txt" "$grouping"
grep -q '^push_time_seconds{.*cluster="lab"' "$work/scrape1.txt" || fail "no push_time_seconds for the group"
promtool check metrics <"$work/scrape1.txt" || fail "promtool finds fault with what the gateway serves"

echo "--- night 2: healthy; the finding resolved and gone from the gateway"
# The baseline's content again would be "already stored": a comment makes it a new run.
{ cat "$examples/2026-11-28_allreduce_4node.txt"; echo "# night of 2026-11-30"; } >"$work/night2.txt"
ingest "$work/night2.txt" --at 2026-11-30T02:00:00Z
status=0
"$fabtrack" analyze --db "$db" --cluster lab --textfile "$work/night2.prom" "${push[@]}" \
  >"$work/night2.out" 2>"$work/night2.err" || status=$?
((status == 0)) || { cat "$work/night2.err"; fail "night 2 exited $status, want 0"; }
grep -Eq "[1-9][0-9]* resolved" "$work/night2.err" || fail "finding not resolved: $(cat "$work/night2.err")"
curl -sf "$gateway/metrics" >"$work/scrape2.txt"
! grep -q '^fabtrack_finding{' "$work/scrape2.txt" || fail "a resolved finding is still on the gateway"
grep -q '^fabtrack_analysis_status{.*cluster="lab".*} 0$' "$work/scrape2.txt" || fail "status not replaced"
same_series "$work/night2.prom" "$work/scrape2.txt" "$grouping"

echo "--- a dead gateway: exit 3, findings stored and textfile written all the same"
{ cat "$examples/2026-11-29_allreduce_4node_socket_fallback.txt"; echo "# night of 2026-12-01"; } >"$work/night3.txt"
ingest "$work/night3.txt" --at 2026-12-01T02:00:00Z
dead=$(free_port)
status=0
"$fabtrack" analyze --db "$db" --cluster lab --textfile "$work/night3.prom" \
  --pushgateway "http://127.0.0.1:$dead" >"$work/night3.out" 2>"$work/night3.err" || status=$?
cat "$work/night3.err"
((status == 3)) || fail "push to a dead port exited $status, want 3"
grep -q "Pushgateway push failed: cannot push to http://127.0.0.1:$dead/metrics/job/fabtrack_analyze/cluster/lab" \
  "$work/night3.err" || fail "unclear push failure message"
grep -q "the findings are stored and the report is written; the analysis status is 2 (critical)" \
  "$work/night3.err" || fail "the failure does not say what the analysis found"
[[ $(open_findings) == 1 ]] || fail "the finding of the night was not stored"
grep -q 'fabtrack_finding{.*kind="socket_fallback"' "$work/night3.prom" || fail "textfile not written"
# One problem for one cause: no RDMA (rdma_absent), its socket fallback folded in.
grep -q "CRITICAL  rdma_absent" "$work/night3.out" || fail "report not printed"
grep -q "same cause: socket_fallback" "$work/night3.out" || fail "the socket fallback is not in its cause's problem"

echo "--- bad grouping label: refused before any work (exit 3)"
status=0
"$fabtrack" analyze --db "$db" --cluster lab --pushgateway "$gateway" --pushgateway-label cluster=x \
  >/dev/null 2>"$work/label.err" || status=$?
((status == 3)) && grep -q 'always set by fabtrack analyze' "$work/label.err" ||
  fail "grouping label cluster= not refused: $status $(cat "$work/label.err")"

echo "--- basic auth"
password="pw-$RANDOM$RANDOM-not-for-logs"
if command -v htpasswd >/dev/null; then
  # -i: the password from stdin, not htpasswd's argv.
  hash=$(printf '%s' "$password" | htpasswd -niB fabtrack | cut -d: -f2-)
elif python3 -c 'import crypt' 2>/dev/null; then
  hash=$(printf '%s' "$password" |
    python3 -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.stdin.read(), crypt.mksalt(crypt.METHOD_BLOWFISH)))')
else
  hash=""
fi
if [[ -z $hash ]]; then
  echo "SKIPPED basic-auth checks: neither htpasswd (apache2-utils) nor python3's crypt can make a bcrypt hash"
else
  printf 'basic_auth_users:\n  fabtrack: %s\n' "$hash" >"$work/web.yml"
  auth_port=$(free_port)
  start_gateway "$auth_port" --web.config.file="$work/web.yml"
  auth_gateway=http://127.0.0.1:$auth_port
  # curl's credentials through its config on stdin: not on this test's argv either.
  scrape_auth() { printf 'user = "fabtrack:%s"\n' "$password" | curl -sf -K - "$auth_gateway/metrics"; }
  outputs=()
  run_auth() {  # run_auth NAME [env...] -- analyze flags...: status in $status
    local name=$1
    shift
    local env=()
    while [[ $1 != -- ]]; do env+=("$1"); shift; done
    shift
    local argv=("$fabtrack" analyze --db "$db" --cluster lab --no-store --pushgateway "$auth_gateway" "$@")
    [[ "${argv[*]}" != *"$password"* ]] || fail "$name: the password is on the command line"
    status=0
    env "${env[@]}" "${argv[@]}" >"$work/$name.out" 2>"$work/$name.err" || status=$?
    outputs+=("$work/$name.out" "$work/$name.err")
  }

  run_auth noauth --
  ((status == 3)) && grep -q "answered HTTP 401 (it wants basic-auth credentials)" "$work/noauth.err" ||
    fail "push without credentials: $status $(cat "$work/noauth.err")"

  run_auth env FABTRACK_PUSHGATEWAY_USER=fabtrack FABTRACK_PUSHGATEWAY_PASSWORD="$password" --
  ((status == 2)) || fail "push with credentials from the environment exited $status: $(cat "$work/env.err")"
  scrape_auth >"$work/scrape-env.txt" || fail "cannot scrape the gateway with credentials"
  grep -q '^fabtrack_finding{.*kind="socket_fallback"' "$work/scrape-env.txt" || fail "nothing pushed with env credentials"

  printf 'fabtrack:%s\n' "$password" >"$work/auth"
  chmod 600 "$work/auth"
  curl -sf -X DELETE -K - "$auth_gateway/metrics/job/fabtrack_analyze/cluster/lab" <<<"user = \"fabtrack:$password\""
  run_auth file -- --pushgateway-auth-file "$work/auth"
  ((status == 2)) || fail "push with --pushgateway-auth-file exited $status: $(cat "$work/file.err")"
  ! grep -q "readable by other users" "$work/file.err" || fail "a 0600 file was called readable"
  scrape_auth >"$work/scrape-file.txt" || fail "cannot scrape the gateway with credentials"
  grep -q '^fabtrack_finding{.*kind="socket_fallback"' "$work/scrape-file.txt" || fail "nothing pushed with the auth file"

  printf 'fabtrack:wrong-%s\n' "$password" >"$work/badauth"
  chmod 644 "$work/badauth"
  run_auth wrong -- --pushgateway-auth-file "$work/badauth"
  ((status == 3)) && grep -q "answered HTTP 401 (check the credentials)" "$work/wrong.err" ||
    fail "a wrong password: $status $(cat "$work/wrong.err")"
  grep -q "badauth is readable by other users" "$work/wrong.err" || fail "no warning for a 0644 auth file"

  # Credentials in the URL are refused before any work, and not echoed.
  status=0
  "$fabtrack" analyze --db "$db" --cluster lab --no-store \
    --pushgateway "http://fabtrack:$password@127.0.0.1:$auth_port" >"$work/url.out" 2>"$work/url.err" || status=$?
  outputs+=("$work/url.out" "$work/url.err")
  ((status == 3)) && grep -q "carries credentials" "$work/url.err" ||
    fail "credentials in the URL: $status $(cat "$work/url.err")"

  for f in "${outputs[@]}"; do
    ! grep -qF "$password" "$f" || fail "the password is in $(basename "$f")"
  done
  echo "  basic auth: 401 without, pushed with env and file credentials, wrong password and URL credentials refused"
fi
echo "analyze --pushgateway: pushed, replaced, failures reported with exit 3, basic auth kept off argv and logs"
