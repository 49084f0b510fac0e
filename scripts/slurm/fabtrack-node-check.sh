#!/usr/bin/env bash
# Drains a Slurm node that is not ready for RDMA collectives: runs
# `fabtrack check node` and, when it reports CRITICAL (exit 2), runs
#   scontrol update nodename=<node> state=drain reason="fabtrack: <message>"
# so no further job lands on the node until an admin resumes it. Anything
# else (OK, WARNING, UNKNOWN, fabtrack missing, scontrol failing) is logged
# and the script exits 0, so Slurm carries on.
#
# Wiring it (the node-local path is an example):
#  - As the periodic health check, in slurm.conf:
#      HealthCheckProgram=/usr/local/sbin/fabtrack-node-check.sh
#      HealthCheckInterval=300
#      HealthCheckNodeState=ANY,CYCLE
#    slurmd runs it as root on every node; its exit status is ignored, the
#    drain is the action.
#  - Before every job, in slurm.conf:
#      Prolog=/usr/local/sbin/fabtrack-node-check.sh
#    A drained node gets no new job; the job being started still runs unless
#    FAIL_ON_CRITICAL=yes, which makes the prolog fail so that Slurm requeues
#    the job elsewhere (Slurm then drains the node itself, with its own
#    reason, "Prolog error").
#
# Settings: KEY=VALUE lines in /etc/fabtrack/node-check.conf (or the file
# named by FABTRACK_NODE_CHECK_CONF); '#' starts a comment; nothing is
# evaluated. Each can be overridden by an environment variable
# FABTRACK_NODE_CHECK_<KEY>.
#   FABTRACK=fabtrack          the fabtrack binary
#   SYSFS=/sys PROC=/proc      roots to read (tests point them at fake trees)
#   EXPECT_RATE=               expected port rate in Gb/s (empty: any)
#   RAIL_OPTIMIZED=no          yes: one NIC per GPU under its PCIe switch
#   VERBS=yes                  no: skip the libibverbs check
#   FAIL_ON_CRITICAL=no        yes: exit 1 after draining (see Prolog above)
#   SCONTROL=scontrol          the scontrol binary
# The node name is $SLURMD_NODENAME (set by slurmd) or `hostname -s`.
set -uo pipefail

KEYS=(FABTRACK SYSFS PROC EXPECT_RATE RAIL_OPTIMIZED VERBS FAIL_ON_CRITICAL SCONTROL)
FABTRACK=fabtrack SYSFS=/sys PROC=/proc EXPECT_RATE='' RAIL_OPTIMIZED=no VERBS=yes
FAIL_ON_CRITICAL=no SCONTROL=scontrol

log() {
  echo "fabtrack-node-check: $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t fabtrack-node-check -- "$*"
  return 0
}

is_yes() { [[ ${1,,} == yes || ${1,,} == true || $1 == 1 ]]; }

# shellcheck source=hook-conf.sh
. "$(dirname "$(readlink -f "$0")")/hook-conf.sh"
read_hook_conf "${FABTRACK_NODE_CHECK_CONF:-/etc/fabtrack/node-check.conf}" FABTRACK_NODE_CHECK_

args=(check node --sysfs "$SYSFS" --proc "$PROC")
[[ -n $EXPECT_RATE ]] && args+=(--expect-rate "$EXPECT_RATE")
is_yes "$RAIL_OPTIMIZED" && args+=(--rail-optimized)
is_yes "$VERBS" || args+=(--no-verbs)

output=$("$FABTRACK" "${args[@]}" 2>&1)
status=$?
summary=$(printf '%s\n' "$output" | head -n 1)

case $status in
  0) exit 0 ;;
  1)
    log "$summary"
    exit 0
    ;;
  2) ;;
  *)
    # UNKNOWN (3), or fabtrack could not run (126, 127): not the node's fault
    # as far as we know, so it keeps its jobs.
    log "no verdict (exit $status): $summary"
    exit 0
    ;;
esac

message=${summary#FABTRACK NODE CRITICAL - }
# Keep the reason one short line: sinfo -R shows it in a column.
message=${message//$'\n'/ }
((${#message} > 200)) && message="${message:0:197}..."
node=${SLURMD_NODENAME:-$(hostname -s)}
log "draining $node: $message"
if ! "$SCONTROL" update nodename="$node" state=drain reason="fabtrack: $message"; then
  log "scontrol update nodename=$node failed"
fi
is_yes "$FAIL_ON_CRITICAL" && exit 1
exit 0
