#!/usr/bin/env bash
# Seed corpora for the fuzz targets, made from the test fixtures (and, for
# formats fabtrack writes itself, from fabtrack's own output on fixtures).
# Usage: fuzz/make_seeds.sh OUT_DIR FABTRACK
set -euo pipefail
out=$1
fabtrack=$2
here=$(cd "$(dirname "$0")/.." && pwd)
fx=$here/tests/fixtures
rm -rf "$out"
mkdir -p "$out"/{nccl_tests_text_fuzz,nccl_tests_json_fuzz,nccl_log_fuzz,run_file_fuzz,port_sample_json_fuzz,analyzer_config_fuzz,inspector_fuzz,sysfs_values_fuzz,http_request_fuzz,web_config_fuzz,locate_topology_fuzz,node_topology_fuzz,port_dump_fuzz,pma_mad_fuzz,fabric_scan_json_fuzz,ras_report_fuzz,proc_cpu_fuzz,ras_monitor_fuzz}
cp "$fx"/nccl_tests/*.txt "$out/nccl_tests_text_fuzz/"
cp "$fx"/nccl_tests/*.json "$out/nccl_tests_json_fuzz/"
cp "$fx"/nccl_logs/* "$out/nccl_log_fuzz/"
find "$fx/topology" -maxdepth 1 -type f -exec cp {} "$out/locate_topology_fuzz/" \;
cp "$fx"/topology/node/*.xml "$fx"/topology/node/*.txt "$fx"/topology/node/*.log "$out/node_topology_fuzz/"
cp "$fx"/port_dumps/*.txt "$out/port_dump_fuzz/"
cp "$fx"/ras/* "$out/ras_report_fuzz/"
cp "$fx"/ras/monitor_* "$out/ras_monitor_fuzz/"
find "$fx/proc" -type f -exec sh -c 'cp "$1" "$2/$(echo "${1#$3/}" | tr / _)"' _ {} "$out/proc_cpu_fuzz" "$fx/proc" \;
# sysfs values: state, phys_state, rate, link_layer, lid, then five counters, NUL-separated.
printf '4: ACTIVE\n\0005: LinkUp\n\000400 Gb/sec (4X NDR)\n\000InfiniBand\n\0000x12\n\0000\n\00012345678901\n\000255\n\000N/A (no PMA)\n\00018446744073709551615\n' \
  >"$out/sysfs_values_fuzz/ndr_port"
printf '1: DOWN\0003: Disabled\000\000Ethernet\000\000\000\00018446744073709551616\000 7 \000x\000' \
  >"$out/sysfs_values_fuzz/odd_values"
# Inspector fixtures share file names across folders (the plugin names files by host and pid).
find "$fx/inspector" -type f \( -name "*.log" -o -name "*.prom" \) | sort | cat -n |
  while read -r n f; do cp "$f" "$out/inspector_fuzz/$n-$(basename "$f")"; done
find "$fx" -name "*.json" -exec grep -l "\"fabtrack-allreduce-result\"" {} + 2>/dev/null |
  while read -r f; do cp "$f" "$out/run_file_fuzz/"; done
for tree in "$fx"/sysfs/*/; do
  [[ -d $tree/class ]] || continue
  "$fabtrack" counters snapshot --sysfs "$tree" --format json >"$out/port_sample_json_fuzz/$(basename "$tree").json" 2>/dev/null
