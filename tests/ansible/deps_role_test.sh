#!/usr/bin/env bash
# Runs the fabtrack_deps role for real against this machine (connection=local)
# twice: the first run must succeed, the second must change nothing.
set -euo pipefail
repo=$1
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
run() {
  ansible-playbook -i localhost, -c local "$repo/ansible/site.yml" \
    -e "fabtrack_deps_script_dest=$dest/install-deps.sh" -e "ansible_become=false"
}
run >"$dest/first.log" 2>&1 || { cat "$dest/first.log"; exit 1; }
grep -q "failed=0" "$dest/first.log"
test -x "$dest/install-deps.sh"
run >"$dest/second.log" 2>&1 || { cat "$dest/second.log"; exit 1; }
if ! grep -q "changed=0" "$dest/second.log"; then
  echo "second run was not idempotent:"; cat "$dest/second.log"; exit 1
fi
echo "deps role: applied, then idempotent"
