#!/usr/bin/env bash
# The exporter behind --web.config.file (node_exporter's format), scraped by
# a real Prometheus over TLS with a client certificate and basic auth:
#  - Prometheus (https, tls_config with the CA and its client certificate,
#    basic_auth from a password file) sees the target up and stores
#    node_infiniband_* series;
#  - refusals: a wrong password and no password (401 with WWW-Authenticate),
#    plain HTTP to the TLS port (no metrics), a client certificate from
#    another CA and no client certificate (RequireAndVerifyClientCert: the
#    handshake is refused), a client stalled mid-handshake holds no one up;
#  - SIGHUP re-reads the file: a new password takes over (Prometheus with the
#    old one is refused until its password file changes), a broken file is
#    reported with file:line and the running configuration kept, and each
#    client_auth_type lets in and refuses the certificates it should;
#  - a bad configuration at start is exit 1 naming file:line or the file;
#  - the passwords are in no log and no command line.
# Usage: tests/counters/exporter_tls_test.sh FABTRACK FIXTURES
set -euo pipefail
fabtrack=$1 fixtures=$2
work=$(mktemp -d)
server="" prometheus=""
cleanup() {
  [[ -n $prometheus ]] && kill "$prometheus" 2>/dev/null && wait "$prometheus" 2>/dev/null
  [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "--- serve.err"; cat "$work/serve.err" 2>/dev/null || true
  echo "FAIL: $*"
  exit 1
}
for tool in openssl curl prometheus python3; do
  command -v $tool >/dev/null || fail "$tool missing (scripts/install-deps.sh)"
done
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
# bcrypt of stdin (never an argument): htpasswd where apache2-utils is
# installed, else perl's crypt(3), which is libxcrypt's.
bcrypt() {
  if command -v htpasswd >/dev/null; then
    htpasswd -niBC 10 prometheus | cut -d: -f2-
  else
    perl -e 'my @c = ("a".."z", "A".."Z", 0..9, ".", "/");
             my $salt = join "", map { $c[rand @c] } 1..21;
             local $/; my $p = <STDIN>; print crypt($p, q($2b$10$) . $salt . "e"), "\n"'
  fi
}

# --- certificates: a CA, the server's (localhost, 127.0.0.1), a client's
# from the CA, and a client's from another CA the server does not trust.
conf=$work/conf
mkdir -p "$conf" "$work/client"
cd "$work"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=fabtrack test CA" \
  -keyout ca.key -out "$conf/ca.crt" 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=someone else's CA" \
  -keyout rogue-ca.key -out rogue-ca.crt 2>/dev/null
issue() {  # NAME CA_CERT CA_KEY EXTENSIONS
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$4" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2" -CAkey "$3" -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.crt" 2>/dev/null
}
issue server "$conf/ca.crt" ca.key "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth"
issue scraper "$conf/ca.crt" ca.key "extendedKeyUsage=clientAuth"
issue intruder rogue-ca.crt rogue-ca.key "extendedKeyUsage=clientAuth"
mv server.crt server.key "$conf/"
cp "$conf/ca.crt" scraper.crt scraper.key "$work/client/"

password1="pw1-$RANDOM$RANDOM-not-for-logs"
password2="pw2-$RANDOM$RANDOM-not-for-logs"
hash1=$(printf '%s' "$password1" | bcrypt)
hash2=$(printf '%s' "$password2" | bcrypt)
[[ $hash1 == '$2'* && $hash2 == '$2'* ]] || fail "no bcrypt hash"
# The file names certificates relative to its own folder, as
# exporter-toolkit resolves them (the exporter runs from another folder).
web_config() {  # HASH [extra line in tls_server_config]
  cat >"$conf/web.yml.new" <<YAML
# fabtrack exporter: TLS with client certificates and basic auth
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_ca_file: ca.crt
  client_auth_type: RequireAndVerifyClientCert
  min_version: TLS12
${2:-}
http_server_config:
  http2: false
basic_auth_users:
  prometheus: $1
YAML
  mv "$conf/web.yml.new" "$conf/web.yml"  # whole, never half-written
}
web_config "$hash1"

# curl's credentials from a config file, not its argv.
auth_file() { printf 'user = "prometheus:%s"\n' "$1" >"$work/curl.$2"; chmod 600 "$work/curl.$2"; }
auth_file "$password1" good
auth_file "wrong-$password1" wrong
auth_file "$password2" new
tls=(--cacert "$conf/ca.crt" --cert "$work/client/scraper.crt" --key "$work/client/scraper.key")
code() { curl -s -o "$work/body" -w '%{http_code}' --max-time 5 "$@" || true; }

port=$(free_port)
url=https://127.0.0.1:$port/metrics
cd /
"$fabtrack" counters serve --listen "127.0.0.1:$port" --sysfs "$fixtures/sysfs/ndr_8hca" \
  --web.config.file "$conf/web.yml" --duration 300 2>"$work/serve.err" &
server=$!
for _ in $(seq 50); do
  [[ $(code "${tls[@]}" -K "$work/curl.good" "$url") == 200 ]] && break
  sleep 0.1
done
[[ $(code "${tls[@]}" -K "$work/curl.good" "$url") == 200 ]] || fail "no scrape over TLS"
grep -q '^node_infiniband_port_data_transmitted_bytes_total{' "$work/body" || fail "no metrics over TLS"
grep -q "metrics on https://127.0.0.1:$port/metrics" "$work/serve.err" || fail "the log does not say https"
grep -q "web.yml: TLS 1.2-1.3, client certificates RequireAndVerifyClientCert, basic auth for 1 user(s)" \
  "$work/serve.err" || fail "the log does not say what the web config turned on"

echo "--- refusals"
[[ $(code "${tls[@]}" -K "$work/curl.wrong" -D "$work/headers" "$url") == 401 ]] || fail "a wrong password was not 401"
grep -qi '^WWW-Authenticate: Basic' "$work/headers" || fail "401 without WWW-Authenticate"
[[ $(code "${tls[@]}" "$url") == 401 ]] || fail "no password was not 401"
grep -q node_infiniband "$work/body" && fail "metrics without a password"
[[ $(code "${tls[@]}" -K "$work/curl.wrong" "https://127.0.0.1:$port/") == 401 ]] || fail "the landing page without auth"
# A certificate from a CA the server does not trust, and none at all: the
# handshake is refused (no HTTP status at all).
intruder=(--cacert "$conf/ca.crt" --cert "$work/intruder.crt" --key "$work/intruder.key")
[[ $(code "${intruder[@]}" -K "$work/curl.good" "$url") == 000 ]] || fail "an untrusted client certificate was let in"
grep -q node_infiniband "$work/body" && fail "metrics to an untrusted client certificate"
[[ $(code --cacert "$conf/ca.crt" -K "$work/curl.good" "$url") == 000 ]] || fail "no client certificate was let in"
# The first refusal is logged with OpenSSL's reason (then at most one line
# per 10 s: a port scan does not flood the log).
grep -q 'TLS handshake with 127.0.0.1 refused: certificate verify failed' "$work/serve.err" ||
  fail "a refused handshake is not logged"
# Plain HTTP to the TLS port: told so in plain text, no metrics.
[[ $(code -K "$work/curl.good" "http://127.0.0.1:$port/metrics") == 400 ]] || fail "plain HTTP was not 400"
grep -q 'HTTP request to an HTTPS server' "$work/body" || fail "plain HTTP was not told why"
grep -q node_infiniband "$work/body" && fail "metrics over plain HTTP"
# The server has one thread: a client stalled before its handshake, and one
# that stopped halfway through its ClientHello, hold no scrape up.
exec 3<>"/dev/tcp/127.0.0.1/$port"
exec 4<>"/dev/tcp/127.0.0.1/$port"
printf '\026\003\001\002\000\001\000\001\374\003\003' >&4
[[ $(code "${tls[@]}" -K "$work/curl.good" "$url") == 200 ]] || fail "a stalled handshake held up a scrape"
exec 3>&- 4>&-

echo "--- Prometheus"
prom_port=$(free_port)
printf '%s' "$password1" >"$work/client/password"
chmod 600 "$work/client/password"
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: fabtrack
    scheme: https
    tls_config:
      ca_file: $work/client/ca.crt
      cert_file: $work/client/scraper.crt
      key_file: $work/client/scraper.key
      server_name: localhost
    basic_auth:
      username: prometheus
      password_file: $work/client/password
    static_configs:
      - targets: ['127.0.0.1:$port']
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
prometheus=$!
api=http://127.0.0.1:$prom_port/api/v1
# The target's health and last error, as Prometheus reports them.
target() {
  curl -sf "$api/targets" 2>/dev/null | python3 -c '
import json, sys
t = [t for t in json.load(sys.stdin)["data"]["activeTargets"] if t["labels"]["job"] == "fabtrack"]
print(t[0]["health"], t[0]["lastError"]) if t else print("none")' 2>/dev/null || echo "no-api"
}
wait_target() {  # HEALTH: up to 30 s
  for _ in $(seq 150); do
    [[ $(target) == "$1"* ]] && return 0
    sleep 0.2
  done
  echo "--- prometheus.log"; tail -20 "$work/prometheus.log"
  fail "Prometheus never saw the target $1 (last: $(target))"
}
wait_target up
series=$(curl -sf "$api/query" --data-urlencode 'query=node_infiniband_port_data_transmitted_bytes_total' |
  python3 -c 'import json, sys; print(len(json.load(sys.stdin)["data"]["result"]))')
[[ $series == 8 ]] || fail "Prometheus stored $series node_infiniband_port_data_transmitted_bytes_total series, not 8"
echo "Prometheus scrapes over TLS with a client certificate and basic auth: $series series"

echo "--- SIGHUP: a new password"
web_config "$hash2"
kill -HUP "$server"
for _ in $(seq 50); do
  grep -q "reloaded $conf/web.yml" "$work/serve.err" && break
  sleep 0.1
done
grep -q "reloaded $conf/web.yml" "$work/serve.err" || fail "SIGHUP did not reload"
[[ $(code "${tls[@]}" -K "$work/curl.good" "$url") == 401 ]] || fail "the old password still works after the reload"
[[ $(code "${tls[@]}" -K "$work/curl.new" "$url") == 200 ]] || fail "the new password does not work after the reload"
wait_target "down server returned HTTP status 401"
printf '%s' "$password2" >"$work/client/password.new"
mv "$work/client/password.new" "$work/client/password"
wait_target up

echo "--- SIGHUP: a broken file keeps the running configuration"
web_config "$hash2" "  cert_fiel: server.crt"
kill -HUP "$server"
for _ in $(seq 50); do
  grep -q "reload refused" "$work/serve.err" && break
  sleep 0.1
done
grep -q "reload refused, the previous web configuration stays: $conf/web.yml:8: unknown key \"cert_fiel\" in tls_server_config" \
  "$work/serve.err" || fail "a broken reload was not reported with file:line"
[[ $(code "${tls[@]}" -K "$work/curl.new" "$url") == 200 ]] || fail "a broken reload lost the running configuration"
kill -0 "$server" || fail "a broken reload ended the exporter"

echo "--- SIGHUP: every client_auth_type"
reloads=1
auth_type() {  # TYPE: reload with it
  web_config "$hash2" "$1"
  sed -i '/^  client_auth_type: RequireAndVerifyClientCert$/d' "$conf/web.yml"
  kill -HUP "$server"
  reloads=$((reloads + 1))
  for _ in $(seq 50); do
    (($(grep -c "reloaded $conf/web.yml" "$work/serve.err") >= reloads)) && return 0
    sleep 0.1
  done
  fail "SIGHUP did not reload $1"
}
no_cert=(--cacert "$conf/ca.crt")
expect() {  # TYPE TRUSTED UNTRUSTED NONE: the HTTP status each client certificate gets
  [[ $(code "${tls[@]}" -K "$work/curl.new" "$url") == "$2" ]] || fail "$1: a trusted certificate did not get $2"
  [[ $(code "${intruder[@]}" -K "$work/curl.new" "$url") == "$3" ]] || fail "$1: an untrusted certificate did not get $3"
  [[ $(code "${no_cert[@]}" -K "$work/curl.new" "$url") == "$4" ]] || fail "$1: no certificate did not get $4"
}
auth_type "  client_auth_type: VerifyClientCertIfGiven"
expect VerifyClientCertIfGiven 200 000 200
auth_type "  client_auth_type: RequireAnyClientCert"
expect RequireAnyClientCert 200 200 000
auth_type "  client_auth_type: RequestClientCert"
expect RequestClientCert 200 200 200
# NoClientCert: no CA may be given with it (exporter-toolkit's rule too).
web_config "$hash2"
sed -i -e '/client_auth_type/d' -e '/client_ca_file/d' "$conf/web.yml"
kill -HUP "$server"
reloads=$((reloads + 1))
for _ in $(seq 50); do
  (($(grep -c "reloaded $conf/web.yml" "$work/serve.err") >= reloads)) && break
  sleep 0.1
done
grep -q "reloaded $conf/web.yml: TLS 1.2-1.3, client certificates NoClientCert" "$work/serve.err" ||
  fail "SIGHUP did not reload NoClientCert"
expect NoClientCert 200 200 200

echo "--- bad configurations at start"
start_fails() {  # EXPECTED-MESSAGE
  local rc=0
  "$fabtrack" counters serve --listen "127.0.0.1:$(free_port)" --sysfs "$fixtures/sysfs/ndr_8hca" \
    --web.config.file "$conf/web.yml" --duration 5 2>"$work/bad.err" || rc=$?
  [[ $rc == 1 ]] || { cat "$work/bad.err"; fail "a bad web config exited $rc, not 1 ($1)"; }
  grep -qF "$1" "$work/bad.err" || { cat "$work/bad.err"; fail "the message does not say: $1"; }
}
web_config "$hash2" "  cert_fiel: server.crt"
start_fails "$conf/web.yml:8: unknown key \"cert_fiel\" in tls_server_config"
web_config "$hash2"
cp "$work/intruder.key" "$conf/server.key"
start_fails "key_file $conf/server.key is not the key of cert_file $conf/server.crt"
web_config "$password2"
start_fails "$conf/web.yml:12: basic_auth_users: the password of \"prometheus\" is not a bcrypt hash"
grep -qF "$password2" "$work/bad.err" && fail "a password written in clear was repeated in the log"

echo "--- no secret in logs or on command lines"
for f in "$work/serve.err" "$work/prometheus.log"; do
  grep -qF -e "$password1" -e "$password2" "$f" && fail "a password is in $f"
done
tr '\0' ' ' <"/proc/$server/cmdline" | grep -qF -e "$password1" -e "$password2" && fail "a password is on the command line"
echo "exporter TLS: Prometheus scrapes over TLS with basic auth; the refusals hold"