done
"$fabtrack" analyze --print-config >"$out/analyzer_config_fuzz/defaults.conf"
printf '[scaling_drop]\nmin_efficiency = 0.7\nenabled = false\n' >"$out/analyzer_config_fuzz/small.conf"
# HTTP requests as scrapers and clients send them. The first byte picks the
# server's limit (below 0x80: the default 8192 bytes), the next 8 are read
# sizes minus one; the request follows.
http() { printf '\000\017\003\377\000\100\007\001\037%b' "$2" >"$out/http_request_fuzz/$1"; }
small() { printf '\300\000\001\002\003\004\005\006\007%b' "$2" >"$out/http_request_fuzz/$1"; }
http prometheus 'GET /metrics HTTP/1.1\r\nHost: gpu-01:9862\r\nUser-Agent: Prometheus/2.53.0\r\nAccept: application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2\r\nAccept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n'
http prometheus3 'GET /metrics HTTP/1.1\r\nHost: 10.0.0.7:9862\r\nUser-Agent: Prometheus/3.1.0\r\nAccept: application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,*/*;q=0.2\r\nAccept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n'
http curl 'GET /metrics HTTP/1.1\r\nHost: localhost:9862\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n'
http http10 'GET /metrics HTTP/1.0\r\n\r\n'
http head 'HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n'
http landing 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'
http query 'GET /metrics?collect%5B%5D=infiniband HTTP/1.1\r\n\r\n'
http pipelined 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\nHEAD / HTTP/1.1\r\n\r\n'
http post_with_body 'POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello'
http bad_method 'BREW /metrics HTTP/1.1\r\n\r\n'
http not_found 'GET /debug/pprof HTTP/1.1\r\n\r\n'
http http2_preface 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
http no_version 'GET /metrics\r\n\r\n'
http lone_lf 'GET /metrics HTTP/1.1\nHost: x\nAccept: */*\n\n'
http mixed_endings 'GET /metrics HTTP/1.1\r\nHost: x\n\r\n'
http missing_crlf 'GET /metrics HTTP/1.1\r\nHost: x\r\n'
http empty_line_first '\r\nGET /metrics HTTP/1.1\r\n\r\n'
http huge_header "GET /metrics HTTP/1.1\r\nX-Padding: $(head -c 9000 /dev/zero | tr '\0' a)\r\n\r\n"
small small_limit_fits 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'
small small_limit_exceeded "GET /metrics HTTP/1.1\r\nCookie: $(head -c 300 /dev/zero | tr '\0' b)\r\n\r\n"
# --web.config.file: node_exporter's web configurations, good and bad.
web() { printf '%b' "$2" >"$out/web_config_fuzz/$1"; }
bcrypt_hash='$2y$10$X1sP0g9hVYkzYcTkA4QmE.7x7mI0xJ4Yb7bQy8bS3bX9XnV4X4pGu'
web mtls "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n  min_version: TLS12\n  max_version: TLS13\n  prefer_server_cipher_suites: true\nhttp_server_config:\n  http2: false\nbasic_auth_users:\n  prometheus: $bcrypt_hash\n"
web tls_only "# TLS only\ntls_server_config:\n  cert_file: /etc/ssl/certs/node.pem\n  key_file: \"/etc/ssl/private/node.key\"\n"
web auth_only "basic_auth_users:\n  alice: '$bcrypt_hash'\n  bob: \"$bcrypt_hash\"\n"
web flow "{tls_server_config: {cert_file: a, key_file: b, client_auth_type: RequestClientCert}, basic_auth_users: {}}\n"
web empty ""
web nulls "tls_server_config: ~\nhttp_server_config:\nbasic_auth_users: null\n"
web typo "tls_server_config:\n  cert_file: a.crt\n  keyfile: a.key\n"
web duplicate "tls_server_config:\n  cert_file: a\n  key_file: b\n  cert_file: c\n"
web clear_password "basic_auth_users:\n  alice: hunter2\n"
web ca_without_policy "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n"
web verify_without_ca "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: VerifyClientCertIfGiven\n"
web versions "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS11\n"
web unsupported "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\nrate_limit: {burst: 1}\n"
web anchors "x: &a {cert_file: a}\ntls_server_config: *a\n"
web tab_indent "tls_server_config:\n\tcert_file: a\n"
web unterminated "tls_server_config: {cert_file: 'a\n"
# PMA replies: a selector byte (PortSelect, 0x80 = read PortXmitWait), then
# the 256-byte MAD: ClassPortInfo with CapMask 0x1300, PortCounters of port 9
# with counters set, PortCountersExtended of port 3, and a refused status.
python3 - "$out/pma_mad_fuzz" <<'PY'
import sys, os
out = sys.argv[1]
def mad(attr, port, data=b"", status=0):
    m = bytearray(256)
    m[0:4] = bytes([1, 4, 1, 0x81])
    m[4:6] = status.to_bytes(2, "big")
    m[8:16] = (0x1234abcd).to_bytes(8, "big")
    m[16:18] = attr.to_bytes(2, "big")
    m[65] = port
    m[64 + 2:64 + 2 + len(data)] = data
    return bytes(m)
seeds = {
    "class_port_info": bytes([0]) + mad(1, 0, (0x1300).to_bytes(2, "big")),
    "port_counters": bytes([0x89]) + mad(0x12, 9, bytes(2) + (17).to_bytes(2, "big") + bytes([3, 2]) + bytes(36) + (123456).to_bytes(4, "big")),
    "port_counters_ext": bytes([3]) + mad(0x1d, 3, bytes(6) + (2**40).to_bytes(8, "big")),
    "status_refused": bytes([9]) + mad(0x12, 9, status=0x0c),
    "short": bytes([9]) + mad(0x12, 9)[:100],
}
for name, data in seeds.items():
    open(os.path.join(out, name), "wb").write(data)
PY
# Stored subnet scans: two leaves, a spine, a host; a cable's ends with
# counters, a port without a cable, something unanswered.
cat >"$out/fabric_scan_json_fuzz/small_scan.json" <<'JSON'
{"scanned_at": "2026-12-05T10:00:00Z", "source": "mlx5_0/1", "duration_s": 0.4,
 "mads": {"sent": 40, "retried": 1},
 "nodes": [{"guid": "0x0000000000001001", "description": "leaf01", "type": "switch", "ports": 4, "lid": 1},
           {"guid": "0x0000000000002001", "description": "spine01", "type": "switch", "ports": 2, "lid": 2},
           {"guid": "0x0000000000003001", "description": "node1", "type": "ca", "ports": 1, "lid": 3}],
 "links": [{"a": {"guid": "0x0000000000001001", "description": "leaf01", "port": 3, "lid": 1, "state": "Active",
                  "phys_state": "LinkUp", "width": 4, "speed": "EDR", "rate_gbps": 100,
                  "counters": {"symbol_error": 17, "port_xmit_wait": 123456}, "counters_64bit": true},
            "b": {"guid": "0x0000000000002001", "description": "spine01", "port": 1, "lid": 2, "state": "Active",
                  "phys_state": "LinkUp", "width": 4, "speed": "EDR", "rate_gbps": 100,
                  "counters": {"symbol_error": 0}, "counters_64bit": false},
            "width": 4, "speed": "EDR", "rate_gbps": 100, "state": "Active"},
           {"a": {"guid": "0x0000000000001001", "description": "leaf01", "port": 1, "counters": {}},
            "b": {"guid": "0x0000000000003001", "description": "node1", "port": 1, "width": 1, "speed": "SDR",
                  "rate_gbps": 2.5, "counters": {"port_rcv_errors": 4}}}],
 "ports_without_link": [{"guid": "0x0000000000001001", "description": "leaf01", "port": 4, "state": "Down",
                         "phys_state": "Polling", "counters": {"link_downed": 1}}],
 "unanswered": [{"guid": "0x0000000000002001", "description": "spine01", "port": 2, "what": "PortCounters",
                 "why": "no answer after 3 tries (300 ms each)"}]}
JSON
