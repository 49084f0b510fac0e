#!/usr/bin/env bash
# Writes fabtrack(1) from the binary's own --help texts (every command and
# subcommand), so the man page cannot drift from the flags.
# Usage: packaging/make-manpage.sh FABTRACK OUT VERSION
set -euo pipefail
fabtrack=$1 out=$2 version=$3
subcommands() {  # the names listed under "Subcommands:" of `fabtrack ARGS... --help`
  "$fabtrack" "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'
}
roff_escape() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/"; }
help_section() {  # help_section ARGS...: one .SS with `fabtrack ARGS --help`
  echo ".SS fabtrack $*"
  echo ".nf"
  "$fabtrack" "$@" --help | sed -e '1{/^Usage:/d}' | sed -E 's#^Usage: [^ ]*fabtrack#Usage: fabtrack#' | roff_escape
  echo ".fi"
}
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  echo ".TH FABTRACK 1 \"\" \"fabtrack $version\" \"User Commands\""
  echo ".SH NAME"
  echo "fabtrack \\- all-reduce sweeps, NCCL transports and InfiniBand/RoCE port counters into PostgreSQL, judged night by night"
  echo ".SH SYNOPSIS"
  echo ".B fabtrack"
  echo ".I command"
  echo "[\\fIsubcommand\\fR] [\\fIoptions\\fR]"
  echo ".SH DESCRIPTION"
  "$fabtrack" --help | head -1 | roff_escape
  echo ".PP"
  echo ".SH EXIT STATUS"
  echo "analyze, check node, topology check and locate: 0 ok, 1 warning, 2 critical, 3 could not judge."
  echo "Every other command: 0 done (or spooled during a database outage), 1 some input could not"
  echo "be used (nothing of it stored), 2 bad flags or values, 3 the database refused or is"
  echo "misconfigured, 4 internal error, 130/143 interrupted."
  echo ".SH COMMANDS"
  for command in $(subcommands); do
    help_section "$command"
    for sub in $(subcommands "$command"); do help_section "$command" "$sub"; done
  done
  echo ".SH FILES"
  echo ".TP"
  echo ".I /usr/share/fabtrack/"
  echo "schema migrations, Grafana dashboards and alert rules, the nightly job's scripts"
  echo ".TP"
  echo ".I /etc/fabtrack/nightly.conf"
  echo "the nightly job's settings (example in /usr/share/doc/fabtrack/examples)"
  echo ".SH SEE ALSO"
  echo "README.md in /usr/share/doc/fabtrack"
} >"$tmp"
mv "$tmp" "$out"
trap - EXIT
