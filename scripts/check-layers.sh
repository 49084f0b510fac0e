#!/usr/bin/env bash
# Fails when an #include points against the flow of data (ARCHITECTURE.md):
#   core      <- everything; includes nothing of fabtrack but core/
#   collector, store, analyzer: core/ and themselves only (never each other)
#   app       may include every layer above (it composes them)
#   cli       anything but libpqxx, and only store headers that do not expose it
# Run by the build (target check_layers) and by CI; prints every offending line.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
status=0
layers="core collector store analyzer app cli"
allowed() {  # allowed FROM TO
  case $1 in
    core) [[ $2 == core ]] ;;
    collector | store | analyzer) [[ $2 == core || $2 == "$1" ]] ;;
    app) [[ $2 != cli ]] ;;
    cli) true ;;
  esac
}
for from in $layers; do
  # Bash's own regex, not a sed per line: ~800 include lines, one process.
  while IFS=: read -r file line text; do
    [[ $text =~ \#include\ \"([a-z_]+)/ ]] || continue
    to=${BASH_REMATCH[1]}
    [[ " $layers " == *" $to "* ]] || continue
    if ! allowed "$from" "$to"; then
      echo "$file:$line: $from/ may not include $to/: $text" >&2
      status=1
    fi
  done < <(grep -rnE --include='*.cc' --include='*.h' '^#include "[a-z_]+/' "$from" || true)
done
# The CLI parses flags, calls a flow in app/, prints: no database library.
while IFS=: read -r file line text; do
  echo "$file:$line: cli/ may not use libpqxx (call a flow in app/): $text" >&2
  status=1
done < <(grep -rn --include='*.cc' --include='*.h' 'pqxx' cli || true)
while IFS=: read -r file line text; do
  [[ $text =~ \#include\ \"([^\"]+)\" ]] || continue
  header=${BASH_REMATCH[1]}
  if grep -q 'pqxx' "$header"; then
    echo "$file:$line: cli/ includes $header, which exposes libpqxx: $text" >&2
    status=1
  fi
done < <(grep -rnE --include='*.cc' --include='*.h' '^#include "store/' cli || true)
if (( status == 0 )); then echo "layers: every include points with the flow"; fi
exit $status
