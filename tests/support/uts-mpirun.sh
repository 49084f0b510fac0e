#!/usr/bin/env bash
# A launcher prefix for `fabtrack sweep --mpirun` / `fabtrack locate --mpirun`
# on one machine: Open MPI's mpirun with every rank here (over TCP). Given
# --host a,b,c (what locate passes), rank i runs in its own UTS namespace
# named after the i-th host, so a program that asks MPI where it runs sees
# distinct nodes: the MPI path of locate, end to end, without a cluster.
# Needs root (unshare --uts). Without --host (a sweep) ranks run as they are.
#   uts-mpirun.sh -np N [--host a,b,c] [--map-by X] PROGRAM ARGS...
set -euo pipefail
if [[ ${1:-} == --as-rank ]]; then
  IFS=, read -ra names <<<"$2"
  shift 2
  name=${names[${OMPI_COMM_WORLD_RANK:?not started by mpirun}]}
  # shellcheck disable=SC2016  # expanded by that sh, not here
  exec unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
fi
np=1 hosts=
while (($#)); do
  case $1 in
    -np) np=$2; shift 2 ;;
    --host) hosts=$2; shift 2 ;;
    --map-by) shift 2 ;;
    *) break ;;
  esac
done
# shellcheck disable=SC2054  # "self,tcp" is one argument
run=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,tcp -np "$np")
if [[ -n $hosts ]]; then
  exec "${run[@]}" "$(readlink -f "$0")" --as-rank "$hosts" "$@"
fi
exec "${run[@]}" "$@"
