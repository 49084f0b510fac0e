#!/usr/bin/env bash
# shellcheck disable=SC2015  # "A && B || fail": fail is meant whenever A or B is false
# scripts/slurm/fabtrack-node-check.sh with the real fabtrack on the fake
# hosts and a fake scontrol on PATH that records its arguments: a CRITICAL
# node is drained with fabtrack's message as the reason and the hook exits 0
# (1 with FAIL_ON_CRITICAL=yes); OK, WARNING and UNKNOWN nodes are not
# touched; environment variables override the config file.
# Usage: tests/readiness/slurm_node_check_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

sh "$src/tests/fixtures/node/generate.sh" "$work/hosts" >/dev/null
hook=$src/scripts/slurm/fabtrack-node-check.sh

mkdir -p "$work/bin"
cat >"$work/bin/scontrol" <<'EOF'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >>"$SCONTROL_LOG"
echo --- >>"$SCONTROL_LOG"
EOF
chmod +x "$work/bin/scontrol"
# logger would write to this machine's syslog.
printf '#!/bin/sh\nexit 0\n' >"$work/bin/logger"
chmod +x "$work/bin/logger"

export PATH=$work/bin:$PATH SCONTROL_LOG=$work/scontrol.log SLURMD_NODENAME=gpu-a07
# The person running the tests may have NCCL settings of their own.
for v in $(env | sed -n 's/^\(NCCL_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

# run HOST [VAR=VALUE...]: the hook with a config for HOST; sets $status.
run() {
  local host=$1
  shift
  cat >"$work/node-check.conf" <<CONF
# fake host $host
FABTRACK=$fabtrack
SYSFS=$work/hosts/$host/sys
PROC=$work/hosts/$host/proc
VERBS=no   # libibverbs would read this machine
RAIL_OPTIMIZED=yes
CONF
  rm -f "$SCONTROL_LOG"
  status=0
  env FABTRACK_NODE_CHECK_CONF="$work/node-check.conf" "$@" "$hook" 2>"$work/stderr" || status=$?
}

run healthy
((status == 0)) || fail "healthy: exit $status"
[[ ! -e $SCONTROL_LOG ]] || fail "healthy: scontrol called: $(cat "$SCONTROL_LOG")"

run gpu8_hca2
((status == 0)) || fail "warning: exit $status"
[[ ! -e $SCONTROL_LOG ]] || fail "warning: scontrol called"
grep -q "FABTRACK NODE WARNING - rail:" "$work/stderr" || fail "warning not logged: $(cat "$work/stderr")"

run port_faults
((status == 0)) || fail "critical: exit $status"
[[ -e $SCONTROL_LOG ]] || fail "critical: node not drained"
expected="update
nodename=gpu-a07
state=drain
reason=fabtrack: hca_ports: mlx5_3/1 is DOWN/Polling; mlx5_5/1 at 200 Gb/s, other InfiniBand ports at 400; 4 checks (1 critical, 1 warning, 2 ok)
---"
[[ $(cat "$SCONTROL_LOG") == "$expected" ]] || fail "scontrol args: $(cat "$SCONTROL_LOG")"

run port_faults FAIL_ON_CRITICAL=ignored FABTRACK_NODE_CHECK_FAIL_ON_CRITICAL=yes
((status == 1)) || fail "FAIL_ON_CRITICAL=yes: exit $status"
[[ -e $SCONTROL_LOG ]] || fail "FAIL_ON_CRITICAL=yes: node not drained"

# The environment the job would run with is checked too.
run healthy NCCL_IB_DISABLE=1
((status == 0)) || fail "NCCL_IB_DISABLE: exit $status"
grep -q "reason=fabtrack: nccl_env: NCCL_IB_DISABLE=1" "$SCONTROL_LOG" ||
  fail "NCCL_IB_DISABLE: $(cat "$SCONTROL_LOG" 2>/dev/null)"

# An environment variable overrides the file: the healthy tree instead.
run port_faults FABTRACK_NODE_CHECK_SYSFS="$work/hosts/healthy/sys"
((status == 0)) && [[ ! -e $SCONTROL_LOG ]] || fail "env override: exit $status"

# UNKNOWN (unreadable root) and a missing fabtrack never drain.
run healthy FABTRACK_NODE_CHECK_SYSFS=/nonexistent
((status == 0)) || fail "unknown: exit $status"
[[ ! -e $SCONTROL_LOG ]] || fail "unknown: node drained"
grep -q "no verdict (exit 3)" "$work/stderr" || fail "unknown not logged: $(cat "$work/stderr")"
run healthy FABTRACK_NODE_CHECK_FABTRACK=/nonexistent/fabtrack
((status == 0)) && [[ ! -e $SCONTROL_LOG ]] || fail "missing fabtrack: exit $status"

# A bad config line is logged and skipped, not fatal.
printf 'this is not a setting\nCOLOUR=blue\n' >>"$work/node-check.conf"
status=0
FABTRACK_NODE_CHECK_CONF=$work/node-check.conf "$hook" 2>"$work/stderr" || status=$?
((status == 0)) || fail "bad config: exit $status"
grep -q "expected KEY=VALUE" "$work/stderr" && grep -q "unknown setting COLOUR" "$work/stderr" ||
  fail "bad config not logged: $(cat "$work/stderr")"

echo "slurm node check hook: ok"
